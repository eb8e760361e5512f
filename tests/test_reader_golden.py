"""Golden tests: each fixture root beside its hand-derived expected sessions.

The comparison rules are in fixtures/antigravity/README.md ("How to compare").
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import FIXTURES, deja, deja_json

from deja_blame.transcripts import parse_transcript
from deja_blame.transcripts.antigravity.discover import find_transcripts

CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "expected.json").is_file())
OPTIONAL_EDIT_KEYS = ("hunks", "witness")


def expected_sessions(case: str) -> dict[str, Any]:
    return orjson.loads((FIXTURES / case / "expected.json").read_bytes())


def compare_message(got: dict[str, Any], want: dict[str, Any], where: str) -> None:
    if "text_len_bytes" in want:  # huge-message: the 1 MiB cap
        data = got["text"].encode("utf-8")
        assert len(data) == want["text_len_bytes"], where
        assert got["text"][:40] == want["text_prefix"], where
        assert hashlib.sha256(data).hexdigest() == want["text_sha256"], where
        assert got["role"] == want["role"] and got["at"] == want["at"], where
        return
    assert got == want, where


def compare_session(got: dict[str, Any], want: dict[str, Any], case: str) -> None:
    sid = want["session_id"]
    for key in ("session_id", "source", "project", "started_at", "ended_at", "skipped_lines"):
        assert got[key] == want[key], f"{case}/{sid}: {key}"
    assert len(got["messages"]) == len(want["messages"]), (
        f"{case}/{sid}: messages {[m['text'][:40] for m in got['messages']]}"
    )
    for i, (g, w) in enumerate(zip(got["messages"], want["messages"])):
        compare_message(g, w, f"{case}/{sid}: message {i}")
    assert got["commands"] == want["commands"], f"{case}/{sid}: commands"
    assert got["files"] == want["files"], f"{case}/{sid}: files"
    assert len(got["edits"]) == len(want["edits"]), f"{case}/{sid}: edits"
    for i, (g, w) in enumerate(zip(got["edits"], want["edits"])):
        g = dict(g)
        for key in OPTIONAL_EDIT_KEYS:
            if key not in w:
                g.pop(key, None)
        if not w.get("truncated"):
            assert not g.pop("truncated", False), f"{case}/{sid}: edit {i} truncated"
        assert g == w, f"{case}/{sid}: edit {i}"


@pytest.mark.parametrize("case", CASES)
def test_reader_matches_expected(case: str) -> None:
    want = expected_sessions(case)
    found = {tf.session_id: tf for tf in find_transcripts(FIXTURES / case)}
    assert sorted(found) == sorted(want), case
    for sid, tf in found.items():
        session = parse_transcript(tf.path, session_id=sid, root=tf.root)
        compare_session(session.to_json(), want[sid], case)


@pytest.mark.parametrize("case", CASES)
def test_index_gives_the_same_sessions(case: str, tmp_path: Path) -> None:
    """The index stores and returns exactly what the one-shot reader parses."""
    db = str(tmp_path / "golden.db")
    deja("index", "--db", db, "--root", str(FIXTURES / case), "-q")
    want = expected_sessions(case)
    listed = deja_json("sessions", "--db", db, "--json")["sessions"]
    assert sorted(s["session_id"] for s in listed) == sorted(want)
    found = {tf.session_id: tf for tf in find_transcripts(FIXTURES / case)}
    for sid in want:
        expected = dict(want[sid])
        data = found[sid].path.read_bytes()
        if data and not data.endswith(b"\n"):
            # The index leaves a half-written last line for the next run instead
            # of counting it: it may still be completed.
            expected["skipped_lines"] -= 1
        compare_session(deja_json("show", sid, "--db", db, "--json"), expected, case)


def test_parse_command_prints_the_session_document() -> None:
    path = next(find_transcripts(FIXTURES / "seed-example")).path
    doc = deja_json("parse", str(path), "--json")
    assert doc["transcript"] == str(path.resolve())
    want = next(iter(expected_sessions("seed-example").values()))
    compare_session(doc, want, "seed-example")


def test_background_command_status_is_recorded(tmp_path: Path) -> None:
    """A command sent to the background (status RUNNING) says so, in the reader and the index."""
    tf = next(t for t in find_transcripts(FIXTURES / "real-steps"))
    session = parse_transcript(tf.path, session_id=tf.session_id, root=tf.root)
    statuses = {c.command: c.status for c in session.commands}
    assert statuses["npm install && npm run build"] == "RUNNING"
    assert {s for c, s in statuses.items() if c != "npm install && npm run build"} == {"DONE"}
    db = tmp_path / "status.db"
    deja("index", "--db", str(db), "--root", str(FIXTURES / "real-steps"), "-q")
    import sqlite3

    with sqlite3.connect(db) as conn:
        rows = dict(conn.execute("SELECT command, status FROM commands"))
    assert rows["npm install && npm run build"] == "RUNNING"


def test_every_gemini_root_is_discovered(tmp_path: Path) -> None:
    """antigravity, antigravity-ide, antigravity-cli and jetski keep the same layout."""
    from deja_blame.transcripts.antigravity.discover import discover_roots

    gemini = tmp_path / ".gemini"
    for name in ("antigravity", "antigravity-ide", "antigravity-cli", "jetski", "tmp"):
        (gemini / name / "brain").mkdir(parents=True)
    (gemini / "jetski-notes.txt").write_text("not a root")
    roots = discover_roots(env={}, home=tmp_path)
    assert [p.name for p in roots] == [
        "antigravity",
        "antigravity-cli",
        "antigravity-ide",
        "jetski",
    ]


def test_full_format_lines_under_any_name_are_not_decoded_again(tmp_path: Path) -> None:
    """``deja parse`` of the full file's lines saved elsewhere: the package.json stays text."""
    src = next(find_transcripts(FIXTURES / "sniffed-format")).path
    copy = tmp_path / "session.jsonl"
    copy.write_bytes(src.read_bytes())
    doc = deja_json("parse", str(copy), "--json")
    (edit,) = doc["edits"]
    assert edit["added"][0] == "{" and len(edit["added"]) == 5


def test_a_grown_full_file_is_read_on_without_losing_the_compact_steps(tmp_path: Path) -> None:
    """The index reads both files from scratch, then only the full file's new lines."""
    import shutil

    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "both-files", root)
    tf = next(find_transcripts(root))
    db = str(tmp_path / "grow.db")
    deja("index", "--db", db, "--root", str(root), "-q")
    line = (
        '{"step_index":21,"source":"USER_EXPLICIT","type":"USER_INPUT","status":"DONE",'
        '"created_at":"2026-08-02T10:02:00Z","content":"<USER_REQUEST>Thanks.</USER_REQUEST>"}\n'
    )
    with open(tf.path, "a", encoding="utf-8") as fh:
        fh.write(line)
    deja("index", "--db", db, "--root", str(root), "-q")
    doc = deja_json("show", tf.session_id, "--db", db, "--json")
    users = [m["text"] for m in doc["messages"] if m["role"] == "user"]
    assert users == ["Add a word counter to the notes app.", "Now count lines too.", "Thanks."]
    assert [c["exit_code"] for c in doc["commands"]] == [0, 1]
    assert len(doc["edits"]) == 2 and doc["ended_at"] == "2026-08-02T10:02:00Z"
