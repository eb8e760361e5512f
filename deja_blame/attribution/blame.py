"""Blame one file: git's blame per line, then the matcher against the index.

This is the library entry point behind ``deja blame``, ``deja why`` and the
notes: ``blame_file`` returns plain data (``FileBlame``), nothing is printed.
Attribution already stored in a commit's note (``refs/notes/deja``) is used
first when a ``note_lookup`` is given: a fresh clone without transcripts still
gets answers, and where a note and the index disagree the note wins.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from deja_blame.attribution import blame_options, cache
from deja_blame.attribution.blame_engine import BlameLine, blame_copies, start_blame
from deja_blame.attribution.matcher import (
    CLOCK_SKEW,
    WriteSet,
    candidate_paths,
    load_writes,
    match_lines,
)
from deja_blame.attribution.reflow import reflow_matches
from deja_blame.attribution.window import CommitWindow, FileHistory
from deja_blame.errors import DejaError
from deja_blame.gitutil import (
    CatFile,
    FileVersion,
    head_commit,
    read_file,
    read_worktree_bytes,
    relative_to_root,
    run_git,
    same_repository,
    try_git,
    workdir,
)
from deja_blame.index import queries as Q
from deja_blame.index.fingerprint import fingerprint, is_trivial
from deja_blame.index.store import load_json

if TYPE_CHECKING:
    import pygit2

CACHE_ENTRIES = 2000

# (commit sha, original path, original line) -> (session id, confidence, written
# at in epoch seconds or None) or None
NoteLookup = Callable[[str, str, int], "tuple[str, float, int | None] | None"]


@dataclass
class LineAttribution:
    line: int
    text: str
    commit: str | None
    session: str | None = None
    source: str | None = None
    confidence: float | None = None
    written_at: str | None = None
    commit_time: int | None = None
    orig_path: str | None = None
    orig_line: int | None = None
    edit_ord: int | None = None  # which edit of the session (index evidence only)
    via: str | None = None  # "index" | "note"

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "line": self.line,
            "text": self.text,
            "commit": self.commit,
            "session": self.session,
            "source": self.source,
            "confidence": self.confidence,
        }
        if self.session is not None:
            doc["agent"] = self.source
            doc["written_at"] = self.written_at
            doc["via"] = self.via
        return doc


@dataclass
class SessionInfo:
    session_id: str
    source: str
    project: str
    started_at: str | None
    first_prompt: str | None
    model: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "agent": self.source,
            "model": self.model,
            "project": self.project,
            "started_at": self.started_at,
            "first_prompt": self.first_prompt,
        }


@dataclass
class FileBlame:
    path: str  # repository-relative
    rev: str | None  # the commit blamed, or None for the working tree
    root: str
    lines: list[LineAttribution]
    sessions: dict[str, SessionInfo] = field(default_factory=dict)
    indexed_sessions: int = 0
    # what the notes say of sessions the index does not know (a reviewer's clone)
    note_sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    total_lines: int | None = None  # the file's length, where ``lines`` is a window of it

    def to_json(self, include_prompts: bool = True) -> dict[str, Any]:
        sessions = {}
        for sid, info in self.sessions.items():
            doc = info.to_json()
            if not include_prompts:
                doc["first_prompt"] = None
            sessions[sid] = doc
        return {
            "path": self.path,
            "rev": self.rev,
            "lines": [ln.to_json() for ln in self.lines],
            "sessions": sessions,
        }


WINDOW_CONTEXT = 40  # lines blamed and matched around a range or an uncommitted block


def blame_file(
    repo: pygit2.Repository,
    relpath: str,
    rev: str | None,
    conn: sqlite3.Connection | None,
    line_range: tuple[int, int] | None = None,
    note_lookup: NoteLookup | None = None,
    engine: str = "auto",
    before_match: Callable[[], None] | None = None,
) -> FileBlame:
    """Attribute every line of ``relpath`` at ``rev`` (None: the working tree).

    The whole file's answer at a commit is kept in the attribution cache
    (``cache``); the working tree is HEAD's answer plus its uncommitted lines.
    With ``line_range`` and nothing cached, only the range (and some context)
    is blamed and matched. ``before_match`` runs while git blame works in the
    background (deja blame reads new transcript lines into the index there).
    """
    root = workdir(repo)
    if rev is not None:
        version = read_file(repo, relpath, rev)
        _refuse_binary(version)
        assert version.commit is not None
        result = _at_commit(
            repo, conn, version, line_range, note_lookup, engine, before_match, rev=version.commit
        )
        return _finish(conn, result, line_range)
    work = read_file(repo, relpath, None)
    _refuse_binary(work)
    head = head_commit(repo)
    at_head: FileVersion | None = None
    if head is not None:
        try:
            at_head = read_file(repo, relpath, str(head.id))
        except DejaError:
            at_head = None  # not in HEAD: every line is new
    if at_head is None or at_head.is_binary:
        result = _compute(repo, conn, work, note_lookup, engine, before_match, None)
        return _finish(conn, result, line_range)
    if at_head.data == work.data:
        result = _at_commit(
            repo, conn, at_head, line_range, note_lookup, engine, before_match, rev=None
        )
        return _finish(conn, result, line_range)
    head_result = _at_commit(repo, conn, at_head, None, note_lookup, engine, before_match, rev=None)
    result = overlay(conn, head_result, work.data, str(root), relpath)
    return _finish(conn, result, line_range)


def _refuse_binary(version: FileVersion) -> None:
    if version.is_binary:
        raise DejaError(f"{version.relpath} is a binary file: nothing to blame")


def _notes_tip(repo: pygit2.Repository) -> str:
    """The notes an answer depends on: deja's, and git-ai's where there are some
    (as ``cache.notes_tip_cli`` spells it: the tips, one a line)."""
    from pygit2 import GitError

    from deja_blame.notes.gitai import GITAI_REF
    from deja_blame.notes.store import ref_target

    tips = []
    try:  # for-each-ref's order: by ref name, refs/notes/ai before refs/notes/deja
        tips.append(str(repo.references[GITAI_REF].target))
    except (KeyError, GitError):
        pass
    tips.append(ref_target(repo) or "")
    return "\n".join(t for t in tips if t)


def _at_commit(
    repo: pygit2.Repository,
    conn: sqlite3.Connection | None,
    version: FileVersion,
    line_range: tuple[int, int] | None,
    note_lookup: NoteLookup | None,
    engine: str,
    before_match: Callable[[], None] | None,
    rev: str | None,
) -> FileBlame:
    """The file at a commit: from the attribution cache, or computed (and cached).

    With ``line_range`` and nothing cached, only a window around the range; the
    caller filters to the range (``_finish``).
    """
    assert version.commit is not None
    root = str(workdir(repo))
    if conn is None:
        result = _compute(repo, conn, version, note_lookup, engine, before_match, None)
        result.rev = rev
        return result
    notes = _notes_tip(repo)
    key = cache.entry_key(root, version.commit, version.relpath, engine)
    entry = cache.load(conn, key, notes, root)
    if entry is not None and entry.data_hash == cache.content_hash(version.data):
        return from_entry(entry, version.relpath, rev, root)
    if line_range is not None:
        # one line or a few: blame and match only around them; nothing cached
        result = _compute(repo, conn, version, note_lookup, engine, before_match, line_range)
        result.rev = rev
        return result
    result = _compute(repo, conn, version, note_lookup, engine, before_match, None)
    entry = cache.entry_from(result, version.commit, version.data, version.relpath)
    cache.store(conn, key, entry, notes, root)
    result.rev = rev
    return result


def from_entry(entry: cache.Entry, relpath: str, rev: str | None, root: str) -> FileBlame:
    return FileBlame(
        path=relpath,
        rev=rev,
        root=root,
        lines=cache.entry_lines(entry),
        note_sessions=dict(entry.note_sessions),
    )


def _finish(
    conn: sqlite3.Connection | None, result: FileBlame, line_range: tuple[int, int] | None
) -> FileBlame:
    if conn is not None:
        result.indexed_sessions = Q.count_sessions(conn)
    if line_range is not None:
        start, end = line_range
        total = result.total_lines
        if total is None:
            total = result.lines[-1].line if result.lines else 0
        if start > total and not (start == 1 and total == 0):
            raise too_short(result.path, total)
        result.lines = [ln for ln in result.lines if start <= ln.line <= end]
    _fill_sessions(conn, result)
    return result


def too_short(path: str, total: int) -> DejaError:
    """git blame's own words for a line range past the end of the file."""
    return DejaError(f"file {path} has only {total} line{'s' if total != 1 else ''}")


