"""Benchmark: ``deja export --format rows`` over a real 400-commit history, against
``git blame`` of each file each commit changed, at that commit.

Data: a clone of a real repository (default: click, fetched into
``/work/.mirror``); the range is the newest first-parent span holding at least
``--commits`` commits. Every commit of the range gets a deja note, as in an
organisation's CI after ``deja notes fetch`` (no transcripts there): half of the
lines each commit added to each file are given to one of six sessions (by the
commit), the rest stay people's. The notes are written with deja's own library
(``write_notes``), as ``deja annotate`` stores them.

Each round runs, in turn, whole processes (wall, and CPU of the children):

- the baseline: ``git blame --porcelain REV -- PATH`` for each file each commit
  of the range added or changed (renames followed), one after another;
- ``deja export --format rows RANGE`` (an empty index: the notes only);
- ``deja export --format agent-trace RANGE`` (the same per-commit attribution,
  without the blame at the tip), for reference;

the order alternating between rounds. It prints medians, the ratios to the
baseline, and whether every round's rows were the same bytes. Goal: rows <= 2x.

    .venv/bin/python bench/rows.py                      # click, 400 commits, 3 rounds
    .venv/bin/python bench/rows.py --commits 100 --rounds 1
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from deja_blame.gitutil import open_repository  # noqa: E402
from deja_blame.notes.schema import Note, set_lines  # noqa: E402
from deja_blame.notes.store import write_notes  # noqa: E402

SESSIONS = [f"{i:08x}-0000-4000-8000-bench0000000{i}" for i in range(1, 7)]
AGENTS = ["claude-code", "codex", "antigravity"]
MODELS = ["claude-sonnet-4-5", "gpt-5-codex", "gemini-3-pro"]


def run(
    cmd: list[str], cwd: Path, env: dict[str, str], out: Path | None = None
) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(out or os.devnull, "wb") as fh:
        subprocess.run(cmd, cwd=cwd, env=env, stdout=fh, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def git_lines(repo: Path, *args: str) -> list[str]:
    out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True)
    return out.stdout.decode("utf-8", "surrogateescape").splitlines()


def choose_range(repo: Path, commits: int) -> str:
    firsts = git_lines(repo, "rev-list", "--first-parent", "HEAD")
    lo, hi = 1, len(firsts) - 1
    while lo < hi:  # the shortest first-parent span holding >= commits commits
        mid = (lo + hi) // 2
        n = len(git_lines(repo, "rev-list", f"{firsts[mid]}..HEAD"))
        lo, hi = (mid + 1, hi) if n < commits else (lo, mid)
    return f"{firsts[lo]}..HEAD"


def write_bench_notes(repo: Path, spec: str) -> int:
    """Half of each commit's added lines in each file to one session."""
    from deja_blame.attribution.commit import introduced_lines

    r = open_repository(repo)
    notes: dict[str, Note | None] = {}
    for sha in git_lines(repo, "rev-list", spec):
        commit = r[sha]
        k = int(hashlib.sha1(sha.encode()).hexdigest()[:8], 16)
        sid = SESSIONS[k % len(SESSIONS)]
        note = Note(commit=sha, tool="deja-blame bench")
        for path, lines in introduced_lines(r, commit).items():  # type: ignore[arg-type]
            mine = sorted(lines)[: len(lines) // 2]
            if mine:
                set_lines(note, path, {n: (sid, 0.95, commit.commit_time) for n in mine})  # type: ignore[attr-defined]
        if note.files:
            i = SESSIONS.index(sid) % len(AGENTS)
            note.sessions = {sid: {"agent": AGENTS[i], "model": MODELS[i]}}
            notes[sha] = note
    write_notes(r, notes, "bench: notes")
    return len(notes)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--source", type=Path, default=Path("/work/.mirror/pallets+click/repo"))
    ap.add_argument("--commits", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--python", default=sys.executable, help="the deja to time")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="deja-rows-bench-"))
    repo = work / "repo"
    subprocess.run(["git", "clone", "-q", str(args.source), str(repo)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "DEJA_"))}
    (work / "none").mkdir()
    env.update(HOME=str(work), NO_COLOR="1", DEJA_DB=str(work / "index.db"),
               GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="b@example.com",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="b@example.com")  # fmt: skip
    for var in ("DEJA_ANTIGRAVITY_ROOT", "DEJA_CLAUDE_ROOT", "DEJA_CODEX_ROOT", "DEJA_GEMINI_ROOT"):
        env[var] = str(work / "none")
    os.environ.update({k: v for k, v in env.items() if k.startswith("GIT_")})
    spec = choose_range(repo, args.commits)
    shas = git_lines(repo, "rev-list", spec)
    noted = write_bench_notes(repo, spec)
    changed: list[tuple[str, str]] = []
    for sha in shas:
        for path in git_lines(
            repo, "diff-tree", "-r", "--no-commit-id", "--name-only", "--diff-filter=AMR",
            "-M", "--root", sha,
        ):  # fmt: skip
            changed.append((sha, path))
    print(f"{len(shas)} commits ({spec}), {noted} with notes, {len(changed)} file versions",
          file=sys.stderr)  # fmt: skip

    def baseline() -> tuple[float, float]:
        wall = cpu = 0.0
        for rev, path in changed:
            w, c = run(["git", "blame", "--porcelain", rev, "--", path], repo, env)
            wall, cpu = wall + w, cpu + c
        return wall, cpu

    deja = [args.python, "-m", "deja_blame"]
    runs = {
        "git blame changed": baseline,
        "deja export rows": lambda: run([*deja, "export", "--format", "rows", spec], repo, env,
                                        work / f"rows-{time.monotonic_ns()}.jsonl"),
        "deja export agent-trace": lambda: run([*deja, "export", spec], repo, env),
    }  # fmt: skip
    run([*deja, "index", "-q"], repo, env)  # the (empty) index exists: not timed
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in runs}
    order = list(runs)
    for r in range(args.rounds):
        for name in order if r % 2 == 0 else list(reversed(order)):
            times[name].append(runs[name]())
        print(f"round {r + 1} done", file=sys.stderr)
    outs = {p.read_bytes() for p in work.glob("rows-*.jsonl")}
    rows = len(next(iter(outs)).splitlines()) if outs else 0
    base = statistics.median(w for w, _ in times["git blame changed"])
    base_cpu = statistics.median(c for _, c in times["git blame changed"])
    print(f"\n{'':26} {'wall s':>8} {'cpu s':>8} {'x wall':>7} {'x cpu':>7}")
    for name, ts in times.items():
        w = statistics.median(x for x, _ in ts)
        c = statistics.median(y for _, y in ts)
        print(f"{name:26} {w:8.2f} {c:8.2f} {w / base:7.2f} {c / base_cpu:7.2f}")
    print(f"\n{rows} rows; every round's rows the same bytes: {len(outs) == 1}")
    ratio = statistics.median(w for w, _ in times["deja export rows"]) / base
    shutil.rmtree(work, ignore_errors=True)
    return 0 if ratio <= 2.0 and len(outs) == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
