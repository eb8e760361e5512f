"""A real Antigravity session, in a clone at another path, from a fresh HOME.

The public repository altamarronald05-sketch/taskflow-saas-kanban is an
Antigravity IDE ``brain/<id>`` directory its owner pushed: its
``.system_generated/logs/transcript*.jsonl`` are the session that wrote the
repository's files, recorded on Windows (``C:\\Users\\...\\brain\\559b346d...\\app.js``).
Those transcripts hold a person's prompts: they are copied under ``--work``
only, never into this project.

Measured: ``deja index``, ``stats`` (lines attributed, time), ``sessions
--project .``, ``handoff --print`` and ``annotate`` of every commit, in a clone
under ``--work/elsewhere/zoe``; beside them, the lines at HEAD whose text the
session added (an upper bound that counts no blank line).

    python bench/antigravity_moved.py --repo /work/.mirror/altamarronald05-sketch+taskflow-saas-kanban/repo --work /tmp/agy
    PYTHONPATH=/tmp/old python bench/antigravity_moved.py ...   # an older deja, side by side
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SESSION = "559b346d-0342-4c72-b4c2-81f0aebfa4ae"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--work", type=Path, required=True)
    args = ap.parse_args()
    work = args.work.resolve()
    shutil.rmtree(work, ignore_errors=True)
    logs = work / "root" / "brain" / SESSION / ".system_generated" / "logs"
    logs.mkdir(parents=True)
    for name in ("transcript.jsonl", "transcript_full.jsonl"):
        blob = subprocess.run(
            ["git", "show", f"HEAD:.system_generated/logs/{name}"],
            cwd=args.repo, capture_output=True, check=True,
        ).stdout  # fmt: skip
        (logs / name).write_bytes(blob)
    clone = work / "elsewhere" / "zoe" / "code" / "taskflow"
    subprocess.run(["git", "clone", "-q", str(args.repo), str(clone)], check=True)
    (work / "home").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEJA_")}
    env.update(
        HOME=str(work / "home"),
        DEJA_DB=str(work / "index.db"),
        DEJA_ANTIGRAVITY_ROOT=str(work / "root"),
    )

    def deja(*argv: str) -> tuple[subprocess.CompletedProcess[bytes], float]:
        t = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "deja_blame", *argv], cwd=clone, env=env, capture_output=True
        )
        return proc, time.perf_counter() - t

    deja("index", "-q")
    stats, stats_s = deja("stats", "--json")
    doc: dict[str, Any] = json.loads(stats.stdout) if stats.returncode == 0 else {}
    listed, _ = deja("sessions", "--project", ".", "--json")
    handoff, _ = deja("handoff", "--to", "claude", "--print")
    commits = subprocess.run(
        ["git", "rev-list", "HEAD"], cwd=clone, capture_output=True, text=True
    ).stdout.split()
    per: dict[str, int] = {}
    t = time.perf_counter()
    for sha in commits:
        proc, _ = deja("annotate", sha, "--json")
        note = json.loads(proc.stdout) if proc.returncode == 0 else {}
        per[sha[:8]] = sum(
            int(r[1]) - int(r[0]) + 1
            for by_session in note.get("files", {}).values()
            for ranges in by_session.values()
            for r in ranges
        )
    annotate_s = time.perf_counter() - t
    print(
        json.dumps(
            {
                "stats_lines": doc.get("lines"),
                "stats_attributed": doc.get("attributed_lines"),
                "stats_seconds": round(stats_s, 2),
                "head_lines_of_session_text": bound(work / "index.db", clone),
                "sessions_project": [
                    s["session_id"] for s in json.loads(listed.stdout or b"{}").get("sessions", [])
                ],
                "handoff_names_it": handoff.returncode == 0 and SESSION in handoff.stdout.decode(),
                "annotate_lines": sum(per.values()),
                "annotate_seconds": round(annotate_s, 1),
                "per_commit": per,
            },
            indent=1,
        )
    )
    return 0


def bound(db: Path, clone: Path) -> int:
    """Non-blank lines at HEAD (the transcripts and images aside) whose text the session added."""
    from deja_blame.index.db import connect
    from deja_blame.index.store import edit_lines

    conn = connect(db)
    added: set[str] = set()
    for (body,) in conn.execute(
        "SELECT e.body FROM edits e JOIN sessions s ON s.sid = e.sid WHERE s.session_id=?",
        (SESSION,),
    ):
        added |= {line.strip() for line in edit_lines(body)[1]}
    conn.close()
    files = subprocess.run(["git", "ls-files"], cwd=clone, capture_output=True, text=True).stdout
    count = 0
    for rel in files.splitlines():
        if rel.startswith(".system_generated") or rel.endswith(".png"):
            continue
        text = (clone / rel).read_text(errors="replace")
        count += sum(1 for line in text.split("\n") if line.strip() and line.strip() in added)
    return count


if __name__ == "__main__":
    raise SystemExit(main())
