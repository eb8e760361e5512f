"""The review's leftover, the gone-folder case of ``facts/clone_paths.py``: a session
writes a file in a folder inside the checkout that git never had
(``tmp_experiment/calc.py``), and a person commits the same text to the
repository's ``calc.py``. The lines are the session's either way (its text, copied).
What differs is where the folder went: kept (an ignored scratch folder), its file is
another file, and ``why`` from the note says so and shows no edit; deleted, nothing
tells it from a worktree removed after its merge (``checkout_of_this``: the real
sessions' bench needs those), so its file stands for ``calc.py`` in another checkout
and ``why`` shows its edit. This test pins both answers: changing the second is a
rule change (the moved-machine bench's real sessions first), not a side effect."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from test_notes_world import S1, World, body, make_world


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return make_world(tmp_path, repo, monkeypatch)


@pytest.mark.parametrize("gone", [False, True], ids=["kept", "gone"])
def test_a_scratch_folder_s_file_and_the_repository_s_file_of_its_name(
    world: World, gone: bool
) -> None:
    world.person("calc.py", "import math\n")
    world.commit("calc")
    world.write(S1, "tmp_experiment/calc.py", body("x", 6))
    if gone:
        shutil.rmtree(world.repo / "tmp_experiment")
    else:
        (world.repo / ".git" / "info" / "exclude").write_text("tmp_experiment/\n")
    world.person("calc.py", "import math\n" + body("x", 6))
    world.commit("the person's calc")
    world.index()
    assert world.sessions_by_line("calc.py") == [None] + [S1] * 6
    assert world.deja("annotate", "--no-refresh").returncode == 0
    doc = orjson.loads(world.deja("why", "calc.py:3", "--json", "--no-refresh").stdout)
    assert (doc["session"], doc["via"]) == (S1, "note")
    scratch = str(world.repo / "tmp_experiment" / "calc.py")
    if gone:  # as a removed worktree's file: the same file, another checkout
        assert doc["edit"]["path"] == scratch and "no_edit_of_file" not in doc
    else:  # a folder here that is no checkout: another file
        assert "edit" not in doc
        assert doc["no_edit_of_file"] == {"added_elsewhere": "tmp_experiment/calc.py"}
