"""One session as text: what deja show and deja parse print."""

from __future__ import annotations

import os

import click

from deja_blame.models import Session
from deja_blame.output import (
    agent_word,
    counted,
    shorten,
    style,
    terminal,
    terminal_lines,
    use_colour,
    utc_second,
)


def print_session(s: Session, full: bool = False) -> None:
    c = use_colour()
    echo = click.echo
    # ids, projects and paths come from directory names and transcripts: inert too
    echo(style(f"session {terminal(s.session_id)}", c, bold=True) + f"  ({agent_word(s.source)})")
    echo(f"project     {terminal(s.project)}")
    if s.model:
        echo(f"model       {terminal(s.model)}")
    echo(
        f"time        {terminal(utc_second(s.started_at) or '?')}"
        f" -> {terminal(utc_second(s.ended_at) or '?')}"
    )
    echo(f"transcript  {terminal(s.transcript)}")
    if s.transcript and not os.path.exists(s.transcript):
        echo(
            style(
                "            (gone since it was indexed: long texts show only their"
                " excerpt kept in the index)",
                c,
                fg="yellow",
            )
        )
    if s.skipped_lines:
        echo(style(f"skipped     {counted(s.skipped_lines, 'malformed line')}", c, fg="yellow"))
    width = 10_000 if full else 100
    prompts = [m for m in s.messages if m.role == "user"]
    if prompts:
        echo("\n" + style("Requests", c, bold=True))
        for m in prompts:
            echo(f"  {_time(m.at)}  {shorten(m.text, width)}")
    if s.commands:
        echo("\n" + style("Commands", c, bold=True))
        for cmd in s.commands:
            code = exit_text(cmd.exit_code, cmd.status)
            colour = None if cmd.exit_code is None else ("green" if cmd.exit_code == 0 else "red")
            echo(f"  {_time(cmd.at)}  $ {shorten(cmd.command, 70)}  " + style(code, c, fg=colour))
    if s.edits:
        echo("\n" + style("Edits", c, bold=True))
        for e in s.edits:
            who = "" if e.source == "agent" else "  (by the person)"
            if e.truncated:
                who += style(
                    "  (cut: the transcript holds only part of it; later lines are not attributed)",
                    c,
                    fg="yellow",
                )
            echo(
                f"  {_time(e.at)}  {terminal(e.path)}  +{len(e.added)} -{len(e.removed)}  [{terminal(e.tool)}]{who}"
            )
    viewed = sorted({f.path for f in s.files if f.action in ("view", "list")})
    if viewed:
        echo("\n" + style("Read", c, bold=True))
        for p in viewed[:20]:
            echo(f"  {terminal(p)}")
        if len(viewed) > 20:
            echo(f"  ... and {len(viewed) - 20} more")
    if full:
        echo("\n" + style("Conversation", c, bold=True))
        for m in s.messages:
            echo(f"--- {terminal(m.role)} {_time(m.at)}")
            for line in terminal_lines(m.text):  # indented: no line of it looks like deja's
                echo(f"  {line}")


def _time(at: str | None) -> str:
    if not at:
        return "--:--:--"
    return terminal(at[11:19] if len(at) >= 19 else at)


def via_text(via: str | None) -> str:
    """Where a line's session comes from, in prose: ``the index``, ``the note`` (deja's,
    of the line's commit), ``git-ai's note`` (``via`` in JSON: index, note, git-ai)."""
    known = {None: "the index", "index": "the index", "note": "the note"}
    if via in known:
        return known[via]
    return "git-ai's note" if via == "git-ai" else f"the {terminal(via)}"


def exit_text(code: int | None, status: str | None) -> str:
    """A command's outcome in a word: its exit code, or why there is none."""
    if code is not None:
        return f"exit {code}"
    if (status or "").upper() == "RUNNING":
        return "running in background"
    return "no exit code recorded"


def no_edit_text(path: str, other: str | None) -> str:
    """The sentence for a line whose session's transcript is here but holds no edit of
    this file adding it (``line_story``'s ``no_edit_of_file``); ``other``: the file it
    added the same text to, if any. Printed as it is: the caller escapes both."""
    also = f" (it added the same text to {other}: another file's edit, not shown)" if other else ""
    return f"no edit of {path} in the session's transcript adds this line{also}"
