"""The working tree's file: HEAD's answer for the lines it kept, the matcher for
its uncommitted lines (with their neighbours as context): stage 1's
``gather_worktree``, then ``match_file``."""

from __future__ import annotations

import sqlite3

from deja_blame.attribution.facts.gather import gather_worktree
from deja_blame.attribution.facts.source import FactSource
from deja_blame.attribution.match import match_file
from deja_blame.attribution.model import FileBlame
from deja_blame.gitutil import FileVersion


def overlay(
    conn: sqlite3.Connection | None, head: FileBlame, work_data: bytes, root: str, relpath: str
) -> FileBlame:
    """The working file: HEAD's attribution for the lines it kept, the matcher for
    the uncommitted lines only (with their neighbours as context)."""
    work_texts = FileVersion(relpath, None, work_data).lines()
    lines, windows = gather_worktree(conn, root, relpath, head.lines, work_texts)
    result = FileBlame(
        path=relpath,
        rev=None,
        root=root,
        lines=lines,
        note_sessions=dict(head.note_sessions),
        authors=head.authors,  # a new line has no commit: HEAD's authors are all it needs
        cache_key=head.cache_key,
        blame_authors=head.blame_authors,
        keeps_authors=head.keeps_authors,
    )
    if conn is not None and windows:
        source = FactSource(conn, root, None)
        for window in windows:
            # its uncommitted lines (the others are settled)
            match_file(window, source.for_file(window))
    return result
