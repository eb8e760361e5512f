"""A warm ``deja blame FILE --json --no-refresh`` is the bytes the same question printed,
written before click and the engine load (``printed.py``), only while nothing the
answer depends on moved: each change below must send it the whole way, to the answer
deja gives with no cache at all."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import commit_env, deja, git

from deja_blame import printed

T0 = 1_784_278_800
SID = "5f0c1a2e-0000-4000-8000-00000000abcd"
APP = "def mean(xs):\n    total = sum(xs)\n    return total / len(xs)\n"

# The console script as ``deja`` runs it, saying afterwards whether click was loaded
# (it is not when the kept answer was written).
CHECK = """
import sys
from deja_blame.entry import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stderr.write("click loaded: %s\\n" % ("click" in sys.modules))
"""
ASK = ["blame", "app.py", "--json", "--no-refresh"]


@pytest.fixture
def worked(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A session wrote app.py; the person committed it ten minutes later; indexed."""
    from claude_writer import ClaudeWriter

    store = tmp_path / "claude"
    (store / "projects").mkdir(parents=True)
    monkeypatch.setenv("DEJA_CLAUDE_ROOT", str(store))
    w = ClaudeWriter(store, SID, start=T0, workspace=str(repo))
    w.user("write app.py")
    w.write_file(str(repo / "app.py"), APP)
    (repo / "app.py").write_text(APP)
    git(repo, "add", "app.py")
    git(repo, "commit", "-q", "-m", "mean", env=commit_env(T0 + 600))
    deja("index", cwd=repo)
    return repo


def _ask(repo: Path, args: list[str] = ASK, **env: str) -> tuple[bytes, bool]:
    """(stdout, whether click was loaded) of ``deja ARGS`` in ``repo``."""
    proc = subprocess.run(
        [sys.executable, "-c", CHECK, *args],
        cwd=repo,
        capture_output=True,
        env={**os.environ, **env},
        timeout=120,
    )
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    return proc.stdout, b"click loaded: True" in proc.stderr


def _uncached(repo: Path) -> bytes:
    return deja(*ASK, cwd=repo, env={"DEJA_NO_CACHE": "1"}).stdout


def _kept(repo: Path) -> bytes:
    """Asked until the answer is the kept one; it is."""
    first, _ = _ask(repo)
    again, loaded = _ask(repo)
    assert not loaded, "the same question, nothing changed: the kept answer loads nothing"
    assert again == first == _uncached(repo)
    assert b'"session": "' + SID.encode() in again  # the session's lines, as printed
    return again


def test_the_same_question_is_answered_by_what_it_printed(worked: Path) -> None:
    _kept(worked)
    out, loaded = _ask(worked)  # and again
    assert not loaded and out == _uncached(worked)


def _db() -> sqlite3.Connection:
    return sqlite3.connect(os.environ["DEJA_DB"])


def _edit_the_file(repo: Path) -> None:
    (repo / "app.py").write_text(APP + "# by hand\n")


def _commit_a_line(repo: Path) -> None:
    (repo / "app.py").write_text("import math\n" + APP)
    git(repo, "commit", "-qam", "math", env=commit_env(T0 + 1200))


def _another_session_writes(repo: Path) -> None:
    from claude_writer import ClaudeWriter

    w = ClaudeWriter(Path(os.environ["DEJA_CLAUDE_ROOT"]), SID.replace("abcd", "ef01"),
                     start=T0 + 60, workspace=str(repo))  # fmt: skip
    w.user("average it")
    w.write_file(str(repo / "app.py"), APP)
    deja("index", cwd=repo)


def _cache_emptied(repo: Path) -> None:
    with _db() as conn:  # the entries, not the kept answers: they alone must not answer
        conn.execute("DELETE FROM attribution_cache WHERE key NOT LIKE 'printed%'")


def _session_row_changed(repo: Path) -> None:
    with _db() as conn:
        conn.execute("UPDATE sessions SET model='another-model' WHERE session_id=?", (SID,))


def _a_note(repo: Path) -> None:
    git(repo, "notes", "--ref", "refs/notes/deja", "add", "-m", "{}", "HEAD")


def _late_notes_waiting(repo: Path) -> None:
    late = repo / ".git" / "deja" / printed.LATE_DIR
    late.mkdir(parents=True, exist_ok=True)
    (late / ("0" * 40)).write_text("")


@pytest.mark.parametrize(
    "change",
    [
        _edit_the_file,
        _commit_a_line,
        _another_session_writes,
        _cache_emptied,
        _session_row_changed,
        _a_note,
        _late_notes_waiting,
    ],
)
def test_what_the_answer_depends_on_sends_it_the_whole_way(
    worked: Path, change: Callable[[Path], None]
) -> None:
    _kept(worked)
    change(worked)
    out, loaded = _ask(worked)
    assert loaded, "the kept answer was written after its question's state changed"
    if change is not _late_notes_waiting:  # (whose note the whole way would try to write)
        assert out == _uncached(worked)


def test_another_environment_or_form_is_another_question(worked: Path) -> None:
    kept = _kept(worked)
    out, loaded = _ask(worked, TZ="Asia/Tokyo")
    assert loaded and out == kept
    for args in (["blame", "app.py", "--json"], ["blame", "app.py", "--no-refresh"]):
        assert _ask(worked, args)[1], args  # the refresh's or the text's: the whole way
    assert not _ask(worked)[1]


def test_an_answer_beside_a_warning_is_not_kept(repo: Path) -> None:
    (repo / "app.py").write_text(APP)
    git(repo, "add", "app.py")
    git(repo, "commit", "-q", "-m", "mean")
    for _ in range(3):  # no session indexed: each answer says so on stderr
        proc = subprocess.run(
            [sys.executable, "-c", CHECK, *ASK], cwd=repo, capture_output=True, timeout=120
        )
        assert b"no sessions are indexed" in proc.stderr
        assert b"click loaded: True" in proc.stderr


def test_the_constants_it_copies_are_the_originals() -> None:
    from deja_blame.attribution import cache
    from deja_blame.hooks.late import LATE_DIR
    from deja_blame.index.db import default_db_path

    assert printed.LATE_DIR == LATE_DIR
    assert cache.CACHE_VERSION == printed.CACHE_VERSION
    assert printed._db_path() == os.path.realpath(default_db_path())


def test_the_index_path_is_the_index_module_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deja_blame.index.db import default_db_path

    monkeypatch.delenv("DEJA_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert printed._db_path() == os.path.realpath(default_db_path())
    monkeypatch.delenv("XDG_DATA_HOME")
    assert printed._db_path() == os.path.realpath(default_db_path())
