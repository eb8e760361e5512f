"""Indexing with worker processes gives exactly the index one process gives.

``deja index`` reads transcripts in worker processes (spawned, as on every
platform) once there is enough to read; the one process that writes commits
the same batches, with the same offsets and reader state. These tests compare
the two row for row on realistic sessions (long tool output, edits, malformed
lines, a session read in several tasks), then check growth after a parallel
run, the command line, and what happens when the workers die.
"""

from __future__ import annotations

import io
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import orjson
import pytest
from antigravity_writer import TranscriptWriter
from conftest import deja_json
from test_index import commit_failing_at_the_fourth

from deja_blame.index import ingest
from deja_blame.index.db import connect
from deja_blame.index.queries import LINES as WRITTEN_LINES
from deja_blame.index.store import load_session
from deja_blame.transcripts.antigravity.reader import parse_transcript

T0 = 1_784_278_800


def build_root(root: Path, sessions: int = 6, turns: int = 12, seed: int = 5) -> list[Path]:
    rnd = random.Random(seed)
    paths = []
    for n in range(sessions):
        ws = f"/work/proj{n % 3}"
        w = TranscriptWriter(root, f"sess-{n:02d}", start=T0 + n * 3600, workspace=ws)
        for t in range(turns):
            path = f"{ws}/src/m{t % 4}.py"
            w.user(f"session {n} turn {t}: fix {path}")
            known = w.files.get(path)
            if known and rnd.random() < 0.5:
                first = known.splitlines(keepends=True)[0]
                w.replace(path, first, f"# revised {n}.{t}\n" + first)
            else:
                body = "".join(f"def f_{n}_{t}_{k}(x):\n    return x + {k}\n" for k in range(8))
                w.write_file(path, body, overwrite=bool(known))
            # long output: kept in the transcript, read back by span
            w.run_command(
                "pytest -q", exit_code=rnd.choice([0, 1]), output="F." * rnd.randint(10, 2000)
            )
            if t % 5 == 4:
                with open(w.path, "ab") as fh:
                    fh.write(b'{"source": "MODEL", "content": 3}\n{not json\n')
        paths.append(w.path)
    return paths


def index_with(db: Path, root: Path, jobs: int, **kwargs: Any) -> ingest.IndexReport:
    conn = connect(db)
    try:
        return ingest.index_roots(conn, [root], jobs=jobs, **kwargs)
    finally:
        conn.close()


SESSION_COLS = (
    "session_id, transcript, project, started_at, ended_at, skipped_lines, first_prompt,"
    " n_messages, n_commands, n_edits, size, mtime_ns, inode, offset, head_hash, state"
)
LINES = (
    "SELECT s.session_id, p.path, l.fp, l.edit_ord, l.idx, l.at_epoch, l.by_user"
    f" FROM {WRITTEN_LINES} l"
    " JOIN sessions s ON s.sid = l.sid JOIN paths p USING (path_id) ORDER BY 1, 2, 3, 4, 5"
)
MESSAGES = (
    "SELECT s.session_id, m.id - (s.sid << 32), m.step, m.role, m.text, m.src_offset, m.src_len,"
    " m.full_chars FROM messages m JOIN sessions s ON s.sid = m.id >> 32 ORDER BY 1, 2"
)


def snapshot(db: Path) -> dict[str, Any]:
    conn = sqlite3.connect(str(db))
    try:
        ids = [r[0] for r in conn.execute("SELECT session_id FROM sessions ORDER BY 1")]
        return {
            "sessions": conn.execute(f"SELECT {SESSION_COLS} FROM sessions ORDER BY 1").fetchall(),
            "lines": conn.execute(LINES).fetchall(),
            "messages": conn.execute(MESSAGES).fetchall(),
            "loaded": {i: load_session(conn, i).to_json() for i in ids},
        }
    finally:
        conn.close()


def test_workers_write_the_index_one_process_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    transcripts = build_root(root)
    # small batches and tasks: every session is read in several tasks, one after another
    monkeypatch.setattr(ingest, "TASK_BYTES", 20_000)
    one = index_with(tmp_path / "one.db", root, jobs=1, batch_bytes=8_000)
    many = index_with(tmp_path / "many.db", root, jobs=2, batch_bytes=8_000)
    assert one.to_json() == many.to_json()
    assert many.added == 6 and many.skipped_lines == one.skipped_lines > 0
    a, b = snapshot(tmp_path / "one.db"), snapshot(tmp_path / "many.db")
    assert a == b
    assert any(row[5] is not None for row in b["messages"])  # long output left in place
    for path in transcripts:
        parsed = parse_transcript(path).to_json()
        assert b["loaded"][parsed["session_id"]] == parsed | {"transcript": str(path)}


