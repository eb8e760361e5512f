"""Benchmark: the first `deja blame` with an empty index and >= 1 GB of transcripts of
which a small share concerns the repository, against a bare orjson pass of the same bytes.

Builds (once, cached under --out): the unrelated transcripts (``ingest.py``'s
generator, --mb MB over --sessions sessions of other projects) and a real file's
history replayed by --replay sessions (``realhistory.py``, a clone of --real).
Then, alternated, --runs times:

- the floor: every line of every transcript read and ``orjson.loads``-ed, one process;
- ``deja blame FILE --json`` with an empty index (what a heavy user's first
  blame does), with this checkout's deja and, with ``--old DIR`` (a checkout
  of another commit), with that one too, each answer saved for comparison.

    python bench/first_answer.py --real /path/to/click --file src/click/core.py \\
        --old /tmp/deja-old --runs 3

Goal: the first blame <= 3x the floor. Disk: about --mb MB under --out (delete it after).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ingest import floor_pass, generate  # noqa: E402
from realhistory import build as build_replay  # noqa: E402


def first_blame(
    pythonpath: Path, db: Path, roots: list[Path], repo: Path, file: str
) -> tuple[float, bytes]:
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    env = {
        **os.environ,
        "DEJA_DB": str(db),
        "DEJA_ANTIGRAVITY_ROOT": os.pathsep.join(map(str, roots)),
        "NO_COLOR": "1",
        "PYTHONPATH": str(pythonpath),
    }
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "deja_blame", "blame", file, "--json"],
        env=env,
        cwd=repo,
        capture_output=True,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"deja blame failed: {proc.stderr.decode()[-500:]}")
    return elapsed, proc.stdout


def lines_of(doc: bytes) -> list[object]:
    return list(json.loads(doc)["lines"])


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--real", type=Path, required=True, help="a git repository with history")
    ap.add_argument("--file", default="src/click/core.py")
    ap.add_argument("--replay", type=int, default=1000, help="sessions replaying the file")
    ap.add_argument("--sessions", type=int, default=4000, help="unrelated sessions")
    ap.add_argument("--mb", type=int, default=1100, help="MB of unrelated transcripts")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--old", type=Path, help="a checkout of the deja to compare with")
    ap.add_argument("--out", type=Path, default=HERE / "out" / "first_answer")
    args = ap.parse_args()
    generate(args.out / "unrelated", args.sessions, args.mb, 7)
    replay = args.out / "replay"
    build_replay(replay, args.real, args.file, args.replay)
    roots = [args.out / "unrelated" / "root", replay / "root"]
    repo = replay / "repo"
    versions = {"new": HERE.parent}
    if args.old is not None:
        versions["old"] = args.old
    times: dict[str, list[float]] = {"floor": [], **{v: [] for v in versions}}
    answers: dict[str, list[object]] = {}
    total = 0
    for r in range(args.runs):
        took = 0.0
        for root in roots:
            t, size, _ = floor_pass(root)
            took += t
            total = size if root == roots[0] else total + size
        times["floor"].append(took)
        order = list(versions) if r % 2 == 0 else list(reversed(versions))
        for v in order:
            t, doc = first_blame(versions[v], args.out / f"index-{v}.db", roots, repo, args.file)
            times[v].append(t)
            answers[v] = lines_of(doc)
            print(f"run {r + 1}: {v} {t:.2f} s, floor {took:.2f} s", file=sys.stderr)
    med = {k: statistics.median(x) for k, x in times.items()}
    print(f"\n{total / 1e9:.2f} GB of transcripts; medians of {args.runs} alternated runs")
    print(f"{'':28}{'s':>8}{'x floor':>9}")
    print(f"{'orjson pass (floor)':28}{med['floor']:>8.2f}{1.0:>9.2f}")
    for v in versions:
        print(f"{'first deja blame, ' + v:28}{med[v]:>8.2f}{med[v] / med['floor']:>9.2f}")
    if "old" in answers:
        same = answers["old"] == answers["new"]
        print(f"lines the same as {args.old}'s: {same}")


if __name__ == "__main__":
    main()
