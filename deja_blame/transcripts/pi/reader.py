"""pi's sessions (JSON Lines, version 3): a ``session`` header (``id``, ``cwd``), then
entries linked by ``id``/``parentId`` into a tree. ``message`` entries carry an agent
message: ``user`` (``content`` a string or text parts), ``assistant`` (text,
``thinking`` and ``toolCall`` parts with ``id``, ``name``, ``arguments``; its
``model``), ``toolResult`` (``toolCallId``, ``isError``). ``model_change`` names the
model chosen mid-session.

Every entry is read, whichever branch of the tree it is on: a branch the person left
(``/tree``) still ran its tools, so its edits are on disk. A call is an edit once a
result answers it without an error. ``edit`` replaces ``oldText`` by ``newText`` (one
pair, or a list of them in ``edits``), ``write`` writes a whole file, ``bash`` runs a
command. A ``bashExecution`` message is a command the person ran with ``!``: theirs,
not the session's. Summaries (``compaction``, ``branch_summary``), labels and
extensions' entries say nothing new.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deja_blame.models import Session
from deja_blame.transcripts.builder import SessionBuilder, record_time
from deja_blame.transcripts.jsonl import WholeFile
from deja_blame.transcripts.text import clean_user_text, normalise_path
from deja_blame.transcripts.tool_edits import (
    add_replacements,
    add_write,
    array,
    first_str,
    json_args,
    path_of,
)

AGENT = "pi"
VIEW_TOOLS = {"read": "view", "ls": "list", "find": "list", "grep": "list"}

Calls = dict[str, tuple[str, dict[str, Any], str | None]]


def parse_transcript(path: Path | str, session_id: str | None = None) -> Session:
    path = Path(path)
    b = SessionBuilder(session_id or path.stem, str(path.resolve()), AGENT)
    calls: Calls = {}
    lines = WholeFile(path)
    for rec in lines:
        _record(b, rec, calls)
    session = b.finish()
    session.skipped_lines = lines.skipped
    return session


def _record(b: SessionBuilder, rec: dict[str, Any], calls: Calls) -> None:
    at = record_time(rec.get("timestamp"))
    b.seen_time(at)
    kind = rec.get("type")
    if kind == "session":
        if isinstance(rec.get("cwd"), str) and b.cwd is None:
            b.cwd = normalise_path(rec["cwd"])  # C:\\Users\\ana\\shop: C:/Users/ana/shop
        return
    if kind == "model_change":
        if isinstance(rec.get("modelId"), str):
            b.session.model = rec["modelId"]
        return
    message = rec.get("message")
    if kind != "message" or not isinstance(message, dict):
        return
    role = message.get("role")
    if role == "user":
        said = _text(message.get("content"))
        if said:
            b.message("user", clean_user_text(said).strip(), at)
    elif role == "assistant":
        if isinstance(message.get("model"), str):
            b.session.model = message["model"]
        for part in array(message.get("content")):
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                b.message("assistant", part["text"].strip(), at)
            elif part.get("type") == "toolCall" and isinstance(part.get("id"), str):
                name = str(part.get("name") or "")
                calls[part["id"]] = (name, json_args(part.get("arguments")), at)
    elif role == "toolResult":
        call = calls.pop(str(message.get("toolCallId")), None)
        if call is not None and message.get("isError") is not True:
            _tool(b, *call)


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        p["text"]
        for p in array(content)
        if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
    )


def _tool(b: SessionBuilder, name: str, args: dict[str, Any], at: str | None) -> None:
    target = first_str(args, "path", "file_path")
    if name == "edit":
        pairs: list[tuple[object, object]] = [
            (e.get("oldText"), e.get("newText"))
            for e in array(args.get("edits"))
            if isinstance(e, dict)
        ]
        if not pairs and "newText" in args:  # the older tool: one pair
            pairs = [(args.get("oldText"), args.get("newText"))]
        add_replacements(b, target, name, pairs, at)
    elif name == "write":
        add_write(b, target, name, args.get("content"), at)
    elif name == "bash" and isinstance(args.get("command"), str):
        b.command(args["command"], b.cwd, at)
    elif name in VIEW_TOOLS:
        full = b.absolute(path_of(target) or ".")
        if full is not None:
            b.file(full, VIEW_TOOLS[name], at)
