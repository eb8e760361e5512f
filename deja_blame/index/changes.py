"""Which transcripts changed since the index read them: a stat per session.

Kept apart from ``ingest`` so that a command with nothing new to read (a warm
``deja blame`` or ``deja why``) imports neither the reader nor multiprocessing.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

from deja_blame.index.queries import transcript_stats
from deja_blame.transcripts.antigravity.discover import AGENT, COMPACT_NAME, FULL_NAME
from deja_blame.transcripts.transcript_file import TranscriptFile

__all__ = ["changed_transcripts"]


def changed_transcripts(
    conn: sqlite3.Connection, roots: list[Path], others: bool = True
) -> list[TranscriptFile]:
    """The transcripts whose stat differs from what the index recorded (plain os calls:
    with a thousand sessions this is a few milliseconds, not the full walk's hundreds).

    ``roots`` are Antigravity's; with ``others``, the other agents' transcripts
    (found where they keep them) are checked too.
    """
    known = transcript_stats(conn)
    out: list[TranscriptFile] = []
    # each session's copies over the roots: the one written last is read (a stale
    # backup in an earlier root never hides the real transcript), as ingest does
    newest: dict[str, tuple[tuple[int, int], str, os.stat_result, Path]] = {}
    stat_ = os.stat
    is_reg = stat.S_ISREG
    for root in roots:
        base = str(root)
        brain = os.path.join(base, "brain")
        try:
            names = sorted(os.listdir(brain))
        except OSError:
            continue
        for name in names:
            logs = f"{brain}/{name}/.system_generated/logs/"
            # the full transcript wins where both exist (format section 9)
            for path in (logs + FULL_NAME, logs + COMPACT_NAME):
                try:
                    st = stat_(path)
                except OSError:
                    continue
                if not is_reg(st.st_mode):
                    continue
                rank = (st.st_mtime_ns, st.st_size)
                if name not in newest or rank > newest[name][0]:
                    newest[name] = (rank, path, st, root)
                break
    for name, (_, path, st, root) in newest.items():
        if known.get(name) != (path, st.st_size, st.st_mtime_ns, st.st_ino):
            out.append(TranscriptFile(session_id=name, path=Path(path), root=root, agent=AGENT))
    if others:
        out += _changed_others(known)
    return out


def _changed_others(known: dict[str, tuple[Any, ...]]) -> list[TranscriptFile]:
    from deja_blame.transcripts.registry import OTHER_AGENTS, discover

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
