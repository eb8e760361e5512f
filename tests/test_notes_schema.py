"""The note format: parse, merge, concatenated documents, canonical text."""

from __future__ import annotations

import orjson

from deja_blame.notes.schema import Note, merge_notes, normalise_files, parse_note, parse_note_docs


def note(commit: str, files: dict, sessions: dict | None = None) -> Note:
    sids = {sid for per in files.values() for sid in per}
    return Note(
        commit=commit,
        files=files,
        sessions=sessions
        or {sid: {"agent": "antigravity", "project": "-", "started_at": None} for sid in sids},
        tool="deja-blame test",
    )


def test_round_trip_and_text_is_readable_json() -> None:
    n = note("c1", {"src/a.py": {"s1": [[1, 3, 0.97]], "s2": [[5, 5, 0.75]]}})
    text = n.dumps()
    assert orjson.loads(text) == n.to_json()
    assert '"s1": [[1,3,0.97]]' in text  # one line per file's session
    back = parse_note(text)
    assert back is not None and back.same_content(n)


def test_concatenated_notes_are_merged_first_document_winning() -> None:
    # what notes.rewriteMode=concatenate makes of two notes on a squash
    a = note("c1", {"a.py": {"s1": [[1, 4, 0.97]]}})
    b = note("c2", {"a.py": {"s2": [[3, 6, 0.9]]}, "b.py": {"s2": [[1, 1, 0.75]]}})
    text = a.dumps() + "\n" + b.dumps()
    docs = parse_note_docs(text)
    assert [d.commit for d in docs] == ["c1", "c2"]
    merged = parse_note(text)
    assert merged is not None
    assert merged.line_map("a.py") == {
        1: ("s1", 0.97, None),
        2: ("s1", 0.97, None),
        3: ("s1", 0.97, None),
        4: ("s1", 0.97, None),
        5: ("s2", 0.9, None),
        6: ("s2", 0.9, None),
    }
    assert merged.files["b.py"] == {"s2": [[1, 1, 0.75]]}
    assert set(merged.sessions) == {"s1", "s2"}


def test_not_ours_or_newer_schema_is_ignored() -> None:
    assert parse_note("just a person's note\n") is None
    assert parse_note('{"schema": 99, "files": {}}') is None
    assert parse_note(b"\xff\xfe") is None
    # a mangled second document (cat_sort_uniq) does not lose the first
    good = note("c1", {"a.py": {"s1": [[1, 1, 0.9]]}}).dumps()
    assert parse_note(good + "\n}{ garbage").files == {"a.py": {"s1": [[1, 1, 0.9]]}}


def test_bad_ranges_are_dropped() -> None:
    doc = {
        "schema": 1,
        "commit": "c",
        "files": {"a.py": {"s1": [[0, 2], [5, 3], ["x", 1], [2, 4, 0.5], True]}},
    }
    n = parse_note(orjson.dumps(doc))
    assert n is not None and n.files == {"a.py": {"s1": [[2, 4, 0.5]]}}


def test_merge_union_and_priority() -> None:
    index = note("c", {"a.py": {"s1": [[1, 2, 0.97]]}})
    stored = note(
        "c",
        {"a.py": {"s2": [[2, 3, 0.8]]}, "b.py": {"s3": [[1, 2, 0.9]]}},
        sessions={
            "s2": {"agent": "antigravity", "project": "/p", "started_at": "t"},
            "s3": {"agent": "antigravity", "project": "-", "started_at": None},
        },
    )
    carried = note("c", {"a.py": {"s4": [[3, 4, 0.75]]}})
    m = merge_notes([index, stored, carried], commit="c")
    assert m.line_map("a.py") == {
        1: ("s1", 0.97, None),
        2: ("s1", 0.97, None),
        3: ("s2", 0.8, None),
        4: ("s4", 0.75, None),
    }
    assert m.files["b.py"] == {"s3": [[1, 2, 0.9]]}
    assert m.sessions["s2"]["project"] == "/p"
    assert set(m.sessions) == {"s1", "s2", "s3", "s4"}


def test_session_details_fill_gaps_and_unused_sessions_go() -> None:
    a = note(
        "c",
        {"a.py": {"s1": [[1, 1, 0.9]]}},
        sessions={"s1": {"agent": "antigravity", "project": "-", "started_at": None}},
    )
    b = note(
        "c",
        {"a.py": {"s1": [[1, 1, 0.9]], "s9": [[1, 1, 0.5]]}},
        sessions={
            "s1": {"agent": "antigravity", "project": "/w", "started_at": "2026"},
            "s9": {"agent": "antigravity"},
        },
    )
    m = merge_notes([a, b])
    assert m.sessions == {"s1": {"agent": "antigravity", "project": "/w", "started_at": "2026"}}


def test_normalise_merges_adjacent_ranges() -> None:
    files = {"a.py": {"s1": [[4, 5, 0.9], [1, 3, 0.9]]}}
    assert normalise_files(files) == {"a.py": {"s1": [[1, 5, 0.9]]}}
