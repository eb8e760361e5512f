"""The console script starts git's blame of ``deja blame FILE`` before deja loads
(attribution/facts/early.py); the blame path takes that process only when it asks
git for exactly the same command, and any other form of the command starts none."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git

from deja_blame.attribution import blame_options
from deja_blame.attribution.facts import early, git_blame


@pytest.fixture
def committed(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("a = 1\nb = 2\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "init")
    monkeypatch.chdir(repo / "src")
    yield repo
    early._end()  # nothing left running between tests


def test_the_blame_path_takes_the_early_blame(committed: Path) -> None:
    early.speculate(["blame", "app.py", "--json", "--no-refresh"])
    assert len(early._STARTED) == 1
    head = git(committed, "rev-parse", "HEAD").strip()
    # what the blame path starts for the file at HEAD, with the default options
    assert blame_options.current().default
    pending = git_blame._start_git(committed.resolve(), "src/app.py", head)
    assert early._STARTED == {}  # taken: the same command, to the argument
    assert [(b.line, b.commit) for b in pending.result()] == [(1, head), (2, head)]


@pytest.mark.parametrize(
    "argv",
    [
        ["blame", "-L", "1,2", "app.py"],  # a window: git blames another command
        ["blame", "-w", "app.py"],  # git's options
        ["blame", "HEAD~1", "app.py"],  # a revision
        ["blame", "missing.py"],
        ["why", "app.py:1"],
    ],
)
def test_other_forms_start_nothing(committed: Path, argv: list[str]) -> None:
    early.speculate(argv)
    assert early._STARTED == {}


def test_outside_a_repository_nothing_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "loose.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    early.speculate(["blame", "loose.py"])
    assert early._STARTED == {}


def test_a_blame_nobody_takes_is_ended(committed: Path) -> None:
    early.speculate(["blame", "app.py"])
    (proc,) = early._STARTED.values()
    early._end()
    assert proc.returncode is not None and early._STARTED == {}


CHECK = """
import sys
from deja_blame.entry import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stderr.write("pygit2 loaded: %s\\n" % ("pygit2" in sys.modules))
"""


def test_blame_and_why_of_a_file_never_load_pygit2(
    committed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-file question reads the repository through git (gitutil.open_repository's
    ``through_git``): loading libgit2 costs half of git's blame of a long file. The
    notes too: written here, read (and indexed) by the first blame, rows after."""
    import subprocess
    import sys

    from conftest import deja

    monkeypatch.setenv("DEJA_DB", str(tmp_path / "index.db"))
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(tmp_path / "none"))
    assert deja("annotate", "--all", cwd=committed).returncode == 0
    git(
        committed,
        "notes",
        "--ref",
        "refs/notes/deja",
        "add",
        "-f",
        "-m",
        '{"schema": 2, "commit": "", "files": {}, "sessions": {}}',
        "HEAD",
    )
    for argv in (["blame", "app.py", "--json"], ["blame", "app.py"], ["why", "app.py:1"]):
        proc = subprocess.run(
            [sys.executable, "-c", CHECK, *argv],
            cwd=committed / "src", capture_output=True, text=True,
        )  # fmt: skip
        assert "pygit2 loaded: False" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr and proc.stdout


def test_a_file_answered_lately_is_not_blamed_ahead(
    committed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warm blame would pay for a git blame nobody reads: the answers cached at
    HEAD are remembered (.git/deja/answered, a hint), and speculation skips them."""
    import stat
    import subprocess
    import sys

    monkeypatch.setenv("DEJA_DB", str(tmp_path / "index.db"))
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(tmp_path / "none"))
    early.speculate(["blame", "app.py"])
    assert len(early._STARTED) == 1  # never answered: blamed ahead
    early._end()
    proc = subprocess.run(
        [sys.executable, "-m", "deja_blame", "blame", "app.py", "--json"],
        cwd=committed / "src", capture_output=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    hint = committed / ".git" / "deja" / "answered"
    assert stat.S_IMODE(hint.stat().st_mode) == 0o600
    early.speculate(["blame", "app.py"])
    assert early._STARTED == {}  # its answer at HEAD is cached
    (committed / "src" / "app.py").write_text("a = 1\nb = 3\n")
    git(committed, "commit", "-q", "-am", "next")
    early.speculate(["blame", "app.py"])
    assert len(early._STARTED) == 1  # a new HEAD: not answered there yet


def test_git_that_stops_answering_is_one_line(
    committed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read through git (gitcli), a git that times out or dies is a DejaError (one
    line at the command's edge), not a traceback."""
    import subprocess

    from deja_blame.errors import DejaError
    from deja_blame.gitcli import CliRepository

    repo = CliRepository(committed)

    def hangs(*args: object, **kw: object) -> None:
        raise subprocess.TimeoutExpired("git", 300)

    monkeypatch.setattr(subprocess, "run", hangs)
    with pytest.raises(DejaError, match="git log stopped"):
        repo.git(["log", "-1"])
