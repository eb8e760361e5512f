"""Which lines say who wrote them elsewhere (``match/scaffolding.py``): a block
found in another file keeps its session only with distinctive lines or when its
text left that file (``match/moves.py``; the scenario
``common_test_lines_elsewhere`` in bench/accuracy drives the whole rule)."""

from __future__ import annotations

import pytest

from deja_blame.attribution.facts.model import LineTexts
from deja_blame.attribution.match.moves import block_texts, keep_blocks, short_sessions
from deja_blame.attribution.match.scaffolding import is_comment, is_distinctive
from deja_blame.attribution.model import LineAttribution


@pytest.mark.parametrize(
    "text",
    [
        "import pytest",
        "from orders.service import total, validate",
        "const assert = require('node:assert')",
        "@pytest.fixture",
        "def order():",
        "def test_total_of_an_empty_order(order, tmp_path, monkeypatch):",
        "func TestParse(t *testing.T) {",
        "it('adds an item', () => {",
        '    return {"id": 1, "items": []}',
        "    assert total(order) == 0",
        "});",
        "package semver",
    ],
)
def test_scaffolding_every_module_repeats_is_not_distinctive(text: str) -> None:
    assert not is_distinctive(text)


@pytest.mark.parametrize(
    "text",
    [
        '    """A metadata field contains invalid data."""',
        "def _coerce_version(version: UnparsedVersion) -> Version:",
        '    order["items"] = [{"sku": "a", "price": 10, "qty": 2}]',
        "        return round(amount * (1 + TAX_RATE), 2)",
        "    assert parse_marker(text).evaluate(env) is expected",
    ],
)
def test_lines_that_say_something_are_distinctive(text: str) -> None:
    assert is_distinctive(text)


@pytest.mark.parametrize(
    "text",
    [
        "   * Add an item to the cart, merging the quantities of one sku.",
        "  /**",
        "  // keep the order of the options as they were added",
        "    # the person's own note on why the loop stops here",
        "/* a block comment of several words */",
    ],
)
def test_comment_and_documentation_lines_are_comments(text: str) -> None:
    assert is_comment(text)


@pytest.mark.parametrize(
    "text",
    ["#!/usr/bin/env node", "#include <stdio.h>", "  return price * qty;", "x = 1  # one"],
)
def test_code_is_no_comment(text: str) -> None:
    assert not is_comment(text)


def _line(k: int, text: str, session: str | None) -> LineAttribution:
    ln = LineAttribution(line=k + 1, text=text, commit="c" * 40)
    ln.session, ln.via, ln.confidence = session, "index" if session else None, 0.9
    return ln


DOC = [
    "  /**",
    "   * Add an item to the cart, merging the quantities of one sku.",
    "   * @param {Item} item - the item to add to the cart",
    "   * @return {Cart} the cart itself, for chaining calls",
    "   */",
]
CODE = [
    "  add(item) {",
    "    const existing = this.items.find((line) => line.sku === item.sku);",
    "    existing ? (existing.qty += item.qty) : this.items.push(item);",
    "  }",
]


def _trivial(lines: list[LineAttribution]) -> list[bool]:
    return LineTexts.of([ln.text for ln in lines]).trivial


def test_a_copied_doc_comment_keeps_no_session_a_copied_block_of_code_does() -> None:
    # a copy (the other file still has it): its doc lines are words a person types
    # into both files (commander's JSDoc in lib/ and typings/), not evidence of who
    lines = [_line(k, t, "s1") for k, t in enumerate(DOC)]
    keep_blocks(lines, _trivial(lines), [True] * len(lines), [False] * len(lines))
    assert [ln.session for ln in lines] == [None] * len(DOC)
    lines = [_line(k, t, "s1") for k, t in enumerate(DOC + CODE)]
    keep_blocks(lines, _trivial(lines), [True] * len(lines), [False] * len(lines))
    assert [ln.session for ln in lines] == ["s1"] * len(DOC + CODE)
    # a move (the text left the other file): the doc goes with it
    lines = [_line(k, t, "s1") for k, t in enumerate(DOC)]
    keep_blocks(lines, _trivial(lines), [True] * len(lines), [True] * len(lines))
    assert [ln.session for ln in lines] == ["s1"] * len(DOC)


