"""Which transcripts changed since the index read them: a stat per session.

Kept apart from ``ingest`` so that a command with nothing new to read (a warm
``deja blame`` or ``deja why``) imports neither the reader nor multiprocessing.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from deja_blame.transcripts.roots import COMPACT_NAME, FULL_NAME, TranscriptFile

__all__ = ["changed_transcripts"]


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
