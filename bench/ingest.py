"""Benchmark: `deja index` against the bare cost of reading the same JSONL, side by side.

Generates (deterministically) a large transcript root of realistic Antigravity
records: user requests wrapped in metadata blocks, planner rows with
run_command / replace_file_content / write_to_file / view_file / list_dir
calls (compact JSON-text args, and some transcript_full.jsonl sessions with
native args), RUN_COMMAND steps with exit codes and output, CODE_ACTION steps
with diff blocks and "Created file" confirmations, VIEW_FILE bodies, SYSTEM
noise, out-of-order step_index, a few malformed and blank lines. Session sizes
are skewed (log-normal): many small sessions, a few of several MB, and one
long-running session holding a tenth of the data (read in many batches).

Then, in one run:

  (a) the floor: read every transcript line and orjson.loads it   (MB/s)
  (b) deja index on the same root, the real CLI in a subprocess    (MB/s; goal b/a >= 0.30)
  (c) peak memory (max RSS) of that subprocess                     (goal < 200 MB)
  (d) deja index again with nothing changed                        (goal < 1 s)
  (e) deja index after 1% of the sessions grew by one turn         (for information)

    python bench/ingest.py                          # 2,000 sessions, ~500 MB
    python bench/ingest.py --sessions 200 --mb 50   # a quick look
    python bench/ingest.py --out /tmp/agroot --keep # keep the root to reuse it
    python bench/ingest.py --jobs 2                 # with 2 worker processes, however busy

Exit status: 0 when every goal is met, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from deja_blame.transcripts.antigravity.discover import find_transcripts  # noqa: E402

MB = 1024 * 1024
T0 = 1_784_278_800  # 2026-07-17T09:00:00Z
GOAL_RATIO = 0.30
GOAL_RSS_MB = 200
GOAL_NOCHANGE_S = 1.0
MANIFEST = "manifest.json"
GENERATOR_VERSION = 3

# -- text pools ---------------------------------------------------------------------------

WORDS = (
    "handler event request response parse respond config build test cache user order "
    "payment invoice client server route token session value result error retry timeout "
    "items total count index offset limit buffer stream reader writer queue worker job "
    "schema model field record table query filter update insert delete select merge"
).split()
COMMANDS = [
    "npm test",
    "npm run build",
    "pytest -q",
    "cargo test",
    "go test ./...",
    "make check",
    "git status",
    "ls -la src",
    "python -m mypy src",
    "npx eslint src --fix",
]


def iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def local(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S+03:00", time.gmtime(epoch + 3 * 3600))


class Pools:
    """Pre-built lines of code, prose and output, so generation is joins, not loops."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.code = [self._code_line() for _ in range(4000)]
        self.prose = [self._sentence() for _ in range(2000)]
        self.output = [self._output_line() for _ in range(2000)]

    def _name(self) -> str:
        return "_".join(self.rng.sample(WORDS, 2))

    def _code_line(self) -> str:
        r = self.rng
        indent = " " * (4 * r.randint(0, 3))
        kind = r.random()
        if kind < 0.15:
            return f"{indent}def {self._name()}({self._name()}, {self._name()}=None):"
        if kind < 0.3:
            return f"{indent}return {self._name()}({self._name()})"
        if kind < 0.4:
            return f"{indent}if {self._name()} is None:"
        if kind < 0.45:
            return ""
        return f"{indent}{self._name()} = {self._name()}.{self._name()}({r.randint(0, 999)})"

    def _sentence(self) -> str:
        words = self.rng.choices(WORDS, k=self.rng.randint(6, 18))
        return " ".join(words).capitalize() + "."

    def _output_line(self) -> str:
        r = self.rng
        kind = r.random()
        if kind < 0.3:
            return f"PASS src/{self._name()}.test.js ({r.randint(1, 900)} ms)"
        if kind < 0.4:
            return f"FAIL src/{self._name()}.test.js"
        if kind < 0.6:
            return f"    at {self._name()} (src/{self._name()}.js:{r.randint(1, 400)}:{r.randint(1, 80)})"
        return f"[{r.randint(0, 99):02d}:{r.randint(0, 59):02d}] {self.rng.choice(self.prose)}"

    def code_block(self, n: int) -> list[str]:
        """n consecutive lines of the pool (what a viewed file shows)."""
        start = self.rng.randrange(len(self.code) - n) if n < len(self.code) else 0
        return self.code[start : start + n]

    def fresh_code(self, n: int) -> list[str]:
        """n lines as an agent writes them: mostly new, so fingerprints are not all repeats."""
        out = self.code_block(n)
        bits = self.rng.getrandbits
        return [f"{line}  # {bits(32):x}" if line and bits(2) else line for line in out]

    def text(self, n: int) -> str:
        return " ".join(self.rng.choices(self.prose, k=n))

    def out(self, n: int) -> str:
        return "\n".join(self.rng.choices(self.output, k=n))


