"""A line's history: the commits that changed it, oldest first, and who wrote each version.

``git log -L N,N:FILE COMMIT`` lists the commits that touched the line, each
with the diff of the range it tracks. In each commit the version of our line is
the added line most like the version after it (the text as it is now, to begin
with): a rename of a variable, a reflow, a person's tweak of an agent's line.
Who wrote each version is deja's answer for that line at that commit: its
note, the index, git-ai's notes, else the commit's author. That answer is the
file's whole answer there, kept in the attribution cache like any blame's: the
next line whose history passes through the commit reads it back.

``git log -L`` walks the file's whole history (it cannot know that no older
commit touched the range), 30-120 ms of git's CPU on a long file where ``git
blame -L`` of the line takes 5. Most lines have one version, and one diff of the
line's own commit says so (``only_version``); git log -L runs for the others.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deja_blame.gitutil import PLAIN_DIFF, Author, commit_authors, run_git
from deja_blame.linediff import equal_runs

if TYPE_CHECKING:
    import pygit2

MAX_COMMITS = 12  # the most recent commits that changed the line
# An older version must be at least this like the next one: below it, the line was
# new in that commit (git's range goes on back through the block it replaced).
SAME_LINE = 0.5
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")
# git log -L diffs with xdiff's defaults whatever the configuration says (line-log.c's
# collect_diff): Myers, no indent heuristic, no white space option
_AS_LOG_L = ("--diff-algorithm=myers", "--no-indent-heuristic")
_HUNK_SIDES = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class Version:
    commit: str
    path: str
    line: int  # in that commit's version of the file
    text: str
    author: str | None = None
    at: int | None = None  # author time
    session: str | None = None
    agent: str | None = None

    def to_json(self) -> dict[str, Any]:
        from deja_blame.attribution.model import format_time_epoch

        return {
            "commit": self.commit,
            "path": self.path,
            "line": self.line,
            "session": self.session,
            "agent": self.agent,
            "author": self.author,
            "at": format_time_epoch(self.at) if self.at is not None else None,
            "text": self.text,
        }


# difflib with no junk heuristic is worse than quadratic in a line's length: two
# 5,000-character versions of a minified line took seconds, 20,000 minutes. Up to
# this many character pairs (500 x 500, a few ms at worst) a line is compared by
# difflib as always; a longer one by its tokens in order (``_token_similarity``, near-linear).
SMALL_PAIRS = 250_000
_TOKEN = re.compile(r"\w+|\S")


def _similarity(a: str, b: str) -> float:
    a, b = a.strip(), b.strip()
    if len(a) * len(b) > SMALL_PAIRS:
        return _token_similarity(a, b)
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


# The character pairs one question may have compared over a hunk's lines, nearest the
# line's place first: a hunk of thousands of long lines (a reformat, a regenerated file)
# compared every one of them (2,000 lines of 400 characters, all changed: 5.5 s of CPU
# for why of one). 4,000,000 pairs is a hunk of 2,500 lines of 40 characters, some
# 50 ms of difflib at worst.
HUNK_PAIRS = 4_000_000


def _nearest(lines: list[str], at: int, text: str) -> tuple[list[int], bool]:
    """The indices of ``lines`` to compare with ``text``, nearest ``at`` first, as many as
    ``HUNK_PAIRS`` allows (one at least); and whether that is all of them."""
    n = len(text.strip()) or 1
    order = sorted(range(len(lines)), key=lambda i: (abs(i - at), i))
    spent = 0
    for k, i in enumerate(order):
        m = len(lines[i].strip()) or 1
        spent += n * m if n * m <= SMALL_PAIRS else n + m
        if spent > HUNK_PAIRS and k:
            return order[:k], False
    return order, True


# git's diff keeps a record per token: two lines of 1,000,000 characters (330,000
# tokens each) took 190 MB and 0.7 s. Past this many tokens (some 300,000 characters
# of a minified bundle: 60 MB, 0.3 s at most) a line is stood for by WINDOWS runs of
# its tokens spread evenly over it, at the same share of each line's length: an edit
# moves a window's content by a few tokens only, and two lines that share a long
# prelude and nothing after it are not taken for one (its first tokens alone were).
MAX_TOKENS = 100_000
WINDOWS = 10


def _spread(tokens: list[str]) -> list[str]:
    if len(tokens) <= MAX_TOKENS:
        return tokens
    width = MAX_TOKENS // WINDOWS
    room = len(tokens) - width
    out: list[str] = []
    for k in range(WINDOWS):
        start = room * k // (WINDOWS - 1)
        out += tokens[start : start + width]
    return out


def _token_similarity(a: str, b: str) -> float:
    """difflib's ratio's measure (twice the matched characters over both lengths) over
    the words and signs the two share **in order**, as git's diff of the two token
    lists finds them (``linediff``: near-linear, 0.05 s for 100,000 characters). A bag
    of tokens ignored their order: two unrelated 2,000-character pieces of a minified
    bundle shared half their tokens (``(``, ``;``, ``function``...) and were taken for
    versions of each other (0.43-0.61 against difflib's 0.08-0.24); in order they score
    0.08-0.20, and a line with a few tokens changed stays as like its old self."""
    ta, tb = _spread(_TOKEN.findall(a)), _spread(_TOKEN.findall(b))
    total = sum(map(len, ta)) + sum(map(len, tb))
    if not total:
        return 1.0
    try:
        runs = list(equal_runs(ta, tb))
    except UnicodeEncodeError:  # a lone surrogate git's diff cannot be given: no match
        return 0.0
    return 2 * sum(len(t) for x, _, n in runs for t in ta[x : x + n]) / total


def _rows(diff: str) -> list[str]:
    """A diff's rows, each without the CR of a file with CRLF line endings: the line's
    text as blame gives it (and a CRLF file's history is the same as an LF file's)."""
    return [row.removesuffix("\r") for row in diff.split("\n")]


@dataclass
class _Hunk:
    """One hunk of a ``-U0`` diff: where each side starts, and its lines."""

    old_start: int
    start: int
    removed: list[str]
    added: list[str]


def _hunk_adding(rows: list[str], line: int) -> _Hunk | None:
    """The hunk of a one-file ``-U0`` diff's ``rows`` whose new side holds line
    ``line`` (all its lines there: none cut); None when no hunk does."""
    removed: list[str] = []
    added: list[str] = []
    old_start = start = count = -1
    for row in rows:
        m = _HUNK_SIDES.match(row)
        if m:
            if start <= line < start + count:
                break  # the hunk that holds the line is read
            old_start, start = int(m.group(1)), int(m.group(3))
            count = 1 if m.group(4) is None else int(m.group(4))
            removed, added = [], []
        elif start >= 0 and row.startswith("-"):
            removed.append(row[1:])
        elif start >= 0 and row.startswith("+"):
            added.append(row[1:])
    if not start <= line < start + count or len(added) != count:
        return None
    return _Hunk(old_start, start, removed, added)


def versions(root: Path, path: str, commit: str, line: int, text: str) -> list[Version]:
    """The line's versions, oldest first: ``git log -L``'s, without its walk when the
    line's own commit shows the line has no older version."""
    only = only_version(root, path, commit, line, text)
    if only is not None:
        return [only]
    return log_versions(root, path, commit, line, text)


def only_version(root: Path, path: str, commit: str, line: int, text: str) -> Version | None:
    """The line's version in ``commit`` when it is its only one, from that commit's own
    diff (``git log -1 -p -U0``); None when git log -L must say.

    ``commit`` is the line's (git blame's): git log -L shows it first, adding the
    line, and follows into its parent the pre-image of the hunk that added it. An
    older commit git log -L shows adds lines of that range only (it cuts its ``+``
    lines to the range), and unchanged until then they are lines this hunk removed.
    So when the hunk removed none, or none as like the line as ``SAME_LINE``, the
    next version ``versions`` could take is no version of this line: the history
    is the line's own commit, which is what git log -L would have given. The diff
    is made as git log -L makes its own (``_AS_LOG_L``), so that a block that could
    slide over a copy of its first line is cut as git log -L cuts it. A merge,
    a file git shows no hunk of, or a line whose text there is not ``text`` (blame
    options, a filter) goes to git log -L."""
    proc = run_git(
        root,
        ["--literal-pathspecs", "log", "-1", "-p", "-U0", "--follow", "--format=%x01%H", *PLAIN_DIFF,
         *_AS_LOG_L, commit, "--", path],
        check=False,
        timeout=60,
    )  # fmt: skip
    if proc.returncode != 0:
        return None
    out = proc.stdout.decode("utf-8", "surrogateescape")
    if not out.startswith(f"\x01{commit}\n") or out.count("\ndiff --git ") != 1:
        return None  # not this commit, a merge (no diff), or more than one file
    hunk = _hunk_adding(_rows(out), line)
    if hunk is None:
        return None  # the commit did not add the line (blame said otherwise)
    removed = hunk.removed
    version = hunk.added[line - hunk.start]
    if version != text:
        return None
    near, whole = _nearest(removed, line - hunk.start, version)
    if not whole or any(_similarity(removed[i], version) >= SAME_LINE for i in near):
        return None  # an older version may be one of them: git log -L follows it
    return Version(commit=commit, path=path, line=line, text=version)


def replaced_line(root: Path, path: str, line: int, text: str) -> int | None:
    """The line of HEAD's ``path`` that line ``line`` of the working tree (``text``, not
    committed yet) changed: the line its hunk of ``git diff HEAD`` removed most like it
    (``SAME_LINE`` at least; the same place in the hunk first). None: a line added,
    not changed, a file HEAD does not hold, or a working tree that is not ``text``
    there (an editor's unsaved buffer)."""
    proc = run_git(
        root,
        ["--literal-pathspecs", "diff", "-U0", *PLAIN_DIFF, *_AS_LOG_L, "HEAD", "--", path],
        check=False,
        timeout=60,
    )  # fmt: skip
    if proc.returncode != 0:
        return None
    # decoded as the working tree's lines are (FileVersion.lines): a file not in UTF-8
    # has its text there with U+FFFD, which a surrogate escape never equals
    hunk = _hunk_adding(_rows(proc.stdout.decode("utf-8", "replace")), line)
    if hunk is None or not hunk.removed:
        return None
    removed, at = hunk.removed, line - hunk.start
    if hunk.added[at] != text:
        return None
    near, _ = _nearest(removed, at, text)
    score, _, i = max((_similarity(removed[i], text), -abs(i - at), i) for i in near)
    return hunk.old_start + i if score >= SAME_LINE else None


def log_versions(root: Path, path: str, commit: str, line: int, text: str) -> list[Version]:
    """The line's versions, oldest first, from ``git log -L`` (newest first there)."""
    proc = run_git(
        root,
        [
            "log",
            f"-L{line},{line}:{path}",
            "--format=%x01%H",
            "--no-color",
            f"-n{MAX_COMMITS}",
            commit,
            "--",
        ],
        check=False,
        timeout=60,
    )
    if proc.returncode != 0:
        return []
    out: list[Version] = []
    current = text
    for chunk in proc.stdout.decode("utf-8", "surrogateescape").split("\x01")[1:]:
        head, _, diff = chunk.partition("\n")
        sha = head.strip()
        file_path = path
        added: list[tuple[int, str]] = []
        new_no = 0
        in_hunk = False
        for row in _rows(diff):
            if row.startswith("+++ "):
                target = row[4:]
                file_path = target[2:] if target.startswith("b/") else file_path
                in_hunk = False
                continue
            m = _HUNK.match(row)
            if m:
                new_no, in_hunk = int(m.group(1)), True
                continue
            if not in_hunk:
                continue
            if row.startswith("+"):
                added.append((new_no, row[1:]))
                new_no += 1
            elif row.startswith(" "):
                new_no += 1
        if not added:
            continue  # the commit moved the range, not the line
        n, version = max(added, key=lambda a: _similarity(a[1], current))
        if out and _similarity(version, current) < SAME_LINE:
            break  # the newer version was a new line, not this one changed
        out.append(Version(commit=sha, path=file_path, line=n, text=version))
        current = version
    out.reverse()
    return out


def line_history(
    open_repo: Callable[[], pygit2.Repository],
    conn: sqlite3.Connection | None,
    root: Path,
    path: str,
    commit: str,
    line: int,
    text: str,
    newest: tuple[str | None, str | None] = (None, None),
    known_authors: Mapping[str, tuple[str, str, int]] | None = None,
) -> list[Version]:
    """Each version of the line with who wrote it, oldest first. ``newest`` is what
    the caller's blame found for the version that stands, (session, agent): only the
    older versions are blamed again (and only then is the repository opened, and the
    matcher imported). ``known_authors``: the commits' authors the caller's answer
    carries, (name, mail, author time); git is asked for the others."""
    found = versions(root, path, commit, line, text)
    known = known_authors or {}
    authors = {c: Author(*known[c]) for c in {v.commit for v in found} if c in known}
    authors.update(commit_authors(root, {v.commit for v in found} - set(authors)))
    repo: pygit2.Repository | None = None
    for v in found:
        author = authors.get(v.commit)
        if author is not None:
            v.author, v.at = author.name, author.time
        if v.commit == commit:
            v.session, v.agent = newest
            continue
        from deja_blame.attribution.blame import blame_file
        from deja_blame.errors import DejaError

        if repo is None:
            from deja_blame.notes.lookup import note_lookup_for  # pygit2: only now
            from deja_blame.notes.store import read_tips

            repo = open_repo()
            tips = read_tips(repo)  # the notes' refs, once for every version asked
        try:
            # the whole file at that commit, not a window around the line: the answer
            # is kept in the attribution cache, so the next ``why`` of any line whose
            # history passes through that commit reads it (an editor's hovers, an agent
            # asking line after line) instead of matching the file there again
            lookup = note_lookup_for(repo, conn, tips)
            fb = blame_file(repo, v.path, v.commit, conn, note_lookup=lookup, tips=tips)
        except DejaError:
            continue
        for ln in fb.lines:
            if ln.line == v.line and ln.commit == v.commit and ln.session:
                v.session, v.agent = ln.session, ln.source
    return found
