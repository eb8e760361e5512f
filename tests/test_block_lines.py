"""A block one edit wrote and one commit brought: the lines between its matched lines
whose texts the file holds many times (refused by the commit-window rule, the work
having been rebased or split) are the edit's too (``match/block.py``)."""

from __future__ import annotations

from deja_blame.attribution.facts.gather import WINDOW_CONTEXT
from deja_blame.attribution.facts.model import BlameLine, WriteSet
from deja_blame.attribution.match.block import REACH, continue_blocks
from deja_blame.attribution.match.clock import Deadlines
from deja_blame.attribution.match.lines import LineMatch
from deja_blame.index.fingerprint import fingerprint, is_trivial

C = "c" * 40  # the commit that brought the session's test
OLD = "b" * 40

FILE = [
    "func TestOld(t *testing.T) {",  # 0: older
    "\tdir := t.TempDir()",
    "}",
    "func TestNew(t *testing.T) {",  # 3: the session's, unique
    "\tdir := t.TempDir()",  # 4: repeated
    "\trequire.NoError(t, err)",  # 5: repeated
    "",  # 6: given (the chain reaches it between the edit's lines)
    "\trequire.NoError(t, err)",  # 7: repeated
    "\tcheckUnique(dir)",  # 8: unique
    "}",  # 9: passed, not given
]
EDIT = FILE[3:10]  # the session's edit: sid 1, edit 0, its lines 0..6
SID, ORD = 1, 0
AT = 5_000.0  # the write, older than the commit's parent


def _writes(person_at: float | None = None, other: list[str] | None = None) -> WriteSet:
    writes = WriteSet()
    rows = [(1, fingerprint(t), SID, ORD, k, AT, 0) for k, t in enumerate(EDIT)]
    if other is not None:  # another session's edit (sid 2) of these texts
        rows += [(1, fingerprint(t), 2, 0, k, AT + 10, 0) for k, t in enumerate(other)]
    if person_at is not None:  # a person's USER diff block of the repeated line
        rows.append((1, fingerprint(FILE[5]), 3, 0, 0, person_at, 1))
    writes.add_rows(sorted(rows, key=lambda r: r[:5]), {1: True})
    return writes


def _deadlines(
    blamed: list[BlameLine | None], same_clock: frozenset[int] = frozenset()
) -> Deadlines:
    """How late each session's write may be and be each line's source, at 20,000 s."""
    return Deadlines.of(blamed, 20_000.0, same_clock)


def _blamed(commit_of: dict[int, str] | None = None) -> list[BlameLine | None]:
    out: list[BlameLine | None] = []
    for i in range(len(FILE)):
        commit = (commit_of or {}).get(i, C if i >= 3 else OLD)
        at = 1 if commit == OLD else 10_000
        out.append(BlameLine(i + 1, commit, at, "x_test.go", i + 1))
    return out


def _match(i: int, idx: int) -> LineMatch:
    return LineMatch(sid=SID, edit_ord=ORD, idx=idx, at=AT, confidence=0.97, run=1)


def _anchored() -> list[LineMatch | None]:
    """What the matcher gave: the unique lines only."""
    out: list[LineMatch | None] = [None] * len(FILE)
    out[3] = _match(3, 0)
    out[8] = _match(8, 5)
    return out


def _who(matches: list[LineMatch | None]) -> list[tuple[int, int] | None]:
    return [None if m is None else (m.sid, m.idx) for m in matches]


FPS = [fingerprint(t) for t in FILE]
TRIVIAL = [is_trivial(t) for t in FILE]


