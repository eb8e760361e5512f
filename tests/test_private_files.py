"""Files deja creates are the user's alone (issue 39 item 6): the index holds raw
prompts, the logs and records name files and sessions. Under the usual umask
(022) each is 0600; the hook scripts stay 0755."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FIXTURES, deja, git

from deja_blame.hooks.log import HookLog


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_index_and_its_wal_are_0600(tmp_path: Path) -> None:
    db = tmp_path / "fresh" / "index.db"
    deja("index", "--db", str(db), "--root", str(FIXTURES / "demo"))
    made = [p for p in db.parent.iterdir() if p.name.startswith("index.db")]
    assert db in made
    assert {p.name: _mode(p) for p in made} == {p.name: 0o600 for p in made}
    assert _mode(db.parent) == 0o700


def test_the_hook_records_are_0600_and_the_hooks_0755(repo: Path) -> None:
    (repo / "a.py").write_text("x = 1\n")
    git(repo, "add", "a.py")
    git(repo, "commit", "-qm", "one")
    deja("hooks", "install", cwd=repo)
    ddir = repo / ".git" / "deja"
    records = [p for p in ddir.rglob("*") if p.is_file()]
    assert records and all(_mode(p) == 0o600 for p in records), [
        (p, oct(_mode(p))) for p in records
    ]
    assert _mode(repo / ".git" / "hooks" / "post-commit") == 0o755
    import pygit2

    HookLog("post-commit", pygit2.Repository(str(repo))).warn("a line")
    assert _mode(ddir / "hook.log") == 0o600
