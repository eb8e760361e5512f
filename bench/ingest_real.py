"""Benchmark: `deja index` of real Claude Code transcripts against a bare orjson pass of them.

The generated worlds of ``ingest.py`` and ``first_answer.py`` are Antigravity's; most
people's transcripts are Claude Code's, whose records spend their CPU elsewhere (a
time with milliseconds on every record, a tool result per call, shell commands). This
bench indexes a directory of real ones: ``--claude-root DIR`` (a Claude Code root,
``projects/*/*.jsonl``), or ``--entireio REPO`` (the public entireio/cli repository,
whose developers committed their sessions: the newest transcript of each is written
under ``--out`` by ``moved_machine.extract_sessions``).

Then, alternated, ``--runs`` times: the floor (every line read and ``orjson.loads``-ed,
in process, CPU) and ``deja index --jobs 1 --json`` into an empty index with this
checkout and, with ``--old DIR``, with that one (CPU of the process, from wait4). The
speed is floor / deja (issue 38's goal: >= 0.20). With ``--old``, every table of the two
indexes is compared row by row (``path_gen``'s random first generations and ``meta``'s
times aside).

    python bench/ingest_real.py --entireio /path/to/entireio-cli --old /tmp/deja-old --runs 3
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

SKIPPED_TABLES = {"meta", "path_gen"}  # migration times; random first generations


def floor_cpu(files: list[Path]) -> tuple[float, int]:
    """(CPU s, bytes) of reading every line of ``files`` and decoding it."""
    start = time.process_time()
    total = 0
    loads = orjson.loads
    for path in files:
        with open(path, "rb") as fh:
            for raw in fh:
                total += len(raw)
                try:
                    loads(raw)
                except orjson.JSONDecodeError:
                    pass
    return time.process_time() - start, total


def index_cpu(tree: Path, root: Path, db: Path, home: Path) -> float:
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEJA_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as in an installed deja
    env.update(
        HOME=str(home),
        DEJA_DB=str(db),
        DEJA_CLAUDE_ROOT=str(root),
        DEJA_SERVER="0",
        PYTHONPATH=str(tree),
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "deja_blame", "index", "--jobs", "1", "--json"],
        env=env,
        cwd=home,
        stdout=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"deja index ({tree}) failed")
    return usage.ru_utime + usage.ru_stime


def table_digests(db: Path) -> dict[str, tuple[int, str]]:
    conn = sqlite3.connect(db)
    out = {}
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'"):
        if name in SKIPPED_TABLES or name.startswith("sqlite_"):
            continue
        rows = sorted(map(repr, conn.execute(f'SELECT * FROM "{name}"')))
        out[name] = (len(rows), hashlib.sha1("\n".join(rows).encode()).hexdigest())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--claude-root", type=Path, help="a Claude Code root of real transcripts")
    ap.add_argument("--entireio", type=Path, help="entireio/cli (its sessions are extracted)")
    ap.add_argument("--out", type=Path, default=HERE / "out" / "ingest_real")
    ap.add_argument("--old", type=Path, help="a checkout of the deja to compare with")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.claude_root is not None:
        root = args.claude_root
    elif args.entireio is not None:
        from moved_machine import extract_sessions

        root = args.out / "claude"
        if not root.exists():
            extract_sessions(args.entireio, args.out)
    else:
        raise SystemExit("--claude-root DIR or --entireio REPO")
    files = sorted(root.glob("projects/*/*.jsonl"))
    home = args.out / "home"
    home.mkdir(exist_ok=True)
    versions = {"new": HERE.parent}
    if args.old is not None:
        versions["old"] = args.old
    cpu: dict[str, list[float]] = {v: [] for v in ["floor", *versions]}
    total = 0
    floor_cpu(files)  # the page cache warmed
    for r in range(args.runs):
        took, total = floor_cpu(files)
        cpu["floor"].append(took)
        for v in list(versions) if r % 2 == 0 else list(reversed(versions)):
            cpu[v].append(index_cpu(versions[v], root, args.out / f"index-{v}.db", home))
            print(f"run {r + 1}: {v} {cpu[v][-1]:.2f} s CPU, floor {took:.2f}", file=sys.stderr)
    med = {k: statistics.median(x) for k, x in cpu.items()}
    print(
        f"\n{len(files)} transcripts, {total / 1e6:.1f} MB; medians of {args.runs} alternated runs"
    )
    print(f"{'':28}{'CPU s':>8}{'speed':>8}{'index MB':>10}")
    print(f"{'orjson pass (floor)':28}{med['floor']:>8.2f}")
    for v in versions:
        size = (args.out / f"index-{v}.db").stat().st_size / 1e6
        speed = med["floor"] / med[v]
        print(f"{'deja index --jobs 1, ' + v:28}{med[v]:>8.2f}{speed:>8.3f}{size:>10.1f}")
    if "old" in versions:
        old = table_digests(args.out / "index-old.db")
        new = table_digests(args.out / "index-new.db")
        differ = sorted(t for t in old.keys() | new.keys() if old.get(t) != new.get(t))
        print(f"every table the same rows as {args.old}'s: {not differ} {' '.join(differ)}")


if __name__ == "__main__":
    main()
