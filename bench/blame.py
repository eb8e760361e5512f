"""Benchmark: `deja blame --json` against `git blame --porcelain`, side by side.

Builds (once, cached under --out) a deterministic repository with a long
history: COMMITS commits touching one LINES-line file, every third commit's
lines written by an agent session (a real-format transcript per session, 1,000
by default), the rest by a person. Then times, on the same file:

- git blame --porcelain FILE                      (the baseline)
- deja blame FILE --json, cold (blame cache empty)  goal: <= 1.5x the baseline
- deja blame FILE --json, warm (nothing changed)    goal: <= 0.5x the baseline

and checks the attribution found (how many lines went to sessions, and that
they are the ones the agent commits introduced).

    python bench/blame.py                  # 3,000 commits, 4,000 lines, 1,000 sessions
    python bench/blame.py --commits 300 --sessions 100   # a quick look

Real-code mode (``--real SOURCE_REPO --file PATH``): a clone of a real
repository, with sessions replaying the hunks of PATH's real history minutes
before each commit (``bench/realhistory.py``), for each ``--sessions`` count:

- deja blame --json, cold and warm, against git blame --porcelain
- deja why FILE:N against git blame -L N,N --porcelain (N: lines spread over the
  file), warm (after a blame of the file) and cold (no cache: git blame -L around N)
- deja annotate --dry-run of the newest commit that changed the file
- the peak RSS of each deja process

    python bench/blame.py --real ~/src/click --file src/click/core.py --sessions 100,1000,5000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

T0 = 1_767_225_600  # 2026-01-01T00:00:00Z


OUT = Path(__file__).resolve().parent / "out"


def iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def build(out: Path, commits: int, lines: int, sessions: int, seed: int = 7) -> dict[str, object]:
    repo, root = out / "repo", out / "root"
    meta = out / "meta.json"
    if meta.exists():
        info = json.loads(meta.read_text())
        if info.get("args") == [commits, lines, sessions, seed]:
            return info
    shutil.rmtree(out, ignore_errors=True)
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    rng = random.Random(seed)
    content = [f"line_{i} = compute({i}, 'seed')" for i in range(lines)]
    agent_every = max(1, commits // max(1, sessions))
    target = repo / "src" / "big.py"
    stream = bytearray()
    agent_lines: dict[str, int] = {}
    n_sessions = 0
    for k in range(commits):
        when = T0 + k * 600
        changed: list[tuple[int, str]] = []
        for _ in range(rng.randint(1, 4)):
            j = rng.randrange(len(content))
            new = f"value_{k}_{j} = transform({k}, {j}, {rng.randint(0, 10**6)})"
            content[j] = new
            changed.append((j, new))
        by_agent = k % agent_every == 0 and n_sessions < sessions
        if by_agent:
            sid = f"bench-{n_sessions:04d}-{k:05d}"
            n_sessions += 1
            write_session(root, sid, str(target), changed, when - 300)
            for _, text in changed:
                agent_lines[text] = k
        data = ("\n".join(content) + "\n").encode()
        msg = f"commit {k}".encode()
        stream += b"commit refs/heads/main\n"
        stream += f"committer Bench <b@example.com> {when} +0000\n".encode()
        stream += b"data %d\n%s\n" % (len(msg), msg)
        stream += b"M 100644 inline src/big.py\ndata %d\n%s\n" % (len(data), data)
    subprocess.run(
        ["git", "-C", str(repo), "fast-import", "--quiet"], input=bytes(stream), check=True
    )
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-f", "main"], check=True)
    subprocess.run(["git", "-C", str(repo), "gc", "-q"], check=True)
    survivors = sum(1 for line in content if line in agent_lines)
    info = {
        "args": [commits, lines, sessions, seed],
        "sessions": n_sessions,
        "agent_lines_at_head": survivors,
    }
    meta.write_text(json.dumps(info))
    return info


def write_session(
    root: Path, sid: str, path: str, changed: list[tuple[int, str]], at: float
) -> None:
    logs = root / "brain" / sid / ".system_generated" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    recs: list[dict[str, object]] = [
        {
            "step_index": 0,
            "source": "USER_EXPLICIT",
            "type": "USER_INPUT",
            "created_at": iso(at - 60),
            "content": f"<USER_REQUEST>Update the values for {sid}</USER_REQUEST>",
        },
    ]
    step = 1
    for j, text in changed:
        recs.append(
            {
                "step_index": step,
                "source": "MODEL",
                "type": "PLANNER_RESPONSE",
                "created_at": iso(at),
                "content": "Updating.",
                "tool_calls": [
                    {"name": "replace_file_content", "args": {"TargetFile": json.dumps(path)}}
                ],
            }
        )
        block = f"@@ -{j + 1},1 +{j + 1},1 @@\n-old\n+{text}"
        recs.append(
            {
                "step_index": step + 1,
                "source": "MODEL",
                "type": "CODE_ACTION",
                "status": "DONE",
                "created_at": iso(at + 1),
                "content": f"The following changes were made by the replace_file_content tool to: {path}."
                f" If relevant, proactively run terminal commands.\n[diff_block_start]\n{block}\n[diff_block_end]",
            }
        )
        step += 2
    (logs / "transcript.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()[-500:]}")
    return elapsed, proc.stdout


def _peak(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, bytes]:
    wall, _, rss, out = _run(cmd, env, cwd)
    return wall, rss, out


def _run(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int, bytes]:
    """(wall, CPU (user + sys of the process and the children it waited for), peak RSS
    in KB, stdout) of one command, from ``wait4``: CPU is the figure a busy machine
    leaves alone."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    chunks = []
    assert proc.stdout is not None
    while True:
        b = proc.stdout.read(1 << 16)
        if not b:
            break
        chunks.append(b)
    err = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {err.decode()[-500:]}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, b"".join(chunks)


