"""Lines that moved: a block a person moved here from another file keeps its session.

``git blame`` names the commit that moved a block, not where it came from.
``git blame -C`` finds blocks moved from a file the same commit changed; what it
cannot see is found here from the index and git's logs: files a session wrote
that were renamed before their first commit, blocks that left a file in the
commit that brought them here (a rename git missed because the same commit
rewrote half the file; a session's new function moved before its first
commit). Moved lines are then matched against the writes to where they came
from, and are less certain than lines matched in place.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.attribution.blame_engine import BlameLine, blame_copies
from deja_blame.attribution.matcher import CLOCK_SKEW, WriteSet, load_writes
from deja_blame.attribution.repo_history import repo_history
from deja_blame.attribution.window import has_line
from deja_blame.gitutil import FileVersion, try_git
from deja_blame.index import queries as Q
from deja_blame.index.fingerprint import fingerprint, is_trivial

if TYPE_CHECKING:
    from deja_blame.attribution.model import LineAttribution

# blame's _attribute_from_index: (conn, lines, evidence, writes, paths, rev_time,
# root, rev, only=...) -> None, matching ``lines`` against ``writes``
Attribute = Callable[..., None]

MOVED_BLOCK = 2  # lines: a block moved between files, not a line that happens to recur
LEFT_BEHIND_COMMITS = 24  # commits examined for text that left a file unseen, per file


def follow_moves(
    conn: sqlite3.Connection,
    root: Path,
    version: FileVersion,
    lines: list[LineAttribution],
    by_line: list[BlameLine | None],
    writes: WriteSet,
    paths: dict[int, bool],
    rev_time: float | None,
    attribute: Attribute,
) -> None:
    """Lines a person moved here from another file keep their session.

    git blame names the commit that moved them; ``git blame -C`` (lines moved
    from a file changed in the same commit) names where they came from. It costs
    several times a plain blame, so it runs only on blocks of unmatched lines
    whose text some session wrote to another file of this repository.
    """
    todo = [
        k
        for k, ln in enumerate(lines)
        if ln.session is None and ln.commit is not None and not is_trivial(ln.text)
    ]
    if not todo:
        return
    elsewhere, names = _written_elsewhere(
        conn, str(root), version.commit, set(paths), {fingerprint(lines[k].text) for k in todo}
    )
    todo = [k for k in todo if fingerprint(lines[k].text) in elsewhere]
    if not todo:
        return
    ranges: list[list[int]] = []
    for k in todo:
        n = lines[k].line
        if ranges and n - ranges[-1][1] <= 3:
            ranges[-1][1] = n
        else:
            ranges.append([n, n])
    ranges = [r for r in ranges if r[1] - r[0] + 1 >= MOVED_BLOCK]
    if not ranges:
        return
    first = lines[0].line
    last = lines[-1].line
    # the blank lines and brackets at a moved block's edges moved with it
    ranges = [[max(first, a - 2), min(last, b + 2)] for a, b in ranges]
    found = blame_copies(root, version.relpath, version.commit, [(a, b) for a, b in ranges])
    moved = [False] * len(lines)
    evidence = list(by_line)
    for b in found:
        k = b.line - first
        if (
            0 <= k < len(lines)
            and lines[k].session is None
            and b.orig_path
            and (b.orig_path != lines[k].orig_path)
        ):
            evidence[k] = b
            moved[k] = True
    # -C names the file the lines came from as it was then; where the commit that
    # brought them there renamed it, the sessions of that commit wrote the old name
    sources = {b.orig_path for b in found if b.orig_path}
    for commit, source in {
        (b.commit, b.orig_path)
        for b in found
        if b.commit and b.orig_path and 0 <= b.line - first < len(moved) and moved[b.line - first]
    }:
        sources |= _renamed_to(root, commit, source)
    more = {
        pid: exact
        for pid, exact in Q.candidate_paths(conn, str(root), sources).items()
        if pid not in paths
    }

    # Work that left a file in the commit that brought it here, never committed
    # where the session wrote it: a rename git did not see as one (the person
    # moved the file and the release changed half of it), or a session's new
    # function the person moved before committing. Neither blame nor -C can
    # point at it; that the commit deleted the file, or that a session wrote the
    # text there after the file's last commit, can.
    def written_at(pid: int, fp: int) -> list[float]:
        return [r[5] for r in Q.line_writes(conn, pid, [fp]) if r[5] is not None and not r[6]]

    blobs = _Blobs(root)  # the files at commits these questions read, one cat-file
    try:
        left = _left_behind(
            root,
            blobs,
            version.commit,
            lines,
            evidence,
            ranges,
            first,
            elsewhere,
            names,
            written_at,
        )
        renamed: dict[str, set[int]] = {}  # commit -> files it deleted that moved here
        texts_here = {ln.text.strip() for ln in lines if not is_trivial(ln.text)}
        for k, pids in left.items():
            moved[k] = True
            more.update(dict.fromkeys((pid for pid in pids if pid not in paths), True))
            brought = evidence[k]
            if brought is None or brought.commit is None:
                continue
            for pid in pids:
                if brought.commit in renamed and pid in renamed[brought.commit]:
                    continue
                log = _path_log(root, version.commit, names[pid])
                if _deleted_in(log, brought.commit) and _mostly_here(
                    blobs, brought.commit, names[pid], texts_here
                ):
                    renamed.setdefault(brought.commit, set()).add(pid)
    finally:
        blobs.close()
    # A file that left whole and is mostly here (a rename git missed: the same
    # commit rewrote much of it): every line that commit brought here may be its,
    # not only the blocks found (a lone docstring line, a blank). A new module
    # that took some blocks of a deleted one is not that module: only the blocks.
    for k, ln in enumerate(lines):
        brought = evidence[k]
        if not moved[k] and ln.session is None and brought is not None:
            moved[k] = brought.commit in renamed
    # A file a session wrote that the person renamed before the first commit: git
    # never had the session's path, so neither blame nor -C can point at it.
    wrote = {pid for pids in elsewhere.values() for pid in pids} - set(more)
    gone = _paths_git_lacks(root, version.commit, {pid: names[pid] for pid in wrote})
    if gone:
        for start, end in ranges:
            for k in range(start - first, end - first + 1):
                if not moved[k] and lines[k].session is None and lines[k].commit is not None:
                    moved[k] = True
        more.update(dict.fromkeys(gone, True))
    if not any(moved):
        return
    solid = {fingerprint(ln.text) for ln in lines if not is_trivial(ln.text)}
    load_writes(conn, more, {fingerprint(ln.text) for ln in lines}, into=writes, solid=solid)
    attribute(
        conn,
        lines,
        evidence,
        writes,
        {**paths, **more},
        rev_time,
        str(root),
        version.commit,
        only=moved,
    )
    _keep_blocks(lines, moved)
    for k, ln in enumerate(lines):
        if moved[k] and ln.session is not None and ln.confidence is not None:
            ln.confidence = round(ln.confidence * 0.9, 2)  # moved: less certain than in place


def _keep_blocks(lines: list[LineAttribution], moved: list[bool]) -> None:
    """A session keeps the lines it was given as moved here only where at least
    ``MOVED_BLOCK`` different lines of its own moved here: one ``import re`` that
    arrived with a person's new code is a line that happens to recur."""
    texts: dict[str, set[str]] = {}
    for k, ln in enumerate(lines):
        if moved[k] and ln.session is not None and ln.via == "index" and not is_trivial(ln.text):
            texts.setdefault(ln.session, set()).add(ln.text.strip())
    for k, ln in enumerate(lines):
        if moved[k] and ln.via == "index" and len(texts.get(ln.session or "", ())) < MOVED_BLOCK:
            ln.session = ln.source = ln.written_at = None
            ln.confidence = None
            ln.edit_ord = None
            ln.via = None


