"""Which transcripts changed, where the resident server's watch can say: a stat of the
sessions written since the index last looked at every one, not of every session.

``changes.changed_transcripts`` stats every transcript (the only way to ask the files
themselves: 120 ms of CPU at 10,000 sessions). A fork of the resident server holds a
copy of the server's watch (``resident/watch.py``): the Antigravity sessions the
kernel reported written, each with the event's number. The index records the watch
and the number up to which it has read everything (``RECORD``, once a refresh read
all it found); the next refresh stats only the sessions written
after that number, and every other agent's transcripts as before. Everything is
looked at, as without a server, when the record is not this watch's (another server,
none yet, or erased: every write of a session's row by anything else erases it,
``erase_record``), when the roots are not the watch's or a root's ``brain/`` is not
the folder watched, and when the watch cannot vouch (``TranscriptWatch.broken``).
No time is compared: a clock set back changes nothing.

The watch is also a kept answer's look (``look.py``, ``printed.py``): where it vouches
for the roots, "nothing was written since" is the same watch and the same last event
(``look_text``), with no stat of any session.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from deja_blame.index import look
from deja_blame.index.changes import changed_transcripts, sessions_changed
from deja_blame.transcripts.transcript_file import TranscriptFile

RECORD = "transcript-watch"  # meta: "<watch token> <event number>"


class Watch(Protocol):
    """What a fork reads of the server's watch (``resident.watch.TranscriptWatch``)."""

    roots: tuple[str, ...]  # real paths
    brains: list[tuple[int, int]]  # each root's brain/ watched: (device, inode)
    token: str
    seq: int  # events read before the fork
    dirty: dict[str, int]  # session -> the number of its last event
    broken: bool


# Set by the resident server before it forks (``resident/watch.py``); None elsewhere.
current: Watch | None = None


def changed(
    conn: sqlite3.Connection, roots: list[Path]
) -> tuple[list[TranscriptFile], Callable[[], None] | None]:
    """The transcripts whose stat differs from the index's, and what to call once the
    caller read every one of them (it records how far the index is up to date); None
    for the call where nothing can be recorded (no watch)."""
    w = current
    if w is None or w.broken or not _same_roots(w, roots):
        return changed_transcripts(conn, roots), None
    seq = w.seq  # what the server had read before this fork
    # a kept answer waiting for this look is given the watch's word (taken before
    # any file is looked at: a write since is a later event, in the next fork's word)
    look.seen_text([str(r) for r in roots], _word(w))
    since = _recorded(conn, w.token)
    if since is None:
        files = changed_transcripts(conn, roots)
    else:
        names = sorted(name for name, at in w.dirty.items() if at > since)
        files = sessions_changed(conn, roots, names)
    if since == seq:
        return files, None  # recorded already
    return files, lambda: _record(conn, w.token, seq)


def look_text(roots: list[str]) -> str | None:
    """The watch's look at ``roots`` for a kept answer (``look.now``): which watch, and
    the number of the last event that touched a session (a transcript appended, added,
    removed or moved in or out, a session folder made, removed or moved: each is an
    event naming its session). None where the watch cannot vouch for ``roots``."""
    w = current
    if w is None or w.broken or not _same_roots(w, [Path(r) for r in roots]):
        return None
    return _word(w)


def _word(w: Watch) -> str:
    return f"watch {w.token} {max(w.dirty.values(), default=0)}"


def _same_roots(w: Watch, roots: list[Path]) -> bool:
    """``roots`` are the watch's, and each one's ``brain/`` is the folder watched."""
    if tuple(os.path.realpath(r) for r in roots) != w.roots:
        return False
    for root, (dev, ino) in zip(roots, w.brains):
        try:
            st = os.stat(os.path.join(root, "brain"))
        except OSError:
            return False
        if (st.st_dev, st.st_ino) != (dev, ino):
            return False
    return True


def _recorded(conn: sqlite3.Connection, token: str) -> int | None:
    """The event number up to which this watch's index read everything; None: look at
    everything."""
    row = conn.execute("SELECT value FROM meta WHERE key=?", (RECORD,)).fetchone()
    if row is None:
        return None
    mine, _, seq = str(row[0]).partition(" ")
    return int(seq) if mine == token and seq.isdigit() else None


def _record(conn: sqlite3.Connection, token: str, seq: int) -> None:
    """Say the index read every transcript up to event ``seq`` (only when that moved:
    a write of one row), never waiting on another process's write."""
    try:
        waited = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            with conn:
                conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                    (RECORD, f"{token} {seq}"),
                )
        finally:
            conn.execute(f"PRAGMA busy_timeout = {waited}")
    except sqlite3.Error:
        pass  # busy or read-only: the next refresh looks at everything


def erase_record(conn: sqlite3.Connection) -> None:
    """A session's row written (inside the writer's transaction): what a watch's record
    says of the index may no longer hold (a row read at another root's path)."""
    conn.execute("DELETE FROM meta WHERE key=?", (RECORD,))