def _clear_caches(db: Path, repo: Path | None = None) -> None:
    """Every cached answer gone, and with them the hint that one is cached (a cold
    blame's git blame is started ahead again, as on a first question)."""
    import sqlite3

    if repo is not None:
        (repo / ".git" / "deja" / "answered").unlink(missing_ok=True)

    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        for t in ("blame_cache", "attribution_cache"):
            if t in tables:
                conn.execute(f"DELETE FROM {t}")


def _annotated(
    deja: list[str], env: dict[str, str], repo: Path, db: Path, file: str, runs: int, doc: bytes
) -> dict[str, float]:
    """``deja annotate --all`` of the replay's history, then cold blames (caches emptied)
    against git blame, side by side, which a note lookup answers; the notes are removed
    after (the replay is reused)."""
    t = time.perf_counter()
    subprocess.run([*deja, "annotate", "--all", "--no-refresh"], env=env, cwd=repo, check=True)
    took = time.perf_counter() - t
    g, cold = [], []
    out = b""
    try:
        for _ in range(runs):
            g.append(timed(["git", "blame", "--porcelain", file], env, repo)[0])
            _clear_caches(db)
            c, _, out = _peak([*deja, "blame", file, "--json", "--no-refresh"], env, repo)
            cold.append(c)
    finally:
        subprocess.run(["git", "-C", str(repo), "update-ref", "-d", "refs/notes/deja"], check=False)
        (repo / ".git" / "deja" / "history").unlink(missing_ok=True)  # the pass's record
        _clear_caches(db)

    def sessions(data: bytes) -> list[object]:
        return [x["session"] for x in json.loads(data)["lines"]]

    med = statistics.median
    return {
        "annotate_all": took,
        "noted_git": med(g),
        "noted_cold": med(cold),
        "noted_same": float(sessions(out) == sessions(doc)),
    }


Timing = tuple[float, float]  # (wall, CPU) of one process


def _round(
    deja: list[str],
    env: dict[str, str],
    repo: Path,
    db: Path,
    file: str,
    probe: list[int],
    newest: str,
) -> tuple[dict[str, list[Timing]], int, bytes]:
    """One round of every measure for one deja, each beside its git baseline run just
    before it: (timings by measure, peak RSS in KB, the cold blame's JSON)."""
    t: dict[str, list[Timing]] = {}
    rss = 0
    doc = b""

    served = env.get("DEJA_SERVER") != "0" and "XDG_RUNTIME_DIR" in env

    def run(key: str, cmd: list[str]) -> bytes:
        nonlocal rss
        before = _server_cpu(deja, env) if served and cmd[0] != "git" else 0.0
        wall, cpu, peak, out = _run(cmd, env, repo)
        if served and cmd[0] != "git":
            cpu += _server_cpu(deja, env) - before  # the fork that ran it
        t.setdefault(key, []).append((wall, cpu))
        if cmd[0] != "git":
            rss = max(rss, peak)
        return out

    blame = [*deja, "blame", file, "--json", "--no-refresh"]
    run("git", ["git", "blame", "--porcelain", file])
    _clear_caches(db, repo)
    doc = run("cold", blame)
    run("warm", blame)
    _clear_caches(db, repo)
    for ln in probe:
        run("why_cold", [*deja, "why", f"{file}:{ln}"])
    _run(blame, env, repo)
    for ln in probe:
        run("git_L", ["git", "blame", "-L", f"{ln},{ln}", "--porcelain", file])
        run("why", [*deja, "why", f"{file}:{ln}"])
    run("annotate", [*deja, "annotate", newest, "--dry-run", "--no-refresh"])
    return t, rss, doc


