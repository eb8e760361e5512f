"""deja export --format agent-trace | rows: the range's attribution for other tools."""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from deja_blame.errors import DejaError
from deja_blame.gitutil import open_repository
from deja_blame.index.refresh import refresh_index
from deja_blame.output import CommitProgress, terminal
from deja_blame.outputs.agent_trace import trace_records


def run_export(
    conn: sqlite3.Connection,
    spec: str | None,
    fmt: str,
    output: Path | None = None,
    repository: str | None = None,
) -> int:
    repo = open_repository(Path.cwd())
    refresh_index(conn)
    progress = CommitProgress("exporting commits")
    written = 0
    try:
        if fmt == "rows":
            from deja_blame.outputs.rows import export_rows

            records: Iterator[dict[str, Any]] = export_rows(
                repo, spec, conn, progress, repository=repository
            )
        else:
            records = trace_records(repo, spec, conn, progress)
        if output is not None and output.suffix == ".parquet" and fmt != "rows":
            raise DejaError("Parquet is for --format rows (agent-trace is JSON Lines)")
        if output is None:
            written = _write_lines(records, sys.stdout.buffer)
        else:
            written = _to_file(records, output)
    finally:
        progress.close()
    if not written:  # an empty output is an answer: say it, on stderr
        where = terminal(spec) if spec else "HEAD's history"
        what = (
            "changed lines: no rows"
            if fmt == "rows"
            else "lines attributed to a session: no records"
        )
        print(f"deja: no commit in {where} has {what}", file=sys.stderr)
    return 0


def _write_lines(records: Iterator[dict[str, Any]], out: IO[bytes]) -> int:
    written = 0
    for record in records:
        out.write(orjson.dumps(record) + b"\n")  # one record a line: JSON Lines
        written += 1
    out.flush()
    return written


def _to_file(records: Iterator[dict[str, Any]], output: Path) -> int:
    """Written beside ``output`` (0600: rows name people and sessions), then renamed
    over it: a reader never sees half a file, and a link there is replaced, not
    followed. A ``.parquet`` name is Parquet."""
    target = output.expanduser()
    if target.is_dir():
        raise DejaError(f"{output} is a directory; --output takes a file name")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise DejaError(f"cannot write {output}: no directory {parent}")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=parent)
    try:
        if target.suffix == ".parquet":
            from deja_blame.outputs.rows import write_parquet

            os.close(fd)
            written = write_parquet(records, Path(tmp))
        else:
            with os.fdopen(fd, "wb") as fh:
                written = _write_lines(records, fh)
        os.replace(tmp, target)
    except OSError as exc:
        raise DejaError(f"cannot write {output}: {exc.strerror or exc}") from exc
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return written
