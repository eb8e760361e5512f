"""Droid's sessions: ``session_start`` (``id``, ``cwd``), then ``message`` records
(``timestamp``, ``message.role``, ``message.content`` parts: ``text``,
``tool_use`` with ``id``, ``name``, ``input``; ``tool_result`` with
``tool_use_id``, ``content``, ``is_error``).

``ApplyPatch`` carries a ``*** Begin Patch`` text (context lines are not the
session's), ``Create`` a whole file, ``Edit`` an old and a new string. A call
is an edit once a result answers it without an error (a refused or failed call
wrote nothing). A request's text parts are one request; the part Droid adds for
each file the person named with ``@`` (``Contents of PATH (lines 1-25 of 25):``
and the lines) is that file viewed, not the person's words.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from deja_blame.models import Session
from deja_blame.transcripts.builder import SessionBuilder, record_time
from deja_blame.transcripts.files import is_regular
from deja_blame.transcripts.jsonl import WholeFile
from deja_blame.transcripts.reading import load_document
from deja_blame.transcripts.text import clean_user_text
from deja_blame.transcripts.tool_edits import (
    add_patch,
    add_replacement,
    add_replacements,
    add_write,
    array,
    first_str,
    json_args,
    path_of,
)

AGENT = "droid"
VIEW_TOOLS = {"Read": "view", "LS": "list", "Glob": "list"}
SHELL_TOOLS = {"Execute", "Bash"}
# the text Droid adds to a request for each file it names with ``@``
ATTACHED = re.compile(r"Contents of (.+?) \(lines \d+-\d+ of \d+\):\n")


def parse_transcript(path: Path | str, session_id: str | None = None) -> Session:
    path = Path(path)
    b = SessionBuilder(session_id or path.stem, str(path.resolve()), AGENT)
    b.session.model = _model(path)
    calls: dict[str, tuple[str, dict[str, Any], str | None]] = {}
    lines = WholeFile(path)
    for rec in lines:
        _record(b, rec, calls)
    session = b.finish()
    session.skipped_lines = lines.skipped
    return session


def _model(path: Path) -> str | None:
    settings = path.with_name(path.stem + ".settings.json")
    if not is_regular(settings):  # a link there is no settings file: never followed
        return None
    # Droid rewrites it whole: caught half written, the session waits for the next run
    # (IncompleteTranscript) rather than losing its model
    doc = load_document(settings)
    model = doc.get("model") if isinstance(doc, dict) else None
    return model if isinstance(model, str) else None


def _record(
    b: SessionBuilder, rec: dict[str, Any], calls: dict[str, tuple[str, dict[str, Any], str | None]]
) -> None:
    at = record_time(rec.get("timestamp"))
    b.seen_time(at)
    if rec.get("type") == "session_start":
        if isinstance(rec.get("cwd"), str) and b.cwd is None:
            b.cwd = rec["cwd"]
        return
    message = rec.get("message")
    if rec.get("type") != "message" or not isinstance(message, dict):
        return
    role = message.get("role")
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    said: list[str] = []  # the person's parts: one request
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str) and role == "user":
            attached = ATTACHED.match(part["text"])
            if attached:  # a file the person named with @: given to the model, not said
                full = b.absolute(attached.group(1))
                if full is not None:
                    b.file(full, "view", at)
            else:
                said.append(part["text"])
        elif kind == "text" and isinstance(part.get("text"), str) and role == "assistant":
            b.message("assistant", part["text"].strip(), at)
        elif kind == "tool_use" and isinstance(part.get("id"), str):
            calls[part["id"]] = (str(part.get("name") or ""), json_args(part.get("input")), at)
        elif kind == "tool_result":
            call = calls.pop(str(part.get("tool_use_id")), None)
            if call is not None and _succeeded(part):
                _tool(b, *call)
    if said:
        b.message("user", clean_user_text("\n".join(said)).strip(), at)


def _succeeded(result: dict[str, Any]) -> bool:
    if result.get("is_error") is True:
        return False
    content = result.get("content")
    if isinstance(content, str) and content.lstrip().startswith("{"):
        doc = json_args(content)
        if doc.get("success") is False or "error" in doc:
            return False
    return True


def _tool(b: SessionBuilder, name: str, args: dict[str, Any], at: str | None) -> None:
    target = first_str(args, "file_path", "path")
    if name == "ApplyPatch":
        add_patch(b, first_str(args, "input", "patch"), name, at)
    elif name == "Create":
        add_write(b, target, name, first_str(args, "content", "contents"), at)
    elif name == "Edit":
        old = first_str(args, "old_str", "old_string")
        new = first_str(args, "new_str", "new_string")
        add_replacement(b, target, name, old, new, at)
    elif name == "MultiEdit":
        edits = [e for e in array(args.get("edits")) if isinstance(e, dict)]
        pairs = [
            (first_str(e, "old_str", "old_string"), first_str(e, "new_str", "new_string"))
            for e in edits
        ]
        add_replacements(b, target, name, pairs, at)
    elif name in SHELL_TOOLS and isinstance(args.get("command"), str):
        b.command(args["command"], b.cwd, at)
    elif name in VIEW_TOOLS:
        full = b.absolute(path_of(target))
        if full is not None:
            b.file(full, VIEW_TOOLS[name], at)
