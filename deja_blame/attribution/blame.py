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
from pathlib import Path
from typing import Any

import orjson
import pygit2

from deja_blame.attribution.blame_engine import BlameLine, blame
from deja_blame.attribution.matcher import candidate_paths, load_writes, match_lines
from deja_blame.errors import DejaError
from deja_blame.gitutil import FileVersion, head_commit, read_file, workdir
from deja_blame.transcripts.text import format_time

CACHE_ENTRIES = 2000

# (commit sha, original path, original line) -> (session id, confidence) or None
NoteLookup = Callable[[str, str, int], "tuple[str, float] | None"]


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

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
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


def blame_file(
    repo: pygit2.Repository,
    relpath: str,
    rev: str | None,
    conn: sqlite3.Connection | None,
    line_range: tuple[int, int] | None = None,
    note_lookup: NoteLookup | None = None,
    engine: str = "auto",
) -> FileBlame:
    root = workdir(repo)
    version = read_file(repo, relpath, rev)
    if version.is_binary:
        raise DejaError(f"{relpath} is a binary file: nothing to blame")
    texts = version.lines()
    blamed = _blame_cached(conn, root, repo, version, engine)
    by_line: list[BlameLine | None] = [None] * len(texts)
    for b in blamed:
        if 1 <= b.line <= len(texts):
            by_line[b.line - 1] = b
    lines = [
        LineAttribution(
            line=i + 1,
            text=texts[i],
            commit=b.commit if b else None,
            commit_time=b.commit_time if b and b.commit else None,
            orig_path=b.orig_path if b else relpath,
            orig_line=b.orig_line if b else i + 1,
        )
        for i, b in enumerate(by_line)
    ]
    result = FileBlame(path=relpath, rev=version.commit, root=str(root), lines=lines)
    if note_lookup is not None:
        for ln in lines:
            if ln.commit is None:
                continue
            hit = note_lookup(ln.commit, ln.orig_path or relpath, ln.orig_line or ln.line)
            if hit is not None:
                ln.session, ln.confidence, ln.via = hit[0], hit[1], "note"
                ln.source = "antigravity"
    if conn is not None:
        result.indexed_sessions = int(conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0])
        _attribute_from_index(conn, result, by_line)
    if line_range is not None:
        start, end = line_range
        result.lines = [ln for ln in result.lines if start <= ln.line <= end]
    _fill_sessions(conn, result)
    return result


def _attribute_from_index(
    conn: sqlite3.Connection, result: FileBlame, by_line: list[BlameLine | None]
) -> None:
    relpaths = {result.path} | {b.orig_path for b in by_line if b is not None and b.orig_path}
    paths = candidate_paths(conn, result.root, relpaths)
    writes = load_writes(conn, paths)
    if not writes:
        return
    matches = match_lines([ln.text for ln in result.lines], by_line, writes)
    sids = {m.sid for m in matches if m is not None}
    names = _session_ids(conn, sids)
    for ln, m in zip(result.lines, matches):
        if m is None or ln.via == "note":
            continue  # the commit's note wins over the index
        ln.session = names.get(m.sid)
        ln.source = "antigravity"
        ln.confidence = m.confidence
        ln.written_at = format_time_epoch(m.at)
        ln.edit_ord = m.edit_ord
        ln.via = "index"


def format_time_epoch(epoch: float) -> str:
    from datetime import datetime, timezone

    return format_time(datetime.fromtimestamp(epoch, tz=timezone.utc))


def _session_ids(conn: sqlite3.Connection, sids: set[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for sid in sids:
        row = conn.execute("SELECT session_id FROM sessions WHERE sid=?", (sid,)).fetchone()
        if row:
            out[sid] = row[0]
    return out


def _fill_sessions(conn: sqlite3.Connection | None, result: FileBlame) -> None:
    for ln in result.lines:
        if ln.session is None or ln.session in result.sessions:
            continue
        row = None
        if conn is not None:
            row = conn.execute(
                "SELECT source, project, started_at, first_prompt FROM sessions WHERE session_id=?",
                (ln.session,),
            ).fetchone()
        if row:
            result.sessions[ln.session] = SessionInfo(ln.session, row[0], row[1], row[2], row[3])
        else:
            result.sessions[ln.session] = SessionInfo(ln.session, "antigravity", "-", None, None)


# -- the blame cache ------------------------------------------------------------------


def _cache_key(repo: pygit2.Repository, version: FileVersion) -> str:
    if version.commit is not None:
        return f"rev:{version.commit}:{version.relpath}"
    head = head_commit(repo)
    digest = hashlib.blake2b(version.data, digest_size=16).hexdigest()
    return f"wt:{head.id if head else '-'}:{version.relpath}:{digest}"


def _blame_cached(
    conn: sqlite3.Connection | None,
    root: Path,
    repo: pygit2.Repository,
    version: FileVersion,
    engine: str,
) -> list[BlameLine]:
    key = _cache_key(repo, version) + f":{engine}"
    if conn is not None:
        row = conn.execute("SELECT data FROM blame_cache WHERE key=?", (key,)).fetchone()
        if row is not None:
            try:
                return [BlameLine(*item) for item in orjson.loads(zlib.decompress(row[0]))]
            except (zlib.error, orjson.JSONDecodeError, TypeError):
                pass  # a damaged entry: blame again
    lines = blame(root, repo, version.relpath, version.commit, engine=engine)
    if conn is not None:
        data = zlib.compress(
            orjson.dumps(
                [[b.line, b.commit, b.commit_time, b.orig_path, b.orig_line] for b in lines]
            ),
            1,
        )
        try:
            conn.execute(
                "INSERT OR REPLACE INTO blame_cache(key, data, used) VALUES (?, ?, ?)",
                (key, data, time.time()),
            )
            conn.execute(
                "DELETE FROM blame_cache WHERE key IN (SELECT key FROM blame_cache"
                " ORDER BY used DESC LIMIT -1 OFFSET ?)",
                (CACHE_ENTRIES,),
            )
        except sqlite3.OperationalError:
            pass  # a busy or read-only index only costs the cache
    return lines
