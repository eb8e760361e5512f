"""Benchmark: `deja stats --json` against `git blame --porcelain` on every file, side by side.

On a real repository with an index of its sessions (``bench/blame.py --real``
builds one: a clone of click whose core.py history was replayed by 1,000
sessions), each round runs, in turn:

- git blame --porcelain FILE, for every tracked file one after another (the baseline)
- deja stats --json, cold: the index with its attribution cache emptied
- deja stats --json, warm: right after, nothing changed

and prints each one's median and the ratio to the baseline of the same round
(goal: cold within 2x). Whole-process wall times.

    python bench/stats.py --repo /tmp/real-1000/repo --db /tmp/real-1000/index.db \\
        --root /tmp/real-1000/root --rounds 5
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from history import fresh_index  # noqa: E402


def timed(cmd: list[str], cwd: Path, env: dict[str, str], shell: bool = False) -> float:
    start = time.perf_counter()
    subprocess.run(
        cmd if not shell else " ".join(cmd),
        cwd=cwd,
        env=env,
        shell=shell,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--db", type=Path, required=True, help="the index of the repository's sessions")
    ap.add_argument("--root", type=Path, required=True, help="the Antigravity transcript root")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="deja-stats-bench-"))
    clean = work / "clean.db"
    fresh_index(args.db, clean)  # through SQLite: what a WAL beside it holds too
    env = {
        **os.environ,
        "DEJA_DB": str(work / "run.db"),
        "DEJA_ANTIGRAVITY_ROOT": str(args.root),
        "HOME": str(work),
    }
    deja = [sys.executable, "-m", "deja_blame"]
    # migrate once, then drop every cached answer: "cold" is a first stats run
    shutil.copy(clean, work / "run.db")
    subprocess.run([*deja, "sessions", "-n", "1"], env=env, check=True, capture_output=True)
    conn = sqlite3.connect(work / "run.db")
    conn.execute("DELETE FROM attribution_cache")
    conn.commit()
    conn.close()
    shutil.copy(work / "run.db", clean)
    files = subprocess.run(
        ["git", "ls-files"], cwd=args.repo, capture_output=True, text=True, check=True
    ).stdout.split()
    baseline = ["git ls-files -z | xargs -0 -n1 git blame --porcelain --"]
    rows: dict[str, list[float]] = {"git": [], "cold": [], "warm": []}
    ratios: dict[str, list[float]] = {"cold": [], "warm": []}
    for _ in range(args.rounds):
        fresh_index(clean, work / "run.db")  # never over a WAL the last run left
        git = timed(baseline, args.repo, env, shell=True)
        cold = timed([*deja, "stats", "--json"], args.repo, env)
        warm = timed([*deja, "stats", "--json"], args.repo, env)
        rows["git"].append(git)
        rows["cold"].append(cold)
        rows["warm"].append(warm)
        ratios["cold"].append(cold / git)
        ratios["warm"].append(warm / git)
    print(f"{args.repo}: {len(files)} files, {args.rounds} rounds (median, min-max)")
    for name, values in rows.items():
        ratio = ""
        if name in ratios:
            ratio = f"  {statistics.median(ratios[name]):.2f}x git (pair by pair)"
        print(
            f"  {name:<5} {statistics.median(values):6.2f} s"
            f"  ({min(values):.2f}-{max(values):.2f}){ratio}"
        )
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
