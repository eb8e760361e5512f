"""Under the resident server a refresh stats the transcripts the kernel saw written
since the index last looked at every one (``resident/watch.py``, ``index/watched.py``),
and never misses one: a session appended to, a new session, a transcript replaced, a
root moved, a clock set back; where the watch cannot say, everything is looked at."""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from test_notes_world import S1, S2, S3, World, body, make_world

from deja_blame.index import changes, watched
from deja_blame.index.db import connect
from deja_blame.resident import watch as kernel

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    w = make_world(tmp_path, repo, monkeypatch)
    w.write(S1, "app.py", body("a", 3))
    w.write(S2, "lib.py", body("b", 3))
    w.index()
    yield w
    kernel.stop()


def _stats(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The transcripts the Antigravity check stats (by session folder)."""
    seen: list[str] = []
    real = os.lstat

    def spy(path: object, *a: object, **kw: object) -> os.stat_result:
        if isinstance(path, str) and "/brain/" in path and path.endswith(".jsonl"):
            seen.append(path.split("/brain/")[1].split("/")[0])
        return real(path, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(changes.os, "lstat", spy)
    return seen


def _refresh(conn: sqlite3.Connection, roots: list[Path]) -> list[str]:
    """What a fork's refresh finds (the server read the events first), then read."""
    from deja_blame.index.ingest import index_roots

    assert kernel.current is not None
    kernel.current.drain()
    files, record = watched.changed(conn, roots)
    if files:
        index_roots(conn, roots, transcripts=files, jobs=1)
    if record is not None:
        record()
    return sorted(f.session_id for f in files)


def test_only_what_was_written_is_looked_at_and_nothing_is_missed(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots = [world.root]
    kernel.start(roots)
    conn = connect(world.db)
    stats = _stats(monkeypatch)
    assert _refresh(conn, roots) == []  # the first look is at everything
    assert sorted(set(stats)) == [S1, S2]
    stats.clear()
    assert _refresh(conn, roots) == [] and stats == []  # nothing written: nothing stat'ed
    world.write(S1, "app.py", body("a", 4))  # appended to
    assert _refresh(conn, roots) == [S1] and set(stats) == {S1}
    stats.clear()
    world.write(S3, "new.py", body("c", 2))  # a new session
    assert _refresh(conn, roots) == [S3] and set(stats) == {S3}
    # replaced: another file renamed over it, older and of the same size
    path = next(world.root.rglob(f"{S2}/**/*.jsonl"))
    before = path.stat()
    copy = path.with_name("copy.tmp")
    copy.write_bytes(path.read_bytes().replace(b"value_b_1", b"value_B_1"))
    os.utime(copy, ns=(before.st_atime_ns, before.st_mtime_ns - 10**9))
    os.replace(copy, path)
    assert _refresh(conn, roots) == [S2]
    # written in place with the clock set back: same size, an older time
    data = path.read_bytes()
    path.write_bytes(data.replace(b"value_B_1", b"value_b_1"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns - 5 * 10**9))
    assert _refresh(conn, roots) == [S2]
    assert _refresh(conn, roots) == []


def test_where_the_watch_cannot_say_everything_is_looked_at(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots = [world.root]
    kernel.start(roots)
    conn = connect(world.db)
    assert _refresh(conn, roots) == []
    stats = _stats(monkeypatch)
    # the root moved: the watch's is not the refresh's
    moved = tmp_path / "moved"
    os.rename(world.root, moved)
    assert _refresh(conn, [moved]) == [S1, S2]  # the index knew them at the old place
    assert sorted(set(stats)) == [S1, S2]
    os.rename(moved, world.root)
    # back: the index was written at the other place meanwhile (the record erased)
    assert _refresh(conn, roots) == [S1, S2]
    stats.clear()
    assert _refresh(conn, roots) == [] and stats == []
    # another server's watch: its record is not this one's
    kernel.start(roots)
    assert _refresh(conn, roots) == [] and sorted(set(stats)) == [S1, S2]
    # the root replaced by another folder of its name (no event: its brain/ is another)
    os.rename(world.root, moved)
    shutil.copytree(moved, world.root)
    world.write(S2, "lib.py", body("b", 4))  # appended to, in the new folder
    assert _refresh(conn, roots) == [S1, S2]  # (copies: other files, S1's too)
    # events lost in the kernel's queue
    assert kernel.current is not None
    kernel.current.broken = True
    stats.clear()
    assert _refresh(conn, roots) == [] and sorted(set(stats)) == [S1, S2]


def test_through_the_server_an_appended_session_is_read(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server watches the roots of its environment; its forks read what was
    appended since their last look, and answer with it."""
    import tempfile

    from conftest import deja

    runtime = Path(tempfile.mkdtemp(prefix="dj-", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    world.commit("S1 and S2")
    deja("server", "start", "--idle", "5")
    try:
        assert world.sessions_by_line("app.py") == [S1] * 3  # the first look: everything
        world.write(S3, "app.py", body("a", 3) + body("z", 1))  # a new session, not committed
        assert world.sessions_by_line("app.py") == [S1] * 3 + [S3]
        world.write(S1, "app.py", body("a", 3) + body("z", 1) + body("y", 1))  # appended to
        assert world.sessions_by_line("app.py") == [S1] * 3 + [S3, S1]
        served = orjson.loads(deja("server", "status", "--json").stdout)["served"]
        assert served == 3  # every blame went through the server
    finally:
        deja("server", "stop")
        shutil.rmtree(runtime, ignore_errors=True)
