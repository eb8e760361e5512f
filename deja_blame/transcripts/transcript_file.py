"""One session's transcript as discovery found it, and the roots an override variable names."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TranscriptFile:
    """One session's transcript: ``path``, plus ``parts`` read with it (another
    agent's sub-agent files, which belong to the session that started them).
    ``found_below``: found only by the search below the current folder
    (``index/below.py``), whose histories are never remembered as the user's own."""

    session_id: str
    path: Path
    root: Path
    agent: str  # the id of the agent that wrote it (``transcripts.registry``)
    parts: tuple[Path, ...] = ()
    found_below: bool = False

    def stat_key(self) -> tuple[int, int, int]:
        """(size, mtime_ns, inode) of the transcript; with parts, their total size
        and latest mtime (any part that grows or changes changes the key)."""
        st = os.stat(self.path)
        size, mtime = st.st_size, st.st_mtime_ns
        for part in self.parts:
            try:
                pst = os.stat(part)
            except OSError:
                continue
            size += pst.st_size
            mtime = max(mtime, pst.st_mtime_ns)
        return size, mtime, st.st_ino


def roots_named(env: Mapping[str, str], name: str) -> list[Path] | None:
    """The roots an override variable names (``:``-separated); None when it is unset or
    empty (then the agent's own places are looked at)."""
    value = env.get(name)
    if not value:
        return None
    return [Path(p).expanduser() for p in value.split(os.pathsep) if p]


def one_copy_each(
    found: Iterable[TranscriptFile], problems: list[str] | None = None
) -> list[TranscriptFile]:
    """One transcript per session: where a session is found in more than one root
    (a backup, a copy from another machine), the copy written last (then the
    larger), so a stale copy never hides the real one. First-found order otherwise."""
    kept: dict[str, tuple[TranscriptFile, tuple[int, int]]] = {}
    for tf in found:
        try:
            size, mtime, _ = tf.stat_key()
            rank = (mtime, size)
        except OSError:
            rank = (-1, -1)
        old = kept.get(tf.session_id)
        if old is None:
            kept[tf.session_id] = (tf, rank)
            continue
        if rank > old[1]:
            kept[tf.session_id] = (tf, rank)
        if problems is not None:
            chosen = kept[tf.session_id][0]
            problems.append(
                f"session {tf.session_id} found in more than one root; read {chosen.path}"
                " (written last)"
            )
    return [tf for tf, _ in kept.values()]
