"""A deja note damaged in a clone (cut short, edited: it no longer parses) is said to
be deja's own, damaged, with the ways back, not "another tool's lines"; ``deja notes
fetch`` restores it from a remote whose note is whole (it said "already up to
date"), ``deja annotate`` re-derives it from the transcripts; another tool's lines
in the same note are kept either way."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest
from conftest import git
from test_notes_share import publish, two  # noqa: F401 (two: a fixture)
from test_notes_world import S1, World, body, file_claims, make_world

from deja_blame.notes.schema import note_parts, split_note

DEJAVU = "deja: app.py:2 written in claude-code · abc123 · proj (rule: wrote)"


def _note_text(repo: Path, commit: str) -> str:
    return subprocess.run(
        ["git", "notes", "--ref", "deja", "show", commit],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def _set_note(repo: Path, commit: str, text: str, tmp: Path) -> None:
    path = tmp / "note.txt"
    path.write_text(text)
    git(repo, "notes", "--ref", "deja", "add", "-f", "-F", str(path), commit)


def test_a_cut_deja_document_is_damaged_not_another_tool_s_lines() -> None:
    whole = (
        '{\n  "schema": 2,\n  "tool": "deja-blame 0.1.0",\n  "commit": "ab",\n  "files": {}\n}\n'
    )
    cut = whole[:60]
    parts = note_parts(cut)
    assert parts.docs == [] and parts.foreign == [] and parts.damaged == [cut.strip()]
    # git's blank line between documents ends it; another tool's lines around it stay its
    parts = note_parts(f"{DEJAVU}\n\n{cut}\n\n{DEJAVU}\n")
    assert parts.foreign == [DEJAVU, DEJAVU] and len(parts.damaged) == 1
    assert split_note(f"{cut}\n\n{DEJAVU}\n") == ([], [DEJAVU])
    # spaced as a person (or schema 1) writes it: still deja's
    assert note_parts('{"schema": 1, "tool": "deja-blame 0.0.9", "files": {"a').damaged
    # JSON-looking text of another tool, cut short: its lines, kept
    other = '{"tool": "other", "x": [1,\n2'
    assert note_parts(other).foreign == ['{"tool": "other", "x": [1,', "2"]
    assert note_parts(whole).docs and not note_parts(whole).damaged


@pytest.mark.parametrize(
    "hostile",
    ['{"a":\n' * 170_000, '{"a":\n\n' * 140_000, ('{"a":\n' * 900 + "x\n") * 180],
    ids=["nested lines", "nested lines apart", "deep then not JSON"],
)
def test_a_note_of_nested_openings_is_read_in_linear_time(hostile: str) -> None:
    """Each line that opens a document was tried again, and each try read on to the
    nesting limit: 7-10 s of CPU a MB of a fetched note, at every blame that read it
    (review 11 #5). Documents before such lines are still read."""
    import time

    whole = '{"schema": 2, "tool": "deja-blame 0.1.0", "files": {}}'
    started = time.process_time()
    parts = note_parts(f"{whole}\n\n{hostile}")
    assert time.process_time() - started < 2.0
    assert parts.docs == [orjson.loads(whole)] and parts.foreign


def test_fetch_restores_a_damaged_note_and_keeps_another_tool_s_lines(
    two: tuple[World, World, Path],  # noqa: F811
    tmp_path: Path,
) -> None:
    alice, bob, bare = two
    alice.write(S1, "app.py", body("a", 4))
    sha = publish(alice, "agent work")
    git(bob.repo, "pull", "-q")
    bob.deja("notes", "fetch")
    assert bob.sessions_by_line("app.py") == [S1] * 4
    whole = _note_text(bob.repo, sha)
    _set_note(bob.repo, sha, f"{DEJAVU}\n\n{whole[:250]}", tmp_path)

    proc = bob.deja("blame", "app.py")
    err = proc.stderr.decode()
    assert f"the note of commit {sha[:12]} in refs/notes/deja is a damaged deja note" in err
    assert "deja notes fetch restores it" in err and f"deja annotate {sha[:12]}" in err
    assert "another tool's" not in err.split("damaged")[1].split("\n")[0]
    assert bob.sessions_by_line("app.py") == [None] * 4

    out = bob.deja("notes", "fetch")
    assert "already up to date, 1 damaged deja note here restored from origin's" in (
        out.stderr.decode()
    )
    assert bob.sessions_by_line("app.py") == [S1] * 4
    restored = _note_text(bob.repo, sha)
    assert restored.startswith(DEJAVU + "\n") and whole.strip() in restored
    assert "damaged" not in bob.deja("blame", "app.py").stderr.decode()
    again = orjson.loads(bob.deja("notes", "fetch", "--json").stdout)
    assert again["merge"]["kind"] == "up-to-date" and again["merge"]["restored"] == 0


def test_fetch_merging_both_sides_restores_a_damaged_note(
    two: tuple[World, World, Path],  # noqa: F811
    tmp_path: Path,
) -> None:
    """Both sides wrote notes since they last met (a three-way merge): the damaged
    note here is theirs again, the rest merged as always."""
    alice, bob, bare = two
    alice.write(S1, "app.py", body("a", 4))
    sha = publish(alice, "agent work")
    git(bob.repo, "pull", "-q")
    bob.deja("notes", "fetch")
    _set_note(bob.repo, sha, _note_text(bob.repo, sha)[:200], tmp_path)
    alice.write(S1, "lib.py", body("l", 3))
    later = publish(alice, "more agent work")
    git(bob.repo, "pull", "-q")
    doc = orjson.loads(bob.deja("notes", "fetch", "--json").stdout)
    assert doc["merge"]["kind"] == "merge" and doc["merge"]["restored"] == 1
    assert bob.sessions_by_line("app.py") == [S1] * 4
    assert bob.sessions_by_line("lib.py") == [S1] * 3
    assert later != sha


def test_annotate_re_derives_a_damaged_note_from_the_transcripts(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(tmp_path, repo, monkeypatch)
    world.write(S1, "app.py", body("a", 4))
    sha = world.commit("agent work")
    world.index()
    world.deja("annotate")
    whole = _note_text(world.repo, sha)
    _set_note(world.repo, sha, f"{whole[:120]}\n\n{DEJAVU}\n", tmp_path)
    assert world.sessions_by_line("app.py", "--no-refresh") == [S1] * 4  # the index's
    world.deja("annotate", sha)
    text = _note_text(world.repo, sha)
    assert (
        text.startswith(DEJAVU + "\n")
        and "damaged" not in world.deja("blame", "app.py").stderr.decode()
    )
    assert file_claims(orjson.loads(text[len(DEJAVU) :]), "app.py") == {i: S1 for i in range(1, 5)}


def test_one_line_of_another_tool_is_one_line(world_repo: World) -> None:
    sha = world_repo.head()
    git(world_repo.repo, "notes", "--ref", "deja", "add", "-f", "-m", "garbage", sha)
    err = world_repo.deja("blame", "README.md").stderr.decode()
    assert "holds 1 line deja does not read" in err


@pytest.fixture
def world_repo(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    world = make_world(tmp_path, repo, monkeypatch)
    world.person("README.md", "# project\n")
    world.commit("init")
    return world
