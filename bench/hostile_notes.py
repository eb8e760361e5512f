"""Benchmark: hostile notes (input from a fork or a teammate) beside a normal one.

One repository with a 2,000-line file and one commit. For each case, the commit's
note is replaced by the hostile one and ``deja blame --json``, ``deja why``
and ``deja report`` (Markdown, JSON, HTML) run on it, each a fresh process
under no index (a reviewer's clone: attribution comes only from notes). Each
run's wall time and peak RSS are printed beside the same run on a well-formed
note: the ratio is the cost of the hostile note. Exits 1 if any run fails.

    python bench/hostile_notes.py [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SID = "11111111-aaaa-4000-8000-000000000001"
LINES = 2000
DEEP = "[" * 100_000 + "]" * 100_000


def cases(sha: str) -> dict[str, str]:
    def doc(files: object, sessions: object | None = None) -> str:
        body = {"schema": 2, "commit": sha, "files": files}
        if sessions is not None:
            body["sessions"] = sessions
        return json.dumps(body, allow_nan=True)

    ok_info = {SID: {"agent": "antigravity", "project": "/w"}}
    return {
        "well-formed": doc({"a.py": {SID: [[1, LINES, 0.97]]}}, ok_info),
        "range to 10**12": doc({"a.py": {SID: [[1, 10**12, 0.9]]}}, ok_info),
        "range to 1e18": doc({"a.py": {SID: [[1, 1e18, 0.9]]}}, ok_info),
        "NaN and Infinity": doc({"a.py": {SID: [[1, float("inf"), float("nan")]]}}, ok_info),
        "100,000-deep nesting": DEEP,
        "100,000 ranges": doc({"a.py": {SID: [[i, i, 0.9] for i in range(1, 100_001)]}}, ok_info),
        "50 MB string": doc(
            {"a.py": {SID: [[1, LINES, 0.97]]}},
            {SID: {"agent": "antigravity", "project": "x" * 50_000_000}},
        ),
        "5,000 sessions": doc(
            {"a.py": {f"s{i}": [[1 + i % LINES, 1 + i % LINES, 0.9]] for i in range(5000)}},
            {f"s{i}": {"agent": "antigravity\n\u202e", "project": "/w"} for i in range(5000)},
        ),
    }


# Linux counts the RSS a process had before exec in its children's peak: deja is
# started by this small launcher, not by the bench that holds 100 MB of notes.
LAUNCHER = """
import os, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(p.pid, 0)
print(time.perf_counter() - t0, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status))
"""


def run(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MB, exit code of one deja process."""
    out = subprocess.run(
        [sys.executable, "-c", LAUNCHER, sys.executable, "-m", "deja_blame", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(out[0]), float(out[1]), int(out[2])


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="work directory (default: a temporary one)")
    opts = ap.parse_args()
    work = opts.out or Path(tempfile.mkdtemp(prefix="deja-hostile-"))
    repo = work / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.py").write_text("".join(f"value_{i} = compute({i})\n" for i in range(LINES)))
    git(repo, "add", "a.py")
    git(repo, "-c", "user.name=P", "-c", "user.email=p@x", "commit", "-q", "-m", "one")
    sha = git(repo, "rev-parse", "HEAD").strip()
    env = {
        **os.environ,
        "DEJA_DB": str(work / "empty.db"),
        "DEJA_ANTIGRAVITY_ROOT": str(work / "no-transcripts"),
        "HOME": str(work / "home"),
    }
    runs = {
        "blame --json": ["blame", "a.py", "--json"],
        "why": ["why", "a.py:7"],
        "report md": ["report", "HEAD", "--format", "markdown"],
        "report json": ["report", "HEAD", "--format", "json"],
        "report html": ["report", "HEAD", "--format", "html", "-o", str(work / "r.html")],
    }
    base: dict[str, tuple[float, float, int]] = {}
    failed = False
    print(f"{'note':<22} {'command':<13} {'s':>6} {'x':>6} {'MB':>6} {'x':>5}  rc")
    for name, text in cases(sha).items():
        note = work / "note.txt"
        note.write_text(text)
        git(repo, "notes", "--ref", "refs/notes/deja", "add", "-f", "-F", str(note), sha)
        for label, args in runs.items():
            wall, rss, rc = run(args, repo, env)
            if name == "well-formed":
                base[label] = (wall, rss, rc)
            b = base[label]
            failed |= rc != 0
            print(
                f"{name:<22} {label:<13} {wall:6.2f} {wall / b[0]:6.2f}"
                f" {rss:6.0f} {rss / b[1]:5.2f}  {rc}"
            )
        if (work / "r.html").exists():
            print(f"{'':<22} html page {(work / 'r.html').stat().st_size / 1e6:.2f} MB")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
