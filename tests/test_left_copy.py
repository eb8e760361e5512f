"""A copy of a text left to nobody because its own write went to another copy
(``match/left_copy.py``): two edits of one session, both older than the line's
commit window, put one guard at two places with runs of one length."""

from __future__ import annotations

from plain_writes import write_set as _writes

from deja_blame.attribution.facts.model import BlameLine, LineTexts
from deja_blame.attribution.match import lines as matcher
from deja_blame.attribution.match.left_copy import give_left_copies

GUARD = [
    "    if err := submit(sess.ID, sess.Path); err != nil {",
    '        t.Fatalf("submit failed: %v", err)',
]


def _blamed(n: int) -> list[BlameLine | None]:
    return [BlameLine(i + 1, "c" * 40, 10_000, "a.py", i + 1) for i in range(n)]


def _file() -> list[str]:
    # the first copy with the first edit's comment line above it (the file holds
    # it once), the second 48 lines below with the "}" it closes
    file = [f"line_{k} = {k}" for k in range(80)]
    file[10] = "    // start the session with its transcript path"
    file[11], file[12], file[13] = *GUARD, "    }"
    file[60], file[61], file[62] = *GUARD, "    }"
    return file


def _match(
    edits: list[tuple[int, int, float, list[str]]],
    places: dict[tuple[int, int, int], int],
    fresh: bool,
) -> list[tuple[int, int, int] | None]:
    file = _file()
    out = matcher.match_lines(
        LineTexts.of(file),
        _blamed(len(file)),
        _writes(edits),
        now=20_000.0,
        stale=lambda *_: False,
        fresh=lambda i, at: fresh,
        position=lambda key: places.get(key),
    )
    return [(m.sid, m.edit_ord, m.idx) if m else None for m in out]


COMMENTED = (1, 0, 100.0, [_file()[10], *GUARD])
CLOSED = (1, 1, 110.0, [*GUARD, "    }"])
PLACES = {(1, 0, 0): 10, (1, 0, 1): 11, (1, 0, 2): 12, (1, 1, 0): 60, (1, 1, 1): 61, (1, 1, 2): 62}


def test_each_copy_of_a_guard_goes_to_the_edit_that_wrote_it() -> None:
    # both runs are three lines; the later edit's reached the first copy first and
    # took it: the second copy, where it landed, went to nobody
    got = _match([COMMENTED, CLOSED], PLACES, fresh=False)
    assert got[10:13] == [(1, 0, 0), (1, 0, 1), (1, 0, 2)]
    assert got[60:62] == [(1, 1, 0), (1, 1, 1)]


def test_in_the_commit_window_the_order_already_placed_them() -> None:
    got = _match([COMMENTED, CLOSED], PLACES, fresh=True)
    assert got[10:13] == [(1, 0, 0), (1, 0, 1), (1, 0, 2)]
    assert got[60:62] == [(1, 1, 0), (1, 1, 1)]


def test_a_write_of_another_session_is_not_moved() -> None:
    # the same two edits by two sessions: the first copy's holder cannot give way to
    # another session's write, and the second copy stays nobody's
    other = (2, 0, 100.0, COMMENTED[3])
    places = {(2, k[1], k[2]) if k[1] == 0 else k: v for k, v in PLACES.items()}
    got = _match([other, CLOSED], places, fresh=False)
    assert got[11:13] == [(1, 1, 0), (1, 1, 1)]
    assert got[60:62] == [None, None]


def test_one_write_is_one_line() -> None:
    # only the second edit: its write is one line, given once, to the copy it reached
    got = _match([CLOSED], PLACES, fresh=False)
    assert sum(1 for g in got if g is not None and g[2] == 0) == 1


def test_the_function_alone() -> None:
    # line 0 holds write A (landed by line 1), line 1 holds nothing; B of the same
    # session landed by line 0 and is free: line 0 takes B, line 1 takes A
    a, b, c = (1, 1, 0), (1, 0, 0), (2, 0, 0)
    chosen: list[tuple[tuple[int, int, int], int] | None] = [(a, 3), None]
    runs = [{a: (3, 2, 0), b: (3, 2, 0)}, {a: (3, 2, 0), b: (2, 1, 0)}]
    where = {a: 1, b: 0, c: 0}
    used = {a}
    given = give_left_copies(
        chosen, runs, [7, 7], [True, True], used, lambda i, k: abs(i - where[k]),
        lambda i, k: True,
    )  # fmt: skip
    assert given == [1] and chosen == [(b, 3), (a, 3)] and used == {a, b}
    # in the window (not older): left as it is
    chosen = [(a, 3), None]
    assert give_left_copies(
        chosen, runs, [7, 7], [True, True], {a}, lambda i, k: abs(i - where[k]),
        lambda i, k: False,
    ) == []  # fmt: skip
    assert chosen == [(a, 3), None]
    # B shorter at line 0 than the run A holds there: no
    runs[0][b] = (2, 1, 0)
    chosen = [(a, 3), None]
    assert give_left_copies(
        chosen, runs, [7, 7], [True, True], {a}, lambda i, k: abs(i - where[k]),
        lambda i, k: True,
    ) == []  # fmt: skip
