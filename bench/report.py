"""Benchmark: ``deja report`` over a range of 200 commits that all carry deja notes.

Builds the repository with one ``git fast-import`` stream (commits and their
notes under refs/notes/deja, written exactly as ``deja annotate`` writes them:
schema 1, line ranges per session), then times the real command end to end
(a fresh process, an empty index, each format) and in process (``build_report``).

    .venv/bin/python bench/report.py                 # 200 commits, 20 files
    .venv/bin/python bench/report.py --commits 1000 --keep /tmp/big

Target: under 2 s for 200 commits.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

T0 = 1784278800  # 2026-07-17T09:00:00Z
SESSIONS = [f"{i:08x}-bench-session-{i}" for i in range(1, 7)]


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "DEJA_"))}
    env.update(
        HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Bench Person",
        GIT_AUTHOR_EMAIL="bench@example.com",
        GIT_COMMITTER_NAME="Bench Person",
        GIT_COMMITTER_EMAIL="bench@example.com",
    )
    return env


def _data(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return b"data %d\n" % len(raw) + raw + b"\n"


def build_repo(path: Path, commits: int = 200, files: int = 20, seed: int = 7) -> dict[str, int]:
    """A repository at ``path``: a base commit, then ``commits`` commits each adding
    lines to 1-3 files (some lines by a session, some by a person), each with a note.
    Returns the expected totals (added, by_sessions)."""
    rng = random.Random(seed)
    path.mkdir(parents=True, exist_ok=True)
    env = _env(path.parent)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=env)
    contents: dict[str, list[str]] = {
        f"src/mod{i:02d}.py": [f"# module {i}", ""] for i in range(files)
    }
    out = bytearray()
    who = b"Bench Person <bench@example.com>"

    def commit(mark: int, when: int, msg: str, changed: dict[str, list[str]], parent: int | None):
        out.extend(b"commit refs/heads/main\nmark :%d\n" % mark)
        out.extend(b"author %s %d +0000\ncommitter %s %d +0000\n" % (who, when, who, when))
        out.extend(_data(msg))
        if parent is not None:
            out.extend(b"from :%d\n" % parent)
        for p, lines in changed.items():
            out.extend(b"M 100644 inline %s\n" % p.encode())
            out.extend(_data("\n".join(lines) + "\n"))

    commit(1, T0 - 3600, "base", contents, None)
    expected = {"added": 0, "by_sessions": 0}
    notes: list[tuple[int, dict]] = []
    for k in range(commits):
        mark = k + 2
        changed: dict[str, list[str]] = {}
        note_files: dict[str, dict[str, list[list[float]]]] = {}
        sid = SESSIONS[k % len(SESSIONS)]
        for p in rng.sample(sorted(contents), rng.randint(1, 3)):
            lines = contents[p]
            start = len(lines) + 1
            n_agent = rng.randint(4, 12)
            n_person = rng.randint(0, 3)
            lines.extend(f"def f_{k}_{j}(x):  # {p}" for j in range(n_agent))
            lines.extend(f"CONSTANT_{k}_{j} = {j}  # by hand" for j in range(n_person))
            changed[p] = list(lines)
            note_files[p] = {sid: [[start, start + n_agent - 1, 0.95]]}
            expected["added"] += n_agent + n_person
            expected["by_sessions"] += n_agent
        commit(mark, T0 + 60 * k, f"change {k}", changed, mark - 1)
        notes.append(
            (
                mark,
                {
                    "schema": 1,
                    "tool": "deja-blame bench",
                    "commit": "",
                    "files": note_files,
                    "sessions": {
                        sid: {
                            "agent": "antigravity",
                            "project": "/work/bench",
                            "started_at": "2026-07-17T09:00:00Z",
                        }
                    },
                },
            )
        )
    for i, (mark, note) in enumerate(notes):
        out.extend(b"commit refs/notes/deja\n")
        out.extend(b"committer %s %d +0000\n" % (who, T0 + 60 * i))
        out.extend(_data("Notes added by 'git notes add'"))
        out.extend(b"N inline :%d\n" % mark)
        out.extend(_data(orjson.dumps(note, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)))
    out.extend(b"done\n")
    subprocess.run(
        ["git", "fast-import", "--quiet", "--done"],
        cwd=path,
        input=bytes(out),
        check=True,
        env=env,
    )
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=path, check=True, env=env)
    return expected


def time_cli(repo: Path, fmt: str, range_spec: str) -> tuple[float, bytes]:
    work = repo.parent
    env = _env(work)
    env["DEJA_DB"] = str(work / f"index-{fmt}.db")
    env["DEJA_ANTIGRAVITY_ROOT"] = str(work / "no-transcripts")
    env["XDG_STATE_HOME"] = str(work / "state")
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "deja_blame", "report", range_spec, "--format", fmt],
        cwd=repo,
        env=env,
        capture_output=True,
    )
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"deja report failed: {proc.stderr.decode()}")
    return took, proc.stdout


def time_library(repo: Path, range_spec: str) -> float:
    import pygit2

    from deja_blame.report import build_report, render_markdown

    start = time.perf_counter()
    report = build_report(pygit2.Repository(str(repo)), range_spec, None)
    render_markdown(report)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--keep", type=Path, default=None, help="Build here and keep it.")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="deja-bench-report-"))
    repo = work / "repo"
    try:
        t = time.perf_counter()
        expected = build_repo(repo, args.commits, args.files)
        print(f"built {args.commits} commits with notes in {time.perf_counter() - t:.2f} s")
        spec = f"main~{args.commits}..main"
        lib = time_library(repo, spec)
        print(f"build_report + markdown, in process: {lib:.3f} s")
        for fmt in ("markdown", "json", "html"):
            took, out = time_cli(repo, fmt, spec)
            print(f"deja report --format {fmt:<8} {took:.3f} s  ({len(out):,} bytes)")
            if fmt == "json":
                doc = orjson.loads(out)
                got = (doc["totals"]["added"], doc["totals"]["by_sessions"])
                want = (expected["added"], expected["by_sessions"])
                status = "ok" if got == want else f"MISMATCH, expected {want}"
                print(f"  totals added={got[0]} by_sessions={got[1]}: {status}")
        print("target: under 2 s for 200 commits")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
