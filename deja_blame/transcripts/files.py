"""Finding an agent's session files under a root: the walk most agents need."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from deja_blame.transcripts.transcript_file import TranscriptFile


def walk_files(
    root: Path, wanted: Callable[[str, str], bool], problems: list[str] | None = None
) -> Iterator[Path]:
    """Regular files under ``root`` (sorted, symlinked folders not followed) for which
    ``wanted(directory, name)`` holds; unreadable folders are a problem, not an error."""

    def onerror(exc: OSError) -> None:
        if problems is not None:
            problems.append(f"cannot read {exc.filename}: {exc.strerror or exc}")

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror):
        dirnames.sort()
        for name in sorted(filenames):
            if wanted(dirpath, name):
                path = Path(dirpath) / name
                try:  # a regular file itself: a link or a FIFO is never a transcript
                    if stat.S_ISREG(os.lstat(path).st_mode):
                        yield path
                except OSError:
                    continue


def is_regular(path: Path) -> bool:
    """``path`` itself is a regular file (a link to one is not: never followed)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def files_as_sessions(
    paths: Iterator[Path], root: Path, agent: str, session_id: Callable[[Path], str]
) -> Iterator[TranscriptFile]:
    for path in paths:
        yield TranscriptFile(session_id=session_id(path), path=path, root=root, agent=agent)
