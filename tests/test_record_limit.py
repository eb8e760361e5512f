"""The record limit beside the byte limit (issue 39 item 2): under 64 MB a transcript
of tiny records still makes millions of Python objects and index rows (1,000,000
one-line messages took 62 s to index; one 60 MB line of empty objects decodes to
1.9 GB). A transcript past ``DEJA_MAX_TRANSCRIPT_RECORDS`` is skipped with one line
and counted, for every agent; the other sessions are read as ever."""

from __future__ import annotations

import sqlite3
import tracemalloc
from io import BytesIO
from pathlib import Path

import orjson
import pytest
from agent_goldens import GOLDEN_AGENTS, lay_out
from conftest import FIXTURES, deja

from deja_blame.transcripts.jsonl import iter_batches
from deja_blame.transcripts.reading import MAX_RECORDS_ENV, TooLarge, load_document
from deja_blame.transcripts.registry import agent_named

SID_BIG = "11111111-2222-4333-8444-000000000001"
SID_SMALL = "11111111-2222-4333-8444-000000000002"


def _sessions(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return sorted(r[0] for r in conn.execute("SELECT session_id FROM sessions"))


def _claude_line(sid: str, k: int) -> str:
    return orjson.dumps(
        {
            "type": "user",
            "sessionId": sid,
            "cwd": "/work/shop",
            "uuid": f"00000000-0000-4000-8000-{k:012d}",
            "timestamp": f"2026-11-28T09:{k // 60 % 60:02d}:{k % 60:02d}.000Z",
            "message": {"role": "user", "content": f"request number {k}"},
        }
    ).decode()


def _claude_store(root: Path, lines: dict[str, int]) -> Path:
    folder = root / "projects" / "-work-shop"
    folder.mkdir(parents=True)
    for sid, n in lines.items():
        text = "".join(_claude_line(sid, k) + "\n" for k in range(n))
        (folder / f"{sid}.jsonl").write_text(text)
    return folder


def test_a_transcript_past_the_record_limit_is_skipped_the_others_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _claude_store(tmp_path / "claude", {SID_BIG: 60, SID_SMALL: 5})
    monkeypatch.setenv("DEJA_CLAUDE_ROOT", str(tmp_path / "claude"))
    db = tmp_path / "index.db"
    proc = deja("index", "--db", str(db), "--json", env={MAX_RECORDS_ENV: "20"})
    problems = orjson.loads(proc.stdout)["problems"]
    big = folder / f"{SID_BIG}.jsonl"
    assert problems == [
        f"cannot read {big}: more than 20 records: skipped (the limit: {MAX_RECORDS_ENV})"
    ]
    assert _sessions(db) == [SID_SMALL]
    said = deja("index", "--db", str(db), env={MAX_RECORDS_ENV: "20"}).stderr.decode()
    assert "1 problem" in said and said.count("more than 20 records") == 1
    # deja parse says it in one line
    parsed = deja(
        "parse", str(big), "--agent", "claude-code", env={MAX_RECORDS_ENV: "20"}, check=False
    )
    assert parsed.returncode == 1 and "more than 20 records" in parsed.stderr.decode()
    assert len(parsed.stderr.decode().strip().splitlines()) <= 2
    # the control: under the default limit it is read
    deja("index", "--db", str(db))
    assert _sessions(db) == [SID_BIG, SID_SMALL]


def test_a_transcript_that_grows_past_the_limit_keeps_what_was_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read on from an offset, the rows the index holds count: 15 read, 10 more."""
    folder = _claude_store(tmp_path / "claude", {SID_BIG: 15})
    monkeypatch.setenv("DEJA_CLAUDE_ROOT", str(tmp_path / "claude"))
    db = tmp_path / "index.db"
    deja("index", "--db", str(db), env={MAX_RECORDS_ENV: "20"})
    with (folder / f"{SID_BIG}.jsonl").open("a") as fh:
        fh.write("".join(_claude_line(SID_BIG, k) + "\n" for k in range(15, 25)))
    proc = deja("index", "--db", str(db), "--json", env={MAX_RECORDS_ENV: "20"})
    assert any("more than 20 records" in p for p in orjson.loads(proc.stdout)["problems"])
    assert _sessions(db) == [SID_BIG]  # nothing lost: the 15 read before stay
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT n_messages FROM sessions").fetchone()[0] == 15


@pytest.mark.parametrize("agent", [*sorted(GOLDEN_AGENTS), "antigravity"])
def test_every_agent_s_transcripts_obey_the_record_limit(
    agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At a limit of one record, each agent's fixture sessions of more are skipped,
    each with the line, exit 0; the control reads them all."""
    spec = agent_named(agent)
    if agent == "antigravity":
        root = FIXTURES / "demo"
    else:
        root = lay_out(agent, tmp_path / "data")
    monkeypatch.setenv(spec.root_env, str(root))
    db = tmp_path / "index.db"
    proc = deja("index", "--db", str(db), "--json", env={MAX_RECORDS_ENV: "1"}, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    problems = orjson.loads(proc.stdout)["problems"]
    assert problems and all("more than 1 record: skipped" in p for p in problems), problems
    read_at_one = len(_sessions(db))
    deja("index", "--db", str(db))
    assert len(_sessions(db)) == read_at_one + len(problems)


def test_one_huge_line_of_tiny_objects_is_not_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A single line of 700,000 empty objects: counted as malformed without decoding
    it (decoded, it would take about 60 MB here; 1.9 GB at 60 MB of them)."""
    monkeypatch.setenv(MAX_RECORDS_ENV, "1000")
    line = b'{"type": "user", "message": {"content": [' + b",".join([b"{}"] * 700_000) + b"]}}\n"
    fh = BytesIO(b'{"type": "user"}\n' + line + b'{"type": "user"}\n')
    tracemalloc.start()
    try:
        records = [r for batch in iter_batches(fh, 0, final=True) for r in batch.records]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert records == [{"type": "user"}, None, {"type": "user"}]
    assert peak < 3 * len(line), peak


def test_a_document_of_tiny_objects_is_not_decoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MAX_RECORDS_ENV, "1000")
    doc = tmp_path / "thread.json"
    doc.write_bytes(b'{"messages": [' + b",".join([b"{}"] * 20_000) + b"]}")
    with pytest.raises(TooLarge, match="more than 1,000 records"):
        load_document(doc)
    monkeypatch.setenv(MAX_RECORDS_ENV, "5000")  # the control: 20,000 objects, 8 a record
    assert len(load_document(doc)["messages"]) == 20_000


def test_the_readers_that_hold_a_session_whole_count_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Those that build the session in memory stop before the first record is decoded
    (the check on the session built would come after the memory is spent)."""
    from deja_blame.transcripts.antigravity.reader import parse_transcript
    from deja_blame.transcripts.jsonl import WholeFile
    from deja_blame.transcripts.opencode.reader import read_database

    monkeypatch.setenv(MAX_RECORDS_ENV, "1")
    folder = _claude_store(tmp_path / "claude", {SID_BIG: 3})
    with pytest.raises(TooLarge):
        next(iter(WholeFile(folder / f"{SID_BIG}.jsonl")))
    demo = next((FIXTURES / "demo").rglob("transcript*.jsonl"))
    with pytest.raises(TooLarge):
        parse_transcript(demo)
    store = lay_out("opencode", tmp_path / "data")
    with pytest.raises(TooLarge):
        read_database(store / "opencode.db", "ses_4f3e2d1c0b")
