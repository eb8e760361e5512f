"""Fuzzing the Claude Code, Codex and Gemini CLI readers, reading on as a file grows, and
every agent's store caught while a file of it is half written.

Transcripts are the fixtures' real records, mutated: a field dropped or given a
value of another JSON type (nested, huge, empty), records repeated or left
out, lines that are no JSON object (cut, garbage, invalid UTF-8, arrays). The
readers must never raise, must count exactly the lines that are no JSON object
as skipped (Claude Code, Codex), and reading a growing Claude Code or Codex
transcript in several index runs must give the session one parse of the whole
file gives.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from agent_goldens import GOLDEN_AGENTS, lay_out
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from deja_blame.index.db import connect
from deja_blame.index.ingest import IndexReport, index_roots, index_transcript
from deja_blame.index.store import load_session
from deja_blame.transcripts.registry import agent_named, discover, read_session
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


def _is_json_object(line: bytes) -> bool:
    try:
        return isinstance(orjson.loads(line), dict)
    except orjson.JSONDecodeError:
        return False


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
            held = conn.execute("SELECT 1 FROM sessions WHERE session_id='fuzz-session'")
            indexed = load_session(conn, "fuzz-session").to_json() if held.fetchone() else None
        finally:
            conn.close()
        whole = read_session(tf).to_json()
    if indexed is None:  # no line of it a record: no session (test_not_a_session)
        assert not any(whole[k] for k in ("messages", "commands", "files", "edits"))
        assert all(not _is_json_object(ln) for ln in lines)
        return
    for key in ("messages", "commands", "files", "edits", "model", "started_at", "ended_at"):
        assert indexed[key] == whole[key], key


# -- a file caught while its agent writes it -----------------------------------------------------


def _sessions(conn: Any, root: Path, agent: str) -> tuple[IndexReport, dict[str, Any]]:
    """One index run over the agent's tree; then every session the index holds."""
    found = discover([agent], env={agent_named(agent).root_env: str(root)})
    report = index_roots(conn, [], transcripts=found, jobs=1)
    ids = [r[0] for r in conn.execute("SELECT session_id FROM sessions ORDER BY session_id")]
    return report, {sid: load_session(conn, sid).to_json() for sid in ids}


