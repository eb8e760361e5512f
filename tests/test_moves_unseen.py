"""A file git never had as the source of a moved block (match/moves.py): plain data.

``_written_for_commit`` takes such a file as where a block came from only through
writes made for the block's commit when that commit created the file the block is
in (a person's new test file does not take its imports from a scratch file a
session wrote weeks ago), unless this file is mostly that one (renamed before
its first commit, and a rebase made the commit seconds younger than its parent).
"""

from __future__ import annotations

from typing import Any

from deja_blame.attribution.facts.model import BlameLine, LineTexts
from deja_blame.attribution.match.moves import _whole_file_sources, _written_for_commit
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


def test_a_text_that_left_only_files_git_never_had_is_a_copy() -> None:
    from deja_blame.attribution.match.moves import left_a_file_git_had

    had = {3}.__contains__  # path 3 is in git's history by then; 7 never was
    nothing = lambda: False  # noqa: E731  (the commit took the text out of no file)
    assert left_a_file_git_had({3}, set(), had, nothing)
    assert left_a_file_git_had({3, SCRATCH}, set(), had, nothing)
    assert not left_a_file_git_had({SCRATCH}, set(), had, nothing)
    assert left_a_file_git_had(
        {SCRATCH}, {SCRATCH}, had, nothing
    )  # this file, renamed before its first commit
    # the commit's own diff took the text out of a file git had: a move (the
    # session's path is the file's name before the person moved it to src/)
    assert left_a_file_git_had({SCRATCH}, set(), had, lambda: True)


class Diff:
    """A commit's changed files and each file's lines before and after it."""

    def __init__(self, touched: dict[str, tuple[str, str | None]]) -> None:
        self.changed = touched
        self.held = {
            (C + "^", "src/pkg/_tokenizer.py"): {"class Token:", "name: str", "other"},
            (C, "src/pkg/_tokenizer.py"): {"other"},
            (C + "^", "src/pkg/copied.py"): {"class Token:"},
            (C, "src/pkg/copied.py"): {"class Token:"},
            (C + "^", "src/pkg/gone.py"): {"name: str"},
            (C, "src/pkg/new.py"): {"class Token:"},
        }

    def touched(self, commit: str) -> dict[str, tuple[str, str | None]]:
        assert commit == C
        return self.changed

    def holds(self, rev: str, path: str, text: str) -> bool:
        return text.strip() in self.held.get((rev, path), set())


def test_a_text_the_line_s_commit_took_out_of_another_file() -> None:
    from deja_blame.attribution.match.moves import _taken_out

    here = "src/pkg/_musl.py"
    diff = Diff(
        {
            "src/pkg/_tokenizer.py": ("M", "src/pkg/_tokenizer.py"),
            "src/pkg/copied.py": ("M", "src/pkg/copied.py"),
            "src/pkg/gone.py": ("D", None),
            "src/pkg/new.py": ("A", "src/pkg/new.py"),
            here: ("M", here),
        }
    )
    brought = BlameLine(1, C, PARENT_TIME + 60, here, 1)
    ask: Any = diff

    def taken(text: str, trivial: bool = False) -> bool:
        return _taken_out(ask, diff.holds, brought, text, trivial)

    assert taken("class Token:")  # left _tokenizer.py (copied.py kept its own)
    assert taken("    name: str")  # left _tokenizer.py, and gone.py, deleted
    assert not taken("other")  # still there after the commit: nothing left
    assert not taken("def only_here():")  # in no other file
    assert not taken("class Token:", trivial=True)  # a bracket or blank says nothing
    diff.changed.pop("src/pkg/_tokenizer.py")
    assert not taken("class Token:")  # only in a file that kept it: a copy
    assert taken("    name: str")
    assert not _taken_out(ask, diff.holds, None, "    name: str", False)  # no commit
