"""Benchmark: the first `deja blame` with an empty index and >= 1 GB of transcripts of
which a small share concerns the repository, against a bare orjson pass of the same bytes.

Builds (once, cached under --out): the unrelated transcripts (``ingest.py``'s
generator, --mb MB over --sessions sessions of other projects) and a real file's
history replayed by --replay sessions (``realhistory.py``, a clone of --real).
Then, alternated, --runs times:

- the floor: every line of every transcript read and ``orjson.loads``-ed, one process;
- ``deja blame FILE --json`` with an empty index (what a heavy user's first
  blame does), with this checkout's deja and, with ``--old DIR`` (a checkout
  of another commit), with that one too, each answer saved for comparison;
- with ``--index``: ``deja index --jobs 1`` of everything into an empty index
  (in one process: its CPU is all of its work), and the index's size; then
  ``deja blame FILE --json`` from that complete index with ``DEJA_NO_CACHE=1``:
  what the answer costs once nothing is left to read, the least any first
  answer that computes it can cost (its lines must be the first answer's).

Wall and CPU seconds (the process's own, from wait4), medians, as ratios to the
floor's. With ``--old``, the answers of both are compared: the blame's lines,
and after ``--index`` also ``sessions --json``, ``show --json`` of four sessions and
``why --json`` of five lines.

    python bench/first_answer.py --real /path/to/click --file src/click/core.py \\
        --sessions 400 --mb 100 --old /tmp/deja-old --runs 3 --index

Goals (issue 38): the first blame <= 3x the floor; deja index >= 20 % of its speed;
the index <= 15 % of the transcripts. Disk: about --mb MB under --out (delete it after).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ingest import floor_pass, generate  # noqa: E402
from realhistory import build as build_replay  # noqa: E402


def _env(pythonpath: Path, db: Path, roots: list[Path]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEJA_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as in an installed deja
    return {
        **env,
        "DEJA_DB": str(db),
        "DEJA_ANTIGRAVITY_ROOT": os.pathsep.join(map(str, roots)),
        "NO_COLOR": "1",
        "PYTHONPATH": str(pythonpath),
    }


def deja(env: dict[str, str], cwd: Path, *args: str) -> tuple[float, float, bytes]:
    """(wall s, CPU s, stdout) of one deja command."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "deja_blame", *args], env=env, cwd=cwd, stdout=out, stderr=err
        )
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"deja {' '.join(args)} failed: {err.read().decode()[-500:]}")
        return elapsed, usage.ru_utime + usage.ru_stime, out.read()


def empty(db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)


def first_blame(
    pythonpath: Path, db: Path, roots: list[Path], repo: Path, file: str
) -> tuple[float, float, bytes]:
    empty(db)
    return deja(_env(pythonpath, db, roots), repo, "blame", file, "--json")


def full_index(pythonpath: Path, db: Path, roots: list[Path], repo: Path) -> tuple[float, float]:
    empty(db)
    wall, cpu, _ = deja(_env(pythonpath, db, roots), repo, "index", "--jobs", "1", "--json")
    return wall, cpu


def complete_blame(
    pythonpath: Path, db: Path, roots: list[Path], repo: Path, file: str
) -> tuple[float, float, bytes]:
    """``deja blame FILE --json`` from the complete index ``full_index`` left, the
    attribution cache not read: the answer's own cost, with nothing left to index."""
    env = {**_env(pythonpath, db, roots), "DEJA_NO_CACHE": "1"}
    return deja(env, repo, "blame", file, "--json")


