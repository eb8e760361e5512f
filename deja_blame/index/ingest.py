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
import multiprocessing
import os
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deja_blame.collector import collector_paused
from deja_blame.index.changes import read_by_older_readers, stored_reader_version
from deja_blame.index.db import SYNCHRONOUS, transaction
from deja_blame.index.keys import message_ids, role_code
from deja_blame.index.source import read_hash, same_bytes
from deja_blame.index.store import (
    A_COPY,
    ChunkRows,
    PathIds,
    chunk_rows,
    clear_session_rows,
    forget_session,
    forgotten_sessions,
    not_sessions,
    pack,
    remember_a_copy,
    remember_forgotten,
    remember_not_a_session,
    remove_session,
    set_aside,
    unpack,
    write_rows,
)
from deja_blame.index.watched import erase_record
from deja_blame.transcripts.antigravity.discover import find_transcripts
from deja_blame.transcripts.first_seen import FirstSeen
from deja_blame.transcripts.jsonl import CHUNK_BYTES, iter_batches, with_extras
from deja_blame.transcripts.project import ProjectHints, resolve_project
from deja_blame.transcripts.reading import (
    LINES_BUFFER,
    IncompleteTranscript,
    ReaderState,
    check_line_count,
    open_regular,
)
from deja_blame.transcripts.registry import (
    agent_named,
    reader_failed,
    reads_whole,
    resumable_reader,
)
from deja_blame.transcripts.text import epoch_of
from deja_blame.transcripts.transcript_file import TranscriptFile, one_copy_each

if TYPE_CHECKING:
    from deja_blame.index.provenance import LeftOut

MAX_RETRIES = 20
# mtime_ns of a row whose last commit was not the file's last batch: the next
# run (or the run still reading it) goes on from the offset
NO_STAT = -1
FIRST_SEEN = "first_seen"  # ReaderState.other's key for a FirstSeen's records
BULK_CHECKPOINT_PAGES = 8192  # 32 MB of WAL between checkpoints while indexing (default 1000)
# Past two, the one writing process is the limit (it takes about as long as two
# readers), and each worker holds ~50 MB: main + 2 workers stay under 200 MB.
MAX_DEFAULT_JOBS = 2
PARALLEL_MIN_BYTES = 32 * 1024 * 1024  # less to read than this: one process is quicker
TASK_BYTES = 8 * 1024 * 1024  # of transcript per worker task (bounds what waits in memory)
# Tasks in flight beyond one per worker: done ones wait for the writer, so a worker
# has the next one at hand (at most this many task results sit in memory).
AHEAD = 3
# Small transcripts written in one transaction, up to this much of them (see _index_here)
GROUP_BYTES = 4 * 1024 * 1024


@dataclass
class IndexReport:
    updated: int = 0  # sessions that got new lines (or were re-read)
    unchanged: int = 0
    skipped_lines: int = 0  # malformed lines met in this run
    transcripts: int = 0
    problems: list[str] = field(default_factory=list)
    # transcripts caught while their agent writes them (a JSON document cut short, a
    # locked database): skipped this run, what the index holds of them kept, read
    # at the next run; one line each
    incomplete: list[str] = field(default_factory=list)
    # Sessions whose row this run inserted. Counted as added the moment the insert
    # commits: with a concurrent run the same transcript can be moved under this
    # one and finished by a retry, which must not count it again (or not at all).
    created: set[str] = field(default_factory=set, repr=False)
    # links and special files below the roots, passed over unopened (one line per root:
    # ``transcripts.files.Skipped``)
    skipped_entries: list[dict[str, Any]] = field(default_factory=list)
    forgotten: int = 0  # transcripts of sessions deja forget keeps out, left unread
    # of ``problems``, the transcripts a repository carries, left out on purpose (said
    # each in its line, and in the summary apart: no problem to fix but a choice)
    left_out: int = 0
    # files where an agent keeps its transcripts that hold no record its reader knows
    # (random bytes, another program's file): no session; read again when they change
    not_sessions: list[str] = field(default_factory=list)
    # transcripts copying a chat the index holds from its agent's own store (SpecStory's
    # of a Claude Code session): left out, the chat counted once, as its agent's
    copies: int = 0

    @property
    def added(self) -> int:
        """Sessions new to the index."""
        return len(self.created)

    def count_unchanged(self, session_id: str) -> None:
        if session_id not in self.created:
            self.unchanged += 1

    def cannot_read(self, tf: TranscriptFile, exc: OSError) -> None:
        if isinstance(exc, IncompleteTranscript):
            line = f"skipped {exc}; read at the next run"
            if line not in self.incomplete:  # a file several sessions read: said once
                self.incomplete.append(line)
            return
        self.problems.append(f"cannot read {tf.path}: {exc.strerror or exc}")

    def to_json(self) -> dict[str, Any]:
        return {
            "transcripts": self.transcripts,
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "skipped_lines": self.skipped_lines,
            "incomplete": len(self.incomplete),
            "problems": self.problems,
            "skipped_entries": self.skipped_entries,
            "forgotten": self.forgotten,
            "not_sessions": self.not_sessions,
            "left_out": self.left_out,
            "copies": self.copies,
        }

    def summary(self) -> str:
        from deja_blame.output import counted

        if self.transcripts and self.unchanged == self.transcripts:
            # read already, by an earlier run or the refresh before an answer: not
            # "indexed 1 transcript: 0 sessions added", which reads as not understood
            text = (
                f"nothing new: {counted(self.transcripts, 'transcript')} indexed already"
                " (deja blame and the other answers read new transcripts themselves)"
            )
        else:
            text = (
                f"indexed {counted(self.transcripts, 'transcript')}:"
                f" {counted(self.added, 'session')} added,"
                f" {self.updated} updated, {self.unchanged} unchanged;"
                f" {counted(self.skipped_lines, 'malformed line')} skipped"
            )
        if self.incomplete:
            text += f"; {len(self.incomplete)} still being written (read at the next run)"
        if self.forgotten:
            text += f"; {counted(self.forgotten, 'forgotten session')} left out (deja forget)"
        if self.not_sessions:
            text += (
                f"; {counted(len(self.not_sessions), 'file')} with no session in it skipped"
                " (no record its agent writes; read again when it changes)"
            )
        if self.copies:
            text += (
                f"; {counted(self.copies, 'copy', 'copies')} of a chat its agent's own"
                " transcript holds left out (counted once)"
            )
        if self.left_out:
            text += f"; {self.left_out} left out on purpose (above: deja trust PATH reads one)"
        if len(self.problems) > self.left_out:
            text += f"; {counted(len(self.problems) - self.left_out, 'problem')}"
        return text


