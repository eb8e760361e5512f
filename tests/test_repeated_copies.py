"""A session writes one repeated block into two functions (issue 40: repeated text
placed by the nearest write in time and place, not refused). Each copy is the
session's; the matcher must find which of its writes landed where:

- an edit with no line of its own the file holds once is placed by the session's
  other lines, read in the session's file as the commit found it (both carried
  through its later edits: ``lines._Carrier``), not by the line whose *written*
  place is nearest (a function the session wrote afterwards between the two);
- of identical edits (twins), one whose place is far from a copy does not turn the
  copy away before the next twin, which landed there, is tried.

Plain data, as ``tests/test_repeated_place.py``.
"""

from __future__ import annotations

from collections.abc import Callable

from deja_blame.attribution.facts import model as model_mod
from deja_blame.attribution.facts.model import BlameLine, Hunks, Key, LineTexts
from deja_blame.attribution.match import lines as matcher
from deja_blame.attribution.match import lone
from deja_blame.index.fingerprint import fingerprint

C = "c" * 40  # the commit that brought the session's lines
OLD = "b" * 40
BLOCK = ["\tif cached {", "\t\treturn value", "\t}"]
HELPER = 45  # lines of a helper the session wrote between the two functions, last


def _blame(file: list[str], ours: set[int]) -> list[BlameLine | None]:
    return [
        BlameLine(i + 1, C if i in ours else OLD, 10_000 if i in ours else 1, "cache.go", i + 1)
        for i in range(len(file))
    ]


Edit = tuple[float, list[int]]  # (time, the lines of the final file it inserted)


def _replay(edits: dict[int, Edit], length: int) -> tuple[dict[Key, int], dict[int, Hunks]]:
    """Each edit's lines inserted, in order, into the session's file (every other line
    of the final file there from the start): where each landed (0-based, as the edit
    left the file) and each edit's hunks (old start, new start, removed, added)."""
    present = set(range(length)) - {i for _, added in edits.values() for i in added}
    places: dict[Key, int] = {}
    hunks: dict[int, Hunks] = {}
    for o in sorted(edits):
        _, added = edits[o]
        present |= set(added)
        rank = {line: n for n, line in enumerate(sorted(present))}
        for k, line in enumerate(added):
            places[(1, o, k)] = rank[line]
        runs: list[list[int]] = []
        for line in added:
            if runs and rank[line] == rank[runs[-1][-1]] + 1:
                runs[-1].append(line)
            else:
                runs.append([line])
        got: list[tuple[int, int, int, int]] = []
        before = 0
        for run in runs:
            new_start = rank[run[0]] + 1
            got.append((new_start - before, new_start, 0, len(run)))
            before += len(run)
        hunks[o] = got
    return places, hunks


def _writes(file: list[str], edits: dict[int, Edit]) -> model_mod.WriteSet:
    writes = model_mod.WriteSet()
    rows = [
        (1, fingerprint(file[line]), 1, o, k, at, 0)
        for o, (at, added) in edits.items()
        for k, line in enumerate(added)
    ]
    writes.add_rows(sorted(rows, key=lambda r: r[:5]), {1: True})
    return writes


def _sids(
    file: list[str], edits: dict[int, Edit], typed: frozenset[int] = frozenset()
) -> list[int | None]:
    """Who matches each line; ``typed``: lines the person typed in the commit too."""
    places, hunks = _replay(edits, len(file))
    written = {
        (1, o, k): file[line] for o, (_, added) in edits.items() for k, line in enumerate(added)
    }
    return _match(file, edits, places, hunks, typed, written.get)


def _file_edits(edits: dict[int, Edit], hunks: dict[int, Hunks]) -> lone.FileEdits:
    """The session's edits of the file, as ``match_lines`` asks them: every one, in order."""

    def file_edits(sid: int, edit: int) -> list[tuple[int, float | None, Hunks]]:
        return [(o, edits[o][0], hunks[o]) for o in sorted(edits)]

    return file_edits


def _one_block_in_two_functions() -> tuple[list[str], dict[int, Edit]]:
    # edit 0 adds alpha to a() and beta to b(); edit 1 the block and first() to a();
    # edit 2 the same block to b() (no line of its own); edit 3, last, a helper of
    # HELPER lines between a() and b() (every line its own)
    helper = [f"\tstep{n} := load({n})" for n in range(HELPER)]
    file = (
        ["func a() {", "\talpha := one()", *BLOCK, "\tfirst := aOnly()", "}"]
        + helper
        + ["func b() {", "\tbeta := two()", *BLOCK, "}"]
    )
    b = 7 + HELPER  # func b()
    edits = {
        0: (1_000.0, [1, b + 1]),
        1: (2_000.0, [2, 3, 4, 5]),
        2: (2_010.0, [b + 2, b + 3, b + 4]),
        3: (2_020.0, list(range(7, b))),
    }
    return file, edits


