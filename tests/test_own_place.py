"""A rebased or split commit's repeated lines, placed by their edit's own line the file
holds once (``match/own_place.py``): the commit window opened to a session's earlier
commits, on the write's own evidence."""

from __future__ import annotations

from deja_blame.attribution.facts.model import BlameLine, LineTexts, WriteSet
from deja_blame.attribution.match.clock import Deadlines
from deja_blame.attribution.match.lines import LineMatch
from deja_blame.attribution.match.own_place import REACH, placed_by_own_lines
from deja_blame.index.fingerprint import fingerprint

C = "c" * 40  # the commit that brought the edit's work (rebased: every write older)
OLD = "b" * 40
SID, ORD = 1, 0
AT = 5_000.0

# The session's edit changed a function in three places (one edit, three hunks: its
# added lines landed at 10, 13 and 14 of its file); a person then changed the line
# between. The file at C: the edit's unique line matched, its repeated lines not.
FILE = [
    "func load(dir string) (*Store, error) {",  # 0: older
    "\tstore, err := open(dir)",  # 1: older
    "\tif err != nil {",  # 2: older, the same text as line 5
    '\t\treturn nil, fmt.Errorf("open store: %w", err)',  # 3: the edit's, unique
    "\t}",  # 4
    "\tif err != nil {",  # 5: the edit's, repeated (refused by the window)
    "\t\treturn nil, nil",  # 6: the edit's, repeated
    "\t}",  # 7
    "\treturn nil, nil",  # 8: older
]
EDIT = [FILE[3], FILE[5], FILE[6]]
PLACES = [13, 15, 16]  # where each of the edit's lines landed in the session's file
LINE_OF = {0: 3, 1: 5, 2: 6}


def _writes(person_at: float | None = None, at: float = AT) -> WriteSet:
    writes = WriteSet()
    rows = [(1, fingerprint(t), SID, ORD, k, at, 0) for k, t in enumerate(EDIT)]
    if person_at is not None:  # a person's USER diff block of the repeated line
        rows.append((1, fingerprint(FILE[6]), 3, 0, 0, person_at, 1))
    writes.add_rows(sorted(rows, key=lambda r: r[:5]), {1: True})
    return writes


def _blamed(commit_of: dict[int, str] | None = None) -> list[BlameLine | None]:
    brought = {3, 5, 6}
    out: list[BlameLine | None] = []
    for i in range(len(FILE)):
        commit = (commit_of or {}).get(i, C if i in brought else OLD)
        out.append(BlameLine(i + 1, commit, 1 if commit == OLD else 10_000, "s.go", i + 1))
    return out


def _match(idx: int) -> LineMatch:
    return LineMatch(sid=SID, edit_ord=ORD, idx=idx, at=AT, confidence=0.97, run=1)


def _anchored() -> list[LineMatch | None]:
    out: list[LineMatch | None] = [None] * len(FILE)
    out[3] = _match(0)  # the line the file holds once
    return out


def _position(key: tuple[int, int, int]) -> int | None:
    return PLACES[key[2]] if key[0] == SID else None


def _who(matches: list[LineMatch | None]) -> list[int | None]:
    return [None if m is None else m.idx for m in matches]


def _run(
    texts: list[str] = FILE,
    blamed: list[BlameLine | None] | None = None,
    start: list[LineMatch | None] | None = None,
    writes: WriteSet | None = None,
    position=_position,  # noqa: ANN001
    same_clock: frozenset[int] = frozenset(),
) -> list[LineMatch | None]:
    blamed = _blamed() if blamed is None else blamed
    return placed_by_own_lines(
        LineTexts.of(texts),
        blamed,
        _anchored() if start is None else start,
        _writes() if writes is None else writes,
        Deadlines.of(blamed, 20_000.0, same_clock),
        position,
    )


def test_an_edit_s_repeated_lines_go_where_its_unique_line_places_them() -> None:
    out = _run()
    assert _who(out) == [None, None, None, 0, None, 1, 2, None, None]
    assert all(m.sid == SID for m in out if m is not None)


def test_by_the_edit_s_places_not_its_lines_order() -> None:
    # the same edit with its hunks elsewhere: its repeated lines land on no line of theirs
    out = _run(position=lambda key: [13, 30, 31][key[2]])
    assert _who(out) == _who(_anchored())
    # an edit with no place (a heredoc) counts its lines one below the other
    texts = FILE[:4] + FILE[5:]
    blamed: list[BlameLine | None] = [
        BlameLine(i + 1, C, 10_000, "s.go", i + 1)
        if i in (3, 4, 5)
        else BlameLine(i + 1, OLD, 1, "s.go", i + 1)
        for i in range(len(texts))
    ]
    out = _run(texts=texts, blamed=blamed, position=lambda key: None)
    assert _who(out)[3:6] == [0, 1, 2]


def test_not_without_a_line_the_file_holds_once() -> None:
    texts = list(FILE)
    texts[8] = FILE[3]  # the anchor's text twice in the file
    assert _who(_run(texts=texts)) == _who(_anchored())


def test_not_a_line_an_older_commit_kept() -> None:
    # the first commit of a rebased pair, made after the write like the anchor's
    first = "d" * 40
    blamed = _blamed()
    blamed[5] = BlameLine(6, first, 9_000, "s.go", 6)
    out = _run(blamed=blamed)
    assert _who(out) == [None, None, None, 0, None, None, 2, None, None]


