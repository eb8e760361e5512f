"""Identical edits keep their added lines once (the index's edit shapes, schema 15),
and every edit still reads as its own write."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from test_index import append, created_step, planner, transcript, user, write_call

from deja_blame.index import ingest, shapes, store
from deja_blame.index.db import connect
from deja_blame.index.fingerprint import fingerprint
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
