"""A line's history stays bounded in time on hostile lines (REVIEW12 F2): a long
line (a minified bundle's) changed in a few places was compared whole by difflib
with no junk heuristic, worse than quadratic in its length: ``deja why`` of a
20,000-character line changed in the working tree ran for minutes."""

from __future__ import annotations

import random
import string
from pathlib import Path
from typing import Any

import pytest
from conftest import commit_env, git

from deja_blame.attribution import line_history
from deja_blame.attribution.line_history import replaced_line, versions

T0 = 1_790_000_000


def _minified(n: int) -> str:
    rng = random.Random(12)
    return "".join(rng.choice(string.ascii_letters + "  ;(){}=.,") for _ in range(n))


def _every_50th_changed(text: str) -> str:
    return "".join("X" if i % 50 == 49 else c for i, c in enumerate(text))


@pytest.fixture
def compared(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The lengths of every pair of texts difflib is given to compare."""
    seen: list[tuple[int, int]] = []
    real = line_history.SequenceMatcher

    def counting(junk: Any, a: str, b: str, autojunk: bool = True) -> Any:
        seen.append((len(a), len(b)))
        assert len(a) * len(b) <= line_history.SMALL_PAIRS, "difflib given a whole long line"
        return real(junk, a, b, autojunk=autojunk)

    monkeypatch.setattr(line_history, "SequenceMatcher", counting)
    return seen


def test_a_long_changed_line_is_found_without_difflib_on_it(
    repo: Path, compared: list[tuple[int, int]]
) -> None:
    old = _minified(100_000)
    (repo / "min.js").write_text("// bundle\n" + old + "\n")
    git(repo, "add", "min.js")
    git(repo, "commit", "-qm", "bundle", env=commit_env(T0))
    new = _every_50th_changed(old)
    (repo / "min.js").write_text("// bundle\n" + new + "\n")

    assert replaced_line(repo, "min.js", 2, new) == 2
    # a wholly new long line is no version of the old one
    other = _minified(100_001)[::-1]
    (repo / "min.js").write_text("// bundle\n" + other + "\n")
    assert replaced_line(repo, "min.js", 2, other) is None

    # committed, its history has both versions, still without difflib on them
    (repo / "min.js").write_text("// bundle\n" + new + "\n")
    git(repo, "commit", "-qam", "tweak", env=commit_env(T0 + 60))
    head = git(repo, "rev-parse", "HEAD").strip()
    got = versions(repo, "min.js", head, 2, new)
    assert [v.text for v in got] == [old, new]
    assert all(a * b <= line_history.SMALL_PAIRS for a, b in compared)


def test_ordinary_lines_are_compared_by_difflib_as_before(compared: list[tuple[int, int]]) -> None:
    a = "    total = compute_total(rows, rate)  # the sum with tax"
    b = "    total = compute_total(rows)"
    assert line_history._similarity(a, b) == pytest.approx(
        line_history.SequenceMatcher(None, a.strip(), b.strip(), autojunk=False).ratio()
    )
    assert compared  # difflib itself, not the long lines' measure
