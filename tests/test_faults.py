"""Faults: deja index killed at random points, a full disk, a damaged index. Nothing is lost.

- **Kills.** ``deja index`` runs on a root big enough to take about a second
  with small batches (64 KB, so many transactions per run) and is SIGKILLed at
  a random moment; between kills the transcripts grow, one is rewritten, and
  now and then the index starts from nothing. After every kill
  ``PRAGMA integrity_check`` is ok and the next run that is left alone
  completes; its index equals a clean index of the same root: every session,
  message, command, file record, edit and ``lines`` row, with the same values.
  The suite does ``KILLS_IN_SUITE`` kills (checking against a clean index after
  each); ``bench/faults.py`` does 50 or more.
- **A full disk.** The index lives on a 2 MB tmpfs (as root, where mounting
  works) or the process runs under ``RLIMIT_FSIZE`` (writes past the limit fail
  with EFBIG): ``deja index`` exits 1 with a one-line error, no traceback, the
  index passes integrity_check and keeps what was indexed before; once there
  is room again the next run completes with nothing lost.
- **A damaged index.** Commands say so in one line with the fix; ``deja
  doctor`` says so; ``deja index --rebuild`` recovers everything.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
import random
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from antigravity_writer import TranscriptWriter

from deja_blame.index.ingest import index_roots
from deja_blame.index.queries import LINES as WRITTEN_LINES
from deja_blame.index.store import load_session

T0 = 1_784_278_800
KILLS_IN_SUITE = 10
SMALL_BATCH = 64 * 1024

# ``deja index`` with a smaller batch than the default 8 MB, so that one run is
# many transactions and a kill lands between or inside them. The real CLI entry
# point; only index_roots' default batch size is changed.
RUNNER = """
import sys
from deja_blame.index import ingest
defaults = list(ingest.index_roots.__defaults__)
defaults[-1] = int(sys.argv.pop(1))
ingest.index_roots.__defaults__ = tuple(defaults)
from deja_blame.cli import main
main(sys.argv[1:])
"""


def test_the_runner_changes_what_it_means_to() -> None:
    params = list(inspect.signature(index_roots).parameters)
    assert params[-1] == "batch_bytes"


# -- transcript roots ---------------------------------------------------------------------


def add_turns(w: TranscriptWriter, rnd: random.Random, turns: int, tag: str) -> None:
    """Realistic turns: a request, a write or a replace, a test run, sometimes a view."""
    ws = w.workspace or "/work/p"
    for t in range(turns):
        path = f"{ws}/src/mod_{tag}_{t % 6}.py"
        w.user(f"{tag} turn {t}: change {path} so the tests pass")
        known = w.files.get(path)
        if known and rnd.random() < 0.6:
            old = known.splitlines(keepends=True)[0]
            w.replace(path, old, f"# revised {t} {rnd.randint(0, 10**6)}\n" + old)
        else:
            body = "".join(
                f"def f_{tag}_{t}_{k}(x):\n    return x * {rnd.randint(0, 999)} + {k}\n"
                for k in range(rnd.randint(4, 30))
            )
            w.write_file(path, body, overwrite=bool(known))
        w.run_command(
            f"pytest -q tests/test_{tag}_{t}.py",
            exit_code=rnd.choice([0, 0, 1]),
            output="." * rnd.randint(10, 1500) + "\n",
        )
        if rnd.random() < 0.3:
            w.view(path)
        if rnd.random() < 0.2:
            w.system("CHECKPOINT", "checkpoint")


@dataclass
class Root:
    """A transcript root whose sessions can keep growing, as live ones do."""

    path: Path
    rnd: random.Random
    writers: dict[str, TranscriptWriter] = field(default_factory=dict)
    grown: int = 0

    def add_session(self, sid: str, turns: int) -> None:
        ws = f"/work/proj{len(self.writers) % 4}"
        w = TranscriptWriter(self.path, sid, start=T0 + len(self.writers) * 7200, workspace=ws)
        add_turns(w, self.rnd, turns, sid[-4:])
        self.writers[sid] = w

    def grow(self, n_sessions: int, turns: int) -> None:
        for sid in self.rnd.sample(sorted(self.writers), min(n_sessions, len(self.writers))):
            self.grown += 1
            add_turns(self.writers[sid], self.rnd, turns, f"g{self.grown}")

    def rewrite(self, sid: str, turns: int) -> None:
        """The session's file replaced by a shorter one (a client that rewrote it)."""
        w = self.writers[sid]
        w.path.unlink()
        fresh = TranscriptWriter(self.path, sid, start=T0 + 99 * 7200, workspace=w.workspace)
        add_turns(fresh, self.rnd, turns, f"r{self.grown}")
        self.writers[sid] = fresh

    def size(self) -> int:
        return sum(w.path.stat().st_size for w in self.writers.values())