# -- records ----------------------------------------------------------------------------------


class SessionWriter:
    """Writes one session's turns as JSONL lines until its byte budget is spent."""

    def __init__(self, pools: Pools, rng: random.Random, project: str, full: bool) -> None:
        self.p = pools
        self.rng = rng
        self.project = project
        self.full = full  # transcript_full.jsonl: native arg values, nothing encoded
        self.step = 0
        self.clock = T0 + rng.randint(0, 90 * 86400)
        self.lines: list[bytes] = []
        self.size = 0
        self.files = [
            f"{project}/src/{self.rng.choice(WORDS)}_{i}.{self.rng.choice(['py', 'js', 'ts'])}"
            for i in range(rng.randint(3, 25))
        ]

    def arg(self, value: Any) -> Any:
        return value if self.full else json.dumps(value)

    def emit(self, rec: dict[str, Any]) -> None:
        data = orjson.dumps(rec) + b"\n"
        self.lines.append(data)
        self.size += len(data)

    def base(self, source: str, kind: str, status: str = "DONE") -> dict[str, Any]:
        self.step += 1
        self.clock += self.rng.randint(1, 40)
        return {
            "step_index": self.step,
            "source": source,
            "type": kind,
            "status": status,
            "created_at": iso(self.clock),
        }

    def header(self) -> str:
        return f"Created At: {local(self.clock)}\nCompleted At: {local(self.clock + 2)}\n"

    def user(self) -> None:
        rec = self.base("USER_EXPLICIT", "USER_INPUT")
        meta = {
            "cwd": self.project,
            "activeFile": self.rng.choice(self.files),
            "openFiles": self.rng.sample(self.files, min(len(self.files), 5)),
            "cursor": {"line": self.rng.randint(1, 400), "column": self.rng.randint(1, 80)},
            "os": "linux",
        }
        rec["content"] = (
            f"<USER_REQUEST>\n{self.p.text(self.rng.randint(1, 4))}\n</USER_REQUEST>\n"
            f"<ADDITIONAL_METADATA>\n{json.dumps(meta, indent=2)}\n</ADDITIONAL_METADATA>\n"
            "<USER_SETTINGS_CHANGE>\nmodel: gemini-3-pro\n</USER_SETTINGS_CHANGE>"
        )
        self.emit(rec)

    def planner(self, calls: list[dict[str, Any]]) -> None:
        rec = self.base("MODEL", "PLANNER_RESPONSE")
        rec["content"] = self.p.text(self.rng.randint(1, 3))
        rec["thinking"] = self.p.text(self.rng.randint(3, 25))
        if calls:
            rec["tool_calls"] = calls
        self.emit(rec)

    def system(self) -> None:
        kind = self.rng.choice(["CHECKPOINT", "EPHEMERAL_MESSAGE", "SYSTEM_MESSAGE"])
        rec = self.base("SYSTEM", kind)
        if self.rng.random() < 0.5:
            rec["content"] = self.p.text(self.rng.randint(1, 12))
        self.emit(rec)

    def command_turn(self) -> None:
        cmd = self.rng.choice(COMMANDS)
        self.planner(
            [
                {
                    "name": "run_command",
                    "args": {
                        "CommandLine": self.arg(cmd),
                        "Cwd": self.arg(self.project),
                        "WaitMsBeforeAsync": self.arg(500),
                    },
                }
            ]
        )
        code = self.rng.choice([0, 0, 0, 1, 2])
        rec = self.base("MODEL", "RUN_COMMAND")
        named = f"Task Description: {cmd}\n" if self.rng.random() < 0.7 else ""
        rec["content"] = (
            f"{self.header()}{named}\tThe command exited with code {code}.\nOutput:\n"
            f"{self.p.out(self.rng.randint(5, 300))}"
        )
        if self.rng.random() < 0.3:
            rec["exit_code"] = code
        self.emit(rec)

    def view_turn(self) -> None:
        path = self.rng.choice(self.files)
        self.planner(
            [
                {
                    "name": "view_file",
                    "args": {
                        "AbsolutePath": self.arg(path),
                        "StartLine": self.arg(1),
                        "EndLine": self.arg(400),
                    },
                }
            ]
        )
        rec = self.base("MODEL", "VIEW_FILE")
        body = "\n".join(self.p.code_block(self.rng.randint(20, 400)))
        rec["content"] = f"{self.header()}File Path: `file://{path}`\n{body}"
        self.emit(rec)

    def list_turn(self) -> None:
        directory = f"{self.project}/src"
        self.planner([{"name": "list_dir", "args": {"DirectoryPath": self.arg(directory)}}])
        rec = self.base("MODEL", "LIST_DIRECTORY")
        entries = "\n".join(
            json.dumps({"name": f.rsplit("/", 1)[-1], "isDir": False}) for f in self.files
        )
        rec["content"] = f"{self.header()}{entries}"
        self.emit(rec)

    def replace_turn(self) -> None:
        path = self.rng.choice(self.files)
        old = self.p.code_block(self.rng.randint(1, 12))
        new = self.p.fresh_code(self.rng.randint(1, 30))
        tool = self.rng.choice(["replace_file_content", "multi_replace_file_content"])
        args: dict[str, Any] = {"TargetFile": self.arg(path), "Instruction": self.arg("edit")}
        if tool == "replace_file_content":
            args["TargetContent"] = self.arg("\n".join(old))
            args["ReplacementContent"] = self.arg("\n".join(new))
            args["StartLine"] = self.arg(10)
            args["EndLine"] = self.arg(10 + len(old))
        else:
            chunks = [
                {"TargetContent": "\n".join(old), "ReplacementContent": "\n".join(new)},
            ]
            args["ReplacementChunks"] = self.arg(chunks)
        self.planner([{"name": tool, "args": args}])
        start = self.rng.randint(1, 300)
        block = "\n".join(
            [f"@@ -{start},{len(old) + 2} +{start},{len(new) + 2} @@", " # context"]
            + [f"-{x}" for x in old]
            + [f"+{x}" for x in new]
            + [" # context"]
        )
        rec = self.base("MODEL", "CODE_ACTION")
        rec["content"] = (
            f"{self.header()}The following changes were made by the {tool} tool to: {path}."
            " If relevant, proactively run terminal commands to verify the change.\n"
            f"[diff_block_start]\n{block}\n[diff_block_end]\n"
            "The above diff shows only the modified lines and a little context."
        )
        self.emit(rec)

    def write_turn(self) -> None:
        path = f"{self.project}/src/new_{self.step}.py"
        content = "\n".join(self.p.fresh_code(self.rng.randint(10, 200))) + "\n"
        self.planner(
            [
                {
                    "name": "write_to_file",
                    "args": {
                        "TargetFile": self.arg(path),
                        "CodeContent": self.arg(content),
                        "Overwrite": self.arg(False),
                        "Description": self.arg("new module"),
                    },
                }
            ]
        )
        ok = self.rng.random() < 0.9
        rec = self.base("MODEL", "CODE_ACTION", "DONE" if ok else "ERROR")
        rec["content"] = self.header() + (
            f"Created file file://{path} with requested content."
            if ok
            else "Error: the file could not be written."
        )
        self.emit(rec)

    def noise(self) -> None:
        r = self.rng.random()
        if r < 0.4:
            self.lines.append(b'{"source": "MODEL", "type": "PLANNER_RESPONSE", "content": "cut\n')
        elif r < 0.7:
            self.lines.append(b"\n")
        else:
            self.lines.append(b"[1, 2, 3]\n")
        self.size += len(self.lines[-1])

    def turn(self) -> None:
        self.user()
        for _ in range(self.rng.randint(1, 6)):
            r = self.rng.random()
            if r < 0.28:
                self.command_turn()
            elif r < 0.5:
                self.view_turn()
            elif r < 0.75:
                self.replace_turn()
            elif r < 0.85:
                self.write_turn()
            elif r < 0.9:
                self.list_turn()
            else:
                self.planner([])
            if self.rng.random() < 0.3:
                self.system()
            if self.rng.random() < 0.002:
                self.noise()
        if self.rng.random() < 0.05 and len(self.lines) > 2:
            # a step written before the one it follows (step_index out of order)
            self.lines[-1], self.lines[-2] = self.lines[-2], self.lines[-1]

    def drain(self) -> bytes:
        data = b"".join(self.lines)
        self.lines = []
        return data


