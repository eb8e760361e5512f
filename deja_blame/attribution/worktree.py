"""The working tree's file: HEAD's answer for the lines it kept, the matcher for
its uncommitted lines (with their neighbours as context)."""

from __future__ import annotations

import sqlite3

from deja_blame.attribution import cache
from deja_blame.attribution.facts.gather import WINDOW_CONTEXT
from deja_blame.attribution.facts.model import BlameLine, LineTexts
from deja_blame.attribution.facts.source import FactSource
from deja_blame.attribution.match import attribute_lines
from deja_blame.attribution.model import FileBlame, LineAttribution
from deja_blame.gitutil import FileVersion


def overlay(
    conn: sqlite3.Connection | None, head: FileBlame, work_data: bytes, root: str, relpath: str
) -> FileBlame:
    """The working file: HEAD's attribution for the lines it kept, the matcher for
    the uncommitted lines only (with their neighbours as context)."""
    work_texts = FileVersion(relpath, None, work_data).lines()
    head_texts = [ln.text for ln in head.lines]
    mapping = cache.git_changed_lines(root, relpath, len(work_texts))
    if mapping is None or any(
        m is not None and (m >= len(head_texts) or head_texts[m] != work_texts[i])
        for i, m in enumerate(mapping)
    ):
        mapping = cache.changed_lines(head_texts, work_texts)
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
    # windows around the uncommitted blocks, merged where they overlap
    windows: list[list[int]] = []
    for i in new:
        a, b = max(0, i - WINDOW_CONTEXT), min(len(lines), i + WINDOW_CONTEXT + 1)
        if windows and a <= windows[-1][1]:
            windows[-1][1] = b
        else:
            windows.append([a, b])
    source = FactSource(conn, root, None)
    for a, b in windows:
        part = lines[a:b]
        by_line: list[BlameLine | None] = [
            BlameLine(
                ln.line, ln.commit, ln.commit_time, ln.orig_path or relpath, ln.orig_line or ln.line
            )
            for ln in part
        ]
        texts = LineTexts.of([ln.text for ln in part])
        solid = {fp for fp, trivial in zip(texts.fps, texts.trivial) if not trivial}
        relpaths = {relpath} | {ln.orig_path for ln in part if ln.orig_path}
        paths = source.candidate_paths(relpaths)
        writes = source.load_writes(paths, set(texts.fps), solid=solid)
        fresh = [ln.commit is None for ln in part]
        attribute_lines(source, part, texts, by_line, writes, paths, None, only=fresh)
    return result