class _Moved(Exception):
    """Another process advanced this transcript under us: re-read its row."""


def collect_transcripts(roots: Iterable[Path], report: IndexReport) -> list[TranscriptFile]:
    found: list[TranscriptFile] = []
    for root in roots:
        found += find_transcripts(root, report.problems)
    return one_copy_each(found, report.problems)


def _own_only(
    conn: sqlite3.Connection, files: list[TranscriptFile], report: IndexReport
) -> list[TranscriptFile]:
    """The transcripts that are the user's own (``index.provenance``): one a
    repository carries, or another user owns, is left out, and the run says so.
    Those ``found_below`` passed the gate already (``_found_below_own``)."""
    from deja_blame.index.provenance import (
        remember_left_out,
        remember_own,
        remember_trusted_by_config,
        split_trusted,
    )

    by_config: set[Path] = set()
    untracked: list[tuple[Path, str]] = []
    asked = [tf for tf in files if not tf.found_below]
    kept, left_out = split_trusted(asked, by_config=by_config, untracked=untracked)
    remember_own(untracked)  # theirs still once they commit it; the gone forgotten
    remember_left_out(conn, left_out, kept)
    remember_trusted_by_config(conn, by_config)
    _say_left_out(left_out, report)
    passed = {id(tf) for tf in kept}
    return [tf for tf in files if tf.found_below or id(tf) in passed]


def _found_below_own(
    conn: sqlite3.Connection, files: list[TranscriptFile], report: IndexReport
) -> list[TranscriptFile]:
    """``files`` less the histories ``found_below`` the gate leaves out, asked at every
    run, changed or not: such a history is the user's only while untracked (never
    remembered as theirs), so the commit that tracks it leaves it carried, and the
    index lets go of what it read there, saying so."""
    from deja_blame.index.provenance import (
        drop_held,
        remember_left_out,
        remember_trusted_by_config,
        split_trusted,
    )

    below = [tf for tf in files if tf.found_below]
    if not below:
        return files
    by_config: set[Path] = set()
    kept, left_out = split_trusted(below, by_config=by_config)
    with transaction(conn):
        dropped = drop_held(conn, left_out)
    remember_left_out(conn, left_out, kept)
    remember_trusted_by_config(conn, by_config)
    for lo in dropped:
        report.problems.append(f"removed from the index: {lo.line()}")
    _say_left_out([lo for lo in left_out if lo not in dropped], report)
    gone = {lo.path for lo in left_out}
    return [tf for tf in files if not (tf.found_below and tf.path in gone)]


def _say_left_out(left_out: list[LeftOut], report: IndexReport) -> None:
    from deja_blame.index.provenance import FOREIGN
    from deja_blame.output import warn

    for lo in left_out:
        if lo.why == FOREIGN:
            warn(lo.line())  # as git warns of a repository someone else owns, every time
        else:
            report.problems.append(lo.line())
            report.left_out += 1


def _drop_strangers_held(conn: sqlite3.Connection, report: IndexReport) -> None:
    """An index may hold sessions the gate now leaves out (an older deja built it, or
    the user took trust back since): they are removed, and the run says so as it
    does of what it leaves out."""
    from deja_blame.index.provenance import FOREIGN, gate_held

    for lo in gate_held(conn):
        if lo.why == FOREIGN:
            from deja_blame.output import warn

            warn(f"removed from the index: {lo.line()}")
        else:
            report.problems.append(f"removed from the index: {lo.line()}")


def _not_copies(
    conn: sqlite3.Connection,
    files: list[TranscriptFile],
    known: dict[str, Any],
    report: IndexReport,
) -> list[TranscriptFile]:
    """``files`` less the copies of a chat the index holds from its agent's own store
    (``Agent.copy_of``: SpecStory's history of a Claude Code session names its id): the
    agent's own transcript holds more (every edit's lines), so the chat counts once, as
    its agent's. A copy the index held is removed; one whose chat the index does not
    hold yet is read, and its link kept for ``_drop_copies``. Only a copy is ever left
    out: whatever a copy names, the agent's own session stays."""
    from deja_blame.index.store import COPIED
    from deja_blame.transcripts.registry import known as plugin

    kept: list[TranscriptFile] = []
    links: dict[str, str] = {}  # the agent's session id -> the copy's, read for now
    left: dict[str, tuple[Any, ...]] = {}  # the copy's session id -> its stat
    for tf in files:
        a = plugin(tf.agent)
        of = a.copy_of(tf.path) if a is not None and a.copy_of is not None else None
        if of is None or of == tf.session_id:
            kept.append(tf)
            continue
        if of not in known:
            kept.append(tf)
            links[of] = tf.session_id
            continue
        try:
            left[tf.session_id] = (str(tf.path), *tf.stat_key())
        except OSError:
            kept.append(tf)  # the reader says what is wrong with it
    if not links and not left:
        return kept  # no write, no lock: most runs
    with transaction(conn):
        for copy, stat in left.items():
            remove_session(conn, copy)
            remember_a_copy(conn, copy, stat)
        for of, copy in links.items():
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (COPIED + of, copy)
            )
    report.copies += len(left)
    return kept


