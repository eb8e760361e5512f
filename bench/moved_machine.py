"""The moved-machine benchmark: real agent sessions, a repository at their paths and elsewhere.

The public entireio/cli repository keeps the Claude Code sessions its developers
recorded while building it on its ``entire/checkpoints/v1`` branch (each
checkpoint a ``full.jsonl`` transcript), linked to commits by an
``Entire-Checkpoint:`` trailer. Those transcripts hold people's prompts: they
are used here, under the work directory, and never copied into this project.

Measured twice with one index:

1. clones at the sessions' original paths (``/Users/<name>/...``, one per
   working directory the transcripts name), measured from the most used one;
2. those clones gone (moved away), one clone at another path under another
   user name: another machine.

Each measurement runs in a process of its own (one process for both let the
second reuse what the first learnt about the original clones: the commits
attributed elsewhere looked 95 % complete where they were 86 %). For each:
``deja stats`` at HEAD (lines attributed, time) and every linked
commit attributed (``attribute_commit``, as ``deja annotate`` does): lines
given to sessions, commits that get none, and a sample of attributed lines
verified against the session's own edits (its added lines hold the text).

Usage (as root, to create the original paths; the fetched repository has the
branch)::

    python bench/moved_machine.py --repo /work/.mirror/entireio+cli/repo --work /tmp/mm
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BRANCH = "entire/checkpoints/v1"
TRAILER = "Entire-Checkpoint:"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def extract_sessions(repo: Path, work: Path) -> dict[str, str]:
    """The newest transcript of each session into a Claude Code root; session -> cwd."""
    rows = git(repo, "ls-tree", "-r", BRANCH).splitlines()
    best: dict[str, tuple[int, str, str]] = {}
    for row in rows:
        meta, path = row.split("\t", 1)
        if not path.endswith("/full.jsonl"):
            continue
        sha = meta.split()[2]
        proc = subprocess.run(["git", "cat-file", "blob", sha], cwd=repo, capture_output=True)
        if proc.returncode != 0:
            continue  # files of 4 MiB and more are not in the snapshot
        data = proc.stdout
        sid = cwd = None
        for line in data.splitlines()[:50]:
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            if isinstance(doc, dict):
                sid = sid or doc.get("sessionId")
                cwd = cwd or doc.get("cwd")
        if not sid or not cwd:
            continue
        if sid not in best or len(data) > best[sid][0]:
            target = work / "claude" / "projects" / "p" / f"{sid}.jsonl"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            best[sid] = (len(data), str(target), cwd)
    return {sid: cwd for sid, (_, _, cwd) in best.items()}


def linked_commits(repo: Path) -> list[str]:
    out = []
    log = git(repo, "log", "--format=%H%x00%B%x01", "HEAD")
    for entry in log.split("\x01"):
        if "\x00" not in entry:
            continue
        sha, body = entry.strip().split("\x00", 1)
        if TRAILER in body:
            out.append(sha)
    return out


def measure(clone: Path, env: dict[str, str], commits: list[str], sample: int) -> dict[str, Any]:
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "deja_blame", "stats", "--json"],
        cwd=clone,
        env=env,
        capture_output=True,
    )
    stats_s = time.perf_counter() - t
    stats = json.loads(proc.stdout) if proc.returncode == 0 else {"error": proc.stderr.decode()}
    import pygit2

    from deja_blame.attribution.commit import attribute_commit
    from deja_blame.index.db import connect

    repo = pygit2.Repository(str(clone))
    conn = connect(Path(env["DEJA_DB"]))
    per_commit: dict[str, int] = {}
    claims: list[tuple[str, str, str, int]] = []
    t = time.perf_counter()
    for sha in commits:
        result = attribute_commit(repo, sha, conn)
        per_commit[sha] = sum(a for _, a in result.counts.values())
        for path, by_session in result.note.files.items():
            for sid, ranges in by_session.items():
                for r in ranges:
                    for line in range(int(r[0]), int(r[1]) + 1):
                        claims.append((sha, path, sid, line))
    annotate_s = time.perf_counter() - t
    rng = random.Random(28)
    picked = rng.sample(claims, min(sample, len(claims)))
    verified = sum(verify(repo, conn, c) for c in picked)
    conn.close()
    return {
        "stats_lines": stats.get("lines"),
        "stats_attributed": stats.get("attributed_lines"),
        "stats_seconds": round(stats_s, 1),
        "commits": len(commits),
        "commit_lines": sum(per_commit.values()),
        "commits_with_lines": sum(1 for n in per_commit.values() if n),
        "annotate_seconds": round(annotate_s, 1),
        "sampled": len(picked),
        "verified": verified,
        "per_commit": per_commit,
    }


def verify(repo: Any, conn: sqlite3.Connection, claim: tuple[str, str, str, int]) -> bool:
    """The session added a line with this text to a file of this name."""
    from deja_blame.index.fingerprint import fingerprint
    from deja_blame.index.store import edit_lines

    sha, path, sid, line = claim
    try:
        text = repo[sha].tree[path].data.decode("utf-8", "replace").split("\n")[line - 1]
    except (KeyError, IndexError):
        return False
    fp = fingerprint(text)
    name = "/" + path
    for epath, body in conn.execute(
        "SELECT e.path, e.body FROM edits e JOIN sessions s ON s.sid = e.sid WHERE s.session_id=?",
        (sid,),
    ):
        if not (epath.endswith(name) or epath.endswith("/" + path.rsplit("/", 1)[-1])):
            continue
        if any(fingerprint(x) == fp for x in edit_lines(body)[1]):
            return True
    return False


def measure_apart(clone: Path, env: dict[str, str], args: argparse.Namespace) -> dict[str, Any]:
    """``measure`` in a process of its own: what one measurement learnt (a directory's
    root commits, a session's judgement) must not answer for the next, where the
    original clones are gone."""
    proc = subprocess.run(
        [sys.executable, __file__, "--repo", str(args.repo), "--work", str(args.work),
         "--sample", str(args.sample), "--commits", str(args.commits), "--measure", str(clone)],
        env=env, capture_output=True, check=True,
    )  # fmt: skip
    return dict(json.loads(proc.stdout))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, required=True, help="entireio/cli with its branch")
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--sample", type=int, default=200)
    ap.add_argument("--commits", type=int, default=0, help="at most N linked commits (0: all)")
    ap.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # one measurement, alone
    args = ap.parse_args()
    if args.measure is not None:
        commits = linked_commits(args.repo)
        if args.commits:
            commits = commits[: args.commits]
        print(json.dumps(measure(args.measure, dict(os.environ), commits, args.sample)))
        return 0
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    sessions = extract_sessions(args.repo, work)
    cwds = sorted({c for c in sessions.values() if c.startswith("/")}, key=len)
    home = work / "home"
    (home / "none").mkdir(parents=True, exist_ok=True)  # no other agent's sessions
    env = {
        **os.environ,
        "HOME": str(home),
        "DEJA_DB": str(work / "index.db"),
        "DEJA_CLAUDE_ROOT": str(work / "claude" / "projects"),
        "DEJA_ANTIGRAVITY_ROOT": str(home / "none"),
        "DEJA_CODEX_ROOT": str(home / "none"),
        "DEJA_GEMINI_ROOT": str(home / "none"),
    }
    made = []
    for cwd in cwds:  # shortest first: a worktree folder inside a clone comes after it
        target = Path(cwd)
        if (target / ".git").exists():
            made.append(target)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            shutil.rmtree(target)
        subprocess.run(["git", "clone", "-q", "--shared", str(args.repo), cwd], check=True)
        made.append(target)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "deja_blame", "index", "-q"], env=env)
    index_s = time.perf_counter() - t
    commits = linked_commits(args.repo)
    if args.commits:
        commits = commits[: args.commits]
    used = max(set(sessions.values()), key=list(sessions.values()).count)
    original = measure_apart(Path(used), env, args)
    # another machine: the original clones gone, one clone elsewhere
    tops = sorted({Path(*Path(c).parts[:3]) for c in cwds})  # /Users/<name>
    for top in tops:
        os.rename(top, str(top) + ".moved-away")
    try:
        elsewhere = work / "elsewhere" / "zoe" / "code" / "entire-cli"
        if not elsewhere.exists():
            elsewhere.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "clone", "-q", "--shared", str(args.repo), str(elsewhere)])
        moved = measure_apart(elsewhere, env, args)
    finally:
        for top in tops:
            os.rename(str(top) + ".moved-away", top)
    lost = [s for s, n in original["per_commit"].items() if n and not moved["per_commit"].get(s)]
    report = {
        "sessions": len(sessions),
        "original_clones": len(made),
        "index_seconds": round(index_s, 1),
        "original": {k: v for k, v in original.items() if k != "per_commit"},
        "elsewhere": {k: v for k, v in moved.items() if k != "per_commit"},
        "commit_lines_ratio": round(moved["commit_lines"] / max(1, original["commit_lines"]), 4),
        "stats_ratio": round(
            (moved["stats_attributed"] or 0) / max(1, original["stats_attributed"] or 0), 4
        ),
        "commits_losing_all_lines": lost,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