def make_root(path: Path, sessions: int, turns: int, seed: int = 1) -> Root:
    root = Root(path, random.Random(seed))
    for i in range(sessions):
        root.add_session(f"fault-{seed:02d}-{i:04d}", turns)
    return root


# -- running and comparing ------------------------------------------------------------------


def env_for(db: Path, root: Path) -> dict[str, str]:
    return {**os.environ, "DEJA_DB": str(db), "DEJA_ANTIGRAVITY_ROOT": str(root)}


def start_index(
    db: Path, root: Path, batch: int = SMALL_BATCH, preexec: Callable[[], None] | None = None
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(batch), "index", "--json"],
        env=env_for(db, root),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=preexec,
    )


def run_index(
    db: Path, root: Path, batch: int = SMALL_BATCH, **kw: Any
) -> tuple[int, bytes, bytes]:
    proc = start_index(db, root, batch, **kw)
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out, err


def integrity(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
    finally:
        conn.close()


def dump_index(db: Path) -> dict[str, Any]:
    """Everything the index holds that a user can see, without its internal ids and offsets."""
    conn = sqlite3.connect(db)
    try:
        sessions = conn.execute(
            "SELECT session_id, source, transcript, root, project, started_at, ended_at,"
            " started_epoch, skipped_lines, first_prompt, n_messages, n_commands, n_edits"
            " FROM sessions ORDER BY session_id"
        ).fetchall()
        docs = {row[0]: load_session(conn, row[0]).to_json() for row in sessions}
        statuses = sorted(
            conn.execute(
                "SELECT s.session_id, c.ord, c.status FROM commands c JOIN sessions s USING (sid)"
            ).fetchall()
        )
        lines = sorted(
            conn.execute(
                "SELECT s.session_id, p.path, l.fp, l.edit_ord, l.idx, l.at_epoch, l.by_user"
                f" FROM {WRITTEN_LINES} l"
                " JOIN sessions s ON s.sid = l.sid JOIN paths p ON p.path_id = l.path_id"
            ).fetchall()
        )
        counts = {
            t: conn.execute(
                f"SELECT COUNT(*) FROM {WRITTEN_LINES if t == 'lines' else t}"
            ).fetchone()[0]
            for t in ("sessions", "messages", "commands", "files", "edits", "edit_times", "lines")
        }
    finally:
        conn.close()
    return {
        "counts": counts,
        "sessions": sessions,
        "docs": docs,
        "statuses": statuses,
        "lines": lines,
    }


def clean_dump(root: Path, work: Path) -> dict[str, Any]:
    db = work / f"clean-{time.monotonic_ns()}.db"
    code, _, err = run_index(db, root, batch=8 * 1024 * 1024)
    assert code == 0, err
    try:
        return dump_index(db)
    finally:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(str(db) + suffix)


def root_digest(root: Path) -> str:
    """Every file of a transcript root, names and bytes: equal digests, equal indexes."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        digest.update(b"%s\0%d\0" % (bytes(path.relative_to(root)), len(data)) + data)
    return digest.hexdigest()


def assert_same(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert got["counts"] == want["counts"]
    assert got["sessions"] == want["sessions"]
    for sid, doc in want["docs"].items():
        assert got["docs"][sid] == doc, sid
    assert got["statuses"] == want["statuses"]
    assert got["lines"] == want["lines"]


# -- the kill loop --------------------------------------------------------------------------


@dataclass
class KillStats:
    kills: int = 0
    mid_run: int = 0  # the process was still running when killed
    partial_sessions: int = 0  # sessions the kill left half read (resumed by the next run)
    integrity_ok: int = 0
    verified: int = 0  # full runs afterwards that matched a clean index
    full_run_s: float = 0.0
    root_mb: float = 0.0
    final_root_mb: float = 0.0
    seconds: float = 0.0
    log: list[str] = field(default_factory=list)


def kill_loop(
    work: Path, kills: int, seed: int, verify_every: int = 1, sessions: int = 24, turns: int = 40
) -> KillStats:
    """SIGKILL ``deja index`` ``kills`` times at random moments; check after each kill.

    Every other run starts from an empty index (the longest run); the others
    read what the transcripts gained (several sessions grown, sometimes one
    rewritten). The moment of each kill is drawn from the time that run is
    expected to take (process start plus its bytes at the measured speed), so
    that most kills land while it writes.
    """
    started = time.monotonic()
    rnd = random.Random(seed)
    root = make_root(work / "root", sessions, turns, seed)
    db = work / "index.db"
    stats = KillStats(root_mb=root.size() / 1e6)
    clean: dict[str, dict[str, Any]] = {}
    t0 = time.monotonic()
    code, _, err = run_index(db, root.path)
    stats.full_run_s = time.monotonic() - t0
    assert code == 0, err
    t0 = time.monotonic()
    run_index(db, root.path)  # nothing new: the cost of starting up
    startup = time.monotonic() - t0
    speed = root.size() / max(0.05, stats.full_run_s - startup)  # bytes per second
    for i in range(kills):
        if i % 2 == 0:
            for suffix in ("", "-wal", "-shm"):  # from nothing: the longest run
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(str(db) + suffix)
            expected = startup + root.size() / speed
        else:
            size = root.size()
            root.grow(n_sessions=rnd.randint(sessions // 3, sessions), turns=rnd.randint(3, 10))
            if rnd.random() < 0.3:
                root.rewrite(rnd.choice(sorted(root.writers)), turns=rnd.randint(5, 20))
            expected = startup + max(0, root.size() - size) / speed
        proc = start_index(db, root.path)
        delay = rnd.uniform(0.05, expected)
        time.sleep(delay)
        if proc.poll() is None:
            stats.mid_run += 1
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        stats.kills += 1
        check = integrity(db)
        assert check == ["ok"], (i, check)
        stats.integrity_ok += 1
        conn = sqlite3.connect(db)
        with contextlib.suppress(sqlite3.OperationalError):  # killed before the schema
            stats.partial_sessions += conn.execute(
                "SELECT COUNT(*) FROM sessions WHERE mtime_ns = -1"
            ).fetchone()[0]
        conn.close()
        stats.log.append(
            f"kill {i + 1}: after {delay:.2f} s of ~{expected:.2f} s,"
            f" {'mid-run' if proc.returncode == -signal.SIGKILL else 'already done'}"
        )
        if (i + 1) % verify_every == 0 or i == kills - 1:
            code, _, err = run_index(db, root.path)
            assert code == 0, err
            assert b"database is locked" not in err
            assert integrity(db) == ["ok"]
            state = root_digest(root.path)  # a root unchanged since the last check: its
            if state not in clean:  # clean index is the same, built once
                clean[state] = clean_dump(root.path, work)
            assert_same(dump_index(db), clean[state])
            stats.verified += 1
    stats.final_root_mb = root.size() / 1e6
    stats.seconds = time.monotonic() - started
    return stats


def test_killed_index_runs_lose_nothing(tmp_path: Path) -> None:
    stats = kill_loop(tmp_path, KILLS_IN_SUITE, seed=11, verify_every=1)
    assert stats.kills == KILLS_IN_SUITE == stats.integrity_ok == stats.verified
    assert stats.mid_run >= KILLS_IN_SUITE // 2, stats.log  # most kills land inside a run


# -- a full disk ------------------------------------------------------------------------------


@contextlib.contextmanager
def small_tmpfs(path: Path, size: str = "2m") -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({proc.stderr.decode().strip()})")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def can_mount() -> bool:
    return os.geteuid() == 0 and shutil.which("mount") is not None


def fsize_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def assert_one_line_error(code: int, err: bytes) -> str:
    text = err.decode("utf-8", "replace")
    assert code == 1, text
    assert "Traceback" not in text and "unexpected error" not in text, text
    lines = text.strip().splitlines()
    assert lines and lines[0].startswith("deja: error: "), text
    assert len(lines) <= 2 and all(ln.startswith(("deja: error: ", "hint: ")) for ln in lines), text
    return text


@pytest.mark.parametrize("how", ["tmpfs", "rlimit"])
def test_full_disk_while_indexing(tmp_path: Path, how: str) -> None:
    root = make_root(tmp_path / "root", sessions=2, turns=5, seed=3)
    if how == "tmpfs":
        if not can_mount():
            pytest.skip("mounting a tmpfs needs root")
        ctx: Any = small_tmpfs(tmp_path / "disk")
    else:
        (tmp_path / "disk").mkdir()
        ctx = contextlib.nullcontext(tmp_path / "disk")
    with ctx as disk:
        db = disk / "index.db"
        code, _, err = run_index(db, root.path)
        assert code == 0, err
        before = dump_index(db)
        limit = db.stat().st_size + 600_000
        # far more than 2 MB of index to come (2.3 MB once written: small sessions are
        # written several to a transaction, so the WAL no longer swells past it)
        for i in range(40):
            root.add_session(f"fault-big-{i:04d}", 30)
        preexec = fsize_limit(limit) if how == "rlimit" else None
        code, out, err = run_index(db, root.path, preexec=preexec)
        text = assert_one_line_error(code, err)
        assert "could not be written" in text, text
        assert "rebuild" not in text  # nothing is wrong with the index
        assert out == b""
        assert integrity(db) == ["ok"]
        after = dump_index(db)
        for sid, doc in before["docs"].items():
            assert after["docs"][sid] == doc  # what was there is still there
        # room again: the next run completes, nothing lost
        if how == "tmpfs":
            subprocess.run(["mount", "-o", "remount,size=256m", str(disk)], check=True)
        code, _, err = run_index(db, root.path)
        assert code == 0, err
        assert_same(dump_index(db), clean_dump(root.path, tmp_path))


def test_full_disk_before_the_index_exists(tmp_path: Path) -> None:
    """No room for a new index: say so, and do not call a file that was never written damaged."""
    if not can_mount():
        pytest.skip("mounting a tmpfs needs root")
    root = make_root(tmp_path / "root", sessions=1, turns=2, seed=4)
    with small_tmpfs(tmp_path / "disk", size="256k") as disk:
        filler = disk / "filler"
        with open(filler, "wb") as fh, contextlib.suppress(OSError):
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        code, _, err = run_index(disk / "index.db", root.path)
        text = assert_one_line_error(code, err)
        assert "could not be written" in text and "rebuild" not in text, text


# -- a damaged index ---------------------------------------------------------------------------


def corrupt_pages(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    for start in range(page, len(data), page):
        data[start + 8 : start + 64] = b"\xa5" * 56
    db.write_bytes(bytes(data))


def test_damaged_index_is_reported_and_rebuilt(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root", sessions=4, turns=6, seed=5)
    db = tmp_path / "index.db"
    code, _, err = run_index(db, root.path)
    assert code == 0, err
    clean = dump_index(db)
    corrupt_pages(db)
    env = env_for(db, root.path)

    def deja(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "deja_blame", *args], env=env, capture_output=True, timeout=120
        )

    for args in (["sessions"], ["show", "fault-05-0000"], ["index"]):
        proc = deja(*args)
        text = assert_one_line_error(proc.returncode, proc.stderr)
        # damage reads as "unreadable", or, when it hit the schema version, as "not a
        # deja index"; the fix named is the same
        assert "unreadable" in text or "not a deja index" in text, text
        assert text.splitlines()[1].startswith("hint: ") and "deja index --rebuild" in text
    doctor = deja("doctor", "--json")
    assert doctor.returncode == 1
    check = {c["name"]: c for c in orjson.loads(doctor.stdout)["checks"]}["index"]
    assert not check["ok"] and check["fix"] == "deja index --rebuild"
    # named with --db (not DEJA_DB), the fix names it too: a bare rebuild would
    # rebuild another index
    env.pop("DEJA_DB")
    env["HOME"] = str(tmp_path / "home")
    proc = deja("--db", str(db), "sessions")
    text = assert_one_line_error(proc.returncode, proc.stderr)
    assert f"hint: rebuild it from the transcripts: deja --db {db} index --rebuild" in text
    doctor = deja("--db", str(db), "doctor", "--json")
    check = {c["name"]: c for c in orjson.loads(doctor.stdout)["checks"]}["index"]
    assert check["fix"] == f"deja --db {db} index --rebuild"
    env["DEJA_DB"] = str(db)
    rebuilt = deja("index", "--rebuild", "-q")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert integrity(db) == ["ok"]
    assert_same(dump_index(db), clean)