def _drop_copies(conn: sqlite3.Connection, report: IndexReport) -> None:
    """Remove the copies read before their agent's own session was indexed, now that
    it is (``_not_copies``' links): one query over the links, most runs none."""
    from deja_blame.index.store import COPIED

    end = COPIED[:-1] + chr(ord(COPIED[-1]) + 1)
    rows = conn.execute(
        "SELECT m.key, m.value, c.transcript, c.size, c.mtime_ns, c.inode"
        " FROM meta m JOIN sessions s ON s.session_id = substr(m.key, ?)"
        " LEFT JOIN sessions c ON c.session_id = m.value"
        " WHERE m.key >= ? AND m.key < ?",
        (len(COPIED) + 1, COPIED, end),
    ).fetchall()
    if not rows:
        return
    with transaction(conn):
        for key, copy, transcript, size, mtime_ns, inode in rows:
            conn.execute("DELETE FROM meta WHERE key=?", (key,))
            if transcript is None:
                continue
            remove_session(conn, str(copy))
            remember_a_copy(conn, str(copy), (str(transcript), size, mtime_ns, inode))
            report.copies += 1


def _not_forgotten(
    conn: sqlite3.Connection,
    files: list[TranscriptFile],
    known: dict[str, Any],
    report: IndexReport,
) -> list[TranscriptFile]:
    """``files`` less the sessions ``deja forget`` keeps out (``index.forgotten``): not
    read, whatever their transcripts became, and dropped where the index holds them
    (an index built before they were forgotten, another ``--db``)."""
    from deja_blame.index.forgotten import kept_forgotten

    kept = set(kept_forgotten())
    if not kept:
        return files
    held = sorted(kept & known.keys())
    if held:
        with transaction(conn):
            for session_id in held:
                forget_session(conn, session_id)
                known.pop(session_id, None)
    left = [tf for tf in files if tf.session_id not in kept]
    report.forgotten += len(files) - len(left)
    return left


def index_roots(
    conn: sqlite3.Connection,
    roots: Iterable[Path],
    progress: Callable[[TranscriptFile], None] | None = None,
    transcripts: list[TranscriptFile] | None = None,
    jobs: int | None = None,
    compact: bool = False,
    batch_bytes: int = CHUNK_BYTES,
) -> IndexReport:
    """Bring the index up to date with every transcript under ``roots``.

    ``jobs``: worker processes that read transcripts while this one writes. The
    default (None) uses up to ``MAX_DEFAULT_JOBS`` of the machine's cores, and
    only when there are at least ``PARALLEL_MIN_BYTES`` to read (starting them
    costs more than a small run takes); 1 reads everything in this process.
    ``compact`` (``deja index``): a first build, into an empty index, is rewritten
    once at its end with its pages full (``compact_first_build``); an answer's
    refresh never waits for that.
    """
    report = IndexReport()
    _drop_strangers_held(conn, report)
    files = transcripts if transcripts is not None else collect_transcripts(roots, report)
    files = _found_below_own(conn, files, report)
    paths = PathIds(conn)
    # Fewer, larger checkpoints while writing in bulk: each one costs two fsyncs.
    (checkpoint_pages,) = conn.execute("PRAGMA wal_autocheckpoint").fetchone()
    conn.execute(f"PRAGMA wal_autocheckpoint = {BULK_CHECKPOINT_PAGES}")
    unsynced = False
    finished = False
    try:
        # One query for every session's stat: with nothing new, a stat per file and no more.
        known = {
            row[0]: row[1:]
            for row in conn.execute(
                "SELECT session_id, transcript, size, mtime_ns, inode, offset FROM sessions"
            )
        }
        if not known:
            # A first build (or --rebuild) has nothing to lose: no flush to disk at each
            # checkpoint, which is a quarter of a big first run here. A killed run is
            # safe either way (the data is with the OS); only an OS crash or power
            # loss mid-run can damage this index, and rebuilding it from the same
            # transcripts loses nothing. The end of the run flushes it all once.
            conn.execute("PRAGMA synchronous = OFF")
            unsynced = True
        forgotten = forgotten_sessions(conn)
        files = _not_forgotten(conn, files, known, report)
        not_yet = not_sessions(conn)
        copies = set_aside(conn, A_COPY)
        behind = read_by_older_readers(conn)  # unchanged, but read by an older reader
        changed: list[TranscriptFile] = []
        for tf in files:
            report.transcripts += 1
            try:
                held = known.get(tf.session_id)
                if held is None and _same_stat(tf, not_yet.get(tf.session_id)):
                    report.not_sessions.append(str(tf.path))  # as it was: no session yet
                    if progress is not None:
                        progress(tf)
                    continue
                if tf.session_id not in behind and _same_stat(
                    tf, held or forgotten.get(tf.session_id)
                ):
                    report.unchanged += 1  # not opened, not parsed
                    if progress is not None:
                        progress(tf)
                    continue
                if held is None and _same_stat(tf, copies.get(tf.session_id)):
                    report.copies += 1  # as it was: its agent's own session holds the chat
                    if progress is not None:
                        progress(tf)
                    continue
            except OSError as exc:
                report.cannot_read(tf, exc)
                if progress is not None:
                    progress(tf)
                continue
            if tf.session_id in forgotten:  # its transcript changed: read it again
                with transaction(conn):
                    remember_forgotten(conn, tf.session_id, None)
            if tf.session_id in not_yet:  # changed: read again from the start
                with transaction(conn):
                    remember_not_a_session(conn, tf.session_id, None)
            changed.append(tf)
        # whose they are is asked of what is read now: what the index holds passed
        changed = _own_only(conn, changed, report)
        changed = _not_copies(conn, changed, known, report)
        workers = default_jobs() if jobs is None else max(1, jobs)
        # sizes only where workers may read: the hook and blame's refresh (jobs=1)
        # need no more than the stat per file above
        pending = (
            {tf.session_id: _pending(tf, known) for tf in changed}
            if workers > 1 and len(changed) > 1
            else {}
        )
        if pending and (jobs is not None or sum(pending.values()) >= PARALLEL_MIN_BYTES):
            # Largest first: a big transcript is read in tasks one after another, and
            # started last it would leave one worker busy while the other waits.
            changed.sort(key=lambda tf: -pending[tf.session_id])
            try:
                _index_in_workers(conn, changed, report, paths, workers, batch_bytes, progress)
            except sqlite3.Error:
                paths.cache.clear()
                raise
        else:
            _index_here(conn, changed, report, paths, batch_bytes, progress)
        _drop_copies(conn, report)
        finished = True
    finally:
        with contextlib.suppress(sqlite3.Error):  # never mask the error that got us here
            conn.execute(f"PRAGMA wal_autocheckpoint = {int(checkpoint_pages)}")
            if unsynced:
                if compact and finished:  # not after Ctrl-C or an error
                    compact_first_build(conn)
                conn.execute(f"PRAGMA synchronous = {SYNCHRONOUS}")
                # copy the WAL into the database and flush both (synchronous is back on)
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    return report


