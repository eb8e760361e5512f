"""The transcripts a refresh left unread, some read later in the same answer.

Before an answer, the refresh (``refresh.py``) reads the new transcripts that name
the repository or the file asked about (``prescan.py``) and leaves the rest. Git
blame then says under which names the file was before a rename, which no needle
of the refresh could know: a session in a clone under another folder name that
wrote the file only under its old name names neither the repository nor the
file's current name, and the complete index gives it the lines it wrote
(``candidate_paths`` of the old name). ``read_naming`` reads those now.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deja_blame.index.prescan import Needle, Nowhere
    from deja_blame.transcripts.transcript_file import TranscriptFile


@dataclass
class _Left:
    """What the last refresh left unread, for the connection and thread it ran in
    (the answer that follows asks in them)."""

    conn: sqlite3.Connection
    thread: int
    roots: list[Path]
    files: list[TranscriptFile]
    searched: set[Needle] = field(default_factory=set)  # needles looked for already
    # what each file was found to hold nowhere (``prescan.split``)
    nowhere: Nowhere = field(default_factory=dict)


_left: _Left | None = None


def left_unread(
    conn: sqlite3.Connection,
    roots: list[Path],
    files: list[TranscriptFile],
    searched: tuple[Needle, ...] = (),
    nowhere: Nowhere | None = None,
) -> None:
    """Remember what this refresh of ``conn`` left unread (none: forget the last), the
    needles it holds none of (``searched``) and the byte strings each file was found
    to hold nowhere (``nowhere``: ``prescan.split``'s)."""
    global _left
    _left = (
        _Left(conn, threading.get_ident(), roots, list(files), set(searched), dict(nowhere or {}))
        if files
        else None
    )


def read_naming(conn: sqlite3.Connection, relpaths: Iterable[str]) -> int:
    """Index now the transcripts the refresh before this answer left unread that name
    one of ``relpaths`` (by file name: ``prescan.name_needles``). They name neither
    the repository nor the file asked about, so the writes the answer has read for
    that file are the same with them. Returns how many were read."""
    left = _left
    if left is None or left.conn is not conn or left.thread != threading.get_ident():
        return 0  # no refresh before this answer, or another connection's
    from deja_blame.index.prescan import found_by, name_needles, split

    # a file that holds none of the needles searched for holds none that contains one
    # (the refresh searched for the file's own name: ``src/click/core.py`` renamed
    # from ``click/core.py`` asks no new search)
    needles = tuple(n for n in name_needles(relpaths) if not found_by(left.searched, n))
    if not needles:
        return 0
    left.searched.update(needles)
    # searched as the refresh searches: a transcript found to name none of them is
    # remembered by its stat, and the next answer does not search it again
    found = split(conn, left.files, needles, left.nowhere)[0]
    if not found:
        return 0
    taken = {id(tf) for tf in found}
    left.files = [tf for tf in left.files if id(tf) not in taken]
    from deja_blame.index.db import wait_briefly
    from deja_blame.index.ingest import index_roots
    from deja_blame.output import warn

    waited = wait_briefly(conn)
    try:
        index_roots(conn, left.roots, transcripts=found, jobs=1)
    except sqlite3.OperationalError as exc:
        warn(f"could not refresh the index ({exc}); blaming with what it holds")
        return 0
    finally:
        conn.execute(f"PRAGMA busy_timeout = {waited}")
    return len(found)
