"""Benchmark: cold `deja stats --json` of two trees of deja, alternated, against git blame.

Each round runs, in turn, on the repository ``--repo`` (its working tree as it is):

- ``git blame --porcelain FILE`` for every tracked file, one after another (the baseline)
- for each ``--tree`` (a checkout of deja with its own ``.venv``), cold: the index
  ``--db`` copied afresh, the repository's ``.git/deja`` removed, then
  ``python -m deja_blame stats --json``

and prints each run's CPU (user + system of the process and its children, the
figure two busy cores make steadier than wall time), its peak resident memory, and
the CPU's ratio to the baseline of the same round; at the end, whether every run's
JSON is byte for byte the first tree's. Give each tree an index of its own schema
(``--db`` once per tree) where they differ: an upgrade in the run costs CPU and
memory (entireio's 12 -> 13: 163 MB peak). ``--env KEY=VALUE`` sets the transcript
roots (``DEJA_CLAUDE_ROOT=...``) and anything else the index needs; HOME is a
fresh folder unless given.

    python bench/stats_pair.py --repo /tmp/x/entire-cli --db /tmp/x/index.db \\
        --env DEJA_CLAUDE_ROOT=/tmp/x/claude/projects --tree /tmp/old --tree . --rounds 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from history import fresh_index  # noqa: E402


def run(cmd: list[str] | str, cwd: Path, env: dict[str, str], out: Path) -> tuple[float, float]:
    """(CPU seconds of the process and its children, peak RSS in MB) of one command."""
    with out.open("wb") as sink:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdout=sink,
            stderr=subprocess.DEVNULL,
            shell=isinstance(cmd, str),
        )
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {cmd}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument(
        "--db",
        type=Path,
        action="append",
        required=True,
        help="the index of the repository's sessions (once, or once per --tree, in their order:"
        " each tree's schema, so that no run upgrades it)",
    )
    ap.add_argument("--tree", type=Path, action="append", required=True, help="a deja checkout")
    ap.add_argument("--env", action="append", default=[], help="KEY=VALUE for deja's runs")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if len(args.db) not in (1, len(args.tree)):
        ap.error("--db once, or once per --tree")
    dbs = args.db * len(args.tree) if len(args.db) == 1 else args.db
    for tree in args.tree:
        if not (tree / "deja_blame" / "__pycache__").is_dir():
            # the runs never write bytecode: a tree without it compiles its modules in
            # every run (about 0.2 s of CPU for stats' 133), the other tree does not
            print(
                f"warning: {tree} has no compiled bytecode; its runs compile deja's"
                " modules each time (python -m compileall -q TREE/deja_blame first)",
                file=sys.stderr,
            )
    work = Path(tempfile.mkdtemp(prefix="deja-stats-pair-"))
    env = {**os.environ, "HOME": str(work), "DEJA_SERVER": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    env.update(item.split("=", 1) for item in args.env)
    baseline = "git ls-files -z | xargs -0 -n1 git blame --porcelain -- >/dev/null"
    cpu: dict[str, list[float]] = {}
    ratio: dict[str, list[float]] = {}
    peak: dict[str, list[float]] = {}
    outputs: list[Path] = []
    for n in range(args.rounds):
        git, _ = run(baseline, args.repo, env, work / "git.out")
        print(f"round {n + 1}: git blame of every file {git:.2f} s", flush=True)
        for k, tree in enumerate(args.tree):
            tree = tree.resolve()
            db = work / "run.db"
            fresh_index(dbs[k], db)  # never over a WAL the last run left
            shutil.rmtree(args.repo / ".git" / "deja", ignore_errors=True)
            out = work / f"stats-{n}-{k}.json"
            spent, rss = run(
                [str(tree / ".venv" / "bin" / "python"), "-m", "deja_blame", "stats", "--json"],
                args.repo,
                {**env, "DEJA_DB": str(db), "PYTHONPATH": str(tree)},
                out,
            )
            outputs.append(out)
            name = str(tree)
            cpu.setdefault(name, []).append(spent)
            ratio.setdefault(name, []).append(spent / git)
            peak.setdefault(name, []).append(rss)
            print(
                f"  {name}: {spent:.2f} s CPU ({spent / git:.2f}x), peak {rss:.1f} MB", flush=True
            )
    for name in cpu:
        print(
            f"{name}: median {statistics.median(cpu[name]):.2f} s CPU, "
            f"{statistics.median(ratio[name]):.2f}x git blame, "
            f"peak {min(peak[name]):.1f}-{max(peak[name]):.1f} MB"
        )
    first = outputs[0].read_bytes()
    same = all(out.read_bytes() == first for out in outputs)
    print("every run's JSON the same" if same else "JSON DIFFERS between runs")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
