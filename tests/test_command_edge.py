"""What ``deja blame FILE`` reads at its edge is not asked again behind it: the
repository's HEAD, read by the cache lookup's rev-parse, is the HEAD stage 1 uses
(``shared.given``), where it asked git three more times per cold blame."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from conftest import run_deja
from test_notes_world import S1, body, make_world

from deja_blame.attribution.facts import gitread, shared


def _heads_asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The roots stage 1 asked git for HEAD of (``gitread._head_of``)."""
    asked: list[str] = []
    real = gitread._head_of

    def spy(root: str) -> str:
        asked.append(root)
        return real(root)

    monkeypatch.setattr(gitread, "_head_of", spy)
    return asked


def test_a_cold_blame_asks_git_for_head_once_at_its_edge(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(tmp_path, repo, monkeypatch)
    world.write(S1, "app.py", body("a", 6))
    world.commit("a session")
    world.index()
    asked = _heads_asked(monkeypatch)
    got = run_deja("blame", str(repo / "app.py"), "--json", "--no-refresh")
    assert got.exit_code == 0, got.output
    lines = orjson.loads(got.stdout)["lines"]
    assert [ln["session"] for ln in lines] == [S1] * 6  # stage 1 ran: the rules matched
    assert asked == []


def test_what_the_edge_gave_is_answered_only_inside_its_block(tmp_path: Path) -> None:
    root = str(tmp_path)
    asked: list[str] = []

    def ask() -> str:
        asked.append("git")
        return "from git"

    with shared.given(root, {"HEAD": "abc"}):
        assert shared.remembered(root, "HEAD", ask) == "abc"
        assert shared.remembered(root, "other", ask) == "from git"  # not given: asked
        assert shared.remembered(root + "/x", "HEAD", ask) == "from git"  # another root
    assert shared.remembered(root, "HEAD", ask) == "from git"  # the block ended
    assert asked == ["git", "git", "git"]
