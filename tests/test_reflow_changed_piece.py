"""A formatter's split of a session's line whose one piece a later commit changed
(``match/reflow.py``, ``_splits_at_their_commit``): the pieces no longer join to the
written line, but in the version of the commit git blames them on they did, and the
pieces still here are the session's."""

from __future__ import annotations

from collections.abc import Callable

from deja_blame.attribution.facts.model import BlameLine, LineTexts, WriteSet, WrittenTexts
from deja_blame.attribution.match.clock import Deadlines
from deja_blame.attribution.match.lines import LineMatch
from deja_blame.attribution.match.reflow import (
    changed_between,
    changed_boundaries,
    reflow_matches,
    split_pieces_since_changed,
)
from deja_blame.index.fingerprint import fingerprint, normalise_line

SPLIT = "c" * 40  # the formatter's commit, at 10,000: it split the session's call
LATER = "d" * 40  # a later commit, at 20,000: it changed one argument

WRITTEN = "    totals = summarise(rows, skip_empty=True)"  # the session's line, at 1,000
AT_SPLIT = [
    "def build(rows):",
    "    totals = summarise(",
    "        rows,",
    "        skip_empty=True",
    "    )",
    "    return totals",
]
NOW = [*AT_SPLIT[:3], "        skip_empty=False", *AT_SPLIT[4:]]
# git blame of NOW: the changed argument is LATER's, every other line SPLIT's, where
# the split put it (the first line is older, and SPLIT's too for the test)
BLAMED = [
    BlameLine(i + 1, LATER if i == 3 else SPLIT, 20_000 if i == 3 else 10_000, "app.py", i + 1)
    for i in range(len(NOW))
]


class Facts:
    """What the rule reads: the texts written to the file's paths (``written``: at hand
    in a question about many files, ``texts``; else None), and what it asks of stage 1
    (``asks``): the writes of the candidate splits' texts."""

    def __init__(self, at: float = 1_000.0, by_person: bool = False, texts: bool = False) -> None:
        self.writes = WriteSet()
        self.writes.add_rows([(1, fingerprint(WRITTEN), 7, 0, 0, at, int(by_person))], {1: True})
        self.written = WrittenTexts.of([normalise_line(WRITTEN)]) if texts else None
        self.asks = self
        self.edits = Edits({})

    def load_writes(self, paths: object, spots: object) -> WriteSet:
        return self.writes


def _versions(split: list[str] | None = AT_SPLIT) -> object:
    def version(commit: str) -> list[str] | None:
        return list(split) if split is not None and commit == SPLIT else None

    return version


def _blame(
    facts: Facts,
    version: object = None,
    matches: list[LineMatch | None] | None = None,
    blamed: list[BlameLine] = BLAMED,
    now: list[str] = NOW,
    existed: Callable[[int, int], bool] | None = None,
    fresh: object = lambda i, at: False,
) -> list[int | None]:
    """The sessions ``reflow_matches`` gives the lines of ``now``; by default the
    one-line call was in the file before SPLIT (the split was of it) and no commit
    window is known to hold a write."""
    out = reflow_matches(
        facts,  # type: ignore[arg-type]
        LineTexts.of(now),
        blamed,  # type: ignore[arg-type]
        matches or [None] * len(now),
        {1: True},
        Deadlines.of(blamed, 30_000.0, frozenset()),  # type: ignore[arg-type]
        existed or (lambda i, fp: blamed[i].commit == SPLIT and fp == fingerprint(WRITTEN)),
        fresh,  # type: ignore[arg-type]
        version if version is not None else _versions(),  # type: ignore[arg-type]
    )
    return [m.sid if m else None for m in out]


def test_the_pieces_a_later_commit_left_are_the_sessions() -> None:
    assert _blame(Facts()) == [None, 7, 7, None, 7, None]
    # in a question about many files, the texts written to the file are at hand
    assert _blame(Facts(texts=True)) == [None, 7, 7, None, 7, None]


def test_not_without_the_version_git_blamed_them_on() -> None:
    # the version not read (past the history's budget): the pieces go to nobody
    assert _blame(Facts(), _versions(None)) == [None] * len(NOW)
    # a version whose lines are not the ones git says the file kept from it
    other = [*AT_SPLIT[:2], "        items,", *AT_SPLIT[3:]]
    assert _blame(Facts(), _versions(other)) == [None] * len(NOW)


def test_not_the_persons_line_nor_one_written_after_the_split() -> None:
    assert _blame(Facts(by_person=True)) == [None] * len(NOW)
    assert _blame(Facts(at=15_000.0)) == [None] * len(NOW)


def test_a_piece_another_session_wrote_means_it_is_not_this_split() -> None:
    other = LineMatch(sid=9, edit_ord=0, idx=0, at=2_000.0, confidence=1.0, run=1)
    matches: list[LineMatch | None] = [None, None, other, None, None, None]
    assert _blame(Facts(), matches=matches) == [None, None, 9, None, None, None]


def test_a_line_a_later_commit_put_between_two_pieces() -> None:
    # an argument added between two pieces: nothing gone, but the version's pieces are
    # no longer one below the other here
    now = [*AT_SPLIT[:3], "        limit=3,", *AT_SPLIT[3:]]
    blamed = [BlameLine(j + 1, SPLIT, 10_000, "app.py", j + 1 - (j > 3)) for j in range(len(now))]
    blamed[3] = BlameLine(4, LATER, 20_000, "app.py", 4)
    assert _blame(Facts(), blamed=blamed, now=now) == [None, 7, 7, None, 7, 7, None]


