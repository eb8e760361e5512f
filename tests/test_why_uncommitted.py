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
    assert "History (oldest first)" in text
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
    rows = text.split("History (oldest first)\n", 1)[1].splitlines()
    assert rows[0].startswith(f"  {sha[:8]} ") and f" {S1[:8]} agy " in rows[0]
    assert rows[1].startswith("  00000000 not committed yet") and f" {S2[:8]} agy " in rows[1]
