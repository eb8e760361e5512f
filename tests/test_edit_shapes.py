"""Identical edits keep their added lines once (the index's edit shapes, schema 15),
and every edit still reads as its own write."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_index import append, created_step, planner, transcript, user, write_call
from test_matcher_scale import scenes

from deja_blame.attribution.facts import writes as writes_mod
from deja_blame.attribution.facts.model import Twins, WriteSet
from deja_blame.index import ingest, shapes, store
from deja_blame.index.db import connect
from deja_blame.index.fingerprint import fingerprint, is_trivial
from deja_blame.index.queries import LINES

BODY = "def handler(event):\n    return event\n\n"


def _write(root: Path, sid: str, path: str, content: str) -> None:
    append(
        transcript(root, sid),
        user(0, f"Write {path}"),
        planner(1, "Writing.", write_call(path, content)),
        created_step(2, path),
    )


def _writes(conn: sqlite3.Connection) -> list[tuple[object, ...]]:
    return sorted(
        conn.execute(
            "SELECT s.session_id, l.path_id, l.fp, l.edit_ord, l.idx, l.at_epoch, l.by_user"
            f" FROM {LINES} l JOIN sessions s ON s.sid = l.sid"
        ).fetchall()
    )


def _count(conn: sqlite3.Connection, table: str) -> int:
    return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def test_identical_edits_share_one_shape_and_each_is_a_write(tmp_path: Path) -> None:
    """Three sessions write the same file the same way, a fourth another way: two
    shapes, the first's lines kept once, every session's write read back; a session
    removed keeps a shape the others still make, the last one takes its lines."""
    root = tmp_path / "root"
    for k in range(3):
        _write(root, f"same-{k}", "/work/api/handler.py", BODY)
    _write(root, "other", "/work/api/handler.py", "def other():\n    pass\n")
    conn = connect(tmp_path / "index.db")
    ingest.index_roots(conn, [root], jobs=1)
    assert _count(conn, "shapes") == 2
    assert _count(conn, "shape_lines") == 3 + 2  # each shape's added lines, once
    writes = _writes(conn)
    by_session: dict[object, list[int]] = {}
    for row in writes:
        by_session.setdefault(row[0], []).append(int(str(row[2])))
    assert set(by_session) == {"same-0", "same-1", "same-2", "other"}
    for k in range(3):
        assert by_session[f"same-{k}"] == sorted(
            [fingerprint("def handler(event):"), fingerprint("    return event"), fingerprint("")]
        )

    for k in range(2):
        store.remove_session(conn, f"same-{k}")
    assert _count(conn, "shapes") == 2 and _count(conn, "shape_lines") == 5
    assert [r for r in _writes(conn) if r[0] != "other"] == [r for r in writes if r[0] == "same-2"]
    store.remove_session(conn, "same-2")
    assert _count(conn, "shapes") == 1 and _count(conn, "shape_lines") == 2
    assert _writes(conn) == [r for r in writes if r[0] == "other"]
    conn.close()


def test_a_digest_shared_by_two_shapes_keeps_them_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two different edits whose digests are equal (crafted, or by chance) are two shapes:
    a shape is found by its digest and confirmed by its lines."""
    monkeypatch.setattr(shapes, "digest", lambda path_id, pairs: 7)
    root = tmp_path / "root"
    _write(root, "a", "/work/api/handler.py", BODY)
    _write(root, "b", "/work/api/handler.py", "def handler(event):\n    return None\n\n")
    _write(root, "c", "/work/api/handler.py", "def handler(event):\n")
    conn = connect(tmp_path / "index.db")
    ingest.index_roots(conn, [root], jobs=1)
    assert _count(conn, "shapes") == 3
    fps = {sid: sorted(int(str(r[2])) for r in _writes(conn) if r[0] == sid) for sid in "abc"}
    assert fps["a"] == sorted(fingerprint(t) for t in ("def handler(event):", "return event", ""))
    assert fps["b"] == sorted(fingerprint(t) for t in ("def handler(event):", "return None", ""))
    assert fps["c"] == [fingerprint("def handler(event):")]
    conn.close()


def test_writes_added_to_an_edit_by_hand_join_its_lines(tmp_path: Path) -> None:
    """``insert_writes`` (tests and benches building an index by hand) can add lines to an
    edit already there: the edit then has all of them, at its first time."""
    conn = connect(tmp_path / "index.db")
    store.insert_writes(conn, [(1, 11, 5, 0, 0, 100.0, 0), (1, 12, 5, 0, 1, 100.0, 0)])
    store.insert_writes(conn, [(1, 13, 5, 0, 2, 200.0, 1), (1, 11, 6, 0, 0, 300.0, 0)])
    rows = conn.execute(
        f"SELECT path_id, fp, sid, edit_ord, idx, at_epoch, by_user FROM {LINES} ORDER BY 3, 5"
    ).fetchall()
    assert rows == [
        (1, 11, 5, 0, 0, 100.0, 0),
        (1, 12, 5, 0, 1, 100.0, 0),
        (1, 13, 5, 0, 2, 100.0, 0),
        (1, 11, 6, 0, 0, 300.0, 0),
    ]
    assert _count(conn, "shapes") == 2  # the first shape of session 5's edit went
    conn.close()


# -- the writes read as shapes (``writes.load_writes``) -----------------------------------