IMPORTS = ['\t"encoding/json"', '\t"path/filepath"']


def test_a_window_keeps_a_short_sessions_moved_lines_where_the_whole_file_does() -> None:
    # the whole file: the session's imports moved here (their text left the other
    # file) and, far below, one distinctive line of its: a block of three, kept
    moved_far = "\t\tcontent, err := json.Marshal(block.Input)"
    lines = [_line(k, t, "s1") for k, t in enumerate([*IMPORTS, moved_far])]
    keep_blocks(lines, _trivial(lines), [True] * 3, [True, True, False])
    assert [ln.session for ln in lines] == ["s1"] * 3
    # a window around the far line alone (line 3) sees one of the session's moved
    # lines: it keeps it as the whole file's answer does
    window = [_line(2, moved_far, "s1")]
    keep_blocks(window, _trivial(window), [True], [False], {"s1": {1, 2, 3}})
    assert window[0].session == "s1"
    # without the whole file it drops the line the file keeps: what this guards against
    window = [_line(2, moved_far, "s1")]
    keep_blocks(window, _trivial(window), [True], [False])
    assert window[0].session is None
    # the whole file gives the line another session, or gives this one other lines
    # only (the window matched the moved line to another writer): dropped
    for whole in ({"s2": {3}}, {"s1": {1, 2}}):
        window = [_line(2, moved_far, "s1")]
        keep_blocks(window, _trivial(window), [True], [False], whole)
        assert window[0].session is None


def test_block_texts_count_moves_and_distinctive_lines_only() -> None:
    lines = [_line(k, t, "s1") for k, t in enumerate(["}", *IMPORTS, CODE[1]])]
    lines.append(_line(4, "import os", "s2"))
    got = block_texts(lines, _trivial(lines), [True] * 5, [True, False, True, False, False])
    # a bracket says nothing; an import counts where it left its file; a distinctive
    # line counts anywhere; a line not moved (or moved, not distinctive) does not
    assert got == {"s1": {'"path/filepath"', CODE[1].strip()}}
    assert block_texts(lines, _trivial(lines), [False] * 5, [True] * 5) == {}


class _Asked(dict):  # type: ignore[type-arg]
    """The whole file's lines by session, recording which sessions were asked."""

    def __init__(self, texts: dict[str, set[int]]) -> None:
        super().__init__(texts)
        self.asked: list[str] = []

    def get(self, session: str, default: object = None) -> object:  # type: ignore[override]
        self.asked.append(session)
        return super().get(session, default)


def test_a_window_asks_the_whole_file_only_for_a_session_its_lines_fall_short_for() -> None:
    # the whole file's answer is costly: a session the window's own lines keep (two
    # distinctive moved lines) is not asked about; one short of them is
    lines = [_line(0, CODE[1], "s1"), _line(1, CODE[2], "s1"), _line(2, CODE[1] + " ", "s2")]
    whole = _Asked({"s2": {3}})
    keep_blocks(lines, _trivial(lines), [True] * 3, [False] * 3, whole)
    assert whole.asked == ["s2"]
    assert [ln.session for ln in lines] == ["s1", "s1", "s2"]


def test_the_sessions_a_window_asks_the_whole_file_for_are_those_short_of_a_block() -> None:
    # stage 1 makes the whole file's answer only where a session falls short: here s2
    # (one moved line); s1 has two distinctive ones, s3's line was not moved
    lines = [_line(0, CODE[1], "s1"), _line(1, CODE[2], "s1"), _line(2, CODE[1] + " ", "s2")]
    lines.append(_line(3, CODE[2] + " ", "s3"))
    moved = [True, True, True, False]
    assert short_sessions(lines, _trivial(lines), moved, [False] * 4) == {"s2"}
    # moved lines whose text left their file count as a block too: none short
    lines[2] = _line(2, "import os", "s2")
    lines.insert(3, _line(3, "import re", "s2"))
    assert short_sessions(lines, _trivial(lines), [True] * 4 + [False], [True] * 5) == set()
