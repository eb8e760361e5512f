"""Which lines say who wrote them elsewhere (``match/scaffolding.py``): a block
found in another file keeps its session only with distinctive lines or when its
text left that file (``match/moves.py``; the scenario
``common_test_lines_elsewhere`` in bench/accuracy drives the whole rule)."""

from __future__ import annotations

import pytest

from deja_blame.attribution.match.scaffolding import is_distinctive


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