def generate(out: Path, sessions: int, total_mb: int, seed: int) -> dict[str, Any]:
    root = out / "root"
    manifest = out / MANIFEST
    args = [sessions, total_mb, seed, GENERATOR_VERSION]
    if manifest.exists():
        info = json.loads(manifest.read_text())
        if info.get("args") == args and not info.get("grown"):
            print(f"reusing the root generated earlier in {root}", file=sys.stderr)
            return info
    shutil.rmtree(out, ignore_errors=True)
    (root / "brain").mkdir(parents=True)
    rng = random.Random(seed)
    pools = Pools(rng)
    weights = [rng.lognormvariate(0, 1.2) for _ in range(sessions)]
    # one long-running session of a tenth of the data: many batches, the memory bound
    weights[0] = sum(weights[1:]) / 9
    scale = total_mb * MB / sum(weights)
    conversations: dict[str, Any] = {}
    started = time.perf_counter()
    written = 0
    for n, w in enumerate(weights):
        sid = f"{rng.getrandbits(128):032x}"
        sid = f"{sid[:8]}-{sid[8:12]}-{sid[12:16]}-{sid[16:20]}-{sid[20:]}"
        project = f"/home/dev/{rng.choice(WORDS)}-{n % 40}"
        full = rng.random() < 0.05
        writer = SessionWriter(pools, rng, project, full)
        logs = root / "brain" / sid / ".system_generated" / "logs"
        logs.mkdir(parents=True)
        name = "transcript_full.jsonl" if full else "transcript.jsonl"
        budget = max(2000, int(w * scale))
        with open(logs / name, "wb") as fh:
            while writer.size < budget:
                writer.turn()
                if len(writer.lines) > 200:
                    fh.write(writer.drain())
            fh.write(writer.drain())
        written += writer.size
        if rng.random() < 0.5:
            conversations[sid] = {
                "summary": {"ID": sid, "Title": "bench", "WorkspaceURIs": [f"file://{project}"]},
                "is_internal": False,
            }
        if n % 200 == 0:
            done = written / MB
            print(
                f"\rgenerating: {n}/{sessions} sessions, {done:.0f} MB",
                end="",
                file=sys.stderr,
            )
    (root / "cache").mkdir()
    (root / "cache" / "conversation_metadata.json").write_bytes(
        orjson.dumps({"conversations": conversations})
    )
    elapsed = time.perf_counter() - started
    print(
        f"\rgenerated {sessions} sessions, {written / MB:.0f} MB in {elapsed:.0f} s",
        file=sys.stderr,
    )
    info = {"args": args, "sessions": sessions, "bytes": written}
    manifest.write_text(json.dumps(info))
    return info


