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
from typing import Any

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


# -- the watch as a kept answer's look (``look.now``, ``watched.look_text``) ----------


def _appended(world: World, elsewhere: Path) -> None:
    world.session(S1).user("And a test, please.")  # a transcript grown, no folder touched


def _new_session(world: World, elsewhere: Path) -> None:
    world.session(S3).user("Please write more.")


def _removed(world: World, elsewhere: Path) -> None:
    shutil.rmtree(world.root / "brain" / S2)


def _transcript_removed(world: World, elsewhere: Path) -> None:
    next((world.root / "brain" / S2).rglob("*.jsonl")).unlink()


def _moved_in(world: World, elsewhere: Path) -> None:
    """A session's folder made elsewhere, then moved into ``brain/`` (a sync, a restore)."""
    from antigravity_writer import TranscriptWriter

    TranscriptWriter(elsewhere, S3, start=world.clock, workspace=str(world.repo)).user("Hi.")
    os.rename(elsewhere / "brain" / S3, world.root / "brain" / S3)


def _transcript_moved_in(world: World, elsewhere: Path) -> None:
    """A full transcript renamed into a session's ``logs/``, beside its compact one."""
    logs = next((world.root / "brain" / S1).rglob("*.jsonl")).parent
    made = elsewhere / "full.jsonl"
    made.write_bytes((logs / "transcript.jsonl").read_bytes())
    os.rename(made, logs / "transcript_full.jsonl")


WRITES = [_appended, _new_session, _removed, _transcript_removed, _moved_in, _transcript_moved_in]


def _word(roots: list[Path]) -> str:
    """A kept answer's look in a fork (the server read the events first)."""
    from deja_blame.index import look

    assert kernel.current is not None
    kernel.current.drain()
    return look.now([str(r) for r in roots])


@pytest.mark.parametrize("change", WRITES, ids=lambda f: f.__name__.strip("_"))
def test_the_watch_is_a_kept_answer_s_look_and_misses_no_write(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Any
) -> None:
    """In a fork of the server, a kept answer's look at the transcripts is the watch's
    word (no session stat'ed): the same while nothing was written, another after any
    write a refresh must read."""
    roots = [world.root]
    kernel.start(roots)
    stats = _stats(monkeypatch)
    first = _word(roots)
    assert first.startswith("watch ") and stats == []  # the watch vouches: no stat
    assert _word(roots) == first  # nothing written
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    change(world, elsewhere)
    assert _word(roots) != first, "a write the kept answer never read, served"


def test_where_the_watch_cannot_vouch_a_kept_answer_looks_at_every_session(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deja_blame.index import look

    roots = [world.root]
    kernel.start(roots)
    assert _word(roots).startswith("watch ")
    assert kernel.current is not None
    kernel.current.broken = True  # events lost
    stats = _stats(monkeypatch)
    assert look.now([str(world.root)]) == look.now([str(world.root)]) and stats
    kernel.current.broken = False
    stats.clear()
    other = world.tmp / "other"
    (other / "brain").mkdir(parents=True)
    assert not look.now([str(other)]).startswith("watch ")  # not the watch's root
    kernel.stop()
    assert not look.now([str(world.root)]).startswith("watch ") and stats  # no server


def test_the_refresh_hands_over_the_watch_s_word(world: World) -> None:
    """The refresh of a fork gives a waiting kept answer the watch's word, taken before
    it looked at any file, even where it looks at every session (the index's record is
    not this watch's)."""
    from deja_blame.index import look

    roots = [world.root]
    kernel.start(roots)
    conn = connect(world.db)
    for _ in range(2):  # everything looked at, then only what was written
        word = _word(roots)
        seen = look.wait()
        try:
            _refresh(conn, roots)
        finally:
            look.stop()
        assert seen.text == word and seen.roots == [str(world.root)]
    world.session(S1).user("More.")
    assert _word(roots) != word


def _kept_marked(db: Path) -> int:
    """Every kept answer's printed bytes made ``KEPT``: an answer served from one shows."""
    import zlib

    from deja_blame import printed

    conn = sqlite3.connect(db)
    with conn:
        rows = conn.execute(
            "SELECT key, data FROM attribution_cache WHERE key LIKE 'printed%'"
        ).fetchall()
        for key, data in rows:
            header, _ = printed._unpack(zlib.decompress(data))
            marked = zlib.compress(printed._pack(header, b"KEPT\n"))
            conn.execute("UPDATE attribution_cache SET data=? WHERE key=?", (marked, key))
    conn.close()
    return len(rows)


@pytest.mark.parametrize("change", [_appended, _new_session, _removed, _moved_in],
                         ids=lambda f: f.__name__.strip("_"))  # fmt: skip
def test_through_the_server_a_kept_answer_is_served_until_a_transcript_is_written(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Any
) -> None:
    """A fork of the server writes a kept answer where its watch says no transcript was
    written since the answer's refresh looked (no session stat'ed), and answers the
    whole way after any write."""
    import tempfile

    from conftest import deja

    runtime = Path(tempfile.mkdtemp(prefix="dj-", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    world.commit("S1 and S2")
    args = ("blame", "app.py", "--json")
    deja("server", "start", "--idle", "5")
    try:
        first = deja(*args, cwd=world.repo).stdout  # the whole way (cold: not kept)
        assert deja(*args, cwd=world.repo).stdout == first  # the whole way, kept
        assert _kept_marked(world.db) == 1
        assert deja(*args, cwd=world.repo).stdout == b"KEPT\n"  # nothing written: served
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        change(world, elsewhere)
        out = deja(*args, cwd=world.repo).stdout
        assert out != b"KEPT\n", "a write the kept answer never read, served"
        alone = deja(*args, cwd=world.repo, env={"DEJA_SERVER": "0", "DEJA_NO_CACHE": "1"})
        assert out == alone.stdout and b'"lines"' in first
        served = orjson.loads(deja("server", "status", "--json").stdout)["served"]
        assert served == 4  # every blame went through the server
    finally:
        deja("server", "stop")
        shutil.rmtree(runtime, ignore_errors=True)
