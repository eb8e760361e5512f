"""What a note was computed from, asked of hundreds of notes of 10,000 sessions each,
is computed the fast way and must be exactly the plain way: ``SessionWrites.of`` (the
sum of every write to the commit's files by its time) and a note's ``derived_from``
as read (every entry checked: ``schema._derived_from``)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from deja_blame.notes.derived_from import SKEW, SessionWrites
from deja_blame.notes.history import HistoryCommit

KEYS = st.sampled_from([f"{k:016x}" for k in range(6)])
TIMES = st.one_of(st.none(), st.integers(0, 5000).map(float))
WRITES = st.lists(st.tuples(KEYS, TIMES, st.integers(1, 9)), max_size=30)


def _plain(
    writes: dict[int, list[tuple[str, float | None, int]]], pids: list[int], limit: float
) -> dict[str, int]:
    counts: dict[str, int] = {}
    for pid in dict.fromkeys(pids):
        for key, at, n in writes.get(pid, ()):
            if at is None or at <= limit:
                counts[key] = counts.get(key, 0) + n
    return dict(sorted(counts.items()))


@settings(max_examples=300, deadline=None)
@given(
    a=WRITES,
    b=WRITES,
    times=st.lists(st.integers(-1000, 6000), min_size=1, max_size=8),
    which=st.sampled_from([["a.py"], ["b.py"], ["a.py", "b.py"], ["c.py"]]),
)
def test_of_is_the_plain_sum(a: list, b: list, times: list[int], which: list[str]) -> None:
    writes = SessionWrites.__new__(SessionWrites)
    writes.pids = {"a.py": [1], "b.py": [2, 1]}  # b.py stands for path 2 and, by suffix, 1
    writes.writes = {1: a, 2: b}
    writes._timelines = {}
    for t in times:  # one SessionWrites asked of many commits, in any order
        commit = HistoryCommit(sha="0" * 40, time=t, parents=(), paths=tuple(which))
        pids = [p for rel in which for p in writes.pids.get(rel, [])]
        assert writes.of(commit) == _plain(writes.writes, pids, t + SKEW)
        assert list(writes.of(commit)) == list(_plain(writes.writes, pids, t + SKEW))


def _plain_read(value: dict) -> dict[str, int]:
    import math

    from deja_blame.notes import schema

    return {
        key: int(count)
        for key, count in list(value.items())[: schema.MAX_DERIVED_FROM]
        if type(key) is str
        and schema._HEX_KEY.fullmatch(key)
        and (type(count) is int or (type(count) is float and math.isfinite(count)))
        and 0 <= count <= schema.MAX_COUNT
    }


ANY_KEY = st.one_of(
    st.sampled_from(
        ["ab", "0123456789abcdef", "a" * 64, "a" * 65, "FF", "a b", "ab\n", "a\nb", ""]
    ),
    st.text(max_size=5),
    st.integers(),
)
ANY_COUNT = st.one_of(
    st.integers(-2, 10**16),
    st.floats(allow_nan=True),
    st.booleans(),
    st.none(),
    st.text(max_size=2),
)


@settings(max_examples=500, deadline=None)
@given(value=st.dictionaries(ANY_KEY, ANY_COUNT, max_size=8))
def test_derived_from_as_read_is_every_entry_checked(value: dict) -> None:
    from deja_blame.notes.schema import _derived_from

    got = _derived_from(value)
    assert got == _plain_read(value) and list(got or {}) == list(_plain_read(value))


def test_still_derived_asks_the_note_first_then_the_record_of_no_line() -> None:
    from deja_blame.notes.derived_from import digest, none_value, still_derived

    local = {"0000000000000001": 3}
    assert still_derived({"0000000000000001": 3}, None, local, 5)  # the note saw them all
    assert not still_derived({"0000000000000001": 2}, None, local, 5)  # a line more since
    # a note decides alone: a record of no line beside it is not read
    assert not still_derived({}, digest(local), local, 5)
    assert still_derived(None, digest(local), local, 5)  # no note: the record's digest
    assert not still_derived(None, digest({"0000000000000002": 1}), local, 5)
    assert not still_derived(None, None, local, 5)  # neither: not settled
    assert still_derived(None, "moves-5", {}, 5)  # nobody wrote there: the sessions counted
    assert not still_derived(None, "moves-5", {}, 6)  # a session arrived since
    assert none_value({}, 6) == "moves-6"