# -- measuring --------------------------------------------------------------------------------


def floor_pass(root: Path) -> tuple[float, int, int]:
    """(seconds, bytes, lines): read each chosen transcript's lines, orjson.loads each."""
    files = [tf.path for tf in find_transcripts(root)]
    started = time.perf_counter()
    total = lines = 0
    loads = orjson.loads
    for path in files:
        with open(path, "rb") as fh:
            for raw in fh:
                total += len(raw)
                lines += 1
                try:
                    loads(raw)
                except orjson.JSONDecodeError:
                    pass
    return time.perf_counter() - started, total, lines


class TreeMemory:
    """Peak of the summed RSS of a process and its descendants (worker processes
    included), sampled every 20 ms from /proc; 0 where /proc cannot tell."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _tree(self, pid: int) -> list[int]:
        try:
            text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
        except OSError:
            return [pid]
        return [pid] + [p for child in text.split() for p in self._tree(int(child))]

    @staticmethod
    def _rss(pid: int) -> int:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        except (OSError, ValueError):
            pass
        return 0

    def _run(self) -> None:
        while not self.done.wait(0.02):
            self.peak = max(self.peak, sum(self._rss(p) for p in self._tree(self.pid)))

    def stop(self) -> int:
        self.done.set()
        self.thread.join()
        return self.peak


def run_deja(args: list[str], env: dict[str, str]) -> tuple[float, float, int, dict[str, Any], int]:
    """(wall seconds, CPU seconds, peak RSS bytes, the --json report, peak RSS of the
    process tree) of one `deja` subprocess."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "deja_blame", *args], stdout=out, stderr=err, env=env
        )
        tree = TreeMemory(proc.pid)
        # wait4 gives this child's own rusage (RUSAGE_CHILDREN would fold in earlier ones)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
        tree_peak = tree.stop()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read().decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"deja {' '.join(args)} exited {proc.returncode}:\n{stderr}")
    rss = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    # its workers' CPU: wait4 counts only children this process has waited for, which
    # the workers are by the time it exits
    return elapsed, usage.ru_utime + usage.ru_stime, rss, orjson.loads(stdout), tree_peak


