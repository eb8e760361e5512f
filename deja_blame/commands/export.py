"""deja export --format agent-trace: the range's attribution as Agent Trace records."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import orjson

from deja_blame.gitutil import open_repository
from deja_blame.index.refresh import refresh_index
from deja_blame.output import CommitProgress, inert
from deja_blame.outputs.agent_trace import trace_records


def run_export(conn: sqlite3.Connection, spec: str | None, fmt: str) -> int:
    repo = open_repository(Path.cwd())
    refresh_index(conn)
    out = sys.stdout.buffer
    progress = CommitProgress("exporting commits")
    written = 0
    try:
        for record in trace_records(repo, spec, conn, progress):
            out.write(orjson.dumps(record) + b"\n")  # one record a line: JSON Lines
            written += 1
    finally:
        progress.close()
    out.flush()
    if not written:  # an empty output is an answer: say it, on stderr
        where = inert(spec) if spec else "HEAD's history"
        print(
            f"deja: no commit in {where} has lines attributed to a session: no records",
            file=sys.stderr,
        )
    return 0
