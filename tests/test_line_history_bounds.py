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


def _long_lines(m: int, n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        "".join(rng.choice(string.ascii_letters + " ;(){}=") for _ in range(n)) for _ in range(m)
    ]


def test_a_hunk_of_many_long_lines_compares_a_bounded_few(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole file of 400-character lines changed (a reformat, a regenerated file):
    the line's match is found among the removed lines nearest its place, not by
    difflib on each of the 2,000."""
    calls: list[int] = []
    real = line_history.SequenceMatcher

    def counting(junk: Any, a: str, b: str, autojunk: bool = True) -> Any:
        calls.append(1)
        return real(junk, a, b, autojunk=autojunk)

    monkeypatch.setattr(line_history, "SequenceMatcher", counting)
    old = _long_lines(2_000, 400, 3)
    (repo / "f.js").write_text("\n".join(old) + "\n")
    git(repo, "add", "f.js")
    git(repo, "commit", "-qm", "generated", env=commit_env(T0))
    new = [_every_50th_changed(line) for line in old]
    (repo / "f.js").write_text("\n".join(new) + "\n")

    assert replaced_line(repo, "f.js", 1_000, new[999]) == 1_000
    assert replaced_line(repo, "f.js", 2_000, new[1_999]) == 2_000
    assert len(calls) <= 2 * (line_history.HUNK_PAIRS // 400**2 + 1)

    # committed: the hunk too long to say the line has no older version, git log -L says
    git(repo, "commit", "-qam", "regenerated", env=commit_env(T0 + 60))
    head = git(repo, "rev-parse", "HEAD").strip()
    calls.clear()
    assert line_history.only_version(repo, "f.js", head, 1_000, new[999]) is None
    assert len(calls) <= line_history.HUNK_PAIRS // 400**2 + 1


def _code(seed: int, n: int) -> str:
    """A minified bundle's kind of line: keywords and signs, few names of its own."""
    rng = random.Random(seed)
    words = ["function", "return", "var", "this", "length", "null", "if", "else", "for"]
    out: list[str] = []
    size = 0
    while size < n:
        k = rng.random()
        out.append(
            rng.choice(words)
            if k < 0.3
            else rng.choice("(){};,.=+!?:&|[]")
            if k < 0.9
            else rng.choice("etn")
        )
        size += len(out[-1]) + 1
    return " ".join(out)


def test_a_long_line_s_tokens_count_in_their_order(
    repo: Path, compared: list[tuple[int, int]]
) -> None:
    """Two unrelated long lines of one vocabulary share most of their tokens, not in the
    same order: a new minified line put where another was is no version of it. Counted
    as a bag (order ignored), the two scored 0.95, over SAME_LINE, and why's history
    named the removed line's author as the new line's earlier writer; in order they
    score 0.30 (difflib: 0.26). A line with some tokens changed is still its old self."""
    old, other = _code(1, 5_000), _code(2, 5_000)
    assert line_history._similarity(old, other) < line_history.SAME_LINE
    (repo / "min.js").write_text("// bundle\n" + old + "\n")
    git(repo, "add", "min.js")
    git(repo, "commit", "-qm", "bundle", env=commit_env(T0))
    (repo / "min.js").write_text("// bundle\n" + other + "\n")
    assert replaced_line(repo, "min.js", 2, other) is None
    tokens = line_history._TOKEN.findall(old)
    edited = " ".join("X" if i % 20 == 19 else t for i, t in enumerate(tokens))
    (repo / "min.js").write_text("// bundle\n" + edited + "\n")
    assert replaced_line(repo, "min.js", 2, edited) == 2
    assert line_history._similarity(old, edited) > 0.9
    assert compared == []  # neither whole line given to difflib


def test_git_s_diff_is_given_a_bounded_count_of_a_long_line_s_tokens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A line of 1,000,000 characters is 330,000 tokens, and git's diff keeps a record for
    each (190 MB): past MAX_TOKENS its first tokens stand for it."""
    given: list[int] = []
    real = line_history.equal_runs

    def recording(a: list[str], b: list[str]) -> Any:
        given.extend((len(a), len(b)))
        return real(a, b)

    monkeypatch.setattr(line_history, "equal_runs", recording)
    old = _code(4, 1_000_000)
    edited = " ".join("X" if i % 20 == 19 else t for i, t in enumerate(old.split(" ")))
    assert line_history._similarity(old, edited) > 0.9
    assert line_history._similarity(old, _code(5, 1_000_000)) < line_history.SAME_LINE
    assert given and max(given) == line_history.MAX_TOKENS
    # one token put in near the start moves every window by one token only
    assert line_history._similarity(old, "x " + edited) > 0.9
    # a prelude of a fifth in common, nothing after it: 0.44 as their whole tokens
    # score, no version of each other (their first 100,000 tokens alone scored 0.76)
    prelude = _code(6, 200_000)
    one, two = prelude + " " + _code(7, 800_000), prelude + " " + _code(8, 800_000)
    assert line_history._similarity(one, two) < line_history.SAME_LINE
