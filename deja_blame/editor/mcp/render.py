"""Compact text for a model: what the tools' data says, in few tokens.

Every field was made fit to leave already (``scope.Repository``); here it is
only made one line where it must be (``inert``: no control characters). A line of
a file (the line asked about, an edit's, a history's) shows each control character
as ``<U+XXXX>`` (``code``), as the terminal does: removed, an escape sequence would
leave a line that is not the file's.
"""

from __future__ import annotations

from typing import Any

from deja_blame.notes.public import project_meaning
from deja_blame.output import (
    UNPLACED_HUNK,
    agent_word,
    code,
    hunk_header,
    placed_by_text,
    terminal,
)
from deja_blame.outputs.session_text import no_edit_text
from deja_blame.session_ids import short


def _one(value: Any) -> str:
    return " ".join(terminal(str(value)).split())


def _code_line(value: Any) -> str:
    """A line of a file, its control characters shown (``code``), on one line."""
    return " ".join(code(value).split())


def _agent(agent_id: Any, missing: str = "?") -> str:
    """The agent as every text output names it (``claude``); structuredContent keeps
    the id (``claude-code``), as every JSON does."""
    return " ".join(agent_word(str(agent_id)).split()) if agent_id else missing


def _lines(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


def _who(run: dict[str, Any]) -> str:
    if run["kind"] == "agent":
        model = f", model {_one(run['model'])}" if run.get("model") else ""
        conf = run.get("confidence")
        sure = f", confidence {conf:.2f}" if isinstance(conf, (int, float)) else ""
        return f"agent session {_one(run['session'])} ({_agent(run.get('agent'))}{model}{sure})"
    if run["kind"] == "uncommitted":
        return "not committed yet, and no indexed session wrote it (the person's own edit?)"
    who = _one(run.get("author") or "?")
    return f"person {who}"


def _commit(run: dict[str, Any]) -> str:
    if not run.get("commit"):
        return "not committed yet"
    when = f" {run['committed_at'][:10]}" if run.get("committed_at") else ""
    subject = f' "{_one(run["summary"])}"' if run.get("summary") else ""
    return f"commit {run['commit'][:12]}{when}{subject}"


def _hunk_header(hunk: dict[str, Any], commit: str | None) -> str:
    """git's ``@@`` line, from the hunk's own counts (its lines may be cut short)."""
    if hunk.get("old_start") is None or hunk.get("new_start") is None:
        return UNPLACED_HUNK
    header = hunk_header(
        hunk["old_start"],
        hunk.get("removed_count", len(hunk["removed"])),
        hunk["new_start"],
        hunk.get("added_count", len(hunk["added"])),
    )
    return f"{header} {placed_by_text(commit)}" if hunk.get("placed_by_text") else header


def why_run(path: str, run: dict[str, Any]) -> str:
    out = [f"{_one(path)} {_lines(run['start'], run['end'])}: {_code_line(run['text'])}"]
    out.append(f"  by {_who(run)}; {_commit(run)}")
    if run["kind"] == "agent":
        if run.get("note_only"):
            out.append("  (known from the commit's note: the transcript is not on this machine)")
        if run.get("started_at"):
            out.append(f"  session started {_one(run['started_at'])}")
        if run.get("request"):
            out.append(f"  request: {_one(run['request'])}")
        elif run.get("request_withheld"):
            out.append(
                "  request: withheld (the person has not opted in:"
                " git config deja.notes.prompts true)"
            )
        for said in run.get("agent_said") or []:
            out.append(f"  agent said: {_one(said)}")
        missing = run.get("no_edit_of_file")
        if missing is not None:
            other = missing.get("added_elsewhere")
            out.append(f"  {no_edit_text(_one(path), _one(other) if other else None)}")
        edit = run.get("edit")
        if edit:
            out.append(f"  edit: {_one(edit.get('tool'))}, written {_one(edit.get('at') or '?')}")
            for h in edit["hunks"]:
                out.append(f"    {_hunk_header(h, run.get('commit'))}")
                out += [f"    -{code(x)}" for x in h["removed"]]
                out += [f"    +{code(x)}" for x in h["added"]]
            if edit.get("lines_left_out"):
                out.append(f"    ({edit['lines_left_out']} more lines of the edit left out)")
        for c in run.get("commands_after") or []:
            exit_code = c["exit_code"]
            result = (
                f"exit {exit_code}"
                if exit_code is not None
                else _one(c.get("status") or "no exit code")
            )
            out.append(f"  then ran: {_one(c['command'])} -> {result}")
    elif run.get("changed_by_command"):
        by = run["changed_by_command"]
        out.append(
            f"  changed by a command of session {_one(by['session'])}: {_one(by['command'])}"
        )
    history = run.get("history") or []
    if len(history) > 1 or any(v.get("session") for v in history):
        out.append("  history (oldest first, by commit time):")
        for v in history:
            who = (
                f"session {_one(short(v['session']))[:8]} {_agent(v.get('agent'), '')}"
                if v.get("session")
                else _one(v.get("author") or "-")
            )
            out.append(
                f"    {(v.get('commit') or '')[:8]} {_one((v.get('at') or '')[:10])} {who}: {_code_line(v['text'])}"
            )
    return "\n".join(out)


def blame_run(run: dict[str, Any]) -> str:
    return f"{_lines(run['start'], run['end'])}: {_who(run)}; {_commit(run)}"


def session_line(s: dict[str, Any]) -> str:
    what = (
        "from this repository's notes"
        if s.get("from_notes")
        else f"{s.get('edits') or 0} edits, {s.get('commands') or 0} commands"
    )
    model = f" {_one(s['model'])}" if s.get("model") else ""
    out = f"{_one(s['session'])} {_agent(s.get('agent'))}{model} started {_one(s.get('started_at') or '?')} ({what})"
    if s.get("first_request"):
        out += f"\n  first request: {_one(s['first_request'])}"
    if s.get("files"):
        out += "\n  files: " + ", ".join(_one(f) for f in s["files"][:10])
    return out


def show_head(d: dict[str, Any]) -> str:
    model = f", model {_one(d['model'])}" if d.get("model") else ""
    where = (
        " (from this repository's notes: its transcript is not here)" if d.get("from_notes") else ""
    )
    return (
        f"session {_one(d['session'])} ({_agent(d.get('agent'))}{model}){where}\n"
        f"started {_one(d.get('started_at') or '?')}, ended {_one(d.get('ended_at') or '?')},"
        f" in {_one(d.get('project') or '-')}{project_meaning(d.get('project'))}"
    )


def show_entry(e: dict[str, Any]) -> str:
    if e["kind"] == "request":
        if e.get("withheld"):
            return "request: withheld (not opted in: git config deja.notes.prompts true)"
        return f"request: {_one(e['text'])}"
    if e["kind"] == "file":
        return f"file {_one(e['path'])}: {', '.join(e['actions'])}"
    if e["kind"] == "commit":
        return f"commit {e['commit'][:12]}: {e['lines']} lines of {_one(e['path'])}"
    exit_code = e["exit_code"]
    ended = f"exit {exit_code}" if exit_code is not None else "no exit code"
    return f"ran: {_one(e['command'])} -> {ended}"


def answer(parts: list[str], data: dict[str, Any], tool: str) -> str:
    """The parts, and what to do for more when there is more."""
    text = "\n".join(parts) if parts else "nothing found"
    if data.get("next_cursor"):
        text += f'\n(more: call {tool} again with the same arguments and cursor "{data["next_cursor"]}")'
    return text
