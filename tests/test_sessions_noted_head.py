"""A reviewer's ``deja sessions`` (none indexed: the sessions the notes name) counts
LINES and COMMITS over the notes of HEAD's history: a branch squash-merged keeps
its own commit's note, and adding it counted a 9-line session as 18. ``--json``
keeps ``lines``/``commits`` (every note) and adds the ``_on_head`` pair."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest
from conftest import git
from test_notes_world import S1, S2, body, make_world


def test_lines_and_commits_count_head_s_history(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(tmp_path, repo, monkeypatch)
    world.person("README.md", "# project\n")
    world.commit("init")
    git(world.repo, "checkout", "-q", "-b", "feature")
    world.write(S1, "export.py", body("e", 9))
    world.commit("CSV export")
    world.deja("annotate")
    git(world.repo, "checkout", "-q", "-b", "other", "main")
    world.write(S2, "other.py", body("o", 4))
    world.commit("never merged")
    world.deja("annotate")
    git(world.repo, "checkout", "-q", "main")
    git(world.repo, "merge", "-q", "--squash", "feature")
    world.commit("CSV export (#3)")
    world.deja("annotate")

    reviewer = {
        "DEJA_DB": str(tmp_path / "fresh.db"),
        "DEJA_ANTIGRAVITY_ROOT": str(tmp_path / "nothing"),
    }
    doc = orjson.loads(world.deja("sessions", "--json", env=reviewer).stdout)
    noted = {d["session_id"]: d for d in doc["from_notes"]}
    assert (noted[S1]["lines"], noted[S1]["commits"]) == (18, 2)  # every note, as before
    assert (noted[S1]["lines_on_head"], noted[S1]["commits_on_head"]) == (9, 1)
    assert (noted[S2]["lines_on_head"], noted[S2]["commits_on_head"]) == (0, 0)
    assert noted[S2]["lines"] == 4

    out = world.deja("sessions", env=reviewer)
    rows = {ln[:8]: ln.split() for ln in out.stdout.decode().splitlines()[1:]}
    assert rows[S1[:8]][-3:] == ["9", "1", "notes"]
    assert rows[S2[:8]][-3:] == ["0", "0", "notes"]
    err = " ".join(out.stderr.decode().split())
    assert re.search(
        r"LINES and COMMITS count the notes of HEAD's history; 2 of these sessions also"
        r" have notes on commits outside it .*deja show ID lists them all",
        err,
    )

    help_text = world.deja("sessions", "--help").stdout.decode()
    assert "LINES" in help_text and "lines_on_head" in help_text
