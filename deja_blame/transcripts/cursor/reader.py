"""Cursor's agent transcripts: one JSON record per message.

``{"role": "user"|"assistant", "message": {"content": [{"type": "text", ...},
{"type": "tool_use", "name": "StrReplace"|"Write"|..., "input": {...}}]}}``.
The transcript records no times and no tool results: a record's time is when
the index first saw it (the file's modification time then:
``transcripts/first_seen.py``), and every write it asked for counts (Cursor
writes the transcript after the tool ran).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deja_blame.models import Session
from deja_blame.transcripts.builder import SessionBuilder
from deja_blame.transcripts.first_seen import FirstSeen
from deja_blame.transcripts.jsonl import WholeFile
from deja_blame.transcripts.text import clean_user_text
from deja_blame.transcripts.tool_edits import (
    add_replacement,
    add_write,
    file_time,
    first_str,
    obj,
    path_of,
)

AGENT = "cursor"
VIEW_TOOLS = {"Read": "view", "LS": "list", "Glob": "list"}


def parse_transcript(
    path: Path | str, session_id: str | None = None, seen: FirstSeen | None = None
) -> Session:
    """``seen``: when the index saw each record first (none: every record is the file's time)."""
    path = Path(path)
    seen = seen or FirstSeen(file_time(path))
    b = SessionBuilder(session_id or path.stem, str(path.resolve()), AGENT)
    b.seen_time(seen.now)
    lines = WholeFile(path)
    for rec in lines:
        at = seen.at(rec)
        b.seen_time(at)
        _record(b, rec, at)
    session = b.finish()
    session.skipped_lines = lines.skipped
    return session


def _record(b: SessionBuilder, rec: dict[str, Any], at: str | None) -> None:
    role = rec.get("role")
    message = rec.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list) or role not in ("user", "assistant"):
        return
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            text = part["text"]
            if role == "user":
                text = clean_user_text(_strip_query(text))
            b.message(role, text.strip(), at)
        elif part.get("type") == "tool_use" and role == "assistant":
            name = str(part.get("name") or "")
            args = obj(part.get("input"))
            _tool(b, name, args, at)


def _strip_query(text: str) -> str:
    """The request inside ``<user_query>``, where Cursor wraps it."""
    start, end = text.find("<user_query>"), text.rfind("</user_query>")
    if start >= 0 and end > start:
        return text[start + len("<user_query>") : end]
    return text


def _tool(b: SessionBuilder, name: str, args: dict[str, Any], at: str | None) -> None:
    target = first_str(args, "path", "file_path", "target_file")
    if name == "StrReplace":
        add_replacement(b, target, name, args.get("old_string"), args.get("new_string"), at)
    elif name == "Write":
        add_write(b, target, name, first_str(args, "contents", "content"), at)
    elif name == "Delete":
        full = b.absolute(path_of(target))
        if full is not None:
            b.file(full, "edit", at)
    elif name in VIEW_TOOLS:
        full = b.absolute(path_of(target))
        if full is not None:
            b.file(full, VIEW_TOOLS[name], at)
