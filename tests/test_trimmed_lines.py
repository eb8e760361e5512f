"""A line a person trimmed (``};`` -> ``}``: characters deleted, none added) between two
lines of one edit keeps that edit's session (``match/trimmed.py``)."""

from __future__ import annotations

from deja_blame.attribution.facts.model import LineTexts
from deja_blame.attribution.match.lines import LineMatch
from deja_blame.attribution.match.trimmed import is_trimmed, trimmed_lines

COUNT = ["Cart.prototype.count = function () {", "  return this.items.length;"]
TOTAL = "Cart.prototype.total = function () {"
WRITTEN = [*COUNT, "};", "", TOTAL]
FILE = [*COUNT, "}", "", TOTAL]
EDIT = LineTexts.of(WRITTEN)  # the edit's added lines as stage 1 gives them (bare, fps)


def _match(idx: int) -> LineMatch:
    return LineMatch(sid=7, edit_ord=3, idx=idx, at=1_000.0, confidence=0.9, run=3)


def _trim(
    texts: list[str],
    matches: list[LineMatch | None],
    existed: bool = True,
    lone_open: frozenset[int] = frozenset(),
) -> list[int | None]:
    out = trimmed_lines(
        LineTexts.of(texts),
        matches,
        lambda sid, edit: EDIT.bare if (sid, edit) == (7, 3) else [],
        lambda sid, edit: EDIT.fps if (sid, edit) == (7, 3) else [],
        lambda i, fp: existed,
        set(lone_open),
    )
    return [None if m is None else m.idx for m in out]


def _is_trimmed(line: str, written: str) -> bool:
    """``is_trimmed`` of the two texts as stage 1 gives them (``LineTexts``)."""
    both = LineTexts.of([line, written])
    return is_trimmed(both.bare[0], both.trivial[0], both.bare[1])


def test_is_trimmed_is_the_statements_semicolon_deleted() -> None:
    assert _is_trimmed("  }", "  };")
    assert _is_trimmed("})", "  });")  # white space aside
    assert not _is_trimmed("  )", "  ),")  # a formatter's comma, moved between lines
    assert not _is_trimmed("  };", "  };")  # the same text: matched as written, or not
    assert not _is_trimmed("  ]", "  };")  # a character the session did not write
    assert not _is_trimmed("", "  };")  # a blank line says nothing
    # only lines of no words: a shortened statement is the person's own change
    assert not _is_trimmed("  return a;", "  return a || b;")


def test_a_trimmed_line_between_two_lines_of_its_edit_is_the_edits() -> None:
    assert _trim(FILE, [_match(0), _match(1), None, _match(3), _match(4)]) == [0, 1, 2, 3, 4]
    # a blank line between (matched to another blank write of the edit, or not) is no
    # anchor and no break
    assert _trim(FILE, [_match(0), _match(1), None, _match(7), _match(4)])[2] == 2
    assert _trim(FILE, [_match(0), _match(1), None, None, None])[2] is None  # none below
    # the line below is not the edit's line that far below
    assert _trim(FILE, [_match(0), _match(1), None, None, _match(9)])[2] is None


def test_no_trim_where_the_text_was_not_there_or_a_lone_edit_may_be_the_lines() -> None:
    matches: list[LineMatch | None] = [_match(0), _match(1), None, _match(3), _match(4)]
    # the commit's version before it had no "};": the person typed a new "}"
    assert _trim(FILE, matches, existed=False)[2] is None
    # a session's lone edit of "}" left unplaced may be this line's: nobody's
    assert _trim(FILE, matches, lone_open=frozenset({2}))[2] is None