def compact_first_build(conn: sqlite3.Connection) -> None:
    """VACUUM a first build: the line fingerprints arrive in no key order, so their
    B-tree's pages are split as they fill and end an eighth empty; rewritten in key
    order they are full. For 120 MB of transcripts, 22.8 -> 21.8 MB for 0.08 s of
    CPU (2 % of the build). Only a first build: later runs add a little at a time,
    and what they leave free is reused. Busy (another process reading) or no
    room for the copy: the index stays as it is."""
    with contextlib.suppress(sqlite3.OperationalError):
        conn.execute("VACUUM")


def _index_here(
    conn: sqlite3.Connection,
    files: list[TranscriptFile],
    report: IndexReport,
    paths: PathIds,
    batch_bytes: int,
    progress: Callable[[TranscriptFile], None] | None,
) -> None:
    """Read and write ``files`` one after another, in this process.

    Small transcripts are written together, up to ``GROUP_BYTES`` of them in one
    transaction (no savepoint each: ``_batch_transaction``): a transaction per
    session rewrote the same pages of every table into the WAL at each commit,
    which was most of writing a thousand small sessions. A killed run or an error
    while writing loses at most the group it was in; what the index holds stays
    consistent (rows, offset and state commit together, as before).
    """
    group: list[TranscriptFile] = []
    held = 0
    for tf in files:
        size = _size_of(tf)
        if group and (held + size > GROUP_BYTES or size > GROUP_BYTES):
            _index_group(conn, group, report, paths, batch_bytes, progress)
            group, held = [], 0
        group.append(tf)
        held += size
    if group:
        _index_group(conn, group, report, paths, batch_bytes, progress)


def _size_of(tf: TranscriptFile) -> int:
    try:
        return os.stat(tf.path).st_size
    except OSError:
        return 0  # the indexer says what is wrong with it


def _index_group(
    conn: sqlite3.Connection,
    group: list[TranscriptFile],
    report: IndexReport,
    paths: PathIds,
    batch_bytes: int,
    progress: Callable[[TranscriptFile], None] | None,
) -> None:
    """``group`` in one transaction (a single file: a transaction per batch, as always)."""
    try:
        with transaction(conn) if len(group) > 1 else contextlib.nullcontext(conn):
            for tf in group:
                try:
                    index_transcript(conn, tf, report, paths, batch_bytes)
                except OSError as exc:
                    report.cannot_read(tf, exc)
                if progress is not None:
                    progress(tf)
    except sqlite3.Error:
        paths.cache.clear()  # path ids of a rolled-back batch are gone
        raise


@contextlib.contextmanager
def _batch_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One batch's writes: a transaction of its own, or a part of its group's.

    In a group no savepoint: SQLite copies every page a savepoint's writes touch
    into a temporary file first, in case they are taken back (for 1,400 small
    sessions, 370 of the 460 MB written to build an 18 MB index). None is ever
    taken back: the group holds the write lock (BEGIN IMMEDIATE), so no other
    run moves a transcript's row under it (``_Moved`` is raised before any write
    anyway), and any error while writing ends the group, rolled back whole. The
    one error a group goes on past, a transcript it cannot read (``OSError``),
    comes while reading, before its batch's writes; one raised while writing is
    made an SQLite error here, so the group still ends rather than keep half a
    session's rows.
    """
    if not conn.in_transaction:
        with transaction(conn):
            yield conn
        return
    try:
        yield conn
    except OSError as exc:
        raise sqlite3.OperationalError(f"writing the index failed: {exc}") from exc


def _same_stat(tf: TranscriptFile, row: tuple[Any, ...] | None) -> bool:
    """Is ``tf`` the file the index last read, with the stat it had then?

    ``row`` starts (transcript, size, mtime_ns, inode), from the sessions table. A
    stale row only ever says "changed" (other runs move rows forward), and then
    the file is looked at properly.
    """
    if row is None or row[0] != str(tf.path):
        return False
    return tuple(row[1:4]) == tf.stat_key()


def _resume_state(blob: bytes | None) -> ReaderState | None:
    """The stored reader state, or None when it cannot be used (written by another version)."""
    try:
        data = None if blob is None else unpack(blob)
        return ReaderState.from_bytes(data.encode() if isinstance(data, str) else data)
    except (TypeError, ValueError, zlib.error):  # orjson.JSONDecodeError is a ValueError
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
                report.count_unchanged(tf.session_id)
                return
    report.problems.append(f"gave up on {tf.path}: it kept changing under concurrent indexing")


def _read_elsewhere(conn: sqlite3.Connection, tf: TranscriptFile) -> bool:
    row = conn.execute(
        "SELECT mtime_ns FROM sessions WHERE session_id=?", (tf.session_id,)
    ).fetchone()
    return row is not None and row[0] == NO_STAT


@dataclass
class ReadStart:
    """What the index row says of a transcript before reading it (None: a new session)."""

    transcript: str
    offset: int
    head_hash: str | None
    state: bytes | None


@dataclass
class Batch:
    """One batch of a transcript, read and turned into rows: one transaction's worth."""

    rows: ChunkRows | None  # None: nothing new (stat recorded; old rows cleared if fresh)
    offset: int  # where reading stopped: the byte after its last complete line
    read_hash: str  # read_hash() of the file up to offset
    state: bytes  # the reader's state there (ReaderState.to_bytes)
    fresh: bool  # read from scratch: the session's old rows go first
    stat: tuple[int, int, int] | None  # (size, mtime_ns, inode), on the file's last batch only
    head: SessionHead  # the session row's fields the state gives, there
    # records (lines read as JSON, not malformed) in the batch; None: a reader that reads the
    # file whole
    records: int | None = None