def _old_twins(writes: WriteSet) -> dict[tuple[int, int], Twins]:
    """``WriteSet.twins`` as it grouped edits before the shapes: by each edit's pairs."""
    groups: dict[tuple[object, ...], list[tuple[int, int]]] = {}
    info = writes.info
    for edit, pairs in writes.by_edit.items():
        first = info[(edit[0], edit[1], pairs[0][0])]
        groups.setdefault((first[2], first[3], tuple(pairs)), []).append(edit)
    out: dict[tuple[int, int], Twins] = {}
    for members in groups.values():
        idx0 = writes.by_edit[members[0]][0][0]
        members.sort(key=lambda e: (-info[(e[0], e[1], idx0)][1], info[(e[0], e[1], idx0)][4]))
        twins = Twins(members, [-info[(e[0], e[1], idx0)][1] for e in members])
        for e in members:
            out[e] = twins
    return out


def _rows_read(
    conn: sqlite3.Connection,
    paths: dict[int, bool],
    fps: set[int],
    solid: set[int] | None,
    narrow_from: int,
) -> WriteSet:
    """The writes as ``load_writes`` read them before the shapes: the lines table's rows
    (``queries.LINES``) in its order, a path's trivial ones narrowed to the edits that
    also wrote a solid line where it has over ``narrow_from`` of them."""
    wanted = sorted(fps)
    solid_fps = set(solid or ()).intersection(wanted)
    trivial = set(wanted) - solid_fps if solid_fps else set()
    rows: list[tuple[int, int, int, int, int, float | None, int]] = []
    for pid in sorted(paths):
        mine = [
            r
            for r in conn.execute(
                f"SELECT path_id, fp, sid, edit_ord, idx, at_epoch, by_user FROM {LINES}"
                " WHERE path_id=? ORDER BY fp, sid, edit_ord, idx",
                (pid,),
            )
            if r[1] in fps
        ]
        if trivial and sum(1 for r in mine if r[1] in trivial) > narrow_from:
            with_solid = {(r[2], r[3]) for r in mine if r[1] in solid_fps}
            mine = [r for r in mine if r[1] in solid_fps or (r[2], r[3]) in with_solid]
        rows += mine
    out = WriteSet()
    out.add_rows(rows, paths)
    return out


@settings(max_examples=300, deadline=None)
@given(scene=scenes(), untimed=st.integers(0, 4), narrow=st.booleans(), solid_given=st.booleans())
def test_writes_read_as_shapes_are_the_rows_read_one_by_one(
    scene: Any,
    untimed: int,
    narrow: bool,
    solid_given: bool,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    texts, _, rows, _ = scene
    # every third edit wrote another clone's copy (a suffix match); some have no time
    rows = [
        (
            2 if r[3] % 3 == 2 else 1,
            r[1],
            r[2],
            r[3],
            r[4],
            None if r[3] % 5 == untimed else r[5],
            r[6],
        )
        for r in rows
    ]
    conn = connect(tmp_path_factory.mktemp("shapes") / "index.db")
    try:
        store.insert_writes(conn, rows)
        paths = {1: True, 2: False}
        fps = {fingerprint(t) for t in texts}
        solid = {fingerprint(t) for t in texts if not is_trivial(t)} if solid_given else None
        narrow_from = 0 if narrow else 10_000
        saved = writes_mod.NARROW_FROM
        writes_mod.NARROW_FROM = narrow_from
        try:
            got = writes_mod.load_writes(conn, paths, fps, solid=solid)
        finally:
            writes_mod.NARROW_FROM = saved
        want = _rows_read(conn, paths, fps, solid, narrow_from)
        assert list(got.info.items()) == list(want.info.items())
        assert list(got.by_fp.items()) == list(want.by_fp.items())
        assert list(got.by_edit.items()) == list(want.by_edit.items())
        assert list(got.blank_by_edit.items()) == list(want.blank_by_edit.items())
        assert list(got.edit_info.items()) == list(want.edit_info.items())
        assert got.any_suffix == want.any_suffix
        _same_twins(got.twins(), _old_twins(want))
        # the trivial writes left out, read for a commit window, join some edits of a
        # shape and not others: those edits are no longer twins
        got.read_window_writes({fingerprint(t) for t in texts}, {(1000.0, 2000.0)})
        _same_twins(got.twins(), _old_twins(got))
        # the rules that weigh edits read an entry an edit: what each of its writes says
        assert set(got.edit_info) == set(got.by_edit)
        for key, (_, at, by_user, exact, _) in got.info.items():
            assert got.edit_info[(key[0], key[1])] == (at, by_user, exact)
    finally:
        conn.close()


def _same_twins(new: dict[tuple[int, int], Twins], old: dict[tuple[int, int], Twins]) -> None:
    assert list(new) == list(old)
    assert all(new[e].members == old[e].members and new[e].neg_at == old[e].neg_at for e in old)


def test_an_edit_given_more_lines_is_no_longer_its_shapes_twin() -> None:
    a, b = fingerprint("x = 1"), fingerprint("y = 2")
    writes = WriteSet()
    # shape 7: one line, written by two sessions' edits
    writes.add_shapes([(1, [(a, 7, 0)])], {7: [(1, 0, 100.0, 0), (2, 0, 200.0, 0)]}, {1: True})
    assert writes.twins()[(1, 0)].members == [(2, 0), (1, 0)]
    writes.add_rows([(1, b, 1, 0, 1, 100.0, 0)], {1: True})  # a line more of one of them
    twins = writes.twins()
    assert twins[(1, 0)].members == [(1, 0)]
    assert twins[(2, 0)].members == [(2, 0)]
