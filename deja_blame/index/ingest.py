"""Incremental indexing of every transcript under the roots.

Per transcript the index remembers where reading stopped (the byte after the
last complete line), the reader's state there, the file's stat and a hash of
the first and last bytes before that offset. A run then does, per file:

- same stat: nothing (no open, no parse);
- grown, with the same bytes before the offset: read from the stored offset
  with the stored state;
- shrunk, rewritten, or another file chosen (``transcript_full.jsonl``
  appeared): the session's rows are cleared and the file is read from the start.

Sessions are never deleted: one whose transcript is gone stays as last read.

Each batch of lines is written in one transaction together with the new offset
and state, so a killed run leaves a consistent index and the next run resumes
exactly where the last commit ended (only the last batch records the file's
stat, so an interrupted file never looks complete). Two runs at once: each
batch re-checks, under the write lock, that the offset it started from is still
the stored one; if another process moved it, this one re-reads the row and
carries on from there.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deja_blame.index.db import transaction
from deja_blame.index.source import read_hash, same_bytes
from deja_blame.index.store import PathIds, clear_session_rows, write_chunk
from deja_blame.transcripts.antigravity import ReaderState, SessionReader, artifact_dir_for
from deja_blame.transcripts.jsonl import CHUNK_BYTES, iter_batches
from deja_blame.transcripts.project import ProjectHints, resolve_project
from deja_blame.transcripts.roots import (
    COMPACT_NAME,
    FULL_NAME,
    TranscriptFile,
    find_transcripts,
)
from deja_blame.transcripts.text import epoch_of

MAX_RETRIES = 20
# mtime_ns of a row whose last commit was not the file's last batch: the next
# run (or the run still reading it) goes on from the offset
NO_STAT = -1
BULK_CHECKPOINT_PAGES = 8192  # 32 MB of WAL between checkpoints while indexing (default 1000)


@dataclass
class IndexReport:
    added: int = 0  # sessions new to the index
    updated: int = 0  # sessions that got new lines (or were re-read)
    unchanged: int = 0
    skipped_lines: int = 0  # malformed lines met in this run
    transcripts: int = 0
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "transcripts": self.transcripts,
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "skipped_lines": self.skipped_lines,
            "problems": self.problems,
        }

    def summary(self) -> str:
        text = (
            f"indexed {self.transcripts} transcripts: {self.added} sessions added,"
            f" {self.updated} updated, {self.unchanged} unchanged;"
            f" {self.skipped_lines} malformed lines skipped"
        )
        if self.problems:
            text += f"; {len(self.problems)} problems"
        return text


class _Moved(Exception):
    """Another process advanced this transcript under us: re-read its row."""


def collect_transcripts(roots: Iterable[Path], report: IndexReport) -> list[TranscriptFile]:
    found: list[TranscriptFile] = []
    seen: set[str] = set()
    for root in roots:
        for tf in find_transcripts(root, report.problems):
            if tf.session_id in seen:
                report.problems.append(
                    f"session {tf.session_id} found in more than one root; kept the first"
                )
                continue
            seen.add(tf.session_id)
            found.append(tf)
    return found


def index_roots(
    conn: sqlite3.Connection,
    roots: Iterable[Path],
    progress: Callable[[TranscriptFile], None] | None = None,
    transcripts: list[TranscriptFile] | None = None,
    batch_bytes: int = CHUNK_BYTES,
) -> IndexReport:
    """Bring the index up to date with every transcript under ``roots``."""
    report = IndexReport()
    files = transcripts if transcripts is not None else collect_transcripts(roots, report)
    paths = PathIds(conn)
    # Fewer, larger checkpoints while writing in bulk: each one costs two fsyncs.
    (checkpoint_pages,) = conn.execute("PRAGMA wal_autocheckpoint").fetchone()
    conn.execute(f"PRAGMA wal_autocheckpoint = {BULK_CHECKPOINT_PAGES}")
    try:
        # One query for every session's stat: with nothing new, a stat per file and no more.
        known = {
            row[0]: row[1:]
            for row in conn.execute(
                "SELECT session_id, transcript, size, mtime_ns, inode FROM sessions"
            )
        }
        for tf in files:
            report.transcripts += 1
            try:
                if _same_stat(tf, known.get(tf.session_id)):
                    report.unchanged += 1  # not opened, not parsed
                else:
                    index_transcript(conn, tf, report, paths, batch_bytes)
            except sqlite3.Error:
                paths.cache.clear()  # path ids of a rolled-back batch are gone
                raise
            except OSError as exc:
                report.problems.append(f"cannot read {tf.path}: {exc.strerror or exc}")
            if progress is not None:
                progress(tf)
    finally:
        with contextlib.suppress(sqlite3.Error):  # never mask the error that got us here
            conn.execute(f"PRAGMA wal_autocheckpoint = {int(checkpoint_pages)}")
    return report


def _same_stat(tf: TranscriptFile, row: tuple[Any, ...] | None) -> bool:
    """Is ``tf`` the file the index last read, with the stat it had then?

    ``row`` is (transcript, size, mtime_ns, inode) from the sessions table. A
    stale row only ever says "changed" (other runs move rows forward), and then
    the file is looked at properly.
    """
    if row is None or row[0] != str(tf.path):
        return False
    st = os.stat(tf.path)
    return row[1] == st.st_size and row[2] == st.st_mtime_ns and row[3] == st.st_ino


def _resume_state(blob: bytes | None) -> ReaderState | None:
    """The stored reader state, or None when it cannot be used (written by another version)."""
    try:
        return ReaderState.from_bytes(blob)
    except (TypeError, ValueError):  # orjson.JSONDecodeError is a ValueError
        return None


def index_transcript(
    conn: sqlite3.Connection,
    tf: TranscriptFile,
    report: IndexReport,
    paths: PathIds | None = None,
    batch_bytes: int = CHUNK_BYTES,
) -> None:
    paths = paths or PathIds(conn)
    for _ in range(MAX_RETRIES):
        try:
            _index_once(conn, tf, report, paths, batch_bytes)
            return
        except _Moved:
            paths.cache.clear()  # the other process may have interned paths meanwhile
            if _read_elsewhere(conn, tf):
                # Another run is in the middle of this file (it committed a batch
                # that is not the last): following it batch by batch would only
                # parse everything twice. It finishes the file; this run moves on.
                report.unchanged += 1
                return
    report.problems.append(f"gave up on {tf.path}: it kept changing under concurrent indexing")


def _read_elsewhere(conn: sqlite3.Connection, tf: TranscriptFile) -> bool:
    row = conn.execute(
        "SELECT mtime_ns FROM sessions WHERE session_id=?", (tf.session_id,)
    ).fetchone()
    return row is not None and row[0] == NO_STAT


def _index_once(
    conn: sqlite3.Connection,
    tf: TranscriptFile,
    report: IndexReport,
    paths: PathIds,
    batch_bytes: int,
) -> None:
    st = os.stat(tf.path)
    row = conn.execute(
        "SELECT sid, transcript, size, mtime_ns, inode, offset, head_hash, state"
        " FROM sessions WHERE session_id=?",
        (tf.session_id,),
    ).fetchone()
    path_text = str(tf.path)
    if (
        row
        and row[1] == path_text
        and row[2] == st.st_size
        and row[3] == st.st_mtime_ns
        and row[4] == st.st_ino
    ):
        report.unchanged += 1  # not opened, not parsed
        return
    # The hash windows are read through a second handle: the batches' handle
    # must not move under the line iterator.
    with open(tf.path, "rb") as fh, open(tf.path, "rb") as peek:
        fresh = True
        offset = 0
        state: ReaderState | None = None
        if row and row[1] == path_text and row[6] and st.st_size >= row[5]:
            if same_bytes(peek, int(row[5]), str(row[6])):
                state = _resume_state(row[7])
                if state is not None:
                    fresh, offset = False, int(row[5])
        if state is None:
            state = ReaderState()
        if state.artifact_dir is None:
            state.artifact_dir = artifact_dir_for(tf.path, tf.session_id)
        reader = SessionReader(compact=tf.is_compact, state=state)
        based_on = (row[5], row[1]) if row else None
        batches = iter_batches(fh, offset, final=False, batch_bytes=batch_bytes)
        batch = next(batches, None)
        read_any = batch is not None
        if batch is None:
            # nothing new: remember the stat (and, if fresh, clear the old rows)
            _commit(
                conn,
                tf,
                st,
                reader.state,
                None,
                paths,
                based_on,
                fresh,
                offset,
                read_hash(peek, offset),
            )
        while batch is not None:
            chunk = reader.feed(
                [line.record for line in batch],
                [(line.start_offset, line.end_offset) for line in batch],
            )
            new_offset = batch[-1].end_offset
            upcoming = next(batches, None)
            # Only the last batch records the file's stat: a run killed between
            # batches must not leave a row that looks complete to the next run.
            based_on = _commit(
                conn,
                tf,
                st if upcoming is None else None,
                reader.state,
                chunk,
                paths,
                based_on,
                fresh,
                new_offset,
                read_hash(peek, new_offset),
            )
            report.skipped_lines += chunk.skipped
            fresh = False
            batch = upcoming
    if row is None:
        report.added += 1
    elif read_any or fresh:
        report.updated += 1
    else:
        report.unchanged += 1  # touched, or grown by a line still being written


def _commit(
    conn: sqlite3.Connection,
    tf: TranscriptFile,
    st: os.stat_result | None,
    state: ReaderState,
    chunk: Any,
    paths: PathIds,
    based_on: tuple[Any, Any] | None,
    fresh: bool,
    offset: int,
    head: str,
) -> tuple[Any, Any]:
    path_text = str(tf.path)
    with transaction(conn):
        now = conn.execute(
            "SELECT sid, offset, transcript FROM sessions WHERE session_id=?", (tf.session_id,)
        ).fetchone()
        current = (now[1], now[2]) if now else None
        if current != based_on:
            raise _Moved()
        if now is None:
            cur = conn.execute(
                "INSERT INTO sessions(session_id, source, transcript, root)"
                " VALUES (?, 'antigravity', ?, ?)",
                (tf.session_id, path_text, str(tf.root)),
            )
            sid = int(cur.lastrowid or 0)
        else:
            sid = int(now[0])
            if fresh:
                clear_session_rows(conn, sid)
        if chunk is not None:
            write_chunk(conn, sid, chunk, paths)
        project = resolve_project(
            tf.session_id,
            tf.root,
            ProjectHints(touched_dir=state.touched_dir, first_cwd=state.first_cwd),
        )
        if fresh or (chunk is not None and any(m.role == "user" for _, m in chunk.messages)):
            # The first request in step order. Only new user rows can change it, and
            # after a re-read from scratch the old one must not survive.
            conn.execute(
                "UPDATE sessions SET first_prompt=(SELECT text FROM messages"
                " WHERE sid=? AND role='user' ORDER BY step, ord LIMIT 1) WHERE sid=?",
                (sid, sid),
            )
        conn.execute(
            """UPDATE sessions SET transcript=?, root=?, project=?, started_at=?, ended_at=?,
                   started_epoch=?, skipped_lines=?, n_messages=?, n_commands=?, n_edits=?,
                   size=?, mtime_ns=?, inode=?, offset=?, head_hash=?, state=?
               WHERE sid=?""",
            (
                path_text,
                str(tf.root),
                project,
                state.started_at,
                state.ended_at,
                epoch_of(state.started_at),
                state.skipped,
                state.n_messages,
                state.n_commands,
                state.n_edits,
                st.st_size if st else offset,
                st.st_mtime_ns if st else NO_STAT,
                st.st_ino if st else 0,
                offset,
                head,
                state.to_bytes(),
                sid,
            ),
        )
    return (offset, path_text)


def changed_transcripts(conn: sqlite3.Connection, roots: list[Path]) -> list[TranscriptFile]:
    """The transcripts whose stat differs from what the index recorded (plain os calls:
    with a thousand sessions this is a few milliseconds, not the full walk's hundreds)."""
    known = {
        row[0]: (row[1], row[2], row[3], row[4])
        for row in conn.execute(
            "SELECT session_id, transcript, size, mtime_ns, inode FROM sessions"
        )
    }
    out: list[TranscriptFile] = []
    seen: set[str] = set()
    for root in roots:
        base = str(root)
        try:
            entries = sorted(os.scandir(os.path.join(base, "brain")), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name in seen:
                continue
            logs = os.path.join(base, "brain", entry.name, ".system_generated", "logs")
            for name in (FULL_NAME, COMPACT_NAME):
                path = os.path.join(logs, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                if not stat.S_ISREG(st.st_mode):
                    continue
                seen.add(entry.name)
                if known.get(entry.name) != (path, st.st_size, st.st_mtime_ns, st.st_ino):
                    out.append(TranscriptFile(session_id=entry.name, path=Path(path), root=root))
                break
    return out
