"""deja report [RANGE]: which lines of a range of commits agent sessions wrote."""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
from pathlib import Path

from deja_blame.errors import DejaError
from deja_blame.gitutil import open_repository, workdir
from deja_blame.output import warn
from deja_blame.pathtext import as_text

FORMATS = ("markdown", "json", "html", "text")


def _write(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.buffer.write(as_text(text).encode("utf-8"))
        sys.stdout.flush()
        return
    target = output.expanduser()
    if target.is_dir():
        raise DejaError(f"{output} is a directory; --output takes a file name")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise DejaError(f"cannot write {output}: no directory {parent}")
    # Write beside the target, then rename: a reader never sees half a report.
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(as_text(text).encode("utf-8"))
        os.replace(tmp, target)
    except OSError as exc:
        raise DejaError(f"cannot write {output}: {exc.strerror or exc}") from exc


def run_report(
    conn: sqlite3.Connection,
    range_spec: str | None,
    fmt: str,
    output: Path | None,
    include_prompts: bool | None = None,
    refresh: bool = True,
    cwd: Path | None = None,
) -> int:
    """Write the report of ``range_spec``. ``include_prompts``: None follows the
    repository's ``git config deja.notes.prompts`` (a report is made to be shared)."""
    from deja_blame.report import build_report, render_html, render_json, render_markdown

    if fmt not in FORMATS:
        raise DejaError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    repo = open_repository(cwd or Path.cwd())
    from deja_blame.hooks.pending import wait_for_hooks

    wait_for_hooks(repo)  # the notes of the newest commits may still be being written
    if refresh:
        from deja_blame.index.refresh import refresh_index

        refresh_index(conn)
    # a request a note carries was published by its author: shown unless --no-prompts
    noted_prompts = include_prompts is not False
    if include_prompts is None:
        from deja_blame.notes.annotate import prompts_opted_in

        include_prompts = prompts_opted_in(repo)
    report = build_report(
        repo,
        range_spec,
        conn,
        include_prompts=include_prompts,
        want_lines=fmt == "html",
        noted_prompts=noted_prompts,
    )
    if report.commits and not report.notes_found and not report.indexed_sessions:
        from deja_blame.notes.where_from import unattributed_hint

        warn(
            "no notes under refs/notes/deja for these commits and no indexed sessions: every"
            f" line counts as people or unknown ({unattributed_hint(workdir(repo))})"
        )
    if fmt == "json":
        text = render_json(report)
    elif fmt == "html":
        text = render_html(report)
    elif fmt == "text":
        from deja_blame.report.render_text import render_text

        text = render_text(report)
    else:
        text = render_markdown(report)
    _write(text, output)
    if output is not None:
        warn(f"wrote the {fmt} report to {output}")
    return 0
