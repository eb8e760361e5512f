"""Benchmark: `deja index` of Claude Code transcripts against the bare cost of reading them.

Writes (with ``bench/accuracy/claude_writer.py``) one long Claude Code session
over the real sources of a packaging release (from its sdist): each turn a
request, a Read of a file (its whole text as the tool result), an Edit of three
of its lines, a test run. Then, side by side:

  (a) the floor: read every line and orjson.loads it
  (b) deja index (a fresh index), the real CLI in a subprocess, and its peak RSS
  (c) deja index again, nothing changed
  (d) deja index after one line was appended (read on from where it stopped)

    python bench/ingest_agents.py --sdist /tmp/sdists/packaging-24.2.tar.gz --turns 1500

Whole-process wall times, best of ``--runs``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "accuracy"))

from claude_writer import ClaudeWriter  # noqa: E402


def write_session(root: Path, sdist: Path, turns: int) -> Path:
    files: dict[str, str] = {}
    with tarfile.open(sdist) as t:
        for m in t.getmembers():
            if m.isfile() and m.name.endswith(".py") and "/packaging/" in m.name:
                data = t.extractfile(m)
                if data is not None:
                    files["/work/pk/" + m.name.split("/packaging/", 1)[1]] = data.read().decode()
    rng = random.Random(1)
    paths = sorted(files)
    w = ClaudeWriter(root, "bench-claude-0001", 1_790_000_000, workspace="/work/pk")
    for i in range(turns):
        p = rng.choice(paths)
        text = files[p]
        w.user(f"Request {i}: tidy {p}")
        w.view(p, content=text)
        lines = text.splitlines(keepends=True)
        if len(lines) < 5:
            continue
        k = rng.randrange(len(lines) - 3)
        old = "".join(lines[k : k + 3])
        if text.count(old) != 1:
            continue
        new = old.replace("\n", "  # reviewed\n", 1)
        w.replace(p, old, new, current=text)
        files[p] = text.replace(old, new, 1)
        w.run_command("python -m pytest -q", 0, output="6 passed in 0.5s")
    return w.path


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, int]:
    """(wall seconds, peak RSS of the child in KB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    return wall, max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before)


def bare(path: Path) -> float:
    start = time.perf_counter()
    with open(path, "rb") as fh:
        for line in fh:
            orjson.loads(line)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sdist", type=Path, required=True)
    ap.add_argument("--turns", type=int, default=1500)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="deja-agents-bench-"))
    path = write_session(work / "claude", args.sdist, args.turns)
    size = path.stat().st_size
    env = {
        **os.environ,
        "HOME": str(work),
        "DEJA_ANTIGRAVITY_ROOT": "",
        "DEJA_CLAUDE_ROOT": str(work / "claude"),
    }
    deja = [sys.executable, "-m", "deja_blame", "index", "-q"]
    floor = min(bare(path) for _ in range(args.runs))
    first, again, grown, rss = [], [], [], 0
    for n in range(args.runs):
        env["DEJA_DB"] = str(work / f"index-{n}.db")
        wall, kb = timed(deja, env)
        first.append(wall)
        rss = max(rss, kb)
        again.append(timed(deja, env)[0])
        with open(path, "a") as fh:
            fh.write(json.dumps({"type": "user", "sessionId": "bench-claude-0001", "cwd": "/work/pk",
                                 "timestamp": "2026-09-01T00:00:00.000Z",
                                 "message": {"role": "user", "content": f"one more {n}"}}) + "\n")  # fmt: skip
        grown.append(timed(deja, env)[0])
    index_mb = Path(env["DEJA_DB"]).stat().st_size / 1e6
    print(f"one Claude Code session: {size / 1e6:.1f} MB, {args.turns} turns")
    print(f"  (a) read + orjson.loads   {floor:.2f} s ({size / 1e6 / floor:.0f} MB/s)")
    print(f"  (b) deja index, first     {min(first):.2f} s  b/a {floor / min(first):.2f}"
          f"  peak RSS {rss / 1024:.0f} MB  index {index_mb:.1f} MB")  # fmt: skip
    print(f"  (c) nothing changed       {min(again):.2f} s")
    print(f"  (d) one line appended     {min(grown):.2f} s  (read on from where it stopped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
