"""NEWCOMER14's findings: ``deja index --help`` left SpecStory out of both its lists
(#2), and ``deja why FILE:-3`` said "not FILE:LINE" where ``:0`` says lines start at 1
(#4); a list asked of a project on an index not built gave its advice twice (#6).
(#1, doctor on a fresh install: test_doctor.py; #3, a file written whole:
test_why_edit_placed.py.)"""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from conftest import deja
from test_other_agents import T0, _claude

from deja_blame.commands.why import split_target
from deja_blame.transcripts.registry import AGENTS


def test_index_help_names_every_agent_s_id_and_its_variable() -> None:
    out = deja("index", "--help").stdout.decode()
    table = out.split("Where each agent keeps", 1)[1].split("\n\n", 1)[0]
    assert [a.root_env for a in AGENTS if a.root_env not in table] == [], table
    listed = " ".join(out.split("Only this agent's transcripts (repeatable):", 1)[1].split())
    ids = [w.strip(" .,") for w in listed.split(".", 1)[0].split(",")]
    assert ids == [a.id for a in AGENTS], listed


@pytest.mark.parametrize("target", ["app.py:0", "app.py:-3", "app.py:-0"])
def test_a_line_below_1_says_lines_start_at_1(target: str) -> None:
    with pytest.raises(click.BadParameter, match="lines start at 1"):
        split_target(target)


def test_what_is_not_a_line_is_still_said_so() -> None:
    for target in ("app.py:x", "app.py:", "app.py", ":3", "app.py:--3", "app.py:1.5", "a.py:²"):
        with pytest.raises(click.BadParameter, match="is not FILE:LINE"):
            split_target(target)


@pytest.mark.parametrize("which", [("--project", "."), ("--agent", "codex")])
def test_a_list_on_an_index_not_built_says_its_advice_once(
    repo: Path, tmp_path: Path, which: tuple[str, str]
) -> None:
    """#6: ``deja --db NEW -C REPO sessions --project .`` said "no index at NEW yet (run:
    ...)" and then "1 new or changed transcript not yet indexed ...: ... reads them"."""
    _claude(tmp_path / "home", repo, T0)
    db = tmp_path / "other.db"
    proc = deja("--db", str(db), "-C", str(repo), "sessions", *which)
    lines = proc.stderr.decode().splitlines()
    advice = [ln for ln in lines if "index" in ln and "indexed session" not in ln]
    assert advice == [
        f"deja: no index at {db} yet: deja --db {db} index reads the 1 transcript waiting"
    ], lines
    assert not db.exists()
