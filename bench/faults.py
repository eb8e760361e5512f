"""Kill `deja index` at random points, many times; after each kill check that nothing is lost.

The loop of ``tests/test_faults.py`` (which runs 10 kills in the suite), at
full length: a root that takes about a second to index with 64 KB batches,
every other run from an empty index, the others after the transcripts grew
(and sometimes one was rewritten). After each SIGKILL: ``PRAGMA
integrity_check`` is ok, then a run left alone completes and its index equals
a clean index of the same root (sessions, messages, commands, files, edits,
lines).

    python bench/faults.py                  # 50 kills (~2 min)
    python bench/faults.py --kills 200 --seed 3

Exit status 0 when every kill was survived, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import test_faults as F  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--kills", type=int, default=50)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--sessions", type=int, default=24)
    ap.add_argument("--turns", type=int, default=40)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="deja-faults-") as tmp:
        try:
            stats = F.kill_loop(
                Path(tmp), args.kills, args.seed, 1, sessions=args.sessions, turns=args.turns
            )
        except AssertionError as exc:
            print(f"FAILED: {str(exc)[:3000]}")
            return 1
    for line in stats.log:
        print(line)
    print(
        f"root {stats.root_mb:.1f} MB (grown to {stats.final_root_mb:.1f} MB),"
        f" full index run {stats.full_run_s:.2f} s;"
        f" {stats.kills} kills, {stats.mid_run} while deja index was running,"
        f" {stats.partial_sessions} sessions left half read by a kill;"
        f" integrity_check ok after {stats.integrity_ok};"
        f" {stats.verified} resumed runs equal to a clean index; {stats.seconds:.0f} s"
    )
    return 0 if stats.kills == stats.integrity_ok == stats.verified else 1


if __name__ == "__main__":
    sys.exit(main())
