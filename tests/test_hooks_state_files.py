"""Where deja keeps its own state (hooks' temporary files, .git/deja/jobs, the hook
log, the install record, the notes lock), a planted link or special file is never
followed: nothing written through it, no read that hangs or never ends."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git
from test_notes_world import S1, World, body, make_world


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    w = make_world(tmp_path, repo, monkeypatch)
    w.person("README.md", "# project\n")
    w.commit("init")
    return w


def test_install_never_writes_through_a_planted_link(world: World, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    hooks = world.repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in ("post-commit", "post-rewrite"):
        os.symlink(victim, hooks / f".{hook}.deja-tmp")
    (world.repo / ".git" / "deja").mkdir()
    os.symlink(victim, world.repo / ".git" / "deja" / "install.json")
    world.deja("hooks", "install")
    assert victim.read_text() == "mine\n"
    assert (
        not (hooks / "post-commit").is_symlink() and b"deja" in (hooks / "post-commit").read_bytes()
    )


def test_planted_job_markers_neither_hang_nor_fill_memory(world: World, tmp_path: Path) -> None:
    jobs = world.repo / ".git" / "deja" / "jobs"
    jobs.mkdir(parents=True)
    os.mkfifo(jobs / "post-commit-1")
    os.symlink("/dev/zero", jobs / "post-commit-2")
    far = tmp_path / "far.txt"
    far.write_text("99999999999 post-commit " + "a" * 40 + "\n")
    os.symlink(far, jobs / "post-commit-3")
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(world.repo), str(bare))
    git(world.repo, "remote", "add", "origin", str(bare))
    world.write(S1, "app.py", body("a", 2))
    world.commit("agent work")
    world.index()
    world.deja("annotate")
    proc = subprocess.run(
        [sys.executable, "-m", "deja_blame", "notes", "push"],
        cwd=world.repo,
        capture_output=True,
        timeout=60,  # a FIFO read would hang here for ever
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert "waiting for" not in proc.stderr.decode()  # none of them is a job


def test_the_hook_log_and_the_notes_lock_are_not_followed(world: World, tmp_path: Path) -> None:
    from deja_blame.gitutil import open_repository
    from deja_blame.hooks.log import HookLog
    from deja_blame.notes.store import writer_lock

    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    ddir = world.repo / ".git" / "deja"
    ddir.mkdir()
    os.symlink(victim, ddir / "hook.log")
    os.symlink(tmp_path / "created-by-deja", ddir / "notes.lock")
    repo = open_repository(world.repo)
    HookLog("post-commit", repo).warn("a warning")
    with writer_lock(repo):
        pass
    assert victim.read_text() == "mine\n"
    assert not (tmp_path / "created-by-deja").exists()