def test_an_edit_without_its_own_lines_is_placed_in_the_sessions_later_file() -> None:
    file, edits = _one_block_in_two_functions()
    got = _sids(file, edits)
    b = 7 + HELPER
    assert [got[i] for i in (2, 3)] == [1, 1]  # a()'s copy
    assert [got[i] for i in (b + 2, b + 3)] == [1, 1]  # b()'s copy: edit 2's
    assert got[0] is None and got[b] is None  # the person's lines


def test_carried_places_follow_the_sessions_later_hunks() -> None:
    file, edits = _one_block_in_two_functions()
    places, hunks = _replay(edits, len(file))
    assert places[(1, 2, 0)] == 9  # edit 2's block landed below beta
    assert hunks[3] == [(8, 8, 0, HELPER)]  # the helper went in above b()
    file_edits = _file_edits(edits, hunks)
    # edit 2's block stands HELPER lines lower once edit 3 is made, not before
    assert lone.carried(9, (1, 2, 0), 3_000.0, file_edits) == 9 + HELPER
    assert lone.carried(9, (1, 2, 0), 2_015.0, file_edits) == 9
    # beta (edit 0, landed at 4) is pushed down by edit 1's four lines and the helper
    assert places[(1, 0, 1)] == 4
    assert lone.carried(4, (1, 0, 1), 3_000.0, file_edits) == 8 + HELPER


def test_identical_edits_each_keep_the_copy_they_wrote() -> None:
    # Edits 1 and 2 wrote the same two lines, into a() and into b(): twins. The
    # latest (2) landed in b(); a()'s copy is far from it and must be offered edit 1.
    pad = [f"\tpad{n} := keep({n})" for n in range(HELPER)]
    file = (
        ["func a() {", "\talpha := one()", *BLOCK, "}"]
        + pad
        + ["func b() {", "\tbeta := two()", *BLOCK, "}"]
    )
    b = 6 + HELPER  # func b()
    edits = {
        0: (1_000.0, [1, b + 1]),
        1: (2_000.0, [2, 3]),
        2: (2_010.0, [b + 2, b + 3]),
    }
    assert _writes(file, edits).twins()[(1, 1)].members == [(1, 2), (1, 1)]  # latest first
    got = _sids(file, edits)
    assert [got[i] for i in (2, 3)] == [1, 1]  # edit 1's copy in a()
    assert [got[i] for i in (b + 2, b + 3)] == [1, 1]  # edit 2's in b()


def test_a_twin_passed_on_takes_only_the_copy_it_landed_at() -> None:
    # Three identical one-line edits: the latest (3) at another indent far above, 1 and
    # 2 at two of three copies in sw(); the person typed the third copy in the same
    # commit. The copies turned away by the latest twin (far, and taken by its own
    # line) are offered the others, which take only the copy each landed at.
    pad = [f"\tpad{n} := keep({n})" for n in range(HELPER)]
    gap = [f"\tx{n} := {n}" for n in range(5)]
    file = (
        ["func top() {", "\talpha := one()", "\tcase Set:", "}"]
        + pad
        + ["func sw() {", "\t\tcase Set:", *gap, "\t\tcase Set:", *gap, "\t\tcase Set:", "}"]
    )
    person, first, second = 5 + HELPER, 11 + HELPER, 17 + HELPER
    edits = {
        0: (1_000.0, [1]),
        1: (2_000.0, [first]),
        2: (2_010.0, [second]),
        3: (2_020.0, [2]),
    }
    assert _writes(file, edits).twins()[(1, 1)].members == [(1, 3), (1, 2), (1, 1)]
    got = _sids(file, edits, typed=frozenset({person}))
    assert got[2] == 1
    assert got[first] == 1 and got[second] == 1
    assert got[person] is None


