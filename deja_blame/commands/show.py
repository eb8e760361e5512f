"""deja show SESSION: one indexed session."""

from __future__ import annotations

import sqlite3

import click

from deja_blame.index.store import load_session, resolve_session_id
from deja_blame.jsonout import print_json
from deja_blame.models import Session
from deja_blame.output import inert, shorten, style, use_colour


def run_show(conn: sqlite3.Connection, session: str, as_json: bool, full: bool = False) -> int:
    loaded = load_session(conn, resolve_session_id(conn, session))
    if as_json:
        print_json(loaded.to_json())
    else:
        print_session(loaded, full=full)
    return 0


def print_session(s: Session, full: bool = False) -> None:
    c = use_colour()
    echo = click.echo
    # ids, projects and paths come from directory names and transcripts: inert too
    echo(style(f"session {inert(s.session_id)}", c, bold=True) + f"  ({s.source})")
    echo(f"project     {inert(s.project)}")
    echo(f"time        {s.started_at or '?'} -> {s.ended_at or '?'}")
    echo(f"transcript  {inert(s.transcript)}")
    if s.skipped_lines:
        echo(style(f"skipped     {s.skipped_lines} malformed lines", c, fg="yellow"))
    width = 10_000 if full else 100
    prompts = [m for m in s.messages if m.role == "user"]
    if prompts:
        echo("\n" + style("Requests", c, bold=True))
        for m in prompts:
            echo(f"  {_time(m.at)}  {shorten(m.text, width) if not full else inert(m.text)}")
    if s.commands:
        echo("\n" + style("Commands", c, bold=True))
        for cmd in s.commands:
            code = "exit ?" if cmd.exit_code is None else f"exit {cmd.exit_code}"
            colour = None if cmd.exit_code is None else ("green" if cmd.exit_code == 0 else "red")
            echo(f"  {_time(cmd.at)}  $ {shorten(cmd.command, 70)}  " + style(code, c, fg=colour))
    if s.edits:
        echo("\n" + style("Edits", c, bold=True))
        for e in s.edits:
            who = "" if e.source == "agent" else "  (by the person)"
            echo(
                f"  {_time(e.at)}  {inert(e.path)}  +{len(e.added)} -{len(e.removed)}  [{e.tool}]{who}"
            )
    viewed = sorted({f.path for f in s.files if f.action in ("view", "list")})
    if viewed:
        echo("\n" + style("Read", c, bold=True))
        for p in viewed[:20]:
            echo(f"  {inert(p)}")
        if len(viewed) > 20:
            echo(f"  ... and {len(viewed) - 20} more")
    if full:
        echo("\n" + style("Conversation", c, bold=True))
        for m in s.messages:
            echo(f"--- {m.role} {_time(m.at)}")
            echo(inert(m.text))


def _time(at: str | None) -> str:
    if not at:
        return "--:--:--"
    return at[11:19] if len(at) >= 19 else at
