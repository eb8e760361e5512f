"""Before a hook writes a note: new transcript bytes into the index, this repository's
transcripts first, within the hook's time."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deja_blame.hooks.log import HookLog

if TYPE_CHECKING:
    import pygit2

PROBE_BYTES = 64 * 1024


def refresh(
    conn: sqlite3.Connection,
    log: HookLog,
    repo: pygit2.Repository | None = None,
    deadline: float | None = None,
) -> sqlite3.Connection | None:
    """Read new transcript bytes into the index; a busy index is used as it is.

    The transcripts of this repository's sessions go first (their first 64 KB
    name its directory), then the newest; reading stops at ``deadline`` (a
    first build of a big root goes on at the next commit).
    """
    from deja_blame.transcripts.antigravity.discover import discover_roots

    roots = discover_roots()
    try:
        from deja_blame.index.changes import changed_transcripts
        from deja_blame.index.ingest import index_roots
        from deja_blame.transcripts.registry import reads_whole

        files = changed_transcripts(conn, roots)
        if files and repo is not None:
            files = ours_first(files, str(Path(repo.workdir or ".").resolve()))
        done = 0
        while done < len(files):
            if deadline is not None and time.monotonic() > deadline:
                log.warn(
                    f"read {done} of {len(files)} new transcripts in the time budget;"
                    " the rest is read at the next commit (or now: deja index)"
                )
                break
            # in this process: the hook's time is bounded, worker start-up is not.
            # Another agent's transcript is read whole when it changed: one at a time,
            # so the deadline is checked between them.
            group = files[done : done + 16]
            if any(reads_whole(tf) for tf in group):
                group = [group[0]]
            index_roots(conn, roots, transcripts=group, jobs=1)
            done += len(group)
    except sqlite3.OperationalError as exc:
        log.warn(f"could not read new transcripts into the index ({exc}); using what it holds")
    except sqlite3.DatabaseError as exc:
        log.warn(f"the index is unreadable ({exc}); only carried notes are used")
        return None
    return conn


def ours_first(files: list[Any], root: str) -> list[Any]:
    """This repository's transcripts first (those naming its directory near their
    start), then the most recently written."""
    needle = root.encode("utf-8", "surrogateescape")

    def key(tf: Any) -> tuple[int, float]:
        try:
            with open(tf.path, "rb") as fh:
                head = fh.read(PROBE_BYTES)
            mtime = os.stat(tf.path).st_mtime
        except OSError:
            return (1, 0.0)
        return (0 if needle in head else 1, -mtime)

    return sorted(files, key=key)
