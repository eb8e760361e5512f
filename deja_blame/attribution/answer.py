"""A file's answer from the attribution cache, and the finishing of any answer.

Kept apart from ``blame.py`` (git blame and the matcher): a command whose answer
is cached imports this module and the cache, not the matcher, the move rules
or the commit-window rules (``deja blame``'s and the editor's warm path).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from deja_blame.attribution import cache
from deja_blame.attribution.model import FileBlame, SessionInfo
from deja_blame.errors import DejaError
from deja_blame.gitutil import read_worktree_bytes, relative_to_root
from deja_blame.index import queries as Q
from deja_blame.models import UNKNOWN_AGENT


def cached_blame(
    conn: sqlite3.Connection,
    file: Path,
    rev: str | None,
    line_range: tuple[int, int] | None,
    on_miss: Callable[[str, str, str], None] | None = None,
    on_state: Callable[[cache.RepoState], None] | None = None,
) -> FileBlame | None:
    """The answer from the attribution cache alone, through the ``git`` program:
    no pygit2, no git blame. None when anything is missing (the caller computes);
    ``on_miss(root, commit, relpath)`` is told when the whole file's answer at a
    commit is not cached (the caller may start git blame of it at once);
    ``on_state`` the repository's state read (its root and HEAD: stage 1 needs them)."""
    if not cache.fast_path_enabled() or not cache.cacheable():
        return None
    start = file.parent if not file.is_dir() else file
    if not start.is_dir():
        return None
    state = _repo_state(start)
    if state is None:
        return None
    if on_state is not None:
        on_state(state)
    try:
        rel = relative_to_root(Path(state.root), file)
    except DejaError:
        return None  # outside the repository: the slow path says so
    commit = state.head if rev is None else cache.resolve_rev_cli(state.root, rev)
    if commit is None:
        return None
    # what deja blame's own compute reads: deja's notes wherever they exist
    key = cache.entry_key(state.root, commit, rel, "auto", "notes" if state.deja_notes else "")
    entry = cache.load(conn, key, state.notes, state.root) if key is not None else None
    if entry is None or key is None:
        if on_miss is not None and line_range is None:
            on_miss(state.root, commit, rel)
        return None
    changed: bytes | None = None  # the working file, where it is not the commit's
    if rev is None:
        try:
            data = read_worktree_bytes(Path(state.root), rel)
        except DejaError:
            return None
        if b"\0" in data[:8000]:
            return None
        if cache.content_hash(data) != entry.data_hash:
            changed = data
    # a line range of the commit's own text: only its lines are made (``deja why``)
    result = from_entry(
        entry,
        rel,
        commit if rev is not None else None,
        state.root,
        line_range if changed is None else None,
    )
    result.cache_key = key
    if changed is not None:
        from deja_blame.attribution.worktree import overlay

        result = overlay(conn, result, changed, state.root, rel)
    return finish_answer(conn, result, line_range)


def _repo_state(start: Path) -> cache.RepoState | None:
    """``cache.repo_state``: once per question about many files (``facts/shared.py``:
    a stats run asked git twice a file for the same HEAD and notes)."""
    from deja_blame.attribution.facts import shared

    root = shared.question_about(start)
    if root is None:
        return cache.repo_state(start)
    return shared.remembered(root, "repo state", lambda: cache.repo_state(Path(root)))


def from_entry(
    entry: cache.Entry,
    relpath: str,
    rev: str | None,
    root: str,
    line_range: tuple[int, int] | None = None,
) -> FileBlame:
    """The cached answer; with ``line_range``, only those lines (the file's length kept)."""
    return FileBlame(
        path=relpath,
        rev=rev,
        root=root,
        lines=cache.entry_lines(entry, line_range),
        note_sessions=dict(entry.note_sessions),
        authors=_authors(entry.authors),
        total_lines=len(entry.lines) if line_range is not None else None,
    )


def _authors(kept: dict[str, list[Any]] | None) -> dict[str, tuple[str, str, int]] | None:
    """The authors an entry kept, if every one is well formed (else: ask git)."""
    if kept is None:
        return None
    out: dict[str, tuple[str, str, int]] = {}
    for commit, row in kept.items():
        if not (
            isinstance(row, list)
            and len(row) == 3
            and isinstance(row[0], str)
            and isinstance(row[1], str)
            and isinstance(row[2], int)
        ):
            return None
        out[commit] = (row[0], row[1], row[2])
    return out


def finish_answer(
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


def _fill_sessions(conn: sqlite3.Connection | None, result: FileBlame) -> None:
    names = sorted({ln.session for ln in result.lines if ln.session})
    rows = Q.sessions_by_ids(conn, names) if conn is not None and names else {}
    for name in names:
        row = rows.get(name)
        if row is not None:
            result.sessions[name] = SessionInfo(
                name, row.source, row.project, row.started_at, row.first_prompt, row.model
            )
            continue
        noted = result.note_sessions.get(name) or {}
        result.sessions[name] = SessionInfo(
            name,
            text_or_none(noted.get("agent")) or UNKNOWN_AGENT,
            text_or_none(noted.get("project")) or "-",
            text_or_none(noted.get("started_at")),
            text_or_none(noted.get("first_prompt")),
            text_or_none(noted.get("model")),
        )


def text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
