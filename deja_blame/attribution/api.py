"""The attribution API the commands and the editor server share: one file's blame.

``answer`` is the question ``deja blame`` and ``deja why`` ask (a text given for the
working file, git's own ``-L`` forms, several ranges), in one call; ``compute``
answers one range from the blame cache when it can, else finds the repository,
reads the notes and the file's versions, and blames the file against the index.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.attribution.answer import cached_blame, too_short
from deja_blame.attribution.facts.shared import given
from deja_blame.attribution.model import FileBlame
from deja_blame.collector import collector_paused
from deja_blame.errors import DejaError

if TYPE_CHECKING:
    from deja_blame.attribution.cache import RepoState


class _EarlyBlame:
    """The attribution cache has no answer: git blame the file at once, while the
    repository is opened and the modules imported (the blame takes that process);
    ``end`` stops it if nothing took it (a binary file, an error)."""

    def __init__(self) -> None:
        self.started: list[tuple[str, str, str]] = []

    def start(self, root: str, commit: str, relpath: str) -> None:
        from deja_blame.attribution.facts.git_blame import start_early

        self.started.append((root, commit, relpath))
        start_early(root, commit, relpath)

    def end(self) -> None:
        from deja_blame.attribution.facts.git_blame import drop_early

        for key in self.started:
            drop_early(*key)


BINARY_TEST_BYTES = 8000  # git's own test: a NUL among a file's first 8,000 bytes


def refuse_binary_at_once(file: Path) -> None:
    """A binary file of the working tree, refused before any work (the index's refresh,
    git blame started early, the whole file read: 0.9 s of CPU for a 50 MB one), by
    its first bytes, as ``gitutil.read_versions`` would after. Not a link, nor a path
    that leads out of the repository, nor a file ``--contents`` stands in for: the
    whole route says what those are."""
    from deja_blame.errors import BinaryFileError
    from deja_blame.gitutil import contents_given, repository_root

    if contents_given() or file.is_symlink() or not file.is_file():
        return
    root = repository_root(file)
    if root is None:
        return
    try:
        rel = Path(os.path.realpath(file)).relative_to(root).as_posix()
        with open(file, "rb") as fh:
            head = fh.read(BINARY_TEST_BYTES)
    except (ValueError, OSError):
        return
    if b"\0" in head:
        raise BinaryFileError(f"{rel} is a binary file: nothing to blame")


def answer(
    conn: sqlite3.Connection | None,
    file: Path,
    rev: str | None,
    ranges: Sequence[tuple[int, int] | str],
    refresh: bool,
    contents: bytes | None = None,
) -> FileBlame:
    """``deja blame``'s question about ``file``, as one process asks it: ``contents``
    (``--contents``) stands for the working tree's file while it is answered;
    ``ranges`` are the ``-L`` ranges (none: every line), as numbers or in git's own
    forms (``:funcname``, ``/regex/``: git finds their lines). Several ranges are one
    blame of the span they cover, then their lines, in order. The index is brought
    up to date first (``_before``), then git is asked what the question names."""
    from deja_blame.gitutil import blame_line_span, given_contents

    _before(conn, file, rev, refresh, contents_given=contents is not None)
    with given_contents(file, contents) if contents is not None else nullcontext():
        spans = [r if isinstance(r, tuple) else blame_line_span(file, rev, r) for r in ranges]
        if len(spans) <= 1:
            return _answered(conn, file, rev, spans[0] if spans else None, one_question=True)
        hull = (min(a for a, _ in spans), max(b for _, b in spans))
        result = _answered(conn, file, rev, hull, one_question=True)
    # the span's last line is the file's when the span reaches past it
    total = result.total_lines or (result.lines[-1].line if result.lines else 0)
    for a, _ in spans:
        if a > total:
            raise too_short(result.path, total)
    result.lines = [ln for ln in result.lines if any(a <= ln.line <= b for a, b in spans)]
    return result


def compute(
    conn: sqlite3.Connection | None,
    file: Path,
    rev: str | None,
    line_range: tuple[int, int] | None,
    refresh: bool,
    one_question: bool = False,
) -> FileBlame:
    """``file``'s answer. ``one_question``: the process asks this alone (``deja blame``,
    ``deja why``): the repository is read through git, without loading pygit2 (whose
    import is half of git's blame of a long file); a process asking many keeps it."""
    _before(conn, file, rev, refresh)
    return _answered(conn, file, rev, line_range, one_question)


def _before(
    conn: sqlite3.Connection | None,
    file: Path,
    rev: str | None,
    refresh: bool,
    contents_given: bool = False,
) -> None:
    """What comes before any question about ``file``: a directory or a binary file
    refused (``contents_given``: a text stands for the working file, whatever it is),
    and with ``refresh``, the index read up to date for the file's repository."""
    if file.is_dir() and not file.is_symlink():  # a link is a blob: its target's name
        raise DejaError(f"{file} is a directory; deja blame takes a file")
    if rev is None and not contents_given:
        refuse_binary_at_once(file)
    if conn is not None and refresh and _answerable(file, rev, contents_given):
        # (imported here: the transcript readers' discovery, which --no-refresh, the
        # editor and stats never need)
        from deja_blame.index.refresh import refresh_index

        refresh_index(conn, about=file)  # only what names the file's repository is read now


def _answerable(file: Path, rev: str | None, contents_given: bool) -> bool:
    """Whether the question can be answered at all, by stat alone: a working file that
    is not there, or a file in no repository, is refused by the answer's own error
    right after; reading new transcripts first would make a typo wait for every
    session (a first answer's refresh: minutes on a large transcript root)."""
    from deja_blame.gitutil import repository_root

    if rev is None and not contents_given and not os.path.lexists(file):
        return False
    # git finds a repository elsewhere only through its environment; a link is asked
    # where it stands (its target may be outside the repository: git blames the link)
    where = file.absolute().parent if file.is_symlink() else file
    return "GIT_DIR" in os.environ or repository_root(where) is not None


def _answered(
    conn: sqlite3.Connection | None,
    file: Path,
    rev: str | None,
    line_range: tuple[int, int] | None,
    one_question: bool,
) -> FileBlame:
    """``file``'s answer from the attribution cache, else blamed: the repository found
    and the file's versions read (``gitutil``), the notes read (``notes``), then the
    two stages (``blame.blame_versions``)."""
    early = _EarlyBlame()
    read: list[RepoState] = []  # the repository's root and HEAD, as the cache lookup read them
    if conn is not None:
        hit = cached_blame(conn, file, rev, line_range, on_miss=early.start, on_state=read.append)
        if hit is not None:
            return hit
    try:
        from deja_blame.attribution.blame import blame_versions
        from deja_blame.gitutil import locate, read_versions
        from deja_blame.notes.lookup import note_lookup_for, notes_besides
        from deja_blame.notes.store import read_tips

        # stage 1 asks the HEAD of the root it found (``gitread.head_of``): read already
        state = read[0] if read else None
        # one question's objects are never cyclic garbage: the collector waits (``collector``)
        paused = collector_paused() if one_question else nullcontext()
        with given(state.root, {"HEAD": state.head or ""}) if state else nullcontext(), paused:
            # in one descent: the repository and the file's versions (a binary one
            # refused), then the notes' refs, deja's notes lookup, git-ai's notes and
            # the history passes' record
            repo, rel = locate(file, rev, through_git=one_question)
            versions = read_versions(repo, rel, rev)
            tips = read_tips(repo)
            lookup = note_lookup_for(repo, conn, tips)
            gitai, history = notes_besides(repo, conn, lookup, tips)
            return blame_versions(
                repo, versions, conn, line_range, lookup, tips=tips, gitai=gitai, history=history
            )
    finally:
        early.end()  # a blame started early and not taken (an error, a binary file)
