"""Windows against whole files: does ``deja blame -L`` (and ``deja why``) say what the
whole file's ``deja blame`` says of the same lines?

A line range with nothing cached is blamed and matched with ``WINDOW_CONTEXT`` lines
on each side (``facts/gather.py``), not with the whole file. Every rule must answer
as it would with the whole file; a rule that counts something over the lines it is
given (how often the file holds a text) answers otherwise in a window. This takes
files some session wrote to, blames each whole, then random windows of it (a line,
as ``deja why`` asks, or up to ``--span`` lines, as ``blame -L``), each in the same
process with the caches off, and counts the window lines whose session differs.

Run it in a clone whose index (``DEJA_DB``, the agents' roots) is set up, e.g. a
replayed history kept by ``bench/accuracy/realhist.py --keep`` or a clone of
``bench/moved_machine.py``::

    python bench/window_agreement.py --rev HEAD --files 20 --windows 10
    python bench/window_agreement.py --rev f7f50e49 --file cmd/entire/cli/explain_test.go

Exit 1 when any window line differs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def tracked_files(rev: str) -> list[str]:
    out = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", rev], capture_output=True, text=True, check=True
    ).stdout
    return [p for p in out.splitlines() if p]


def sessions_of(blame: Any) -> dict[int, str | None]:
    return {ln.line: ln.session for ln in blame.lines}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--file", action="append", help="this file (repeatable); else a sample")
    ap.add_argument("--files", type=int, default=20, help="files sampled (with a session's line)")
    ap.add_argument("--windows", type=int, default=10, help="random windows per file")
    ap.add_argument("--span", type=int, default=60, help="longest window (lines)")
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--suffix", default="", help="only files whose names end so (.go, .py)")
    ap.add_argument("-v", action="store_true", help="print every line that differs")
    args = ap.parse_args()
    os.environ["DEJA_NO_CACHE"] = "1"  # every answer computed afresh
    from deja_blame.attribution.api import compute
    from deja_blame.index.db import connect

    conn = connect(Path(os.environ["DEJA_DB"]))
    rng = random.Random(args.seed)
    names = args.file or [p for p in tracked_files(args.rev) if p.endswith(args.suffix)]
    if not args.file:
        rng.shuffle(names)
    checked_files = windows = lines = differ = 0
    worst: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for name in names:
        if checked_files >= (len(names) if args.file else args.files):
            break
        try:
            whole = compute(conn, Path(name), args.rev, None, False)
        except Exception:  # a binary file, a path git cannot blame: not this check's
            continue
        full = sessions_of(whole)
        if not any(full.values()):
            continue
        checked_files += 1
        total = len(whole.lines)
        for _ in range(args.windows):
            lo = rng.randint(1, total)
            hi = lo if rng.random() < 0.5 else min(total, lo + rng.randint(1, args.span) - 1)
            part = compute(conn, Path(name), args.rev, (lo, hi), False)
            windows += 1
            bad = [
                (ln.line, full.get(ln.line), ln.session)
                for ln in part.lines
                if lo <= ln.line <= hi and ln.session != full.get(ln.line)
            ]
            lines += hi - lo + 1
            differ += len(bad)
            if bad:
                worst.append({"file": name, "range": [lo, hi], "differ": len(bad)})
                if args.v:
                    for n, a, b in bad:
                        print(f"{name}:{n} whole {a} window {b}", file=sys.stderr)
    report = {
        "files": checked_files,
        "windows": windows,
        "window_lines": lines,
        "lines_differing": differ,
        "windows_differing": len(worst),
        "differing": sorted(worst, key=lambda w: -w["differ"])[:200],
        "seconds": round(time.perf_counter() - t0, 1),
    }
    print(json.dumps(report, indent=2))
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