def transactions_adding_sessions(statements: list[str]) -> list[int]:
    """How many sessions each committed transaction of ``statements`` inserted."""
    out: list[int] = []
    for statement in statements:
        if statement == "BEGIN IMMEDIATE":
            added = 0
        elif statement.startswith("INSERT INTO sessions("):
            added += 1
        elif statement == "COMMIT" and added:
            out.append(added)
    return out


def test_workers_small_transcripts_are_written_in_one_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As in one process: small transcripts' batches commit together, up to
    GROUP_BYTES of transcript a transaction (a transaction each wrote every page
    it touched to the WAL again), and the index is the one-process one."""
    root = tmp_path / "root"
    build_root(root, sessions=6, turns=4)
    one = index_with(tmp_path / "one.db", root, jobs=1)
    conn = connect(tmp_path / "many.db")
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        many = ingest.index_roots(conn, [root], jobs=2)
    finally:
        conn.close()
    assert many.added == 6 and one.to_json() == many.to_json()
    assert transactions_adding_sessions(statements) == [6]
    assert snapshot(tmp_path / "one.db") == snapshot(tmp_path / "many.db")

    # at GROUP_BYTES (here less than a transcript) each transcript commits alone
    monkeypatch.setattr(ingest, "GROUP_BYTES", 1)
    conn = connect(tmp_path / "each.db")
    statements.clear()
    conn.set_trace_callback(statements.append)
    try:
        ingest.index_roots(conn, [root], jobs=2)
    finally:
        conn.close()
    assert transactions_adding_sessions(statements) == [1] * 6
    assert snapshot(tmp_path / "each.db") == snapshot(tmp_path / "one.db")


def test_workers_a_failed_write_rolls_back_its_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error while writing ends the run and rolls back the group it came in
    (here the six small transcripts are one group): the connection is left with
    no transaction open and none of the group's rows, and the next run reads them."""
    root = tmp_path / "root"
    build_root(root, sessions=6, turns=4)
    failing_at_the_fourth, commits = commit_failing_at_the_fourth()
    db = tmp_path / "index.db"
    conn = connect(db)
    try:
        with monkeypatch.context() as patched:
            patched.setattr(ingest, "_commit", failing_at_the_fourth)
            with pytest.raises(sqlite3.OperationalError):
                ingest.index_roots(conn, [root], jobs=2)
        assert len(commits) == 3
        assert not conn.in_transaction
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0
        report = ingest.index_roots(conn, [root], jobs=2)
    finally:
        conn.close()
    assert report.added == 6
    one = tmp_path / "one.db"
    index_with(one, root, jobs=1)
    assert snapshot(db) == snapshot(one)


def test_growth_after_a_run_with_workers(tmp_path: Path) -> None:
    root = tmp_path / "root"
    transcripts = build_root(root, sessions=4, turns=6)
    db = tmp_path / "index.db"
    index_with(db, root, jobs=2)
    rnd = random.Random(9)
    for n, path in enumerate(transcripts[:3]):
        w = TranscriptWriter(root, path.parents[2].name, start=T0 + 90_000 + n)
        w.step_index = 10_000
        w.user("one more thing")
        w.run_command("make", exit_code=0, output="ok " * rnd.randint(1, 900))
    report = index_with(db, root, jobs=2)
    assert (report.added, report.updated, report.unchanged) == (0, 3, 1)
    loaded = snapshot(db)["loaded"]
    for path in transcripts:
        parsed = parse_transcript(path).to_json()
        assert loaded[parsed["session_id"]] == parsed | {"transcript": str(path)}