@dataclass(frozen=True)
class SessionHead:
    """What the ``sessions`` row says of a session after a batch: taken from the
    reader's state where the batch was read, so the writer neither decodes the
    state again nor guesses the project (an eighth of a small session's commit)."""

    project: str
    started_at: str | None
    ended_at: str | None
    skipped: int
    n_messages: int
    n_commands: int
    n_edits: int
    model: str | None
    # whether the reader took anything from the records so far (a message, command,
    # file or edit): see ``_Tally.holds_nothing``
    produced: bool = True

    @classmethod
    def of(cls, tf: TranscriptFile, state: ReaderState) -> SessionHead:
        return cls(
            project=resolve_project(
                tf.session_id,
                None if reads_whole(tf) else tf.root,
                ProjectHints.from_state(state),
            ),
            started_at=state.started_at,
            ended_at=state.ended_at,
            skipped=state.skipped,
            n_messages=state.n_messages,
            n_commands=state.n_commands,
            n_edits=state.n_edits,
            model=state.model,
            produced=bool(state.n_messages or state.n_commands or state.n_files or state.n_edits),
        )


def _start_of(row: tuple[Any, ...] | None) -> ReadStart | None:
    """The ``sessions`` row (sid, transcript, size, mtime_ns, inode, offset, head_hash, state)."""
    if row is None:
        return None
    return ReadStart(transcript=row[1], offset=int(row[5]), head_hash=row[6], state=row[7])


def read_batches(
    tf: TranscriptFile,
    start: ReadStart | None,
    batch_bytes: int = CHUNK_BYTES,
    limit_bytes: int | None = None,
) -> Iterator[Batch]:
    """Read ``tf`` from where the index left it (or from scratch) in batches of rows.

    Touches no database, so it runs in worker processes as well. With
    ``limit_bytes`` it stops after the batch that reaches that many bytes read;
    that last batch then has no ``stat`` and the caller goes on from its offset.
    """
    st = os.stat(tf.path)
    path_text = str(tf.path)
    # The hash windows are read through a second handle: the batches' handle
    # must not move under the line iterator.
    with open_regular(tf.path, LINES_BUFFER) as fh, open_regular(tf.path) as peek:
        stored: ReaderState | None = None  # where the index stopped, if still this file
        if (
            start is not None
            and start.transcript == path_text
            and start.head_hash
            and st.st_size >= start.offset
            and same_bytes(peek, start.offset, start.head_hash)
        ):
            stored = _resume_state(start.state)
        agent = agent_named(tf.agent)
        if stored is not None and stored.reader_version < agent.reader_version:
            stored = None  # an older reader's state: read again from the start
        # A reader that keeps its own state in ``other`` (Claude Code's, Codex's) goes
        # on from it; agents whose transcripts are rewritten are read whole.
        if reads_whole(tf) and stored is not None and stored.other is None:
            stored = None  # read whole last time (or by another version): from the start
        reader = resumable_reader(tf, stored)
        if reader is None:
            yield _read_whole(tf, start)
            return
        fresh = stored is None
        offset = 0 if stored is None or start is None else start.offset
        # the record limit: the lines to read now and the rows the index holds of it
        held = (
            0
            if stored is None
            else stored.n_messages + stored.n_commands + stored.n_files + stored.n_edits
        )
        check_line_count(peek, offset, held)
        stat = tf.stat_key() if tf.parts else (st.st_size, st.st_mtime_ns, st.st_ino)
        # Read from scratch, an Antigravity session also takes the steps only its
        # other file holds (the compact one can reach further back). Read on from
        # an offset, the full file's new lines are the session's new steps.
        extra = agent.extra_records(tf) if fresh and agent.extra_records is not None else []
        batches = with_extras(
            iter_batches(fh, offset, final=False, batch_bytes=batch_bytes), extra, offset
        )
        batch = next(batches, None)
        if batch is None:
            yield Batch(
                None,
                offset,
                read_hash(peek, offset),
                _state_bytes(reader.state, agent.reader_version),
                fresh,
                stat,
                SessionHead.of(tf, reader.state),
                records=0,
            )
            return
        first = offset
        while batch is not None:
            line_batch, records, spans = batch
            try:
                chunk = reader.feed(records, spans)
            except OSError:
                raise
            except Exception as exc:  # noqa: BLE001 - one transcript never stops the index
                # Skipped like a file it cannot read: what earlier batches wrote stays,
                # and the next run tries again from there (a newer reader may read it).
                raise reader_failed(agent, exc) from None
            new_offset = line_batch.end_offset
            limited = limit_bytes is not None and new_offset - first >= limit_bytes
            upcoming = None if limited else next(batches, None)
            # Only the last batch records the file's stat: a run killed between
            # batches must not leave a row that looks complete to the next run.
            yield Batch(
                rows=chunk_rows(chunk),
                offset=new_offset,
                read_hash=read_hash(peek, new_offset),
                state=_state_bytes(reader.state, agent.reader_version),
                fresh=fresh,
                stat=stat if upcoming is None and not limited else None,
                head=SessionHead.of(tf, reader.state),
                records=sum(1 for r in records if r is not None),
            )
            fresh = False
            batch = upcoming


def _state_bytes(state: ReaderState, reader_version: int) -> bytes:
    """The state to store, saying which version of its agent's reader wrote it."""
    state.reader_version = reader_version
    return state.to_bytes()


