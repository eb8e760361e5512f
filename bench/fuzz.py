"""Fuzz the transcript reader and the incremental index with generated transcripts.

Runs the two properties of ``tests/test_fuzz_reader.py`` on many more
transcripts than the test suite does:

- ``reader``: ``parse_transcript`` never raises, every valid user request and
  run_command survives, the skipped count equals the bad lines;
- ``incremental``: a transcript written in pieces (cut at random byte offsets,
  read by ``index_transcript`` after each, with small batch sizes) gives the
  same session as a one-shot parse.

    python bench/fuzz.py                         # 10,000 + 2,000 transcripts (~25 min)
    python bench/fuzz.py --reader 1000 --incremental 200
    python bench/fuzz.py --seed 7                # another sequence

Prints the counts (transcripts, lines by kind, bad lines by kind) and exits 1
on the first counterexample (hypothesis shrinks it and prints it).
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import test_fuzz_reader as F  # noqa: E402
from hypothesis import HealthCheck, given, seed, settings  # noqa: E402


def run(name: str, strategy: Any, check: Any, examples: int, seed_value: int) -> dict[str, Any]:
    stats: dict[str, Any] = {
        "transcripts": 0,
        "lines": collections.Counter(),
        "bad": collections.Counter(),
        "bytes": 0,
    }

    @seed(seed_value)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def prop(case: Any) -> None:
        check(case)
        t = case if isinstance(case, F.Transcript) else case[0]
        stats["transcripts"] += 1
        stats["bytes"] += len(t.to_bytes())
        for line in t.lines:
            stats["lines"][line.kind] += 1
            if line.bad_kind:
                stats["bad"][line.bad_kind] += 1

    start = time.monotonic()
    prop()
    stats["seconds"] = round(time.monotonic() - start, 1)
    print(
        f"{name}: {stats['transcripts']} transcripts, {sum(stats['lines'].values())} lines"
        f" ({dict(stats['lines'])}), {stats['bytes'] / 1e6:.0f} MB, {stats['seconds']} s",
        flush=True,
    )
    print(f"  bad lines by kind: {dict(sorted(stats['bad'].items()))}", flush=True)
    return stats


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--reader", type=int, default=10_000, help="transcripts for the reader property"
    )
    ap.add_argument(
        "--incremental", type=int, default=2_000, help="transcripts for the incremental property"
    )
    ap.add_argument("--seed", type=int, default=20260717)
    args = ap.parse_args()
    ok = True
    for name, strategy, check, n in (
        ("reader", F.transcripts(), F.check_reader, args.reader),
        ("incremental", F.incremental_case(), lambda c: F.check_incremental(*c), args.incremental),
    ):
        if n <= 0:
            continue
        try:
            run(name, strategy, check, n, args.seed)
        except Exception as exc:  # noqa: BLE001 - report the counterexample and go on
            ok = False
            print(f"{name}: FAILED: {type(exc).__name__}: {str(exc)[:2000]}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
