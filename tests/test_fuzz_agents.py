"""Fuzzing the Claude Code, Codex and Gemini CLI readers, and reading on as a file grows.

Transcripts are the fixtures' real records, mutated: a field dropped or given a
value of another JSON type (nested, huge, empty), records repeated or left
out, lines that are no JSON object (cut, garbage, invalid UTF-8, arrays). The
readers must never raise, must count exactly the lines that are no JSON object
as skipped (Claude Code, Codex), and reading a growing Claude Code or Codex
transcript in several index runs must give the session one parse of the whole
file gives.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deja_blame.index.db import connect
from deja_blame.index.ingest import IndexReport, index_transcript
from deja_blame.index.store import load_session
from deja_blame.transcripts.registry import read_session
from deja_blame.transcripts.transcript_file import TranscriptFile

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SOURCES = {
    "claude-code": FIXTURES / "claude-code/projects/-work-shop/0b7c6a52-3f1e-4d8a-9c2b-5e6f7a8b9c0d.jsonl",
    "codex": FIXTURES / "codex/sessions/2026/11/30/rollout-2026-11-30T10-00-00-5f0e2d1c-8a7b-4c3d-9e1f-2a3b4c5d6e7f.jsonl",
    "gemini-cli": FIXTURES / "gemini-cli/tmp/shop/chats/session-2026-12-01T08-30-7d6e5f4a.jsonl",
}  # fmt: skip
NAMES = {"claude-code": "s.jsonl", "codex": "rollout-x.jsonl", "gemini-cli": "session-x.jsonl"}


def real_records(agent: str) -> list[dict[str, Any]]:
    out = []
    for line in SOURCES[agent].read_bytes().splitlines():
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
BAD_LINES = st.sampled_from(
    [b'{"type": "user", "mess', b"garbage", b"[1, 2, 3]", b'"text"', b"\xff\xfe{}", b"42", b"null"]
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every (key, key, ...) path into a record's dicts."""
    out = []
    if isinstance(value, dict):
        for k, v in value.items():
            out.append((*prefix, k))
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:3]):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def mutated(draw: st.DrawFn, agent: str) -> tuple[list[bytes], int]:
    """(lines, how many of them are no JSON object)."""
    records = real_records(agent)
    picked = draw(st.lists(st.sampled_from(records), min_size=1, max_size=24))
    lines: list[bytes] = []
    bad = 0
    for rec in picked:
        rec = orjson.loads(orjson.dumps(rec))  # a copy to change
        for _ in range(draw(st.integers(0, 2))):
            paths = _paths(rec)
            if not paths:
                break
            path = draw(st.sampled_from(paths))
            parent: Any = rec
            for key in path[:-1]:
                parent = parent[key]
            if draw(st.booleans()) and isinstance(parent, dict):
                del parent[path[-1]]
            else:
                parent[path[-1]] = draw(JSON_VALUES)
        lines.append(orjson.dumps(rec))
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(BAD_LINES))
            bad += 1
    return lines, bad


FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _write(base: Path, agent: str, data: bytes) -> TranscriptFile:
    path = base / NAMES[agent]
    path.write_bytes(data)
    return TranscriptFile("fuzz-session", path, base, agent=agent)


def _check_types(doc: dict[str, Any]) -> None:
    for m in doc["messages"]:
        assert isinstance(m["text"], str) and m["role"] in ("user", "assistant", "tool")
    for c in doc["commands"]:
        assert isinstance(c["command"], str)
        assert c["exit_code"] is None or isinstance(c["exit_code"], int)
    for e in doc["edits"]:
        assert isinstance(e["path"], str) and e["path"]
        assert all(isinstance(x, str) for x in e["added"] + e["removed"])


@FUZZ
@given(st.sampled_from(sorted(SOURCES)).flatmap(lambda a: st.tuples(st.just(a), mutated(a))))
def test_readers_never_raise_and_count_what_is_no_record(case: Any) -> None:
    agent, (lines, bad) = case
    with tempfile.TemporaryDirectory() as tmp:
        tf = _write(Path(tmp), agent, b"\n".join(lines) + b"\n")
        doc = read_session(tf).to_json()
    _check_types(doc)
    if agent != "gemini-cli":  # Gemini also counts objects that are no record of its
        assert doc["skipped_lines"] == bad


@settings(FUZZ, max_examples=30)
@given(
    st.sampled_from(["claude-code", "codex"]).flatmap(
        lambda a: st.tuples(st.just(a), mutated(a), st.lists(st.integers(0, 10**6), max_size=3))
    )
)
def test_reading_on_as_the_file_grows_gives_the_whole_parse(case: Any) -> None:
    agent, (lines, _), cuts = case
    data = b"\n".join(lines) + b"\n"
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        tf = _write(base, agent, b"")
        conn = connect(base / "index.db")
        try:
            for cut in [*sorted(c % (len(data) + 1) for c in cuts), len(data)]:
                tf.path.write_bytes(data[:cut])
                index_transcript(conn, tf, IndexReport())
            indexed = load_session(conn, "fuzz-session").to_json()
        finally:
            conn.close()
        whole = read_session(tf).to_json()
    for key in ("messages", "commands", "files", "edits", "model", "started_at", "ended_at"):
        assert indexed[key] == whole[key], key
