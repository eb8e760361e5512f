"""load_writes narrowed in SQLite: a trivial line's writes are read only from edits that
also wrote one of the file's non-trivial lines, and the answers stay what reading
every write gives (the writes left out still count for the sessions lines go to)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from test_matcher_scale import scenes

from deja_blame.attribution.facts import writes as matcher
from deja_blame.attribution.facts.model import BlameLine, LineTexts
from deja_blame.attribution.match import lines as match_lines_mod
from deja_blame.index.db import connect
from deja_blame.index.fingerprint import fingerprint, is_trivial
from deja_blame.index.store import insert_writes


def _index(tmp: Path, rows: list[tuple[Any, ...]]) -> sqlite3.Connection:
    path = tmp / "index.db"
    if path.exists():
        path.unlink()
    conn = connect(path)
    insert_writes(conn, rows)
    return conn


def _answers(
    conn: sqlite3.Connection,
    texts: list[str],
    blamed: list[BlameLine | None],
    paths: dict[int, bool],
    now: float,
    narrowed: bool,
) -> tuple[list[Any], int]:
    fps = {fingerprint(t) for t in texts}
    solid = {fingerprint(t) for t in texts if not is_trivial(t)} if narrowed else None
    writes = matcher.load_writes(conn, paths, fps, solid=solid)
    out = (
        match_lines_mod.match_lines(LineTexts.of(texts), blamed, writes, now=now)
        if writes
        else [None] * len(texts)
    )
    key = [None if m is None else (m.sid, m.edit_ord, m.idx, m.confidence, m.run) for m in out]
    return key, len(writes.info)


@settings(max_examples=300, deadline=None)
@given(scene=scenes())
def test_narrowed_writes_give_the_answers_of_every_write(
    scene: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    texts, blamed, rows, now = scene
    # every third edit was written to another clone's copy of the file (a suffix
    # match): the sessions matched only there must show they worked on this project
    rows = [(2 if r[3] % 3 == 2 else 1, *r[1:]) for r in rows]
    tmp = tmp_path_factory.mktemp("narrow")
    conn = _index(tmp, rows)
    paths = {1: True, 2: False}
    saved = matcher.NARROW_FROM
    matcher.NARROW_FROM = 0  # narrow however few the writes
    try:
        every, _ = _answers(conn, texts, blamed, paths, now, narrowed=False)
        narrowed, _ = _answers(conn, texts, blamed, paths, now, narrowed=True)
    finally:
        matcher.NARROW_FROM = saved
        conn.close()
    assert narrowed == every


def test_blank_lines_thousands_of_sessions_wrote_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One session wrote the function; 3,000 others each wrote blank lines and a ")"
    # in edits of other code (what they wrote around them is no longer in the file).
    block = ["def total(items):", "    s = 0", "", "    for x in items:", "        s += x", ")"]
    texts = ["import os", "", *block, ""]
    rows = [(1, fingerprint(t), 1, 0, k, 1000.0, 0) for k, t in enumerate(block)]
    for sid in range(2, 3002):
        for k, t in enumerate(["", ")", ""]):
            rows.append((1, fingerprint(t), sid, 0, k, 500.0 + sid / 10, 0))
        rows.append((1, fingerprint(""), 1, 1, 0, 900.0, 0))  # the session's own blank
    blamed: list[BlameLine | None] = [
        BlameLine(i + 1, "c" * 40, 2000, "a.py", i + 1) for i in range(len(texts))
    ]
    conn = _index(tmp_path, rows)
    every, read_all = _answers(conn, texts, blamed, {1: True}, 3000.0, narrowed=False)
    monkeypatch.setattr(matcher, "NARROW_FROM", 1000)
    narrowed, read = _answers(conn, texts, blamed, {1: True}, 3000.0, narrowed=True)
    assert narrowed == every
    assert [m and m[0] for m in narrowed][2:8] == [1] * 6
    assert read_all > 9000
    assert read == len(block)  # the session's edit of the function, nothing else


def test_a_file_of_trivial_lines_reads_every_write(tmp_path: Path) -> None:
    # ``.python-version``: one trivial line; the whole-file rule needs its writes
    texts = ["3.13"]
    rows = [(1, fingerprint("3.13"), 1, 0, 0, 100.0, 0)]
    conn = _index(tmp_path, rows)
    blamed: list[BlameLine | None] = [BlameLine(1, "c" * 40, 200, "a", 1)]
    got, read = _answers(conn, texts, blamed, {1: True}, 300.0, narrowed=True)
    assert read == 1 and got[0] is not None and got[0][0] == 1


def test_a_blank_line_left_in_the_index_still_makes_its_session_this_clones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Session 1 wrote the block to another clone's copy (a suffix match) and, in an
    # edit of nothing else, a blank line to this clone's own file: it worked here, so
    # it keeps the block however little of what it left elsewhere is in this file.
    block = ["def total(items):", "    return sum(items)", ""]
    texts = [*block, ""]
    rows = [(2, fingerprint(t), 1, 0, k, 1000.0, 0) for k, t in enumerate(block)]
    rows.append((1, fingerprint(""), 1, 1, 0, 1100.0, 0))
    conn = _index(tmp_path, rows)
    blamed: list[BlameLine | None] = [
        BlameLine(i + 1, "c" * 40, 2000, "a.py", i + 1) for i in range(len(texts))
    ]
    elsewhere = {fingerprint(f"other = {k}") for k in range(20)}
    monkeypatch.setattr(matcher, "NARROW_FROM", 0)
    fps = {fingerprint(t) for t in texts}
    for solid in (None, {fingerprint(t) for t in texts if not is_trivial(t)}):
        writes = matcher.load_writes(conn, {1: True, 2: False}, fps, solid=solid)
        out = match_lines_mod.match_lines(
            LineTexts.of(texts), blamed, writes, now=3000.0, final_fps=lambda sid: elsewhere
        )
        assert [m and m.sid for m in out][:2] == [1, 1]
