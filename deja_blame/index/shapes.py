"""Edit shapes: identical edits' added lines kept once.

An edit's shape is the path it wrote and its added lines, (index, fingerprint) in
order. Edits of the same shape (a retried edit, a hunk replayed by many sessions:
click's ``core.py`` replayed by 10,000 sessions made 24,833 edits of 943 shapes)
share one set of ``shape_lines`` rows; each edit's row in ``edit_times`` names its
shape. ``queries.LINES`` joins the two back into one row per edit and added line,
as the lines table was before schema 15.

A shape is found by an 8-byte digest of its path and lines (the ``shapes`` table,
keyed by it), then checked row by row: two shapes with the same digest (crafted, or
by chance) get ids of their own. Ids are small integers, counted in ``meta``: each
row of ``shape_lines`` holds one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from struct import pack

from deja_blame.blake2 import blake2b

Pair = tuple[int, int]  # (index in the edit's added lines, fingerprint)

NEXT_KEY = "next_shape"  # meta: the id the next new shape takes


def digest(path_id: int, pairs: Sequence[Pair]) -> int:
    """The shape's digest: a signed 64-bit integer (SQLite INTEGER)."""
    flat = [path_id, len(pairs)]
    for idx, fp in pairs:
        flat += (idx, fp)
    data = pack(f"<{len(flat)}q", *flat)
    return int.from_bytes(blake2b(data, digest_size=8).digest(), "big", signed=True)


class ShapeIds:
    """The ids new shapes take, counted in ``meta``: read at the first new shape of a
    batch, written back once by ``save`` (inside the batch's transaction)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.next: int | None = None

    def take(self) -> int:
        if self.next is None:
            row = self.conn.execute("SELECT value FROM meta WHERE key=?", (NEXT_KEY,)).fetchone()
            self.next = int(row[0]) if row else 1
        self.next += 1
        return self.next - 1

    def save(self) -> None:
        if self.next is not None:
            self.conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (NEXT_KEY, str(self.next))
            )


def shape_of(conn: sqlite3.Connection, path_id: int, pairs: Sequence[Pair], ids: ShapeIds) -> int:
    """The id of the shape of an edit that wrote ``pairs`` to the path: an existing
    one of the same lines, else a new one (its id from ``ids``) with its
    ``shape_lines`` rows written."""
    key = digest(path_id, pairs)
    for shape, n in conn.execute("SELECT shape, n FROM shapes WHERE digest=?", (key,)).fetchall():
        if n == len(pairs) and _holds(conn, path_id, int(shape), pairs):
            return int(shape)
    shape = ids.take()
    conn.execute("INSERT INTO shapes(digest, shape, n) VALUES (?, ?, ?)", (key, shape, len(pairs)))
    conn.executemany(
        "INSERT OR IGNORE INTO shape_lines(path_id, fp, shape, idx) VALUES (?,?,?,?)",
        [(path_id, fp, shape, idx) for idx, fp in pairs],
    )
    return shape


def _holds(conn: sqlite3.Connection, path_id: int, shape: int, pairs: Sequence[Pair]) -> bool:
    """Whether the shape has each of ``pairs`` (with its count equal, the same lines)."""
    for idx, fp in pairs:
        row = conn.execute(
            "SELECT 1 FROM shape_lines WHERE path_id=? AND fp=? AND shape=? AND idx=?",
            (path_id, fp, shape, idx),
        ).fetchone()
        if row is None:
            return False
    return True


def distinct_pairs(pairs: Iterable[Pair]) -> list[Pair]:
    """An edit's (index, fingerprint) pairs in order, each once."""
    return sorted(set(pairs))


def drop_unused(conn: sqlite3.Connection, shapes: Iterable[tuple[int, int]]) -> None:
    """Remove those of ``shapes`` ((shape, path id) pairs) that no edit names any more,
    with their lines (read back for their digest: a path's rows, as forgetting is rare)."""
    gone: dict[int, list[int]] = {}
    for shape, path_id in sorted(set(shapes)):
        if not conn.execute("SELECT 1 FROM edit_times WHERE shape=? LIMIT 1", (shape,)).fetchone():
            gone.setdefault(path_id, []).append(shape)
    for path_id, dropped in gone.items():
        lines: dict[int, list[Pair]] = {}
        for shape, idx, fp in conn.execute(
            "SELECT shape, idx, fp FROM shape_lines WHERE path_id=?"
            " AND shape IN (SELECT value FROM json_each(?)) ORDER BY shape, idx",
            (path_id, "[" + ",".join(map(str, dropped)) + "]"),
        ):
            lines.setdefault(int(shape), []).append((int(idx), int(fp)))
        for shape, pairs in lines.items():
            conn.execute(
                "DELETE FROM shapes WHERE digest=? AND shape=?", (digest(path_id, pairs), shape)
            )
        conn.execute(
            "DELETE FROM shape_lines WHERE path_id=? AND shape IN (SELECT value FROM json_each(?))",
            (path_id, "[" + ",".join(map(str, dropped)) + "]"),
        )