def _read_whole(tf: TranscriptFile, start: ReadStart | None = None) -> Batch:
    """Another agent's transcript read from its start as one batch (its reader keeps no state
    between runs: the index replaces the session's rows). A transcript that records no
    times keeps, in the state, when each record was first seen: a record read before
    keeps its time, whatever the file's time is now (grown or rewritten)."""
    from deja_blame.transcripts.builder import as_batch
    from deja_blame.transcripts.registry import read_session

    stat = tf.stat_key()
    seen = _first_seen(tf, start)
    chunk, state = as_batch(read_session(tf, seen))
    if seen is not None:
        state.other = {FIRST_SEEN: seen.to_state()}
    return Batch(
        rows=chunk_rows(chunk),
        offset=stat[0],
        read_hash="",
        state=_state_bytes(state, agent_named(tf.agent).reader_version),
        fresh=True,
        stat=stat,
        head=SessionHead.of(tf, state),
    )


KEPT_SEEN = "first-seen;"  # meta key prefix (+ session id): an old index's state, kept


def keep_first_seen(old: Path, conn: sqlite3.Connection) -> int:
    """Copy into ``conn`` (an index ``deja index --rebuild`` builds afresh) the reader
    states of the old index at ``old`` that hold when each record was first seen
    (``transcripts/first_seen.py``): the new index reads every transcript again,
    and a record it would otherwise date by the file's time now keeps its time.
    Returns how many sessions' times were kept; an old index that cannot be read
    keeps none."""
    from deja_blame.index.db import transaction

    kept: list[tuple[str, bytes]] = []
    try:
        with contextlib.closing(sqlite3.connect(f"{old.as_uri()}?mode=ro", uri=True)) as src:
            for session_id, blob in src.execute(
                "SELECT session_id, state FROM sessions WHERE state IS NOT NULL"
            ):
                state = _resume_state(blob)
                if state is not None and state.other and FIRST_SEEN in state.other:
                    kept.append((KEPT_SEEN + str(session_id), bytes(blob)))
    except (sqlite3.Error, ValueError):
        return 0
    if kept:
        with transaction(conn):
            conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", kept)
    return len(kept)


def forget_kept_first_seen(conn: sqlite3.Connection) -> None:
    """Drop what ``keep_first_seen`` kept for the sessions read since: their rows hold
    it now. A session the rebuild did not read (a file caught half written, a root
    not mounted, a session forgotten and later taken back) keeps its times for the
    run that reads it; dropped, its records would take that run's time."""
    from deja_blame.index.db import transaction

    with transaction(conn):
        conn.execute(
            "DELETE FROM meta WHERE key >= ? AND key < ?"
            " AND substr(key, ?) IN (SELECT session_id FROM sessions)",
            (KEPT_SEEN, KEPT_SEEN[:-1] + "<", len(KEPT_SEEN) + 1),
        )


def _start_with_kept(conn: sqlite3.Connection, tf: TranscriptFile, row: Any) -> ReadStart | None:
    """Where to read ``tf`` from (``_start_of``); a session the index has no row of
    yet starts from the first-seen times a rebuild kept, if any (its state, read
    from scratch: no offset, no head to match)."""
    start = _start_of(row)
    if start is None:
        kept = conn.execute("SELECT value FROM meta WHERE key=?", (KEPT_SEEN + tf.session_id,))
        found = kept.fetchone()
        if found is not None:
            return ReadStart(transcript=str(tf.path), offset=0, head_hash="", state=found[0])
    return start


def _first_seen(tf: TranscriptFile, start: ReadStart | None) -> FirstSeen | None:
    """When the records of ``tf`` were first seen, as the index's last reading of the
    session kept it; None for an agent whose transcripts record times."""
    from deja_blame.transcripts.tool_edits import file_time

    if agent_named(tf.agent).read_seen is None:
        return None
    stored = _resume_state(start.state) if start is not None else None
    known = stored.other.get(FIRST_SEEN) if stored is not None and stored.other else None
    return FirstSeen(file_time(tf.path), known if isinstance(known, dict) else None)


def read_task(
    tf: TranscriptFile, start: ReadStart | None, batch_bytes: int, limit_bytes: int
) -> list[Batch]:
    """A worker process's job: up to ``limit_bytes`` of one transcript, as batches."""
    with collector_paused():
        return list(read_batches(tf, start, batch_bytes, limit_bytes))


def _session_row(conn: sqlite3.Connection, tf: TranscriptFile) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = conn.execute(
        "SELECT sid, transcript, size, mtime_ns, inode, offset, head_hash, state"
        " FROM sessions WHERE session_id=?",
        (tf.session_id,),
    ).fetchone()
    return row


def _row_is_current(tf: TranscriptFile, row: tuple[Any, ...] | None) -> bool:
    """The row's stat is the file's, and the agent's reader has not changed since."""
    if row is None or not _same_stat(tf, (row[1], row[2], row[3], row[4])):
        return False
    version = agent_named(tf.agent).reader_version
    return not version or stored_reader_version(row[7]) >= version


class _Tally:
    """How one transcript's reading went, for the report once it is done."""

    def __init__(self, session_id: str, row: tuple[Any, ...] | None) -> None:
        self.session_id = session_id
        self.based_on: tuple[Any, Any] | None = (row[5], row[1]) if row else None
        self.read_any = False
        self.fresh = False
        self.first = True
        self.no_session = False
        self.records = 0  # read in this run's batches so far

    def committed(self, batch: Batch, based_on: tuple[Any, Any], report: IndexReport) -> None:
        if self.based_on is None:  # this commit inserted the session's row
            report.created.add(self.session_id)
        self.based_on = based_on
        if self.first:
            self.fresh = batch.fresh
            self.first = False
        if batch.rows is not None:
            self.read_any = True
            report.skipped_lines += batch.rows.skipped

    def holds_nothing(
        self, conn: sqlite3.Connection, tf: TranscriptFile, batch: Batch, report: IndexReport
    ) -> bool:
        """A file not in the index of which its reader knows no record yet is no
        session: no row. That is, nothing was taken from it (no message, command, file
        or edit), and none of its lines was a record (random bytes, an empty file; a
        file of metadata records alone, Claude Code's summaries, is still a session);
        for a reader that reads files whole, it holds a line that reader could not
        read, or nothing. Times, a folder or a model are no sign: readers take them
        from the file's stat and the agent's other files too (Cursor, Gemini CLI,
        Droid). At its end (its last batch) it is said, and its stat kept
        (``store.NOT_A_SESSION``), so it is not read again until it changes."""
        head = batch.head
        if self.based_on is not None or head.produced:
            return False
        if batch.records is None:
            if head.skipped == 0 and batch.offset > 0:
                return False
        else:
            self.records += batch.records
            if self.records:
                return False
        if batch.stat is not None:
            self.no_session = True
            report.not_sessions.append(str(tf.path))
            with _batch_transaction(conn):
                remember_not_a_session(conn, tf.session_id, (str(tf.path), *batch.stat))
        return True

    def finish(self, report: IndexReport) -> None:
        if self.no_session:
            return  # said as no session
        if self.session_id in report.created:
            return  # counted as added when its row was inserted
        if self.read_any or self.fresh:
            report.updated += 1
        else:
            report.count_unchanged(self.session_id)  # touched, or grown by a partial line


