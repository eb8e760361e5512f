"""Commit-window evidence: was a write still the source of the line its commit brought?

git blame names the commit C that brought each line. A session's write of the
line's text is evidence for it when the write was made for C: after the
version of the file C was made from (C's parent for this file, its "floor").
A write older than that is *stale* when its text (indent aside) was in the
first commit that touched the file after the write: the session's work was
committed, and C brought the text again, so whoever did that (a person moving
or retyping it, another session) wrote it, not the old session. It stays
evidence when its text was never committed before C (the person staged other
hunks first), when C only re-indented the line (the version before C had it
with other white space and not as it is now, and C's version lost a copy at
that other indent), and for every line of a file C
restored byte for byte from an older commit. Trivial lines (blank, a lone
bracket) carry no text to tell these apart: for them a write older than the
floor is stale unless a line beside them, brought by the same commit, is one
that commit moved (its exact text was there before).

The file's history is one ``git log`` of the paths blame reported; versions are
read (one ``git cat-file --batch``) only for the lines that need the check, at
most MAX_VERSIONS of them and MAX_VERSION_LINES lines (past that the rules give
way to the matcher alone).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.index.fingerprint import fingerprint, normalise_line

if TYPE_CHECKING:
    from deja_blame.attribution.blame_engine import BlameLine

CLOCK_SKEW = 120.0  # the matcher's: transcript clocks may run ahead of git's
# Versions of one file read for one answer, and their lines in all: the stale
# check reads the version after each old write, and past the budget it gives way
# to the matcher alone. On click's core.py (3,799 lines, 422 commits, 1,000
# sessions) 40 versions left 7.6 % of the lines given to sessions at odds with
# git blame's commit; this budget leaves 1.9 %. A version is kept as its text
# (searched, not split into sets): about its size in memory.
MAX_VERSIONS = 200
MAX_VERSION_LINES = 640_000


def has_line(content: str, text: str, exact: bool) -> bool:
    """Whether ``content`` (a file's text) has a line of ``text``: exactly, or at
    any indent (``exact=False``: ``text`` stripped). A search of the text, not a
    set of its lines: most versions of a file are asked about a few lines, and
    building sets of every line of hundreds of versions cost more than the rest
    of a blame."""
    if not text.strip():
        return any((t if exact else t.strip()) == text for t in content.split("\n"))
    size = len(text)
    at = content.find(text)
    while at >= 0:
        start = content.rfind("\n", 0, at) + 1
        end = content.find("\n", at + size)
        end = len(content) if end < 0 else end
        before, after = content[start:at], content[at + size : end]
        if exact:
            if not before and after in ("", "\r"):
                return True
        elif not before.strip() and not after.strip():
            return True
        at = content.find(text, at + 1)
    return False


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
        self._contents: dict[str, str] = {}  # versions read: what the budget counts
        # answers of has_text / has_stripped: the same blank line or bracket is asked
        # about once per line of it, and a blank line's search splits the whole version
        self._has: dict[tuple[str, str, bool], bool] = {}
        self._lines_read = 0
        self._rev = rev
        self._loaded = False

    def load(self) -> None:
        """Read the file's log (once, on first need: most lines need no check)."""
        if self._loaded:
            return
        self._loaded = True
        # --parents rewrites each commit's parents to the nearest ancestors that touched
        # the file: the version before a commit is its parent's, not whatever the log
        # (ordered by date) shows next, which on a merged branch is another branch's.
        # The repository's history, read once, answers as that log would.
        from deja_blame.attribution.repo_history import repo_history

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

    def texts(self, sha: str) -> frozenset[str]:
        """The exact lines of the file at ``sha`` (a set: for the few versions whose
        every line is asked about)."""
        got = self._texts.get(sha)
        if got is None:
            got = self._texts[sha] = frozenset(_lines(self._content(sha)))
        return got

    def count(self, sha: str, text: str) -> int:
        """How many lines of exactly ``text`` the file has at ``sha``."""
        counts = self._counts.get(sha)
        if counts is None:
            counts = self._counts[sha] = Counter(_lines(self._content(sha)))
        return counts[text]

    def _content(self, sha: str) -> str:
        """The file's text at ``sha`` (under each of its names, one after another),
        read once through cat-file and counted against the budget."""
        got = self._contents.get(sha)
        if got is None:
            found = self._read([f"{sha}:{path}" for path in self.paths])
            parts = [data.decode("utf-8", "replace") for data in found if data is not None]
            got = self._contents[sha] = "\n".join(parts)
            self._lines_read += got.count("\n") + 1
        return got

    def _read(self, specs: list[str]) -> list[bytes | None]:
        from deja_blame.attribution.repo_history import repo_history

        return repo_history(self.root).read_many(specs)

    def close(self) -> None:
        """Nothing to close: the reads go through the repository's one ``cat-file``."""


class CommitWindow:
    """The commit-window rules over one file's lines (``stale``, ``existed``)."""

    def __init__(
        self,
        history: FileHistory,
        blamed: list[BlameLine | None],
        texts: list[str],
        fps: list[int],
        trivial: list[bool],
    ) -> None:
        self.history = history
        self.blamed = blamed
        self.texts = texts
        self.fps = fps
        self.trivial = trivial
        # the commit before each blamed commit in the file's history (the floor), as
        # an index into commits; the working tree's is the newest commit
        self.before: dict[str | None, int | None] = {}
        # times oldest first, to find the first commit after a write (a running
        # maximum: a rebase or a merge can put an older time after a newer one)
        self.ascending: list[int] = []
        self._stale: dict[tuple[int, float], bool] = {}  # (line, write time) -> answer

    def _prepare(self) -> None:
        history = self.history
        history.load()
        commits = history.commits
        self.before[None] = 0 if commits else None
        for b in self.blamed:
            if b is None or b.commit in self.before:
                continue
            parent = history.parent.get(b.commit or "")
            self.before[b.commit] = history.position.get(parent) if parent else None
        for t in reversed(history.times):
            self.ascending.append(max(t, self.ascending[-1]) if self.ascending else t)

    def _prev(self, i: int) -> tuple[str | None, int | None]:
        if not self.before:
            self._prepare()
        b = self.blamed[i]
        commit = b.commit if b is not None else None
        return commit, self.before.get(commit)

    def existed(self, i: int, fp: int) -> bool:
        """Whether text of fingerprint ``fp`` was in the file before line i's commit."""
        _, prev = self._prev(i)
        if prev is None or not self.history.readable(self.history.commits[prev]):
            return False
        return fp in self.history.fingerprints(self.history.commits[prev])

    def fresh(self, i: int, at: float) -> bool:
        """Whether a write made at ``at`` is newer than the version line i's commit was
        made from (then it is never stale). Reads the log, no version of the file."""
        _, prev = self._prev(i)
        return prev is None or at >= self.history.times[prev] - CLOCK_SKEW

    def stale(self, i: int, at: float) -> bool:
        """Whether a write made at ``at`` of line i's text cannot be its source."""
        commit, prev = self._prev(i)
        history = self.history
        commits, times = history.commits, history.times
        if prev is None or at >= times[prev] - CLOCK_SKEW:
            return False  # no earlier version, or written after it: in the window
        if commit in history.restores or not history.readable(commits[prev]):
            return False
        if self.trivial[i]:
            # moved with its block, or only its white space changed: git blame -w would
            # name the write's commit, and the answer must not depend on -w
            return not (
                self._moved_beside(i, commit, commits[prev])
                or self._respaced(commit, commits[prev], self.texts[i])
            )
        known = self._stale.get((i, at))
        if known is not None:
            return known
        text = self.texts[i]
        stripped = text.strip()
        if self._reindented(commit, commits[prev], text, stripped):
            result = False  # there before with other white space: the commit re-indented it
        else:
            # the first commit after the write, no later than the one before the line's
            first = len(commits) - bisect_right(self.ascending, int(at + CLOCK_SKEW)) - 1
            result = (
                first >= prev
                and history.readable(commits[first])
                and history.has_stripped(commits[first], stripped)
            )
        self._stale[(i, at)] = result
        return result

    def _moved(self, commit: str | None, prev_sha: str, text: str) -> bool:
        """Whether ``commit`` moved this text: it was there before, and the commit's
        version does not have more copies of it (a person typing a second copy
        beside the first moved nothing)."""
        history = self.history
        if not history.has_text(prev_sha, text):
            return False
        if commit is None or commit not in history.position or not history.spare(commit):
            return True
        if not history.has_text(commit, text):
            return True  # gone from its old place: moved (or re-indented) away and here
        return history.count(commit, text) <= history.count(prev_sha, text)

    def _reindented(self, commit: str | None, prev_sha: str, text: str, stripped: str) -> bool:
        """Whether ``commit`` re-indented the line: the version before had its text
        only at another indent, and (where the commit's own version can be read) a
        copy at that indent is gone in it. A person typing the same text anew
        beside the old copy re-indented nothing."""
        history = self.history
        if not history.has_stripped(prev_sha, stripped) or history.has_text(prev_sha, text):
            return False
        if commit is None or commit not in history.position or not history.spare(commit):
            return True
        after = history.texts(commit)
        return any(t not in after for t in history.texts(prev_sha) if t.strip() == stripped)

    def _respaced(self, commit: str | None, prev_sha: str, text: str) -> bool:
        """Whether ``commit`` changed only this trivial line's white space (``y = 1`` to
        ``y = 1 ``, a blank line to one of spaces): the version before had the text
        only with other white space, and the commit's version has fewer copies of
        that spelling than the version before."""
        history = self.history
        if history.has_text(prev_sha, text):
            return False
        norm = normalise_line(text)
        if fingerprint(text) not in history.fingerprints(prev_sha):
            return False
        if commit is None or commit not in history.position or not history.spare(commit):
            return True
        before = {t for t in history.texts(prev_sha) if normalise_line(t) == norm}
        return any(history.count(commit, t) < history.count(prev_sha, t) for t in before)

    def _moved_beside(self, i: int, commit: str | None, prev_sha: str) -> bool:
        """A blank line or bracket beside a line its commit moved (the same text was
        in the version before): it moved with its block."""
        texts, trivial = self.texts, self.trivial
        for step in (-1, 1):
            j = i + step
            while 0 <= j < len(texts) and abs(j - i) <= 3:
                if not trivial[j]:
                    b = self.blamed[j]
                    same = (b.commit if b is not None else None) == commit
                    if same and self._moved(commit, prev_sha, texts[j]):
                        return True
                    break
                j += step
        return False
