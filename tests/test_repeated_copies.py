"""A session writes one repeated block into two functions (issue 40: repeated text
placed by the nearest write in time and place, not refused). Each copy is the
session's; the matcher must find which of its writes landed where:

- an edit with no line of its own the file holds once is placed by the session's
  other lines, read in the session's file as the commit found it (both carried
  through its later edits: ``lines._Carrier``), not by the line whose *written*
  place is nearest (a function the session wrote afterwards between the two).

Plain data, as ``tests/test_repeated_place.py``.
"""

from __future__ import annotations

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


def _sids(file: list[str], edits: dict[int, Edit]) -> list[int | None]:
    ours = {line for _, added in edits.values() for line in added}
    places, hunks = _replay(edits, len(file))

    def file_edits(sid: int, edit: int) -> list[tuple[int, float | None, Hunks]]:
        return [(o, edits[o][0], hunks[o]) for o in sorted(edits)]

    out = matcher.match_lines(
        LineTexts.of(file),
        _blame(file, ours),
        _writes(file, edits),
        now=20_000.0,
        position=places.get,
        added_lines=lambda sid, edit: [file[line] for line in edits[edit][1]],
        file_edits=file_edits,
    )
    return [m.sid if m else None for m in out]


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

    def file_edits(sid: int, edit: int) -> list[tuple[int, float | None, Hunks]]:
        return [(o, edits[o][0], hunks[o]) for o in sorted(edits)]

    # edit 2's block stands HELPER lines lower once edit 3 is made, not before
    assert lone.carried(9, (1, 2, 0), 3_000.0, file_edits) == 9 + HELPER
    assert lone.carried(9, (1, 2, 0), 2_015.0, file_edits) == 9
    # beta (edit 0, landed at 4) is pushed down by edit 1's four lines and the helper
    assert places[(1, 0, 1)] == 4
    assert lone.carried(4, (1, 0, 1), 3_000.0, file_edits) == 8 + HELPER


def test_the_carrier_knows_when_an_anchor_beyond_a_window_was_written() -> None:
    """A window's question (``deja why FILE:N``) loads the writes of its own lines;
    the session's anchors beyond them (``_anchors_beyond``) are writes it did not
    load. Their time is their edit's, known from any loaded write of that edit, or
    unknown: never a KeyError (``deja why`` stopped with an unexpected error on a
    real history at 3,000 sessions)."""
    loaded: Key = (7, 2, 0)
    carrier = matcher._Carrier({loaded: (0, 50.0, False, False, 0)}, {}, None)  # type: ignore[arg-type]
    assert carrier.time(loaded) == 50.0
    assert carrier.time((7, 2, 9)) == 50.0  # another line of the same edit
    assert carrier.time((8, 0, 0)) is None  # an edit nothing of which was loaded
