"""``deja why FILE:LINE`` (and ``deja blame -L``) in an annotated history: a line its
commit's current note settles is git blame of that line alone, not of the 81-line
window the matcher needs (``facts/noted_range.py``); every other line still gets
the window, and every answer is the window's."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import run_deja
from test_notes_world import S1, S2, S3, World, body, make_world

from deja_blame.attribution.facts import git_blame, noted_range, question


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return make_world(tmp_path, repo, monkeypatch)


def _spans(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int] | None]:
    """The line ranges git was asked to blame (None: the whole file)."""
    asked: list[tuple[int, int] | None] = []
    real = git_blame._start_git

    def spy(root: Path, relpath: str, rev: str | None, span: Any = None) -> Any:
        asked.append(span)
        return real(root, relpath, rev, span)

    monkeypatch.setattr(git_blame, "_start_git", spy)
    return asked


def _why(world: World, rel: str, line: int, *args: str) -> tuple[int, str]:
    out = run_deja("why", f"{world.repo / rel}:{line}", "--no-refresh", *args)
    return out.exit_code, out.output


def _history(world: World, tmp_path: Path) -> Path:
    """S1's lines, a person's, S2's, and S3's whose transcript arrives after the pass."""
    world.write(S1, "app.py", body("a", 4))
    world.commit("a session")
    world.person("app.py", body("a", 4) + body("p", 2))
    world.commit("a person")
    world.write(S2, "app.py", body("a", 4) + body("p", 2) + body("b", 3))
    world.commit("another session")
    world.write(S3, "app.py", body("a", 4) + body("p", 2) + body("b", 3) + body("c", 2))
    world.commit("a session on another machine")
    later = tmp_path / "later"
    world.hold_back(S3, later)
    world.index()
    world.deja("annotate", "--all")
    return later


def test_a_settled_line_is_blamed_alone_and_answered_as_the_window_answers(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEJA_NO_CACHE", "1")  # every answer computed afresh
    later = _history(world, tmp_path)
    total = 4 + 2 + 3 + 2
    asked = _spans(monkeypatch)
    lines = range(1, total + 1)
    alone = {n: [_why(world, "app.py", n, *f) for f in ([], ["--json"])] for n in lines}
    # one blame of the line for each question, never the window
    assert asked == [(n, n) for n in lines for _ in range(2)]
    sessions = [orjson.loads(alone[n][1][1])["session"] for n in lines]
    assert sessions == [S1] * 4 + [None] * 2 + [S2] * 3 + [None] * 2
    # deja blame -L of a range the notes settle: the range alone too
    asked.clear()
    out = run_deja("blame", str(world.repo / "app.py"), "-L", "3,8", "--json", "--no-refresh")
    assert out.exit_code == 0 and asked == [(3, 8)]
    ranged = orjson.loads(out.output)["lines"]
    # the same answers as the window gives
    with monkeypatch.context() as m:
        real = noted_range.noted_range

        def unsettled(
            repo: Any, conn: Any, version: Any, lookup: Any, notes: Any, *rest: Any
        ) -> Any:
            # the range's own blame is told no pass completed: the window answers
            return real(
                repo, conn, version, lookup, replace(notes, passed=_never_completed()), *rest
            )

        m.setattr(question, "noted_range", unsettled)
        asked.clear()
        window = {n: [_why(world, "app.py", n, *f) for f in ([], ["--json"])] for n in lines}
        assert window == alone
        assert asked and all(s is not None and s[0] < s[1] for s in asked)
        out = run_deja("blame", str(world.repo / "app.py"), "-L", "3,8", "--json", "--no-refresh")
        assert orjson.loads(out.output)["lines"] == ranged
    # S3's transcript arrives: its commit's record of no line is stale, its lines
    # take the window and the matcher, and are S3's (the record would say a person's)
    world.sync(later)
    world.index()
    asked.clear()
    code, text = _why(world, "app.py", 10, "--json")
    assert code == 0 and orjson.loads(text)["session"] == S3
    assert asked[0] == (10, 10) and asked[1] == (1, total)  # the window (the file is short)
    asked.clear()
    code, text = _why(world, "app.py", 2, "--json")
    assert orjson.loads(text)["session"] == S1 and asked == [(2, 2)]


def _never_completed() -> Any:
    from deja_blame.attribution.facts.settled import PassRecord

    return PassRecord({}, False, None, False, 0)


def test_a_history_without_a_pass_blames_the_window_at_once(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No history pass (most lines unsettled): no blame of the line first."""
    monkeypatch.setenv("DEJA_NO_CACHE", "1")
    world.write(S1, "app.py", body("a", 4))
    world.commit("a session")
    world.index()
    asked = _spans(monkeypatch)
    code, text = _why(world, "app.py", 2, "--json")
    assert code == 0 and orjson.loads(text)["session"] == S1
    assert asked == [(1, 4)]


def test_deja_why_alone_does_not_load_libgit2_for_older_versions(
    world: World, tmp_path: Path
) -> None:
    """The line's older versions are blamed through git where libgit2 is not loaded
    (its import costs more than git's blame of a line)."""
    world.write(S1, "app.py", body("a", 3))
    world.commit("first")
    world.person("app.py", body("a", 3).replace("scale=14", "scale=15"))
    world.commit("a person's tweak")
    world.index()
    script = (
        "import sys, runpy\n"
        "sys.argv = ['deja', 'why', 'app.py:2', '--json', '--no-refresh']\n"
        "try:\n    runpy.run_module('deja_blame', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print('pygit2' in sys.modules, file=sys.stderr)\n"
    )
    env = {**os.environ, **world.env, "DEJA_SERVER": "0"}
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=world.repo, env=env, capture_output=True, timeout=120
    )
    doc = orjson.loads(proc.stdout)
    assert [v["session"] for v in doc["history"]] == [S1, None]
    assert proc.stderr.decode().strip().splitlines()[-1] == "False"
