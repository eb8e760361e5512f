"""GitHub Copilot's session event stream (the VS Code extension's transcripts and
the Copilot CLI's ``events.jsonl`` write the same records).

``{"type": "session.start"|"user.message"|"assistant.message"|
"tool.execution_start"|"tool.execution_complete"|..., "data": {...},
"timestamp": ...}``. A file tool's call is an edit only once its
``tool.execution_complete`` says it succeeded (``success: true``, or a result
of type ``success``): a failed, denied or unanswered call wrote nothing.
``insert_edit_into_file`` sends a sketch of the file (``...existing code...`` for
the lines it keeps): its other lines are the session's, matched by content.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from deja_blame.models import Session
from deja_blame.transcripts.builder import SessionBuilder, record_time
from deja_blame.transcripts.jsonl import WholeFile
from deja_blame.transcripts.tool_edits import (
    add_patch,
    add_replacement,
    add_replacements,
    add_write,
    array,
    first_str,
    json_args,
    obj,
    path_of,
)

SHELL_TOOLS = {"run_in_terminal", "bash", "shell"}
# the line ``insert_edit_into_file`` puts for the file's lines it leaves as they are
# (``// ...existing code...``, ``# ...existing code...``, ``<!-- ...existing code... -->``)
EXISTING_CODE = re.compile(r"\.\.\.\s*existing code\s*\.\.\.", re.I)
VIEW_TOOLS = {"read_file": "view", "view": "view", "list_dir": "list"}


def read_events(path: Path, session_id: str, agent: str, project: str | None = None) -> Session:
    b = SessionBuilder(session_id, str(path.resolve()), agent)
    skipped = add_events(b, path)
    session = b.finish(project)
    session.skipped_lines = skipped
    return session


def add_events(
    b: SessionBuilder, path: Path, model_at: Callable[[str | None], str | None] | None = None
) -> int:
    """The stream's records added to ``b``; the lines skipped. ``model_at(time)``:
    the model at each record's time where the stream names none (VS Code's chat
    session beside it does)."""
    pending: dict[str, tuple[str, dict[str, Any], str | None]] = {}
    lines = WholeFile(path)
    for rec in lines:
        if model_at is not None:
            b.session.model = model_at(record_time(rec.get("timestamp"))) or b.session.model
        _record(b, rec, pending)
    return lines.skipped


def _record(
    b: SessionBuilder,
    rec: dict[str, Any],
    pending: dict[str, tuple[str, dict[str, Any], str | None]],
) -> None:
    kind = rec.get("type")
    data = obj(rec.get("data"))
    at = record_time(rec.get("timestamp"))
    b.seen_time(at)
    if kind == "session.start":
        context = obj(data.get("context"))
        cwd = first_str(context, "gitRoot", "cwd")
        if cwd and b.cwd is None:
            b.cwd = cwd
    elif kind == "session.model_change" and isinstance(data.get("newModel"), str):
        b.session.model = data["newModel"]
    elif kind == "user.message" and isinstance(data.get("content"), str):
        b.message("user", data["content"].strip(), at)
    elif kind == "assistant.message" and isinstance(data.get("content"), str):
        b.message("assistant", data["content"].strip(), at)
    elif kind == "tool.execution_start":
        call_id = data.get("toolCallId")
        if isinstance(call_id, str):
            name = str(data.get("toolName") or "")
            pending[call_id] = (name, json_args(data.get("arguments")), at)
    elif kind == "tool.execution_complete":
        call = pending.pop(str(data.get("toolCallId")), None)
        if call is not None and _succeeded(data):
            add_tool(b, *call)


def _succeeded(data: dict[str, Any]) -> bool:
    if "success" in data:
        return data["success"] is True
    result = data.get("result")
    if isinstance(result, dict) and "result_type" in result:
        return result["result_type"] == "success"
    return "error" not in data


def add_tool(b: SessionBuilder, name: str, args: dict[str, Any], at: str | None) -> None:
    """A tool call that succeeded: an edit, a command, a file viewed (or nothing).
    VS Code's chat sessions (``chat_session.py``) name the same tools."""
    target = first_str(args, "filePath", "path", "file_path")
    if name in ("replace_string_in_file", "edit", "str_replace"):
        old = first_str(args, "oldString", "old_str", "old_string")
        new = first_str(args, "newString", "new_str", "new_string")
        add_replacement(b, target, name, old, new, at)
    elif name == "multi_replace_string_in_file":
        by_file: dict[str, list[tuple[object, object]]] = {}
        for r in array(args.get("replacements")):
            if isinstance(r, dict) and isinstance(r.get("filePath"), str):
                by_file.setdefault(r["filePath"], []).append(
                    (r.get("oldString"), r.get("newString"))
                )
        for file, pairs in by_file.items():
            add_replacements(b, file, name, pairs, at)
    elif name in ("create_file", "create"):
        add_write(b, target, name, first_str(args, "content", "file_text"), at)
    elif name == "str_replace_editor":  # the CLI's older tool: one command per call
        command = args.get("command")
        if command == "create":
            add_write(b, target, name, args.get("file_text"), at)
        elif command == "str_replace":
            add_replacement(b, target, name, args.get("old_str"), args.get("new_str"), at)
    elif name == "insert_edit_into_file":
        add_replacement(b, target, name, "", _sketch_lines(first_str(args, "code")), at)
    elif name == "apply_patch":
        add_patch(b, first_str(args, "input", "patch"), name, at)
    elif name in SHELL_TOOLS and isinstance(args.get("command"), str):
        b.command(args["command"], b.cwd, at)
    elif name in VIEW_TOOLS:
        full = b.absolute(path_of(target))
        if full is not None:
            b.file(full, VIEW_TOOLS[name], at)


def _sketch_lines(code: str | None) -> str | None:
    """The lines an ``insert_edit_into_file`` sketch writes: all but its markers for
    the lines left as they were. Context it repeats is among them, as in a file
    written whole; they are matched by content, never placed."""
    if code is None:
        return None
    return "\n".join(line for line in code.split("\n") if not EXISTING_CODE.search(line))
