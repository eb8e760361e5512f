"""bench/history.py's fresh copy of the clean index each round (``fresh_index``): a
WAL the last round's process left beside the copy must not be read into it. Copied
over with ``shutil.copy``, the new file was read through the old round's frames:
a damaged index, and ``deja report`` exited 1 in a round now and then."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

from conftest import bench_module

HISTORY = bench_module("history")


def _index(path: Path, rows: int) -> None:
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE lines (n INTEGER, text TEXT)")
        conn.executemany("INSERT INTO lines VALUES (?, ?)", [(i, "x" * 40) for i in range(rows)])


def _with_stale_wal(path: Path) -> None:
    """``path`` as a round left it: its caches written, in a WAL that was never
    checkpointed (the process's connection was not closed to the end)."""
    _index(path, 50)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE blame_cache (key TEXT PRIMARY KEY, data BLOB)")
    conn.executemany(
        "INSERT INTO blame_cache VALUES (?, ?)", [(f"k{i}", b"y" * 900) for i in range(300)]
    )
    wal, shm = (path.with_name(path.name + s) for s in ("-wal", "-shm"))
    kept = wal.read_bytes(), shm.read_bytes()
    conn.close()  # checkpoints and removes the WAL: put back what the round left
    wal.write_bytes(kept[0])
    shm.write_bytes(kept[1])


def _read(path: Path) -> tuple[str, list[tuple[int, str]]]:
    with closing(sqlite3.connect(path)) as conn:
        check = conn.execute("PRAGMA integrity_check").fetchone()[0]
        return check, conn.execute("SELECT n, text FROM lines ORDER BY n").fetchall()


def test_a_round_starts_from_the_clean_index_whatever_the_last_round_left(
    tmp_path: Path,
) -> None:
    clean, db = tmp_path / "main-clean.db", tmp_path / "main.db"
    _index(clean, 2000)
    _with_stale_wal(db)
    HISTORY.fresh_index(clean, db)
    assert _read(db) == _read(clean) == ("ok", [(i, "x" * 40) for i in range(2000)])
    with closing(sqlite3.connect(db)) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert tables == {"lines"}  # nothing of the last round's caches
    assert db.stat().st_mode & 0o777 == 0o600


def test_the_copy_the_bench_made_before_was_read_through_the_stale_wal(tmp_path: Path) -> None:
    """What went wrong: the same leftovers, the clean index copied over them."""
    clean, db = tmp_path / "main-clean.db", tmp_path / "main.db"
    _index(clean, 2000)
    _with_stale_wal(db)
    shutil.copy(clean, db)
    try:
        assert _read(db) != _read(clean)
    except sqlite3.DatabaseError:
        pass  # "database disk image is malformed": what deja met
