"""Every reader is bounded and reads regular files only (issue 39 items 2 and 6).

A planted transcript must cost bounded time and memory (no quadratic diff, no
transcript past the byte limit read whole), must never be a link (it would copy
``~/.netrc`` into the index), a FIFO (a read that never returns) or a device, and a
malformed one is skipped and counted by every reader, never an exit 1.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
from agent_goldens import FIXTURES, lay_out
from conftest import deja, git

from deja_blame import linediff
from deja_blame.transcripts.edits import hunks_between
from deja_blame.transcripts.reading import NotARegularFile, TooLarge, open_regular, read_whole
from deja_blame.transcripts.registry import agent_named, discover, parse_any

HISTORY = (FIXTURES / "aider" / ".aider.chat.history.md").read_text()


def _sessions(db: Path) -> int:
    return int(sqlite3.connect(db).execute("SELECT count(*) FROM sessions").fetchone()[0])


def test_line_mapping_of_a_huge_repetitive_block_is_not_quadratic(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """12,000 lines that repeat (what took difflib a minute): difflib only ever
    compares a small middle, and the hunks are still exactly the lines changed."""
    compared: list[int] = []
    real_init = difflib.SequenceMatcher.__init__

    def spy(
        self: difflib.SequenceMatcher[str],
        isjunk: object = None,
        a: object = "",
        b: object = "",
        autojunk: bool = True,
    ) -> None:  # noqa: E501
        compared.append(len(a) * len(b))  # type: ignore[arg-type]
        real_init(self, isjunk, a, b, autojunk)  # type: ignore[arg-type]

    monkeypatch.setattr(difflib.SequenceMatcher, "__init__", spy)
    old = ["x = 1", "", "pass"] * 4000
    new = list(old)
    new[6001] = "changed"
    new.insert(9000, "added")
    hunks = hunks_between(old, new)
    assert [(h.removed, h.added) for h in hunks] == [([""], ["changed"]), ([], ["added"])]
    assert max(compared, default=0) <= linediff.SMALL


def test_small_edits_keep_their_hunks() -> None:
    old = ["a", "b", "c", "d"]
    new = ["a", "B", "c", "d", "e"]
    got = [(h.removed, h.added, h.old_start, h.new_start) for h in hunks_between(old, new, 10)]
    assert got == [(["b"], ["B"], 11, 11), ([], ["e"], 14, 14)]


def test_a_history_that_is_a_link_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "netrc"
    secret.write_text(HISTORY)  # readable, and shaped like a history: still not read
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / ".aider.chat.history.md").symlink_to(secret)
    monkeypatch.chdir(repo)
    assert discover(["aider"]) == []
    with pytest.raises(NotARegularFile):
        open_regular(repo / ".aider.chat.history.md")
    # the control: the same text as a file is read
    (repo / ".aider.chat.history.md").unlink()
    (repo / ".aider.chat.history.md").write_text(HISTORY)
    assert len(discover(["aider"])) == 1


@pytest.mark.parametrize(
    "agent", ["claude-code", "codex", "cursor", "droid", "windsurf", "pi", "cline", "roo-code"]
)
def test_a_store_s_links_and_fifos_are_not_transcripts(
    agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = lay_out(agent, tmp_path / "store")
    monkeypatch.setenv(agent_named(agent).root_env, str(store))
    found = discover([agent])
    assert found  # the control
    victim = found[0].path
    text = victim.read_bytes()
    victim.unlink()
    os.mkfifo(victim)
    assert victim not in [tf.path for tf in discover([agent])]
    victim.unlink()
    (tmp_path / "elsewhere.jsonl").write_bytes(text)
    victim.symlink_to(tmp_path / "elsewhere.jsonl")
    assert victim not in [tf.path for tf in discover([agent])]


def test_a_fifo_in_opencode_storage_does_not_hang_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = lay_out("opencode", tmp_path / "data")
    monkeypatch.setenv("DEJA_OPENCODE_ROOT", str(store))
    part = store / "storage" / "session"
    fifo = next(part.rglob("*.json"))
    fifo.unlink()
    os.mkfifo(fifo)
    db = tmp_path / "index.db"
    proc = deja("index", "--db", str(db), check=False)  # a hang fails by timeout
    assert proc.returncode == 0, proc.stderr.decode()
    assert _sessions(db) >= 1


def test_a_transcript_past_the_byte_limit_is_skipped_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big"
    big.mkdir()
    git(big, "init", "-q")
    (big / ".git" / "info" / "exclude").write_text(".aider*\n")
    history = big / ".aider.chat.history.md"
    history.write_text(HISTORY + ("#### more\n\nsome reply\n\n" * 60_000))  # ~1.4 MB
    db = tmp_path / "index.db"
    proc = deja("index", "--db", str(db), cwd=big, env={"DEJA_MAX_TRANSCRIPT_MB": "1"})
    said = proc.stderr.decode()
    assert f"cannot read {history}: larger than 1 MB: skipped" in said, said
    assert "DEJA_MAX_TRANSCRIPT_MB" in said and _sessions(db) == 0
    deja("index", "--db", str(db), cwd=big, env={"DEJA_MAX_TRANSCRIPT_MB": "2"})
    assert _sessions(db) == 1  # the control
    with pytest.raises(TooLarge):
        read_whole(history, 1 << 20)


# a document of the agent's file name and of another shape: each reader's worst
MALFORMED = {
    "continue": ("sessions/0000-bad.json", b'{"sessionId": "0000-bad", "history": 5}'),
    "amp": ("threads/T-0000-bad.json", b'{"id": "T-0000-bad", "messages": 5}'),
}


@pytest.mark.parametrize("agent", sorted(MALFORMED))
def test_a_malformed_transcript_is_skipped_and_counted(
    agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = lay_out(agent, tmp_path / "data")
    monkeypatch.setenv(agent_named(agent).root_env, str(store))
    name, body = MALFORMED[agent]
    bad = store / name
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_bytes(body)
    db = tmp_path / "index.db"
    proc = deja("index", "--db", str(db), "--json", check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    assert "Traceback" not in proc.stderr.decode()
    assert _sessions(db) >= 1  # the good sessions are read
    problems = orjson.loads(proc.stdout)["problems"]
    assert any(str(bad) in p and "skipped" in p for p in problems), problems
    # deja parse says it in one line
    parsed = deja("parse", str(bad), "--agent", agent, "--json", check=False)
    assert parsed.returncode == 1 and "Traceback" not in parsed.stderr.decode()
    assert len(parsed.stderr.decode().strip().splitlines()) <= 2


def test_parse_any_raises_an_oserror_for_a_malformed_document(tmp_path: Path) -> None:
    bad = tmp_path / ".continue" / "sessions" / "x.json"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(MALFORMED["continue"][1])
    with pytest.raises(OSError):
        parse_any(bad, "continue")


def test_an_opencode_database_of_another_shape_is_skipped_and_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database whose tables have other columns (another OpenCode version, or not
    OpenCode's): one line naming the file once, the storage sessions still read."""
    store = lay_out("opencode", tmp_path / "data")
    monkeypatch.setenv("DEJA_OPENCODE_ROOT", str(store))
    conn = sqlite3.connect(store / "opencode.db")
    conn.execute("DROP TABLE part")
    conn.execute("CREATE TABLE part (id TEXT)")
    conn.commit()
    conn.close()
    db = tmp_path / "index.db"
    proc = deja("index", "--db", str(db), "--json", check=False)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr.decode()
    problems = orjson.loads(proc.stdout)["problems"]
    bad = store / "opencode.db"
    assert problems == [
        f"cannot read {bad}: not an OpenCode database deja can read, skipped"
        " (no such column: session_id)"
    ]
    assert _sessions(db) == 1  # the storage layout's session


