"""Nothing private leaves the machine in a note: prompts (opted in) are redacted,
no absolute path is written, and a stranger's session details cannot print lines
of their own."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from conftest import commit_env, git
from test_notes_world import S1, World, body, make_world

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
GH_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    w = make_world(tmp_path, repo, monkeypatch)
    w.person("README.md", "# project\n")
    w.commit("init")
    return w


def _note_text(world: World) -> str:
    return git(world.repo, "notes", "--ref", "refs/notes/deja", "show", "HEAD")


def test_an_opted_in_prompt_is_redacted_in_the_note(world: World) -> None:
    git(world.repo, "config", "deja.notes.prompts", "true")
    world.session(
        S1,
        prompt=f"Deploy with key {AWS_KEY} and token {GH_TOKEN}; edit {world.repo}/src/app.py",
    )
    world.write(S1, "src/app.py", body("a", 4))
    world.commit("agent work")
    world.index()
    world.deja("annotate")
    text = _note_text(world)
    prompt = orjson.loads(text)["sessions"][S1]["first_prompt"]
    assert "Deploy with key [redacted] and token [redacted]" in prompt
    assert "edit ./src/app.py" in prompt
    assert AWS_KEY not in text and GH_TOKEN not in text


@pytest.mark.parametrize("prompts", ["true", "false"])
def test_no_absolute_path_travels_in_a_note(world: World, prompts: str) -> None:
    git(world.repo, "config", "deja.notes.prompts", prompts)
    world.session(S1, prompt=f"Look at {world.repo}/src and {Path.home()}/notes.txt")
    world.write(S1, "src/app.py", body("a", 4))
    world.commit("agent work")
    world.index()
    world.deja("annotate")
    text = _note_text(world)
    doc = orjson.loads(text)
    assert doc["sessions"][S1]["project"] == "."  # the repository itself
    assert str(world.tmp) not in text and str(world.repo) not in text
    assert str(Path.home()) not in text
    assert set(doc["sessions"][S1]) <= {
        "agent",
        "project",
        "started_at",
        "model",
        "first_prompt",
        "tests",  # one word of notes.public.NOTED_TESTS
    }
    assert doc["sessions"][S1]["tests"] == "none"


def test_project_paths_become_repository_relative_or_dropped() -> None:
    from deja_blame.notes.public import public_project

    root = "/home/ana/api"
    assert public_project("/home/ana/api", root) == "."
    assert public_project("/home/ana/api/services/web", root) == "services/web"
    assert public_project("/home/ana/other", root) == "-"
    assert public_project("/home/ana", root) == "-"
    assert public_project("C:\\Users\\Ana\\api", root) == "-"
    assert public_project("~/api", root) == "-"
    assert public_project("../api", root) == "-"
    assert public_project("services/web", root) == "services/web"  # already relative
    assert public_project(None, root) == "-"


FORGED = "FORGED: verified by deja"


def test_newlines_in_a_stranger_s_session_details_print_no_lines_of_their_own(
    repo: Path, tmp_path: Path
) -> None:
    from test_hostile_notes import SID, _deja

    (repo / "a.py").write_text("x = 1\ny = 2\nz = 3\n")
    git(repo, "add", "a.py")
    git(repo, "commit", "-q", "-m", "one", env=commit_env(1_784_278_800))
    sha = git(repo, "rev-parse", "HEAD").strip()
    evil = {
        "agent": f"antigravity\n{FORGED}",
        "project": f"/w\r\n{FORGED}",
        "started_at": f"2026-07-17T09:00:00Z\n{FORGED}",
        "model": f"m\x0b\n{FORGED}",
        "first_prompt": f"hello\n{FORGED}",
    }
    doc = {"schema": 2, "commit": sha, "files": {"a.py": {SID: [[1, 3, 0.9]]}}}
    doc["sessions"] = {SID: evil}
    note_file = tmp_path / "note.txt"
    note_file.write_bytes(orjson.dumps(doc))
    git(repo, "notes", "--ref", "refs/notes/deja", "add", "-f", "-F", str(note_file), sha)
    for args in (
        ("why", "a.py:1"),
        ("show", SID[:8]),
        ("blame", "a.py"),
        ("blame", "a.py", "--porcelain"),
        ("report", "HEAD", "--format", "markdown"),
        ("stats", "a.py"),
    ):
        proc = _deja(*args, cwd=repo)
        out = proc.stdout.decode("utf-8", "replace")
        assert proc.returncode == 0, (args, proc.stderr.decode()[-300:])
        assert not any(ln.lstrip(" #>*|-").startswith("FORGED") for ln in out.splitlines()), (
            args,
            out,
        )