def grow(root: Path, fraction: float, seed: int) -> int:
    """Append one turn to ``fraction`` of the sessions; returns the bytes added."""
    manifest = root.parent / MANIFEST
    info = json.loads(manifest.read_text())
    info["grown"] = True  # no longer what the arguments generate: the next run starts afresh
    manifest.write_text(json.dumps(info))
    rng = random.Random(seed + 1)
    pools = Pools(rng)
    files = [tf.path for tf in find_transcripts(root)]
    added = 0
    for path in rng.sample(files, max(1, int(len(files) * fraction))):
        writer = SessionWriter(pools, rng, "/home/dev/grown", path.name.endswith("_full.jsonl"))
        writer.step = 100_000
        writer.turn()
        data = writer.drain()
        with open(path, "ab") as fh:
            fh.write(data)
        added += len(data)
    return added


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=2000, help="sessions (default 2000)")
    ap.add_argument("--mb", type=int, default=500, help="total transcript MB (default 500)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--out",
        type=Path,
        default=REPO / "bench" / "out" / "ingest",
        help="where the root and the index go (default bench/out/ingest); a root generated"
        " there earlier with the same arguments is reused",
    )
    ap.add_argument("--keep", action="store_true", help="keep the root and index afterwards")
    ap.add_argument(
        "--jobs",
        type=int,
        help="pass --jobs N to the first deja index (default: deja's own choice, which"
        " uses workers only with two cores idle)",
    )
    args = ap.parse_args(argv)

    out = args.out.resolve()
    info = generate(out, args.sessions, args.mb, args.seed)
    root = out / "root"
    db = out / "index.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEJA_")}
    env["DEJA_DB"] = str(db)
    env["DEJA_ANTIGRAVITY_ROOT"] = str(root)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))

    try:
        floor_pass(root)  # warm the page cache: both passes then read from memory
        floor_s, floor_bytes, floor_lines = min(
            (floor_pass(root) for _ in range(2)), key=lambda t: t[0]
        )
        jobs = [f"--jobs={args.jobs}"] if args.jobs else []
        index_s, index_cpu, rss, report, tree_rss = run_deja(["index", "--json", *jobs], env)
        if report["problems"]:
            print("problems:", *report["problems"][:5], sep="\n  ", file=sys.stderr)
        nochange_s, _, nochange_rss, again, _ = run_deja(["index", "--json"], env)
        grown_bytes = grow(root, 0.01, args.seed)
        grow_s, _, _, grown, _ = run_deja(["index", "--json"], env)
        db_bytes = sum(
            Path(str(db) + s).stat().st_size for s in ("", "-wal") if Path(str(db) + s).exists()
        )
    finally:
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)

    mb = floor_bytes / MB
    floor_rate = mb / floor_s
    index_rate = mb / index_s
    ratio = index_rate / floor_rate
    rows = [
        ("data", f"{report['transcripts']} transcripts, {mb:.0f} MB, {floor_lines:,} lines", ""),
        ("(a) read + orjson.loads", f"{floor_rate:.0f} MB/s ({floor_s:.2f} s)", ""),
        (
            "(b) deja index",
            f"{index_rate:.0f} MB/s ({index_s:.2f} s), b/a = {ratio:.2f}",
            _goal(ratio >= GOAL_RATIO, f">= {GOAL_RATIO:.2f}"),
        ),
        (
            "    its CPU time",
            f"{index_cpu:.2f} s ({mb / index_cpu:.0f} MB/s of CPU)",
            "",
        ),
        (
            "(c) peak RSS of deja index",
            f"{rss / MB:.0f} MB (with its workers: {tree_rss / MB:.0f} MB)",
            _goal(max(rss, tree_rss) / MB < GOAL_RSS_MB, f"< {GOAL_RSS_MB} MB"),
        ),
        (
            "(d) re-index, nothing new",
            f"{nochange_s:.2f} s ({again['unchanged']} unchanged, {nochange_rss / MB:.0f} MB RSS)",
            _goal(
                nochange_s < GOAL_NOCHANGE_S and again["unchanged"] == report["transcripts"],
                f"< {GOAL_NOCHANGE_S:.0f} s",
            ),
        ),
        (
            "(e) re-index, 1% grew",
            f"{grow_s:.2f} s ({grown['updated']} updated, {grown_bytes / MB:.1f} MB new)",
            "",
        ),
        ("index size", f"{db_bytes / MB:.0f} MB", ""),
        ("malformed lines skipped", f"{report['skipped_lines']}", ""),
    ]
    width = max(len(r[0]) for r in rows)
    vwidth = max(len(r[1]) for r in rows)
    print(f"\n{'measure':<{width}}  {'result':<{vwidth}}  goal")
    print(f"{'-' * width}  {'-' * vwidth}  {'-' * 16}")
    for name, value, goal in rows:
        print(f"{name:<{width}}  {value:<{vwidth}}  {goal}")
    met = all(not g or g.startswith("ok") for _, _, g in rows)
    expected_sessions = info["sessions"]
    if report["added"] != expected_sessions:
        print(f"\nexpected {expected_sessions} sessions added, got {report['added']}")
        met = False
    return 0 if met else 1


def _goal(ok: bool, text: str) -> str:
    return f"ok ({text})" if ok else f"MISSED ({text})"


if __name__ == "__main__":
    sys.exit(main())