def _left_behind(
    root: Path,
    blobs: _Blobs,
    rev: str | None,
    lines: list[LineAttribution],
    evidence: list[BlameLine | None],
    ranges: list[list[int]],
    first: int,
    elsewhere: dict[int, set[int]],
    names: dict[int, str],
    written_at: Callable[[int, int], list[float]],
) -> dict[int, set[int]]:
    """Line index -> paths (ids) its text left in the commit that brought it here.

    A line qualifies when it is unmatched, inside a block of such lines, and its
    text left a file a session wrote it to in the commit that brought it
    (``evidence``: git blame's, or -C's): the file had it before that commit, or a
    session wrote it there after the file's last commit (work git never saw
    there), and the file no longer has it after the commit. At least
    ``MOVED_BLOCK`` different lines of the block must have left the same file:
    one ``return NotImplemented`` leaving a file proves nothing. The rest of the
    block that sessions wrote there, and its blank lines and brackets, go with it.
    Files are asked of git only where sessions wrote that many different lines
    of the block there (one ``cat-file --batch`` for every read).
    """
    out: dict[int, set[int]] = {}
    commits: set[str] = set()  # each costs a diff-tree and file reads: a bounded few
    for start, end in ranges:
        block: list[int] = []
        written: dict[int, set[str]] = {}
        for k in range(start - first, end - first + 1):
            b = evidence[k]
            ln = lines[k]
            if ln.session is not None or b is None or b.commit is None:
                continue
            block.append(k)
            if not is_trivial(ln.text):
                for pid in elsewhere.get(fingerprint(ln.text), ()):
                    written.setdefault(pid, set()).add(ln.text.strip())
        asked = {pid for pid, texts in written.items() if len(texts) >= MOVED_BLOCK}
        left: dict[int, set[int]] = {}
        for k in block if asked else ():
            b = evidence[k]
            assert b is not None and b.commit is not None
            if is_trivial(lines[k].text):
                continue
            if b.commit not in commits:
                if len(commits) >= LEFT_BEHIND_COMMITS:
                    continue
                commits.add(b.commit)
            fp = fingerprint(lines[k].text)
            for pid in asked & elsewhere.get(fp, set()):
                stripped = lines[k].text.strip()
                if _text_left(
                    root, blobs, rev, b, names[pid], stripped, partial(written_at, pid, fp)
                ):
                    left.setdefault(pid, set()).add(k)
        sources = {
            pid
            for pid, ks in left.items()
            if len({lines[k].text.strip() for k in ks}) >= MOVED_BLOCK
        }
        if not sources:
            continue
        for k in block:
            if is_trivial(lines[k].text):
                out[k] = sources
                continue
            # a line of the block also found elsewhere in the file it left
            # (``return None``) went with the block
            got = sources & elsewhere.get(fingerprint(lines[k].text), set())
            if got:
                out[k] = got
    return out


