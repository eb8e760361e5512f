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
from pathlib import Path
from typing import Any

import orjson
import pygit2

from deja_blame.attribution.blame_engine import BlameLine, start_blame
from deja_blame.attribution.matcher import WriteSet, candidate_paths, load_writes, match_lines
from deja_blame.errors import DejaError
from deja_blame.gitutil import FileVersion, head_commit, read_file, workdir
from deja_blame.index.fingerprint import fingerprint
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
    before_match: Callable[[], None] | None = None,
) -> FileBlame:
    """Attribute every line of ``relpath`` at ``rev`` (None: the working tree).

    ``before_match`` runs while git blame works in the background (deja blame
    reads new transcript lines into the index there).
    """
    root = workdir(repo)
    version = read_file(repo, relpath, rev)
    if version.is_binary:
        raise DejaError(f"{relpath} is a binary file: nothing to blame")
    texts = version.lines()
    pending = _start_blame_cached(conn, root, repo, version, engine)
    if before_match is not None:
        before_match()
    paths: dict[int, bool] = {}
    writes = WriteSet()
    file_fps = {fingerprint(t) for t in texts}
    if conn is not None:
        paths = candidate_paths(conn, str(root), {relpath})
        load_writes(conn, paths, file_fps, into=writes)
    blamed = pending()
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
        # Renamed files: their older lines were written under the old path.
        older = {b.orig_path for b in by_line if b is not None and b.orig_path} - {relpath}
        if older:
            more = {
                k: v for k, v in candidate_paths(conn, str(root), older).items() if k not in paths
            }
            load_writes(conn, more, file_fps, into=writes, rank=1)
            paths.update(more)
        _attribute_from_index(repo, conn, result, by_line, writes, paths)
    if line_range is not None:
        start, end = line_range
        result.lines = [ln for ln in result.lines if start <= ln.line <= end]
    _fill_sessions(conn, result)
    return result


def _attribute_from_index(
    repo: pygit2.Repository,
    conn: sqlite3.Connection,
    result: FileBlame,
    by_line: list[BlameLine | None],
    writes: WriteSet,
    paths: dict[int, bool],
) -> None:
    if not writes:
        return
    # Writes after the blamed revision cannot be in it (the working tree: now).
    rev_time = None
    if result.rev is not None:
        rev_commit = repo[result.rev]
        if isinstance(rev_commit, pygit2.Commit):
            rev_time = float(rev_commit.commit_time)

    path_ids = sorted(paths)
    exact_ids = [pid for pid, exact in paths.items() if exact]

    def final_fps(sid: int) -> set[int]:
        return session_final_fingerprints(conn, sid, path_ids)

    def has_exact(sid: int) -> bool:
        return session_edited_paths(conn, sid, exact_ids)

    matches = match_lines(
        [ln.text for ln in result.lines],
        by_line,
        writes,
        now=rev_time,
        final_fps=final_fps,
        has_exact=has_exact,
    )
    names = _session_ids(conn, {m.sid for m in matches if m is not None})
    when: dict[float, str] = {}
    for ln, m in zip(result.lines, matches):
        if m is None or ln.via == "note":
            continue  # the commit's note wins over the index
        ln.session = names.get(m.sid)
        ln.source = "antigravity"
        ln.confidence = m.confidence
        if m.at not in when:
            when[m.at] = format_time_epoch(m.at)
        ln.written_at = when[m.at]
        ln.edit_ord = m.edit_ord
        ln.via = "index"


def session_final_fingerprints(conn: sqlite3.Connection, sid: int, path_ids: list[int]) -> set[int]:
    """Fingerprints of the lines a session left in a file: what it wrote, minus what
    it replaced itself afterwards (a write_to_file starts the file afresh)."""
    if not path_ids:
        return set()
    marks = ",".join("?" * len(path_ids))
    current: set[int] = set()
    for tool, removed, added in conn.execute(
        f"SELECT e.tool, e.removed, e.added FROM edits e JOIN paths p ON p.path = e.path"
        f" WHERE e.sid=? AND e.source='agent' AND p.path_id IN ({marks}) ORDER BY e.step, e.ord",
        [sid, *path_ids],
    ):
        new = {fingerprint(x) for x in orjson.loads(added)}
        if tool == "write_to_file":
            current = set()
        current -= {fingerprint(x) for x in orjson.loads(removed)} - new
        current |= new
    return current


def session_edited_paths(conn: sqlite3.Connection, sid: int, path_ids: list[int]) -> bool:
    """Whether the session edited any of these paths (a timed edit, as the lines table has)."""
    if not path_ids:
        return False
    marks = ",".join("?" * len(path_ids))
    row = conn.execute(
        f"SELECT 1 FROM edits e JOIN paths p ON p.path = e.path"
        f" WHERE e.sid=? AND e.at_epoch IS NOT NULL AND p.path_id IN ({marks}) LIMIT 1",
        [sid, *path_ids],
    ).fetchone()
    return row is not None


def format_time_epoch(epoch: float) -> str:
    return format_time(datetime.fromtimestamp(epoch, tz=timezone.utc))


def _session_ids(conn: sqlite3.Connection, sids: set[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    ids = list(sids)
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        for sid, name in conn.execute(
            f"SELECT sid, session_id FROM sessions WHERE sid IN ({marks})", part
        ):
            out[int(sid)] = name
    return out


def _fill_sessions(conn: sqlite3.Connection | None, result: FileBlame) -> None:
    for name in sorted({ln.session for ln in result.lines if ln.session}):
        row = None
        if conn is not None:
            row = conn.execute(
                "SELECT source, project, started_at, first_prompt FROM sessions WHERE session_id=?",
                (name,),
            ).fetchone()
        if row:
            result.sessions[name] = SessionInfo(name, row[0], row[1], row[2], row[3])
        else:
            result.sessions[name] = SessionInfo(name, "antigravity", "-", None, None)


# -- the blame cache ------------------------------------------------------------------


def _cache_key(repo: pygit2.Repository, version: FileVersion) -> str:
    if version.commit is not None:
        return f"rev:{version.commit}:{version.relpath}"
    head = head_commit(repo)
    digest = hashlib.blake2b(version.data, digest_size=16).hexdigest()
    return f"wt:{head.id if head else '-'}:{version.relpath}:{digest}"


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
        row = conn.execute("SELECT data FROM blame_cache WHERE key=?", (key,)).fetchone()
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
