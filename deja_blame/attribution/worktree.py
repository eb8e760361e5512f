"""The working tree's file: HEAD's answer for the lines it kept, the matcher for
its uncommitted lines (with their neighbours as context: stage 1's
``gather_windows``, then ``match_file``)."""

from __future__ import annotations

import sqlite3

from deja_blame.attribution.facts.gather import gather_windows, worktree_changes
from deja_blame.attribution.facts.source import FactSource
from deja_blame.attribution.match import match_file
from deja_blame.attribution.model import FileBlame, LineAttribution
from deja_blame.gitutil import FileVersion


def overlay(
    conn: sqlite3.Connection | None, head: FileBlame, work_data: bytes, root: str, relpath: str
) -> FileBlame:
    """The working file: HEAD's attribution for the lines it kept, the matcher for
    the uncommitted lines only (with their neighbours as context)."""
    work_texts = FileVersion(relpath, None, work_data).lines()
    head_texts = [ln.text for ln in head.lines]
    mapping = worktree_changes(root, relpath, head_texts, work_texts)
    lines: list[LineAttribution] = []
    for i, src in enumerate(mapping):
        if src is None:
            lines.append(
                LineAttribution(
                    line=i + 1, text=work_texts[i], commit=None, orig_path=relpath, orig_line=i + 1
                )
            )
        else:
            old = head.lines[src]
            lines.append(
                LineAttribution(
                    line=i + 1,
                    text=work_texts[i],
                    commit=old.commit,
                    session=old.session,
                    source=old.source,
                    confidence=old.confidence,
                    written_at=old.written_at,
                    commit_time=old.commit_time,
                    orig_path=old.orig_path,
                    orig_line=old.orig_line,
                    edit_ord=old.edit_ord,
                    via=old.via,
                )
            )
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
    new = [i for i, m in enumerate(mapping) if m is None]
    if conn is None or not new:
        return result
    source = FactSource(conn, root, None)
    for window in gather_windows(conn, root, relpath, lines):
        match_file(window, source)  # its uncommitted lines (the others are settled)
    return result