def _renamed_to(root: Path, commit: str, path: str) -> set[str]:
    """The paths ``commit`` renamed to ``path`` (as git's rename detection sees it)."""
    return {
        before
        for before, (status, after) in _touched(root, commit).items()
        if status == "R" and after == path
    }


def _text_left(
    root: Path,
    blobs: _Blobs,
    rev: str | None,
    b: BlameLine,
    path: str,
    stripped: str,
    written_at: Callable[[], list[float]],
) -> bool:
    """Whether the text ``stripped`` (at any indent) left ``path`` in commit ``b.commit``
    (which brought it to ``b.orig_path``): not in the file after the commit, and in it
    before, or written there by a session since the file's last commit.

    A file git saw renamed to this one is not a source: blame followed that
    rename, and the lines it gives this commit are the ones it rewrote. Nor is a
    file the commit deleted, then: what git missed is a rename, and it saw one.
    """
    commit = b.commit
    here = b.orig_path or ""
    if commit is None or path == here:
        return False
    # The cheap questions first, from one log of the path: did the commit delete
    # it (with the text in it), or did a session write the text there since the
    # path's last commit (work git never saw there)? A text that left a file the
    # commit only changed is git blame -C's to find (reading that file before
    # every such commit cost deja stats on click 7 % for 12 more lines of 5,653
    # and 5 more wrong on packaging's history).
    log = _path_log(root, rev, path)
    deleted = _deleted_in(log, commit)
    if not (deleted and has_line(blobs.text(commit + "^", path), stripped, exact=False)):
        until = (b.commit_time or 0) + CLOCK_SKEW
        since = max(
            (t for sha, t, _ in log if t <= (b.commit_time or 0) and sha != commit), default=0
        )
        if not any(since < at <= until for at in written_at()):
            return False
    if path in _renamed_to(root, commit, here):
        return False
    status, now = _touched(root, commit).get(path, (None, path))
    if now is None and _renamed_to(root, commit, here):
        return False  # deleted, but git saw another file renamed to this one: not its source
    # still there (or there under its new name): a copy, not a move
    return now is None or not has_line(blobs.text(commit, now), stripped, exact=False)


