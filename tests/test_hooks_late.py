"""Late notes: a commit whose hook could not finish its note gets it later, and says so.

The index's write lock held by another process past the hook's budget, the hook
killed at its budget, a machine that went down: the commit is recorded in
``.git/deja/late/`` and the next deja command, the next commit's hook, or
``deja annotate --pending`` writes its note; ``hooks status`` and ``doctor``
count what is left.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pygit2
import pytest
from conftest import git
from test_hooks_faults import commit, logged, warnings
from test_notes_world import S1, S2, World, body, file_claims, make_world

from deja_blame.hooks import late
from deja_blame.hooks.install import install


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    w = make_world(tmp_path, repo, monkeypatch)
    w.person("README.md", "# project\n")
    w.commit("init")
    w.deja("hooks", "install")
    git(repo, "config", "deja.hook.background", "false")
    git(repo, "config", "deja.hook.timeout", "8")  # python's start on a loaded machine
    w.index()
    return w


@contextmanager
def index_locked(world: World) -> Iterator[None]:
    """Another process holds the index's write lock (a long ``deja index``, say)."""
    holder = sqlite3.connect(world.db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def deja_dir(world: World) -> Path:
    return world.repo / ".git" / "deja"


def late_commits(world: World) -> list[str]:
    return [r.commit for r in late.late_records(deja_dir(world))]


def commit_while_locked(world: World) -> str:
    world.write(S1, "app.py", body("a", 3))
    with index_locked(world):
        proc, _ = commit(world, "agent work")
    sha = world.head()
    (line,) = warnings(proc)
    assert "locked" in line and f"the note of {sha[:12]} is late" in line
    assert "deja annotate --pending" in line
    assert logged(world)[-1].endswith(line)  # the hook log says the note is late
    assert world.note(sha) is None  # the session's lines were not in the index yet
    return sha


def test_a_commit_made_while_the_index_is_locked_gets_its_note_from_the_next_command(
    world: World,
) -> None:
    sha = commit_while_locked(world)
    assert late_commits(world) == [sha]
    status = world.deja("hooks", "status").stdout.decode()
    assert "1 commit waits for its note; run: deja annotate --pending" in status
    doctor = world.deja("doctor", check=False).stdout.decode()
    assert "late notes" in doctor and "1 commit waits for its note" in doctor
    # the lock is gone: any deja command in the repository completes the note first
    proc = world.deja("stats")
    assert f"wrote 1 late note ({sha[:12]})" in proc.stderr.decode()
    assert file_claims(world.note(sha), "app.py") == {1: S1, 2: S1, 3: S1}
    assert late_commits(world) == []
    assert "late notes" not in world.deja("hooks", "status").stdout.decode()


def test_the_next_commits_hook_completes_a_late_note(world: World) -> None:
    first = commit_while_locked(world)
    world.write(S2, "lib.py", body("l", 2))
    proc, _ = commit(world, "more agent work")
    assert f"wrote 1 late note(s): {first[:12]}" in proc.stderr
    assert file_claims(world.note(first), "app.py") == {1: S1, 2: S1, 3: S1}
    assert file_claims(world.note(), "lib.py") == {1: S2, 2: S2}
    assert late_commits(world) == []


def test_a_still_locked_index_leaves_the_note_late_and_annotate_pending_says_why(
    world: World,
) -> None:
    sha = commit_while_locked(world)
    # each command gives up on the lock after 2 s, not 30 s: the same answers, sooner
    short = {"env": {"DEJA_BUSY_TIMEOUT": "2"}, "check": False}
    with index_locked(world):
        proc = world.deja("blame", "app.py", **short)  # fails open: blame still answers
        assert proc.returncode == 0
        assert "1 commit waits for its note" in proc.stderr.decode()
        assert "could not refresh the index (database is locked)" in proc.stderr.decode()
        pending = world.deja("annotate", "--pending", **short)
    assert pending.returncode == 1
    assert "1 commit waits for its note" in pending.stderr.decode()
    # the command that failed is not offered as the fix; running it again later is
    assert "run: deja annotate --pending" not in pending.stderr.decode()
    assert "hint: run it again when the index is free" in pending.stderr.decode()
    assert late_commits(world) == [sha]
    done = world.deja("annotate", "--pending", "--json")
    assert b'"written"' in done.stdout and sha.encode() in done.stdout
    assert file_claims(world.note(sha), "app.py") == {1: S1, 2: S1, 3: S1}


def test_a_hook_killed_at_its_budget_leaves_a_late_note(world: World) -> None:
    hang = world.tmp / "hang"
    hang.write_text("#!/bin/sh\nsleep 30\n")
    hang.chmod(0o755)
    install(pygit2.Repository(str(world.repo)), python=str(hang))
    git(world.repo, "config", "deja.hook.timeout", "0.5")
    world.write(S1, "app.py", body("a", 3))
    proc, _ = commit(world, "agent work")
    (line,) = warnings(proc)
    assert "gave up after 0.5s" in line and "late" in line and "annotate --pending" in line
    sha = world.head()
    # the job owns its record until its deadline (budget + 5 s), then it is late
    (record,) = late.records(deja_dir(world))
    assert record.commit == sha and record.deadline > time.time()
    assert late.late_records(deja_dir(world), now=record.deadline + 1)[0].commit == sha
    # the machine went down / the clock moved past the deadline
    (deja_dir(world) / "late" / sha).write_text("0 post-commit being-written\n")
    world.deja("annotate", "--pending")
    assert file_claims(world.note(sha), "app.py") == {1: S1, 2: S1, 3: S1}
    assert late_commits(world) == []


def test_a_note_completed_by_its_own_hook_leaves_no_record(world: World) -> None:
    world.write(S1, "app.py", body("a", 3))
    proc, _ = commit(world, "agent work")
    assert warnings(proc) == []
    assert late.records(deja_dir(world)) == []
    assert file_claims(world.note(), "app.py") == {1: S1, 2: S1, 3: S1}


def test_records_are_never_followed(tmp_path: Path) -> None:
    """A link planted as the record directory or as a record, a FIFO, a stray name."""
    where = tmp_path / "deja"
    where.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (where / "late").symlink_to(elsewhere)
    sha = "a" * 40
    late.mark(where, sha, "post-commit", "test")
    assert list(elsewhere.iterdir()) == []  # not written through the link
    (where / "late").unlink()
    (where / "late").mkdir()
    os.mkfifo(where / "late" / ("b" * 40))
    (where / "late" / ("c" * 40)).symlink_to("/dev/zero")
    (where / "late" / "not-a-commit").write_text("0 x y\n")
    late.mark(where, sha, "post-commit", "test")
    started = time.monotonic()
    assert [r.commit for r in late.late_records(where)] == [sha]
    assert time.monotonic() - started < 2
    late.clear(where, sha)
    assert late.late_records(where) == []


def test_records_are_found_from_a_linked_worktree_without_opening_the_repository(
    world: World,
) -> None:
    wt = world.tmp / "wt"
    git(world.repo, "worktree", "add", "-q", "-b", "side", str(wt))
    assert late.any_records_near(wt / "sub") is None
    late.mark(deja_dir(world), world.head(), "post-commit", "test")
    (wt / "sub").mkdir()
    assert late.any_records_near(wt / "sub") == wt
    assert late.any_records_near(world.repo) == world.repo


def test_a_locked_index_costs_a_command_one_wait_not_one_per_cache_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caches are written after the answer: a held lock skips them at once
    (``deja blame`` waited 30 s for the refresh, then 30 s for each of two caches)."""
    from deja_blame.index import queries as Q
    from deja_blame.index.db import connect

    monkeypatch.delenv("DEJA_BUSY_TIMEOUT", raising=False)
    path = tmp_path / "index.db"
    conn = connect(path, create=True)
    assert conn.execute("PRAGMA busy_timeout").fetchone() == (30_000,)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    for write in (
        lambda: Q.cache_put(conn, "blame_cache", "k", b"data", 10),
        lambda: Q.cache_put(conn, "attribution_cache", "k", b"data", 10, token="t"),
        lambda: Q.cache_touch(conn, "attribution_cache", "k"),
    ):
        started = time.monotonic()
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            write()
        assert time.monotonic() - started < 10  # Q.CACHE_BUSY_MS, not the 30 s wait
        assert conn.execute("PRAGMA busy_timeout").fetchone() == (30_000,)  # restored
    holder.execute("ROLLBACK")
    Q.cache_put(conn, "blame_cache", "k", b"data", 10)  # free again: written
    assert Q.cache_get(conn, "blame_cache", "k") == (b"data",)


def test_deja_busy_timeout_sets_the_wait_and_a_bad_value_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deja_blame.errors import DejaError
    from deja_blame.index.db import connect

    monkeypatch.setenv("DEJA_BUSY_TIMEOUT", "2.5")
    assert connect(tmp_path / "a.db", create=True).execute("PRAGMA busy_timeout").fetchone() == (
        2500,
    )
    for bad in ("soon", "-1", "nan"):
        monkeypatch.setenv("DEJA_BUSY_TIMEOUT", bad)
        with pytest.raises(DejaError, match="DEJA_BUSY_TIMEOUT must be a number of seconds"):
            connect(tmp_path / "b.db", create=True)


def test_blame_behind_a_long_write_gives_up_its_refresh_in_seconds(world: World) -> None:
    """Another process holds the index's write lock (a long `deja index`): deja blame
    gives up reading its new transcript lines after a few seconds and answers with
    what the index holds, saying so (it waited the full 30 s, with no variable set)."""
    world.write(S1, "app.py", body("a", 3))
    world.commit("agent work")
    world.write(S2, "lib.py", body("b", 2))  # new transcript lines to read, not yet read
    env = {k: v for k, v in world.env.items() if k != "DEJA_BUSY_TIMEOUT"}
    with index_locked(world):
        started = time.monotonic()
        proc = world.deja("blame", "app.py", env={**env, "DEJA_BUSY_TIMEOUT": ""}, check=False)
        took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr.decode()
    assert "could not refresh the index (database is locked)" in proc.stderr.decode()
    assert took < 20, took