@settings(FUZZ, max_examples=40)
@given(st.sampled_from(sorted(GOLDEN_AGENTS)), st.integers(0, 10**6), st.integers(0, 10**6))
@example("gemini-cli", 193, 0)  # a session file created, its metadata not written yet
@example("amp", 0, 20)
@example("opencode", 0, 4096)  # the database cut after its first page
@example("cursor", 0, 141)  # records seen in the cut file keep their first-seen time
def test_a_file_cut_short_is_skipped_then_read_once_complete(
    agent: str, which: int, cut: int
) -> None:
    """Any one file of an agent's store cut short (a JSON document half written,
    a JSON Lines line half written, a database caught mid-write): the index run
    never fails, and once the file is whole again the next run holds exactly what
    reading the complete store gives."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        root = lay_out(agent, base / "store")
        # the stores' documents (Gemini's one-line .project_root, written once before
        # any session, is no file caught mid-write)
        files = sorted(p for p in root.rglob("*") if p.is_file() and p.name != ".project_root")
        victim = files[which % len(files)]
        whole = victim.read_bytes()
        victim.write_bytes(whole[: cut % (len(whole) + 1)] if whole else b"")
        conn = connect(base / "index.db")
        try:
            _sessions(conn, root, agent)  # never raises
            victim.write_bytes(whole)
            report, indexed = _sessions(conn, root, agent)
        finally:
            conn.close()
        assert not report.incomplete, report.incomplete
        want = {
            tf.session_id: read_session(tf).to_json()
            for tf in discover([agent], env={agent_named(agent).root_env: str(root)})
        }
    assert sorted(indexed) == sorted(want)
    # a transcript that records no times (Cursor's, Windsurf's, Continue's): a record the
    # index saw in the cut file keeps that earlier time (test_first_seen_times.py)
    dated_by_index = agent_named(agent).read_seen is not None
    for sid, doc in indexed.items():
        for key in ("messages", "commands", "edits", "model", "started_at", "ended_at"):
            got, expected = doc[key], want[sid][key]
            if dated_by_index:
                got, expected = _untimed(got), _untimed(expected)
            assert got == expected, (agent, victim.name, sid, key)


def _untimed(value: Any) -> Any:
    """``value`` with its times left out (a time is text, or a record's ``at``)."""
    if isinstance(value, list):
        return [
            {k: v for k, v in r.items() if k != "at"} if isinstance(r, dict) else r for r in value
        ]
    return None if isinstance(value, str) and value[:2] == "20" else value


@pytest.mark.parametrize(
    ("agent", "relative"),
    [
        ("amp", "threads/T-*.json"),
        ("continue", "sessions/*.json"),
        ("gemini-cli", "tmp/*/chats/session-2026-11-29T09-00-3c2b1a09.json"),
        ("droid", "sessions/*/*.settings.json"),
        ("copilot", "*/workspace.json"),
        ("opencode", "storage/part/*/*.json"),
    ],
)
def test_a_half_written_document_is_reported_once_and_nothing_else_lost(
    agent: str, relative: str, tmp_path: Path
) -> None:
    root = lay_out(agent, tmp_path / "store")
    victims = sorted(root.glob(relative))
    assert victims, relative
    victim = victims[0]
    whole = victim.read_bytes()
    conn = connect(tmp_path / "index.db")
    try:
        _, before = _sessions(conn, root, agent)
        victim.write_bytes(whole[: len(whole) // 2])
        os.utime(victim.parent)  # (nothing else changes)
        for tf in discover([agent], env={agent_named(agent).root_env: str(root)}):
            os.utime(tf.path)  # every session's transcript looks changed: each is read
        report, during = _sessions(conn, root, agent)
        assert len(report.incomplete) == 1, report.incomplete
        assert "read at the next run" in report.incomplete[0]
        assert not report.problems
        assert sorted(during) == sorted(before)  # the skipped one kept as last read
        victim.write_bytes(whole)
        report, after = _sessions(conn, root, agent)
    finally:
        conn.close()
    assert not report.incomplete

    def lines(sessions: dict[str, Any]) -> list[Any]:  # (times may follow the files' mtimes)
        return [
            [(e["path"], e["removed"], e["added"]) for e in d["edits"]] for d in sessions.values()
        ]

    assert lines(after) == lines(before)


def test_deja_index_skips_a_thread_amp_is_writing_and_reads_it_next_run(tmp_path: Path) -> None:
    """The reported failure: ``deja index`` exited 1 ("unexpected error:
    JSONDecodeError") on an Amp thread cut short."""
    from conftest import deja

    threads = tmp_path / "home" / ".local" / "share" / "amp" / "threads"
    threads.mkdir(parents=True)
    (threads / "T-1.json").write_bytes(b'{"id":"T-1","messages":[{"role":"user"')
    first = deja("index", "--agent", "amp", "--json")
    assert orjson.loads(first.stdout)["incomplete"] == 1
    said = [line for line in first.stderr.decode().splitlines() if "T-1.json" in line]
    assert len(said) == 1 and "still being written" in said[0], first.stderr
    (threads / "T-1.json").write_bytes(
        b'{"id":"T-1","messages":[{"role":"user","content":"Hello."}]}'
    )
    second = orjson.loads(deja("index", "--agent", "amp", "--json").stdout)
    assert (second["incomplete"], second["added"]) == (0, 1)


def test_a_locked_opencode_database_is_said_and_read_once_free(tmp_path: Path) -> None:
    import sqlite3

    root = lay_out("opencode", tmp_path / "store")
    env = {agent_named("opencode").root_env: str(root)}
    conn = connect(tmp_path / "index.db")
    holder = sqlite3.connect(root / "opencode.db")
    try:
        holder.execute("BEGIN EXCLUSIVE")  # OpenCode in the middle of a write
        problems: list[str] = []
        found = discover(["opencode"], env=env, problems=problems)
        assert [p for p in problems if "opencode.db" in p and "locked" in p], problems
        index_roots(conn, [], transcripts=found, jobs=1)  # the storage layout's only
        holder.rollback()
        found = discover(["opencode"], env=env)
        report = index_roots(conn, [], transcripts=found, jobs=1)
        assert not report.incomplete and not report.problems
        in_db = [tf for tf in found if tf.path.name == "opencode.db"]
        assert in_db and report.added == len(in_db)
    finally:
        holder.close()
        conn.close()


def test_a_database_locked_between_listing_and_reading_waits_for_the_next_run(
    tmp_path: Path,
) -> None:
    import sqlite3

    root = lay_out("opencode", tmp_path / "store")
    found = discover(["opencode"], env={agent_named("opencode").root_env: str(root)})
    conn = connect(tmp_path / "index.db")
    holder = sqlite3.connect(root / "opencode.db")
    try:
        holder.execute("BEGIN EXCLUSIVE")
        report = index_roots(conn, [], transcripts=found, jobs=1)
        in_db = [tf for tf in found if tf.path.name == "opencode.db"]
        assert len(report.incomplete) == len(in_db) and not report.problems
        holder.rollback()
        report = index_roots(conn, [], transcripts=found, jobs=1)
        assert not report.incomplete and report.added == len(in_db)
    finally:
        holder.close()
        conn.close()


def test_parse_of_a_half_written_document_says_so_in_one_line(tmp_path: Path) -> None:
    from conftest import deja

    path = tmp_path / "T-2.json"
    path.write_bytes(b'{"id":"T-2","messages":[')
    run = deja("parse", str(path), check=False)
    assert run.returncode == 1
    said = run.stderr.decode().splitlines()
    assert said[0] == (
        f"deja: error: {path}: not a complete JSON document (still being written?)"
    ), said


def test_worker_processes_skip_a_half_written_document_the_same_way(tmp_path: Path) -> None:
    root = lay_out("amp", tmp_path / "store")
    (root / "threads" / "T-9.json").write_bytes(b'{"id":"T-9","messages":[{"role":')
    found = discover(["amp"], env={agent_named("amp").root_env: str(root)})
    assert len(found) == 2
    conn = connect(tmp_path / "index.db")
    try:
        report = index_roots(conn, [], transcripts=found, jobs=2)
    finally:
        conn.close()
    assert len(report.incomplete) == 1 and "T-9.json" in report.incomplete[0]
    assert report.added == 1 and not report.problems
