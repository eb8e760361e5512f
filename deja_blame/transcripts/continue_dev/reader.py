"""Continue's sessions: ``{"sessionId", "workspaceDirectory", "history": [{"message":
{"role", "content", "toolCalls"}, "toolCallStates": [{"toolCallId", "toolCall",
"status", "parsedArgs"}]}]}``, no times (a record's time is when the index first saw it:
``transcripts/first_seen.py``).

A tool call is an edit only when its state is ``done``: ``canceled`` (the
person said no) and ``errored`` wrote nothing. ``Edit``/``single_find_and_replace``
replace a string, ``MultiEdit``/``multi_edit`` several, ``Write``/``create_new_file``
write a whole file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deja_blame.models import Session
from deja_blame.transcripts.builder import SessionBuilder
from deja_blame.transcripts.first_seen import FirstSeen
from deja_blame.transcripts.reading import load_document
from deja_blame.transcripts.text import clean_user_text
from deja_blame.transcripts.tool_edits import (
    add_replacement,
    add_replacements,
    add_write,
    array,
    file_time,
    first_str,
    json_args,
    obj,
    path_of,
)

AGENT = "continue"
VIEW_TOOLS = {"Read": "view", "read_file": "view", "List": "list", "ls": "list"}
SHELL_TOOLS = {"Bash", "run_terminal_command"}


def parse_transcript(
    path: Path | str, session_id: str | None = None, seen: FirstSeen | None = None
) -> Session:
    """``seen``: when the index saw each history item first (none: every item is the
    file's time)."""
    path = Path(path)
    seen = seen or FirstSeen(file_time(path))
    doc = load_document(path)  # half written: IncompleteTranscript, read at the next run
    if not isinstance(doc, dict):
        doc = {}
    sid = session_id or str(doc.get("sessionId") or path.stem)
    b = SessionBuilder(sid, str(path.resolve()), AGENT)
    workspace = doc.get("workspaceDirectory")
    project = path_of(workspace) if isinstance(workspace, str) else None
    b.cwd = project
    b.seen_time(seen.now)
    # "history" of another shape raises: the document is skipped and said, as a whole
    for item in doc.get("history") or []:
        if isinstance(item, dict):
            at = seen.at(item)
            b.seen_time(at)
            _item(b, item, at)
    return b.finish(project)


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text")) for p in content if isinstance(p, dict) and p.get("type") == "text"
        )
    return ""


def _item(b: SessionBuilder, item: dict[str, Any], at: str | None) -> None:
    message = obj(item.get("message"))
    role = message.get("role")
    text = _text(message.get("content")).strip()
    if role == "user":
        b.message("user", clean_user_text(text).strip(), at)
    elif role == "assistant":
        b.message("assistant", text, at)
    for state in array(item.get("toolCallStates")):
        if not isinstance(state, dict) or state.get("status") != "done":
            continue  # canceled (refused), errored, or never ran: nothing written
        call = obj(state.get("toolCall"))
        function = obj(call.get("function"))
        args = state.get("parsedArgs")
        if not isinstance(args, dict):
            args = json_args(function.get("arguments"))
        _tool(b, str(function.get("name") or ""), args, at)


def _tool(b: SessionBuilder, name: str, args: dict[str, Any], at: str | None) -> None:
    target = first_str(args, "file_path", "filepath", "filePath", "path")
    if name in ("Edit", "single_find_and_replace"):
        add_replacement(b, target, name, args.get("old_string"), args.get("new_string"), at)
    elif name in ("MultiEdit", "multi_edit"):
        edits = [e for e in array(args.get("edits")) if isinstance(e, dict)]
        add_replacements(
            b, target, name, [(e.get("old_string"), e.get("new_string")) for e in edits], at
        )
    elif name in ("Write", "create_new_file"):
        add_write(b, target, name, first_str(args, "content", "contents"), at)
    elif name in SHELL_TOOLS and isinstance(args.get("command"), str):
        b.command(args["command"], b.cwd, at)
    elif name in VIEW_TOOLS:
        full = b.absolute(path_of(target))
        if full is not None:
            b.file(full, VIEW_TOOLS[name], at)
