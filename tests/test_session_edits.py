"""The edits behind a file's writes (``facts/edits.py``): plain data the matcher reads,
a session's edits read in one query at the first ask about it, each body decoded only
when a rule reads it."""

from __future__ import annotations

from typing import Any

from deja_blame.attribution.facts.edits import SessionEdits, StoredEdit
from deja_blame.index.fingerprint import fingerprint

APP, OTHER, ELSEWHERE = 1, 2, 9  # path ids: the file, a suffix match, another file


def _row(
    sid: int,
    ord_: int,
    step: int,
    added: list[str],
    *,
    tool: str = "replace_file_content",
    source: str = "agent",
    at: float | None = 100.0,
    path: int = APP,
    removed: list[str] | None = None,
    hunks: Any = None,
) -> StoredEdit:
    whole, agent = int(tool == "write_to_file"), int(source == "agent")
    return (sid, ord_, step, whole, agent, at, path, [removed or [], added, None, hunks])


class Index:
    """Rows as the facts stage would read them, counting the queries asked."""

    def __init__(self, rows: list[StoredEdit]) -> None:
        self.rows = rows
        self.fetched: list[tuple[list[int], list[int]]] = []
        self.one: list[tuple[int, int]] = []
        self.decoded: list[tuple[int, int]] = []

    def fetch(self, sids: list[int], pids: list[int]) -> list[StoredEdit]:
        self.fetched.append((sids, pids))
        return [r for r in self.rows if r[0] in sids and r[6] in pids]

    def fetch_edit(self, sid: int, ord_: int) -> StoredEdit | None:
        self.one.append((sid, ord_))
        return next((r for r in self.rows if r[:2] == (sid, ord_)), None)

    def decode(self, body: Any) -> Any:
        return body

    def edits(self) -> SessionEdits:
        return SessionEdits(
            path_ids=[APP, OTHER],
            fetch=self.fetch,
            fetch_edit=self.fetch_edit,
            decode=self.decode,
        )


def test_a_write_s_text_and_place_come_from_its_edit_s_hunks() -> None:
    hunks = [[3, 5, 1, 2], [10, 13, 0, 1]]  # two runs: lines 5-6 and 13 as the edit left it
    index = Index([_row(1, 0, 0, ["a", "b", "c"], hunks=hunks)])
    edits = index.edits()
    assert [edits.written_text((1, 0, i)) for i in range(4)] == ["a", "b", "c", None]
    assert [edits.position((1, 0, i)) for i in range(3)] == [4, 5, 12]
    # runs that do not add up to the edit's lines say nothing of where any landed
    index = Index([_row(1, 0, 0, ["a", "b"], hunks=[[3, 5, 0, 1]])])
    assert index.edits().position((1, 0, 0)) is None
    # a whole-file write's lines are where they are written; a block without @@: unknown
    index = Index([_row(1, 0, 0, ["a", "b"], tool="write_to_file"), _row(1, 1, 1, ["c"])])
    edits = index.edits()
    assert (edits.position((1, 0, 1)), edits.position((1, 1, 0))) == (1, None)


def test_what_a_session_left_is_what_it_wrote_minus_what_it_replaced_afterwards() -> None:
    index = Index(
        [
            _row(1, 0, 0, ["total = price * 1", "}"], tool="write_to_file"),
            _row(1, 1, 1, ["total = price * 2"], removed=["total = price * 1"]),
            _row(1, 2, 2, ["not mine"], source="user"),  # the person's edit
            _row(1, 3, 3, ["elsewhere"], path=ELSEWHERE),
        ]
    )
    edits = index.edits()
    assert edits.final_fingerprints(1, [APP]) == {
        fingerprint("total = price * 2"),
        fingerprint("}"),
    }
    assert edits.left_in_file(1, [APP]) == {
        fingerprint("total = price * 2")
    }  # a bracket says nothing
    # a later whole-file write starts the file afresh, in the session's order of steps
    index = Index(
        [
            _row(1, 4, 2, ["late"], tool="write_to_file"),
            _row(1, 5, 1, ["early"]),  # numbered after, made before
        ]
    )
    assert index.edits().final_fingerprints(1, [APP]) == {fingerprint("late")}


def test_edited_any_needs_a_timed_edit_of_one_of_the_paths() -> None:
    index = Index(
        [
            _row(1, 0, 0, ["a"], at=None),
            _row(1, 1, 1, ["b"], path=OTHER),
            _row(2, 0, 0, ["c"], at=None),
        ]
    )
    edits = index.edits()
    assert not edits.edited_any(1, [APP]) and edits.edited_any(1, [APP, OTHER])
    assert not edits.edited_any(2, [APP, OTHER])
    assert not edits.edited_any(3, [APP])  # a session with no edit at all


