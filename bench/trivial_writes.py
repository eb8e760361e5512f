"""Benchmark: blank lines, ``)`` and ``return`` written by 20,000 sessions to one file.

A real file (--file, default bench/realhistory's click core.py replay, any text
file will do) whose lines 101-160 one session wrote, and 20,000 sessions that
each wrote six trivial lines there in edits of other code. Times ``load_writes``
plus ``match_lines`` reading every write, then narrowed in SQLite (only edits
that also wrote a non-trivial line of the file reach Python), medians of 3, and
checks the answers are the same.

    python bench/trivial_writes.py --file /path/to/src/click/core.py
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from deja_blame.attribution.facts import writes as matcher
from deja_blame.attribution.facts.model import BlameLine, LineTexts
from deja_blame.attribution.match import lines as match_lines_mod
from deja_blame.index.db import connect
from deja_blame.index.fingerprint import fingerprint, is_trivial
from deja_blame.index.store import insert_writes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", type=Path, required=True)
    ap.add_argument("--sessions", type=int, default=20_000)
    args = ap.parse_args()
    texts = args.file.read_text(encoding="utf-8", errors="replace").splitlines()
    block = texts[100:160]
    rows = [(1, fingerprint(t), 1, 0, k, 1000.0, 0) for k, t in enumerate(block)]
    for sid in range(2, args.sessions + 2):
        for k, t in enumerate(["", ")", "", "return", "]", ""]):
            rows.append((1, fingerprint(t), sid, 0, k, 500.0 + sid / 100, 0))
    conn = connect(Path(tempfile.mkdtemp()) / "index.db")
    insert_writes(conn, rows)
    conn.commit()
    blamed: list[BlameLine | None] = [
        BlameLine(i + 1, "c" * 40, 2000, "a.py", i + 1) for i in range(len(texts))
    ]
    fps = {fingerprint(t) for t in texts}
    solid = {fingerprint(t) for t in texts if not is_trivial(t)}
    took: dict[str, list[float]] = {"every write": [], "narrowed": []}
    read: dict[str, int] = {}
    answers: dict[str, object] = {}
    for _ in range(3):
        for name, narrow in (("every write", None), ("narrowed", solid)):
            start = time.perf_counter()
            writes = matcher.load_writes(conn, {1: True}, fps, solid=narrow)
            out = match_lines_mod.match_lines(LineTexts.of(texts), blamed, writes, now=3000.0)
            took[name].append(time.perf_counter() - start)
            read[name] = len(writes.info)
            answers[name] = [m and (m.sid, m.edit_ord, m.idx, m.confidence, m.run) for m in out]
    print(f"{len(rows):,} writes in the index, {len(texts):,} lines")
    for name, times in took.items():
        print(f"{name:12} {statistics.median(times):7.3f} s  {read[name]:>8,} writes read")
    print("same answers:", answers["every write"] == answers["narrowed"])


if __name__ == "__main__":
    main()
