"""The edit ``deja why``, the editor's hover and MCP ``why`` show for a line answered
from a commit's note is the session's edit of *this* file: a session that wrote the
same text to two files had the other file's edit shown under this file's name.
When no edit of this file adds the text, the answer says so and shows none."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import git
from lsp_client import LspClient
from mcp_client import McpClient
from test_notes_world import S1, World, body, make_world

SHARED = "import os\n"
PATHS = SHARED + "\n\ndef home_dir():\n    return os.path.expanduser('~')\n"
ENV = SHARED + "\n\ndef env_value(name):\n    return os.environ.get(name)\n"


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return make_world(tmp_path, repo, monkeypatch)


@pytest.fixture
def servers() -> Iterator[list[Any]]:
    started: list[Any] = []
    yield started
    for s in started:
        s.kill()


def _why(world: World, target: str) -> tuple[dict[str, Any], str]:
    doc = orjson.loads(world.deja("why", target, "--json", "--no-refresh").stdout)
    text = world.deja("why", target, "--no-refresh").stdout.decode()
    return doc, text


def _paths_then_env(world: World) -> None:
    """S1 writes util/paths.py, then util/env.py whose first line is the same text;
    committed and annotated: the lines are answered from the note."""
    world.write(S1, "util/paths.py", PATHS)
    world.write(S1, "util/env.py", ENV)
    world.commit("util helpers")
    world.index()
    assert world.deja("annotate", "--no-refresh").returncode == 0
    assert world.note() is not None


def test_the_edit_shown_is_this_file_s_on_every_surface(world: World, servers: list[Any]) -> None:
    _paths_then_env(world)
    doc, text = _why(world, "util/paths.py:1")
    assert doc["session"] == S1 and doc["via"] == "note"
    assert doc["edit"]["path"] == str(world.repo / "util/paths.py")
    assert "home_dir" in str(doc["edit"]["hunks"]) and "env_value" not in str(doc["edit"])
    assert "+def home_dir():" in text and "env_value" not in text
    # the other file's line is its own edit
    doc, _ = _why(world, "util/env.py:1")
    assert doc["edit"]["path"] == str(world.repo / "util/env.py")

    mcp = McpClient(world.repo, world.env)
    servers.append(mcp)
    mcp.initialize()
    result = mcp.call("why", file="util/paths.py", line=1)
    assert result["isError"] is False
    (run,) = result["structuredContent"]["runs"]
    assert run["session"] == S1
    added = [a for h in run["edit"]["hunks"] for a in h["added"]]
    assert any("home_dir" in a for a in added) and not any("env_value" in a for a in added)

    lsp = LspClient(world.repo, world.env)
    servers.append(lsp)
    lsp.initialize(world.repo)
    uri = lsp.open(world.repo / "util/paths.py")
    hover = lsp.hover(uri, 0) or ""
    assert S1 in hover and "home_dir" in hover and "env_value" not in hover


LINE = "SETTINGS_ROOT = os.path.dirname(os.path.abspath(__file__))\n"


def _note(world: World, commit: str, rel: str, line: int) -> None:
    """A note made elsewhere giving line ``line`` of ``rel`` to S1."""
    note = {
        "schema": 2,
        "tool": "deja-blame 0.1.0",
        "commit": commit,
        "files": {rel: {S1: [[line, line, 0.9, world.clock]]}},
        "sessions": {S1: {"agent": "antigravity", "project": ".", "started_at": None}},
    }
    git(
        world.repo, "notes", "--ref", "deja", "add", "-f", "-m", orjson.dumps(note).decode(), commit
    )


def test_a_renamed_file_shows_the_edit_of_its_old_name(world: World) -> None:
    """Renamed after the line's commit (git blame follows it), or in the line's commit
    (git saw the rename): the session wrote the old name."""
    world.write(S1, "old_name.py", body("p", 6) + LINE)
    world.write(S1, "other.py", LINE + body("o", 2))
    world.commit("the session's files")
    world.index()
    assert world.deja("annotate", "--no-refresh").returncode == 0
    git(world.repo, "mv", "old_name.py", "new_name.py")
    world.commit("renamed")
    doc, text = _why(world, "new_name.py:7")
    assert doc["session"] == S1 and doc["via"] == "note"
    assert doc["edit"]["path"] == str(world.repo / "old_name.py")
    # the diff of the edit is headed with the name it wrote
    assert doc["edit"]["file"] == "old_name.py"
    assert "--- a/old_name.py\n+++ b/old_name.py" in text

    world.write(S1, "new_name.py", body("p", 6) + LINE + LINE.replace("ROOT", "HOME"))
    world.write(S1, "other.py", LINE + body("o", 2) + LINE.replace("ROOT", "HOME"))
    git(world.repo, "mv", "new_name.py", "third_name.py")
    commit = world.commit("renamed again, with a line of the session")
    world.index()
    _note(world, commit, "third_name.py", 8)
    doc, _ = _why(world, "third_name.py:8")
    assert doc["session"] == S1 and doc["via"] == "note"
    assert doc["edit"]["path"] == str(world.repo / "new_name.py")


def test_no_edit_of_this_file_holds_the_text_and_the_answer_says_so(
    world: World, servers: list[Any]
) -> None:
    """A note (made elsewhere) gives util/paths.py's line to S1, whose transcript here
    added that text only to util/env.py: no edit is shown, and the answer says why."""
    world.write(S1, "util/env.py", ENV)
    world.person("util/paths.py", PATHS)
    commit = world.commit("util helpers")
    world.index()
    _note(world, commit, "util/paths.py", 1)
    doc, text = _why(world, "util/paths.py:1")
    assert doc["session"] == S1 and doc["via"] == "note"
    assert "edit" not in doc
    assert doc["no_edit_of_file"] == {"added_elsewhere": "util/env.py"}
    assert (
        "no edit of util/paths.py in the session's transcript adds this line"
        " (it added the same text to util/env.py: another file's edit, not shown)"
    ) in text
    assert "The edit" not in text

    mcp = McpClient(world.repo, world.env)
    servers.append(mcp)
    mcp.initialize()
    result = mcp.call("why", file="util/paths.py", line=1)
    (run,) = result["structuredContent"]["runs"]
    assert "edit" not in run and run["no_edit_of_file"] == {"added_elsewhere": "util/env.py"}
    assert "no edit of util/paths.py" in result["content"][0]["text"]

    lsp = LspClient(world.repo, world.env)
    servers.append(lsp)
    lsp.initialize(world.repo)
    hover = lsp.hover(lsp.open(world.repo / "util/paths.py"), 0) or ""
    assert "no edit of" in hover and "env_value" not in hover


def test_the_edit_shown_is_the_one_made_at_the_note_s_time(world: World) -> None:
    """The session added the line's text to this file again after the commit (a later
    edit, not committed): the note's line was written by the first edit, and that is
    the one shown, not the session's latest edit holding the text (review 11 #6)."""
    _paths_then_env(world)
    first, _ = _why(world, "util/paths.py:1")
    world.write(S1, "util/paths.py", PATHS + "\n\nimport os\n")  # after the commit
    world.index()
    doc, _ = _why(world, "util/paths.py:1")
    assert doc["via"] == "note" and doc["session"] == S1
    assert doc["edit"]["at"] == first["edit"]["at"], (first["edit"], doc["edit"])
    assert "home_dir" in str(doc["edit"]["hunks"])


def test_an_edit_of_another_file_is_headed_with_that_file_s_name() -> None:
    """A line a block moved from another file gave a session: the edit shown is the
    other file's, and its diff is headed with that file's name, not the asked one's
    (the text said ``--- a/example_basic_test.go`` over an edit of
    ``example_hook_test.go``). The same path in another clone or on Windows is this file."""
    from deja_blame.attribution.explain import edit_file

    root = "/home/pat/shop"
    assert edit_file("/home/pat/shop/hooks/a_test.go", root, "basic_test.go") == "hooks/a_test.go"
    assert edit_file("/home/pat/shop/basic_test.go", root, "basic_test.go") == "basic_test.go"
    assert edit_file("/srv/clone/shop/src/x.py", root, "src/x.py") == "src/x.py"
    assert edit_file("C:\\Users\\pat\\shop\\src\\x.py", root, "src/x.py") == "src/x.py"
    assert edit_file("/elsewhere/y.py", root, "src/x.py") == "/elsewhere/y.py"
    # another file of this repository whose path ends with the asked one's
    assert edit_file("/home/pat/shop/src/setup.py", root, "setup.py") == "src/setup.py"
