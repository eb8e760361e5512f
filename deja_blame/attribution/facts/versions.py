"""A file's versions over its history: the facts the commit-window rules ask of git.

The rules that ask (what makes a write stale for a line) are ``match/window.py``.

The file's history is one ``git log`` of the paths blame reported; versions are
read (one ``git cat-file --batch``) only for the lines that need the check, at
most MAX_VERSIONS of them and MAX_VERSION_LINES lines (past that the rules give
way to the matcher alone).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.attribution.facts.model import has_line
from deja_blame.index.fingerprint import fingerprint, normalise_line

if TYPE_CHECKING:
    pass

# Versions of one file read for one answer, and their lines in all: the stale
# check reads the version after each old write, and past the budget it gives way
# to the matcher alone. On click's core.py (3,799 lines, 422 commits, 1,000
# sessions) 40 versions left 7.6 % of the lines given to sessions at odds with
# git blame's commit; this budget leaves 1.9 %. A version is kept as its text
# (searched, not split into sets): about its size in memory.
MAX_VERSIONS = 200
MAX_VERSION_LINES = 640_000


def _lines(content: str) -> list[str]:
    """A version's lines without their ``\r`` (split in C when it has none)."""
    lines = content.split("\n")
    return [t.rstrip("\r") for t in lines] if "\r" in content else lines