def _server_cpu(deja: list[str], env: dict[str, str]) -> float:
    """The CPU the resident server's forks used so far (``deja server status``)."""
    time.sleep(0.02)  # the fork that just answered ends (it exits right after)
    out = subprocess.run([*deja, "server", "status", "--json"], env=env, capture_output=True)
    return float(json.loads(out.stdout or b"{}").get("children_cpu", 0.0))


def _is_annotated(repo: Path) -> bool:
    """The replay's history went through a complete ``deja annotate --all``."""
    notes = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "-q", "--verify", "refs/notes/deja"],
        capture_output=True,
    )
    return notes.returncode == 0 and (repo / ".git" / "deja" / "history").exists()


def real_mode(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from realhistory import build as build_real

    deja = [sys.executable, "-m", "deja_blame"]
    rows = []
    for n in [int(x) for x in args.sessions_list.split(",")]:
        # a replay is rebuilt (its directory emptied) when its arguments differ:
        # never beside a directory the caller named, only inside it
        out = (args.out or OUT) / f"real-{n}"
        t = time.perf_counter()
        meta = build_real(out, args.real, args.file, n)
        repo, root, db = out / "repo", out / "root", out / "index.db"
        old_db = out / "index-old.db"
        if args.old and not old_db.exists() and db.exists():
            # the old deja's own index, copied before this one migrates it to its schema
            # (a replay built just now has none yet: each deja indexes its own below)
            shutil.copy(db, old_db)
        env = {
            **os.environ,
            "DEJA_DB": str(db),
            "DEJA_ANTIGRAVITY_ROOT": str(root),
            "NO_COLOR": "1",
            # as an installed deja: bytecode cached (see bench/README.md)
            "PYTHONDONTWRITEBYTECODE": "",
        }
        new_env = {"PYTHONPATH": str(args.new.resolve())} if args.new else {}
        dejas: dict[str, tuple[list[str], dict[str, str]]] = {"new": (deja, new_env)}
        if args.old:
            # the version before, from its source tree (a `git worktree add` checkout)
            old_env = {"PYTHONPATH": str(args.old.resolve()), "DEJA_DB": str(old_db)}
            dejas = {"old": (deja, old_env), **dejas}
        runtime = None
        if args.server:
            # new again, its commands run by a resident server (docs/server.md)
            import tempfile

            runtime = tempfile.mkdtemp(prefix="djb-")
            dejas["server"] = (deja, {"XDG_RUNTIME_DIR": runtime})
            for name in ("old", "new"):
                if name in dejas:
                    dejas[name] = (dejas[name][0], {**dejas[name][1], "DEJA_SERVER": "0"})
        for cmd, extra in dejas.values():
            subprocess.run([*cmd, "index", "-q"], env={**env, **extra}, check=True, cwd=repo)
        if runtime is not None:
            subprocess.run(
                [*deja, "server", "start", "--idle", "30"],
                env={**env, **dejas["server"][1]},
                check=True,
            )
        print(
            f"{n} sessions: {meta['commits']} commits, {meta['lines']} lines ({meta['blank']} blank),"
            f" {meta['lines_written']} lines written, ready in {time.perf_counter() - t:.1f} s"
        )
        annotated_took = None
        if args.keep_notes and not _is_annotated(repo):
            w, c, _, _ = _run(
                [*deja, "annotate", "--all", "--no-refresh"], {**env, **new_env}, repo
            )
            annotated_took = (w, c)
            print(f"deja annotate --all: {w:.1f} s wall, {c:.1f} s CPU")
        total = int(meta["lines"])
        probe = [max(1, total * q // 8) for q in range(1, 8)]
        newest = subprocess.run(
            ["git", "-C", str(repo), "log", "-1", "--format=%H", "--", args.file],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        times: dict[str, dict[str, list[Timing]]] = {name: {} for name in dejas}
        rss = dict.fromkeys(dejas, 0)
        docs: dict[str, bytes] = {}
        for r in range(args.runs):
            # old and new alternated, the one to go first swapped every round
            order = list(dejas) if r % 2 == 0 else list(reversed(dejas))
            for name in order:
                cmd, extra = dejas[name]
                own = {**env, **extra}
                got, peak, docs[name] = _round(
                    cmd, own, repo, Path(own["DEJA_DB"]), args.file, probe, newest
                )
                for key, values in got.items():
                    times[name].setdefault(key, []).extend(values)
                rss[name] = max(rss[name], peak)
        if runtime is not None:
            subprocess.run([*deja, "server", "stop"], env={**env, **dejas["server"][1]})
            shutil.rmtree(runtime, ignore_errors=True)
        noted: dict[str, float] = {}
        if args.annotated and not args.keep_notes:
            noted = _annotated(
                deja, {**env, **new_env}, repo, db, args.file, args.runs, docs["new"]
            )
        for name in dejas:
            lines = json.loads(docs[name])["lines"]
            med = statistics.median
            wall = {k: med(x[0] for x in v) for k, v in times[name].items()}
            cpu = {k: med(x[1] for x in v) for k, v in times[name].items()}
            rows.append(
                {
                    "sessions": n,
                    "deja": name,
                    "annotated": _is_annotated(repo),
                    "git_blame": wall["git"],
                    "cold": wall["cold"],
                    "warm": wall["warm"],
                    "git_blame_L": wall["git_L"],
                    "why": wall["why"],
                    "why_cold": wall["why_cold"],
                    "annotate": wall["annotate"],
                    "cpu": cpu,
                    "rss_mb": rss[name] / 1024,
                    "attributed": sum(1 for x in lines if x["session"]),
                    "lines": len(lines),
                    "same_as_new": docs[name] == docs["new"],
                    **({"annotate_all": annotated_took} if annotated_took else {}),
                    **noted,
                }
            )
    print()
    for clock in ("wall", "CPU"):
        print(
            f"{clock:>4}{'sessions':>9}{'deja':>7}{'git s':>8}{'cold s':>8}{'x git':>7}"
            f"{'warm s':>8}{'x git':>7}{'-L s':>7}{'why s':>7}{'x -L':>7}{'cold':>7}{'x -L':>7}"
            f"{'annot s':>8}{'RSS MB':>8}{'attributed':>12}"
        )
        for r in rows:
            v = r["cpu"] if clock == "CPU" else {k: r[k2] for k, k2 in _WALL_KEYS.items()}
            print(
                f"{'':>4}{r['sessions']:>9}{r['deja']:>7}{v['git']:>8.3f}{v['cold']:>8.3f}"
                f"{v['cold'] / v['git']:>7.2f}{v['warm']:>8.3f}{v['warm'] / v['git']:>7.2f}"
                f"{v['git_L']:>7.3f}{v['why']:>7.3f}{v['why'] / v['git_L']:>7.2f}"
                f"{v['why_cold']:>7.3f}{v['why_cold'] / v['git_L']:>7.2f}{v['annotate']:>8.3f}"
                f"{r['rss_mb']:>8.0f}{r['attributed']:>7}/{r['lines']}"
            )
    print(
        "goals: cold <= 1.5x git (2x at 10,000 sessions), warm <= 0.5x, why <= 2x -L,"
        " RSS < 150 MB, annotate < 2 s"
    )
    for r in rows:
        if not r["same_as_new"]:
            print(f"{r['sessions']} sessions: {r['deja']}'s blame JSON differs from new's")
        if "noted_cold" in r:
            print(
                f"{r['sessions']} sessions, history annotated ({r['annotate_all']:.1f} s for"
                f" deja annotate --all): git blame {r['noted_git']:.3f} s, deja blame cold"
                f" {r['noted_cold']:.3f} s ({r['noted_cold'] / r['noted_git']:.2f}x),"
                f" same answer: {r['noted_same']}"
            )
    if args.json_out:
        args.json_out.write_text(json.dumps(rows, indent=1))


_WALL_KEYS = {
    "git": "git_blame",
    "cold": "cold",
    "warm": "warm",
    "git_L": "git_blame_L",
    "why": "why",
    "why_cold": "why_cold",
    "annotate": "annotate",
}


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--commits", type=int, default=3000)
    ap.add_argument("--lines", type=int, default=4000)
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument(
        "--out",
        type=Path,
        help="where the built repositories go (default bench/out/blame; in real-code mode"
        " bench/out/real-N, or OUT/real-N when given)",
    )
    ap.add_argument("--real", type=Path, help="real-code mode: a git repository with history")
    ap.add_argument("--file", default="src/click/core.py", help="real-code mode: the file")
    ap.add_argument(
        "--sessions-list", default="100,1000,5000", help="real-code mode: session counts"
    )
    ap.add_argument("--json-out", type=Path, help="real-code mode: also write the table as JSON")
    ap.add_argument(
        "--annotated",
        action="store_true",
        help="real-code mode: also deja annotate --all, then cold blame answered from notes",
    )
    ap.add_argument(
        "--keep-notes",
        action="store_true",
        help="real-code mode: measure the annotated history: deja annotate --all once (unless"
        " a complete pass is there already), every measure after it, the notes kept",
    )
    ap.add_argument(
        "--old",
        type=Path,
        help="real-code mode: a source tree of the version before (git worktree add DIR REV),"
        " run with this Python through PYTHONPATH, alternated with this tree round by round,"
        " with an index of its own (index-old.db beside the replay's)",
    )
    ap.add_argument(
        "--new",
        type=Path,
        help="real-code mode: run 'new' from this source tree (through PYTHONPATH) instead of"
        " the installed deja, so that a bench does not time a tree being edited",
    )
    ap.add_argument(
        "--server",
        action="store_true",
        help="real-code mode: also this tree through a resident server (deja server start;"
        " its forks' CPU counted), alternated with the others, which run without one",
    )
    args = ap.parse_args()
    if args.real is not None:
        real_mode(args)
        return
    args.out = args.out or OUT / "blame"
    t = time.perf_counter()
    info = build(args.out, args.commits, args.lines, args.sessions)
    print(
        f"repository ready in {time.perf_counter() - t:.1f} s: {args.commits} commits, {args.lines} lines,"
        f" {info['sessions']} sessions, {info['agent_lines_at_head']} agent lines at HEAD"
    )
    repo, root = args.out / "repo", args.out / "root"
    db = args.out / "index.db"
    env = {
        **os.environ,
        "DEJA_DB": str(db),
        "DEJA_ANTIGRAVITY_ROOT": str(root),
        "NO_COLOR": "1",
        "PYTHONDONTWRITEBYTECODE": "",  # as an installed deja: bytecode cached
    }
    deja = [sys.executable, "-m", "deja_blame"]
    subprocess.run([*deja, "index", "-q"], env=env, check=True)
    git_times, cold_times, warm_times = [], [], []
    result = b""
    for _ in range(args.runs):
        g, _ = timed(["git", "blame", "--porcelain", "src/big.py"], env, repo)
        git_times.append(g)
        import sqlite3

        with sqlite3.connect(db) as conn:
            conn.execute("DELETE FROM blame_cache")
        c, result = timed([*deja, "blame", "src/big.py", "--json"], env, repo)
        cold_times.append(c)
        w, _ = timed([*deja, "blame", "src/big.py", "--json"], env, repo)
        warm_times.append(w)
    doc = json.loads(result)
    attributed = sum(1 for ln in doc["lines"] if ln["session"])
    g, c, w = (statistics.median(x) for x in (git_times, cold_times, warm_times))
    print()
    print(f"{'':32}{'median s':>10}{'x git':>8}{'goal':>8}")
    print(f"{'git blame --porcelain':32}{g:>10.3f}{1.0:>8.2f}{'':>8}")
    print(f"{'deja blame --json (cold)':32}{c:>10.3f}{c / g:>8.2f}{'<=1.5':>8}")
    print(f"{'deja blame --json (warm)':32}{w:>10.3f}{w / g:>8.2f}{'<=0.5':>8}")
    print(
        f"\nlines attributed: {attributed} of {len(doc['lines'])}"
        f" (agent lines at HEAD: {info['agent_lines_at_head']})"
    )


if __name__ == "__main__":
    main()
