"""The index end to end: `deja index`, then `deja sessions` / `deja show`, through the real CLI.

Transcripts are written line by line here, the way a client writes them, so
each test can grow, cut, replace or half-write a file between two runs.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import FIXTURES, deja, deja_json, index_with_a_rival, run_deja

from deja_blame.index import db as index_db
from deja_blame.index import ingest, store
from deja_blame.index.fingerprint import fingerprint
from deja_blame.index.keys import message_id, role_code
from deja_blame.index.queries import LINES as WRITTEN_LINES
from deja_blame.transcripts.text import excerpt

# -- writing transcripts ---------------------------------------------------------------


def at(i: int) -> str:
    return f"2026-07-17T09:{i // 60:02d}:{i % 60:02d}Z"


def enc(value: Any) -> str:
    """A compact transcript's argument value: JSON text, quotes included."""
    return json.dumps(value)


def transcript(root: Path, sid: str, name: str = "transcript.jsonl") -> Path:
    path = root / "brain" / sid / ".system_generated" / "logs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def jsonl(*records: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def append(path: Path, *records: dict[str, Any]) -> None:
    with open(path, "ab") as fh:
        fh.write(jsonl(*records))


def user(i: int, text: str, cwd: str = "/work/api") -> dict[str, Any]:
    return {
        "step_index": i,
        "source": "USER_EXPLICIT",
        "type": "USER_INPUT",
        "status": "DONE",
        "created_at": at(i),
        "content": f"<USER_REQUEST>\n{text}\n</USER_REQUEST>\n"
        f"<ADDITIONAL_METADATA>\n{json.dumps({'cwd': cwd})}\n</ADDITIONAL_METADATA>",
    }


def planner(i: int, text: str, *calls: dict[str, Any]) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "step_index": i,
        "source": "MODEL",
        "type": "PLANNER_RESPONSE",
        "status": "DONE",
        "created_at": at(i),
        "content": text,
    }
    if calls:
        rec["tool_calls"] = list(calls)
    return rec


def run_call(command: str, cwd: str = "/work/api") -> dict[str, Any]:
    return {
        "name": "run_command",
        "args": {"CommandLine": enc(command), "Cwd": enc(cwd), "WaitMsBeforeAsync": "500"},
    }


def replace_call(path: str, target: str, replacement: str) -> dict[str, Any]:
    return {
        "name": "replace_file_content",
        "args": {
            "TargetFile": enc(path),
            "TargetContent": enc(target),
            "ReplacementContent": enc(replacement),
            "AllowMultiple": "false",
        },
    }


def write_call(path: str, content: str) -> dict[str, Any]:
    return {
        "name": "write_to_file",
        "args": {"TargetFile": enc(path), "CodeContent": enc(content), "Overwrite": "false"},
    }


def step(i: int, kind: str, body: str, status: str = "DONE") -> dict[str, Any]:
    return {
        "step_index": i,
        "source": "MODEL",
        "type": kind,
        "status": status,
        "created_at": at(i),
        "content": f"Created At: {at(i)}\nCompleted At: {at(i)}\n{body}",
    }


def run_step(i: int, command: str | None, code: int) -> dict[str, Any]:
    named = f"Task Description: {command}\n" if command else ""
    return step(i, "RUN_COMMAND", f"{named}\tThe command exited with code {code}.\nOutput:\nok")


def diff_step(i: int, path: str, removed: list[str], added: list[str]) -> dict[str, Any]:
    block = "\n".join(
        ["@@ -10,2 +10,3 @@", " def handler(event):"]
        + [f"-{x}" for x in removed]
        + [f"+{x}" for x in added]
    )
    return step(
        i,
        "CODE_ACTION",
        f"The following changes were made by the replace_file_content tool to: {path}."
        " If relevant, proactively run terminal commands to verify.\n"
        f"[diff_block_start]\n{block}\n[diff_block_end]",
    )


def created_step(i: int, path: str, status: str = "DONE") -> dict[str, Any]:
    return step(i, "CODE_ACTION", f"Created file file://{path} with requested content.", status)


def system(i: int) -> dict[str, Any]:
    return {"step_index": i, "source": "SYSTEM", "type": "CHECKPOINT", "created_at": at(i)}


def conversation(n_turns: int = 1, start: int = 0) -> list[dict[str, Any]]:
    """``n_turns`` rounds of request, planner + run_command, command step: 4 messages each."""
    out: list[dict[str, Any]] = []
    for t in range(n_turns):
        i = start + 10 * t
        out += [
            user(i, f"Request {i}"),
            planner(i + 1, f"Running check {i}.", run_call(f"make check-{i}")),
            run_step(i + 2, f"make check-{i}", 0),
            system(i + 3),
        ]
    return out


# -- reading the index ------------------------------------------------------------------


def db_path(tmp_path: Path) -> Path:
    return tmp_path / "index.db"  # what conftest's DEJA_DB points at


