"""Carrying note ranges to a rewritten commit by line text (no index involved)."""

from __future__ import annotations

import time
from pathlib import Path

import pygit2
import pytest
from conftest import git
from test_notes_world import S1, S2, World, body, file_claims, make_world

from deja_blame.notes.annotate import parse_rewrite_pairs, rewrite_notes
from deja_blame.notes.remap import Carrier, line_mapping
from deja_blame.notes.schema import Note


def test_line_mapping_follows_inserts_and_moves() -> None:
    old = ["a", "b", "c", "", "d", "e"]
    new = ["x", "a", "b", "c", "", "y", "e", "d"]
    m = line_mapping(old, new)
    assert m[1] == 2 and m[2] == 3 and m[3] == 4 and m[4] == 5
    assert m[6] == 7 and m[5] == 8  # "d" moved below "e": unique text, still found
    assert line_mapping(old, old) == {i: i for i in range(1, 7)}


def test_parse_rewrite_pairs() -> None:
    a, b, c = "a" * 40, "b" * 40, "c" * 40
    text = f"{a} {b}\n{c} {b} extra\nnot a pair\n\n"
    assert parse_rewrite_pairs(text) == [(a, b), (c, b)]


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    w = make_world(tmp_path, repo, monkeypatch)
    w.person("README.md", "# project\n")
    w.commit("init")
    return w


def test_carry_across_a_rename_and_an_edit(world: World) -> None:
    base_text = "import os\nimport sys\n\n" + body("base", 3)
    world.person("a.py", base_text)
    world.commit("base")
    world.person("a.py", base_text + body("a", 4))
    old = world.commit("the agent's lines")
    note = Note(commit=old, files={"a.py": {S1: [[7, 10, 0.97]]}})
    # the same change rewritten: the file moved, a person's line inserted, one line edited
    git(world.repo, "reset", "-q", "--hard", "HEAD~1")
    git(world.repo, "mv", "a.py", "lib.py")
    lines = (base_text + body("a", 4)).splitlines(keepends=True)
    lines.insert(6, "# a person's comment\n")
    lines[8] = lines[8].replace("value_a_2", "renamed_a_2")
    world.person("lib.py", "".join(lines))
    new = world.commit("the agent's lines, moved")
    carried = Carrier(pygit2.Repository(str(world.repo)), new).carry(note)
    assert carried.commit == new
    assert file_claims(carried.to_json(), "lib.py") == {8: S1, 10: S1, 11: S1}
    assert "a.py" not in carried.files


def test_rewrite_out_of_time_keeps_carried_notes(world: World) -> None:
    world.write(S1, "a.py", body("a", 3))
    c1 = world.commit("one")
    world.write(S2, "b.py", body("b", 2))
    c2 = world.commit("two")
    world.index()
    world.deja("annotate", "HEAD~2..HEAD")
    git(world.repo, "commit", "-q", "--amend", "-m", "two, reworded")
    new = world.head()
    repo = pygit2.Repository(str(world.repo))
    from deja_blame.index.db import connect

    conn = connect(world.db)
    result = rewrite_notes(repo, [(c2, new)], conn, deadline=time.monotonic() - 1)
    assert result.unfinished == [new] and result.derived == 0 and result.carried == 1
    assert file_claims(world.note(new), "b.py") == {1: S2, 2: S2}
    result = rewrite_notes(repo, [(c2, new), (c1, c1)], conn)
    assert result.unfinished == [] and result.derived == 1
    assert world.note(new)["commit"] == new


# -- carrying a note over a repetitive file: linear work ----------------------------------

LOCK_LINES = 30_000


def _lockfile(n: int) -> list[str]:
    """A lockfile's worth of lines that repeat (ten texts, over and over)."""
    return [f'    "dep-{i % 10}": "^1.{i % 3}.0",' for i in range(n)]


class _PairSpy:
    """difflib.SequenceMatcher, refusing more pairs of lines than ``linediff.SMALL``
    (its cost grows with their product where lines repeat: minutes at 30,000)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import difflib

        from deja_blame.linediff import SMALL

        self.largest = 0
        real = difflib.SequenceMatcher

        def spy(isjunk: object = None, a: object = "", b: object = "", **kw: object) -> object:
            self.largest = max(self.largest, len(a) * len(b))  # type: ignore[arg-type]
            assert self.largest <= SMALL, f"difflib handed {len(a)} x {len(b)} lines"  # type: ignore[arg-type]
            return real(isjunk, a, b, **kw)  # type: ignore[arg-type]

        monkeypatch.setattr(difflib, "SequenceMatcher", spy)


def test_line_mapping_of_a_repetitive_file_never_compares_every_pair(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from deja_blame import linediff

    spy = _PairSpy(monkeypatch)
    old = _lockfile(LOCK_LINES)
    edited = old[: LOCK_LINES // 2] + ['    "changed": "1",'] + old[LOCK_LINES // 2 + 1 :]
    shuffled = old[1::2] + old[::2]  # nothing in place: the whole file is a middle
    m = line_mapping(old, edited)
    assert len(m) == LOCK_LINES - 1 and m[1] == 1 and m[LOCK_LINES] == LOCK_LINES
    for new in (shuffled, old[::-1], ["x"] + old[:-1]):
        pairs = line_mapping(old, new)
        assert pairs  # a common subsequence: in order, each pair the same text
        olds = sorted(pairs)
        assert [pairs[i] for i in olds] == sorted(pairs.values())
        assert all(old[i - 1] == new[pairs[i] - 1] for i in olds)
    assert spy.largest <= linediff.SMALL


def test_a_note_copied_onto_an_amended_lockfile_is_carried_without_quadratic_work(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deja_blame import linediff
    from deja_blame.notes.lookup import read_note

    git(world.repo, "config", "notes.rewriteRef", "refs/notes/deja")
    lines = _lockfile(LOCK_LINES)
    world.person("lock.json", "\n".join(lines) + "\n")
    old = world.commit("lockfile")
    note = Note(commit=old, files={"lock.json": {S1: [[1, LOCK_LINES, 0.97]]}})
    git(world.repo, "notes", "--ref", "refs/notes/deja", "add", "-m", note.dumps(), old)
    lines[100] = '    "changed": "1",'
    world.person("lock.json", "\n".join(lines) + "\n")
    new = world.commit("lockfile, amended", "--amend")
    spy = _PairSpy(monkeypatch)
    carried = read_note(pygit2.Repository(str(world.repo)), new)
    assert carried is not None and carried.commit == new
    claims = carried.line_map("lock.json")
    assert len(claims) == LOCK_LINES - 1 and 101 not in claims
    assert spy.largest <= linediff.SMALL