def _index_once(
    conn: sqlite3.Connection,
    tf: TranscriptFile,
    report: IndexReport,
    paths: PathIds,
    batch_bytes: int,
) -> None:
    row = _session_row(conn, tf)
    if _row_is_current(tf, row):
        report.count_unchanged(tf.session_id)  # not opened, not parsed
        return
    tally = _Tally(tf.session_id, row)
    # a transcript's records and rows are never cyclic garbage: the collector waits
    # (``collector``) until the transcript is read
    with collector_paused():
        for batch in read_batches(tf, _start_with_kept(conn, tf, row), batch_bytes):
            if tally.holds_nothing(conn, tf, batch, report):
                continue
            tally.committed(batch, _commit(conn, tf, batch, paths, tally.based_on), report)
    tally.finish(report)


def _commit(
    conn: sqlite3.Connection,
    tf: TranscriptFile,
    batch: Batch,
    paths: PathIds,
    based_on: tuple[Any, Any] | None,
) -> tuple[Any, Any]:
    path_text = str(tf.path)
    head = batch.head
    rows = batch.rows
    size, mtime_ns, inode = batch.stat or (batch.offset, NO_STAT, 0)
    fields: dict[str, Any] = {
        "transcript": path_text,
        "root": str(tf.root),
        "project": head.project,
        "started_at": head.started_at,
        "ended_at": head.ended_at,
        "started_epoch": epoch_of(head.started_at),
        "skipped_lines": head.skipped,
        "n_messages": head.n_messages,
        "n_commands": head.n_commands,
        "n_edits": head.n_edits,
        "size": size,
        "mtime_ns": mtime_ns,
        "inode": inode,
        "offset": batch.offset,
        "head_hash": batch.read_hash,
        "state": pack(batch.state),  # unconfirmed writes' content makes some states large
        "model": head.model,
    }
    prompt_by_sql = False
    if batch.fresh:
        # Read from scratch, this batch holds every row of the session: its first
        # request in step order is among them (no query of the rows just written).
        fields["first_prompt"] = first_request(rows)
    elif rows is not None and rows.has_user:
        prompt_by_sql = True  # new requests beside the ones the index holds
    with _batch_transaction(conn):
        now = conn.execute(
            "SELECT sid, offset, transcript FROM sessions WHERE session_id=?", (tf.session_id,)
        ).fetchone()
        current = (now[1], now[2]) if now else None
        if current != based_on:
            raise _Moved()
        if now is None:
            # one statement for a new session's row (a small session is mostly overhead)
            cur = conn.execute(
                f"INSERT INTO sessions(session_id, source, {', '.join(fields)})"
                f" VALUES (?, ?{', ?' * len(fields)})",
                (tf.session_id, tf.agent, *fields.values()),
            )
            sid = int(cur.lastrowid or 0)
        else:
            sid = int(now[0])
            if batch.fresh:
                clear_session_rows(conn, sid)
            conn.execute(
                f"UPDATE sessions SET {', '.join(f'{k}=?' for k in fields)} WHERE sid=?",
                (*fields.values(), sid),
            )
        if rows is not None:
            write_rows(conn, sid, rows, paths)
        erase_record(conn)  # a resident server's watch no longer vouches for the index
        if prompt_by_sql:
            conn.execute(
                "UPDATE sessions SET first_prompt=(SELECT text FROM messages"
                " WHERE id BETWEEN ? AND ? AND role=? ORDER BY step, id LIMIT 1)"
                " WHERE sid=?",
                (*message_ids(sid), USER_CODE, sid),
            )
    return (batch.offset, path_text)


USER_CODE = role_code("user")


def first_request(rows: ChunkRows | None) -> str | None:
    """The text of the first user message of ``rows`` in step order (the
    ``first_prompt`` the SQL query over the session's messages gives)."""
    first: tuple[int, int, str] | None = None
    for ordinal, step, role, text, *_ in rows.messages if rows is not None else ():
        if role == USER_CODE and (first is None or (step, ordinal) < first[:2]):
            first = (step, ordinal, text)
    return None if first is None else first[2]


# -- reading in worker processes ------------------------------------------------------------


def default_jobs() -> int:
    """Worker processes by default: the cores nothing else is using, up to
    ``MAX_DEFAULT_JOBS``. Workers only help with a core each to spare: on a loaded
    machine (two cores, a load of 2) they were slower than one process (3.75 s
    against 2.78 s on 107 MB), so then the run stays in this process."""
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):  # not on every platform
        load = 0.0
    idle = int(cores - load + 0.5)
    jobs = min(idle, MAX_DEFAULT_JOBS)
    return jobs if jobs >= 2 else 1


def _pending(tf: TranscriptFile, known: dict[str, tuple[Any, ...]]) -> int:
    """Roughly what reading ``tf`` will take: its size past the offset the index has."""
    try:
        size = os.stat(tf.path).st_size
    except OSError:
        return 0
    if reads_whole(tf):
        return size  # read from its start
    row = known.get(tf.session_id)
    offset = row[4] if row and row[0] == str(tf.path) else 0
    return max(0, size - offset)


