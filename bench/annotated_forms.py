"""The forms a person types, cold, against git, on an annotated history (issue 38).

    python bench/annotated_forms.py --repo R --db INDEX --root TRANSCRIPTS \\
        [--file F] [--rounds 3] TREE [TREE ...]

For each TREE (a deja source tree with its own ``.venv``, run through ``PYTHONPATH``)
and each form, alternated tree by tree within a round, the caches emptied before every
deja run (``blame_cache``, ``attribution_cache`` and ``.git/deja/answered``, as
``bench/blame.py`` empties them): ``deja blame F``, ``deja blame F --json``,
``deja blame -L 100,140 F`` and ``deja why F:N`` at seven lines spread over the file,
each with the index's refresh (what a person's command does), beside its git baseline
run in the same round (``git blame --porcelain F``, with ``-L 100,140``, with
``-L N,N``). CPU of the process and its children (``wait4``); medians over the rounds
(the seven whys pooled). Prints one line per form: git's CPU, each tree's and its
ratio. The trees share the index (same schema); nothing else is written but the caches.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
from pathlib import Path


def cpu(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    """CPU seconds of ``cmd`` and its children, its output dropped."""
    pid = os.fork()
    if pid == 0:
        os.chdir(cwd)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.execvpe(cmd[0], cmd, env)
    _, status, usage = os.wait4(pid, 0)
    if status != 0:
        print(f"failed ({status}): {' '.join(cmd)}", file=sys.stderr)
    return usage.ru_utime + usage.ru_stime


def empty_caches(db: Path, repo: Path) -> None:
    (repo / ".git" / "deja" / "answered").unlink(missing_ok=True)
    with sqlite3.connect(db) as conn:
        for table in ("blame_cache", "attribution_cache"):
            conn.execute(f"DELETE FROM {table}")
    conn.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, required=True, help="the annotated repository")
    ap.add_argument("--db", type=Path, required=True, help="its index (DEJA_DB)")
    ap.add_argument("--root", type=Path, required=True, help="DEJA_ANTIGRAVITY_ROOT")
    ap.add_argument("--home", type=Path, help="HOME for deja (default: beside the index)")
    ap.add_argument("--file", default="src/click/core.py")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--forms", default="text,json,L,why")
    ap.add_argument("trees", nargs="+", type=Path)
    args = ap.parse_args()
    f, repo = args.file, args.repo.resolve()
    total = len((repo / f).read_text().split("\n")) - 1
    probes = [max(1, total * q // 8) for q in range(1, 8)]
    home = args.home or args.db.parent
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DEJA_", "PYTHON"))}
    base.update(
        HOME=str(home),
        DEJA_DB=str(args.db.resolve()),
        DEJA_ANTIGRAVITY_ROOT=str(args.root.resolve()),
        DEJA_SERVER="0",
        NO_COLOR="1",
    )
    deja = {
        "text": [["blame", f]],
        "json": [["blame", f, "--json"]],
        "L": [["blame", "-L", "100,140", f]],
        "why": [["why", f"{f}:{n}"] for n in probes],
    }
    git = {
        "text": [["git", "blame", "--porcelain", f]],
        "json": [["git", "blame", "--porcelain", f]],
        "L": [["git", "blame", "--porcelain", "-L", "100,140", f]],
        "why": [["git", "blame", "--porcelain", "-L", f"{n},{n}", f] for n in probes],
    }
    forms = args.forms.split(",")
    spent: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for form in forms:
            for k, asked in enumerate(deja[form]):
                spent.setdefault((form, "git"), []).append(cpu(git[form][k], base, repo))
                for tree in args.trees:
                    env = {**base, "PYTHONPATH": str(tree.resolve())}
                    empty_caches(args.db, repo)
                    python = str(tree / ".venv" / "bin" / "python")
                    took = cpu([python, "-m", "deja_blame", *asked], env, repo)
                    spent.setdefault((form, str(tree)), []).append(took)
    for form in forms:
        g = statistics.median(spent[(form, "git")])
        row = f"{form:5} git {g * 1000:5.0f} ms"
        for tree in args.trees:
            m = statistics.median(spent[(form, str(tree))])
            row += f" | {tree.name} {m * 1000:5.0f} ms {m / g:5.2f}x"
        print(row, flush=True)


if __name__ == "__main__":
    main()
