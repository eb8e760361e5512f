"""Notes are indexed as transcripts are (notes/indexed.py): a note blame has read is a
row of the index after, keyed by its blob; a note rewritten (another blob) is read
again; a note holding another tool's lines is read each time (its warning too)."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import run_deja
from test_notes_world import S1, S2, World, body, make_world

import deja_blame.notes.indexed as indexed


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    monkeypatch.setenv("DEJA_NO_CACHE", "1")  # every blame computed afresh
    return make_world(tmp_path, repo, monkeypatch)


def _sessions(world: World, rel: str) -> list[str | None]:
    out = run_deja("blame", str(world.repo / rel), "--json", "--no-refresh")
    assert out.exit_code == 0, out.output
    return [ln["session"] for ln in orjson.loads(out.stdout)["lines"]]


def _rows(world: World) -> list[tuple[str, str]]:
    conn = sqlite3.connect(world.db)
    try:
        return conn.execute("SELECT commit_id, blob FROM note_docs").fetchall()
    finally:
        conn.close()


def _annotated(world: World) -> str:
    """A person's first commit, then a session's three lines, indexed and annotated."""
    world.person("README.md", "# project\n")
    world.commit("init")
    world.write(S1, "app.py", body("a", 3))
    sha = world.commit("the session's work")
    world.index()
    world.deja("annotate", "--all")
    return sha


def _no_note_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kw: Any) -> None:
        raise AssertionError("a note was read from git")

    monkeypatch.setattr(indexed, "read_note_blob", refuse)


def test_a_note_blame_read_is_a_row_after(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    sha = _annotated(world)
    assert _sessions(world, "app.py") == [S1, S1, S1]
    blob = subprocess.run(
        ["git", "notes", "--ref", "refs/notes/deja", "list", sha],
        cwd=world.repo, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert (sha, blob) in _rows(world)
    _no_note_reads(monkeypatch)
    assert _sessions(world, "app.py") == [S1, S1, S1]


def test_a_rewritten_note_is_read_again(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    sha = _annotated(world)
    assert _sessions(world, "app.py") == [S1, S1, S1]
    doc = world.note(sha)
    assert doc is not None
    doc["files"]["app.py"] = {S2: [[1, 3, 1.0]]}
    doc["sessions"][S2] = {"agent": "codex"}
    world.git(
        "notes", "--ref", "refs/notes/deja", "add", "-f", "-m", orjson.dumps(doc).decode(), sha
    )
    assert _sessions(world, "app.py") == [S2, S2, S2]
    # the row of the note as it is now, the older one dropped
    blob = subprocess.run(
        ["git", "notes", "--ref", "refs/notes/deja", "list", sha],
        cwd=world.repo, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert [r for r in _rows(world) if r[0] == sha] == [(sha, blob)]


def test_a_note_with_another_tools_lines_is_not_indexed(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    sha = _annotated(world)
    text = subprocess.run(
        ["git", "notes", "--ref", "refs/notes/deja", "show", sha],
        cwd=world.repo, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    world.git(
        "notes", "--ref", "refs/notes/deja", "add", "-f", "-m", text + "\nreviewed-by: a tool", sha
    )
    for _ in range(2):
        out = world.deja("blame", "app.py", "--json", "--no-refresh")
        assert b"deja does not read" in out.stderr  # said each time: the note is read
    blob = subprocess.run(
        ["git", "notes", "--ref", "refs/notes/deja", "list", sha],
        cwd=world.repo, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert (sha, blob) not in _rows(world)


def test_the_notes_a_pass_writes_are_indexed_by_it(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    sha = _annotated(world)
    assert sha in {c for c, _ in _rows(world)}
    _no_note_reads(monkeypatch)
    assert _sessions(world, "app.py") == [S1, S1, S1]


def test_a_note_git_copied_from_another_commit_is_read_each_time(world: World) -> None:
    """Its lines are carried by the text of the commit it was copied from, which one
    clone has and another may not: a row would be the first clone's answer for all."""
    old = _annotated(world)
    world.git("commit", "--amend", "-q", "-m", "the session's work, reworded")
    new = world.head()
    world.git("notes", "--ref", "refs/notes/deja", "copy", "-f", old, new)
    assert _sessions(world, "app.py") == [S1, S1, S1]
    assert new not in {c for c, _ in _rows(world)}


def test_forgetting_a_session_drops_the_rows_that_name_it(world: World) -> None:
    sha = _annotated(world)
    assert _sessions(world, "app.py") == [S1, S1, S1]
    assert sha in {c for c, _ in _rows(world)}
    assert world.deja("forget", S1).returncode == 0
    assert sha not in {c for c, _ in _rows(world)}
