"""A formatter's split of a session's line, made before the line was ever committed
(a pre-commit hook, a squashed commit): the joined text was never in the file, but
the session wrote it inside the lines' commit window (``match/reflow.py``)."""

from __future__ import annotations

import pytest

from deja_blame.attribution.facts.model import BlameLine, LineTexts, WriteSet, WrittenTexts
from deja_blame.attribution.match.clock import Deadlines
from deja_blame.attribution.match.reflow import reflow_matches
from deja_blame.index.fingerprint import fingerprint, normalise_line

C = "c" * 40  # the commit of the formatted call, at 10,000
FLOOR = 5_000.0  # the version it was made from

TEXTS = [
    "def build(rows):",
    "    totals = summarise(",
    "        rows,",
    "        skip_empty=True",
    "    )",
    "    return totals",
]
WRITTEN = "    totals = summarise(rows, skip_empty=True)"


class Facts:
    """What the rule reads: the texts written to the file's paths (``written``: at hand
    in a question about many files, ``texts``; else None), and what it asks of stage 1
    (``asks``): the writes of the candidate splits' texts."""

    def __init__(self, at: float, by_person: bool = False, texts: bool = False) -> None:
        self.writes = WriteSet()
        self.writes.add_rows([(1, fingerprint(WRITTEN), 7, 0, 0, at, int(by_person))], {1: True})
        self.written = WrittenTexts.of([normalise_line(WRITTEN)]) if texts else None
        self.asks = self

    def load_writes(self, paths: object, spots: object) -> WriteSet:
        return self.writes


def _split(facts: Facts, fresh: object) -> list[int | None]:
    blamed = [BlameLine(i + 1, C, 10_000, "app/report.py", i + 1) for i in range(len(TEXTS))]
    out = reflow_matches(
        facts,  # type: ignore[arg-type]
        LineTexts.of(TEXTS),
        blamed,
        [None] * len(TEXTS),
        {1: True},
        Deadlines.of(blamed, 20_000.0, frozenset()),
        lambda i, fp: False,  # the one-line call was never in a version of the file
        fresh,  # type: ignore[arg-type]
    )
    return [m.sid if m else None for m in out]


@pytest.mark.parametrize("texts", [False, True])
def test_a_split_of_a_line_written_in_the_commit_window_is_the_sessions(texts: bool) -> None:
    def in_window(i: int, at: float) -> bool:
        return at >= FLOOR

    assert _split(Facts(8_000.0, texts=texts), in_window) == [None, 7, 7, 7, 7, None]
    # written before the version the commit was made from, and never in the file: no
    assert _split(Facts(4_000.0, texts=texts), in_window) == [None] * len(TEXTS)
    # the person's own write of the line (a transcript's USER block): not the session's
    assert _split(Facts(8_000.0, by_person=True, texts=texts), in_window) == [None] * len(TEXTS)
    # without the window, only a line that was in the file before counts (as it was)
    assert _split(Facts(8_000.0, texts=texts), None) == [None] * len(TEXTS)
