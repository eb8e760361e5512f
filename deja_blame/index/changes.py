"""Which transcripts changed since the index read them: a stat per session.

Kept apart from ``ingest`` so that a command with nothing new to read (a warm
``deja blame`` or ``deja why``) imports neither the reader nor multiprocessing.
"""

from __future__ import annotations

import os
import sqlite3
import zlib
from pathlib import Path
from typing import Any

from deja_blame.index import look
from deja_blame.index.look import COMPACT_NAME
from deja_blame.index.look import Found as _Found
from deja_blame.index.look import transcript_in as _transcript_in
from deja_blame.index.queries import transcript_stats
from deja_blame.transcripts.antigravity.discover import AGENT
from deja_blame.transcripts.files import real_below
from deja_blame.transcripts.transcript_file import TranscriptFile

__all__ = [
    "changed_transcripts",
    "read_by_older_readers",
    "sessions_changed",
    "stored_reader_version",
]


def changed_transcripts(
    conn: sqlite3.Connection, roots: list[Path], others: bool = True
) -> list[TranscriptFile]:
    """The transcripts whose stat differs from what the index recorded (plain os calls:
    with a thousand sessions this is a few milliseconds, not the full walk's hundreds).

    ``roots`` are Antigravity's; with ``others``, the other agents' transcripts
    (found where they keep them) are checked too.
    """
    known = transcript_stats(conn)
    listed = [look.listing(str(root)) for root in roots]
    # a kept answer waiting for this look is given what it saw (``look.seen``)
    seen: list[_Found | None] | None = [] if look.waiting() else None
    found = _changed_sessions(known, roots, listed, seen)
    if seen is not None:
        look.seen([str(root) for root in roots], listed, seen)
    if others:
        found += _changed_others(known, conn)
    return found


def sessions_changed(
    conn: sqlite3.Connection, roots: list[Path], names: list[str]
) -> list[TranscriptFile]:
    """``changed_transcripts`` of the Antigravity sessions ``names`` alone (the ones a
    watch saw written: ``index/watched.py``), and of every other agent's."""
    known = transcript_stats(conn, ids=names)
    found = _changed_sessions(known, roots, [names] * len(roots)) if names else []
    return found + _changed_others(transcript_stats(conn, not_agent=AGENT), conn)


def _changed_sessions(
    known: dict[str, tuple[Any, ...]],
    roots: list[Path],
    names_by_root: list[list[str]],
    seen: list[_Found | None] | None = None,
) -> list[TranscriptFile]:
    """Of the sessions named below each root, those whose transcript is not as ``known``
    (each one's transcript as found, None where none, appended to ``seen``)."""
    if len(roots) == 1:
        return _changed_below(known, roots[0], names_by_root[0], seen)
    # each session's copies over the roots: the one written last is read (a stale
    # backup in an earlier root never hides the real transcript), as ingest does
    newest: dict[str, tuple[tuple[int, int], _Found, Path]] = {}
    for root, names in zip(roots, names_by_root):
        brain = os.path.join(str(root), "brain")
        for name in names:
            found = _transcript_in(f"{brain}/{name}/.system_generated/logs/")
            if seen is not None:
                seen.append(found)
            if found is not None:
                rank = (found[2], found[1])  # (mtime, size), as ``one_copy_each``
                if name not in newest or rank > newest[name][0]:
                    newest[name] = (rank, found, root)
    out: list[TranscriptFile] = []
    for name, (_, found, root) in newest.items():
        # a changed one's folders are checked before it is read (a linked session
        # folder, brain/ or logs/ is never followed); the rest cost a stat each
        if known.get(name) != found[:4] and real_below(root, Path(found[0])):
            out.append(_file(name, found, root))
    return out


def _changed_below(
    known: dict[str, tuple[Any, ...]],
    root: Path,
    names: list[str],
    seen: list[_Found | None] | None = None,
) -> list[TranscriptFile]:
    """``_changed_sessions`` of one root (nearly everyone's case): a session has one
    copy, so each transcript is compared as soon as it is found, with no table of
    every session's copies to fill and walk again (12 of 100 ms at 10,000 sessions)."""
    out: list[TranscriptFile] = []
    brain = os.path.join(str(root), "brain")
    for name in names:
        logs = f"{brain}/{name}/.system_generated/logs/"
        key = known.get(name)
        found = _transcript_in(logs, full_seen=key is None or key[0] != logs + COMPACT_NAME)
        if seen is not None:
            seen.append(found)
        if found is not None and key != found[:4] and real_below(root, Path(found[0])):
            out.append(_file(name, found, root))
    return out


def _file(name: str, found: _Found, root: Path) -> TranscriptFile:
    part = found[4]
    return TranscriptFile(
        session_id=name,
        path=Path(found[0]),
        root=root,
        agent=AGENT,
        parts=() if part is None else (Path(part),),
    )


def stored_reader_version(state: bytes | str | None) -> int:
    """The ``reader_version`` a session's stored reader state was written by (0: none
    said, an index from before versions; -1: a state that cannot be read)."""
    import orjson

    from deja_blame.index.store import unpack

    try:
        doc = orjson.loads(unpack(state)) if state else {}
        return int(doc.get("reader_version") or 0) if isinstance(doc, dict) else -1
    except (ValueError, TypeError, zlib.error):  # orjson.JSONDecodeError is a ValueError
        return -1


def read_by_older_readers(conn: sqlite3.Connection) -> set[str]:
    """The sessions an older reader of their agent indexed (the agent's ``reader_version``
    went up since): they are read again though their transcripts did not change (an
    Aider chat indexed before its edits were timed by their requests). Only the
    states of agents with a version are read: none for everyone else's sessions."""
    from deja_blame.transcripts.registry import AGENTS

    versions = {a.id: a.reader_version for a in AGENTS if a.reader_version}
    if not versions:
        return set()
    marks = ",".join("?" * len(versions))
    return {
        session_id
        for session_id, source, state in conn.execute(
            f"SELECT session_id, source, state FROM sessions WHERE source IN ({marks})",
            tuple(versions),
        )
        if stored_reader_version(state) < versions[source]
    }


def _changed_others(
    known: dict[str, tuple[Any, ...]], conn: sqlite3.Connection
) -> list[TranscriptFile]:
    from deja_blame.transcripts.registry import OTHER_AGENTS, discover

    for session_id in read_by_older_readers(conn):
        known.pop(session_id, None)  # as if never read
    out = []
    names = [a.id for a in OTHER_AGENTS]
    for tf in discover(names):
        try:
            key = (str(tf.path), *tf.stat_key())
        except OSError:
            continue
        if known.get(tf.session_id) != key:
            out.append(tf)
    return out
