"""Sealed test environment (after git-revise): fake HOME, no system git config,
fixed git identities and dates, and no test may touch the real ~ or index."""

from __future__ import annotations

import fcntl
import os
import pickle
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result

from deja_blame.attribution.facts.history import forget_histories
from deja_blame.cli import cli
from deja_blame.transcripts.registry import location_variables

REPO_ROOT = Path(__file__).resolve().parents[1]


def bench_module(stem: str, name: str | None = None) -> Any:
    """``bench/STEM.py`` loaded as a module (the benches are scripts, not a package),
    for tests of a bench's own counting."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name or stem, REPO_ROOT / "bench" / f"{stem}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FIXTURES = REPO_ROOT / "fixtures" / "antigravity"
# The transcript writers (tests and benchmarks, not the product) live beside the
# accuracy benchmark that also drives them.
if str(REPO_ROOT / "bench" / "accuracy") not in sys.path:
    sys.path.insert(0, str(REPO_ROOT / "bench" / "accuracy"))


def seal(monkeypatch: pytest.MonkeyPatch, home: Path, tmp_path: Path) -> None:
    """The sealing every test gets; a module-scoped fixture (built before the
    autouse one runs) applies it itself, in a ``MonkeyPatch.context()``."""
    home.mkdir(exist_ok=True)
    for var in list(os.environ):
        if var.startswith(("GIT_", "DEJA_")) or var in (
            "XDG_DATA_HOME",
            "XDG_STATE_HOME",
            "NO_COLOR",
            "CLAUDE_CONFIG_DIR",
            "CODEX_HOME",
            "GEMINI_CLI_HOME",
            *location_variables(),  # every agent's own variables that move its store
        ):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    # no resident server of the machine's answers a test's commands (resident/place.py:
    # a folder that does not exist holds none); tests of the server make their own
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "no-runtime-dir"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Person")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "person@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Person")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "person@example.com")
    monkeypatch.setenv("GIT_EDITOR", "false")
    # Every test chooses its index; one that forgets writes under the fake HOME,
    # never the real one.
    monkeypatch.setenv("DEJA_DB", str(tmp_path / "index.db"))
    # (an empty Antigravity root: a root a variable names must exist, or deja index fails)
    (tmp_path / "no-root-chosen" / "brain").mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(tmp_path / "no-root-chosen"))
    # deja's own fixtures are tracked by deja's repository, which makes them a
    # stranger's sessions (transcripts/provenance.py) unless trusted, as here
    monkeypatch.setenv("DEJA_TRUSTED", str(REPO_ROOT / "fixtures"))


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Any]
) -> Any:
    """``build(directory)``'s result, built once per test run and read back after.

    For an expensive module fixture: ``--dist worksteal`` hands a module's tests to
    whichever worker is idle, and each worker (each time it comes back to the
    module) would build the fixture again; test_hostile's took 5-8 s three times.
    The result must pickle; what it names on disk stays where ``build`` made it.
    """
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # shared by the run's workers
    done = base / f"built-once-{name}.pickle"
    with open(base / f"built-once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builds; the others wait, then read
        if done.exists():
            return pickle.loads(done.read_bytes())
        where = base / f"built-once-{name}"
        where.mkdir()
        result = build(where)
        done.write_bytes(pickle.dumps(result))
        return result


@pytest.fixture(autouse=True)
def sealed_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    seal(monkeypatch, tmp_path / "home", tmp_path)
    yield
    # the test's repositories are gone: their histories' git cat-file processes too
    # (a worker kept one per repository its tests blamed in process)
    forget_histories()


def run_deja(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> Result:
    """Run the click group in-process (fast; no main() error edge)."""
    return CliRunner().invoke(cli, list(args), input=input, env=env)


def deja(
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    input: bytes | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    """Run the real ``deja`` entry point in a subprocess (what scripts and hooks see)."""
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "deja_blame", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        input=input,
        capture_output=True,
        timeout=120,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"deja {' '.join(args)} exited {proc.returncode}\nstdout: {proc.stdout.decode()}\nstderr: {proc.stderr.decode()}"
        )
    return proc


def deja_json(*args: str, **kwargs: Any) -> Any:
    return orjson.loads(deja(*args, **kwargs).stdout)


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})}
    )
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def as_an_older_reader_left_it(db: Path, agent: str, version: int) -> None:
    """The stored reader states of ``agent``'s sessions as a reader from before reader
    versions wrote them (no ``reader_version``; the current one must be ``version``)."""
    import sqlite3

    from deja_blame.index.store import pack, unpack

    conn = sqlite3.connect(db)
    with conn:
        for sid, state in conn.execute("SELECT sid, state FROM sessions WHERE source=?", (agent,)):
            doc = orjson.loads(unpack(state))
            assert doc.pop("reader_version") == version
            conn.execute("UPDATE sessions SET state=? WHERE sid=?", (pack(orjson.dumps(doc)), sid))
    conn.close()


def commit_env(epoch: int) -> dict[str, str]:
    """Fixed author and committer dates for a commit at ``epoch`` (UTC)."""
    date = f"@{epoch} +0000"
    return {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty git repository with main as its branch."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "commit.gpgsign", "false")
    return path


def index_with_a_rival(
    db: Path,
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    jobs: int = 1,
    batch_bytes: int = 2_000,
) -> tuple[Any, Any]:
    """Index ``root`` into ``db`` (run A); right after A's first commit, run B (another
    connection, one process, default batches) indexes the same root to its end.

    Returns (A's report, B's report): what a run does when another moves its rows.
    """
    from deja_blame.index import db as index_db
    from deja_blame.index import ingest

    conn_a, conn_b = index_db.connect(db), index_db.connect(db)
    real_commit = ingest._commit
    b_reports: list[ingest.IndexReport] = []

    def interleaved(conn: Any, *args: Any, **kwargs: Any) -> Any:
        result = real_commit(conn, *args, **kwargs)
        if conn is conn_a and not b_reports:
            b_reports.append(ingest.index_roots(conn_b, [root], jobs=1))
        return result

    try:
        with monkeypatch.context() as patched:
            patched.setattr(ingest, "_commit", interleaved)
            a_report = ingest.index_roots(conn_a, [root], jobs=jobs, batch_bytes=batch_bytes)
    finally:
        conn_a.close()
        conn_b.close()
    (b_report,) = b_reports
    return a_report, b_report