def test_lines_between_an_edits_matched_lines_are_its_own() -> None:
    out = continue_blocks(FPS, TRIVIAL, _blamed(), _anchored(), _writes(), _deadlines(_blamed()))
    # the blank line is given, the bracket passed, not given
    assert _who(out) == [None, None, None, (1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (1, 5), None]


def test_up_from_a_matched_line() -> None:
    start: list[LineMatch | None] = [None] * len(FILE)
    start[8] = _match(8, 5)
    out = continue_blocks(FPS, TRIVIAL, _blamed(), start, _writes(), _deadlines(_blamed()))
    assert _who(out)[3:] == [(1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (1, 5), None]


def test_a_bracket_starts_no_block() -> None:
    start: list[LineMatch | None] = [None] * len(FILE)
    start[6] = _match(6, 3)  # the blank line, given on weaker evidence
    out = continue_blocks(FPS, TRIVIAL, _blamed(), start, _writes(), _deadlines(_blamed()))
    assert _who(out)[3:] == [None, None, None, (1, 3), None, None, None]


def test_not_across_a_line_another_commit_brought() -> None:
    # line 5 brought by another commit (made after the write too): not this block's,
    # and the chain stops there
    out = continue_blocks(
        FPS,
        TRIVIAL,
        _blamed({5: "d" * 40}),
        _anchored(),
        _writes(),
        _deadlines(_blamed({5: "d" * 40})),
    )
    assert _who(out)[3:] == [(1, 0), (1, 1), None, (1, 3), (1, 4), (1, 5), None]


def test_not_a_text_the_edit_did_not_write_there() -> None:
    # the line below the anchor has another text than the edit's next line
    texts = list(FILE)
    texts[4] = "\tdir := os.TempDir()"
    fps = [fingerprint(t) for t in texts]
    out = continue_blocks(fps, TRIVIAL, _blamed(), _anchored(), _writes(), _deadlines(_blamed()))
    assert _who(out)[3:] == [(1, 0), None, (1, 2), (1, 3), (1, 4), (1, 5), None]


def test_not_a_text_a_person_wrote_since() -> None:
    out = continue_blocks(
        FPS, TRIVIAL, _blamed(), _anchored(), _writes(person_at=6_000.0), _deadlines(_blamed())
    )
    assert _who(out)[5] is None
    # a person's write before the session's says nothing
    out = continue_blocks(
        FPS, TRIVIAL, _blamed(), _anchored(), _writes(person_at=4_000.0), _deadlines(_blamed())
    )
    assert _who(out)[5] == (1, 2)


def test_a_person_s_writes_count_from_after_the_session_s_to_the_commit_s_limit() -> None:
    """Only a person's write made after the session's (``AT``) and by the line's limit
    (its commit's time and the clock's skew) takes the line from the block; several
    people's writes of the text, in any order, as one."""
    limit = 10_000 + 120  # ``clock.latest_write`` of the commit (time 10,000)
    for person, given in [
        ([AT], True),  # at the session's own time: not since
        ([AT + 1], False),
        ([limit], False),  # at the limit: by it
        ([limit + 1], True),  # after the commit
        ([limit + 1, 4_000.0, 30_000.0], True),
        ([30_000.0, 6_000.0, 4_000.0], False),
    ]:
        writes = _writes()
        writes.add_rows(
            [(1, fingerprint(FILE[5]), 3 + k, 0, 0, at, 1) for k, at in enumerate(person)],
            {1: True},
        )
        out = continue_blocks(FPS, TRIVIAL, _blamed(), _anchored(), writes, _deadlines(_blamed()))
        assert (_who(out)[5] == (1, 2)) is given, person


def test_not_a_write_made_after_the_commit() -> None:
    blamed = _blamed()
    for b in blamed[3:]:
        assert b is not None
        b.commit_time = 4_000  # the commit before the write
    out = continue_blocks(FPS, TRIVIAL, blamed, _anchored(), _writes(), _deadlines(blamed))
    assert _who(out)[4:8] == [None, None, None, None]


def test_a_line_given_to_another_keeps_it() -> None:
    start = _anchored()
    start[4] = LineMatch(sid=2, edit_ord=0, idx=1, at=AT + 10, confidence=0.9, run=2)
    out = continue_blocks(
        FPS, TRIVIAL, _blamed(), start, _writes(other=EDIT), _deadlines(_blamed())
    )
    assert _who(out)[4] == (2, 1)
    # and the chain goes on below it from that session's own edit
    assert _who(out)[5] == (2, 2)


def test_a_write_is_given_once() -> None:
    start = _anchored()
    start[1] = _match(1, 1)  # the edit's "dir := t.TempDir()" went to the older line
    out = continue_blocks(FPS, TRIVIAL, _blamed(), start, _writes(), _deadlines(_blamed()))
    assert _who(out)[4] is None
    assert _who(out)[5] == (1, 2)


def test_not_across_two_hunks_of_the_edit() -> None:
    # the edit's lines 0-1 and 2-6 are two hunks: its line 2 landed further down
    def position(key: tuple[int, int, int]) -> int | None:
        return key[2] if key[2] <= 1 else key[2] + 20

    start: list[LineMatch | None] = [None] * len(FILE)
    start[3] = _match(3, 0)
    out = continue_blocks(
        FPS, TRIVIAL, _blamed(), start, _writes(), _deadlines(_blamed()), position
    )
    assert _who(out)[3:] == [(1, 0), (1, 1), None, None, None, None, None]
    # an edit that says no place is one block
    out = continue_blocks(
        FPS, TRIVIAL, _blamed(), start, _writes(), _deadlines(_blamed()), lambda key: None
    )
    assert _who(out)[3:] == [(1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (1, 5), None]


def test_a_blank_line_git_gave_an_older_commit_is_not_given() -> None:
    # git's diff slid the edit's blank line onto an older commit's: the chain stops
    # there, as the gap rule does, and the blank line stays that commit's
    out = continue_blocks(
        FPS, TRIVIAL, _blamed({6: OLD}), _anchored(), _writes(), _deadlines(_blamed({6: OLD}))
    )
    assert _who(out)[3:] == [(1, 0), (1, 1), (1, 2), None, (1, 4), (1, 5), None]


def _down_from_the_first() -> list[LineMatch | None]:
    """Only the block's first line matched: every other line is reached going down."""
    start: list[LineMatch | None] = [None] * len(FILE)
    start[3] = _match(3, 0)
    return start


def test_through_a_blank_line_whose_write_another_line_took() -> None:
    # the matcher gave the edit's blank line (its line 3) to a blank line of an older
    # commit elsewhere in the file: the block still runs through its own blank line
    start = _down_from_the_first()
    start[0] = _match(0, 3)
    out = continue_blocks(FPS, TRIVIAL, _blamed(), start, _writes(), _deadlines(_blamed()))
    assert _who(out)[3:] == [(1, 0), (1, 1), (1, 2), None, (1, 4), (1, 5), None]


def test_through_a_blank_line_git_gave_an_older_commit() -> None:
    # git's diff slid the block's blank line onto an older one: passed all the same,
    # and the lines below it are still the ones the block's commit brought
    out = continue_blocks(
        FPS,
        TRIVIAL,
        _blamed({6: OLD}),
        _down_from_the_first(),
        _writes(),
        _deadlines(_blamed({6: OLD})),
    )
    assert _who(out)[3:] == [(1, 0), (1, 1), (1, 2), None, (1, 4), (1, 5), None]
    # a line past it that another commit brought is not the block's
    out = continue_blocks(
        FPS,
        TRIVIAL,
        _blamed({6: OLD, 7: "d" * 40}),
        _down_from_the_first(),
        _writes(),
        _deadlines(_blamed({6: OLD, 7: "d" * 40})),
    )
    assert _who(out)[3:] == [(1, 0), (1, 1), (1, 2), None, None, None, None]


def test_a_block_runs_at_most_reach_lines_from_its_matched_line() -> None:
    # deja why sees WINDOW_CONTEXT lines each side of its line: a line given further
    # from the line the block runs from would be the session's in blame and nobody's
    # in why
    assert REACH <= WINDOW_CONTEXT
    n = REACH + 10
    texts = ["func TestLong(t *testing.T) {"] + ["\trequire.NoError(t, err)"] * n
    fps = [fingerprint(t) for t in texts]
    writes = WriteSet()
    rows = [(1, fingerprint(t), SID, ORD, k, AT, 0) for k, t in enumerate(texts)]
    writes.add_rows(sorted(rows, key=lambda r: r[:5]), {1: True})
    blamed: list[BlameLine | None] = [
        BlameLine(i + 1, C, 10_000, "x_test.go", i + 1) for i in range(len(texts))
    ]
    start: list[LineMatch | None] = [None] * len(texts)
    start[0] = _match(0, 0)
    out = continue_blocks(fps, [False] * len(texts), blamed, start, writes, _deadlines(blamed))
    given = [i for i, m in enumerate(out) if m is not None]
    assert given == list(range(REACH + 1))


# ``placed_between``: the edit's lines between two of its matched lines, at one
# distance, with a line the file holds once among them (entireio a5eca19c: a rebased
# pair of commits; the older one brought a look-alike test that took the writes)
LOOK = [
    "func TestOlder(t *testing.T) {",  # 0: an older commit's look-alike block
    "\tdir := t.TempDir()",  # 1
    "\trequire.NoError(t, err)",  # 2
    "}",  # 3
    "func TestNew(t *testing.T) {",  # 4: the edit's line 0, unique
    "\tdir := t.TempDir()",  # 5
    "\trequire.NoError(t, err)",  # 6
    "}",  # 7
    "func TestNewer(t *testing.T) {",  # 8: the edit's line 4, unique
    "\tdir := t.TempDir()",  # 9
    "}",  # 10: the edit's last line
]
LOOK_EDIT = LOOK[4:11]


def _look(
    person: bool = False, at: float = AT
) -> tuple[list[BlameLine | None], WriteSet, list[LineMatch | None]]:
    blamed: list[BlameLine | None] = [
        BlameLine(i + 1, OLD if i < 4 else C, 1 if i < 4 else 10_000, "x_test.go", i + 1)
        for i in range(len(LOOK))
    ]
    writes = WriteSet()
    rows = [(1, fingerprint(t), SID, ORD, k, at, 0) for k, t in enumerate(LOOK_EDIT)]
    if person:  # the person typed the edit's middle line too (a USER diff block)
        rows.append((1, fingerprint(LOOK_EDIT[1]), 2, 0, 0, AT + 50, 1))
    writes.add_rows(sorted(rows, key=lambda r: r[:5]), {1: True})
    # what the first pass and the commit window left: the unique lines placed, the
    # repeated ones given to the older commit's look-alike lines (not stale there)
    out: list[LineMatch | None] = [None] * len(LOOK)
    out[1], out[2], out[3] = _match(1, 1), _match(2, 2), _match(3, 3)
    out[4], out[8] = _match(4, 0), _match(8, 4)
    return blamed, writes, out


def test_an_edit_placed_by_its_unique_lines_takes_its_repeated_lines_back() -> None:
    from deja_blame.attribution.facts.model import LineTexts
    from deja_blame.attribution.match.block import placed_between

    blamed, writes, start = _look()
    out = placed_between(LineTexts.of(LOOK), blamed, start, writes, _deadlines(blamed))
    # the bracket between is passed (its write stays with the look-alike's)
    assert _who(out) == [None, None, None, (1, 3), (1, 0), (1, 1), (1, 2), None, (1, 4), None, None]
    # continue_blocks alone cannot: the writes are taken
    out = continue_blocks(
        LineTexts.of(LOOK).fps,
        LineTexts.of(LOOK).trivial,
        blamed,
        start,
        writes,
        _deadlines(blamed),
    )
    assert _who(out)[5:8] == [None, None, None]


def test_only_a_place_the_file_holds_once_places_the_edit() -> None:
    from deja_blame.attribution.facts.model import LineTexts
    from deja_blame.attribution.match.block import placed_between

    blamed, writes, start = _look()
    texts = LOOK + [LOOK[4], LOOK[8]]  # the file holds the edit's headers twice
    blamed += [BlameLine(k + 1, OLD, 1, "x_test.go", k + 1) for k in (11, 12)]
    out = placed_between(
        LineTexts.of(texts), blamed, start + [None, None], writes, _deadlines(blamed)
    )
    assert out == start + [None, None]
    # nor an edit whose lines between landed elsewhere (two hunks: its line 2 on)
    blamed, writes, start = _look()
    out = placed_between(
        LineTexts.of(LOOK),
        blamed,
        start,
        writes,
        _deadlines(blamed),
        lambda key: key[2] + 20 * (key[2] > 1),
    )
    assert out == start
    out = placed_between(
        LineTexts.of(LOOK), blamed, start, writes, _deadlines(blamed), lambda key: key[2]
    )
    assert _who(out)[5:8] == [(1, 1), (1, 2), None]


def test_an_edit_is_not_placed_across_a_line_it_did_not_write_there() -> None:
    from deja_blame.attribution.facts.model import LineTexts
    from deja_blame.attribution.match.block import placed_between

    blamed, writes, start = _look()
    texts = list(LOOK)
    texts[6] = "\tassert.Equal(t, 1, n)"  # the person changed a line between
    out = placed_between(LineTexts.of(texts), blamed, start, writes, _deadlines(blamed))
    assert out == start
    # nor where another commit brought a line between, nor a person wrote its text since
    blamed[5] = BlameLine(6, "d" * 40, 10_000, "x_test.go", 6)
    out = placed_between(LineTexts.of(LOOK), blamed, start, writes, _deadlines(blamed))
    assert _who(out)[5:8] == [None, (1, 2), None]
    blamed, writes, start = _look(person=True)
    out = placed_between(LineTexts.of(LOOK), blamed, start, writes, _deadlines(blamed))
    assert _who(out)[5:8] == [None, (1, 2), None]
    assert _who(out)[1] == (1, 1)  # the look-alike keeps the write no line took


def test_a_placed_edit_is_in_its_commit_by_the_session_s_clock() -> None:
    from deja_blame.attribution.facts.model import LineTexts
    from deja_blame.attribution.match.block import placed_between

    # written a minute after the commit (10,000): a session on another machine's
    # clock may be that far ahead; one on git's clock wrote it after the commit
    blamed, writes, start = _look(at=10_060.0)
    out = placed_between(LineTexts.of(LOOK), blamed, start, writes, _deadlines(blamed))
    assert _who(out)[5:7] == [(1, 1), (1, 2)]
    out = placed_between(
        LineTexts.of(LOOK), blamed, start, writes, _deadlines(blamed, frozenset({SID}))
    )
    assert out == start
