"""A file git never had as the source of a moved block (facts/moved.py): plain data.

``_written_for_commit`` takes such a file as where a block came from only through
writes made for the block's commit when that commit created the file the block is
in (a person's new test file does not take its imports from a scratch file a
session wrote weeks ago), unless this file is mostly that one (renamed before
its first commit, and a rebase made the commit seconds younger than its parent).
"""

from __future__ import annotations

from typing import Any

from deja_blame.attribution.facts.model import BlameLine, LineTexts
from deja_blame.attribution.facts.moved import _whole_file_sources, _written_for_commit
from deja_blame.attribution.model import LineAttribution
from deja_blame.index.fingerprint import fingerprint

C = "c" * 40
PARENT_TIME = 1_000_000
SCRATCH = 7  # the path id of the file git never had
WRITTEN_AT = 500_000.0  # weeks before the commit's parent
SCAFFOLDING = ["import pytest", "from orders.service import total", "@pytest.fixture"]
OWN = ["def test_one(order):", "    assert total(order) == 0", "def test_two(order):",
       "    assert total(order) == 1", "def test_three():", "    assert total({}) == 2"]  # fmt: skip


class Facts:
    """The three questions the rule asks, answered from plain data."""

    def __init__(self, created: bool) -> None:
        self.created = created

    def path_log(self, path: str) -> list[tuple[str, int, str]]:
        return [(C, PARENT_TIME + 60, "A" if self.created else "M")]

    def parent_time(self, commit: str) -> int:
        return PARENT_TIME

    def write_times(self, pid: int, fp: int) -> list[float]:
        return [WRITTEN_AT]


def _file(texts: list[str]) -> tuple[list[LineAttribution], list[BlameLine | None]]:
    lines = [LineAttribution(line=i + 1, text=t, commit=C) for i, t in enumerate(texts)]
    blamed: list[BlameLine | None] = [
        BlameLine(
            line=i + 1,
            commit=C,
            commit_time=PARENT_TIME + 60,
            orig_path="tests/test_b.py",
            orig_line=i + 1,
        )  # fmt: skip
        for i in range(len(texts))
    ]
    return lines, blamed


def _sources(texts: list[str], written: list[str], created: bool) -> set[int]:
    lines, blamed = _file(texts)
    elsewhere = {fingerprint(t): {SCRATCH} for t in written}
    todo = [k for k, ln in enumerate(lines) if fingerprint(ln.text) in elsewhere]
    texts = LineTexts.of([ln.text for ln in lines])
    whole = _whole_file_sources(lines, texts, todo, elsewhere)
    facts: Any = Facts(created)
    block = range(len(lines))
    return _written_for_commit(facts, lines, texts, blamed, block, {SCRATCH}, elsewhere, whole)


def test_a_new_file_does_not_take_old_scaffolding_from_a_file_git_never_had() -> None:
    assert _sources(SCAFFOLDING + OWN, SCAFFOLDING, created=True) == set()


def test_a_file_git_had_may_take_an_old_write_to_a_file_git_never_had() -> None:
    assert _sources(SCAFFOLDING + OWN, SCAFFOLDING, created=False) == {SCRATCH}


def test_a_new_file_that_is_mostly_the_file_git_never_had_is_that_file_renamed() -> None:
    assert _sources(SCAFFOLDING + OWN, SCAFFOLDING + OWN[:-1], created=True) == {SCRATCH}
