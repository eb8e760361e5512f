"""Another tool in the same ref: deja-vu appends plain-text lines to refs/notes/deja.
deja reads its own JSON wherever it stands, keeps the other lines when it writes,
and says what it skipped."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from conftest import git
from test_notes_world import S1, World, body, make_world

from deja_blame.notes.schema import Note, parse_note_docs, split_note

NOTES = "refs/notes/deja"


def dejavu_lines(n: int) -> list[str]:
    return [
        f"deja: app.py:{i} written in antigravity · 0f3c9a1e · /home/ana/app (rule: wrote)"
        for i in range(1, n + 1)
    ]


def test_deja_s_json_is_read_before_after_and_between_other_lines() -> None:
    doc = Note(commit="c" * 40, files={"a.py": {S1: [[1, 2, 0.9]]}}).dumps()
    lines = dejavu_lines(2)
    for text in (
        "\n".join(lines) + "\n\n" + doc,
        doc + "\n" + "\n".join(lines) + "\n",
        lines[0] + "\n" + doc + "\n" + lines[1] + "\n",
    ):
        notes = parse_note_docs(text)
        assert len(notes) == 1 and notes[0].line_map("a.py") == {
            1: (S1, 0.9, None),
            2: (S1, 0.9, None),
        }
        assert split_note(text)[1] == lines


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    w = make_world(tmp_path, repo, monkeypatch)
    w.person("README.md", "# project\n")
    w.commit("init")
    w.write(S1, "app.py", body("a", 4))
    w.commit("agent work")
    w.index()
    return w


def _note(world: World) -> str:
    return git(world.repo, "notes", "--ref", NOTES, "show", "HEAD")


@pytest.mark.parametrize("order", ["text only", "text then json", "json then text"])
def test_annotate_keeps_the_other_tool_s_lines(world: World, order: str) -> None:
    lines = dejavu_lines(3)
    if order == "text only":
        git(world.repo, "notes", "--ref", NOTES, "add", "-m", "\n".join(lines), "HEAD")
    elif order == "text then json":
        git(world.repo, "notes", "--ref", NOTES, "add", "-m", "\n".join(lines), "HEAD")
        world.deja("annotate")
    else:
        world.deja("annotate")
        git(world.repo, "notes", "--ref", NOTES, "append", "-m", "\n".join(lines), "HEAD")
    world.write(S1, "app.py", body("a", 4))  # re-annotate: the index has something to add
    proc = world.deja("annotate", "HEAD")
    text = _note(world)
    for line in lines:
        assert line in text.splitlines()  # never dropped
    docs = parse_note_docs(text)
    assert len(docs) == 1 and set(docs[0].line_map("app.py")) == {1, 2, 3, 4}
    # blame reads deja's JSON (from the note alone) and says what it skipped
    fresh = {"DEJA_DB": str(world.tmp / "fresh.db"), "DEJA_ANTIGRAVITY_ROOT": str(world.tmp)}
    blame = world.deja("blame", "app.py", "--json", env=fresh)
    assert [ln["session"] for ln in orjson.loads(blame.stdout)["lines"]] == [S1] * 4
    err = blame.stderr.decode() + proc.stderr.decode()
    assert "3 lines deja does not read" in err and "deja-vu" in err


def test_a_fetch_merge_keeps_both_sides_other_lines(world: World, tmp_path: Path) -> None:
    world.deja("annotate")
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(world.repo), str(bare))
    git(world.repo, "remote", "add", "origin", str(bare))
    world.deja("notes", "push")
    theirs, ours = dejavu_lines(2)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(bare), str(clone))
    git(clone, "fetch", "-q", "origin", f"{NOTES}:{NOTES}")
    git(clone, "notes", "--ref", NOTES, "append", "-m", theirs, "HEAD")
    git(clone, "push", "-q", "origin", NOTES)
    git(world.repo, "notes", "--ref", NOTES, "append", "-m", ours, "HEAD")
    world.deja("notes", "fetch")
    text = _note(world)
    assert theirs in text.splitlines() and ours in text.splitlines()
    assert len(parse_note_docs(text)) == 1
