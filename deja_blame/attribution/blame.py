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
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import orjson

from deja_blame.attribution import blame_options, cache
from deja_blame.attribution.answer import (
    finish_answer,
    format_time_epoch,
    from_entry,
    text_or_none,
)
from deja_blame.attribution.blame_engine import BlameLine, drop_early, start_blame
from deja_blame.attribution.identity import RepositoryIdentity
from deja_blame.attribution.matcher import (
    Key,
    WriteSet,
    load_writes,
    match_lines,
)
from deja_blame.attribution.model import FileBlame, LineAttribution, NoteLookup
from deja_blame.attribution.moves import follow_moves
from deja_blame.attribution.reflow import reflow_matches
from deja_blame.attribution.window import CommitWindow, FileHistory
from deja_blame.errors import BinaryFileError, DejaError
from deja_blame.gitutil import (
    FileVersion,
    head_commit,
    read_file,
    workdir,
)
from deja_blame.index import queries as Q
from deja_blame.index.fingerprint import fingerprint, is_trivial
from deja_blame.models import UNKNOWN_AGENT

if TYPE_CHECKING:
    import pygit2

CACHE_ENTRIES = 2000
T = TypeVar("T")

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
        return finish_answer(conn, result, line_range)
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
        return finish_answer(conn, result, line_range)
    if at_head.data == work.data:
        result = _at_commit(
            repo, conn, at_head, line_range, note_lookup, engine, before_match, rev=None
        )
        return finish_answer(conn, result, line_range)
    head_result = _at_commit(repo, conn, at_head, None, note_lookup, engine, before_match, rev=None)
    result = overlay(conn, head_result, work.data, str(root), relpath)
    return finish_answer(conn, result, line_range)


def _refuse_binary(version: FileVersion) -> None:
    if version.is_binary:
        raise BinaryFileError(f"{version.relpath} is a binary file: nothing to blame")


def _notes_tip(repo: pygit2.Repository) -> str:
    """The notes an answer depends on: deja's, and git-ai's where there are some
    (as ``cache.notes_tips_cli`` spells it: the tips, one a line)."""
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
    caller filters to the range (``finish_answer``).
    """
    assert version.commit is not None
    root = str(workdir(repo))
    if conn is None:
        result = _compute(repo, conn, version, note_lookup, engine, before_match, None)
        result.rev = rev
        return result
    notes = _notes_tip(repo)
    key = cache.entry_key(
        root, version.commit, version.relpath, engine, cache.notes_read_by(note_lookup)
    )
    use_cache = cache.cacheable()
    # DEJA_NO_CACHE: computed afresh (and still written)
    entry = cache.load(conn, key, notes, root) if use_cache and cache.fast_path_enabled() else None
    if entry is not None and entry.data_hash == cache.content_hash(version.data):
        return from_entry(entry, version.relpath, rev, root)
    if line_range is not None:
        # one line or a few: blame and match only around them; nothing cached
        result = _compute(repo, conn, version, note_lookup, engine, before_match, line_range)
        result.rev = rev
        return result
    result = _compute(repo, conn, version, note_lookup, engine, before_match, None)
    if use_cache:
        entry = cache.entry_from(result, version.commit, version.data, version.relpath)
        cache.store(conn, key, entry, notes, root)
    result.rev = rev
    return result


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
    solid = {fingerprint(t) for t in part if not is_trivial(t)}
    if conn is not None:
        paths = Q.candidate_paths(conn, str(root), {relpath})
        load_writes(conn, paths, file_fps, into=writes, solid=solid)
    # only a file some session wrote to asks the rules anything (deja stats blames
    # hundreds that none did: a log each would be git's work for nothing)
    early = _read_ahead(conn, root, version) if writes else None
    try:
        blamed = pending()
    finally:
        if early is not None:
            early.join()  # its git answers land in caches the rules read next
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
                ln.source = text_or_none(noted.get("agent")) or UNKNOWN_AGENT
    if conn is not None:
        # the file's log under every name blame followed, read while the notes, the
        # renamed paths' writes and the identity rules are looked at
        names = {ln.orig_path or "" for ln in lines}
        log_ahead = _read_log_ahead(root, version.commit, names) if writes else None
        # Renamed files: their older lines were written under the old path.
        older = {b.orig_path for b in by_line if b is not None and b.orig_path} - {relpath}
        if older:
            more = {
                k: v for k, v in Q.candidate_paths(conn, str(root), older).items() if k not in paths
            }
            load_writes(conn, more, file_fps, into=writes, solid=solid)
            paths.update(more)
        rev_time = None
        if version.commit is not None:
            rev_time = float(repo[version.commit].commit_time)  # type: ignore[attr-defined]
        if log_ahead is not None:
            log_ahead.join()
        _attribute_from_index(
            conn, lines, by_line, writes, paths, rev_time, str(root), version.commit
        )
        follow_moves(
            conn, root, version, lines, by_line, writes, paths, rev_time, _attribute_from_index
        )
    _from_git_ai(repo, lines, result)
    return result


def _read_ahead(
    conn: sqlite3.Connection | None, root: Path, version: FileVersion
) -> threading.Thread | None:
    """Ask git, while git blame runs, what the rules will ask after it: the file's
    log (``window.FileHistory``) and the repository's files (``moves``). (A file
    renamed in its history asks a log of all its names later: ``_read_log_ahead``.)"""
    if conn is None:
        return None
    from deja_blame.attribution.identity import read_repository_files
    from deja_blame.attribution.moves import revisions_asked
    from deja_blame.attribution.repo_history import repo_history

    def work() -> None:
        repo_history(root).log(version.commit or "HEAD", {version.relpath})
        read_repository_files(root, revisions_asked(version.commit))

    return _in_background("deja-read-ahead", work)


def _read_log_ahead(root: Path, rev: str | None, names: set[str]) -> threading.Thread:
    """Read the log ``window.FileHistory`` asks next (its paths: the names blame
    followed) while the notes and the renamed paths' writes are looked at."""
    from deja_blame.attribution.repo_history import repo_history

    paths = {p for p in names if p}
    return _in_background("deja-read-log", lambda: repo_history(root).log(rev or "HEAD", paths))