def answers(pythonpath: Path, db: Path, roots: list[Path], repo: Path, file: str) -> list[bytes]:
    """What scripts read from the full index: sessions, show of four, why of five lines."""
    env = _env(pythonpath, db, roots)
    out = [deja(env, repo, "sessions", "--json")[2]]
    listed = json.loads(out[0])["sessions"]
    ids = sorted(s["session_id"] for s in listed)
    for sid in ids[:: max(1, len(ids) // 4)][:4]:
        out.append(deja(env, repo, "show", sid, "--json")[2])
    n = len((repo / file).read_text(errors="replace").splitlines())
    for k in range(1, 6):
        out.append(deja(env, repo, "why", f"{file}:{k * n // 6}", "--json")[2])
    return out


def lines_of(doc: bytes) -> list[object]:
    return list(json.loads(doc)["lines"])


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--real", type=Path, required=True, help="a git repository with history")
    ap.add_argument("--file", default="src/click/core.py")
    ap.add_argument("--replay", type=int, default=1000, help="sessions replaying the file")
    ap.add_argument("--sessions", type=int, default=4000, help="unrelated sessions")
    ap.add_argument("--mb", type=int, default=1100, help="MB of unrelated transcripts")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--old", type=Path, help="a checkout of the deja to compare with")
    ap.add_argument("--out", type=Path, default=HERE / "out" / "first_answer")
    ap.add_argument("--index", action="store_true", help="also deja index of everything")
    args = ap.parse_args()
    generate(args.out / "unrelated", args.sessions, args.mb, 7)
    replay = args.out / "replay"
    build_replay(replay, args.real, args.file, args.replay)
    roots = [args.out / "unrelated" / "root", replay / "root"]
    repo = replay / "repo"
    versions = {"new": HERE.parent}
    if args.old is not None:
        versions["old"] = args.old
    times: dict[str, list[float]] = {}
    answers_of: dict[str, list[object]] = {}
    sizes: dict[str, int] = {}
    same_as_complete: dict[str, bool] = {}
    total = 0

    def note(key: str, value: float) -> None:
        times.setdefault(key, []).append(value)

    for r in range(args.runs):
        took = 0.0
        cpu_start = time.process_time()
        total = 0
        for root in roots:
            t, size, _ = floor_pass(root)
            took += t
            total += size
        note("floor", took)
        note("floor cpu", time.process_time() - cpu_start)
        order = list(versions) if r % 2 == 0 else list(reversed(versions))
        for v in order:
            db = args.out / f"index-{v}.db"
            t, cpu, doc = first_blame(versions[v], db, roots, repo, args.file)
            note(f"blame {v}", t)
            note(f"blame {v} cpu", cpu)
            answers_of[v] = lines_of(doc)
            print(
                f"run {r + 1}: {v} blame {t:.2f} s ({cpu:.2f} s CPU), floor {took:.2f} s",
                file=sys.stderr,
            )
            if args.index:
                t, cpu = full_index(versions[v], db, roots, repo)
                note(f"index {v}", t)
                note(f"index {v} cpu", cpu)
                sizes[v] = db.stat().st_size
                print(f"run {r + 1}: {v} index {t:.2f} s ({cpu:.2f} s CPU)", file=sys.stderr)
                t, cpu, doc = complete_blame(versions[v], db, roots, repo, args.file)
                note(f"complete {v}", t)
                note(f"complete {v} cpu", cpu)
                same_as_complete[v] = same_as_complete.get(v, True) and (
                    lines_of(doc) == answers_of[v]
                )
                print(
                    f"run {r + 1}: {v} blame from the complete index {t:.2f} s ({cpu:.2f} s CPU)",
                    file=sys.stderr,
                )
    med = {k: statistics.median(x) for k, x in times.items()}
    print(f"\n{total / 1e6:.0f} MB of transcripts; medians of {args.runs} alternated runs")
    print(f"{'':30}{'wall s':>8}{'x floor':>9}{'CPU s':>8}{'x floor':>9}")

    def row(name: str, key: str, inverse: bool = False) -> None:
        wall, cpu = med[key], med[key + " cpu"]
        wr = med["floor"] / wall if inverse else wall / med["floor"]
        cr = med["floor cpu"] / cpu if inverse else cpu / med["floor cpu"]
        print(f"{name:30}{wall:>8.2f}{wr:>9.2f}{cpu:>8.2f}{cr:>9.2f}")

    row("orjson pass (floor)", "floor")
    for v in versions:
        row(f"first deja blame, {v}", f"blame {v}")
    for v in versions:
        if f"complete {v}" in med:
            row(f"blame, complete index, {v}", f"complete {v}")
    for v in versions:
        if f"index {v}" in med:
            row(f"deja index, {v} (speed)", f"index {v}", inverse=True)
            print(
                f"{'index size, ' + v:30}{sizes[v] / 1e6:>8.1f} MB, {sizes[v] / total:.1%} of the transcripts"
            )
    for v, same in same_as_complete.items():
        print(f"first answer's lines the same as from the complete index, {v}: {same}")
    if "old" in answers_of:
        print(f"blame lines the same as {args.old}'s: {answers_of['old'] == answers_of['new']}")
        if args.index:
            same = answers(
                versions["old"], args.out / "index-old.db", roots, repo, args.file
            ) == answers(versions["new"], args.out / "index-new.db", roots, repo, args.file)
            print(f"sessions, show and why the same as {args.old}'s: {same}")


if __name__ == "__main__":
    main()