def test_the_carrier_knows_when_an_anchor_beyond_a_window_was_written() -> None:
    """A window's question (``deja why FILE:N``) loads the writes of its own lines;
    the session's anchors beyond them (``_anchors_beyond``) are writes it did not
    load. Their time is their edit's, known from any loaded write of that edit, or
    unknown: never a KeyError (``deja why`` stopped with an unexpected error on a
    real history at 3,000 sessions)."""
    loaded: Key = (7, 2, 0)
    carrier = matcher._Carrier(
        {loaded: (0, 50.0, False, False, 0)},
        {(7, 2): (50.0, False, False)},
        {},  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
    )
    assert carrier.time(loaded) == 50.0
    assert carrier.time((7, 2, 9)) == 50.0  # another line of the same edit
    assert carrier.time((8, 0, 0)) is None  # an edit nothing of which was loaded


def _match(
    file: list[str],
    edits: dict[int, Edit],
    places: dict[Key, int],
    hunks: dict[int, Hunks] | None = None,
    typed: frozenset[int] = frozenset(),
    written_text: Callable[[Key], str | None] | None = None,
) -> list[int | None]:
    """The session's lines matched where ``places`` says each write landed: every line
    of ``edits`` the session's, in one commit (with ``typed``, lines the person typed
    in it too); ``hunks``: the edits' hunks, for the places carried by later edits."""
    ours = {line for _, added in edits.values() for line in added} | typed
    out = matcher.match_lines(
        LineTexts.of(file),
        _blame(file, ours),
        _writes(file, edits),
        now=20_000.0,
        position=places.get,
        added_lines=lambda sid, edit: [file[line] for line in edits[edit][1]],
        file_edits=None if hunks is None else _file_edits(edits, hunks),
        written_text=written_text,
    )
    return [m.sid if m else None for m in out]


def test_a_copy_the_first_twin_does_not_turn_away_takes_any_free_twin() -> None:
    # Three identical one-line edits (3, 2, 1: latest first) of a text the file holds
    # twice, at 10 and 50. Edit 3 landed by the copy at 50 (which takes it); for the
    # copy at 10 it is 38 lines off: near enough, but taken. The next twins landed
    # where nothing says (130: far; 45: five lines off), as a replayed history's
    # twins do. Only a copy the first twin turned away as far is held to where
    # later twins landed: asked of every twin, their own places lost such copies
    # (express ``lib/response.js`` at 3,000 sessions: four `` * @public`` lines).
    file = [f"\tline{n} := unique({n})" for n in range(140)]
    file[10] = file[50] = "\t * @public"
    edits = {
        0: (1_000.0, [20, 60, 120]),  # the session's own lines: shift 0 near each place
        1: (2_000.0, [50]),
        2: (2_010.0, [10]),
        3: (2_020.0, [50]),
    }
    places = {(1, 0, 0): 20, (1, 0, 1): 60, (1, 0, 2): 120}
    places.update({(1, 1, 0): 45, (1, 2, 0): 130, (1, 3, 0): 48})
    assert _writes(file, edits).twins()[(1, 1)].members == [(1, 3), (1, 2), (1, 1)]
    got = _match(file, edits, places)
    assert got[50] == 1
    assert got[10] == 1


def test_a_write_near_its_copy_as_written_keeps_it_whatever_its_carried_place() -> None:
    # The session wrote the block at 5 (edit 1), where it stands; its later edit 2's
    # hunk says 20 lines went in at the top, but its lines landed all over the file
    # (0-23, written; the final file has them elsewhere): what moved the file between
    # the session's edits is not all in its hunks (a person's edits are not). Read
    # at the carried place (25), the block was 20 lines off both copies and its
    # lines went to nobody; the written place is the reading where it is near.
    file = [f"\tline{j} := unique({j})" for j in range(62)]
    for c in (5, 45):
        file[c : c + 3] = BLOCK[:2] + ["\t}"]
    late = [0, 8, 12, 19, 21, 23, 28, 29, 31, 33, 35, 37, 38, 40, 42, 44, 51, 59, 60, 61]
    edits = {0: (1_000.0, [13, 18, 30, 43]), 1: (2_000.0, [5, 6, 7]), 2: (2_010.0, late)}
    places = {(1, 0, 0): 11, (1, 0, 1): 15, (1, 0, 2): 28, (1, 0, 3): 38}
    places.update({(1, 1, k): 5 + k for k in range(3)})
    written = [0] * 13 + [2, 3, 6, 15, 19, 22, 23]
    places.update({(1, 2, k): at for k, at in enumerate(written)})
    hunks: dict[int, Hunks] = {0: [(8, 12, 0, 4)], 1: [(3, 6, 0, 3)], 2: [(1, 1, 0, 20)]}
    got = _match(file, edits, places, hunks)
    assert [got[i] for i in (5, 6, 7)] == [1, 1, 1]
    assert [got[i] for i in (45, 46)] == [None, None]  # the person's copy
