"""deja forget SESSION: remove one session from the index, for good.

For a session that should not count, or one indexed from a stale copy of its
transcript. Its transcript is not touched. The session is kept in a list of its
own (``index.forgotten``) that every index run honours, ``deja index --rebuild``
too, until ``deja forget --undo SESSION``; then the next run reads it again from
the start.

The index is not all: a commit note (``refs/notes/deja``) written while the session
was indexed names it, and blame, why, stats and report read notes first, here and
in every clone that fetched them. Forgetting says how many of this repository's
notes still name the session; deja has no command that takes a session out of a
note (``deja annotate`` merges with the note there), so it names git's.
"""

from __future__ import annotations

import os
import sqlite3

import click

from deja_blame.errors import DejaError
from deja_blame.index.db import transaction
from deja_blame.index.forgotten import kept_forgotten, one_of, save_forgotten
from deja_blame.index.store import forget_session, remember_forgotten, resolve_session_id
from deja_blame.jsonout import print_json
from deja_blame.output import terminal


def run_forget(
    conn: sqlite3.Connection, session: str | None, as_json: bool = False, undo: bool = False
) -> int:
    if session is None:
        if undo:
            raise DejaError("--undo needs the SESSION to read again", hint="list them: deja forget")
        return _list(as_json)
    if undo:
        return _undo(conn, session, as_json)
    kept = kept_forgotten()
    try:
        session_id = resolve_session_id(conn, session)
    except DejaError:
        already = one_of(kept, session)
        if already is None:
            raise
        session_id = already  # forgotten before: the index holds it no more
    with transaction(conn):
        transcript = forget_session(conn, session_id)
    where = save_forgotten([*kept, session_id]) if session_id not in kept else None
    still_there = bool(transcript) and os.path.exists(transcript or "")
    noted = noted_commits(session_id)
    if as_json:
        print_json(
            {
                "forgotten": session_id,
                "transcript": transcript,
                "transcript_exists": still_there,
                "noted_commits": noted,
            }
        )
        return 0
    click.echo(f"forgot session {terminal(session_id)}")
    if where is not None:
        click.echo(
            f"note: kept out of every index, deja index --rebuild too, until"
            f" deja forget --undo {terminal(session_id)} (the list: {terminal(str(where))})",
            err=True,
        )
    if noted:
        from deja_blame.output import counted

        click.echo(
            f"note: {counted(len(noted), 'commit note')} of this repository (refs/notes/deja)"
            f" still {'names' if len(noted) == 1 else 'name'} it: blame, why, stats and report show its lines from them, here and"
            " in every clone that fetches them. deja has no command that takes a session out"
            " of a note: edit each, git notes --ref=deja edit COMMIT (first:"
            f" {noted[0][:12]}), then deja notes push",
            err=True,
        )
    return 0


def noted_commits(session_id: str) -> list[str]:
    """The commits whose note, in the repository here (if any), names the session."""
    from pathlib import Path

    from deja_blame.commands.show import noted_session

    try:
        doc = noted_session(Path.cwd(), session_id)
    except DejaError:
        return []
    return [] if doc is None else [c["commit"] for c in doc["commits"]]


def _undo(conn: sqlite3.Connection, session: str, as_json: bool) -> int:
    kept = kept_forgotten()
    session_id = one_of(kept, session)
    if session_id is None:
        raise DejaError(f"no forgotten session matches {session!r}", hint="list them: deja forget")
    save_forgotten([sid for sid in kept if sid != session_id])
    with transaction(conn):
        remember_forgotten(conn, session_id, None)  # read again even if its transcript is as it was
    if as_json:
        print_json({"undone": session_id})
        return 0
    click.echo(f"session {terminal(session_id)} is no longer forgotten")
    click.echo("read again at the next deja command (or now: deja index)", err=True)
    return 0


def _list(as_json: bool) -> int:
    from deja_blame.index.forgotten import forgotten_file

    kept = kept_forgotten()
    if as_json:
        print_json({"forgotten_sessions": kept, "file": str(forgotten_file())})
        return 0
    if not kept:
        click.echo("no session is forgotten")
    for sid in kept:
        click.echo(terminal(sid))
    return 0