def test_file_edits_are_the_session_s_edits_of_that_one_file_in_order() -> None:
    index = Index(
        [
            _row(1, 2, 2, ["c"], hunks=[[9, 9, 0, 1]]),
            _row(1, 0, 0, ["a"], tool="write_to_file"),
            _row(1, 1, 1, ["b"], hunks=[{"old_start": 2, "new_start": 3, "added": ["b"]}]),
            _row(1, 3, 3, ["d"], path=OTHER),
            _row(1, 4, 4, ["e"], hunks="damaged"),
        ]
    )
    got = index.edits().file_edits(1, 1)
    assert got == [
        (0, 100.0, None),  # a whole-file write: no positions
        (1, 100.0, [(2, 3, 0, 1)]),  # whole hunks, as older indexes kept them
        (2, 100.0, [(9, 9, 0, 1)]),
        (4, 100.0, None),
    ]
    assert index.edits().file_edits(1, 99) == []  # no such edit


def test_a_session_s_edits_are_read_in_one_query_at_the_first_ask_about_it() -> None:
    rows = [_row(sid, e, e, [f"line {sid}.{e}"]) for sid in (1, 2, 3) for e in (0, 1)]
    index = Index(rows)
    counted: list[object] = []

    def decode(body: Any) -> Any:
        counted.append(body)
        return body

    index.decode = decode  # type: ignore[method-assign]
    edits = index.edits()
    assert index.fetched == []  # nothing read before a rule asks
    assert edits.written_text((1, 0, 0)) == "line 1.0"
    assert edits.written_text((1, 1, 0)) == "line 1.1"
    assert edits.edited_any(1, [APP])
    assert index.fetched == [([1], [APP, OTHER])]  # one query for the session's edits
    assert edits.written_text((2, 1, 0)) == "line 2.1"
    assert index.fetched[-1] == ([2], [APP, OTHER])  # session 3, never asked about: never read
    assert len(index.fetched) == 2
    assert len(counted) == 3  # the three edits read, not session 2's other
    # another path of a session read: only what was not read before
    assert not edits.edited_any(2, [ELSEWHERE])
    assert index.fetched[-1] == ([2], [APP, OTHER, ELSEWHERE]) and len(index.fetched) == 3
    assert not edits.edited_any(2, [ELSEWHERE]) and len(index.fetched) == 3


def test_a_decoded_edit_keeps_no_witness_and_its_body_is_let_go() -> None:
    index = Index([_row(1, 0, 0, ["a"])])
    index.rows[0] = (*index.rows[0][:7], [[], ["a"], ["witness"], None])
    edits = index.edits()
    assert edits.added_lines(1, 0) == ["a"]
    assert edits._docs[(1, 0)][2] is None and edits._bodies == {}


def test_an_edit_of_another_file_is_read_alone_and_a_damaged_one_says_nothing() -> None:
    index = Index([_row(1, 0, 0, ["here"]), _row(1, 7, 3, ["moved"], path=ELSEWHERE)])
    edits = index.edits()
    assert edits.added_lines(1, 7) == ["moved"]  # a block moved from another file
    assert index.one == [(1, 7)]
    assert edits.added_lines(1, 8) == [] and edits.added_lines(1, 8) == []
    assert index.one == [(1, 7), (1, 8)]  # a missing edit is asked about once
    index = Index([_row(1, 0, 0, ["a"])])
    index.decode = lambda body: None  # type: ignore[method-assign]
    edits = index.edits()
    assert edits.added_lines(1, 0) == [] and edits.position((1, 0, 0)) is None


def test_a_glance_at_an_edit_s_lines_keeps_its_stored_body_not_the_decoded_one() -> None:
    index = Index([_row(1, 0, 0, ["}"]), _row(1, 1, 1, ["x", "y"])])
    decoded: list[object] = []

    def decode(body: Any) -> Any:
        decoded.append(body)
        return list(body)

    index.decode = decode  # type: ignore[method-assign]
    edits = index.edits()
    assert edits.glance_added(1, 0) == ["}"]
    assert (1, 0) not in edits._docs and (1, 0) in edits._bodies
    assert edits.added_lines(1, 0) == ["}"]  # read again, and kept now
    assert (1, 0) in edits._docs and (1, 0) not in edits._bodies
    assert edits.glance_added(1, 0) == ["}"] and len(decoded) == 2
    assert edits.glance_added(1, 5) == []  # no such edit
    index = Index([_row(1, 0, 0, ["a"])])
    index.decode = lambda body: None  # type: ignore[method-assign]
    assert index.edits().glance_added(1, 0) == []  # damaged: as added_lines says
