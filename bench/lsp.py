"""deja lsp on a real file's history: first lenses against git blame, hover
latency, and the server's memory after 50 files.

Builds (or reuses) the real-code replay of ``bench/blame.py --real``
(``realhistory.py``: a clone of REPO, N Antigravity sessions replaying FILE's
commits), indexes it, then, side by side in each run:

- ``git blame --porcelain FILE``;
- first lenses: a new ``deja lsp`` process, ``initialize``, ``didOpen`` FILE,
  ``textDocument/codeLens`` answered; timed from the spawn (what an editor
  waits), cold (blame and attribution caches emptied) and with the caches a
  ``deja blame`` or the post-commit hook left;
- hover once the file is loaded: ``textDocument/hover`` on ``--hovers`` lines
  spread over the file (agent and person lines), first and second time asked;
- the server's RSS (``VmRSS``, and its peak ``VmHWM``) after 50 of the
  repository's files were opened and their lenses answered.

    .venv/bin/python bench/lsp.py --real /path/to/click --file src/click/core.py \\
        --sessions 1000 --runs 3

The client is the tests' plain protocol client (``tests/lsp_client.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from lsp_client import LspClient  # noqa: E402
from realhistory import build as build_real  # noqa: E402

OUT = HERE / "out" / "lsp"


def clear_caches(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        for t in ("blame_cache", "attribution_cache"):
            if t in tables:
                conn.execute(f"DELETE FROM {t}")


def git_blame(repo: Path, file: str) -> float:
    t = time.perf_counter()
    subprocess.run(["git", "blame", "--porcelain", file], cwd=repo, check=True, capture_output=True)
    return time.perf_counter() - t


def first_lenses(repo: Path, file: str, env: dict[str, str]) -> tuple[float, LspClient, str, int]:
    """Seconds from spawning the server to the file's lenses; the client stays up."""
    os.environ.update(env)
    t = time.perf_counter()
    client = LspClient(repo, env)
    client.initialize(repo)
    uri = client.open(repo / file)
    lenses = client.lenses(uri)
    return time.perf_counter() - t, client, uri, len(lenses)


