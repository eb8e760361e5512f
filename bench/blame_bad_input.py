"""Benchmark: deja blame on the files that break matchers, beside git blame.

Three repositories, built once under --out:

- ``huge``: a 100,000-line file of real code (a real file repeated; pass one
  with --code, default: deja's own matcher), 200 sessions each writing a
  40-line block of it, committed by a person;
- ``trivial``: 30,000 lines that are all blank or ``}``, 1,000 sessions that
  wrote blank lines and braces;
- ``same-line``: 10,000 sessions that each wrote ``return None`` into a file
  that holds it 2,000 times.

For each: ``git blame --porcelain``, then ``deja blame --json`` cold (caches
emptied) and warm, with the peak RSS of each deja process. The point is that
time stays linear in the file's length and memory bounded.

    python bench/blame_bad_input.py
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from realhistory import write_session  # noqa: E402

T0 = 1_767_225_600


def _commit(repo: Path, when: int) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": f"{when} +0000",
        "GIT_COMMITTER_DATE": f"{when} +0000",
        "GIT_AUTHOR_NAME": "Person",
        "GIT_AUTHOR_EMAIL": "p@example.com",
        "GIT_COMMITTER_NAME": "Person",
        "GIT_COMMITTER_EMAIL": "p@example.com",
    }
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "work"], check=True, env=env)


def _block_hunk(lines: list[str], start: int, length: int) -> str:
    body = [f"@@ -{start + 1},0 +{start + 1},{length} @@"]
    body += ["+" + x for x in lines[start : start + length]]
    return "\n".join(body)


def build(out: Path, case: str, code: Path) -> Path:
    base = out / case
    if (base / "ready").exists():
        return base
    shutil.rmtree(base, ignore_errors=True)
    repo, root = base / "repo", base / "root"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    ws = str(repo.resolve())
    rng = random.Random(5)
    if case == "huge":
        real = code.read_text(encoding="utf-8").splitlines()
        lines = (real * (100_000 // len(real) + 1))[:100_000]
        sessions = [(f"huge{s:05d}", rng.randrange(0, len(lines) - 40), 40) for s in range(200)]
    elif case == "trivial":
        lines = [rng.choice(["", "}", "", "    }"]) for _ in range(30_000)]
        sessions = [(f"triv{s:05d}", rng.randrange(0, len(lines) - 30), 30) for s in range(1_000)]
    else:
        lines = ["def f():", "    return None", ""] * 2_000
        sessions = [(f"same{s:05d}", 3 * rng.randrange(0, 2_000), 2) for s in range(10_000)]
    name = "big.py"
    for k, (sid, start, length) in enumerate(sessions):
        full = f"{sid}-0000-4000-8000-{k:012d}"
        hunk = _block_hunk(lines, start, length)
        write_session(root, full, T0 + k, ws, f"{ws}/{name}", name, [hunk], "Add the block.")
    (repo / name).write_text("\n".join(lines) + "\n")
    _commit(repo, T0 + len(sessions) + 600)
    (base / "ready").write_text("")
    return base


def _peak(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {err.decode()[-400:]}")
    return time.perf_counter() - start, usage.ru_maxrss // 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=HERE / "out" / "bad-input")
    ap.add_argument(
        "--code", type=Path, default=HERE.parent / "deja_blame" / "attribution" / "matcher.py"
    )
    ap.add_argument("--cases", default="huge,trivial,same-line")
    args = ap.parse_args()
    deja = [sys.executable, "-m", "deja_blame"]
    print(
        f"{'case':>10}{'lines':>9}{'sessions':>10}{'git s':>8}{'cold s':>8}{'MB':>6}{'warm s':>8}{'MB':>6}"
    )
    for case in args.cases.split(","):
        base = build(args.out, case, args.code)
        repo, db = base / "repo", base / "index.db"
        env = {
            **os.environ,
            "DEJA_DB": str(db),
            "DEJA_ANTIGRAVITY_ROOT": str(base / "root"),
            "NO_COLOR": "1",
        }
        subprocess.run([*deja, "index", "-q"], env=env, check=True, cwd=repo)
        with sqlite3.connect(db) as conn:
            sessions = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
            conn.execute("DELETE FROM blame_cache")
            conn.execute("DELETE FROM attribution_cache")
        g, _ = _peak(["git", "blame", "--porcelain", "big.py"], env, repo)
        c, c_mb = _peak([*deja, "blame", "big.py", "--json", "--no-refresh"], env, repo)
        w, w_mb = _peak([*deja, "blame", "big.py", "--json", "--no-refresh"], env, repo)
        n = sum(1 for _ in open(repo / "big.py", encoding="utf-8"))
        print(f"{case:>10}{n:>9}{sessions:>10}{g:>8.2f}{c:>8.2f}{c_mb:>6}{w:>8.2f}{w_mb:>6}")


if __name__ == "__main__":
    main()
