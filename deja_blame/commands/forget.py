"""deja forget SESSION: remove one session from the index, without a rebuild.

For a session indexed from a stale copy of its transcript, or one that should
not count. Its transcript is not touched; the session stays out of the index
until that transcript changes (then it is read again, from the start), or
until ``deja index --rebuild``.
"""

from __future__ import annotations

import os
import sqlite3

import click

from deja_blame.index.db import transaction
from deja_blame.index.store import forget_session, resolve_session_id
from deja_blame.jsonout import print_json
from deja_blame.output import terminal


def run_forget(conn: sqlite3.Connection, session: str, as_json: bool = False) -> int:
    session_id = resolve_session_id(conn, session)
    with transaction(conn):
        transcript = forget_session(conn, session_id)
    still_there = bool(transcript) and os.path.exists(transcript or "")
    if as_json:
        print_json(
            {"forgotten": session_id, "transcript": transcript, "transcript_exists": still_there}
        )
        return 0
    click.echo(f"forgot session {terminal(session_id)}")
    if still_there:
        click.echo(
            f"note: its transcript {terminal(transcript or '')} stays where it is; the"
            " session is read again when it changes, or by deja index --rebuild",
            err=True,
        )
    return 0
