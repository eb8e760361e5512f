"""A lone bracket edit (``};`` -> ``}``: an edit that wrote only trivial lines) is the
line's source in its commit's window, at its place, with its exact text
(``match/lone.py``); and the facts stage reads such writes from the index even where
it leaves trivial writes out (``WriteSet.read_window_writes``)."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from deja_blame.attribution.facts import model as model_mod
from deja_blame.attribution.facts import writes as writes_mod
from deja_blame.attribution.facts.model import CLOCK_SKEW, BlameLine, Key, LineTexts
from deja_blame.attribution.match import lines as matcher
from deja_blame.attribution.match import lone
from deja_blame.index.db import connect
from deja_blame.index.fingerprint import fingerprint
from deja_blame.index.store import insert_writes

C = "c" * 40  # the commit that dropped the semicolons, at 10,000
FLOOR = 5_000.0  # the version it was made from

FILE = [
    "function a() {",  # 0
    "  return 1;",
    "}",  # 2: the session's lone edit
    "",
    "function b() {",
    "  return 2;",
    "}",  # 6: the person's, same commit
    "",
    "function c() {",
    "  if (x) {",
    "    return 3;",
    "  }",  # 11
    "}",  # 12: the session's lone edit
]


def _blamed(commit_lines: set[int]) -> list[BlameLine | None]:
    return [
        BlameLine(
            i + 1,
            C if i in commit_lines else "b" * 40,
            10_000 if i in commit_lines else 1,
            "a.js",
            i + 1,
        )
        for i in range(len(FILE))
    ]


class Edits:
    """(session, edit) -> (time, [(line, text)], by the person): the rows and the
    questions the rule asks of them."""

    def __init__(self, edits: dict[tuple[int, int], tuple[float, list[tuple[int, str]], bool]]):
        self.edits = edits

    def writes(self) -> model_mod.WriteSet:
        rows = [
            (1, fingerprint(t), sid, edit, idx, at, 1 if person else 0)
            for (sid, edit), (at, added, person) in self.edits.items()
            for idx, (_, t) in enumerate(added)
        ]
        ws = model_mod.WriteSet()
        ws.add_rows(sorted(rows, key=lambda r: r[:5]), {1: True})
        return ws

    def position(self, key: Key) -> int | None:
        return self.edits[(key[0], key[1])][1][key[2]][0]

    def added_lines(self, sid: int, edit: int) -> list[str]:
        return [t for _, t in self.edits[(sid, edit)][1]]


def _match(
    edits: Edits,
    blamed: list[BlameLine | None],
    file_edits: lone.FileEdits | None = None,
    file: list[str] = FILE,
) -> list[int | None]:
    out = matcher.match_lines(
        LineTexts.of(file),
        blamed,
        edits.writes(),
        now=20_000.0,
        floor=lambda i: FLOOR,
        position=edits.position,
        added_lines=edits.added_lines,
        file_edits=file_edits,
    )
    return [m.sid if m else None for m in out]


def test_a_lone_bracket_in_its_commit_window_at_its_place_is_the_sessions() -> None:
    edits = Edits({(1, 0): (8_000.0, [(2, "}")], False), (1, 1): (8_100.0, [(12, "}")], False)})
    got = _match(edits, _blamed({2, 6, 12}))
    assert got[2] == 1 and got[12] == 1
    assert got[6] is None  # the person's own "}" of the same commit: no write there


def test_a_lone_bracket_is_no_evidence_out_of_place_time_or_indent() -> None:
    blamed = _blamed({2, 6, 11, 12})
    # written before the version the commit was made from: committed before
    assert _match(Edits({(1, 0): (4_000.0, [(2, "}")], False)}), blamed)[2] is None
    # landed three lines off, with nothing of the session's to say it was shifted
    assert _match(Edits({(1, 0): (8_000.0, [(9, "}")], False)}), blamed)[6] is None
    # another indent: it closed another block (line 11's "  }", not line 12's "}")
    assert _match(Edits({(1, 0): (8_000.0, [(12, "  }")], False)}), blamed)[12] is None
    # an edit that also wrote a line that is not trivial is no lone bracket
    edit = [(6, "}"), (7, "const gone = 1;")]
    assert _match(Edits({(1, 0): (8_000.0, edit, False)}), blamed)[6] is None


def test_whether_an_edit_is_lone_is_told_by_its_writes_or_asked_at_a_glance() -> None:
    # the facts stage keeps no decoded body for a glance (``SessionEdits.glance_added``):
    # most edits whose writes are in a window are not lone, and are not read again;
    # an edit whose writes show a text of the file that is not trivial, or more lines
    # than a lone edit's, is not lone without a glance
    edits = Edits(
        {
            (1, 0): (8_000.0, [(2, "}")], False),
            (2, 0): (8_050.0, [(6, "}"), (7, "  return 2;")], False),
            (3, 0): (8_060.0, [(6, "}"), (7, "const gone = 1;")], False),
            (4, 0): (8_070.0, [(20, "}"), (21, "}"), (22, "}"), (23, "}")], False),
        }
    )
    glanced: list[tuple[int, int]] = []
    read: list[tuple[int, int]] = []

    def glance(sid: int, edit: int) -> list[str]:
        glanced.append((sid, edit))
        return [t for _, t in edits.edits[(sid, edit)][1]]

    def added(sid: int, edit: int) -> list[str]:
        read.append((sid, edit))
        return [t for _, t in edits.edits[(sid, edit)][1]]

    out = matcher.match_lines(
        LineTexts.of(FILE),
        _blamed({2, 6}),
        edits.writes(),
        now=20_000.0,
        floor=lambda i: FLOOR,
        position=edits.position,
        added_lines=added,
        glance_added=glance,
    )
    assert [m.sid if m else None for m in out][2] == 1
    assert sorted(set(glanced)) == [(1, 0), (3, 0)]
    assert not {(2, 0), (3, 0), (4, 0)} & set(read)


def test_the_persons_later_write_at_the_place_takes_the_bracket() -> None:
    edits = Edits({(1, 0): (8_000.0, [(2, "}")], False), (2, 0): (9_000.0, [(2, "}")], True)})
    assert _match(edits, _blamed({2}))[2] is None


def test_the_persons_later_edit_of_more_than_brackets_at_the_place_takes_it_too() -> None:
    # the person's edit is no lone edit (it wrote a line that is not trivial): it still
    # says who wrote the bracket there last
    person = [(2, "}"), (3, "const later = 1;")]
    edits = Edits({(1, 0): (8_000.0, [(2, "}")], False), (2, 0): (9_000.0, person, True)})
    assert _match(edits, _blamed({2}))[2] is None
    alone = Edits({(1, 0): (8_000.0, [(2, "}")], False)})
    assert _match(alone, _blamed({2}))[2] == 1


def test_a_lone_bracket_made_at_either_end_of_its_window_is_in_it() -> None:
    # the window: from the version the commit was made from (FLOOR) to the commit's
    # time and the clock skew, both ends in
    last = 10_000 + CLOCK_SKEW
    for at in (FLOOR, last):
        assert _match(Edits({(1, 0): (at, [(2, "}")], False)}), _blamed({2}))[2] == 1, at
    for at in (FLOOR - 0.5, last + 0.5):
        assert _match(Edits({(1, 0): (at, [(2, "}")], False)}), _blamed({2}))[2] is None, at


def _left_open_by_each_line(
    chosen: list[tuple[Key, int] | None],
    texts: list[str],
    blamed: list[BlameLine | None],
    used: set[Key],
    seen: dict[tuple[int, str | None], dict[Key, int]],
    added_lines: Callable[[int, int], list[str]],
) -> set[int]:
    """``lone._left_open`` as it was first written: each unplaced write passes every
    line between the lines its placed neighbours took."""
    line_of = {pick[0]: i for i, pick in enumerate(chosen) if pick is not None}
    out: set[int] = set()
    for (_, commit), places in seen.items():
        order = sorted(places, key=lambda k: places[k])
        for k, key in enumerate(order):
            if key in used:
                continue
            low = next((line_of[p] for p in reversed(order[:k]) if p in line_of), -1)
            high = next((line_of[p] for p in order[k + 1 :] if p in line_of), len(chosen))
            text = added_lines(key[0], key[1])[key[2]]
            for i in range(low + 1, high):
                b = blamed[i]
                if chosen[i] is None and texts[i] == text and b is not None and b.commit == commit:
                    out.add(i)
    return out


def test_the_lines_a_lone_write_left_open_are_between_its_placed_neighbours() -> None:
    # one session's "}" writes at places 10, 20, 30 of commit c1: the first and the last
    # placed (lines 1 and 5), the middle one not: it is one of the unmatched "}" of c1
    # between lines 1 and 5 (not line 3, another commit's)
    a, b, c = (7, 0, 0), (7, 1, 0), (7, 2, 0)
    texts = ["}"] * 7
    blamed: list[BlameLine | None] = [
        BlameLine(i + 1, "c2" if i == 3 else "c1", 1, "a.js", i + 1) for i in range(7)
    ]
    chosen: list[tuple[Key, int] | None] = [None] * 7
    chosen[1], chosen[5] = (a, 1), (c, 1)
    seen = {(7, "c1"): {a: 10, b: 20, c: 30}}
    got = lone._left_open(chosen, texts, blamed, {a, c}, seen, lambda sid, edit: ["}"])
    assert got == {2, 4}
    # none placed above it: from the file's first line
    got = lone._left_open(
        chosen, texts, blamed, {c}, {(7, "c1"): {b: 20, c: 30}}, lambda s, e: ["}"]
    )
    assert got == {0, 2, 4}


def test_the_lines_left_open_are_those_each_line_passed_to_find() -> None:
    # random files, lone writes and placements: the bisected lines are the ones the
    # first form found by passing every line between the neighbours
    rng = random.Random(38)
    for _ in range(300):
        n = rng.randint(1, 30)
        texts = [rng.choice(["}", "  }", ""]) for _ in range(n)]
        blamed: list[BlameLine | None] = [
            None if rng.random() < 0.1 else BlameLine(i + 1, rng.choice("ab"), 1, "a.js", i + 1)
            for i in range(n)
        ]
        keys = [(rng.randint(1, 3), e, 0) for e in range(rng.randint(1, 12))]
        written = {key: rng.choice(["}", "  }", ""]) for key in keys}
        chosen: list[tuple[Key, int] | None] = [None] * n
        for key in keys:
            if rng.random() < 0.4:
                chosen[rng.randrange(n)] = (key, 1)
        used = {pick[0] for pick in chosen if pick is not None}
        seen: dict[tuple[int, str | None], dict[Key, int]] = {}
        for key in keys:
            seen.setdefault((key[0], rng.choice("ab")), {})[key] = rng.randint(0, 40)
        lines = {(key[0], key[1]): [text] for key, text in written.items()}
        args = (chosen, texts, blamed, used, seen, lambda sid, edit, got=lines: got[(sid, edit)])
        assert lone._left_open(*args) == _left_open_by_each_line(*args)


def test_a_lone_bracket_shifted_as_the_sessions_nearest_line_was() -> None:
    # the session wrote "}" at 10 and, after, function c's body lines at 7..8 of its
    # file; then two lines came above both (the person's): everything moved down 2
    lines = [(6, FILE[8]), (7, FILE[9]), (8, FILE[10])]
    edits = Edits({(1, 0): (8_000.0, [(10, "}")], False), (1, 1): (8_100.0, lines, False)})
    got = _match(edits, _blamed({8, 9, 10, 12}))
    assert got[8:11] == [1, 1, 1] and got[12] == 1
    # no line of the session's to lend its shift: the bracket is nobody's
    alone = Edits({(1, 0): (8_000.0, [(10, "}")], False)})
    assert _match(alone, _blamed({8, 9, 10, 12}))[12] is None


def test_a_lone_bracket_carried_through_the_sessions_later_edits() -> None:
    # from the bottom up: "}" at 9, then three lines of its own on top of the file (text
    # the file no longer holds: no line of the session's lends a shift), then, after the
    # commit, a line above that the commit never saw
    edits = Edits(
        {
            (1, 0): (8_000.0, [(9, "}")], False),
            (1, 1): (8_100.0, [(0, "// a"), (1, "// b"), (2, "// c")], False),
        }
    )
    hunks: dict[int, list[tuple[int, float | None, lone.Hunks]]] = {
        1: [(0, 8_000.0, [(10, 10, 1, 1)]), (1, 8_100.0, [(1, 1, 0, 3)])],
    }
    later = [*hunks[1], (2, 30_000.0, [(1, 1, 0, 2)])]
    assert _match(edits, _blamed({12}), lambda sid, edit: later)[12] == 1
    assert _match(edits, _blamed({12}))[12] is None  # without the hunks: nobody's
    assert _match(edits, _blamed({9}), lambda sid, edit: later)[9] is None  # it left 9


def test_carried_follows_hunks_above_and_stops_where_the_line_was_rewritten() -> None:
    def carry(landed: int, later: list[lone.Hunks], until: float = 100.0) -> int | None:
        rows = [(0, 0.0, None), *[(k + 1, float(k + 1), h) for k, h in enumerate(later)]]
        return lone.carried(landed, (1, 0, 0), until, lambda sid, edit: rows)

    assert carry(20, [[(1, 1, 0, 2)], [(5, 5, 3, 1)]]) == 20  # +2 then -2 above it
    assert carry(20, [[(30, 30, 1, 5)]]) == 20  # below it: no shift
    assert carry(20, [[(21, 21, 0, 4)]]) == 24  # inserted just before it (0-based 20)
    assert carry(20, [[(20, 20, 2, 2)]]) is None  # replaced: a later write is its source
    assert carry(20, [None]) is None  # a whole-file write: no place known
    assert carry(20, [[(1, 1, 0, 2)]], until=0.5) == 20  # after the commit: not counted


def _index(tmp: Path, rows: list[tuple[int, int, int, int, int, float, int]]) -> sqlite3.Connection:
    conn = connect(tmp / "index.db")
    insert_writes(conn, rows)
    return conn


def test_lone_brackets_left_in_the_index_are_read_in_the_commit_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 3,000 sessions wrote "}" in edits of other code, at other times; session 1 wrote
    # function a, and session 2, in the commit's window, only the "}" at line 12
    brace = fingerprint("}")
    rows = [(1, fingerprint(t), 1, 0, k, 1_000.0, 0) for k, t in enumerate(FILE[:2])]
    rows += [(1, brace, sid, 0, 0, 1_000.0 + sid, 0) for sid in range(3, 3_003)]
    rows.append((1, brace, 2, 0, 0, 8_000.0, 0))
    conn = _index(tmp_path, rows)
    monkeypatch.setattr(writes_mod, "NARROW_FROM", 1_000)
    fps = {fingerprint(t) for t in FILE}
    solid = {fingerprint(t) for t in FILE[:2] + FILE[4:6] + FILE[8:11]}
    writes = writes_mod.load_writes(conn, {1: True}, fps, solid=solid)
    assert len(writes.info) == 2  # function a's lines: the brackets were left out
    out = matcher.match_lines(
        LineTexts.of(FILE),
        _blamed({12}),
        writes,
        now=20_000.0,
        floor=lambda i: FLOOR,
        position=lambda key: 12 if key[0] == 2 else key[2],
        added_lines=lambda sid, edit: ["}"] if sid == 2 else FILE[:2],
    )
    assert out[12] is not None and out[12].sid == 2
    assert len(writes.info) == 3  # read: the window's one write, not 3,000
    conn.close()


def test_brackets_one_unseen_block_moved_are_placed_as_a_run() -> None:
    # the session fixed "}" at 8, then at 4 (from the bottom up); in between, the person
    # deleted two lines above both, which no transcript holds: the commit has them at 6
    # and 2, each two lines above where the session's own edits carried it
    edits = Edits({(1, 0): (8_000.0, [(8, "}")], False), (1, 1): (8_100.0, [(4, "}")], False)})
    hunks = [(0, 8_000.0, [(9, 9, 1, 1)]), (1, 8_100.0, [(5, 5, 1, 1)])]
    got = _match(edits, _blamed({2, 6}), lambda sid, edit: hunks)
    assert got[2] == 1 and got[6] == 1
    # one bracket that far from its place could be anyone's
    alone = Edits({(1, 0): (8_000.0, [(8, "}")], False)})
    assert _match(alone, _blamed({2, 6}), lambda sid, edit: hunks[:1])[6] is None


def test_a_run_two_counts_explain_alike_is_nobodys() -> None:
    # brackets evenly spaced (every fourth line): the writes carried to 11 and 15 fit the
    # lines at 9 and 13 (two above) as well as those at 5 and 9 (six above)
    file = ["}" if i % 4 == 1 else f"  step({i});" for i in range(14)]
    edits = Edits({(1, 0): (8_000.0, [(15, "}")], False), (1, 1): (8_100.0, [(11, "}")], False)})
    hunks = [(0, 8_000.0, [(16, 16, 1, 1)]), (1, 8_100.0, [(12, 12, 1, 1)])]
    blamed: list[BlameLine | None] = [
        BlameLine(i + 1, C if t == "}" else "b" * 40, 10_000 if t == "}" else 1, "a.js", i + 1)
        for i, t in enumerate(file)
    ]
    out = _match(edits, blamed, lambda sid, edit: hunks, file)
    assert [i for i, m in enumerate(out) if m is not None] == []
