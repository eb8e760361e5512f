"""``deja why`` on a line changed in the working tree and not committed yet
(NEWCOMER12 #2): it said "not committed yet ... a person, or unknown" and nothing
more, though the line it changed has a writer, which it showed once committed.
Now the history of the line of HEAD it changed, as after the commit."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from test_notes_world import S1, S2, World, body, make_world


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return make_world(tmp_path, repo, monkeypatch)


def test_an_uncommitted_change_still_shows_who_wrote_the_line_before(world: World) -> None:
    world.person("README.md", "# project\n")
    world.commit("readme")
    world.write(S1, "app.py", body("a", 6))
    sha = world.commit("the session's code")
    world.index()
    line4 = body("a", 6).splitlines()[3]
    assert world.sessions_by_line("app.py")[3] == S1

    # the person touches line 4 and line 6 is replaced by a wholly new one; neither committed
    lines = body("a", 6).splitlines()
    lines[3] += "  # checked"
    lines[5] = "print('something else entirely')"
    (world.repo / "app.py").write_text("\n".join(lines) + "\n")

    doc = orjson.loads(world.deja("why", "app.py:4", "--json", "--no-refresh").stdout)
    assert doc["commit"] is None and doc["session"] is None
    assert [(v["commit"], v["session"], v["text"]) for v in doc["history"]] == [(sha, S1, line4)]
    text = world.deja("why", "app.py:4", "--no-refresh").stdout.decode()
    assert f"an earlier version was written by session {S1}" in text, text
    assert "History (oldest first, by commit time)" in text
    last = text.rstrip("\n").splitlines()[-1]
    assert last.startswith("  00000000 not committed yet") and last.endswith("# checked")

    # a line no line of HEAD is like is new: no earlier version to show
    doc = orjson.loads(world.deja("why", "app.py:6", "--json", "--no-refresh").stdout)
    assert doc["history"] == [] and doc["session"] is None
    assert "earlier version" not in world.deja("why", "app.py:6", "--no-refresh").stdout.decode()

    # committed, the same history (and the new version last)
    world.commit("checked")
    doc = orjson.loads(world.deja("why", "app.py:4", "--json", "--no-refresh").stdout)
    assert [(v["commit"], v["session"]) for v in doc["history"]][:1] == [(sha, S1)]


def test_a_session_s_uncommitted_change_shows_the_line_it_changed_and_its_writer(
    world: World,
) -> None:
    world.person("README.md", "# project\n")
    world.commit("readme")
    world.write(S1, "app.py", body("a", 6))
    sha = world.commit("the first session's code")
    lines = body("a", 6).splitlines()
    lines[3] = lines[3].replace("scale=28", "scale=29")
    world.write(S2, "app.py", "\n".join(lines) + "\n")  # not committed
    world.index()
    doc = orjson.loads(world.deja("why", "app.py:4", "--json", "--no-refresh").stdout)
    assert (doc["commit"], doc["session"]) == (None, S2)
    assert [(v["commit"], v["session"]) for v in doc["history"]] == [(sha, S1)]
    text = world.deja("why", "app.py:4", "--no-refresh").stdout.decode()
    rows = text.split("History (oldest first, by commit time)\n", 1)[1].splitlines()
    assert rows[0].startswith(f"  {sha[:8]} ") and f" {S1[:8]} agy " in rows[0]
    assert rows[1].startswith("  00000000 not committed yet") and f" {S2[:8]} agy " in rows[1]


def test_a_line_a_session_of_another_clone_wrote_is_said_to_be_its_not_a_person_s(
    repo: Path, tmp_path: Path
) -> None:
    """A session that ran in another clone (a container's checkout at another path)
    wrote a file not committed here yet: the path's suffix alone is no evidence until
    a commit shows the session worked on this repository, so the line is nobody's, but
    why says which session wrote it and where, not only "a person, or unknown"
    (newcomer 16 #2)."""
    import json

    from conftest import commit_env, deja, git
    from test_other_agents import T0, iso

    (repo / "README").write_text("project\n")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "start", env=commit_env(T0))
    other = "/home/pat/src/\x1b[31mproject"  # another machine's folder, escaped when shown
    sid = "4f4f4f4f-0000-4000-8000-00000000b001"
    content = "def remote_three() -> int:\n    return 3\n"
    project = tmp_path / "home" / ".claude" / "projects" / "-home-pat-src-project"
    project.mkdir(parents=True)
    path = f"{other}/src/remote.py"
    records = [
        {"type": "user", "sessionId": sid, "cwd": other, "timestamp": iso(T0 + 60),
         "message": {"role": "user", "content": "Add remote_three."}},
        {"type": "assistant", "sessionId": sid, "cwd": other, "timestamp": iso(T0 + 61),
         "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t1",
                     "name": "Write", "input": {"file_path": path, "content": content}}]}},
        {"type": "user", "sessionId": sid, "cwd": other, "timestamp": iso(T0 + 62),
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                     "content": "File created"}]},
         "toolUseResult": {"type": "create", "filePath": path, "content": content}},
    ]  # fmt: skip
    (project / f"{sid}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (repo / "src").mkdir()
    (repo / "src" / "remote.py").write_text(content)
    env = {"DEJA_ANTIGRAVITY_ROOT": ""}
    doc = orjson.loads(deja("why", "src/remote.py:1", "--json", cwd=repo, env=env).stdout)
    assert doc["commit"] is None and doc["session"] is None
    assert doc["written_in_another_clone"] == {
        "session": sid, "agent": "claude-code", "clone": other, "at": iso(T0 + 62)[:19] + "Z",
    }  # fmt: skip
    text = deja("why", "src/remote.py:1", cwd=repo, env=env).stdout.decode()
    assert (
        f"session {sid} (claude) wrote this line in another clone (/home/pat/src/project);"
        " it is counted once a commit shows that session worked on this repository"
    ) in text, text
    assert "\x1b" not in text