def test_where_a_split_may_begin_and_what_changed_since() -> None:
    here = {0: 0, 1: 1, 2: 2, 4: 4, 5: 5}  # the version's line -> this file's
    norm = [normalise_line(t) for t in NOW]
    version_norm = [normalise_line(t) for t in AT_SPLIT]
    open_ = [True] * len(NOW)
    every = range(6)
    # a line still here and unmatched, or gone (changed since)
    assert split_pieces_since_changed(here, version_norm, norm, open_, every) == [True] * 6
    matched = [True, False, True, True, True, True]
    starts = split_pieces_since_changed(here, version_norm, norm, matched, every)
    assert starts == [True, False, True, True, True, True]
    # only near the unmatched lines beside a change
    near = split_pieces_since_changed(here, version_norm, norm, open_, range(2, 4))
    assert near == [False, False, True, True, False, False]
    # the version's text where git says the file kept a line differs: not that version
    other = [version_norm[0], "x", *version_norm[2:]]
    assert split_pieces_since_changed(here, other, norm, open_, every) is None
    # what changed: a line gone (3), or one put between two of the version's lines
    # (and after the last line here: what follows it is not known before the version
    # is read)
    breaks = changed_boundaries(here)
    assert breaks == [2, 3, 5]
    assert changed_between(breaks, 2, 4) and changed_between(breaks, 0, 5)
    assert not changed_between(breaks, 0, 2) and not changed_between(breaks, 4, 5)
    assert changed_boundaries({0: 0, 1: 2}) == [0, 1]
    assert changed_boundaries({o: o for o in range(6)}) == [5]


def test_a_line_an_older_commit_left_here_is_no_piece_of_the_split() -> None:
    # the run's line git blames on an older commit is still here, not changed: the
    # commit did not bring it, so the run is no split the commit made
    older = "e" * 40
    blamed = list(BLAMED)
    blamed[2] = BlameLine(3, older, 5_000, "app.py", 3)

    def existed(i: int, fp: int) -> bool:
        return fp in (fingerprint(WRITTEN), fingerprint(AT_SPLIT[2]))

    assert _blame(Facts(), blamed=blamed, existed=existed) == [None] * len(NOW)


def test_a_text_the_version_holds_as_its_own_line_is_that_lines_write() -> None:
    # the commit split the session 7's line in place (it was in the file before),
    # while session 8 wrote the same text inside the commit's window as a line of its
    # own elsewhere (packaging 22.0: Specifier.contains and SpecifierSet.contains): the
    # pieces are 7's; session 8's write is its own line's
    own = ["def again(rows):", WRITTEN]
    version = [*AT_SPLIT, *own]
    now = [*NOW, *own]
    blamed = [
        BlameLine(j + 1, LATER if j == 3 else SPLIT, 20_000 if j == 3 else 10_000, "app.py", j + 1)
        for j in range(len(now))
    ]
    facts = Facts()
    facts.writes = WriteSet()
    facts.writes.add_rows(
        [
            (1, fingerprint(WRITTEN), 7, 0, 0, 1_000.0, 0),
            (1, fingerprint(WRITTEN), 8, 0, 0, 8_000.0, 0),
        ],
        {1: True},
    )

    def blame(fresh: object) -> list[int | None]:
        # the one-line call was there before
        there = lambda i, fp: fp == fingerprint(WRITTEN)  # noqa: E731
        return _blame(facts, _versions(version), blamed=blamed, now=now, existed=there, fresh=fresh)

    # session 8's write is inside the window (made from the version of 5,000)
    assert blame(lambda i, at: at >= 5_000.0) == [None, 7, 7, None, 7, None, None, None]
    # no window known: the latest write before the commit, as for any split
    assert blame(None) == [None, 8, 8, None, 8, None, None, None]


class Edits:
    """The edits' added lines, as ``SessionEdits.added_bare`` gives them."""

    def __init__(self, added: dict[tuple[int, int], list[str]]) -> None:
        self.added = added

    def added_bare(self, sid: int, edit_ord: int) -> list[str]:
        return [normalise_line(t) for t in self.added.get((sid, edit_ord), [])]


def test_a_split_a_sessions_edit_wrote_at_its_place_is_no_formatters() -> None:
    # session 9, inside the commit's window, replaced session 7's one-line call by the
    # pieces itself (h11 0.9.0's `Request(...)` / `)`); a later commit changed one
    # piece. The pieces still here are no formatter's split of 7's line: not 7's
    def blame(added: list[str]) -> list[int | None]:
        facts = Facts()
        first = AT_SPLIT[1]
        facts.writes.add_rows(
            [(1, fingerprint(first), 9, 3, added.index(first), 8_000.0, 0)], {1: True}
        )
        facts.edits = Edits({(9, 3): added})
        return _blame(facts, fresh=lambda i, at: at >= 5_000.0)

    # the edit wrote the pieces one below the other, and nothing else
    assert blame(AT_SPLIT[1:5]) == [None] * len(NOW)
    # ... or with the version's lines around them
    assert blame(AT_SPLIT) == [None] * len(NOW)
    # the same pieces around other lines: that edit's split is another place's, this
    # one is the formatter's of session 7's line (h11's `assert (` ... `)`)
    elsewhere = ["def other(rows):", *AT_SPLIT[1:5], "    return totals"]
    assert blame(elsewhere) == [None, 7, 7, None, 7, None]
    # a session's edit that wrote only some of the pieces split nothing
    assert blame(AT_SPLIT[1:3]) == [None, 7, 7, None, 7, None]
