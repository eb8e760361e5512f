"""Benchmark: history without notes: `deja report`, `deja stats` and `deja stats --by`
over a real range whose commits carry no notes, against git blame, old and new side by side.

Data: `bench/realhistory.py --range` (a clone of a real repository; every
SHARE-th commit of the range replayed by a session that redoes all its hunks in
every file it changed). Each round runs, in turn (whole processes, wall and
CPU time of the process and its children):

- git blame --porcelain of each file each commit of RANGE added or changed, at
  that commit (the baseline of report; merges change nothing here);
- git blame --porcelain of every tracked file at HEAD (the baseline of stats);
- for each deja given (``--deja NAME=PYTHON``, e.g. the version before a change
  and now), with an index of its own that has no attribution cache (cold):
  ``deja report RANGE --format json``, ``deja stats --json`` cold then warm,
  ``deja stats --by month RANGE --json``;

and prints medians, the ratios to the baselines of the same round, and whether
every deja printed the same bytes. Goals: report <= 2x, stats cold <= 2x and
warm <= 0.5x.

``--annotate`` measures the history's notes instead: the baseline is git blame
--porcelain of each file each commit added or changed, at that commit, for the
commits ``deja annotate --all`` walks (HEAD's history from the first session's
start, less 10 minutes); each deja, its notes removed first, runs ``annotate
--all`` (a deja without it: ``annotate OLDEST^..HEAD``, the same commits but the
oldest's parent's side); then whether every deja wrote the same notes (the
``tool`` and ``derived_from`` fields aside). Goal: <= 3x. Then (unless
``--skip-stats``) ``deja stats --json`` of the annotated history, cold (caches
emptied, the notes kept), against git blame of every file at HEAD; goal <= 3x.

    python bench/history.py --data /tmp/range --annotate \
        --deja old=/tmp/base/.venv/bin/python --deja new=.venv/bin/python --rounds 1

    python bench/realhistory.py --source /work/.mirror/pallets+click/repo \\
        --range HEAD~46..HEAD --share 2 --out /tmp/range
    python bench/history.py --data /tmp/range --range HEAD~46..HEAD \\
        --deja old=/tmp/base/.venv/bin/python --deja new=.venv/bin/python --rounds 3
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path


def run(
    cmd: list[str], cwd: Path, env: dict[str, str], out: Path | None = None
) -> tuple[float, float]:
    """(wall, cpu of the children) of one command; its stdout into ``out``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(out or os.devnull, "wb") as fh:
        done = subprocess.run(cmd, cwd=cwd, env=env, stdout=fh, stderr=subprocess.PIPE)
    if done.returncode != 0:  # what it said, so that a failure in one round can be traced
        sys.stderr.buffer.write(done.stderr)
        raise subprocess.CalledProcessError(done.returncode, cmd)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def blame_each(
    repo: Path, specs: list[tuple[str, str]], env: dict[str, str]
) -> tuple[float, float]:
    wall = cpu = 0.0
    for rev, path in specs:
        w, c = run(["git", "blame", "--porcelain", rev, "--", path], repo, env)
        wall += w
        cpu += c
    return wall, cpu


def interpreter(deja: str) -> str:
    """``--deja NAME=PATH``: PATH is a Python with deja installed, or a source tree
    (``git worktree add DIR REV``) that this Python runs through PYTHONPATH."""
    return sys.executable if Path(deja).is_dir() else os.path.abspath(deja)  # run in the repo


def source_env(deja: str) -> dict[str, str]:
    return {"PYTHONPATH": str(Path(deja).resolve())} if Path(deja).is_dir() else {}


