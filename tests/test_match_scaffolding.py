"""Which lines say who wrote them elsewhere (``match/scaffolding.py``): a block
found in another file keeps its session only with distinctive lines or when its
text left that file (``match/moves.py``; the scenario
``common_test_lines_elsewhere`` in bench/accuracy drives the whole rule)."""

from __future__ import annotations

import pytest

from deja_blame.attribution.facts.model import LineTexts
from deja_blame.attribution.match.moves import keep_blocks
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