def _compute(
    repo: pygit2.Repository,
    conn: sqlite3.Connection | None,
    version: FileVersion,
    note_lookup: NoteLookup | None,
    engine: str,
    before_match: Callable[[], None] | None,
    window: tuple[int, int] | None,
) -> FileBlame:
    """git's blame, the notes, then the matcher: the whole file or a window of it.

    With a window, the result holds the lines of the window and its context only.
    """
    root = workdir(repo)
    relpath = version.relpath
    texts = version.lines()
    lo, hi = 1, len(texts)
    if window is not None:
        lo = max(1, window[0] - WINDOW_CONTEXT)
        hi = min(len(texts), window[1] + WINDOW_CONTEXT)
        if lo > hi:
            return FileBlame(
                path=relpath, rev=version.commit, root=str(root), lines=[], total_lines=len(texts)
            )
    span = None if window is None else (lo, hi)
    total_lines = len(texts)
    if window is None:
        pending = _start_blame_cached(conn, root, repo, version, engine)
    else:
        started = start_blame(root, repo, relpath, version.commit, engine=engine, span=span)
        pending = started.result
    if before_match is not None:
        before_match()
    part = texts[lo - 1 : hi]
    paths: dict[int, bool] = {}
    writes = WriteSet()
    file_fps = {fingerprint(t) for t in part}
    if conn is not None:
        paths = candidate_paths(conn, str(root), {relpath})
        load_writes(conn, paths, file_fps, into=writes)
    blamed = pending()
    by_line: list[BlameLine | None] = [None] * len(part)
    for b in blamed:
        if lo <= b.line <= hi:
            by_line[b.line - lo] = b
    lines = [
        LineAttribution(
            line=lo + i,
            text=part[i],
            commit=b.commit if b else None,
            commit_time=b.commit_time if b and b.commit else None,
            orig_path=b.orig_path if b else relpath,
            orig_line=b.orig_line if b else lo + i,
        )
        for i, b in enumerate(by_line)
    ]
    result = FileBlame(
        path=relpath, rev=version.commit, root=str(root), lines=lines, total_lines=total_lines
    )
    if note_lookup is not None:
        for ln in lines:
            if ln.commit is None:
                continue
            hit = note_lookup(ln.commit, ln.orig_path or relpath, ln.orig_line or ln.line)
            if hit is not None:
                ln.session, ln.confidence, ln.via = hit[0], hit[1], "note"
                if hit[2] is not None:
                    ln.written_at = format_time_epoch(hit[2])
        info_of = getattr(note_lookup, "session_info", None)
        if info_of is not None:
            for sid in {ln.session for ln in lines if ln.via == "note" and ln.session}:
                info = info_of(sid)
                if isinstance(info, dict):
                    result.note_sessions[sid] = info
        for ln in lines:
            if ln.via == "note" and ln.session:
                noted = result.note_sessions.get(ln.session) or {}
                ln.source = _text(noted.get("agent")) or "antigravity"
    if conn is not None:
        # Renamed files: their older lines were written under the old path.
        older = {b.orig_path for b in by_line if b is not None and b.orig_path} - {relpath}
        if older:
            more = {
                k: v for k, v in candidate_paths(conn, str(root), older).items() if k not in paths
            }
            load_writes(conn, more, file_fps, into=writes)
            paths.update(more)
        rev_time = None
        if version.commit is not None:
            rev_time = float(repo[version.commit].commit_time)  # type: ignore[attr-defined]
        _attribute_from_index(
            conn, lines, by_line, writes, paths, rev_time, str(root), version.commit
        )
        _follow_moves(conn, root, version, lines, by_line, writes, paths, rev_time)
    _from_git_ai(repo, lines, result)
    return result


