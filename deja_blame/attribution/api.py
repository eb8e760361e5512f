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
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.attribution.answer import cached_blame, too_short
from deja_blame.attribution.facts.shared import given
from deja_blame.attribution.model import FileBlame
from deja_blame.collector import collector_paused
from deja_blame.errors import DejaError
from deja_blame.gitutil import open_repository, relative_path

if TYPE_CHECKING:
    import pygit2

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


def locate(
    file: Path, rev: str | None = None, through_git: bool = False
) -> tuple[pygit2.Repository, str]:
    """The repository of ``file`` and its path there. With ``rev``, a file whose folder
    the working tree no longer has is found as git blame finds it: from the nearest
    folder that exists. ``through_git``: ``gitutil.open_repository``'s."""
    start = file if file.exists() else file.parent
    if not start.exists():
        if rev is None:
            raise DejaError(f"no such file or directory: {file}")
        start = Path(os.path.abspath(file)).parent
        while not start.is_dir() and start != start.parent:
            start = start.parent
    repo = open_repository(start, through_git)
    return repo, relative_path(repo, file)


def given_contents(file: Path, data: bytes) -> AbstractContextManager[None]:
    """``git blame --contents``: while inside, ``data`` is the working tree's ``file``.
    It gives the text of a file git knows: HEAD's (git blame's rule) or the working
    tree's (deja also blames a file not committed yet). Any other path is git's
    error, with git's exit code: the text would otherwise be blamed as lines nobody
    committed, and the typo in the name never said."""
    from deja_blame.gitutil import try_git, workdir, worktree_contents

    repo, rel = locate(file)
    root = workdir(repo)
    if not os.path.lexists(root / rel):
        proc = try_git(root, ["cat-file", "-e", f"HEAD:{rel}"])
        if proc is None or proc.returncode != 0:
            raise DejaError(f"no such path '{rel}' in HEAD", exit_code=128)
    return worktree_contents(root, rel, data)


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
    blame of the span they cover, then their lines, in order."""
    from deja_blame.gitutil import blame_line_span

    with given_contents(file, contents) if contents is not None else nullcontext():
        spans = [r if isinstance(r, tuple) else blame_line_span(file, rev, r) for r in ranges]
        if len(spans) <= 1:
            return compute(conn, file, rev, spans[0] if spans else None, refresh, True)
        hull = (min(a for a, _ in spans), max(b for _, b in spans))
        result = compute(conn, file, rev, hull, refresh, one_question=True)
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
    if file.is_dir() and not file.is_symlink():  # a link is a blob: its target's name
        raise DejaError(f"{file} is a directory; deja blame takes a file")
    if rev is None:
        refuse_binary_at_once(file)
    early = _EarlyBlame()
    read: list[RepoState] = []  # the repository's root and HEAD, as the cache lookup read them
    if conn is not None and refresh:
        # (imported here: the transcript readers' discovery, which --no-refresh, the
        # editor and stats never need)
        from deja_blame.index.refresh import refresh_index

        refresh_index(conn, about=file)  # only what names the file's repository is read now
    if conn is not None:
        hit = cached_blame(conn, file, rev, line_range, on_miss=early.start, on_state=read.append)
        if hit is not None:
            return hit
    try:
        repo, rel = locate(file, rev, through_git=one_question)
        from deja_blame.attribution.blame import blame_versions
        from deja_blame.gitutil import read_versions
        from deja_blame.notes.lookup import note_lookup_for, notes_besides
        from deja_blame.notes.store import read_tips

        # stage 1 asks the HEAD of the root it found (``gitread.head_of``): read already
        state = read[0] if read else None
        # one question's objects are never cyclic garbage: the collector waits (``collector``)
        paused = collector_paused() if one_question else nullcontext()
        with given(state.root, {"HEAD": state.head or ""}) if state else nullcontext(), paused:
            # what the question reads of the notes and of git, in one descent, before
            # stage 1: the notes' refs, deja's notes lookup, git-ai's notes and the
            # history passes' record, then the file's versions (a binary one refused)
            tips = read_tips(repo)
            lookup = note_lookup_for(repo, conn, tips)
            gitai, history = notes_besides(repo, conn, lookup, tips)
            versions = read_versions(repo, rel, rev)
            return blame_versions(
                repo, versions, conn, line_range, lookup, tips=tips, gitai=gitai, history=history
            )
    finally:
        early.end()  # a blame started early and not taken (an error, a binary file)
