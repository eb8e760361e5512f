"""deja why FILE:LINE: the session, prompt and edit behind one line."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import click

from deja_blame.attribution.answer import too_short
from deja_blame.attribution.api import compute
from deja_blame.attribution.explain import line_story
from deja_blame.gitutil import SHALLOW_WARNING, is_shallow
from deja_blame.jsonout import print_json
from deja_blame.output import (
    UNPLACED_HUNK,
    agent_word,
    clip,
    code,
    hunk_header,
    placed_by_text,
    shorten,
    style,
    terminal,
    terminal_lines,
    use_colour,
    utc_minute,
    utc_second,
    warn,
    without_code,
)
from deja_blame.outputs.escape import CODE_MARKER
from deja_blame.outputs.session_text import exit_text, no_edit_text, via_text
from deja_blame.session_ids import short

# deja why's text shows this much of a long text, then says how much more there is
# (--json keeps it whole): a 1 MiB prompt and a 5 MB line made 6.3 MB of output
LINE_CHARS = 500  # a line of code (the line asked about, an edit's)
PROMPT_LINES = 20
PROMPT_CHARS = 2_000  # the request shown, all its lines together
HUNK_LINES = 40  # each side of each hunk of the edit


def _more_lines(n: int) -> str:
    return f"  … [{n:,} more line{'s' if n != 1 else ''}]"


def _print_request(text: str, when: str, c: bool, own_lines: bool = True) -> None:
    """The person's request under ``Asked (WHEN)``: inert, cut as long; its own lines
    (a transcript on this machine), or one line (``own_lines`` False: a note, which
    anyone who can push may have written, prints no line of its own)."""
    echo = click.echo
    echo("\n" + style("Asked", c, bold=True) + f"  ({terminal(when)})")
    clipped = clip(text, PROMPT_CHARS)
    lines = terminal_lines(clipped) if own_lines else [terminal(clipped)]
    for line in lines[:PROMPT_LINES]:
        echo(f"  {line}")
    if len(lines) > PROMPT_LINES:
        echo(_more_lines(len(lines) - PROMPT_LINES))


def _print_noted_session(info: dict[str, Any], c: bool) -> None:
    """What a note says of its session besides the project and start (a reviewer's
    clone): the agent and model, and the first request where its author opted in
    (``--json``'s ``session_info``), escaped as the transcript's are."""
    said = []
    if info.get("agent"):
        said.append(f"agent {agent_word(info['agent'])}")
    if info.get("model"):
        said.append(f"model {shorten(str(info['model']), 60)}")
    if said:
        click.echo("  ".join(said))
    prompt = info.get("first_prompt")
    if isinstance(prompt, str) and prompt.strip():
        _print_request(prompt, "its first request, from the note", c, own_lines=False)


def split_target(target: str) -> tuple[Path, int]:
    path, sep, line = target.rpartition(":")
    # ASCII digits only: str.isdigit() takes "²", which int() refuses
    number = int(line) if sep and path and re.fullmatch(r"-?[0-9]+", line) else None
    if number is not None and number < 1:
        # 0 and -3 alike (NEWCOMER14 #4: -3 was "not FILE:LINE", 0 "lines start at 1")
        raise click.BadParameter(f"{target!r}: lines start at 1 (as in git blame and editors)")
    if number is None:
        raise click.BadParameter(f"{target!r} is not FILE:LINE (for example src/app.py:42)")
    return Path(path), number


def explain(
    conn: sqlite3.Connection, target: str, rev: str | None, refresh: bool = True
) -> dict[str, Any]:
    file, line = split_target(target)
    result = compute(conn, file, rev, (line, line), refresh, one_question=True)
    if not result.lines:
        # only an empty file gets here (a line past the end is git blame's own error in
        # compute): said in the same words
        raise too_short(result.path, 0)
    if is_shallow(str(result.root)):
        warn(SHALLOW_WARNING)
    return line_story(conn, result, result.lines[0])


HISTORY_HEADING = "History (oldest first, by commit time)"


def _code(text: str, width: int) -> str:
    """A line of code as it stands (its white space kept), cut at ``width``, never
    inside the ``<U+XXXX>`` that shows a control character (half a marker would not
    say which character is there)."""
    one = code(text).replace("\t", "    ")
    if len(one) <= width:
        return one
    cut = one[: width - 1]
    start = cut.rfind("<U+")
    if start != -1 and ">" not in cut[start:] and CODE_MARKER.match(one, start):
        cut = cut[:start]
    return cut + "…"


def _print_history(
    history: list[dict[str, Any]],
    c: bool,
    uncommitted: str | None = None,
    by: tuple[str, str | None] | None = None,
) -> None:
    """``uncommitted``: the line's text in the working tree, not committed yet, shown
    last (``history`` is then the versions of the line of HEAD it changed), with ``by``,
    the (session, agent) that wrote it, if one did."""
    from deja_blame.transcripts.registry import label_of  # the 14 plug-ins: text only

    shown = len(history) + (1 if uncommitted is not None and history else 0)
    if shown < 2 and not any(v["session"] for v in history):
        return
    # each version's time is its commit's; the edit's (above) and blame's column are
    # when the session wrote the line (trial 16 #7: neither was labelled)
    click.echo("\n" + style(HISTORY_HEADING, c, bold=True))
    for v in history:
        when = terminal(utc_minute(v["at"]))
        if v["session"]:
            # the agent as blame's column names it (claude, not claude-code)
            who = f"{terminal(short(v['session']))[:8]} {terminal(label_of(v['agent']))}"
        else:
            who = terminal(v["author"] or "-")
        click.echo(f"  {v['commit'][:8]} {when:<20} {shorten(who, 28):<28} {_code(v['text'], 70)}")
    if uncommitted is not None and history:
        who = f"{terminal(short(by[0]))[:8]} {agent_word(by[1])}" if by else ""
        click.echo(
            f"  {'0' * 8} {'not committed yet':<20} {shorten(who, 28):<28} {_code(uncommitted, 70)}"
        )


def _late_by(seconds: int) -> str:
    """``seconds`` as a person says it: "15 min", "3 h 5 min"."""
    minutes = max(1, round(seconds / 60))
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h" + (f" {minutes % 60} min" if minutes % 60 else "")


def run_why(
    conn: sqlite3.Connection, target: str, rev: str | None, as_json: bool, refresh: bool = True
) -> int:
    doc = explain(conn, target, rev, refresh=refresh)
    if as_json:
        print_json(doc)
        return 0
    c = use_colour()
    echo = click.echo
    echo(f"{terminal(doc['path'])}:{doc['line']}  {code(clip(doc['text'], LINE_CHARS))}")
    commit = doc["commit"][:12] if doc["commit"] else "(not committed yet)"
    if not doc["session"]:
        # the person git names for the line's commit (its version in the history)
        own = next((v for v in doc["history"] if v["commit"] == doc["commit"]), None)
        by = (
            f" by {terminal(own['author'])} ({terminal((own.get('at') or '')[:10] or '?')})"
            if own is not None and own.get("author")
            else ""
        )
        echo(f"commit {commit}{by}: not written by any indexed session (a person, or unknown)")
        by_command = doc.get("changed_by_command")
        if by_command:
            echo(
                f"changed by a command of session {terminal(by_command['session'])}"
                f" ({terminal(utc_second(by_command['at']) or 'no time')}): {shorten(by_command['command'], 100)}"
            )
        later = doc.get("written_after_commit")
        if later:
            echo(
                f"session {terminal(later['session'])} ({agent_word(later['agent'])}) wrote this"
                f" line, but its write is dated {terminal(utc_second(later['at']))}, after the commit"
                f" ({terminal(later['commit_at'])})"
                + (
                    ": its transcript records no times, and deja dated each record when it"
                    " first read it"
                    if later.get("first_seen")
                    else ""
                )
            )
        here = doc.get("written_here_after_commit")
        if here:
            began = (
                f"it began at {terminal(here['began'])}, after that commit"
                if here.get("began_after_commit")
                else "it ran in this repository, on the commit's clock"
            )
            echo(
                f"session {terminal(here['session'])} ({agent_word(here['agent'])}) wrote this"
                f" line again at {terminal(utc_second(here['at']))}, after the commit"
                f" ({terminal(here['commit_at'])}) that already held it: {began}"
            )
        ahead = doc.get("written_elsewhere_after_commit")
        if ahead:
            echo(
                f"session {terminal(ahead['session'])} ({agent_word(ahead['agent'])}) wrote this"
                f" line in another clone or on another machine ({terminal(ahead['clone'])}),"
                f" its write dated {terminal(utc_second(ahead['at']))},"
                f" {_late_by(ahead['ahead_seconds'])} after the commit ({terminal(ahead['commit_at'])})"
                " that holds it: if it ran before the commit, the clock where it ran is ahead"
                " of git's by more than the 2 minutes deja allows: set that machine's clock right"
            )
        untimed = doc.get("written_untimed")
        if untimed:
            echo(
                f"session {terminal(untimed['session'])} ({agent_word(untimed['agent'])}) wrote"
                " this line, but its transcript gives no time for the write: nothing places"
                " it before the commit"
            )
        elsewhere = doc.get("written_in_another_clone")
        if elsewhere:
            echo(
                f"session {terminal(elsewhere['session'])} ({agent_word(elsewhere['agent'])})"
                f" wrote this line in another clone ({terminal(elsewhere['clone'])}); it is"
                " counted once a commit shows that session worked on this repository"
            )
        carried = doc.get("written_by_left_out")
        if carried:
            echo(
                f"a history this repository carries wrote this line ({terminal(carried['path'])},"
                f" {agent_word(carried['agent'])}); deja leaves such a history out, as whoever"
                f" committed it wrote it: {terminal(carried['trust'])} reads it"
            )
        first = next((v for v in doc["history"] if v["session"]), None)
        if first is not None:
            echo(
                f"an earlier version was written by session {terminal(first['session'])}"
                f" ({agent_word(first['agent'] or '?')}) in commit {first['commit'][:12]}"
            )
        _print_history(doc["history"], c, uncommitted=None if doc["commit"] else doc["text"])
        return 0
    conf = doc["confidence"]
    echo(
        style(f"session {terminal(doc['session'])}", c, bold=True)
        + f"  commit {commit}  confidence {conf if conf is not None else '?'}"
        + f"  (from {via_text(doc['via'])})"
    )
    info = doc.get("session_info") or {}
    from deja_blame.notes.public import project_meaning

    echo(
        f"project {terminal(info.get('project') or '-')}{project_meaning(info.get('project'))}"
        f"  started {terminal(utc_second(info.get('started_at')) or '?')}"
    )
    if doc.get("note_only"):
        echo("(the transcript is not on this machine: only the commit's note is known)")
        _print_noted_session(info, c)
        _print_history(doc["history"], c)
        return 0
    if doc.get("prompt"):
        _print_request(doc["prompt"]["text"], utc_second(doc["prompt"]["at"]) or "?", c)
    if doc.get("assistant"):
        echo("\n" + style("The agent said", c, bold=True))
        for m in doc["assistant"]:
            echo(f"  {shorten(without_code(m['text']), 200)}")
    missing = doc.get("no_edit_of_file")
    if missing is not None:
        other = missing.get("added_elsewhere")
        echo("\n" + no_edit_text(terminal(doc["path"]), terminal(other) if other else None))
    if doc.get("edit"):
        e = doc["edit"]
        by = f", {shorten(e['model'], 60)}" if e.get("model") else ""
        heading = (
            f"The edit ({shorten(e['tool'], 60)}{by},"
            f" written {terminal(utc_second(e['at']) or 'at a time not known')})"
        )
        echo("\n" + style(heading, c, bold=True))
        # the file the edit wrote: another one where a block moved from it gave the line
        edited = terminal(e.get("file") or doc["path"])
        echo(f"--- a/{edited}\n+++ b/{edited}")
        for h in e["hunks"]:
            if h.get("old_start") is not None:
                header = hunk_header(
                    h["old_start"], len(h["removed"]), h["new_start"], len(h["added"])
                )
                if h.get("placed_by_text"):
                    header += " " + placed_by_text(doc["commit"])
                echo(style(header, c, fg="cyan"))
            else:
                echo(style(UNPLACED_HUNK, c, fg="cyan"))
            for sign, side, tint in (("-", h["removed"], "red"), ("+", h["added"], "green")):
                for text in side[:HUNK_LINES]:
                    echo(style(f"{sign}{code(clip(text, LINE_CHARS))}", c, fg=tint))
                if len(side) > HUNK_LINES:
                    echo(_more_lines(len(side) - HUNK_LINES))
    if doc.get("commands_after"):
        echo("\n" + style("Then ran", c, bold=True))
        for cmd in doc["commands_after"]:
            exit_code = cmd["exit_code"]
            mark = exit_text(exit_code, cmd.get("status"))
            fg = None if exit_code is None else ("green" if exit_code == 0 else "red")
            echo(f"  $ {shorten(cmd['command'], 80)}  " + style(mark, c, fg=fg))
    _print_history(
        doc["history"],
        c,
        uncommitted=None if doc["commit"] else doc["text"],
        by=(doc["session"], (doc.get("session_info") or {}).get("agent")),
    )
    return 0
