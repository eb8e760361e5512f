"""An annotated history is blamed from its notes: a commit whose note is current for
what the index holds answers for its lines, and the matcher looks at none of them;
a transcript that arrives later makes that commit's note stale, and its lines are
matched again (docs/engine.md, attribution/facts/settled.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_deja
from test_notes_world import S1, S2, S3, World, body, make_world

import deja_blame.attribution.match as match_stage


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return make_world(tmp_path, repo, monkeypatch)


def _matched(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many lines each call of the index's matcher was asked to set."""
    calls: list[int] = []
    real = match_stage.attribute_lines

    def spy(*args: Any, **kw: Any) -> None:
        only = kw.get("only")
        calls.append(len(args[1]) if only is None else sum(only))
        real(*args, **kw)

    monkeypatch.setattr(match_stage, "attribute_lines", spy)
    return calls


def _blame(world: World, rel: str) -> list[tuple[str | None, str | None]]:
    import orjson

    out = run_deja("blame", str(world.repo / rel), "--json", "--no-refresh")
    assert out.exit_code == 0, out.output
    doc = orjson.loads(out.stdout)
    return [(ln["session"], ln.get("via")) for ln in doc["lines"]]


def test_an_annotated_history_is_blamed_from_its_notes(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEJA_NO_CACHE", "1")  # every blame computed afresh
    world.person("README.md", "# project\n")
    world.commit("init")
    world.write(S1, "app.py", body("a", 3))
    # S3 writes to the same file before the commit; its transcript is on another
    # machine, synced later
    world.write(S3, "app.py", body("a", 3) + body("c", 2))
    world.commit("two sessions")
    later = tmp_path / "later"
    world.hold_back(S3, later)
    world.index()
    before = _blame(world, "app.py")
    world.deja("annotate", "--all")
    calls = _matched(monkeypatch)
    after = _blame(world, "app.py")
    # the same sessions, now from the note; the matcher was not asked about any line
    assert [s for s, _ in after] == [s for s, _ in before] == [S1, S1, S1, None, None]
    assert {v for s, v in after if s} == {"note"}
    assert sum(calls) == 0
    # the transcript arrives: the note says less than the index knows, the commit's
    # lines are matched again and S3's are found (before any new annotate)
    world.sync(later)
    world.index()
    calls.clear()
    stale = _blame(world, "app.py")
    assert [s for s, _ in stale] == [S1, S1, S1, S3, S3]
    assert sum(calls) > 0


def test_a_persons_commits_are_settled_by_the_last_complete_pass(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit the pass derived with no line gets no note, only a record of having
    been looked at (``.git/deja/history``): its lines are people's without asking the
    matcher, also once the index's writes changed, as long as no session's writes to
    its files by its time did (a session at work now leaves older commits settled).
    A transcript that concerns it (written before it, indexed after the pass) sends
    its lines to the matcher again."""
    monkeypatch.setenv("DEJA_NO_CACHE", "1")
    world.write(S1, "app.py", body("a", 3))
    world.commit("a session")
    # S3 wrote the text the person commits next; its transcript is synced later
    world.write(S3, "app.py", body("a", 3) + body("p", 2))
    later = tmp_path / "later"
    world.hold_back(S3, later)
    world.person("app.py", body("a", 3) + body("p", 4))
    world.commit("a person")
    world.index()
    before = _blame(world, "app.py")
    assert [s for s, _ in before] == [S1] * 3 + [None] * 4
    world.deja("annotate", "--all")
    calls = _matched(monkeypatch)
    after = _blame(world, "app.py")
    assert after == [(S1, "note")] * 3 + [(None, None)] * 4
    assert sum(calls) == 0  # the person's lines too: the pass recorded their commit
    # a session at work now, on another file: the pass is no longer current, the
    # commits are asked one by one, and none of them concerns it
    world.write(S2, "other.py", body("z", 2))
    world.index()
    calls.clear()
    assert _blame(world, "app.py") == after
    assert sum(calls) == 0
    # S3's transcript arrives: it wrote the person's commit's file before it
    world.sync(later)
    world.index()
    calls.clear()
    _blame(world, "app.py")
    assert sum(calls) == 4


def test_a_hooked_persons_commit_joins_the_last_pass(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The post-commit hook records a commit it derived with no line as the pass would:
    a person's commit made after ``deja annotate --all`` is blamed without the matcher."""
    from test_hooks_faults import commit

    from deja_blame.hooks.pending import wait_for_hook_jobs

    monkeypatch.setenv("DEJA_NO_CACHE", "1")
    world.write(S1, "app.py", body("a", 3))
    world.commit("a session")
    world.index()
    world.deja("annotate", "--all")
    world.deja("hooks", "install")
    git(world.repo, "config", "deja.hook.timeout", "60")  # python's start on a loaded machine
    world.person("app.py", body("a", 3) + body("p", 2))
    commit(world, "a person, hooked")
    assert wait_for_hook_jobs(world.repo / ".git" / "deja", limit=90)
    calls = _matched(monkeypatch)
    after = _blame(world, "app.py")
    assert after == [(S1, "note")] * 3 + [(None, None)] * 2
    assert sum(calls) == 0


def test_a_commits_note_matches_only_its_lines(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit's note holds the lines that commit brought: deriving it matches those
    lines only (the others are older commits'), and says the same as matching all."""
    from deja_blame.attribution import commit as commit_mod

    monkeypatch.setenv("DEJA_NO_CACHE", "1")
    world.write(S1, "app.py", body("a", 6))
    world.commit("first")
    world.write(S2, "app.py", body("a", 6) + body("b", 3))
    second = world.commit("second")
    world.index()
    monkeypatch.chdir(world.repo)
    calls = _matched(monkeypatch)
    out = run_deja("annotate", second, "--dry-run", "--json", "--no-refresh")
    assert out.exit_code == 0, out.output
    assert sum(calls) == 3  # the three lines the second commit brought
    real = commit_mod.blame_file
    monkeypatch.setattr(
        commit_mod, "blame_file", lambda *a, **kw: real(*a, **{**kw, "focus": None})
    )
    calls.clear()
    whole = run_deja("annotate", second, "--dry-run", "--json", "--no-refresh")
    assert sum(calls) == 9  # every line of the file, without the focus
    assert whole.stdout == out.stdout
    assert S2 in out.stdout and S1 not in out.stdout


def test_a_note_from_elsewhere_settles_nothing_the_index_knows_better(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A note the last pass did not end with (fetched from a fork, written by another
    tool) is asked like any stale one before it settles anything: here it claims no
    line and does not name S1, whose lines the index knows, so they are matched again
    (a note's own claims still win over the index: ``match.attribute_lines``)."""
    import orjson
    from test_notes_indexed import _annotated  # the same small annotated history

    monkeypatch.setenv("DEJA_NO_CACHE", "1")
    sha = _annotated(world)
    assert [s for s, _ in _blame(world, "app.py")] == [S1, S1, S1]
    doc = world.note(sha)
    assert doc is not None
    doc["files"], doc["sessions"], doc["derived_from"] = {}, {}, {}
    world.git(
        "notes", "--ref", "refs/notes/deja", "add", "-f", "-m", orjson.dumps(doc).decode(), sha
    )
    assert [s for s, _ in _blame(world, "app.py")] == [S1, S1, S1]
    # the next pass re-derives the note; blame is settled from it again
    world.deja("annotate", "--all")
    calls = _matched(monkeypatch)
    assert [s for s, _ in _blame(world, "app.py")] == [S1, S1, S1]
    assert sum(calls) == 0


def test_the_history_record_is_input_and_a_pass_without_notes_is_recorded(
    world: World, tmp_path: Path
) -> None:
    """'done <gen> <tip>': a tip that is not a commit's name never reaches git (a
    record carried in a tarball), and a pass that ended with no notes says '-' so the
    hooks do not run a pass at every commit."""
    import sqlite3

    import pygit2

    from deja_blame.notes.annotate_all import needs_pass

    world.person("README.md", "# project\n")
    world.commit("init")
    world.index()
    world.deja("annotate", "--all")
    record = world.repo / ".git" / "deja" / "history"
    assert record.read_text().splitlines()[-1].endswith(" -")
    conn = sqlite3.connect(world.db)
    try:
        assert not needs_pass(pygit2.Repository(str(world.repo)), conn)
        gen = record.read_text().split()[1]
        trap = tmp_path / "written-by-git"
        record.write_text(f"done {gen} --output={trap}\n")
        world.write(S1, "app.py", body("a", 3))
        world.commit("the session's work")
        world.git("notes", "--ref", "refs/notes/deja", "add", "-m", "{}", "HEAD")
        assert world.deja("blame", "app.py", "--json").returncode == 0
        assert not trap.exists()
        assert needs_pass(pygit2.Repository(str(world.repo)), conn)  # it says nothing usable
    finally:
        conn.close()


def _imported(world: World, *command: str) -> tuple[str, set[str]]:
    """``deja COMMAND`` in its own process under ``-X importtime``: its output and the
    modules it imported."""
    import os
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "deja_blame", *command],
        capture_output=True,
        env=os.environ.copy(),
        cwd=world.repo,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-500:]
    lines = proc.stderr.decode().splitlines()
    return proc.stdout.decode(), {ln.split("|")[-1].strip() for ln in lines if "|" in ln}


# what only a line left to match needs: the rules, the moves rule, the index's writes
RULES_ONLY = (
    "deja_blame.attribution.match",
    "deja_blame.attribution.match.lines",
    "deja_blame.attribution.match.moves",
    "deja_blame.attribution.facts.moved",
    "deja_blame.attribution.facts.source",
    "deja_blame.attribution.facts.writes",
    "deja_blame.attribution.facts.edits",
)


def test_a_file_the_notes_settle_loads_no_rule(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cold blame and why of an annotated history: every line's commit settled by its
    note, so nothing the rules or the index's writes need is imported (a third of a
    cold answer's modules); a line left to match loads them."""
    monkeypatch.setenv("DEJA_NO_CACHE", "1")  # computed afresh each time
    world.write(S1, "app.py", body("a", 3))
    world.commit("a session")
    world.index()
    world.deja("annotate", "--all")
    for command in (("blame", "app.py", "--json"), ("why", "app.py:2")):
        out, imported = _imported(world, *command, "--no-refresh")
        assert "deja_blame.attribution.facts.gather" in imported  # it saw deja's imports
        assert S1 in out
        assert not imported.intersection(RULES_ONLY), command
    # the person's uncommitted line beside them is matched: the rules load
    world.person("app.py", body("a", 3) + "x = 1\n")
    out, imported = _imported(world, "blame", "app.py", "--json", "--no-refresh")
    assert S1 in out
    assert "deja_blame.attribution.match.lines" in imported