def rss_kb(pid: int) -> tuple[int, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(ln.split(":", 1) for ln in status.splitlines() if ":" in ln)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--real", type=Path, required=True, help="a git repository with history")
    ap.add_argument("--file", default="src/click/core.py")
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--hovers", type=int, default=100)
    ap.add_argument("--files", type=int, default=50, help="files opened for the memory figure")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args()

    out = args.out / f"real-{args.sessions}"
    t = time.perf_counter()
    meta = build_real(out, args.real, args.file, args.sessions)
    repo, root, db = out / "repo", out / "root", out / "index.db"
    env = {
        "DEJA_DB": str(db),
        "DEJA_ANTIGRAVITY_ROOT": str(root),
        "NO_COLOR": "1",
        "DEJA_LSP_POLL": "0",
        # as an installed deja: its modules' bytecode cached (an environment that
        # sets PYTHONDONTWRITEBYTECODE compiles every module at every start)
        "PYTHONDONTWRITEBYTECODE": "",
    }
    subprocess.run(
        [sys.executable, "-m", "deja_blame", "index", "-q"],
        env={**os.environ, **env},
        check=True,
        cwd=repo,
    )
    total = int(meta["lines"])  # type: ignore[call-overload]
    print(
        f"{args.sessions} sessions, {meta['commits']} commits, {total} lines; ready in {time.perf_counter() - t:.1f} s"
    )

    git_s, cold_s, warm_s, cli_cold, cli_warm = [], [], [], [], []
    deja_blame = [sys.executable, "-m", "deja_blame", "blame", args.file, "--json", "--no-refresh"]
    hover_first: list[float] = []
    hover_again: list[float] = []
    lens_count = 0
    for run in range(args.runs):
        git_s.append(git_blame(repo, args.file))
        clear_caches(db)  # deja blame on the command line, the same work
        t = time.perf_counter()
        subprocess.run(
            deja_blame, cwd=repo, env={**os.environ, **env}, check=True, capture_output=True
        )
        cli_cold.append(time.perf_counter() - t)
        t = time.perf_counter()
        subprocess.run(
            deja_blame, cwd=repo, env={**os.environ, **env}, check=True, capture_output=True
        )
        cli_warm.append(time.perf_counter() - t)
        clear_caches(db)
        s, client, _, lens_count = first_lenses(repo, args.file, env)
        cold_s.append(s)
        client.close()
        git_s.append(git_blame(repo, args.file))
        s, client, uri, _ = first_lenses(repo, args.file, env)  # the caches the cold run left
        warm_s.append(s)
        if run == 0:
            lines = [1 + i * (total - 1) // (args.hovers - 1) for i in range(args.hovers)]
            for into in (hover_first, hover_again):
                for ln in lines:
                    t = time.perf_counter()
                    client.hover(uri, ln - 1)
                    into.append(time.perf_counter() - t)
        client.close()

    # memory: one server, the file and then other files of the repository
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.split()
    texts = [
        p
        for p in tracked
        if p.endswith((".py", ".rst", ".md", ".txt", ".toml", ".cfg", ".yml", ".yaml"))
    ]
    opened = [args.file] + [p for p in texts if p != args.file][: args.files - 1]
    _, client, _, _ = first_lenses(repo, args.file, env)
    for p in opened[1:]:
        client.lenses(client.open(repo / p))
    rss, peak = rss_kb(client.proc.pid)
    client.close()

    med = statistics.median
    g = med(git_s)
    row = {
        "sessions": args.sessions,
        "lines": total,
        "lenses": lens_count,
        "git_blame_s": g,
        "deja_blame_cold_s": med(cli_cold),
        "deja_blame_cached_s": med(cli_warm),
        "first_lenses_cold_s": med(cold_s),
        "first_lenses_warm_s": med(warm_s),
        "hover_first_median_ms": med(hover_first) * 1000,
        "hover_first_p99_ms": pct(hover_first, 0.99) * 1000,
        "hover_again_median_ms": med(hover_again) * 1000,
        "hover_again_p99_ms": pct(hover_again, 0.99) * 1000,
        "files_opened": len(opened),
        "rss_mb": rss / 1024,
        "peak_rss_mb": peak / 1024,
    }
    print(f"git blame --porcelain     {g:.3f} s")
    for name, key in (
        ("deja blame --json, cold  ", "deja_blame_cold_s"),
        ("deja blame --json, cached", "deja_blame_cached_s"),
    ):
        print(f"{name} {row[key]:.3f} s ({row[key] / g:.2f}x git)")
    print(
        f"first lenses, cold        {row['first_lenses_cold_s']:.3f} s ({row['first_lenses_cold_s'] / g:.2f}x git)"
    )
    print(
        f"first lenses, cached      {row['first_lenses_warm_s']:.3f} s ({row['first_lenses_warm_s'] / g:.2f}x git)"
    )
    print(
        f"hover, first time a line  median {row['hover_first_median_ms']:.1f} ms, p99 {row['hover_first_p99_ms']:.1f} ms"
    )
    print(
        f"hover, asked again        median {row['hover_again_median_ms']:.1f} ms, p99 {row['hover_again_p99_ms']:.1f} ms"
    )
    print(
        f"RSS after {len(opened)} files       {row['rss_mb']:.0f} MB (peak {row['peak_rss_mb']:.0f} MB)"
    )
    print(
        "goals: first lenses <= 1.5x git blame, hover median <= 20 ms, p99 <= 100 ms, RSS < 300 MB"
    )
    if args.json_out:
        args.json_out.write_text(json.dumps(row, indent=1))


if __name__ == "__main__":
    main()