def test_droids_multi_edit_with_no_list_loses_nothing_else(tmp_path: Path) -> None:
    """Review 9: ``"edits": true`` raised, and the index skipped the whole session."""
    from deja_blame.transcripts.droid.reader import parse_transcript as droid

    def call(i: str, name: str, args: dict[str, Any]) -> list[dict[str, Any]]:
        use = {"type": "tool_use", "id": i, "name": name, "input": args}
        done = {"type": "tool_result", "tool_use_id": i, "content": "ok"}
        return [
            {"type": "message", "message": {"role": "assistant", "content": [use]}},
            {"type": "message", "message": {"role": "user", "content": [done]}},
        ]

    recs = [
        {"type": "session_start", "id": "d1", "cwd": "/work/p"},
        *call("a", "MultiEdit", {"file_path": "a.py", "edits": True}),
        *call("b", "Create", {"file_path": "b.py", "content": "B = 1\n"}),
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    doc = droid(path, "d1").to_json()
    assert [e["path"] for e in doc["edits"]] == ["/work/p/b.py"]


# numbers past 64 bits in a transcript's text: an exit code of 30 digits overflowed
# SQLite (the whole run's "unexpected error": no transcript indexed), one of 5,000
# digits int()'s limit; a hunk header's positions likewise (review 11 #2)
HUGE = ("9" * 30, "9" * 5_000)


def _claude_bash_failing(repo: Path, sid: str, digits: str) -> list[dict[str, Any]]:
    base = {"sessionId": sid, "cwd": str(repo)}
    said = f"Error: Exit code {digits}\nboom"
    return [
        {**base, "type": "user", "uuid": "u", "timestamp": "2026-11-30T10:00:00Z",
         "message": {"role": "user", "content": "run the tests"}},
        {**base, "type": "assistant", "uuid": "a", "timestamp": "2026-11-30T10:00:01Z",
         "message": {"role": "assistant", "content": [
             {"type": "tool_use", "id": "t", "name": "Bash",
              "input": {"command": "python -m pytest"}}]}},
        {**base, "type": "user", "uuid": "r", "timestamp": "2026-11-30T10:00:02Z",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "t", "is_error": True,
              "content": said}]},
         "toolUseResult": said},
    ]  # fmt: skip