def _index_in_workers(
    conn: sqlite3.Connection,
    files: list[TranscriptFile],
    report: IndexReport,
    paths: PathIds,
    jobs: int,
    batch_bytes: int,
    progress: Callable[[TranscriptFile], None] | None,
) -> None:
    """Transcripts read by ``jobs`` worker processes; rows written here, batch by batch.

    A transcript is read in tasks of at most ``TASK_BYTES``, one after another,
    each going on from where the last left off: a huge transcript never sits in
    memory whole, and no more than ``AHEAD`` tasks beyond the workers wait to be
    written. Transactions are as in one process (``_index_here``): a batch's rows,
    offset and state commit together, small transcripts' batches together up to
    ``GROUP_BYTES`` of transcript (a transaction each wrote every page it touched
    to the WAL again: 480 MB for an 18 MB index), so a kill, a rerun or a
    concurrent ``deja index`` behave the same. A transcript another run moved
    under this one is read again at the end, in this process.
    """
    run = _WorkerRun(conn, report, paths, batch_bytes, progress)
    # spawn: workers start clean (no copy of this process's SQLite connection or threads)
    pool = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_exit_with,
        initargs=(os.getpid(),),
    )
    try:
        with run.grouped():
            run.drive(pool, files, jobs)
    except BrokenProcessPool as exc:
        # A worker died (killed, out of memory) or could not start (a script that
        # calls this without an ``if __name__ == "__main__"`` guard). Every batch
        # committed so far stands; the rest is read here, from where it stopped.
        report.problems.append(f"worker processes failed ({exc}); read the rest in one process")
        run.retry += [tf for tf in files if tf.session_id not in run.finished]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    _index_here(conn, run.retry, report, paths, batch_bytes, progress)


def _exit_with(parent: int) -> None:
    """In each worker: end when the indexing process is gone.

    A ``deja index`` killed outright (SIGKILL, out of memory) cannot shut its
    pool down, and an idle worker would wait on its task queue forever.
    """

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="deja-parent-watch", daemon=True).start()


class _WorkerRun:
    """The writing side of a run with workers: what is in flight, done, to retry."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        report: IndexReport,
        paths: PathIds,
        batch_bytes: int,
        progress: Callable[[TranscriptFile], None] | None,
    ) -> None:
        self.conn = conn
        self.report = report
        self.paths = paths
        self.batch_bytes = batch_bytes
        self.progress = progress
        # a task's transcript, how its reading went, and the offset it starts from
        self.inflight: dict[Future[list[Batch]], tuple[TranscriptFile, _Tally, int]] = {}
        self.retry: list[TranscriptFile] = []  # moved by another run: read again here
        self.finished: set[str] = set()  # session ids this run is done with
        self.held = 0  # bytes of transcript the open transaction has written

    @contextlib.contextmanager
    def grouped(self) -> Iterator[None]:
        """The run's writes, a transaction per ``GROUP_BYTES`` of transcript read:
        committed at the end and when the workers fail (every batch written is
        whole), rolled back on any other error (one may have come mid-batch)."""
        try:
            yield
        except BrokenProcessPool:
            self._commit_group()
            raise
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
                self.paths.cache.clear()  # path ids of the rolled-back group are gone
            raise
        self._commit_group()

    def _commit_group(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("COMMIT")
        self.held = 0

    def done(self, tf: TranscriptFile) -> None:
        self.finished.add(tf.session_id)
        if self.progress is not None:
            self.progress(tf)

    def drive(self, pool: ProcessPoolExecutor, files: list[TranscriptFile], jobs: int) -> None:
        queue = list(reversed(files))
        while queue or self.inflight:
            while queue and len(self.inflight) < jobs + AHEAD:
                tf = queue.pop()
                row = _session_row(self.conn, tf)
                if _row_is_current(tf, row):
                    self.report.count_unchanged(tf.session_id)
                    self.done(tf)
                    continue
                start = _start_with_kept(self.conn, tf, row)
                self._submit(pool, tf, start, _Tally(tf.session_id, row))
            if not self.inflight:
                break
            finished, _ = wait(self.inflight, return_when=FIRST_COMPLETED)
            for future in finished:
                tf, tally, begin = self.inflight.pop(future)
                self._write(pool, future, tf, tally, begin)

    def _submit(
        self,
        pool: ProcessPoolExecutor,
        tf: TranscriptFile,
        start: ReadStart | None,
        tally: _Tally,
    ) -> None:
        future = pool.submit(read_task, tf, start, self.batch_bytes, TASK_BYTES)
        self.inflight[future] = (tf, tally, 0 if start is None else start.offset)

    def _write(
        self,
        pool: ProcessPoolExecutor,
        future: Future[list[Batch]],
        tf: TranscriptFile,
        tally: _Tally,
        begin: int,
    ) -> None:
        if tf.session_id in self.finished:
            return  # the rest of a transcript handed to the retry: read again there
        try:
            batches = future.result()
        except OSError as exc:
            self.report.cannot_read(tf, exc)
            self.done(tf)
            return
        last = batches[-1]
        going_on = last.stat is None  # the task's limit: the next task goes on from there
        if going_on:
            # Submitted before this task is written, so a worker reads it meanwhile:
            # a big transcript's tasks otherwise follow one another with the write
            # of each in between, one worker busy and the other idle.
            start = ReadStart(str(tf.path), last.offset, last.read_hash, last.state)
            self._submit(pool, tf, start, tally)
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN IMMEDIATE")  # the group's
        try:
            for batch in batches:
                if tally.holds_nothing(self.conn, tf, batch, self.report):
                    continue
                based_on = _commit(self.conn, tf, batch, self.paths, tally.based_on)
                tally.committed(batch, based_on, self.report)
        except _Moved:
            self.paths.cache.clear()
            self.retry.append(tf)
            self.finished.add(tf.session_id)  # by the retry at the end
            return
        self.held += last.offset - begin
        if self.held >= GROUP_BYTES:
            self._commit_group()
        if not going_on:
            tally.finish(self.report)
            self.done(tf)