def _in_background(name: str, work: Callable[[], object]) -> threading.Thread:
    """Run ``work`` on a thread whose answers land in the process's caches; the caller
    joins it before the rules that read them. A failure is the rules' to meet again
    and to say (they ask the same of git), not this thread's."""

    def run() -> None:
        try:
            work()
        except Exception:  # noqa: BLE001 - see above
            pass

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


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
        solid = {fingerprint(ln.text) for ln in part if not is_trivial(ln.text)}
        relpaths = {relpath} | {ln.orig_path for ln in part if ln.orig_path}
        paths = Q.candidate_paths(conn, root, relpaths)
        writes = load_writes(conn, paths, fps, solid=solid)
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

    # a write's exact text, and where it landed: read once per edit
    written_text = _per_write(partial(Q.edit_added_lines, conn))
    position = _per_write(partial(Q.edit_positions, conn))

    # which sessions matched by path suffix worked on this repository (identity.py)
    same_project = RepositoryIdentity(conn, root).belongs

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


def _per_write(load: Callable[[int, int], Sequence[T]]) -> Callable[[Key], T | None]:
    """``load(sid, edit)`` gives a value per line the edit added: the value of one
    write (sid, edit, index), each edit loaded once."""
    loaded: dict[tuple[int, int], Sequence[T]] = {}

    def get(key: Key) -> T | None:
        edit = (key[0], key[1])
        got = loaded.get(edit)
        if got is None:
            got = loaded[edit] = load(*edit)
        return got[key[2]] if 0 <= key[2] < len(got) else None

    return get


def session_final_fingerprints(conn: sqlite3.Connection, sid: int, path_ids: list[int]) -> set[int]:
    """Fingerprints of the lines a session left in a file: what it wrote, minus what
    it replaced itself afterwards (a write_to_file starts the file afresh)."""
    current: set[int] = set()
    for tool, removed, added in Q.agent_edits_of_paths(conn, sid, path_ids):
        _replay(current, tool, removed, added, trivial_too=True)
    return current


def _replay(
    current: set[int], tool: str, removed: list[str], added: list[str], trivial_too: bool
) -> None:
    """Apply one of a session's edits of a file to the fingerprints it left there:
    what it added, minus what it removed itself (a write_to_file starts afresh)."""
    new = {fingerprint(x) for x in added if trivial_too or not is_trivial(x)}
    if tool == "write_to_file":
        current.clear()
    current -= {fingerprint(x) for x in removed} - new
    current |= new


def session_edited_paths(conn: sqlite3.Connection, sid: int, path_ids: list[int]) -> bool:
    """Whether the session edited any of these paths (a timed edit, as the lines table has)."""
    return Q.edited_any_path(conn, sid, path_ids)


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
    use_cache = conn is not None and cache.cacheable()
    if use_cache and cache.fast_path_enabled():
        assert conn is not None
        row = Q.cache_get(conn, "blame_cache", key)
        if row is not None:
            try:
                cached = [BlameLine(*item) for item in orjson.loads(zlib.decompress(row[0]))]
                if version.commit is not None:
                    drop_early(root, version.commit, version.relpath)
                return lambda: cached
            except (zlib.error, orjson.JSONDecodeError, TypeError):
                pass  # a damaged entry: blame again
    pending = start_blame(root, repo, version.relpath, version.commit, engine=engine)

    def finish() -> list[BlameLine]:
        lines = pending.result()
        if use_cache and conn is not None:
            _store(conn, key, lines)
        return lines

    return finish


def _store(conn: sqlite3.Connection, key: str, lines: list[BlameLine]) -> None:
    try:
        rows = orjson.dumps(
            [[b.line, b.commit, b.commit_time, b.orig_path, b.orig_line] for b in lines]
        )
    except TypeError:
        return  # a file name that is not UTF-8 (pathtext): not cached, blamed each time
    data = zlib.compress(rows, 1)
    try:
        Q.cache_put(conn, "blame_cache", key, data, CACHE_ENTRIES)
    except sqlite3.OperationalError:
        pass  # a busy or read-only index only costs the cache