class FileHistory:
    """The commits that touched a file (under any of its names), newest first, and
    the file's line fingerprints at any of them (read through one ``git cat-file``)."""

    def __init__(self, root: Path | str, paths: set[str], rev: str | None) -> None:
        self.root = str(root)
        self.paths = sorted(p for p in paths if p)
        self.commits: list[str] = []
        self.times: list[int] = []
        self.position: dict[str, int] = {}
        self.parent: dict[str, str | None] = {}  # the commit before, for this file
        self.restores: set[str] = set()
        self._fps: dict[str, frozenset[int]] = {}
        self._texts: dict[str, frozenset[str]] = {}
        self._counts: dict[str, Counter[str]] = {}
        self._stripped_counts: dict[str, Counter[str]] = {}
        self._contents: dict[str, str] = {}  # versions read: what the budget counts
        # answers of has_text / has_stripped: the same blank line or bracket is asked
        # about once per line of it, and a blank line's search splits the whole version
        self._has: dict[tuple[str, str, bool], bool] = {}
        self._spellings: dict[str, dict[str, frozenset[str]]] = {}
        self._read_before: dict[str, str] = {}  # versions an earlier pass read (``again``)
        self._lines_read = 0
        self._rev = rev
        self._loaded = False

    def again(self) -> FileHistory:
        """This history for another pass of the rules over the same file (the moves
        rule's second pass): what was read and derived from it is shared, but the
        budget is counted afresh, so the pass reads as a new history would (the same
        versions readable, in the order it asks) without asking git again."""
        other = FileHistory(self.root, set(self.paths), self._rev)
        if not self._loaded:
            return other  # nothing read yet
        other._loaded = True
        other.commits, other.times = self.commits, self.times
        other.position, other.parent, other.restores = self.position, self.parent, self.restores
        other._fps, other._texts, other._has = self._fps, self._texts, self._has
        other._counts, other._stripped_counts = self._counts, self._stripped_counts
        other._spellings = self._spellings
        other._read_before = {**self._read_before, **self._contents}
        return other

    def load(self) -> None:
        """Read the file's log (once, on first need: most lines need no check)."""
        if self._loaded:
            return
        self._loaded = True
        # --parents rewrites each commit's parents to the nearest ancestors that touched
        # the file: the version before a commit is its parent's, not whatever the log
        # (ordered by date) shows next, which on a merged branch is another branch's.
        # The repository's history, read once, answers as that log would.
        from deja_blame.attribution.facts.history import repo_history

        entries = repo_history(self.root).log(self._rev or "HEAD", set(self.paths))
        if entries is None:
            return
        blobs: list[set[str]] = []
        for e in entries:
            self.position[e.commit] = len(self.commits)
            self.commits.append(e.commit)
            self.times.append(e.time)
            self.parent[e.commit] = e.parents[0] if e.parents else None
            # the file's content after the commit
            blobs.append({blob for _, blob in e.changes.values() if blob.strip("0")})
        # a commit whose file is, byte for byte, one an older commit had: a restore
        # (git checkout OLD -- FILE); older writes of its lines are still their source
        seen: set[str] = set()
        for k in range(len(blobs) - 1, -1, -1):
            if blobs[k] and blobs[k] <= seen:
                self.restores.add(self.commits[k])
            seen |= blobs[k]

    def fingerprints(self, sha: str) -> frozenset[int]:
        """The line fingerprints of the file at ``sha`` (under whichever name it had)."""
        got = self._fps.get(sha)
        if got is None:
            got = self._fps[sha] = frozenset(fingerprint(t) for t in self.texts(sha))
        elif sha not in self._contents:
            self._content(sha)  # derived by an earlier pass: read in this one's budget
        return got

    def has_text(self, sha: str, text: str) -> bool:
        """Whether the file at ``sha`` has a line of exactly ``text``."""
        return self._has_line(sha, text, True)

    def has_stripped(self, sha: str, stripped: str) -> bool:
        """Whether the file at ``sha`` has a line of this text at any indent (what a
        reindent changes; a cheaper test than the white-space-free fingerprint)."""
        return self._has_line(sha, stripped, False)

    def _has_line(self, sha: str, text: str, exact: bool) -> bool:
        key = (sha, text, exact)
        got = self._has.get(key)
        if got is None:
            got = self._has[key] = has_line(self._content(sha), text, exact)
        elif sha not in self._contents:
            self._content(sha)
        return got

    def readable(self, sha: str) -> bool:
        """Whether the file at ``sha`` is read already or may still be (the budget:
        a file with a thousand commits costs a bounded time and memory; past it
        the rules fall back to what the matcher says without them)."""
        return sha in self._contents or self._within(1)

    def spare(self, sha: str) -> bool:
        """Whether ``sha`` may be read for a second opinion: read already, or less
        than half the budget used (the commit-window rule itself needs the rest)."""
        return sha in self._contents or self._within(2)

    def _within(self, share: int) -> bool:
        return (
            len(self._contents) < MAX_VERSIONS // share
            and self._lines_read < MAX_VERSION_LINES // share
        )

    def lines(self, sha: str) -> list[str]:
        """The file's lines at ``sha``, in order (under each of its names, one after
        another)."""
        return _lines(self._content(sha))

    def texts(self, sha: str) -> frozenset[str]:
        """The exact lines of the file at ``sha`` (a set: for the few versions whose
        every line is asked about)."""
        got = self._texts.get(sha)
        if got is None:
            got = self._texts[sha] = frozenset(_lines(self._content(sha)))
        elif sha not in self._contents:
            self._content(sha)
        return got

    def spellings(self, sha: str) -> dict[str, frozenset[str]]:
        """The exact lines of the file at ``sha`` by their text without white space
        (``normalise_line``): the spellings of one text (the commit-window rule asks
        it line after line)."""
        got = self._spellings.get(sha)
        if got is None:
            found: dict[str, set[str]] = {}
            for t in self.texts(sha):
                found.setdefault(normalise_line(t), set()).add(t)
            got = self._spellings[sha] = {k: frozenset(v) for k, v in found.items()}
        elif sha not in self._contents:
            self._content(sha)
        return got

    def count(self, sha: str, text: str) -> int:
        """How many lines of exactly ``text`` the file has at ``sha``."""
        counts = self._counts.get(sha)
        if counts is None:
            counts = self._counts[sha] = Counter(_lines(self._content(sha)))
        elif sha not in self._contents:
            self._content(sha)
        return counts[text]

    def count_stripped(self, sha: str, stripped: str) -> int:
        """How many lines of this text, at any indent, the file has at ``sha``."""
        counts = self._stripped_counts.get(sha)
        if counts is None:
            counts = self._stripped_counts[sha] = Counter(
                t.strip() for t in _lines(self._content(sha))
            )
        elif sha not in self._contents:
            self._content(sha)
        return counts[stripped]

    def _content(self, sha: str) -> str:
        """The file's text at ``sha`` (under each of its names, one after another),
        read once through cat-file and counted against the budget."""
        got = self._contents.get(sha)
        if got is None:
            got = self._read_before.get(sha)
            if got is None:
                found = self._read([f"{sha}:{path}" for path in self.paths])
                parts = [data.decode("utf-8", "replace") for data in found if data is not None]
                got = "\n".join(parts)
            self._contents[sha] = got
            self._lines_read += got.count("\n") + 1
        return got

    def _read(self, specs: list[str]) -> list[bytes | None]:
        from deja_blame.attribution.facts.history import repo_history

        return repo_history(self.root).read_many(specs)

    def close(self) -> None:
        """Nothing to close: the reads go through the repository's one ``cat-file``."""
