"""Generated hostile notes (hypothesis): whatever a stranger's note holds, reading it
never raises, and what survives is a note deja could have written: ranges inside
the line limits, confidences in [0, 1], session ids and details free of control
characters, and a text that reads back as the same note."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deja_blame.notes.schema import (
    MAX_LINE,
    MAX_NOTE_LINES,
    MAX_TEXT,
    merge_notes,
    parse_note,
)

NASTY_NUMBERS = st.sampled_from(
    [0, -1, 1, 2, 3, 10**12, -(10**18), 1e18, 1e309, -1e309, math.nan, 0.5, 1.5, -7, True, None]
)
NASTY_TEXT = st.text(
    alphabet=st.sampled_from(list('ab-_.:1 /\n\t\x00\x1b\x85\u202e\u2066\ufeff"\\é')),
    max_size=40,
)
NUMBERS = st.one_of(st.integers(-5, 50), NASTY_NUMBERS, st.floats(allow_nan=True))
JSON_LEAF = st.one_of(NUMBERS, NASTY_TEXT, st.booleans(), st.none())
ANY_JSON = st.recursive(
    JSON_LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(NASTY_TEXT, inner, max_size=4)
    ),
    max_leaves=20,
)
PLAUSIBLE_RANGE = st.tuples(
    st.integers(-2, 60), st.integers(-2, 80), st.floats(-1, 2), st.integers(-5, 2_000_000_000)
).map(list)
RANGE = st.one_of(
    PLAUSIBLE_RANGE, PLAUSIBLE_RANGE, st.lists(NUMBERS, min_size=0, max_size=5), ANY_JSON
)
SESSION_ID = st.one_of(st.sampled_from(["s1", "s2", "abc-DEF_1.2:3"]), NASTY_TEXT)
FILES = st.dictionaries(
    st.one_of(st.sampled_from(["a.py", "src/b.py"]), NASTY_TEXT),
    st.one_of(st.dictionaries(SESSION_ID, st.lists(RANGE, max_size=4), max_size=3), ANY_JSON)
    | st.dictionaries(SESSION_ID, st.lists(RANGE, min_size=1, max_size=4), min_size=1, max_size=3),
    max_size=3,
)
SESSIONS = st.dictionaries(
    SESSION_ID,
    st.one_of(st.dictionaries(NASTY_TEXT, JSON_LEAF, max_size=4), ANY_JSON),
    max_size=3,
)
NOTE = st.fixed_dictionaries(
    {
        "schema": st.sampled_from([1, 2, 2, 2, 3, 0, -1, "2", None, 2.0, True]),
        "commit": st.one_of(NASTY_TEXT, ANY_JSON),
        "files": st.one_of(FILES, FILES, ANY_JSON),
        "sessions": st.one_of(SESSIONS, ANY_JSON),
    }
)


def _text(doc: Any) -> str:
    # the stdlib writes NaN and Infinity, as a hand-edited or hostile note may
    return json.dumps(doc, allow_nan=True)


def _clean(s: str) -> bool:
    return all(ch.isprintable() or ch in "\n\t" for ch in s)


def _assert_sane(note: Any) -> None:
    total = 0
    for per in note.files.values():
        for sid, ranges in per.items():
            assert _clean(sid) and "\n" not in sid and sid
            for r in ranges:
                assert 1 <= r[0] <= r[1] <= MAX_LINE
                total += r[1] - r[0] + 1
                if len(r) > 2:
                    assert 0.0 <= r[2] <= 1.0
    assert total <= MAX_NOTE_LINES
    for sid, info in note.sessions.items():
        assert _clean(sid) and "\n" not in sid
        for key, value in info.items():
            assert isinstance(key, str)
            if isinstance(value, str):
                assert len(value) <= MAX_TEXT and _clean(value)
            else:
                assert value is None or isinstance(value, (bool, int, float))
                assert not isinstance(value, float) or math.isfinite(value)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(NOTE, st.sampled_from(["whole", "concatenated", "cut"]))
def test_a_generated_note_reads_as_a_sane_note_or_none(doc: dict, shape: str) -> None:
    text = _text(doc)
    if shape == "concatenated":
        text = text + "\n" + text
    elif shape == "cut":
        text = text[: len(text) // 2]
    note = parse_note(text)
    if note is None:
        return
    _assert_sane(note)
    # what deja writes back (a merge, a carried note) reads as the same note
    again = parse_note(note.dumps())
    assert again is not None and again.same_content(note)
    merged = merge_notes([note, again])
    _assert_sane(merged)
    for path in note.files:
        for line, (sid, conf, _written) in note.line_map(path).items():
            assert 1 <= line <= MAX_LINE and 0.0 <= conf <= 1.0 and sid in note.files[path]


def test_json_output_escapes_c1_and_bidirectional_controls() -> None:
    from deja_blame.jsonout import dumps

    text = "a\x85b\u202ec\u2066d\u061ce\u200ff\u2028g caf\u00e9 \u20ac"
    out = dumps({"k" + text: [text]})
    assert json.loads(out) == {"k" + text: [text]}  # the same text to a parser
    for ch in "\x85\u202e\u2066\u061c\u200f\u2028":
        assert ch.encode() not in out
    assert "caf\u00e9 \u20ac".encode() in out  # other text stays as it is
