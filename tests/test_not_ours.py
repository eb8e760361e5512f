"""Never destroy what is not ours: a text file or another program's database named
as the index stays byte for byte what it was, through every command; a rebuild
is built beside the old index and swapped in, so a killed one loses nothing."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FIXTURES, commit_env, deja, git

COMMANDS = [
    ("sessions",),
    ("sessions", "--json"),
    ("show", "3f2a"),
    ("index",),
    ("index", "--rebuild"),
    ("index", "--rebuild", "--json"),
    ("doctor",),
    ("blame", "a.py"),
    ("why", "a.py:1"),
    ("annotate", "HEAD"),
    ("report", "HEAD~1..HEAD", "--format", "json"),
    ("notes", "push"),
]


def _foreign_sqlite(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
    conn.execute("INSERT INTO contacts VALUES ('Ada', '555-0100')")
    conn.commit()
    conn.close()


@pytest.fixture
def small_repo(repo: Path) -> Path:
    (repo / "a.py").write_text("x = 1\n")
    git(repo, "add", "a.py")
    git(repo, "commit", "-q", "-m", "one", env=commit_env(1_784_278_800))
    (repo / "a.py").write_text("x = 1\ny = 2\n")
    git(repo, "commit", "-qam", "two", env=commit_env(1_784_278_900))
    return repo


@pytest.mark.parametrize("kind", ["text", "sqlite", "empty-dir"])
def test_a_file_that_is_not_an_index_is_left_exactly_as_it_was(
    tmp_path: Path, small_repo: Path, kind: str
) -> None:
    target = tmp_path / "mine.db"
    if kind == "text":
        target.write_text("my notes, not an index\n")
    elif kind == "sqlite":
        _foreign_sqlite(target)
    else:
        target.mkdir()
    before = target.read_bytes() if target.is_file() else None
    listing = sorted(os.listdir(tmp_path))
    env = {"DEJA_DB": str(target), "DEJA_ANTIGRAVITY_ROOT": str(FIXTURES / "demo")}
    for args in COMMANDS:
        proc = deja(*args, env=env, cwd=small_repo, check=False)
        err = proc.stderr.decode()
        said = proc.stdout.decode() + err
        if args[0] in ("sessions", "show", "index", "doctor"):
            assert proc.returncode == 1, (args, said)
            assert "not a deja index" in said or "is a directory" in said, (args, said)
            assert "--rebuild" not in said, (args, said)  # the hint that destroyed files
        assert "Traceback" not in err, (args, err)
        if target.is_file():
            assert target.read_bytes() == before, args
        else:
            assert target.is_dir() and not os.listdir(target), args
        # no -wal, -shm or .rebuild left beside it
        assert sorted(os.listdir(tmp_path)) == listing, args


def test_a_rebuild_that_is_killed_leaves_the_old_index(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    env = {"DEJA_DB": str(db), "DEJA_ANTIGRAVITY_ROOT": str(FIXTURES / "demo")}
    deja("index", "-q", env=env)
    sessions = deja("sessions", "--json", env=env).stdout
    # a root so large that the rebuild is still reading when it is killed
    big = tmp_path / "big"
    logs = big / "brain" / "0f0f0f0f-0000-4000-8000-000000000001" / ".system_generated" / "logs"
    logs.mkdir(parents=True)
    line = (
        b'{"step_index": 0, "source": "USER_EXPLICIT", "type": "USER_INPUT",'
        b' "created_at": "2026-07-17T09:00:00Z", "content": "<USER_REQUEST>'
        + b"x" * 2000
        + b'</USER_REQUEST>"}\n'
    )
    (logs / "transcript.jsonl").write_bytes(line * 60_000)
    proc = subprocess.Popen(
        [sys.executable, "-m", "deja_blame", "index", "--rebuild", "-q", "--jobs", "1"],
        env={**os.environ, **env, "DEJA_ANTIGRAVITY_ROOT": str(big)},
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    rebuilding = Path(str(db) + ".rebuild")
    while not rebuilding.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)
    assert proc.poll() is None, "the rebuild ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert deja("sessions", "--json", env=env).stdout == sessions
    # and a rebuild that finishes replaces it
    deja("index", "--rebuild", "-q", env=env)
    assert deja("sessions", "--json", env=env).stdout == sessions
    assert not rebuilding.exists()
    assert not Path(str(db) + ".rebuild-wal").exists()


PY = f'"{sys.executable}" -m deja_blame'


def _in_own_mounts(
    script: str, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[bytes]:
    """``sh -c script`` in a private mount namespace (root: CI runs as root; else a
    user namespace), so its mounts vanish with it."""
    unshare = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]
    return subprocess.run(
        [*unshare, "sh", "-c", script],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        timeout=120,
    )


def test_read_only_commands_work_on_an_index_on_a_read_only_file_system(
    tmp_path: Path, small_repo: Path
) -> None:
    # a read-only bind mount in a private mount namespace (root: CI runs as root)
    db_dir = tmp_path / "ro"
    db_dir.mkdir()
    db = db_dir / "index.db"
    env = {"DEJA_DB": str(db), "DEJA_ANTIGRAVITY_ROOT": str(FIXTURES / "demo")}
    deja("index", "-q", env=env)
    before = db.read_bytes()
    script = (
        f'mount --bind "{db_dir}" "{db_dir}" && mount -o remount,ro,bind "{db_dir}" && '
        f"{PY} sessions --json && {PY} show 3f2a --json && {PY} blame a.py --json && "
        f"{PY} doctor --json"
    )
    proc = _in_own_mounts(script, small_repo, env)
    err = proc.stderr.decode()
    assert "unable to open" not in err and "damaged" not in err, err
    docs = proc.stdout.decode()
    assert proc.returncode in (0, 1), err  # doctor: 1 for the hooks this repo lacks
    assert '"3f2a9c1e-7b4d-4e8a-9c61-2d5f8a0b7e13"' in docs
    assert "read-only here" in docs  # doctor tells read-only from damage
    assert db.read_bytes() == before


def test_read_only_commands_work_on_an_index_on_a_full_disk(
    tmp_path: Path, small_repo: Path
) -> None:
    # a 3 MB tmpfs in a private mount namespace, filled up after the index is copied in
    db_dir = tmp_path / "full"
    db_dir.mkdir()
    built = tmp_path / "built.db"
    env = {"DEJA_DB": str(built), "DEJA_ANTIGRAVITY_ROOT": str(FIXTURES / "demo")}
    deja("index", "-q", env=env)
    db = db_dir / "index.db"
    script = (
        f'mount -t tmpfs -o size=3m tmpfs "{db_dir}" && cp "{built}" "{db}" && '
        f'(dd if=/dev/zero of="{db_dir}/fill" bs=64k 2>/dev/null; true) && '
        f"{PY} sessions --json && {PY} show 3f2a --json && {PY} blame a.py --json && "
        f"({PY} doctor --json; true) && ({PY} index -q --rebuild; echo index-rc=$?)"
    )
    proc = _in_own_mounts(
        script, small_repo, {"DEJA_DB": str(db), "DEJA_ANTIGRAVITY_ROOT": str(FIXTURES / "demo")}
    )
    err = proc.stderr.decode()
    out = proc.stdout.decode()
    assert proc.returncode == 0, err
    assert "disk I/O" not in err and "damaged" not in out, err + out
    assert '"3f2a9c1e-7b4d-4e8a-9c61-2d5f8a0b7e13"' in out
    assert "its disk is full" in out  # doctor tells a full disk from damage
    assert "index-rc=1" in out  # a write fails, with a one-line error
    assert "--rebuild" not in err  # and never recommends deleting a healthy index


@pytest.mark.parametrize("kind", ["text", "sqlite", "damaged"])
def test_rebuild_recovers_a_damaged_index_in_deja_s_own_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Whatever lies at ~/.local/share/deja/index.db deja put there: unreadable, it is a
    damaged index, and the hint's ``deja index --rebuild`` sets it aside and builds
    a new one (a file named with --db or DEJA_DB is still never touched: above)."""
    monkeypatch.delenv("DEJA_DB")
    db = Path(os.environ["XDG_DATA_HOME"]) / "deja" / "index.db"
    db.parent.mkdir(parents=True)
    env = {"DEJA_ANTIGRAVITY_ROOT": str(FIXTURES / "demo")}
    if kind == "text":
        db.write_bytes(b"\x00" * 4096)  # a zeroed first page
    elif kind == "sqlite":
        _foreign_sqlite(db)
    else:
        deja("index", "-q", env=env)
        data = db.read_bytes()
        db.write_bytes(data[:100] + b"\xff" * 4000 + data[4100:])  # the schema page
    before = db.read_bytes()
    proc = deja("sessions", env=env, check=False)
    assert proc.returncode == 1
    assert "deja index --rebuild" in proc.stderr.decode()  # the hint names the way out
    proc = deja("index", "--rebuild", env=env, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    assert "kept as" in proc.stderr.decode() and "Traceback" not in proc.stderr.decode()
    assert db.with_name("index.db.damaged-1").read_bytes() == before  # kept aside
    assert "3f2a9c1e" in deja("sessions", env=env).stdout.decode()