def git_lines(repo: Path, *args: str) -> list[str]:
    # names as they are (express has "CCTV大赛上海分赛区.txt"): git blame takes no quoted one
    cmd = ["git", "-C", str(repo), "-c", "core.quotePath=false", *args]
    out = subprocess.run(cmd, capture_output=True, check=True)
    return out.stdout.decode("utf-8", "surrogateescape").splitlines()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="realhistory.py --range's --out")
    ap.add_argument("--range", help="the range report and stats are asked about")
    ap.add_argument("--annotate", action="store_true", help="deja annotate --all instead")
    ap.add_argument(
        "--deja",
        action="append",
        required=True,
        metavar="NAME=PYTHON",
        help="a Python with deja installed, or a source tree run with this Python",
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--skip-stats", action="store_true")
    args = ap.parse_args()
    repo, root = args.data / "repo", args.data / "root"
    work = Path(tempfile.mkdtemp(prefix="deja-history-bench-"))
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "DEJA_"))}
    base_env.update(HOME=str(work), DEJA_ANTIGRAVITY_ROOT=str(root), NO_COLOR="1")
    (work / "none").mkdir()  # the other agents' roots: there, and empty
    for var in ("DEJA_CLAUDE_ROOT", "DEJA_CODEX_ROOT", "DEJA_GEMINI_ROOT"):
        base_env[var] = str(work / "none")
    dejas = dict(d.split("=", 1) for d in args.deja)
    clean: dict[str, Path] = {}
    for name, python in dejas.items():
        clean[name] = work / f"{name}-clean.db"
        env = {**base_env, **source_env(python), "DEJA_DB": str(clean[name])}
        subprocess.run(
            [interpreter(python), "-m", "deja_blame", "index", "-q"], cwd=repo, env=env, check=True
        )
    if args.annotate:
        return annotate_all(
            repo, work, base_env, dejas, clean, args.rounds, with_stats=not args.skip_stats
        )
    if not args.range:
        ap.error("--range is needed (or --annotate)")
    drop_notes(repo)  # an --annotate run before leaves them
    changed: list[tuple[str, str]] = []
    for sha in git_lines(repo, "rev-list", args.range):
        for path in git_lines(
            repo,
            "diff-tree",
            "-r",
            "--no-commit-id",
            "--name-only",
            "--diff-filter=AMR",
            "-M",
            "--root",
            sha,
        ):
            changed.append((sha, path))
    every = [("HEAD", p) for p in git_lines(repo, "ls-files")]
    commands = {
        "report": ["report", args.range, "--format", "json"],
        "stats cold": ["stats", "--json"],
        "stats warm": ["stats", "--json"],
        "stats --by": ["stats", "--by", "month", args.range, "--json"],
    }
    if args.skip_stats:
        commands = {"report": commands["report"]}
    times: dict[str, list[tuple[float, float]]] = {}
    outputs: dict[tuple[str, str], bytes] = {}
    for r in range(args.rounds):
        times.setdefault("git blame changed", []).append(blame_each(repo, changed, base_env))
        if not args.skip_stats:
            times.setdefault("git blame every", []).append(blame_each(repo, every, base_env))
        for name, python in dejas.items():
            db = work / f"{name}.db"
            fresh_index(clean[name], db)
            env = {**base_env, **source_env(python), "DEJA_DB": str(db)}
            for label, cmd in commands.items():
                if label == "stats cold":
                    clear_caches(db)  # report filled them
                out = work / f"{name}-{label.replace(' ', '_')}.out"
                times.setdefault(f"{name} {label}", []).append(
                    run([interpreter(python), "-m", "deja_blame", *cmd], repo, env, out)
                )
                outputs[(name, label)] = out.read_bytes()
        print(f"round {r + 1} done", file=sys.stderr)

    def med(key: str, k: int) -> float:
        return statistics.median(t[k] for t in times[key])

    print(f"{len(changed)} (commit, file) blames in {args.range}; {len(every)} files at HEAD")
    print(f"{'':28}{'wall s':>9}{'cpu s':>9}{'x git (wall)':>14}{'x git (cpu)':>13}")
    base_of = {"report": "git blame changed", "stats --by": "git blame changed"}
    for key in times:
        label = key.split(" ", 1)[1] if key.split(" ", 1)[0] in dejas else None
        ref = base_of.get(label or "", "git blame every") if label else None
        ratio = ""
        if ref and ref in times:
            ratio = f"{med(key, 0) / med(ref, 0):>14.2f}{med(key, 1) / med(ref, 1):>13.2f}"
        print(f"{key:28}{med(key, 0):>9.2f}{med(key, 1):>9.2f}{ratio}")
    names = list(dejas)
    for label in commands:
        same = all(outputs[(n, label)] == outputs[(names[0], label)] for n in names)
        print(f"{label}: {'the same bytes' if same else 'DIFFERENT'} from every deja")
    shutil.rmtree(work, ignore_errors=True)
    return 0


def fresh_index(clean: Path, db: Path) -> None:
    """``db`` as a copy of ``clean``, its last round's -wal and -shm removed first.

    A WAL the last round's process left beside ``db`` (SQLite keeps it where a
    connection was not closed to the end) belongs to the old file: copied over, the
    new file is read through the old round's frames, a damaged index ("database disk
    image is malformed"), and the next deja exits 1. Read through SQLite's backup,
    ``clean`` comes whole even with a WAL of its own.
    """
    for leftover in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        leftover.unlink(missing_ok=True)
    with closing(sqlite3.connect(f"{clean.resolve().as_uri()}?mode=ro", uri=True)) as src:
        with closing(sqlite3.connect(db)) as dst:
            src.backup(dst)
    db.chmod(0o600)  # as deja makes its own