class _Blobs:
    """Files at commits, read through the repository's one ``cat-file --batch`` and
    kept for one file's answer (then dropped: ``deja stats`` asks this for every
    file, and each would keep versions of the others)."""

    def __init__(self, root: str | Path) -> None:
        self.history = repo_history(root)
        self.texts: dict[tuple[str, str], str] = {}

    def text(self, rev: str, path: str) -> str:
        """The file's text at ``rev``; empty where it has no such file."""
        got = self.texts.get((rev, path))
        if got is None:
            data = self.history.read(f"{rev}:{path}") or b""
            got = self.texts[(rev, path)] = data.decode("utf-8", "replace")
        return got

    def close(self) -> None:
        self.texts.clear()


RENAMED_SHARE = 0.5  # of a deleted file's lines found here: this file is that one


def _mostly_here(blobs: _Blobs, commit: str, path: str, texts_here: set[str]) -> bool:
    """Whether most different lines ``path`` had before ``commit`` are in this file."""
    before = {t.strip() for t in blobs.text(commit + "^", path).splitlines() if not is_trivial(t)}
    return bool(before) and len(before & texts_here) >= RENAMED_SHARE * len(before)


def _deleted_in(log: list[tuple[str, int, str]], commit: str) -> bool:
    """Whether ``commit`` deleted the path of ``log`` (``_path_log``)."""
    return any(sha == commit and status == "D" for sha, _, status in log)


def _path_log(root: Path, rev: str | None, path: str) -> list[tuple[str, int, str]]:
    """(commit, time, status of the path) for every commit up to ``rev`` (None:
    HEAD) that touched the path, renames as a deletion and an addition: what
    ``git log --name-status --no-renames REV -- PATH`` shows, from the
    repository's history read once."""
    entries = repo_history(root).log(rev or "HEAD", {path})
    return [(e.commit, e.time, status) for e in entries or () for status, _ in e.changes.values()]


def _touched(root: Path, commit: str) -> dict[str, tuple[str, str | None]]:
    """Path before ``commit`` -> (status letter, its path after: None when deleted)
    for what the commit changed, renames as git's rename detection sees them."""
    key = (str(root), commit)
    got = _TOUCHED.get(key)
    if got is None:
        got = {}
        proc = try_git(root, ["diff-tree", "-r", "--root", "-M", "--name-status", "-z", commit])
        if proc is not None and proc.returncode == 0:
            fields = [f.decode("utf-8", "surrogateescape") for f in proc.stdout.split(b"\0")]
            # the commit's id comes first
            k = 1 if fields and len(fields[0]) >= 40 and "\t" not in fields[0] else 0
            while k + 1 < len(fields):
                status = fields[k][:1]
                if status in ("R", "C") and k + 2 < len(fields):
                    got[fields[k + 1]] = (status, fields[k + 2])
                    k += 3
                    continue
                got[fields[k + 1]] = (status, None if status == "D" else fields[k + 1])
                k += 2
        _TOUCHED[key] = got
    return got


# commits never change: what each touched
_TOUCHED: dict[tuple[str, str], dict[str, tuple[str, str | None]]] = {}


def revisions_asked(commit: str | None) -> list[str]:
    """The trees whose files ``_written_elsewhere`` takes for the repository's."""
    return [commit, commit + "^"] if commit else ["HEAD"]


def _written_elsewhere(
    conn: sqlite3.Connection, root: str, commit: str | None, skip: set[int], fps: set[int]
) -> tuple[dict[int, set[int]], dict[int, str]]:
    """Which of ``fps`` some session wrote to another file of this repository (under
    ``root``, or in another clone by path suffix: ``identity.paths_of_repository``,
    the files of ``commit`` and its parent): fp -> path ids, and those paths
    relative to the repository."""
    from deja_blame.attribution.identity import paths_of_repository

    found: dict[int, set[int]] = {}
    names: dict[int, str] = {}
    revs = revisions_asked(commit)
    for pid, rel in paths_of_repository(conn, root, revs).items():
        if pid in skip:
            continue
        names[pid] = rel
        for fp in Q.fingerprints_written(conn, pid, fps):
            found.setdefault(fp, set()).add(pid)
    return found, names


def _paths_git_lacks(root: Path, commit: str | None, names: dict[int, str]) -> set[int]:
    """Of these paths (relative to ``root``), those no commit up to ``commit`` (HEAD
    for the working tree) ever had: written by a session, renamed before git saw it."""
    rel = {path: pid for pid, path in names.items()}
    if not rel:
        return set()
    entries = repo_history(root).log(commit or "HEAD", set(rel))
    if entries is None:
        return set()
    had = {p for e in entries for p in e.changes}
    return {pid for path, pid in rel.items() if path not in had}
