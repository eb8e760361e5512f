"""One confidence for a run of a session's lines on every surface that groups them
(the LSP's lenses and annotations, deja mcp's blame): the lowest of its lines with
text. The lens showed the run's first line's (a blank line's 0.79 where the code was
0.97) and mcp the lowest of all lines (newcomer 10, #9)."""

from __future__ import annotations

from deja_blame.attribution.model import LineAttribution
from deja_blame.editor.confidence import run_confidence
from deja_blame.editor.lsp.render import runs


def _line(
    n: int, text: str, confidence: float | None, session: str | None = "s1"
) -> LineAttribution:
    return LineAttribution(
        line=n,
        text=text,
        commit="a" * 40,
        session=session,
        source="claude-code",
        confidence=confidence,
        written_at="2026-07-17T09:30:00Z",
        via="edit",
    )


def test_a_run_s_confidence_is_its_lowest_line_with_text() -> None:
    lines = [_line(1, "", 0.79), _line(2, "def f():", 0.97), _line(3, "    return 2", 0.95)]
    assert run_confidence(lines) == 0.95
    (run,) = runs(list(lines))
    assert run.confidence == 0.95
    assert run.title.endswith(" 0.95") and run.to_json(0)["label"] == run.title


def test_the_engine_s_trivial_lines_count_as_no_text_and_a_run_of_blanks_keeps_its_own() -> None:
    assert run_confidence([_line(1, "}", 0.7), _line(2, "total = price * qty", 0.9)]) == 0.9
    # the engine's trivial lines, not a list of its own: "});" and "end" are no evidence
    assert run_confidence([_line(1, "    foo(bar)", 0.97), _line(2, "  });", 0.79)]) == 0.97
    assert run_confidence([_line(1, "  end", 0.6), _line(2, "do_it(now)", 0.9)]) == 0.9
    assert run_confidence([_line(1, "", 0.79), _line(2, "  ", 0.8)]) == 0.79
    assert run_confidence([_line(1, "x", None)]) is None


def test_each_session_s_run_has_its_own() -> None:
    lines = [
        _line(1, "a = 1", 0.9),
        _line(2, "b = 2", 0.6, session="s2"),
        _line(3, "c = 3", None, session=None),
        _line(4, "d = 4", 0.8),
    ]
    assert [(r.start, r.end, r.confidence) for r in runs(lines)] == [
        (0, 0, 0.9),
        (1, 1, 0.6),
        (3, 3, 0.8),
    ]