def test_a_huge_exit_code_is_none_and_the_other_sessions_are_indexed(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    folder = home / ".claude" / "projects" / "-srv-app"
    folder.mkdir(parents=True)
    sids = [f"00000000-0000-4000-8000-00000000000{i}" for i in range(3)]
    for sid, digits in zip(sids, ("2", *HUGE)):
        records = _claude_bash_failing(Path("/srv/app"), sid, digits)
        (folder / f"{sid}.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    db = tmp_path / "index.db"
    deja("index", "--db", str(db))
    codes = dict(
        sqlite3.connect(db).execute(
            "SELECT s.session_id, c.exit_code FROM commands c JOIN sessions s USING (sid)"
        )
    )
    assert codes == {sids[0]: 2, sids[1]: None, sids[2]: None}
    for sid in sids[1:]:
        doc = orjson.loads(deja("parse", str(folder / f"{sid}.jsonl"), "--json").stdout)
        assert [c["exit_code"] for c in doc["commands"]] == [None]


@pytest.mark.parametrize("digits", HUGE)
def test_a_hunk_header_past_64_bits_keeps_its_lines(digits: str) -> None:
    from deja_blame.transcripts.edits import unified_hunks

    (hunk,) = unified_hunks(f"--- a/x.py\n+++ b/x.py\n@@ -{digits},1 +{digits},2 @@\n-a\n+b\n+c\n")
    assert (hunk.removed, hunk.added, hunk.old_start) == (["a"], ["b", "c"], None)
    orjson.dumps(hunk.to_json())  # what the index stores


# -- a reader that raises what nobody foresaw ------------------------------------------------
# Each hostile value found so far (an exit code past 64 bits, a time past year 9999
# with an offset) was an exception no reader caught, and one transcript holding it
# stopped `deja index` for every transcript. Whatever a reader raises now, one
# record (read on) or one transcript (skipped, said in one line) is all it costs.


def test_a_record_its_reader_fails_on_is_counted_and_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conftest import run_deja

    from deja_blame.transcripts.claude_code import reader as claude_reader

    real_record = claude_reader._Reader.record

    def record(self: Any, rec: dict[str, Any]) -> None:
        if rec.get("uuid") == "a":  # the Bash call: a value no rule foresaw
            raise OverflowError("date value out of range")
        real_record(self, rec)

    monkeypatch.setattr(claude_reader._Reader, "record", record)
    home = Path(os.environ["HOME"])
    folder = home / ".claude" / "projects" / "-srv-app"
    folder.mkdir(parents=True)
    sid = "00000000-0000-4000-8000-000000000001"
    records = _claude_bash_failing(Path("/srv/app"), sid, "2")
    (folder / f"{sid}.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    db = tmp_path / "index.db"
    result = run_deja("index", "--db", str(db), "--json")
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout)
    assert report["added"] == 1 and report["skipped_lines"] == 1, report
    # the request before the failing record and the result after it are both kept
    (held,) = sqlite3.connect(db).execute("SELECT count(*) FROM messages").fetchone()
    assert held >= 2, held


def test_a_transcript_its_reader_fails_on_is_skipped_and_the_others_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conftest import run_deja

    from deja_blame.transcripts import registry

    agent = "cline"  # read whole, as a document
    store = lay_out(agent, tmp_path / "data")
    monkeypatch.setenv(agent_named(agent).root_env, str(store))
    real = registry.agent_named(agent)
    found = discover([agent])
    assert len(found) >= 2, found  # one to fail, one to read
    failing = found[0].path

    def read(tf: Any, *args: Any) -> Any:
        if tf.path == failing:
            raise OverflowError("date value out of range")
        return real.read(tf, *args)

    patched = dataclasses.replace(real, read=read, read_seen=None)
    real_named = registry.agent_named
    monkeypatch.setattr(
        registry, "agent_named", lambda name: patched if name == agent else real_named(name)
    )
    db = tmp_path / "index.db"
    result = run_deja("index", "--db", str(db), "--json", "--agent", agent)
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout)
    assert report["added"] == len(found) - 1, report
    said = [p for p in report["problems"] if str(failing) in p]
    assert len(said) == 1 and "skipped (OverflowError: date value out of range)" in said[0], said


def test_a_batch_its_reader_fails_on_skips_that_transcript_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader that fails a whole batch (Antigravity's reads a batch at once): that
    transcript is skipped in one line and read again next run; the others are indexed."""
    from conftest import run_deja

    from deja_blame.transcripts import builder

    home = Path(os.environ["HOME"])
    folder = home / ".claude" / "projects" / "-srv-app"
    folder.mkdir(parents=True)
    sids = [f"00000000-0000-4000-8000-00000000000{i}" for i in range(2)]
    for sid in sids:
        records = _claude_bash_failing(Path("/srv/app"), sid, "2")
        (folder / f"{sid}.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    real_feed = builder.BatchReader.feed

    def feed(self: Any, records: list[Any], spans: Any = None) -> Any:
        if any(r and r.get("sessionId") == sids[0] for r in records):
            raise OverflowError("date value out of range")
        return real_feed(self, records, spans)

    monkeypatch.setattr(builder.BatchReader, "feed", feed)
    db = tmp_path / "index.db"
    result = run_deja("index", "--db", str(db), "--json")
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout)
    assert report["added"] == 1, report
    said = [p for p in report["problems"] if sids[0] in p]
    assert len(said) == 1 and "skipped (OverflowError: date value out of range)" in said[0], said
    again = orjson.loads(run_deja("index", "--db", str(db), "--json").stdout)
    assert any(sids[0] in p for p in again["problems"]), again  # not taken as read
