"""Amp's threads: ``{"id": "T-…", "created": ms, "messages": [...], "env":
{"initial": {"trees": [{"uri": "file:///…"}]}}}``.

An assistant message's ``tool_use`` parts (``edit_file``: ``path``, ``old_str``,
``new_str``; ``create_file``: ``path``, ``content``) are answered by
``tool_result`` parts in the next user message, whose ``run.status`` is
``done`` when the tool ran; ``rejected-by-user``, ``error`` or ``cancelled``
wrote nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deja_blame.models import Session
from deja_blame.transcripts.builder import SessionBuilder, record_time
from deja_blame.transcripts.reading import load_document
from deja_blame.transcripts.text import normalise_path
from deja_blame.transcripts.tool_edits import (
    add_replacement,
    add_write,
    epoch_ms_time,
    first_str,
    obj,
    path_of,
)

AGENT = "amp"
VIEW_TOOLS = {"Read": "view", "read_file": "view", "list_directory": "list", "glob": "list"}
SHELL_TOOLS = {"Bash", "bash"}


def parse_transcript(path: Path | str, session_id: str | None = None) -> Session:
    path = Path(path)
    doc = load_document(path)  # half written: IncompleteTranscript, read at the next run
    if not isinstance(doc, dict):
        doc = {}
    b = SessionBuilder(session_id or str(doc.get("id") or path.stem), str(path.resolve()), AGENT)
    project = _project(doc)
    b.cwd = project
    b.seen_time(epoch_ms_time(doc.get("created")))
    calls: dict[str, tuple[str, dict[str, Any], str | None]] = {}
    # "messages" of another shape raises: the document is skipped and said, as a whole
    for message in doc.get("messages") or []:
        if isinstance(message, dict):
            _message(b, message, calls)
    return b.finish(project)


def _project(doc: dict[str, Any]) -> str | None:
    env = obj(doc.get("env"))
    initial = obj(env.get("initial"))
    for tree in initial.get("trees") or []:
        if isinstance(tree, dict):
            folder = path_of(tree.get("uri"))
            if folder:
                return normalise_path(folder)
    return None


def _message(
    b: SessionBuilder,
    message: dict[str, Any],
    calls: dict[str, tuple[str, dict[str, Any], str | None]],
) -> None:
    role = message.get("role")
    meta = obj(message.get("meta"))
    usage = obj(message.get("usage"))
    at = epoch_ms_time(meta.get("sentAt")) or record_time(usage.get("timestamp"))
    b.seen_time(at)
    model = usage.get("model")
    if role == "assistant" and isinstance(model, str):
        b.session.model = model
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str) and role in ("user", "assistant"):
            b.message(str(role), part["text"].strip(), at)
        elif kind == "tool_use" and isinstance(part.get("id"), str):
            args = obj(part.get("input"))
            calls[part["id"]] = (str(part.get("name") or ""), args, at)
        elif kind == "tool_result":
            call = calls.pop(str(part.get("toolUseID")), None)
            run = obj(part.get("run"))
            if call is not None and run.get("status") == "done":
                _tool(b, *call)


def _tool(b: SessionBuilder, name: str, args: dict[str, Any], at: str | None) -> None:
    target = first_str(args, "path", "file_path")
    if name == "edit_file":
        add_replacement(b, target, name, args.get("old_str"), args.get("new_str"), at)
    elif name == "create_file":
        add_write(b, target, name, first_str(args, "content", "contents"), at)
    elif name in SHELL_TOOLS and isinstance(args.get("cmd") or args.get("command"), str):
        b.command(str(args.get("cmd") or args.get("command")), b.cwd, at)
    elif name in VIEW_TOOLS:
        full = b.absolute(path_of(target))
        if full is not None:
            b.file(full, VIEW_TOOLS[name], at)