def query(db: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(str(db))
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def sid_of(table: str, alias: str = "t") -> str:
    """The SQL for a row's session: a message's is the top of its rowid (message_id)."""
    return f"({alias}.id >> 32)" if table == "messages" else f"{alias}.sid"


def counts(db: Path, sid: str) -> dict[str, int]:
    out = {}
    for table in ("messages", "commands", "files", "edits", "lines"):
        rows = WRITTEN_LINES if table == "lines" else table
        out[table] = query(
            db,
            f"SELECT COUNT(*) FROM {rows} t JOIN sessions s ON s.sid = {sid_of(table)}"
            " WHERE session_id=?",
            sid,
        )[0][0]
    return out


def index(root: Path, *extra: str) -> dict[str, Any]:
    report = deja_json("index", "--root", str(root), "--json", *extra)
    assert isinstance(report, dict)
    return report


def show(sid: str) -> dict[str, Any]:
    doc = deja_json("show", sid, "--json")
    assert isinstance(doc, dict)
    return doc


def show_in_process(sid: str) -> dict[str, Any]:
    result = run_deja("show", sid, "--json")
    assert result.exit_code == 0, result.output
    doc = orjson.loads(result.stdout)
    assert isinstance(doc, dict)
    return doc


def one_line_error(proc: subprocess.CompletedProcess[bytes]) -> list[str]:
    err = proc.stderr.decode()
    assert "Traceback" not in err
    return err.splitlines()


# -- index, sessions, show ------------------------------------------------------------------


def test_index_then_sessions_and_show(tmp_path: Path) -> None:
    root = tmp_path / "root"
    path = transcript(root, "sess-one")
    app = "/work/api/src/app.py"
    new = "/work/api/src/new.py"
    append(
        path,
        user(0, "Check the build."),
        planner(1, "Running the tests.", run_call("npm test")),
        run_step(2, "npm test", 1),
        system(3),
        planner(4, "Fixing the handler.", replace_call(app, "    return None", "x")),
        diff_step(
            5, app, ["    return None"], ["    body = parse(event)", "    return respond(body)"]
        ),
        planner(6, "Adding a module.", write_call(new, "import os\nprint(os.sep)\n")),
        created_step(7, new),
    )
    append(transcript(root, "sess-two"), user(0, "Second session."))

    report = index(root)
    assert report["added"] == 2 and report["transcripts"] == 2 and report["problems"] == []

    listed = deja_json("sessions", "--json")["sessions"]
    assert sorted(s["session_id"] for s in listed) == ["sess-one", "sess-two"]
    one = next(s for s in listed if s["session_id"] == "sess-one")
    assert one["first_prompt"] == "Check the build."
    assert one["commands"] == 1 and one["edits"] == 2
    # the edits went to src/; the command ran in /work/api, which holds them
    assert one["project"] == "/work/api"

    doc = show("sess-o")  # a unique prefix is enough
    assert doc["session_id"] == "sess-one"
    assert doc["transcript"] == str(path.resolve()) or doc["transcript"] == str(path)
    assert doc["started_at"] == at(0) and doc["ended_at"] == at(7)
    assert [(m["role"], m["text"].splitlines()[0]) for m in doc["messages"]] == [
        ("user", "Check the build."),
        ("assistant", "Running the tests."),
        ("tool", "Task Description: npm test"),
        ("assistant", "Fixing the handler."),
        (
            "tool",
            f"The following changes were made by the replace_file_content tool to: {app}."
            " If relevant, proactively run terminal commands to verify.",
        ),
        ("assistant", "Adding a module."),
        ("tool", f"Created file file://{new} with requested content."),
    ]
    assert doc["commands"] == [
        {"command": "npm test", "cwd": "/work/api", "exit_code": 1, "at": at(1)}
    ]
    assert [(e["path"], e["tool"], e["removed"], e["added"]) for e in doc["edits"]] == [
        (
            app,
            "replace_file_content",
            ["    return None"],
            ["    body = parse(event)", "    return respond(body)"],
        ),
        (new, "write_to_file", [], ["import os", "print(os.sep)"]),
    ]
    # the index gives back what a one-shot parse of the same file gives
    parsed = deja_json("parse", str(path), "--json")
    assert {k: v for k, v in parsed.items() if k != "transcript"} == {
        k: v for k, v in doc.items() if k != "transcript"
    }


def test_db_option_and_env_choose_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    append(transcript(root, "s1"), *conversation(1))
    env_db = tmp_path / "env" / "env.db"
    opt_db = tmp_path / "opt" / "opt.db"

    deja("index", "--root", str(root), env={"DEJA_DB": str(env_db)})
    assert env_db.is_file() and not db_path(tmp_path).exists()
    deja("index", "--root", str(root), "--db", str(opt_db), env={"DEJA_DB": str(env_db)})
    assert opt_db.is_file()  # --db beats DEJA_DB

    listed = deja_json("sessions", "--json", "--db", str(opt_db))["sessions"]
    assert [s["session_id"] for s in listed] == ["s1"]
    # the conftest index (DEJA_DB) was never written, so it lists nothing
    assert deja_json("sessions", "--json")["sessions"] == []

    monkeypatch.delenv("DEJA_DB")
    deja("index", "--root", str(root))
    default = Path(os.environ["XDG_DATA_HOME"]) / "deja" / "index.db"
    assert default.is_file()
    assert [s["session_id"] for s in deja_json("sessions", "--json")["sessions"]] == ["s1"]


# -- incremental ----------------------------------------------------------------------------


def test_second_run_with_nothing_new_parses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    for n in range(5):
        append(transcript(root, f"s{n}"), *conversation(2))
    assert index(root)["added"] == 5
    again = index(root)
    assert (again["added"], again["updated"], again["unchanged"]) == (0, 0, 5)

    # In process: not one transcript is opened, let alone fed to the reader.
    def boom(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("a transcript was read although nothing changed")

    with monkeypatch.context() as patched:
        patched.setattr(ingest, "resumable_reader", boom)
        patched.setattr(ingest, "iter_batches", boom)
        patched.setattr(ingest, "open", boom, raising=False)
        result = run_deja("index", "--root", str(root), "--json")
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.stdout)["unchanged"] == 5

    # and one changed file is the only one read
    append(transcript(root, "s3"), user(100, "More."))
    again = index(root)
    assert (again["added"], again["updated"], again["unchanged"]) == (0, 1, 4)


def test_grown_transcript_is_read_from_the_last_offset(tmp_path: Path) -> None:
    root = tmp_path / "root"
    path = transcript(root, "grow")
    append(path, *conversation(3))
    index(root)
    db = db_path(tmp_path)
    before = counts(db, "grow")
    assert before["messages"] == 9 and before["commands"] == 3
    offset = query(db, "SELECT offset FROM sessions WHERE session_id='grow'")[0][0]
    assert offset == path.stat().st_size

    append(path, *conversation(2, start=100))
    report = index(root)
    assert report["updated"] == 1
    after = counts(db, "grow")
    assert after["messages"] == 15 and after["commands"] == 5
    texts = [m["text"] for m in show("grow")["messages"] if m["role"] == "user"]
    assert texts == ["Request 0", "Request 10", "Request 20", "Request 100", "Request 110"]
    assert query(db, "SELECT n_messages FROM sessions WHERE session_id='grow'")[0][0] == 15

    # touched, not grown: nothing read, nothing doubled
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    report = index(root)
    assert (report["updated"], report["unchanged"]) == (0, 1)
    assert counts(db, "grow") == after


def test_interrupted_run_resumes_where_its_last_batch_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    path = transcript(root, "big")
    append(path, *conversation(30))
    db = db_path(tmp_path)
    commits: list[int] = []
    real_commit = ingest._commit

    def killed_after_two(*args: Any, **kwargs: Any) -> Any:
        if len(commits) == 2:
            raise KeyboardInterrupt  # Ctrl-C between two batches
        commits.append(1)
        return real_commit(*args, **kwargs)

    conn = index_db.connect(db)
    try:
        with monkeypatch.context() as patched:
            patched.setattr(ingest, "_commit", killed_after_two)
            with pytest.raises(KeyboardInterrupt):
                ingest.index_roots(conn, [root], batch_bytes=2_000)
    finally:
        conn.close()
    partial = counts(db, "big")["messages"]
    assert 0 < partial < 90
    offset, size = query(db, "SELECT offset, size FROM sessions")[0]
    assert offset < path.stat().st_size

    report = index(root)  # the file did not change, yet the rest is read
    assert report["updated"] == 1
    assert counts(db, "big")["messages"] == 90
    users = [m["text"] for m in show("big")["messages"] if m["role"] == "user"]
    assert users == [f"Request {10 * t}" for t in range(30)]


def commit_failing_at_the_fourth() -> tuple[Callable[..., Any], list[str]]:
    """``ingest._commit`` as it is, but a disk error at its fourth transcript; and the
    sessions it committed before (a group's failure while writing)."""
    real_commit = ingest._commit
    commits: list[str] = []

    def failing_at_the_fourth(conn: Any, tf: Any, *args: Any, **kwargs: Any) -> Any:
        if len(commits) == 3:
            raise sqlite3.OperationalError("disk I/O error")
        commits.append(tf.session_id)
        return real_commit(conn, tf, *args, **kwargs)

    return failing_at_the_fourth, commits


def test_small_transcripts_are_written_in_one_transaction_and_a_failure_keeps_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    for k in range(5):
        append(transcript(root, f"small{k}"), *conversation(3))
    db = db_path(tmp_path)
    failing_at_the_fourth, commits = commit_failing_at_the_fourth()
    conn = index_db.connect(db)
    try:
        with monkeypatch.context() as patched:
            patched.setattr(ingest, "_commit", failing_at_the_fourth)
            with pytest.raises(sqlite3.OperationalError):
                ingest.index_roots(conn, [root], jobs=1)
        # the three written before the failure were in the same transaction: gone too
        assert len(commits) == 3
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        report = ingest.index_roots(conn, [root], jobs=1)
        conn.set_trace_callback(None)
    finally:
        conn.close()
    assert report.added == 5
    assert statements.count("BEGIN IMMEDIATE") == 1  # one transaction for the five
    # and no savepoint each: SQLite would first copy every page they touch
    assert not [s for s in statements if s.startswith("SAVEPOINT")]
    for k in range(5):
        assert counts(db, f"small{k}")["messages"] == 9


def test_a_group_that_fails_while_writing_keeps_no_part_of_a_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A group goes on past a transcript it cannot read, but an error while writing
    (here an OSError half way through a session's rows) ends it, rolled back whole:
    without a savepoint each, the session's rows written so far cannot be taken back
    alone, and going on would keep half of them."""
    root = tmp_path / "root"
    for k in range(4):
        append(transcript(root, f"small{k}"), *conversation(3))
    db = db_path(tmp_path)
    real_write = ingest.write_rows
    written: list[int] = []

    def failing_in_the_third(conn: Any, sid: int, rows: Any, paths: Any) -> None:
        written.append(sid)
        if len(written) == 3:
            conn.execute(
                "INSERT INTO messages(id, step, role, text) VALUES (?, 0, 'u', 'half')",
                (message_id(sid, 0),),
            )
            raise PermissionError("cannot write")
        real_write(conn, sid, rows, paths)

    conn = index_db.connect(db)
    try:
        with monkeypatch.context() as patched:
            patched.setattr(ingest, "write_rows", failing_in_the_third)
            with pytest.raises(sqlite3.OperationalError, match="cannot write"):
                ingest.index_roots(conn, [root], jobs=1)
        assert len(written) == 3
        for table in ("sessions", "messages"):
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0
        report = ingest.index_roots(conn, [root], jobs=1)
    finally:
        conn.close()
    assert report.added == 4
    for k in range(4):
        assert counts(db, f"small{k}")["messages"] == 9


def test_half_written_last_line_waits_until_complete(tmp_path: Path) -> None:
    root = tmp_path / "root"
    path = transcript(root, "half")
    append(path, user(0, "First."))
    full = json.dumps(planner(1, "Half then whole.")).encode() + b"\n"
    cut = len(full) // 2
    with open(path, "ab") as fh:
        fh.write(full[:cut])  # the client is in the middle of writing this line

    report = index(root)
    assert report["skipped_lines"] == 0
    doc = show("half")
    assert [m["text"] for m in doc["messages"]] == ["First."]
    assert doc["skipped_lines"] == 0
    db = db_path(tmp_path)
    assert query(db, "SELECT offset FROM sessions")[0][0] == path.stat().st_size - cut

    with open(path, "ab") as fh:
        fh.write(full[cut:])
    report = index(root)
    assert report["skipped_lines"] == 0 and report["updated"] == 1
    doc = show("half")
    assert [m["text"] for m in doc["messages"]] == ["First.", "Half then whole."]
    assert doc["skipped_lines"] == 0
    index(root)
    assert counts(db, "half")["messages"] == 2


def test_malformed_complete_lines_are_counted_once(tmp_path: Path) -> None:
    root = tmp_path / "root"
    path = transcript(root, "bad")
    append(path, user(0, "One."))
    with open(path, "ab") as fh:
        fh.write(b'{"source": "MODEL", "content": \n[1, 2]\n\n')
    assert index(root)["skipped_lines"] == 2
    append(path, user(1, "Two."))
    assert index(root)["skipped_lines"] == 0  # the old ones are not met again
    doc = show("bad")
    assert doc["skipped_lines"] == 2
    assert [m["text"] for m in doc["messages"]] == ["One.", "Two."]


@pytest.mark.parametrize("named", [True, False], ids=["step-names-command", "step-names-none"])
def test_exit_code_arriving_in_a_later_run(tmp_path: Path, named: bool) -> None:
    root = tmp_path / "root"
    path = transcript(root, "later")
    append(path, user(0, "Build it."), planner(1, "Building.", run_call("make build")))
    index(root)
    assert show("later")["commands"] == [
        {"command": "make build", "cwd": "/work/api", "exit_code": None, "at": at(1)}
    ]

    append(path, run_step(2, "make build" if named else None, 1))
    index(root)
    assert show("later")["commands"] == [
        {"command": "make build", "cwd": "/work/api", "exit_code": 1, "at": at(1)}
    ]
    assert counts(db_path(tmp_path), "later")["commands"] == 1


def test_pending_write_confirmed_in_the_next_run(tmp_path: Path) -> None:
    root = tmp_path / "root"
    path = transcript(root, "write")
    target = "/work/api/src/fresh.py"
    append(path, user(0, "Write it."), planner(1, "Writing.", write_call(target, "a = 1\nb = 2\n")))
    index(root)
    assert show("write")["edits"] == []
    # the state keeps where the call is, not its content: read back from that line
    ((blob,),) = query(db_path(tmp_path), "SELECT state FROM sessions")
    pending = orjson.loads(store.unpack(blob))["pending_writes"][target]
    start, length, number = pending["line"]
    assert "content" not in pending and b"b = 2" not in store.unpack(blob)
    assert orjson.loads(path.read_bytes()[start : start + length])["tool_calls"][number]

    append(path, created_step(2, target))
    index(root)
    edits = show("write")["edits"]
    assert [(e["path"], e["tool"], e["added"]) for e in edits] == [
        (target, "write_to_file", ["a = 1", "b = 2"])
    ]
    db = db_path(tmp_path)
    assert counts(db, "write")["edits"] == 1 and counts(db, "write")["lines"] == 2

    # a second confirmation of the same file does not write it twice
    append(path, created_step(3, target))
    index(root)
    assert counts(db, "write")["edits"] == 1


def test_a_pending_write_whose_line_changed_unseen_is_counted_as_skipped(tmp_path: Path) -> None:
    """The call's line read back no longer gives its write (changed in the middle of a
    long transcript, where the index's hash of its head and tail cannot see): the write
    is lost, and the session counts a line skipped rather than losing it in silence."""
    root = tmp_path / "root"
    path = transcript(root, "changed")
    target = "/work/api/src/gone.py"
    padding = [user(i, "x" * 300) for i in range(30)]  # 9 KB either side of the call
    append(path, *padding, planner(40, "Writing.", write_call(target, "a = 1\n")), *padding)
    index(root)
    ((blob,),) = query(db_path(tmp_path), "SELECT state FROM sessions")
    start, length, _number = orjson.loads(store.unpack(blob))["pending_writes"][target]["line"]
    data = bytearray(path.read_bytes())
    line = bytes(data[start : start + length])
    assert b"write_to_file" in line
    data[start : start + length] = line.replace(b"write_to_file", b"view_file_xyz")
    path.write_bytes(bytes(data))
    append(path, created_step(80, target))
    index(root)
    doc = show("changed")
    assert doc["skipped_lines"] == 1 and doc["edits"] == []


def test_pending_write_of_the_other_file_keeps_its_content(tmp_path: Path) -> None:
    """A write_to_file call only the session's other file holds has no line in the
    transcript the index reads on: its state keeps the content, and a confirmation in
    a later run writes it."""
    root = tmp_path / "root"
    target = "/work/api/src/other.py"
    append(
        transcript(root, "pair"),
        user(0, "Write it."),
        planner(1, "Writing.", write_call(target, "c = 3\n")),
    )
    full = transcript(root, "pair", "transcript_full.jsonl")
    append(full, user(0, "Write it."))
    index(root)
    ((blob,),) = query(db_path(tmp_path), "SELECT state FROM sessions")
    pending = orjson.loads(store.unpack(blob))["pending_writes"][target]
    assert pending["content"] == "c = 3\n" and "line" not in pending
    append(full, created_step(2, target))
    index(root)
    assert [(e["path"], e["added"]) for e in show("pair")["edits"]] == [(target, ["c = 3"])]


def test_failed_write_records_nothing(tmp_path: Path) -> None:
    root = tmp_path / "root"
    path = transcript(root, "failed")
    target = "/work/api/src/never.py"
    append(path, planner(1, "Writing.", write_call(target, "x = 1\n")))
    index(root)
    append(path, step(2, "CODE_ACTION", "Error: permission denied", status="ERROR"))
    index(root)
    assert show("failed")["edits"] == []


@pytest.mark.parametrize("how", ["smaller", "same-size", "replaced-by-rename"])
def test_shrunk_or_replaced_transcript_is_read_again(tmp_path: Path, how: str) -> None:
    root = tmp_path / "root"
    path = transcript(root, "redo")
    original = jsonl(user(0, "Alpha request."), *conversation(2, start=10))
    path.write_bytes(original)
    index(root)
    db = db_path(tmp_path)
    assert counts(db, "redo")["messages"] == 7

    if how == "smaller":
        new = jsonl(user(0, "Beta."))
    else:
        new = jsonl(user(0, "Omega request."), *conversation(2, start=10))
        assert len(new) == len(original)  # same size, different bytes
    if how == "replaced-by-rename":
        tmp = path.with_name("transcript.jsonl.tmp")
        tmp.write_bytes(new)
        os.replace(tmp, path)
    else:
        path.write_bytes(new)
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))

    report = index(root)
    assert report["updated"] == 1
    doc = show("redo")
    users = [m["text"] for m in doc["messages"] if m["role"] == "user"]
    if how == "smaller":
        assert users == ["Beta."]
        assert counts(db, "redo") == {
            "messages": 1,
            "commands": 0,
            "files": 0,
            "edits": 0,
            "lines": 0,
        }
    else:
        assert users == ["Omega request.", "Request 10", "Request 20"]
        assert counts(db, "redo")["messages"] == 7
        assert counts(db, "redo")["commands"] == 2
    assert deja_json("sessions", "--json")["sessions"][0]["first_prompt"] == users[0]


def test_rewritten_without_a_request_drops_the_old_first_prompt(tmp_path: Path) -> None:
    root = tmp_path / "root"
    path = transcript(root, "prompt")
    path.write_bytes(jsonl(user(0, "The old request."), planner(1, "Sure.")))
    index(root)
    assert deja_json("sessions", "--json")["sessions"][0]["first_prompt"] == "The old request."
    path.write_bytes(jsonl(planner(1, "Only an answer.")))
    index(root)
    assert deja_json("sessions", "--json")["sessions"][0]["first_prompt"] is None
    append(path, user(5, "A later request."), user(6, "And another."))
    index(root)
    assert deja_json("sessions", "--json")["sessions"][0]["first_prompt"] == "A later request."


def test_first_request_of_a_fresh_batch_is_the_first_in_step_order() -> None:
    """A session read from scratch takes its first prompt from the batch's own rows
    (no query): the user row lowest by (step, ordinal), wherever it is listed."""
    rows = store.ChunkRows(
        messages=[
            (2, 9, role_code("user"), "Third.", None, None, None, None),
            (0, 4, role_code("assistant"), "Words.", None, None, None, None),
            (3, 4, role_code("user"), "Second.", None, None, None, None),
            (1, 4, role_code("user"), "First.", None, None, None, None),
        ],
        commands=[],
        files=[],
        edits=[],
        lines=[],
        exit_patches={},
        status_patches={},
        skipped=0,
        has_user=True,
    )
    assert ingest.first_request(rows) == "First."
    assert ingest.first_request(None) is None
    assert ingest.first_request(rows.__class__(**{**rows.__dict__, "messages": []})) is None


def test_rewrite_that_differs_only_past_the_head_is_noticed(tmp_path: Path) -> None:
    """Same size, same first kilobytes: only the bytes before the stored offset differ."""
    root = tmp_path / "root"
    path = transcript(root, "tail")
    head = conversation(40)  # well past any head-hash window
    path.write_bytes(jsonl(*head, user(1000, "Tail A.")))
    index(root)
    path.write_bytes(jsonl(*head, user(1000, "Tail B.")))
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    index(root)
    users = [m["text"] for m in show("tail")["messages"] if m["role"] == "user"]
    assert users[-1] == "Tail B." and "Tail A." not in users
    assert counts(db_path(tmp_path), "tail")["messages"] == 40 * 3 + 1


def test_deleted_transcript_keeps_its_session(tmp_path: Path) -> None:
    root = tmp_path / "root"
    gone = transcript(root, "gone")
    append(gone, *conversation(1))
    append(transcript(root, "kept"), *conversation(1))
    index(root)
    gone.unlink()
    report = index(root)
    assert report["transcripts"] == 1
    ids = sorted(s["session_id"] for s in deja_json("sessions", "--json")["sessions"])
    assert ids == ["gone", "kept"]
    assert counts(db_path(tmp_path), "gone")["messages"] == 3
    assert show("gone")["messages"][0]["text"] == "Request 0"


def test_full_transcript_appearing_beside_the_compact_one(tmp_path: Path) -> None:
    root = tmp_path / "root"
    compact = transcript(root, "pair")
    target = "/work/api/package.json"
    package = '{"name": "api"}\n'
    append(
        compact,
        user(0, "Add a package file."),
        planner(1, "Writing.", write_call(target, package)),
        created_step(2, target),
    )
    index(root)
    db = db_path(tmp_path)
    assert counts(db, "pair")["edits"] == 1

    full = transcript(root, "pair", "transcript_full.jsonl")
    native = planner(
        1,
        "Writing.",
        {"name": "write_to_file", "args": {"TargetFile": target, "CodeContent": package}},
    )
    append(
        full,
        user(0, "Add a package file."),
        native,
        created_step(2, target),
        user(3, "Only in the full file."),
    )
    report = index(root)
    assert report["updated"] == 1
    doc = show("pair")
    assert doc["transcript"].endswith("transcript_full.jsonl")
    assert [m["text"] for m in doc["messages"] if m["role"] == "user"] == [
        "Add a package file.",
        "Only in the full file.",
    ]
    # full-file values are native JSON: the package.json text is not decoded again
    assert doc["edits"][0]["added"] == ['{"name": "api"}']
    assert counts(db, "pair") == {"messages": 4, "commands": 0, "files": 1, "edits": 1, "lines": 1}
    again = index(root)
    assert again["unchanged"] == 1


# -- trouble: roots, files, the index itself ----------------------------------------------------


def test_missing_root_and_directory_for_a_file(tmp_path: Path) -> None:
    root = tmp_path / "root"
    append(transcript(root, "good"), *conversation(1))
    bad = transcript(root, "bad")
    bad.mkdir()  # a directory where transcript.jsonl should be
    missing = tmp_path / "nowhere"

    proc = deja("index", "--root", str(missing), "--root", str(root), check=False)
    assert proc.returncode == 1 and proc.stdout == b""  # the root named that is not there
    lines = one_line_error(proc)
    assert any(str(missing) in ln for ln in lines)
    assert any(str(bad) in ln for ln in lines)
    assert len(lines) == 4  # one line per problem (the root's with a hint), then the summary
    assert lines[0] == f"deja: error: transcript root not found: {missing} (from --root)"
    assert lines[1].startswith("hint: ")
    assert lines[-1].startswith("indexed 1 transcript:")
    assert [s["session_id"] for s in deja_json("sessions", "--json")["sessions"]] == ["good"]


def test_unreadable_transcript_is_reported_and_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    append(transcript(root, "good"), *conversation(1))
    locked = transcript(root, "locked")
    append(locked, *conversation(1))
    locked.chmod(0)
    real_open = open

    def guarded_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        # The tests run as root here, and root reads a mode-000 file: refuse it
        # the way the kernel refuses anyone else.
        if Path(file) == locked:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    real_os_open = os.open

    def guarded_os_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if Path(file) == locked:  # the readers open transcripts with os.open (no links)
            raise PermissionError(13, "Permission denied", str(file))
        return real_os_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", guarded_open)
    monkeypatch.setattr("os.open", guarded_os_open)
    try:
        result = run_deja("index", "--root", str(root))
        assert result.exit_code == 0, result.output
        assert any(
            str(locked) in ln and "Permission denied" in ln for ln in result.output.splitlines()
        )
        conn = sqlite3.connect(str(db_path(tmp_path)))
        assert [r[0] for r in conn.execute("SELECT session_id FROM sessions")] == ["good"]
        conn.close()
    finally:
        monkeypatch.undo()
        locked.chmod(0o644)


@pytest.mark.parametrize(
    "command", [("sessions",), ("index",), ("show", "x"), ("sessions", "--json")]
)
def test_corrupt_index_is_a_one_line_error_with_a_hint(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    db = db_path(tmp_path)
    # an SQLite file damaged past its magic: deja's to rebuild
    db.write_bytes(b"SQLite format 3\x00" + b"this is not an index\x00\xff" * 400)
    proc = deja(*command, check=False)
    assert proc.returncode == 1 and proc.stdout == b""
    lines = one_line_error(proc)
    assert len(lines) == 2
    assert lines[0].startswith("deja: error:") and str(db) in lines[0]
    assert lines[1].startswith("hint:") and "deja index --rebuild" in lines[1]
    # not an SQLite file at all: not deja's, named, never offered to --rebuild
    db.write_bytes(b"this is not an index\x00\xff" * 400)
    proc = deja(*command, check=False)
    lines = one_line_error(proc)
    assert proc.returncode == 1 and "not a deja index" in lines[0] and str(db) in lines[0]
    assert "--rebuild" not in lines[1] and "--db" in lines[1]


def test_damaged_pages_in_a_real_index(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for n in range(30):
        append(transcript(root, f"s{n:02d}"), *conversation(3))
    index(root)
    db = db_path(tmp_path)
    deja("sessions")  # folds the WAL back so the pages are in the main file
    conn = sqlite3.connect(str(db))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(db.read_bytes())
    page = 4096
    assert len(data) > 4 * page
    for off in range(page, len(data), page):  # every page but the header one
        data[off : off + 64] = b"\xde\xad\xbe\xef" * 16
    db.write_bytes(bytes(data))
    for cmd in (("sessions",), ("show", "s01"), ("index", "--root", str(root))):
        proc = deja(*cmd, check=False)
        assert proc.returncode == 1, (cmd, proc.stderr)
        lines = one_line_error(proc)
        assert str(db) in lines[0] and lines[-1].startswith("hint:"), (cmd, lines)


def test_rebuild_recovers_a_corrupt_index(tmp_path: Path) -> None:
    root = tmp_path / "root"
    append(transcript(root, "s1"), *conversation(2))
    db = db_path(tmp_path)
    db.write_bytes(b"SQLite format 3\x00" + b"\x00garbage" * 100)
    report = index(root, "--rebuild")
    assert report["added"] == 1
    assert counts(db, "s1")["messages"] == 6
    assert [s["session_id"] for s in deja_json("sessions", "--json")["sessions"]] == ["s1"]


def edit_turn(i: int, path: str) -> list[dict[str, Any]]:
    """A planner row with a replace_file_content call and its diff step: 2 messages, 2 lines."""
    return [
        planner(i, f"Editing {i}.", replace_call(path, "x", "y")),
        diff_step(i + 1, path, ["    return None"], [f"    first = {i}", f"    second = {i}"]),
    ]


def index_twice_at_once(root: Path) -> list[dict[str, Any]]:
    cmd = [sys.executable, "-m", "deja_blame", "index", "--root", str(root), "--json"]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err.decode()
        assert b"locked" not in err and b"Traceback" not in err
        assert orjson.loads(out)["problems"] == []
    return [orjson.loads(out) for out, _ in outs]


def test_two_index_runs_at_once(tmp_path: Path) -> None:
    root = tmp_path / "root"
    n_sessions, turns = 200, 5
    paths = [transcript(root, f"c{n:03d}") for n in range(n_sessions)]
    for n, path in enumerate(paths):
        append(path, *conversation(turns), *edit_turn(100, f"/work/api/m{n}.py"))
    db = db_path(tmp_path)

    def check(messages: int, commands: int, lines: int) -> None:
        assert query(db, "SELECT COUNT(*), COUNT(DISTINCT session_id) FROM sessions")[0] == (
            n_sessions,
            n_sessions,
        )
        for table, expected in (("messages", messages), ("commands", commands), ("lines", lines)):
            per_session = query(
                db,
                f"SELECT COUNT({sid_of(table)}) FROM sessions s"
                f" LEFT JOIN {WRITTEN_LINES if table == 'lines' else table} t"
                f" ON {sid_of(table)} = s.sid GROUP BY s.sid",
            )
            assert {c for (c,) in per_session} == {expected}, table
        assert query(db, "SELECT MIN(n_messages), MAX(n_messages) FROM sessions")[0] == (
            messages,
            messages,
        )

    reports = index_twice_at_once(root)
    assert sum(r["added"] for r in reports) == n_sessions  # each session added by one of them
    check(messages=3 * turns + 2, commands=turns, lines=2)

    # Both resume the same grown files: each new batch lands once.
    for n, path in enumerate(paths):
        append(path, *conversation(1, start=500), *edit_turn(600, f"/work/api/m{n}.py"))
    reports = index_twice_at_once(root)
    assert sum(r["updated"] for r in reports) == n_sessions
    assert sum(r["unchanged"] for r in reports) == n_sessions
    check(messages=3 * turns + 2 + 5, commands=turns + 1, lines=4)


def test_a_file_another_run_is_reading_is_left_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run B meets a transcript that run A is half way through: B moves on, no error."""
    root = tmp_path / "root"
    append(transcript(root, "long"), *conversation(30))
    db = db_path(tmp_path)
    conn_a, conn_b = index_db.connect(db), index_db.connect(db)
    real_commit = ingest._commit
    a_commits: list[int] = []

    def interleaved(conn: Any, *args: Any, **kwargs: Any) -> Any:
        if conn is conn_b and not a_commits:
            # before B's first commit, A reads two batches of the same file (and is
            # still going: interrupted here, so it never commits the last one)
            with pytest.raises(KeyboardInterrupt):
                ingest.index_roots(conn_a, [root], batch_bytes=2_000)
        if conn is conn_a:
            if len(a_commits) == 2:
                raise KeyboardInterrupt
            a_commits.append(1)
        return real_commit(conn, *args, **kwargs)

    try:
        with monkeypatch.context() as patched:
            patched.setattr(ingest, "_commit", interleaved)
            report = ingest.index_roots(conn_b, [root], batch_bytes=2_000)
    finally:
        conn_a.close()
        conn_b.close()
    assert (report.added, report.unchanged, report.problems) == (0, 1, [])
    assert 0 < counts(db, "long")["messages"] < 90  # A's two batches, nothing from B

    assert index(root)["updated"] == 1  # the next run finishes what A left
    assert counts(db, "long")["messages"] == 90


def test_a_session_created_then_finished_by_another_run_is_added_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run A inserts a session, run B reads the rest of it, A's next batch finds its row
    moved: A counts the session as added (its insert stood), B as updated, none twice.

    The counts used to follow only the reading that finished the file, and that was a
    retry which saw an existing row: the session was added by nobody (CI, stop 10).
    """
    root = tmp_path / "root"
    append(transcript(root, "long"), *conversation(30))
    db = db_path(tmp_path)
    a_report, b_report = index_with_a_rival(db, root, monkeypatch, batch_bytes=2_000)
    assert (a_report.added, a_report.updated, a_report.unchanged) == (1, 0, 0)
    assert (b_report.added, b_report.updated, b_report.unchanged) == (0, 1, 0)
    assert a_report.problems == b_report.problems == []
    assert counts(db, "long")["messages"] == 90


# -- line fingerprints -------------------------------------------------------------------------


def test_lines_table_finds_the_session_that_added_a_line(tmp_path: Path) -> None:
    root = tmp_path / "root"
    app = "/work/api/src/app.py"
    append(
        transcript(root, "fp"),
        user(0, "Fix it."),
        planner(1, "Fixing.", replace_call(app, "x", "y")),
        diff_step(
            2, app, ["    return None"], ["    body = parse(event)", "    return respond(body)"]
        ),
    )
    append(transcript(root, "other"), *conversation(1))
    index(root)
    db = db_path(tmp_path)

    def who(path: str, line: str) -> list[str]:
        return [
            r[0]
            for r in query(
                db,
                f"SELECT DISTINCT s.session_id FROM {WRITTEN_LINES} lines JOIN paths USING (path_id)"
                " JOIN sessions s USING (sid) WHERE paths.path=? AND lines.fp=?",
                path,
                fingerprint(line),
            )
        ]

    assert who(app, "    body = parse(event)") == ["fp"]
    assert who(app, "\t\tbody  =  parse(event)") == ["fp"]  # reindented: same fingerprint
    assert fingerprint("body = parse(event)") == fingerprint("        body=parse( event )")
    assert who(app, "    return respond(body)") == ["fp"]
    assert who(app, "    return None") == []  # a removed line is not written by the session
    assert who("/work/api/src/other.py", "    body = parse(event)") == []
    assert fingerprint("body = parse(event)") != fingerprint("body = parse(events)")


def test_fingerprint_values_are_stable() -> None:
    """Stored fingerprints must not change between versions: the definition, spelled out."""
    import hashlib
    import re

    def reference(line: str) -> int:
        norm = re.sub(r"\s+", "", line).encode("utf-8", "surrogatepass")
        return int.from_bytes(hashlib.blake2b(norm, digest_size=8).digest(), "big", signed=True)

    samples = [
        "",
        "    body = parse(event)",
        "\tif x:\r",
        "a\u00a0b\u2028c\x1cd\u3000e",  # Unicode white space, as str.isspace sees it
        "caf\u00e9 = '\U0001f600'",
        "lone \ud800 surrogate",
    ]
    for line in samples:
        assert fingerprint(line) == reference(line), line
    assert fingerprint("    body = parse(event)") == 7320087452063469691


def test_reader_state_bytes_are_what_they_were() -> None:
    """A stored state is read back by every later version: its bytes are asdict's, as before."""
    from dataclasses import asdict

    from deja_blame.transcripts.reading import ReaderState

    state = ReaderState(
        started_at="2026-07-17T09:00:00Z",
        started_epoch=1.5,
        seen_steps=[1, -2, 2**62],
        planner_calls=[{"name": "write_to_file", "args": {"x": [1, None, "a\u2028"]}}],
        pending_writes={"/w/a.py": {"content": "x\n"}},
        edit_dirs={"/w": 3},
        other={"cursor": {"nested": [{"k": 1.25}]}},
        model="m",
    )
    assert state.to_bytes() == orjson.dumps(asdict(state))
    assert ReaderState.from_bytes(state.to_bytes()) == state


# -- schema ------------------------------------------------------------------------------------


def test_schema_version_is_stored(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    deja("index", "--root", str(tmp_path / "empty"))
    meta = dict(query(db_path(tmp_path), "SELECT key, value FROM meta"))
    assert meta["schema_version"] == str(index_db.SCHEMA_VERSION)
    assert "migration:0001_initial" in meta


def test_older_schema_is_migrated_on_open_keeping_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    append(transcript(root, "old"), *conversation(2))
    index(root)
    db = db_path(tmp_path)

    # A later deja, with one more migration, opens this index.
    current = index_db.SCHEMA_VERSION
    assert len(index_db.MIGRATIONS) == current
    migration = ("9999_session_labels", "ALTER TABLE sessions ADD COLUMN label TEXT")
    monkeypatch.setattr(index_db, "MIGRATIONS", [*index_db.MIGRATIONS, migration])
    monkeypatch.setattr(index_db, "SCHEMA_VERSION", current + 1)
    conn = index_db.connect(db)
    try:
        assert index_db.schema_version(conn) == current + 1
        cols = [r[1] for r in conn.execute("PRAGMA table_info(sessions)")]
        assert "label" in cols
        assert conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 6
        assert conn.execute(
            "SELECT value FROM meta WHERE key='migration:9999_session_labels'"
        ).fetchone()
    finally:
        conn.close()
    # opening it again runs nothing twice
    index_db.connect(db).close()
    assert [r[1] for r in query(db, "PRAGMA table_info(sessions)")].count("label") == 1


def test_newer_schema_is_refused_and_rebuild_recovers(tmp_path: Path) -> None:
    root = tmp_path / "root"
    append(transcript(root, "s1"), *conversation(1))
    index(root)
    db = db_path(tmp_path)
    conn = sqlite3.connect(str(db))
    conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    proc = deja("sessions", check=False)
    assert proc.returncode == 1
    lines = one_line_error(proc)
    assert "newer deja" in lines[0] and lines[1].startswith("hint:")
    assert query(db, "SELECT value FROM meta WHERE key='schema_version'")[0][0] == "99"
    assert index(root, "--rebuild")["added"] == 1
    assert deja_json("sessions", "--json")["sessions"][0]["session_id"] == "s1"


@pytest.mark.parametrize("what", ["foreign-database", "tables-without-version"])
def test_database_that_is_not_a_deja_index_is_left_alone(tmp_path: Path, what: str) -> None:
    """Version 0 with tables in it is no older deja index (none existed): refuse, touch nothing."""
    db = db_path(tmp_path)
    (tmp_path / "empty").mkdir()
    if what == "foreign-database":
        conn = sqlite3.connect(str(db))
        conn.execute("CREATE TABLE bookmarks (url TEXT)")
        conn.commit()
        conn.close()
    else:
        deja("index", "--root", str(tmp_path / "empty"))
        conn = sqlite3.connect(str(db))
        conn.execute("DELETE FROM meta WHERE key='schema_version'")
        conn.commit()
        conn.close()
    tables_before = query(db, "SELECT name FROM sqlite_master ORDER BY name")
    mode_before = query(db, "PRAGMA journal_mode")
    proc = deja("index", "--root", str(tmp_path / "empty"), check=False)
    assert proc.returncode == 1
    lines = one_line_error(proc)
    assert str(db) in lines[0] and lines[1].startswith("hint:")
    assert query(db, "SELECT name FROM sqlite_master ORDER BY name") == tables_before
    assert query(db, "PRAGMA journal_mode") == mode_before


def test_state_from_an_unknown_reader_version_is_read_again(tmp_path: Path) -> None:
    root = tmp_path / "root"
    path = transcript(root, "st")
    append(path, *conversation(1))
    index(root)
    db = db_path(tmp_path)
    conn = sqlite3.connect(str(db))
    conn.execute("UPDATE sessions SET state=?", (b'{"a_field_from_elsewhere": 1}',))
    conn.commit()
    conn.close()
    append(path, user(50, "After."))
    index(root)
    assert [m["text"] for m in show("st")["messages"] if m["role"] == "user"] == [
        "Request 0",
        "After.",
    ]
    assert counts(db, "st")["messages"] == 4


# -- output ------------------------------------------------------------------------------------


def test_index_output_off_a_terminal(tmp_path: Path) -> None:
    root = tmp_path / "root"
    append(transcript(root, "s1"), *conversation(1))
    proc = deja("index", "--root", str(root))
    assert proc.stdout == b""
    assert proc.stderr.decode().splitlines() == [
        "indexed 1 transcript: 1 session added, 0 updated, 0 unchanged; 0 malformed lines skipped"
    ]
    # read already (here by the run above; often by the refresh before an answer): said
    # so, not "indexed 1 transcript: 0 sessions added" (newcomer 15 #6)
    assert deja("index", "--root", str(root)).stderr.decode().splitlines() == [
        "nothing new: 1 transcript indexed already"
        " (deja blame and the other answers read new transcripts themselves)"
    ]
    proc = deja("index", "--root", str(root), "--json")
    assert proc.stderr == b""
    doc = orjson.loads(proc.stdout)  # exactly one JSON document
    assert doc == {
        "transcripts": 1,
        "added": 0,
        "updated": 0,
        "unchanged": 1,
        "skipped_lines": 0,
        "incomplete": 0,
        "problems": [],
        "skipped_entries": [],
        "forgotten": 0,
        "not_sessions": [],
        "left_out": 0,
        "copies": 0,
    }
    assert deja("index", "--root", str(root), "--quiet").stderr == b""


# -- long tool output stays in the transcript ----------------------------------------------


def long_output(n: int) -> str:
    return "\n".join(f"line {k}: PASS src/module_{k}.test.js ({k % 97} ms)" for k in range(n))


def test_long_tool_output_is_kept_in_the_transcript_and_read_back(tmp_path: Path) -> None:
    root = tmp_path / "root"
    path = transcript(root, "long")
    output = long_output(600)  # ~26,000 characters
    body = f"Task Description: npm test\n\tThe command exited with code 1.\nOutput:\n{output}"
    append(path, user(0, "Run the tests"), planner(1, "Running.", run_call("npm test")))
    append(path, step(2, "RUN_COMMAND", body))
    index(root)

    db = db_path(tmp_path)
    (text, src_offset, src_len, full_chars) = query(
        db, "SELECT text, src_offset, src_len, full_chars FROM messages WHERE role='t'"
    )[0]
    expected = parse_doc(path)["messages"][2]["text"]
    assert expected.endswith(output) and full_chars == len(expected)
    assert isinstance(text, str)  # an excerpt, stored as it is (nothing to decompress)
    head, tail = store.LAZY_EXCERPT["tool"]
    # only its two ends: the line saying what is left out is rebuilt when shown
    assert text == expected[:head] + expected[-tail:]
    shown_excerpt = excerpt(expected, head, tail)
    assert "kept only in the transcript" in shown_excerpt
    raw = path.read_bytes()
    assert orjson.loads(raw[src_offset : src_offset + src_len])["type"] == "RUN_COMMAND"

    # read back in full: after index, and while the file grows without a new index run
    assert show("long")["messages"][2]["text"] == expected
    append(path, *conversation(1, start=10))
    assert show("long")["messages"][2]["text"] == expected
    index(root)
    assert show("long") == parse_doc(path) | {"transcript": show("long")["transcript"]}

    # rewritten in place (not yet indexed again): the excerpt, never another line's text
    path.write_bytes(raw.replace(b"PASS", b"FAIL"))
    shown = show("long")["messages"][2]["text"]
    assert shown == shown_excerpt and "FAIL" not in shown
    # gone: the excerpt, which says where the rest was
    path.unlink()
    assert show("long")["messages"][2]["text"] == shown_excerpt


def test_an_excerpt_an_older_deja_stored_whole_is_shown_as_it_is(tmp_path: Path) -> None:
    """Rows written before the excerpt's ends were stored alone hold the whole excerpt,
    its middle line included: shown unchanged (no migration rewrites them)."""
    root = tmp_path / "root"
    path = transcript(root, "older")
    output = long_output(50)
    body = f"Task Description: npm test\n\tThe command exited with code 0.\nOutput:\n{output}"
    append(path, user(0, "Run the tests"), planner(1, "Running.", run_call("npm test")))
    append(path, step(2, "RUN_COMMAND", body))
    index(root)
    expected = parse_doc(path)["messages"][2]["text"]
    head, tail = store.LAZY_EXCERPT["tool"]
    whole = excerpt(expected, head, tail)
    conn = sqlite3.connect(str(db_path(tmp_path)))
    conn.execute("UPDATE messages SET text=? WHERE role='t'", (whole,))
    conn.commit()
    conn.close()
    path.unlink()
    assert show("older")["messages"][2]["text"] == whole


def test_an_excerpt_of_an_earlier_cut_is_rebuilt_with_that_cut(tmp_path: Path) -> None:
    """Rows written with an earlier excerpt cut (the ends of 128 characters, then of
    32, before the 16 now) are told by their length and shown with that cut's line between
    them; every cut a row may hold has a length of its own."""
    root = tmp_path / "root"
    path = transcript(root, "earlier")
    output = long_output(50)
    body = f"Task Description: npm test\n\tThe command exited with code 0.\nOutput:\n{output}"
    plan = "The plan:\n" + "\n".join(f"{k}. change module_{k}.py" for k in range(40))
    append(path, user(0, "Run the tests"), planner(1, plan, run_call("npm test")))
    append(path, step(2, "RUN_COMMAND", body))
    index(root)
    doc = parse_doc(path)
    ((stored,),) = query(db_path(tmp_path), "SELECT text FROM messages WHERE role='t'")
    assert len(stored) <= 16  # what the index keeps of a long text
    path.unlink()
    for tool_cut, agent_cut in zip(
        store.EARLIER_EXCERPTS["tool"], store.EARLIER_EXCERPTS["assistant"]
    ):
        conn = sqlite3.connect(str(db_path(tmp_path)))
        for role, (head, tail) in (("tool", tool_cut), ("assistant", agent_cut)):
            text = next(m["text"] for m in doc["messages"] if m["role"] == role)
            conn.execute(
                "UPDATE messages SET text=? WHERE role=?",
                (text[:head] + text[-tail:], role_code(role)),
            )
        conn.commit()
        conn.close()
        shown = show("earlier")["messages"]
        assert shown[1]["text"] == excerpt(plan, *agent_cut)
        assert shown[2]["text"] == excerpt(doc["messages"][2]["text"], *tool_cut)
    assert store.EARLIER_EXCERPTS == {"tool": ((8, 24), (32, 96)), "assistant": ((24, 8), (96, 32))}
    for role, cut in store.LAZY_EXCERPT.items():
        lengths = [sum(c) for c in (cut, *store.EARLIER_EXCERPTS[role])]
        assert len(set(lengths)) == len(lengths)


def test_a_long_agent_message_is_read_back_for_show_and_why(tmp_path: Path) -> None:
    root = tmp_path / "root"
    path = transcript(root, "talk")
    plan = "Here is the plan:\n" + "\n".join(f"{k}. change module_{k}.py" for k in range(80))
    append(path, user(0, "Plan the refactor"), planner(1, plan), user(2, "Go"))
    index(root)

    db = db_path(tmp_path)
    ((text, src_offset, full_chars),) = query(
        db, "SELECT text, src_offset, full_chars FROM messages WHERE role='a'"
    )
    assert full_chars == len(plan) and src_offset is not None
    head, tail = store.LAZY_EXCERPT["assistant"]
    assert text == plan[:head] + plan[-tail:]
    assert show("talk")["messages"][1]["text"] == plan
    # why reads the agent's words around an edit through the same read-back
    from deja_blame.index.queries import agent_words_around

    conn = index_db.connect(db)
    (sid,) = conn.execute("SELECT sid FROM sessions").fetchone()
    assert agent_words_around(conn, sid, 1) == [(plan, show("talk")["messages"][1]["at"])]
    path.unlink()  # gone: the excerpt stands
    assert agent_words_around(conn, sid, 1)[0][0] == excerpt(plan, head, tail)
    conn.close()


def test_an_agent_message_past_the_lazy_length_is_read_back(tmp_path: Path) -> None:
    """The agent's own words are stored whole up to 160 characters, so a message of a
    hundred characters is shown whole even once its transcript is gone (Claude Code
    deletes them after 30 days); a longer one is an excerpt and a span, read back while
    the transcript is there. Tool output of the same hundred characters is an excerpt."""
    root = tmp_path / "root"
    path = transcript(root, "mid")
    said = "I will rename the helper in utils.py and update its two callers in cli.py."
    short = "Done."
    plan = "Here is the plan:\n" + "\n".join(f"{k}. change module_{k}.py" for k in range(9))
    lazy = store.LAZY_TEXT_CHARS
    assert lazy["tool"] < len(said) <= lazy["assistant"] < len(plan)
    append(path, user(0, "Rename it"), planner(1, said), planner(2, short), planner(3, plan))
    index(root)
    rows = query(
        db_path(tmp_path),
        "SELECT text, src_offset, full_chars FROM messages WHERE role='a' ORDER BY id",
    )
    head, tail = store.LAZY_EXCERPT["assistant"]
    assert rows[0] == (said, None, None)
    assert rows[1] == (short, None, None)
    assert rows[2] == (plan[:head] + plan[-tail:], rows[2][1], len(plan)) and rows[2][1]
    assert [m["text"] for m in show("mid")["messages"][1:]] == [said, short, plan]
    path.unlink()  # gone: the words stored whole stand, and the long one's excerpt
    shown = [m["text"] for m in show("mid")["messages"][1:]]
    assert shown == [said, short, excerpt(plan, head, tail)]


def test_short_tool_output_is_stored_whole(tmp_path: Path) -> None:
    root = tmp_path / "root"
    path = transcript(root, "short")
    append(path, *conversation(2), run_step(30, None, 0))
    index(root)
    rows = query(db_path(tmp_path), "SELECT text, src_offset FROM messages WHERE role='t'")
    # the two with the command's name are longer than the lazy length, the last not
    assert [src is None for _, src in rows] == [False, False, True]
    assert rows[2] == ("The command exited with code 0.\nOutput:\nok", None)
    path.unlink()  # each shown as it was read: a short one whole, the others' excerpts
    shown = [m["text"] for m in show("short")["messages"] if m["role"] == "tool"]
    assert shown[2] == rows[2][0] and all("kept only in the transcript" in t for t in shown[:2])


def parse_doc(path: Path) -> dict[str, Any]:
    doc = deja_json("parse", str(path), "--json")
    assert isinstance(doc, dict)
    return doc


def test_rows_of_a_schema_2_index_read_as_before(tmp_path: Path) -> None:
    """Rows written before 0003: full tool text, hunks with their lines. Both still read."""
    db = db_path(tmp_path)
    conn = sqlite3.connect(str(db), isolation_level=None)
    for _name, sql in index_db.MIGRATIONS[:2]:
        for statement in sql.split(";"):
            if statement.strip():
                conn.execute(statement)
    conn.execute("INSERT INTO meta VALUES ('schema_version', '2')")
    conn.execute(
        "INSERT INTO sessions(sid, session_id, source, transcript, offset, head_hash)"
        " VALUES (1, 'old', 'antigravity', '/nowhere/transcript.jsonl', 10, 'ht:00')"
    )
    conn.executemany(
        "INSERT INTO messages VALUES (1, ?, ?, 'tool', ?, '2026-07-17T09:00:00Z')",
        [(k, k, "x" * 5000) for k in range(400)],  # 2 MB that the migration copies
    )
    hunks = [{"old_start": 3, "new_start": 3, "removed": ["a"], "added": ["b", "c"]}]
    conn.execute(
        "INSERT INTO edits VALUES (1, 0, 0, '/w/a.py', 'replace_file_content', 'agent',"
        " ?, ?, ?, NULL, 0, NULL, NULL)",
        (orjson.dumps(["a"]), orjson.dumps(["b", "c"]), orjson.dumps(hunks)),
    )
    conn.close()

    proc = deja("show", "old", "--json")
    assert "upgrading the index" in proc.stderr.decode()  # said once, before the pause
    doc = orjson.loads(proc.stdout)
    assert deja("show", "old", "--json").stderr == b""
    assert query(db, "PRAGMA freelist_count")[0][0] == 0  # the copied tables' old pages
    assert doc["messages"][0]["text"] == "x" * 5000
    assert doc["edits"][0]["hunks"] == hunks
    cols = [r[1] for r in query(db, "PRAGMA table_info(messages)")]
    assert cols[-3:] == ["src_offset", "src_len", "full_chars"]
    assert query(db, "SELECT value FROM meta WHERE key='schema_version'")[0][0] == str(
        index_db.SCHEMA_VERSION
    )


def _every_fixture_indexed(root: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    """Every Antigravity fixture's transcript copied under ``root`` and indexed: the
    index and its session ids."""
    for fixture in sorted(FIXTURES.iterdir()):
        for found in fixture.rglob("transcript*.jsonl"):
            target = transcript(root, f"{fixture.name}-{found.parent.parent.parent.name}")
            target.write_bytes(found.read_bytes())
    index(root)
    db = db_path(tmp_path)
    return db, [r[0] for r in query(db, "SELECT session_id FROM sessions ORDER BY session_id")]


def test_a_schema_6_index_upgrades_with_every_edit_as_it_was(tmp_path: Path) -> None:
    """0007 folds an edit's removed, added, witness and hunks columns into one value.
    Every fixture session indexed, its edits put back in the schema-6 columns (the
    encoding that version wrote), upgraded: ``show --json`` is what it was."""
    root = tmp_path / "root"
    db, ids = _every_fixture_indexed(root, tmp_path)
    before = {sid: show_in_process(sid) for sid in ids}  # one process, not one each
    assert sum(len(doc["edits"]) for doc in before.values()) >= 20
    assert any(e.get("witness") for doc in before.values() for e in doc["edits"])

    conn = sqlite3.connect(str(db), isolation_level=None)
    conn.execute(
        "CREATE TABLE edits_v6 (sid INTEGER NOT NULL, ord INTEGER NOT NULL,"
        " step INTEGER NOT NULL, path TEXT NOT NULL, tool TEXT NOT NULL, source TEXT NOT NULL,"
        " removed BLOB NOT NULL, added BLOB NOT NULL, hunks BLOB, witness BLOB,"
        " truncated INTEGER NOT NULL DEFAULT 0, at TEXT, at_epoch REAL, model TEXT,"
        " UNIQUE (sid, ord))"
    )
    old_rows = []
    for *head, body, truncated, at_, at_epoch, model in conn.execute(
        "SELECT sid, ord, step, path, tool, source, body, truncated, at, at_epoch, model FROM edits"
    ):
        removed, added, witness, hunks = store.load_json(body)
        old_rows.append(
            (
                *head,
                store.pack(orjson.dumps(removed)),
                store.pack(orjson.dumps(added)),
                store.pack(orjson.dumps(hunks)) if hunks else None,
                store.pack(orjson.dumps(witness)) if witness else None,
                truncated,
                at_,
                at_epoch,
                model,
            )
        )
    conn.executemany(f"INSERT INTO edits_v6 VALUES ({','.join('?' * 14)})", old_rows)
    conn.execute("DROP TABLE edits")
    conn.execute("ALTER TABLE edits_v6 RENAME TO edits")
    conn.execute("DROP TABLE note_docs")  # 0008's, after 6
    messages_as_schema_8(conn)
    lines_as_schema_9(conn)
    files_as_schema_10(conn)
    commands_as_schema_11(conn)
    conn.execute("UPDATE meta SET value='6' WHERE key='schema_version'")
    conn.close()

    proc = deja("show", ids[0], "--json")
    assert "upgrading the index" in proc.stderr.decode()
    assert orjson.loads(proc.stdout) == before[ids[0]]
    assert {sid: show_in_process(sid) for sid in ids} == before
    cols = [r[1] for r in query(db, "PRAGMA table_info(edits)")]
    assert "body" in cols and "added" not in cols


def test_first_build_skips_flushes_then_leaves_the_index_flushed(tmp_path: Path) -> None:
    """A first build runs with synchronous=OFF (nothing older to lose); the run ends
    with synchronous back to NORMAL and the WAL copied into the database."""
    root = tmp_path / "root"
    append(transcript(root, "first"), *conversation(3))
    conn = index_db.connect(db_path(tmp_path))
    try:
        seen: list[int] = []
        ingest.index_roots(
            conn,
            [root],
            progress=lambda _tf: seen.append(conn.execute("PRAGMA synchronous").fetchone()[0]),
        )
        assert seen == [0]  # OFF while the first build ran
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL again
        busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        assert busy == 0 and frames == copied
        # a later run, with sessions in the index, keeps NORMAL throughout
        append(transcript(root, "second"), *conversation(1))
        seen.clear()
        ingest.index_roots(
            conn,
            [root],
            progress=lambda _tf: seen.append(conn.execute("PRAGMA synchronous").fetchone()[0]),
        )
        assert seen == [1, 1]
    finally:
        conn.close()


OPEN_AT = """
import os, sys
from pathlib import Path
from deja_blame.index.db import connect
print("ready", flush=True)
while not os.path.exists(sys.argv[2]):  # running, not sleeping: they open together
    pass
connect(Path(sys.argv[1])).close()
"""


def test_many_processes_opening_a_new_index_at_once(tmp_path: Path) -> None:
    """Switching a new index to WAL needs an exclusive lock: of two processes that
    both hold a shared one, SQLite turns one away at once (no busy wait). Every
    one of them must still open it."""
    for trial in range(10):
        db = tmp_path / f"new{trial}.db"
        go = tmp_path / f"go{trial}"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", OPEN_AT, str(db), str(go)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(8)
        ]
        try:
            for p in procs:  # all past their imports (a fixed second was mostly waiting)
                assert p.stdout is not None and p.stdout.readline() == b"ready\n"
        finally:
            go.touch()
        errors = [p.communicate(timeout=60)[1].decode() for p in procs]
        assert [p.returncode for p in procs] == [0] * 8, [e for e in errors if e][:1]
        assert query(db, "PRAGMA journal_mode")[0][0] == "wal"


class _CreatedMidway:
    """A connection on which another process creates the index right after the
    first read: the moment between "no schema version" and "tables exist"."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn, self.path, self.done = conn, path, False

    def execute(self, sql: str, *args: Any) -> Any:
        cur = self.conn.execute(sql, *args)
        if sql.lstrip().startswith("SELECT") and not self.done:
            self.done = True
            index_db.connect(self.path).close()  # "another process" creates it now
        return cur

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


def test_an_index_created_between_two_reads_is_not_called_foreign(tmp_path: Path) -> None:
    """CI, once in six runs of the concurrency tests: a second `deja index` read "no
    schema version", the first committed its new schema, and the second's next read
    saw tables: "is not a deja index". Both reads now see one snapshot."""
    db = tmp_path / "new.db"
    conn = sqlite3.connect(str(db), isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")  # as the first process has just made it
    racing = _CreatedMidway(conn, db)
    try:
        index_db._refuse_foreign(racing, db)  # type: ignore[arg-type]
    finally:
        conn.close()
    assert racing.done
    assert index_db.schema_version(sqlite3.connect(str(db))) == index_db.SCHEMA_VERSION


def test_locked_index_error_names_the_cause_not_a_wait() -> None:
    err = index_db.database_error(
        Path("/x/index.db"), sqlite3.OperationalError("database is locked")
    )
    assert (
        str(err)
        == "the index /x/index.db is locked by another process (deja waits up to 30 s for it)"
    )
    assert err.hint and "again" in err.hint


def test_fingerprints_of_many_lines_are_each_line_s_fingerprint() -> None:
    from deja_blame.index import fingerprint as fp_module

    lines = ["", "}", "    return x", "return  x", "\t}", "é = 1", "\ud800 lone", ""] * 3
    assert fp_module.fingerprints(lines) == [fingerprint(x) for x in lines]
    fp_module._SEEN.clear()
    assert fp_module.fingerprints(lines[:3]) == [fingerprint(x) for x in lines[:3]]


def test_the_walk_of_a_root_skips_what_is_not_a_transcript(tmp_path: Path) -> None:
    """A session directory whose logs path is a file, a transcript_full.jsonl that is a
    directory, a FIFO: none stops the walk; the directory is a problem, the FIFO is
    passed over unopened and counted, the rest read."""
    from deja_blame.transcripts.antigravity.discover import find_transcripts
    from deja_blame.transcripts.files import Skipped

    root = tmp_path / "root"
    append(transcript(root, "fine"), *conversation(1))
    (root / "brain" / "file-not-dir").mkdir(parents=True)
    (root / "brain" / "file-not-dir" / ".system_generated").write_text("not a directory")
    append(transcript(root, "dir-full"), *conversation(1))
    transcript(root, "dir-full", "transcript_full.jsonl").mkdir()
    os.mkfifo(transcript(root, "fifo"))
    problems: list[str] = []
    skipped = Skipped()
    found = {tf.session_id: tf.path.name for tf in find_transcripts(root, problems, skipped)}
    assert found == {"fine": "transcript.jsonl", "dir-full": "transcript.jsonl"}
    assert [p.split(": ")[0] for p in problems] == ["not a regular file, skipped"]
    assert skipped.to_json() == [
        {"root": str(root), "links": 0, "special": 1, "paths": [str(transcript(root, "fifo"))]}
    ]
    assert index(root)["added"] == 2


# -- times kept as seconds -------------------------------------------------------------------


def test_a_messages_canonical_time_is_stored_as_seconds_and_read_back_as_the_same_text(
    tmp_path: Path,
) -> None:
    """A message's ``at`` in the canonical UTC form is an integer in its row and the same
    text in show and in why's queries; a time in another form (fractions) is kept as
    it is, and a row an older deja wrote with the text reads the same."""
    root = tmp_path / "root"
    path = transcript(root, "times")
    odd = planner(4, "Editing.", replace_call("/work/api/app.py", "a", "b"))
    odd["created_at"] = "2026-07-17T09:00:04.250Z"
    append(path, *conversation(1), odd, diff_step(5, "/work/api/app.py", ["a"], ["b"]))
    index(root)
    db = db_path(tmp_path)
    stored = query(db, "SELECT typeof(at), at FROM messages ORDER BY id")
    assert [kind for kind, _ in stored] == ["integer"] * 3 + ["text", "integer"]
    assert stored[0][1] == 1784278800  # 2026-07-17T09:00:00Z
    assert stored[3][1] == odd["created_at"]
    expected = parse_doc(path)
    assert show("times") == expected | {"transcript": show("times")["transcript"]}
    assert [m["at"] for m in expected["messages"]][:3] == [at(0), at(1), at(2)]

    from deja_blame.index.queries import agent_words_around, last_request_before

    conn = index_db.connect(db)
    (sid,) = conn.execute("SELECT sid FROM sessions").fetchone()
    assert last_request_before(conn, sid, 3) == ("Request 0", at(0))
    assert agent_words_around(conn, sid, 1)[0] == ("Running check 0.", at(1))
    # a row an older deja wrote holds the text itself
    conn.execute("UPDATE messages SET at=? WHERE id=(SELECT min(id) FROM messages)", (at(0),))
    conn.close()
    assert show("times")["messages"][0]["at"] == at(0)


def test_deja_index_compacts_a_first_build_and_an_answers_refresh_does_not(
    tmp_path: Path,
) -> None:
    """A first build by ``deja index`` is rewritten once with its pages full (the line
    fingerprints arrive in no key order and split pages as they fill): fewer pages,
    the same rows. A refresh before an answer, and a later run, write no more."""
    root = tmp_path / "root"
    for k in range(6):
        lines = "\n".join(f"value_{k}_{n} = compute({n * 7919 % 1009}, '{k}')" for n in range(2500))
        append(
            transcript(root, f"s{k}"),
            user(0, f"Write module {k}"),
            planner(1, "Writing.", write_call(f"/work/api/m{k}.py", lines + "\n")),
            created_step(2, f"/work/api/m{k}.py"),
        )
    built: dict[bool, tuple[int, list[tuple[Any, ...]]]] = {}
    for compact in (False, True):
        conn = index_db.connect(tmp_path / f"{compact}.db")
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        ingest.index_roots(conn, [root], jobs=1, compact=compact)
        assert ("VACUUM" in statements) is compact
        rows = conn.execute(f"SELECT * FROM {WRITTEN_LINES} ORDER BY 1, 2, 3, 4, 5").fetchall()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        built[compact] = (conn.execute("PRAGMA page_count").fetchone()[0], rows)
        statements.clear()
        append(transcript(root, "s0"), user(3, "And one more thing"))
        ingest.index_roots(conn, [root], jobs=1, compact=compact)
        assert "VACUUM" not in statements  # not a first build
        conn.close()
    assert len(built[True][1]) == 6 * 2500 and built[True][1] == built[False][1]
    assert built[True][0] < built[False][0]


def messages_as_schema_8(conn: sqlite3.Connection) -> None:
    """The messages table put back as schemas 3 to 8 kept it: (sid, ord) columns, UNIQUE."""
    conn.execute(
        "CREATE TABLE messages_v9 (sid INTEGER NOT NULL, ord INTEGER NOT NULL,"
        " step INTEGER NOT NULL, role TEXT NOT NULL, text TEXT NOT NULL, at TEXT,"
        " src_offset INTEGER, src_len INTEGER, full_chars INTEGER, UNIQUE (sid, ord))"
    )
    conn.execute(
        "INSERT INTO messages_v9 SELECT id >> 32, id & 4294967295, step, role, text,"
        # the text an older deja wrote where this one keeps the seconds
        " CASE typeof(at) WHEN 'integer' THEN strftime('%Y-%m-%dT%H:%M:%SZ', at, 'unixepoch')"
        " ELSE at END, src_offset, src_len, full_chars FROM messages"
    )
    conn.execute("DROP TABLE messages")
    conn.execute("ALTER TABLE messages_v9 RENAME TO messages")


def lines_as_schema_14(conn: sqlite3.Connection) -> None:
    """The lines table put back as schemas 10 to 14 kept it: a row per edit and added
    line, no edit shapes (0015's)."""
    conn.execute(
        "CREATE TABLE lines_v13 (path_id INTEGER NOT NULL, fp INTEGER NOT NULL,"
        " sid INTEGER NOT NULL, edit_ord INTEGER NOT NULL, idx INTEGER NOT NULL,"
        " PRIMARY KEY (path_id, fp, sid, edit_ord, idx)) WITHOUT ROWID"
    )
    conn.execute(
        f"INSERT INTO lines_v13 SELECT path_id, fp, sid, edit_ord, idx FROM {WRITTEN_LINES}"
    )
    conn.execute("DROP TABLE shape_lines")
    conn.execute("DROP TABLE shapes")
    conn.execute("DROP INDEX edit_times_shape")
    conn.execute("ALTER TABLE edit_times DROP COLUMN shape")
    conn.execute("ALTER TABLE lines_v13 RENAME TO lines")


def lines_as_schema_9(conn: sqlite3.Connection) -> None:
    """The lines table put back as schemas 3 to 9 kept it: each row with its edit's
    at_epoch and by_user, no edit_times table."""
    lines_as_schema_14(conn)
    conn.execute(
        "CREATE TABLE lines_v9 (path_id INTEGER NOT NULL, fp INTEGER NOT NULL,"
        " sid INTEGER NOT NULL, edit_ord INTEGER NOT NULL, idx INTEGER NOT NULL,"
        " at_epoch REAL, by_user INTEGER NOT NULL DEFAULT 0,"
        " PRIMARY KEY (path_id, fp, sid, edit_ord, idx)) WITHOUT ROWID"
    )
    conn.execute(
        "INSERT INTO lines_v9 SELECT l.path_id, l.fp, l.sid, l.edit_ord, l.idx, t.at_epoch,"
        " t.by_user FROM lines l JOIN edit_times t ON t.sid = l.sid AND t.ord = l.edit_ord"
    )
    conn.execute("DROP TABLE lines")
    conn.execute("DROP TABLE edit_times")
    conn.execute("ALTER TABLE lines_v9 RENAME TO lines")


def files_as_schema_10(conn: sqlite3.Connection) -> None:
    """The files table put back as schemas 1 to 10 kept it: ``at`` a TEXT column, every
    time the text it was read as."""
    from deja_blame.index.times import shown_time

    conn.create_function("shown", 1, shown_time, deterministic=True)
    conn.execute(
        "CREATE TABLE files_v10 (sid INTEGER NOT NULL, ord INTEGER NOT NULL,"
        " step INTEGER NOT NULL, path TEXT NOT NULL, action TEXT NOT NULL, at TEXT,"
        " PRIMARY KEY (sid, ord)) WITHOUT ROWID"
    )
    conn.execute("INSERT INTO files_v10 SELECT sid, ord, step, path, action, shown(at) FROM files")
    conn.execute("DROP TABLE files")
    conn.execute("ALTER TABLE files_v10 RENAME TO files")


def commands_as_schema_11(conn: sqlite3.Connection) -> None:
    """The commands table put back as schemas 1 to 11 kept it: ``at`` a TEXT column."""
    from deja_blame.index.times import shown_time

    conn.create_function("shown", 1, shown_time, deterministic=True)
    conn.execute(
        "CREATE TABLE commands_v11 (sid INTEGER NOT NULL, ord INTEGER NOT NULL,"
        " step INTEGER NOT NULL, command TEXT NOT NULL, cwd TEXT, exit_code INTEGER,"
        " status TEXT, at TEXT, PRIMARY KEY (sid, ord)) WITHOUT ROWID"
    )
    conn.execute(
        "INSERT INTO commands_v11 SELECT sid, ord, step, command, cwd, exit_code, status,"
        " shown(at) FROM commands"
    )
    conn.execute("DROP TABLE commands")
    conn.execute("ALTER TABLE commands_v11 RENAME TO commands")


def test_a_schema_11_index_upgrades_with_every_command_as_it_was(tmp_path: Path) -> None:
    """0012 keeps a command's canonical time as its seconds. Every fixture session
    indexed, one command's time made another form, the commands put back as schema 11
    kept them, upgraded: show and why's queries give each command the time text it had,
    the canonical ones are integers and the other form is the text it was."""
    from deja_blame.index.queries import commands_from, commands_mentioning, commands_of

    root = tmp_path / "root"
    db, ids = _every_fixture_indexed(root, tmp_path)
    shown = {sid: show_in_process(sid) for sid in ids}
    conn = sqlite3.connect(str(db), isolation_level=None)
    odd = "2026-07-17T09:00:00.250+02:00"
    conn.execute(
        "UPDATE commands SET at=? WHERE (sid, ord) = (SELECT sid, ord FROM commands LIMIT 1)",
        (odd,),
    )
    commands_as_schema_11(conn)
    lines_as_schema_14(conn)
    conn.execute("UPDATE meta SET value='11' WHERE key='schema_version'")
    conn.close()
    times = (
        "SELECT s.session_id, c.at FROM commands c JOIN sessions s USING (sid)"
        " ORDER BY s.session_id, c.step, c.ord"
    )
    as_11 = query(db, times)
    assert len(as_11) >= 10 and all(isinstance(at, str) for _, at in as_11)
    assert sum(at == odd for _, at in as_11) == 1
    sids = dict(query(db, "SELECT session_id, sid FROM sessions"))

    proc = deja("show", ids[0], "--json")
    assert "upgrading the index" in proc.stderr.decode()
    upgraded = {sid: show_in_process(sid) for sid in ids}
    assert [(sid, c["at"]) for sid in sorted(ids) for c in upgraded[sid]["commands"]] == as_11
    assert dict(query(db, "SELECT typeof(at), count(*) FROM commands GROUP BY 1")) == {
        "integer": len(as_11) - 1,
        "text": 1,
    }
    conn = index_db.connect(db)
    try:
        for session_id in sorted(ids):
            want = [at for sid, at in as_11 if sid == session_id]
            assert [c[2] for c in commands_of(conn, sids[session_id])] == want
            assert [c[2] for c in commands_from(conn, sids[session_id], -1, 10_000)] == want
        named = commands_mentioning(conn, "")
        assert named and {at for _, _, _, at in named} <= {at for _, at in as_11}
    finally:
        conn.close()
    for doc in (*shown.values(), *upgraded.values()):  # all else as it was
        for c in doc["commands"]:
            c.pop("at")
    assert upgraded == shown


def test_a_schema_10_index_upgrades_with_every_file_record_as_it_was(tmp_path: Path) -> None:
    """0011 keeps a file record's canonical time as its seconds. Every fixture session
    indexed, one file record's time made another form, the files put back as schema 10
    kept them, upgraded: every file record shows the time text it had, the canonical
    ones are integers and the other form is the text it was."""
    root = tmp_path / "root"
    db, ids = _every_fixture_indexed(root, tmp_path)
    shown = {sid: show_in_process(sid) for sid in ids}
    conn = sqlite3.connect(str(db), isolation_level=None)
    odd = "2026-07-17T09:00:00.250+02:00"
    conn.execute(
        "UPDATE files SET at=? WHERE (sid, ord) = (SELECT sid, ord FROM files LIMIT 1)", (odd,)
    )
    files_as_schema_10(conn)
    commands_as_schema_11(conn)
    lines_as_schema_14(conn)
    conn.execute("UPDATE meta SET value='10' WHERE key='schema_version'")
    conn.close()
    times = "SELECT s.session_id, f.at FROM files f JOIN sessions s USING (sid) ORDER BY f.sid, f.step, f.ord"
    as_10 = query(db, times)
    assert len(as_10) >= 20 and all(isinstance(at, str) for _, at in as_10)
    assert sum(at == odd for _, at in as_10) == 1

    proc = deja("show", ids[0], "--json")
    assert "upgrading the index" in proc.stderr.decode()
    upgraded = {sid: show_in_process(sid) for sid in ids}
    assert [(sid, f["at"]) for sid in sorted(ids) for f in upgraded[sid]["files"]] == sorted(
        as_10, key=lambda r: r[0]
    )
    assert dict(query(db, "SELECT typeof(at), count(*) FROM files GROUP BY 1")) == {
        "integer": len(as_10) - 1,
        "text": 1,
    }
    # all else as it was before the files were put back
    for doc in (*shown.values(), *upgraded.values()):
        for f in doc["files"]:
            f.pop("at")
    assert upgraded == shown


WRITES = (
    "SELECT s.session_id, p.path, l.fp, l.edit_ord, l.idx, l.at_epoch, l.by_user"
    f" FROM {WRITTEN_LINES} l"
    " JOIN sessions s ON s.sid = l.sid JOIN paths p USING (path_id) ORDER BY 1, 2, 3, 4, 5"
)


def test_a_schema_9_index_upgrades_with_every_write_as_it_was(tmp_path: Path) -> None:
    """0010 keeps an edit's time and author once (edit_times) instead of on each of its
    lines' rows. Every fixture session indexed, its lines put back as schema 9 kept
    them, upgraded: every write reads as it did, and a session read again replaces
    its edits' times."""
    root = tmp_path / "root"
    db, ids = _every_fixture_indexed(root, tmp_path)
    before = query(db, WRITES)
    assert len(before) >= 20 and {r[6] for r in before} == {0, 1}  # agent and person
    assert any(r[5] is not None for r in before)
    shown = {sid: show_in_process(sid) for sid in ids}
    conn = sqlite3.connect(str(db), isolation_level=None)
    lines_as_schema_9(conn)
    files_as_schema_10(conn)
    commands_as_schema_11(conn)
    conn.execute("UPDATE meta SET value='9' WHERE key='schema_version'")
    conn.close()

    proc = deja("show", ids[0], "--json")
    assert "upgrading the index" in proc.stderr.decode()
    assert query(db, WRITES) == before
    assert {sid: show_in_process(sid) for sid in ids} == shown
    assert [r[1] for r in query(db, "PRAGMA table_info(shape_lines)")] == [
        "path_id",
        "fp",
        "shape",
        "idx",
    ]
    # read from scratch (the file rewritten): its edits' times go and come back
    ((sid, transcript_path),) = query(
        db,
        "SELECT s.sid, s.transcript FROM sessions s JOIN edit_times t ON t.sid = s.sid"
        " GROUP BY s.sid ORDER BY count(*) DESC LIMIT 1",
    )
    path = Path(transcript_path)
    data = path.read_bytes()
    path.write_bytes(b"")
    index(root)
    assert query(db, "SELECT count(*) FROM edit_times WHERE sid=?", sid) == [(0,)]
    path.write_bytes(data)
    index(root)
    assert query(db, WRITES) == before


def test_a_schema_14_index_upgrades_with_every_write_as_it_was(tmp_path: Path) -> None:
    """0015 keeps identical edits' lines once (the edits' shapes). Every fixture session
    indexed, its lines put back as schema 14 kept them, upgraded: every write reads as
    it did, through the lines view, and each edit names a shape of its own lines."""
    root = tmp_path / "root"
    db, ids = _every_fixture_indexed(root, tmp_path)
    before = query(db, WRITES)
    assert len(before) >= 20
    shown = {sid: show_in_process(sid) for sid in ids}
    conn = sqlite3.connect(str(db), isolation_level=None)
    lines_as_schema_14(conn)
    conn.execute("UPDATE meta SET value='14' WHERE key='schema_version'")
    conn.close()

    proc = deja("show", ids[0], "--json")
    assert "upgrading the index" in proc.stderr.decode()
    assert query(db, WRITES) == before
    assert {sid: show_in_process(sid) for sid in ids} == shown
    assert not query(db, "SELECT 1 FROM sqlite_schema WHERE name='lines'")
    assert query(db, "SELECT count(*) FROM edit_times WHERE shape IS NULL") == [(0,)]
    shaped = query(db, "SELECT count(*) FROM shape_lines")[0][0]
    assert 0 < shaped <= len(before)


def test_a_schema_8_index_upgrades_with_every_message_as_it_was(tmp_path: Path) -> None:
    """0009 keys a message by its rowid (the sid and the ordinal in one integer) instead
    of a (sid, ord) index beside the table. Every fixture session indexed, its messages
    put back in the schema-8 table, upgraded: show, why's queries and the first prompt
    are what they were, and a session read again replaces its messages."""
    root = tmp_path / "root"
    db, ids = _every_fixture_indexed(root, tmp_path)
    before = {sid: show_in_process(sid) for sid in ids}
    assert sum(len(doc["messages"]) for doc in before.values()) >= 50
    listed = deja_json("sessions", "--json")
    conn = sqlite3.connect(str(db), isolation_level=None)
    messages_as_schema_8(conn)
    lines_as_schema_9(conn)
    files_as_schema_10(conn)
    commands_as_schema_11(conn)
    conn.execute("UPDATE meta SET value='8' WHERE key='schema_version'")
    conn.close()

    proc = deja("show", ids[0], "--json")
    assert "upgrading the index" in proc.stderr.decode()
    assert {sid: show_in_process(sid) for sid in ids} == before
    assert deja_json("sessions", "--json") == listed
    assert [r[1] for r in query(db, "PRAGMA table_info(messages)")][:2] == ["id", "step"]
    assert not query(
        db, "SELECT name FROM sqlite_schema WHERE tbl_name='messages' AND type='index'"
    )

    from deja_blame.index.queries import last_request_before, requests_of

    conn = index_db.connect(db)
    for session_id, doc in before.items():
        (sid,) = conn.execute(
            "SELECT sid FROM sessions WHERE session_id=?", (session_id,)
        ).fetchone()
        users = [m["text"] for m in doc["messages"] if m["role"] == "user"]
        assert [text for _, text in requests_of(conn, sid)] == users
        last = last_request_before(conn, sid, 1 << 62)
        assert (last[0] if last else None) == (users[-1] if users else None)
    conn.close()
    # read from scratch (the file rewritten): the old rows go, the new ones come
    path = next(root.rglob("transcript*.jsonl"))
    session_id = path.parent.parent.parent.name
    data = path.read_bytes()
    path.write_bytes(b"")
    index(root)
    path.write_bytes(data)
    index(root)
    assert show_in_process(session_id) == before[session_id]


def test_a_schema_12_index_upgrades_with_every_message_as_it_was(tmp_path: Path) -> None:
    """0013 keeps a message's role as a letter. Every fixture session indexed, the roles
    put back as schema 12 named them (and one whole row given a role no reader gives),
    upgraded: show, why's requests and the agent's words are what they were, the three
    roles are letters and the other keeps its name."""
    from deja_blame.index.queries import agent_words_around, last_request_before, requests_of

    root = tmp_path / "root"
    db, ids = _every_fixture_indexed(root, tmp_path)
    sids = dict(query(db, "SELECT session_id, sid FROM sessions"))

    def why_reads() -> list[Any]:
        conn = index_db.connect(db)
        try:
            return [
                (
                    requests_of(conn, sids[s]),
                    last_request_before(conn, sids[s], 10**6),
                    agent_words_around(conn, sids[s], 3),
                )
                for s in ids
            ]
        finally:
            conn.close()

    shown = {sid: show_in_process(sid) for sid in ids}
    reads = why_reads()
    assert any(r[0] for r in reads) and any(r[2] for r in reads)
    conn = sqlite3.connect(str(db), isolation_level=None)
    conn.execute(
        "UPDATE messages SET role = CASE role WHEN 'u' THEN 'user' WHEN 'a' THEN 'assistant'"
        " WHEN 't' THEN 'tool' END"
    )
    (odd_id,) = conn.execute(
        "SELECT max(id) FROM messages WHERE role='tool' AND src_offset IS NULL"
    ).fetchone()
    conn.execute("UPDATE messages SET role='system' WHERE id=?", (odd_id,))
    lines_as_schema_14(conn)
    conn.execute("UPDATE meta SET value='12' WHERE key='schema_version'")
    conn.close()
    named = dict(query(db, "SELECT role, count(*) FROM messages GROUP BY role"))
    assert set(named) == {"user", "assistant", "tool", "system"} and named["system"] == 1

    proc = deja("show", ids[0], "--json")
    assert "upgrading the index" in proc.stderr.decode()
    assert dict(query(db, "SELECT role, count(*) FROM messages GROUP BY role")) == {
        "u": named["user"],
        "a": named["assistant"],
        "t": named["tool"],
        "system": 1,
    }
    assert why_reads() == reads
    upgraded = {sid: show_in_process(sid) for sid in ids}
    odd = [
        (sid, k)
        for sid in ids
        for k, m in enumerate(upgraded[sid]["messages"])
        if m["role"] == "system"
    ]
    assert len(odd) == 1
    sid, k = odd[0]
    upgraded[sid]["messages"][k]["role"] = "tool"
    assert upgraded == shown