def _from_git_ai(repo: pygit2.Repository, lines: list[LineAttribution], result: FileBlame) -> None:
    """Lines deja's notes and index leave unexplained, from git-ai's notes: its
    sessions' lines (``via: "git-ai"``); lines it says a person wrote stay people's."""
    from deja_blame.notes.gitai import CONFIDENCE, gitai_lookup_for

    lookup = gitai_lookup_for(repo)
    if lookup is None:
        return
    for ln in lines:
        if ln.session is not None or ln.commit is None:
            continue
        who = lookup(ln.commit, ln.orig_path or result.path, ln.orig_line or ln.line)
        if who is None or who.human:
            continue
        ln.session, ln.source, ln.via = who.key, who.agent or "unknown", "git-ai"
        ln.confidence = CONFIDENCE
        result.note_sessions.setdefault(who.key, who.info())


MOVED_BLOCK = 2  # lines: a block moved between files, not a line that happens to recur
LEFT_BEHIND_COMMITS = 24  # commits examined for text that left a file unseen, per file


def _follow_moves(
    conn: sqlite3.Connection,
    root: Path,
    version: FileVersion,
    lines: list[LineAttribution],
    by_line: list[BlameLine | None],
    writes: WriteSet,
    paths: dict[int, bool],
    rev_time: float | None,
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
        conn, str(root), set(paths), {fingerprint(lines[k].text) for k in todo}
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
        for pid, exact in candidate_paths(conn, str(root), sources).items()
        if pid not in paths
    }

    # Work that left a file in the commit that brought it here, never committed
    # where the session wrote it: a rename git did not see as one (the person
    # moved the file and the release changed half of it), or a session's new
    # function the person moved before committing. Neither blame nor -C can
    # point at it; the commit deleting that file, or taking the text out of it,
    # can.
    def written_at(pid: int, fp: int) -> list[float]:
        return [r[5] for r in Q.line_writes(conn, pid, [fp]) if r[5] is not None and not r[6]]

    left = _left_behind(
        root, version.commit, lines, evidence, ranges, first, elsewhere, names, written_at
    )
    for k, pids in left.items():
        moved[k] = True
        more.update(dict.fromkeys((pid for pid in pids if pid not in paths), True))
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
    load_writes(conn, more, {fingerprint(ln.text) for ln in lines}, into=writes)
    _attribute_from_index(
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
    blobs = _Blobs(root)
    try:
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
    finally:
        blobs.close()
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
    # commit only changed is git blame -C's to find.
    log = _path_log(root, rev, path)
    deleted = any(sha == commit and status == "D" for sha, _, status in log)
    if not (deleted and _has_line(blobs, commit + "^", path, stripped)):
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
    return now is None or not _has_line(blobs, commit, now, stripped)


class _Blobs(CatFile):
    """Files at commits, read through one ``cat-file --batch`` and kept for one
    file's answer (then dropped: ``deja stats`` asks this for every file, and
    each would keep versions of the others)."""

    def __init__(self, root: str | Path) -> None:
        super().__init__(root)
        self.data: dict[tuple[str, str], bytes] = {}
        self.lines: dict[tuple[str, str], frozenset[str]] = {}


def _has_line(blobs: _Blobs, rev: str, path: str, stripped: str) -> bool:
    """Whether the file at ``rev`` has a line of text ``stripped`` (at any indent)."""
    key = (rev, path)
    data = blobs.data.get(key)
    if data is None:
        data = blobs.data[key] = blobs.read(f"{rev}:{path}") or b""
    if stripped.encode("utf-8", "surrogateescape") not in data:
        return False  # most texts: one search of the bytes, no lines made
    lines = blobs.lines.get(key)
    if lines is None:
        lines = blobs.lines[key] = frozenset(
            t.strip() for t in data.decode("utf-8", "replace").splitlines()
        )
    return stripped in lines


def _path_log(root: Path, rev: str | None, path: str) -> list[tuple[str, int, str]]:
    """(commit, time, status of the path) for every commit up to ``rev`` (None: HEAD,
    which moves, so that log is not kept) that touched the path, renames as a
    deletion and an addition."""
    key = (str(root), rev or "", path)
    log = _PATH_LOG.get(key) if rev is not None else None
    if log is None:
        proc = try_git(
            root,
            ["log", "--format=>%H %ct", "--name-status", "--no-renames", rev or "HEAD", "--", path],
        )
        log = []
        if proc is not None and proc.returncode == 0:
            sha, when = "", 0
            for row in proc.stdout.decode("utf-8", "replace").splitlines():
                if row.startswith(">"):
                    sha, _, ct = row[1:].partition(" ")
                    when = int(ct) if ct.isdigit() else 0
                elif row and sha:
                    log.append((sha, when, row[:1]))
        if rev is not None:
            _PATH_LOG[key] = log
    return log


def _touched(root: Path, commit: str) -> dict[str, tuple[str, str | None]]:
    """Path before ``commit`` -> (status letter, its path after: None when deleted)
    for what the commit changed, renames as git's rename detection sees them."""
    got = _TOUCHED.get((str(root), commit))
    if got is None:
        got = _touched_many(root, [commit]).get(commit, {})
    return got


def _touched_many(root: Path, commits: list[str]) -> dict[str, dict[str, tuple[str, str | None]]]:
    """``_touched`` of several commits, from one ``git diff-tree --stdin`` for those
    not known yet (each commit's output starts with its id)."""
    out = {c: _TOUCHED[(str(root), c)] for c in commits if (str(root), c) in _TOUCHED}
    wanted = [c for c in dict.fromkeys(commits) if c not in out]
    if not wanted:
        return out
    proc = try_git(
        root,
        ["diff-tree", "--stdin", "-r", "--root", "-M", "--name-status", "-z"],
        input="".join(c + "\n" for c in wanted).encode(),
    )
    found: dict[str, dict[str, tuple[str, str | None]]] = {c: {} for c in wanted}
    if proc is not None and proc.returncode == 0:
        fields = [f.decode("utf-8", "surrogateescape") for f in proc.stdout.split(b"\0")]
        current: dict[str, tuple[str, str | None]] | None = None
        k = 0
        while k < len(fields):
            field = fields[k].strip("\n")
            if field in found:
                current = found[field]
                k += 1
                continue
            status = field[:1]
            if current is None or not status or k + 1 >= len(fields):
                k += 1
                continue
            if status in ("R", "C") and k + 2 < len(fields):
                current[fields[k + 1]] = (status, fields[k + 2])
                k += 3
                continue
            current[fields[k + 1]] = (status, None if status == "D" else fields[k + 1])
            k += 2
        for c, got in found.items():
            _TOUCHED[(str(root), c)] = got
    out.update(found)
    return out


# commits never change: what each touched, and a path's log up to one
_TOUCHED: dict[tuple[str, str], dict[str, tuple[str, str | None]]] = {}
_PATH_LOG: dict[tuple[str, str, str], list[tuple[str, int, str]]] = {}


def _written_elsewhere(
    conn: sqlite3.Connection, root: str, skip: set[int], fps: set[int]
) -> tuple[dict[int, set[int]], dict[int, str]]:
    """Which of ``fps`` some session wrote to another file under ``root``: fp -> path
    ids, and those paths relative to ``root``."""
    found: dict[int, set[int]] = {}
    names: dict[int, str] = {}
    for pid, path in Q.paths_under(conn, root):
        if pid in skip:
            continue
        names[pid] = path[len(root) + 1 :]
        for fp in Q.fingerprints_written(conn, pid, fps):
            found.setdefault(fp, set()).add(pid)
    return found, names


def _paths_git_lacks(root: Path, commit: str | None, names: dict[int, str]) -> set[int]:
    """Of these paths (relative to ``root``), those no commit up to ``commit`` (HEAD
    for the working tree) ever had: written by a session, renamed before git saw it."""
    rel = {path: pid for pid, path in names.items()}
    if not rel:
        return set()
    key = (str(root), commit or "HEAD", frozenset(rel))
    gone = _LACKS.get(key)
    if gone is None:
        proc = run_git(
            root,
            ["log", "--format=", "--name-only", "-z", "--no-renames", commit or "HEAD", "--", *rel],
            check=False,
        )
        if proc.returncode != 0:
            return set()
        had = {p.decode("utf-8", "surrogateescape").strip("\n") for p in proc.stdout.split(b"\0")}
        gone = frozenset(path for path in rel if path not in had)
        if commit is not None:  # HEAD moves; a commit's history does not
            _LACKS[key] = gone
    return {rel[path] for path in gone}


# (root, commit, paths) -> the paths no commit up to it had: ``deja stats`` asks
# the same of every file of a tree
_LACKS: dict[tuple[str, str, frozenset[str]], frozenset[str]] = {}


def overlay(
    conn: sqlite3.Connection | None, head: FileBlame, work_data: bytes, root: str, relpath: str
) -> FileBlame:
    """The working file: HEAD's attribution for the lines it kept, the matcher for
    the uncommitted lines only (with their neighbours as context)."""
    work_texts = FileVersion(relpath, None, work_data).lines()
    head_texts = [ln.text for ln in head.lines]
    mapping = cache.git_changed_lines(root, relpath, len(work_texts))
    if mapping is None or any(
        m is not None and (m >= len(head_texts) or head_texts[m] != work_texts[i])
        for i, m in enumerate(mapping)
    ):
        mapping = cache.changed_lines(head_texts, work_texts)
    lines: list[LineAttribution] = []
    for i, src in enumerate(mapping):
        if src is None:
            lines.append(
                LineAttribution(
                    line=i + 1, text=work_texts[i], commit=None, orig_path=relpath, orig_line=i + 1
                )
            )
        else:
            old = head.lines[src]
            lines.append(
                LineAttribution(
                    line=i + 1,
                    text=work_texts[i],
                    commit=old.commit,
                    session=old.session,
                    source=old.source,
                    confidence=old.confidence,
                    written_at=old.written_at,
                    commit_time=old.commit_time,
                    orig_path=old.orig_path,
                    orig_line=old.orig_line,
                    edit_ord=old.edit_ord,
                    via=old.via,
                )
            )
    result = FileBlame(
        path=relpath, rev=None, root=root, lines=lines, note_sessions=dict(head.note_sessions)
    )
    new = [i for i, m in enumerate(mapping) if m is None]
    if conn is None or not new:
        return result
    # windows around the uncommitted blocks, merged where they overlap
    windows: list[list[int]] = []
    for i in new:
        a, b = max(0, i - WINDOW_CONTEXT), min(len(lines), i + WINDOW_CONTEXT + 1)
        if windows and a <= windows[-1][1]:
            windows[-1][1] = b
        else:
            windows.append([a, b])
    for a, b in windows:
        part = lines[a:b]
        by_line: list[BlameLine | None] = [
            BlameLine(
                ln.line, ln.commit, ln.commit_time, ln.orig_path or relpath, ln.orig_line or ln.line
            )
            for ln in part
        ]
        fps = {fingerprint(ln.text) for ln in part}
        relpaths = {relpath} | {ln.orig_path for ln in part if ln.orig_path}
        paths = candidate_paths(conn, root, relpaths)
        writes = load_writes(conn, paths, fps)
        fresh = [ln.commit is None for ln in part]
        _attribute_from_index(conn, part, by_line, writes, paths, None, root, None, only=fresh)
    return result


def _attribute_from_index(
    conn: sqlite3.Connection,
    lines: list[LineAttribution],
    by_line: list[BlameLine | None],
    writes: WriteSet,
    paths: dict[int, bool],
    rev_time: float | None,
    root: str,
    rev: str | None,
    only: list[bool] | None = None,
) -> None:
    """Match ``lines`` (of the file at ``rev``, None: the working tree) against the
    index; writes after the blamed revision cannot be in it (``rev_time``; the
    working tree: now), nor writes older than their line's commit window
    (``window.py``). ``only`` marks the lines to set."""
    if not writes:
        return
    path_ids = sorted(paths)
    exact_ids = [pid for pid, exact in paths.items() if exact]

    def final_fps(sid: int) -> set[int]:
        return session_final_fingerprints(conn, sid, path_ids)

    def has_exact(sid: int) -> bool:
        return session_edited_paths(conn, sid, exact_ids)

    added: dict[tuple[int, int], list[str]] = {}

    def written_text(key: tuple[int, int, int]) -> str | None:
        edit = (key[0], key[1])
        if edit not in added:
            added[edit] = Q.edit_added_lines(conn, *edit)
        lines = added[edit]
        return lines[key[2]] if 0 <= key[2] < len(lines) else None

    places: dict[tuple[int, int], list[int | None]] = {}

    def position(key: tuple[int, int, int]) -> int | None:
        edit = (key[0], key[1])
        if edit not in places:
            places[edit] = Q.edit_positions(conn, *edit)
        got = places[edit]
        return got[key[2]] if 0 <= key[2] < len(got) else None

    def same_project(sid: int) -> bool | None:
        project = Q.session_project(conn, sid)
        if project is None:
            return None
        known = same_repository(root, project)
        if known is not None:
            return known
        return session_work_is_here(conn, sid, project, Path(root))

    texts = [ln.text for ln in lines]
    history = FileHistory(root, {ln.orig_path or "" for ln in lines}, rev)
    try:
        window = CommitWindow(
            history, by_line, texts, [fingerprint(t) for t in texts], [is_trivial(t) for t in texts]
        )
        matches = match_lines(
            texts,
            by_line,
            writes,
            now=rev_time,
            final_fps=final_fps,
            has_exact=has_exact,
            stale=window.stale,
            fresh=window.fresh,
            same_project=same_project,
            written_text=written_text,
            position=position,
        )
        matches = reflow_matches(
            conn,
            texts,
            by_line,
            matches,
            paths,
            time.time() if rev_time is None else rev_time,
            window.existed,
        )
    finally:
        history.close()
    names = Q.session_names(conn, {m.sid for m in matches if m is not None})
    when: dict[float, str] = {}
    for k, (ln, m) in enumerate(zip(lines, matches)):
        if m is None or ln.via == "note" or (only is not None and not only[k]):
            continue  # the commit's note wins over the index
        ln.session, ln.source = names.get(m.sid, (None, None))
        ln.confidence = m.confidence
        if m.at not in when:
            when[m.at] = format_time_epoch(m.at)
        ln.written_at = when[m.at]
        ln.edit_ord = m.edit_ord
        ln.via = "index"


def session_final_fingerprints(conn: sqlite3.Connection, sid: int, path_ids: list[int]) -> set[int]:
    """Fingerprints of the lines a session left in a file: what it wrote, minus what
    it replaced itself afterwards (a write_to_file starts the file afresh)."""
    current: set[int] = set()
    for tool, removed, added in Q.agent_edits_of_paths(conn, sid, path_ids):
        _replay(current, tool, removed, added, trivial_too=True)
    return current


def _replay(
    current: set[int], tool: str, removed: bytes | str, added: bytes | str, trivial_too: bool
) -> None:
    """Apply one of a session's edits of a file to the fingerprints it left there:
    what it added, minus what it removed itself (a write_to_file starts afresh)."""
    new = {fingerprint(x) for x in load_json(added) if trivial_too or not is_trivial(x)}
    if tool == "write_to_file":
        current.clear()
    current -= {fingerprint(x) for x in load_json(removed)} - new
    current |= new


def session_work_is_here(conn: sqlite3.Connection, sid: int, project: str, root: Path) -> bool:
    """Whether most of what a session left in the files of its project is in the same
    files here (3 distinct lines at least): work pulled from another clone is here
    whole, a helper an unrelated project happens to share is not."""
    from deja_blame.attribution.matcher import STRANGER_MIN_LINES, SUFFIX_COVERAGE

    prefix = project.rstrip("/") + "/"
    final: dict[str, set[int]] = {}
    for path, tool, removed, added in Q.agent_edits(conn, sid):
        if not path.startswith(prefix):
            continue
        _replay(final.setdefault(path[len(prefix) :], set()), tool, removed, added, False)
    present = total = 0
    for rel, fps in final.items():
        total += len(fps)
        try:
            here = read_worktree_bytes(root, rel).decode("utf-8", "replace")
        except (DejaError, OSError):
            continue
        present += len(fps & {fingerprint(t) for t in here.split("\n")})
    return total >= STRANGER_MIN_LINES and present >= SUFFIX_COVERAGE * total


def session_edited_paths(conn: sqlite3.Connection, sid: int, path_ids: list[int]) -> bool:
    """Whether the session edited any of these paths (a timed edit, as the lines table has)."""
    return Q.edited_any_path(conn, sid, path_ids)


def format_time_epoch(epoch: float) -> str:
    from deja_blame.transcripts.text import format_time

    return format_time(datetime.fromtimestamp(epoch, tz=timezone.utc))


def _fill_sessions(conn: sqlite3.Connection | None, result: FileBlame) -> None:
    for name in sorted({ln.session for ln in result.lines if ln.session}):
        row = Q.session_by_id(conn, name) if conn is not None else None
        if row is not None:
            result.sessions[name] = SessionInfo(
                name, row.source, row.project, row.started_at, row.first_prompt, row.model
            )
            continue
        noted = result.note_sessions.get(name) or {}
        result.sessions[name] = SessionInfo(
            name,
            _text(noted.get("agent")) or "antigravity",
            _text(noted.get("project")) or "-",
            _text(noted.get("started_at")),
            _text(noted.get("first_prompt")),
            _text(noted.get("model")),
        )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def cached_blame(
    conn: sqlite3.Connection,
    file: Path,
    rev: str | None,
    line_range: tuple[int, int] | None,
) -> FileBlame | None:
    """The answer from the attribution cache alone, through the ``git`` program:
    no pygit2, no git blame. None when anything is missing (the caller computes)."""
    if not cache.fast_path_enabled():
        return None
    start = file.parent if not file.is_dir() else file
    if not start.is_dir():
        return None
    state = cache.repo_state(start)
    if state is None:
        return None
    try:
        rel = relative_to_root(Path(state.root), file)
    except DejaError:
        return None  # outside the repository: the slow path says so
    commit = state.head if rev is None else cache.resolve_rev_cli(state.root, rev)
    if commit is None:
        return None
    entry = cache.load(
        conn, cache.entry_key(state.root, commit, rel, "auto"), state.notes, state.root
    )
    if entry is None:
        return None
    result = from_entry(entry, rel, commit if rev is not None else None, state.root)
    if rev is None:
        try:
            data = read_worktree_bytes(Path(state.root), rel)
        except DejaError:
            return None
        if b"\0" in data[:8000]:
            return None
        if cache.content_hash(data) != entry.data_hash:
            result = overlay(conn, result, data, state.root, rel)
    return _finish(conn, result, line_range)


# -- the blame cache ------------------------------------------------------------------


def _cache_key(repo: pygit2.Repository, version: FileVersion) -> str:
    # the repository is part of the key: a shallow clone's blame of a commit (its
    # boundary) is not the full clone's
    root = workdir(repo)
    options = blame_options.current().signature()
    if version.commit is not None:
        return f"rev:{root}:{version.commit}:{version.relpath}{options}"
    head = head_commit(repo)
    digest = hashlib.blake2b(version.data, digest_size=16).hexdigest()
    return f"wt:{root}:{head.id if head else '-'}:{version.relpath}:{digest}{options}"


def _start_blame_cached(
    conn: sqlite3.Connection | None,
    root: Path,
    repo: pygit2.Repository,
    version: FileVersion,
    engine: str,
) -> Callable[[], list[BlameLine]]:
    """The blame of ``version``: from the cache, or started now and cached when done."""
    key = _cache_key(repo, version) + f":{engine}"
    if conn is not None:
        row = Q.cache_get(conn, "blame_cache", key)
        if row is not None:
            try:
                cached = [BlameLine(*item) for item in orjson.loads(zlib.decompress(row[0]))]
                return lambda: cached
            except (zlib.error, orjson.JSONDecodeError, TypeError):
                pass  # a damaged entry: blame again
    pending = start_blame(root, repo, version.relpath, version.commit, engine=engine)

    def finish() -> list[BlameLine]:
        lines = pending.result()
        if conn is not None:
            _store(conn, key, lines)
        return lines

    return finish


def _store(conn: sqlite3.Connection, key: str, lines: list[BlameLine]) -> None:
    data = zlib.compress(
        orjson.dumps([[b.line, b.commit, b.commit_time, b.orig_path, b.orig_line] for b in lines]),
        1,
    )
    try:
        Q.cache_put(conn, "blame_cache", key, data, CACHE_ENTRIES)
    except sqlite3.OperationalError:
        pass  # a busy or read-only index only costs the cache