def test_not_a_text_a_person_wrote_since_nor_a_write_after_the_commit() -> None:
    out = _run(writes=_writes(person_at=6_000.0))
    assert _who(out) == [None, None, None, 0, None, 1, None, None, None]
    out = _run(writes=_writes(person_at=4_000.0))  # before the session's: says nothing
    assert _who(out)[6] == 2
    # a minute after the commit: another machine's clock may be that far ahead; a
    # session on git's clock wrote it after the commit
    late = _writes(at=10_060.0)
    assert _who(_run(writes=late))[5:7] == [1, 2]
    assert _who(_run(writes=late, same_clock=frozenset({SID})))[5:7] == [None, None]


def test_a_look_alike_line_gives_the_write_back_unless_the_edit_places_it_there() -> None:
    start = _anchored()
    start[8] = _match(2)  # the matcher gave the edit's "return nil, nil" to line 8
    out = _run(start=start)
    assert _who(out) == [None, None, None, 0, None, 1, 2, None, None]
    # a second anchor of the edit that places the write on line 8 keeps it there (the
    # first places it on line 6: the person deleted two lines between since)
    texts = [*FILE, "\t// the end"]
    blamed = [*_blamed(), BlameLine(10, C, 10_000, "s.go", 10)]
    start = [*start, _match(3)]
    edit = [*EDIT, texts[9]]
    writes = WriteSet()
    rows = [(1, fingerprint(t), SID, ORD, k, AT, 0) for k, t in enumerate(edit)]
    writes.add_rows(sorted(rows, key=lambda r: r[:5]), {1: True})
    out = _run(
        texts=texts,
        blamed=blamed,
        start=start,
        writes=writes,
        position=lambda key: [13, 15, 16, 17][key[2]],
    )
    assert _who(out)[5] == 1
    assert _who(out)[6] is None and _who(out)[8] == 2


# Two edits of one session wrote the same guard in two functions, each with a line of
# its own; the matcher gave the later edit's guard (fresh there) to the earlier's lines.
TWO = [
    "\tif data == nil {",  # 0: edit 0's guard
    "\t\treturn nil",  # 1
    "\tlogSaved(path)",  # 2: edit 0's own line
    "}",  # 3
    "func remove(path string, data []byte) error {",  # 4: older
    "\tif data == nil {",  # 5: edit 1's guard
    "\t\treturn nil",  # 6
    "\tlogRemoved(path)",  # 7: edit 1's own line
]


def test_a_line_given_back_is_placed_in_the_next_pass() -> None:
    writes = WriteSet()
    rows = [(1, fingerprint(t), SID, 0, k, AT, 0) for k, t in enumerate(TWO[0:3])]
    rows += [(1, fingerprint(t), SID, 1, k, AT + 5, 0) for k, t in enumerate(TWO[5:8])]
    writes.add_rows(sorted(rows, key=lambda r: r[:5]), {1: True})
    blamed: list[BlameLine | None] = [
        BlameLine(i + 1, OLD if i in (3, 4) else C, 1 if i in (3, 4) else 10_000, "s.go", i + 1)
        for i in range(len(TWO))
    ]
    start: list[LineMatch | None] = [None] * len(TWO)
    start[0] = LineMatch(sid=SID, edit_ord=1, idx=0, at=AT + 5, confidence=0.97, run=1)
    start[1] = LineMatch(sid=SID, edit_ord=1, idx=1, at=AT + 5, confidence=0.97, run=1)
    start[2] = LineMatch(sid=SID, edit_ord=0, idx=2, at=AT, confidence=0.97, run=1)
    start[7] = LineMatch(sid=SID, edit_ord=1, idx=2, at=AT + 5, confidence=0.97, run=1)
    places = {0: [10, 11, 12], 1: [20, 21, 22]}
    out = _run(
        texts=TWO,
        blamed=blamed,
        start=start,
        writes=writes,
        position=lambda key: places[key[1]][key[2]],
    )
    got = [None if m is None else (m.edit_ord, m.idx) for m in out]
    assert got == [(0, 0), (0, 1), (0, 2), None, None, (1, 0), (1, 1), (1, 2)]


def test_only_within_reach_of_the_anchor() -> None:
    pad = [f"\tlog.Print({k})" for k in range(REACH)]
    texts = FILE[:4] + pad + FILE[4:]
    blamed = _blamed()
    blamed = blamed[:4] + [BlameLine(0, C, 10_000, "s.go", 0)] * REACH + blamed[4:]
    start = _anchored()
    start = start[:4] + [None] * REACH + start[4:]
    out = _run(
        texts=texts,
        blamed=blamed,
        start=start,
        position=lambda key: [13, 15 + REACH, 16 + REACH][key[2]],
    )
    assert [m for m in out if m is not None] == [_match(0)]
    # two lines nearer: the first is in reach, the second not
    out = _run(
        texts=texts[:4] + texts[6:],
        blamed=blamed[:4] + blamed[6:],
        start=start[:4] + start[6:],
        position=lambda key: [13, 13 + REACH, 14 + REACH][key[2]],
    )
    assert _who(out)[3 + REACH] == 1 and _who(out)[4 + REACH] is None
