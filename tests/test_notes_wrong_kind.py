"""A notes ref pointing at a blob, a tree or a tag (a fork's push, another tool's
mistake): one line, nothing written over it, no fast-import crash reports."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git
from test_notes_share import rev
from test_notes_world import S1, World, body, make_world

NOTES = "refs/notes/deja"
KINDS = ("blob", "tree", "tag")


def _object(repo: Path, kind: str) -> str:
    if kind == "blob":
        return _blob(repo)
    if kind == "tree":
        return git(repo, "rev-parse", "HEAD^{tree}").strip()
    git(repo, "tag", "-a", "-f", "-m", "a tag", "notes-tag", "HEAD")
    return git(repo, "rev-parse", "notes-tag").strip()


def _blob(repo: Path) -> str:
    import subprocess

    return (
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"],
            cwd=repo,
            input=b"not notes\n",
            capture_output=True,
        )
        .stdout.decode()
        .strip()
    )


def _crashes(repo: Path) -> list[str]:
    return [p.name for p in (repo / ".git").iterdir() if p.name.startswith("fast_import_crash")]


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    w = make_world(tmp_path, repo, monkeypatch)
    w.person("README.md", "# project\n")
    w.commit("init")
    w.write(S1, "app.py", body("a", 4))
    w.commit("agent work")
    w.index()
    return w


def _one_line_error(err: str) -> None:
    lines = [ln for ln in err.splitlines() if not ln.startswith("hint:")]
    assert len(lines) == 1 and "not a notes commit" in lines[0], err
    assert "Traceback" not in err and "unexpected error" not in err and "InvalidError" not in err


@pytest.mark.parametrize("kind", KINDS)
def test_a_local_notes_ref_of_the_wrong_kind_is_left_alone(
    world: World, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = _object(world.repo, kind)
    git(world.repo, "update-ref", NOTES, bad)
    proc = world.deja("annotate", check=False)
    assert proc.returncode == 1
    _one_line_error(proc.stderr.decode())
    assert rev(world.repo, NOTES) == bad and not _crashes(world.repo)
    # readers: one warning, the index still answers
    blame = world.deja("blame", "app.py", "--json")
    assert "not a notes commit" in blame.stderr.decode()
    assert world.sessions_by_line("app.py") == [S1] * 4
    # the hook: a warning in its log, the commit stands, nothing written
    world.deja("hooks", "install")
    git(world.repo, "config", "deja.hook.timeout", "60")  # a loaded machine: the hook gets there
    world.write(S1, "app.py", body("a", 5))
    monkeypatch.setenv("DEJA_HOOK_SYNC", "1")
    world.commit("more")
    log = (world.repo / ".git" / "deja" / "hook.log").read_text()
    assert "not a notes commit" in log and "unexpected error" not in log
    assert rev(world.repo, NOTES) == bad and not _crashes(world.repo)
    doctor = world.deja("doctor", check=False).stdout.decode()
    assert any(ln.startswith("FAIL  notes") and kind in ln for ln in doctor.splitlines())


@pytest.mark.parametrize("kind", KINDS)
def test_a_remote_notes_ref_of_the_wrong_kind_is_reported_in_one_line(
    world: World, tmp_path: Path, kind: str
) -> None:
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(world.repo), str(bare))
    git(world.repo, "remote", "add", "origin", str(bare))
    bad = _object(bare, kind)
    git(bare, "update-ref", NOTES, bad)
    world.deja("annotate")
    mine = rev(world.repo, NOTES)
    for args in (("notes", "fetch"), ("notes", "push")):
        proc = world.deja(*args, check=False)
        assert proc.returncode == 1, args
        _one_line_error(proc.stderr.decode())
        assert rev(world.repo, NOTES) == mine and rev(bare, NOTES) == bad
        assert not _crashes(world.repo)