def test_a_transcript_moved_between_its_tasks_is_read_again_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another run indexes everything while this one is between two tasks of a
    transcript (the next task already reading in a worker): that task's result is
    dropped, the transcript is read again in this process, nothing is counted twice."""
    root = tmp_path / "root"
    build_root(root, sessions=4, turns=12)
    clean = tmp_path / "clean.db"
    index_with(clean, root, jobs=1)
    monkeypatch.setattr(ingest, "TASK_BYTES", 20_000)  # every transcript: several tasks
    # each task commits alone, and the other run goes right after the first commit
    # (while a group is open it would wait for the write lock)
    monkeypatch.setattr(ingest, "GROUP_BYTES", 1)
    db = tmp_path / "index.db"
    conn_a, conn_b = connect(db), connect(db)
    real_commit_group = ingest._WorkerRun._commit_group
    b_reports: list[ingest.IndexReport] = []

    def interleaved(run: Any) -> None:
        real_commit_group(run)
        if not b_reports:
            b_reports.append(ingest.index_roots(conn_b, [root], jobs=1))

    monkeypatch.setattr(ingest._WorkerRun, "_commit_group", interleaved)
    try:
        a_report = ingest.index_roots(conn_a, [root], jobs=2, batch_bytes=8_000)
    finally:
        conn_a.close()
        conn_b.close()
    (b_report,) = b_reports
    assert a_report.problems == b_report.problems == []
    # A inserted the first session, B the rest; A found them all current when it read
    # them again, and each transcript is counted once
    assert (a_report.added, a_report.updated, a_report.unchanged) == (1, 0, 3)
    assert (b_report.added, b_report.updated) == (3, 1)
    assert snapshot(db) == snapshot(clean)


def test_workers_start_with_the_largest_transcript(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big transcript is read in tasks one after another: started last, it would
    keep one worker busy alone at the end of the run."""
    root = tmp_path / "root"
    transcripts = build_root(root, sessions=5, turns=3)
    big = TranscriptWriter(root, "sess-99", start=T0)
    for t in range(40):
        big.user(f"turn {t}")
        big.run_command("make", exit_code=0, output="ok " * 400)
    submitted: list[str] = []
    real_submit = ingest._WorkerRun._submit

    def spy(self: Any, pool: Any, tf: Any, *args: Any) -> None:
        if tf.session_id not in submitted:
            submitted.append(tf.session_id)
        real_submit(self, pool, tf, *args)

    monkeypatch.setattr(ingest._WorkerRun, "_submit", spy)
    report = index_with(tmp_path / "index.db", root, jobs=2)
    assert report.added == 6 and report.problems == []
    sizes = {p.parents[2].name: p.stat().st_size for p in [*transcripts, big.path]}
    assert submitted == sorted(sizes, key=lambda sid: -sizes[sid])
    assert submitted[0] == "sess-99"


def test_index_jobs_option(tmp_path: Path) -> None:
    root = tmp_path / "root"
    build_root(root, sessions=3, turns=4)
    report = deja_json("index", "--root", str(root), "--jobs", "2", "--json")
    assert report["added"] == 3 and report["problems"] == []
    shown = deja_json("show", "sess-01", "--json")
    assert shown == parse_transcript(
        root / "brain" / "sess-01" / ".system_generated" / "logs" / "transcript.jsonl"
    ).to_json() | {"transcript": shown["transcript"]}


def worker_that_dies(*args: Any) -> Any:
    """Stands in for ``ingest.read_task`` in the workers: the process ends at once."""
    os._exit(3)


def test_dead_workers_leave_the_rest_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    transcripts = build_root(root, sessions=4, turns=4)
    monkeypatch.setattr(ingest, "read_task", worker_that_dies)
    db = tmp_path / "index.db"
    report = index_with(db, root, jobs=2)
    assert report.added == 4
    assert len(report.problems) == 1 and "worker processes failed" in report.problems[0]
    loaded = snapshot(db)["loaded"]
    for path in transcripts:
        parsed = parse_transcript(path).to_json()
        assert loaded[parsed["session_id"]] == parsed | {"transcript": str(path)}