def clear_caches(db: Path) -> None:
    with closing(sqlite3.connect(db, isolation_level=None)) as conn:
        for table in ("blame_cache", "attribution_cache"):
            try:
                conn.execute(f"DELETE FROM {table}")
            except sqlite3.OperationalError:
                pass


def drop_notes(repo: Path) -> None:
    """The replay's history without deja's notes nor the record of an annotate pass."""
    subprocess.run(["git", "-C", str(repo), "update-ref", "-d", "refs/notes/deja"], check=False)
    (repo / ".git" / "deja" / "history").unlink(missing_ok=True)


def first_session_start(db: Path) -> float:
    with sqlite3.connect(db) as conn:
        return float(conn.execute("SELECT min(started_epoch) FROM sessions").fetchone()[0])


def notes_text(repo: Path) -> str:
    """Every note, ``tool`` and ``derived_from`` lines aside (they differ by design)."""
    out = []
    for line in sorted(git_lines(repo, "notes", "--ref", "refs/notes/deja", "list")):
        sha = line.split()[1]
        body = git_lines(repo, "notes", "--ref", "refs/notes/deja", "show", sha)
        kept = [b.rstrip(",") for b in body if '"tool"' not in b and '"derived_from"' not in b]
        out.append(f"== {sha}\n" + "\n".join(kept))
    return "\n".join(out)


def annotate_all(
    repo: Path,
    work: Path,
    base_env: dict[str, str],
    dejas: dict[str, str],
    clean: dict[str, Path],
    rounds: int,
    with_stats: bool = False,
) -> int:
    since = int(first_session_start(next(iter(clean.values()))) - 600)
    commits = git_lines(repo, "rev-list", f"--since=@{since}", "HEAD")
    changed = [
        (sha, path)
        for sha in commits
        for path in git_lines(
            repo,
            "diff-tree",
            "-r",
            "--no-commit-id",
            "--name-only",
            "--diff-filter=AMR",
            "-M",
            "--root",
            sha,
        )
    ]
    times: dict[str, list[tuple[float, float]]] = {}
    notes: dict[str, str] = {}
    every = [("HEAD", p) for p in git_lines(repo, "ls-files")]
    stats: dict[str, bytes] = {}
    for r in range(rounds):
        times.setdefault("git blame changed", []).append(blame_each(repo, changed, base_env))
        if with_stats:
            times.setdefault("git blame every", []).append(blame_each(repo, every, base_env))
        for name, python in dejas.items():
            db = work / f"{name}.db"
            fresh_index(clean[name], db)
            env = {**base_env, **source_env(python), "DEJA_DB": str(db)}
            drop_notes(repo)
            helped = subprocess.run(
                [interpreter(python), "-m", "deja_blame", "annotate", "--help"],
                capture_output=True,
                env=env,
            ).stdout
            cmd = (
                ["annotate", "--all"]
                if b"--all" in helped
                else ["annotate", f"{commits[-1]}^..HEAD"]
            )
            times.setdefault(f"{name} {' '.join(cmd)}", []).append(
                run([interpreter(python), "-m", "deja_blame", *cmd], repo, env)
            )
            notes[name] = notes_text(repo)
            if with_stats:
                # the annotated history's stats, cold: the notes settle what they can
                clear_caches(db)
                out = work / f"{name}-stats.out"
                times.setdefault(f"{name} stats cold, noted", []).append(
                    run(
                        [interpreter(python), "-m", "deja_blame", "stats", "--json"], repo, env, out
                    )
                )
                stats[name] = out.read_bytes()
        print(f"round {r + 1} done", file=sys.stderr)

    def med(key: str, k: int) -> float:
        return statistics.median(t[k] for t in times[key])

    print(f"{len(commits)} commits, {len(changed)} (commit, file) blames")
    print(f"{'':40}{'wall s':>9}{'cpu s':>9}{'x git (wall)':>14}{'x git (cpu)':>13}")
    for key in times:
        ref = "git blame every" if key.endswith((" every", ", noted")) else "git blame changed"
        ratio = f"{med(key, 0) / med(ref, 0):>14.2f}{med(key, 1) / med(ref, 1):>13.2f}"
        print(f"{key:40}{med(key, 0):>9.2f}{med(key, 1):>9.2f}{ratio}")
    names = list(dejas)
    count = notes[names[0]].count("== ")
    same = all(notes[n] == notes[names[0]] for n in names)
    print(f"{count} notes: {'the same' if same else 'DIFFERENT'} from every deja")
    if with_stats:
        same = all(stats[n] == stats[names[0]] for n in names)
        print(
            f"{len(every)} files: stats {'the same bytes' if same else 'DIFFERENT'} from every deja"
        )
    drop_notes(repo)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
