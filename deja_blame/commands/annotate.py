"""deja annotate [REV]: compute a commit's attribution and store it as its note."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import click
import pygit2

from deja_blame.gitutil import open_repository
from deja_blame.jsonout import print_json
from deja_blame.notes.annotate import AnnotateResult, annotate, commits_of
from deja_blame.output import counted


def refresh(conn: sqlite3.Connection) -> None:
    """Read new transcript bytes first, as ``deja blame`` does."""
    from deja_blame.index.refresh import refresh_index

    refresh_index(conn)


def describe(result: AnnotateResult) -> str:
    sha = result.commit[:12]
    note = result.note
    if note.is_empty():
        return f"{sha}: no attributed lines, no note written"
    lines = note.line_count()
    sessions = len({sid for per in note.files.values() for sid in per})
    what = "note written" if result.written else "note unchanged"
    return (
        f"{sha}: {lines} line{'s' if lines != 1 else ''} in {len(note.files)} "
        f"file{'s' if len(note.files) != 1 else ''} by {sessions} "
        f"session{'s' if sessions != 1 else ''} ({what})"
    )


def run_annotate(
    conn: sqlite3.Connection | None,
    rev: str,
    as_json: bool,
    refresh_first: bool = True,
    dry_run: bool = False,
    cwd: Path | None = None,
    add_prompts: bool = False,
) -> int:
    repo = open_repository(cwd or Path.cwd())
    shas = commits_of(repo, rev)
    if not dry_run:
        from deja_blame.hooks.pending import wait_for_hooks

        wait_for_hooks(repo)  # one writer of a note at a time
    if conn is not None and refresh_first:
        refresh(conn)
    results = [
        annotate(repo, sha, conn, write=not dry_run, add_prompts=add_prompts) for sha in shas
    ]
    if as_json:
        if ".." in rev:
            print_json([r.note.to_json() for r in results])
        else:
            print_json(results[0].note.to_json())
    else:
        for r in results:
            click.echo(describe(r), err=True)
    return 0


def run_annotate_all(
    conn: sqlite3.Connection, as_json: bool, refresh_first: bool = True, cwd: Path | None = None
) -> int:
    """``deja annotate --all``: the notes of the branch's history (``notes/annotate_all.py``)."""
    import sys

    from deja_blame.hooks.pending import wait_for_hooks
    from deja_blame.notes.annotate_all import annotate_history, history_lock

    repo = open_repository(cwd or Path.cwd())
    wait_for_hooks(repo)  # one writer of a note at a time
    if conn is not None and refresh_first:
        refresh(conn)
    show = sys.stderr.isatty()
    width = 0

    def progress(done: int, todo: int, written: int) -> None:
        nonlocal width
        line = f"deja: annotating history: {done}/{todo} commits, {written} notes written"
        click.echo("\r" + line.ljust(width), err=True, nl=False)
        width = len(line)

    def clear() -> None:
        if width:
            click.echo("\r" + " " * width + "\r", err=True, nl=False)

    with history_lock(repo, wait=False) as free:
        if not free:
            click.echo("deja: another history pass is at work here; waiting for it", err=True)
    with history_lock(repo, wait=True):
        try:
            result = annotate_history(repo, conn, on_progress=progress if show else None)
        except KeyboardInterrupt:
            clear()
            click.echo(
                "deja: interrupted; the notes written so far are kept:"
                " run deja annotate --all again to finish",
                err=True,
            )
            raise SystemExit(130) from None
        finally:
            clear()
    if as_json:
        print_json(result.to_json())
    else:
        n = len(result.written)
        click.echo(
            f"deja: {counted(result.commits, 'commit')} since the first indexed session,"
            f" {result.touched} touched by sessions:"
            f" {n} note{'s' if n != 1 else ''} written,"
            f" {result.fresh - result.fresh_none} up to date,"
            f" {result.derived - n + result.fresh_none} with no attributed lines",
            err=True,
        )
    return 0


def run_pending(
    conn: sqlite3.Connection, as_json: bool, refresh_first: bool = True, cwd: Path | None = None
) -> int:
    """``deja annotate --pending``: write every late note (``hooks/late.py``), no time limit."""
    from deja_blame.errors import DejaError
    from deja_blame.hooks import late
    from deja_blame.hooks.pending import wait_for_hooks

    repo = open_repository(cwd or Path.cwd())
    wait_for_hooks(repo)  # a job at work may finish (and clear) its own record
    result = late.complete(repo, conn, None, refresh_first=refresh_first)
    if result.left:
        raise DejaError(
            f"{late.summary(result.left, fix=False)}: {result.problem or 'not done'}",
            hint="run it again when the index is free (another deja may be writing it)",
        )
    if as_json:
        print_json({"written": result.done, "left": result.left})
    else:
        n = len(result.done)
        if n:
            click.echo(f"deja: wrote {n} late note{'s' if n != 1 else ''}", err=True)
        else:
            left = _history_left(repo, conn)
            if left:
                what = "commit" if left == 1 else "commits"
                click.echo(
                    f"deja: no late notes; but {left} {what} of the branch that sessions wrote"
                    f" to the files of {'has' if left == 1 else 'have'} no up-to-date note (a"
                    " transcript indexed after the commit): deja annotate --all writes them",
                    err=True,
                )
            else:
                click.echo("deja: no late notes", err=True)
    return 0


def _history_left(repo: pygit2.Repository, conn: sqlite3.Connection) -> int | None:
    """What ``deja doctor``'s history-notes check counts (``unannotated``): commits a
    transcript indexed after them left with no note, which --pending does not write.
    Only where notes are kept (a notes ref, or a pass done); one small query when the
    last complete pass is current."""
    from deja_blame.errors import DejaError
    from deja_blame.notes.annotate_all import unannotated
    from deja_blame.notes.history_state import HistoryState
    from deja_blame.notes.store import ref_target

    try:
        if ref_target(repo) is None and HistoryState(repo).done is None:
            return None
        return unannotated(repo, conn)
    except (DejaError, sqlite3.Error, OSError):
        return None  # not this command's to report