# ``deja index --jobs 2`` with small batches and tasks, so that a run is many
# transactions from several tasks per transcript and a kill lands among them.
RUNNER = """
import sys
from deja_blame.index import ingest
ingest.TASK_BYTES = 24_000
ingest.GROUP_BYTES = 24_000
defaults = list(ingest.index_roots.__defaults__)
defaults[-1] = 8_000
ingest.index_roots.__defaults__ = tuple(defaults)
from deja_blame.cli import main
main(sys.argv[1:])
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purposes
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return True


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc to find workers")
def test_killed_run_with_workers_resumes_to_the_same_index(tmp_path: Path) -> None:
    root = tmp_path / "root"
    build_root(root, sessions=6, turns=30)
    clean = tmp_path / "clean.db"
    index_with(clean, root, jobs=1)
    db = tmp_path / "killed.db"
    env = {**os.environ, "DEJA_DB": str(db)}
    proc = subprocess.Popen(
        [sys.executable, "-c", RUNNER, "index", "--root", str(root), "--jobs", "2", "--json"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: set[int] = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
            workers.update(int(c) for c in children)
        except OSError:
            pass
        if db.exists() and len(workers) >= 2:
            conn = sqlite3.connect(str(db), timeout=30)
            try:
                done = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
            except sqlite3.Error:
                done = 0
            finally:
                conn.close()
            if done >= 2:
                break
        time.sleep(0.01)
    assert proc.poll() is None, "the run ended before it could be killed: make the root bigger"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # the workers notice and end: nothing is left running
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.1)
    assert not [w for w in workers if _alive(w)]

    conn = sqlite3.connect(str(db))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    report = deja_json("index", "--root", str(root), "--json", env=env)
    assert report["problems"] == []
    assert snapshot(db) == snapshot(clean)


def test_two_runs_with_workers_at_once(tmp_path: Path) -> None:
    """Two `deja index --jobs 2` on one index: batches another run moved are read
    again by the writer, and the index ends equal to a one-process one."""
    root = tmp_path / "root"
    build_root(root, sessions=8, turns=20)
    clean = tmp_path / "clean.db"
    index_with(clean, root, jobs=1)
    db = tmp_path / "both.db"
    env = {**os.environ, "DEJA_DB": str(db)}
    cmd = [sys.executable, "-c", RUNNER, "index", "--root", str(root), "--jobs", "2", "--json"]
    procs = [
        subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err.decode()
        assert orjson.loads(out)["problems"] == []
    assert sum(orjson.loads(out)["added"] for out, _ in outs) == 8
    assert snapshot(db) == snapshot(clean)


@pytest.mark.parametrize(
    ("cores", "load", "jobs"), [(2, 0.0, 2), (2, 1.2, 1), (2, 2.5, 1), (8, 1.0, 2), (1, 0.0, 1)]
)
def test_workers_only_with_idle_cores(
    monkeypatch: pytest.MonkeyPatch, cores: int, load: float, jobs: int
) -> None:
    monkeypatch.setattr(ingest.os, "cpu_count", lambda: cores)
    monkeypatch.setattr(ingest.os, "getloadavg", lambda: (load, load, load))
    assert ingest.default_jobs() == jobs


def test_packed_columns_read_back_and_old_rows_too(tmp_path: Path) -> None:
    """Edits' lines and long agent messages are stored compressed; rows written before
    (plain JSON and text) read the same."""
    from deja_blame.index import store

    lines = [f"line {i}: " + "x" * 40 for i in range(50)]
    packed = store.pack(orjson.dumps(lines))
    assert packed[:1] == b"x" and len(packed) < len(orjson.dumps(lines))
    assert store.load_json(packed) == lines
    assert store.load_json(orjson.dumps(["short"])) == ["short"]  # an old row: plain JSON
    assert store.message_text("plain text") == "plain text"
    text = "The agent said: " + "é" * 300
    assert store.message_text(store._pack_text("assistant", text)) == text
    assert store._pack_text("user", text) == text  # requests stay TEXT: SQL reads them


def test_an_edit_body_is_compressed_at_the_edit_level_and_any_level_reads(tmp_path: Path) -> None:
    """An edit's text, the bulk of the index, is packed at EDIT_LEVEL (smaller than the
    level 1 of other packed values); a body packed at any level, as older rows were,
    reads the same."""
    from deja_blame.index import store

    added = [f"    total_{i} = compute(order_{i}, rate={i % 7})  # step {i}" for i in range(120)]
    doc = [[], added, [], None]
    body = store.edit_body([], added, [], None)
    assert body == zlib.compress(orjson.dumps(doc), store.EDIT_LEVEL)
    assert store.EDIT_LEVEL > 1 and len(body) < len(store.pack(orjson.dumps(doc)))
    for level in (1, 6, 9):
        assert store.load_json(zlib.compress(orjson.dumps(doc), level)) == doc


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "pipe"])
def test_a_first_answer_shows_its_reading_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, terminal: bool
) -> None:
    """blame, why and stats read new transcripts before answering: on a terminal a
    bar says so (the first answer after many sessions is not silent), in a pipe nothing."""
    from deja_blame.index.refresh import refresh_index

    root = tmp_path / "root"
    build_root(root, sessions=24, turns=2)
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(root))
    err = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    conn = connect(tmp_path / "index.db")
    try:
        refresh_index(conn)
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 24
    finally:
        conn.close()
    shown = err.getvalue()
    if terminal:
        assert "reading new transcripts" in shown and "100%" in shown
    else:
        assert shown == ""
