"""Cursor's agent transcripts: one JSON record per message.

``{"role": "user"|"assistant", "message": {"content": [{"type": "text", ...},
{"type": "tool_use", "name": "StrReplace"|"Write"|"Shell"|..., "input": {...}}]}}``,
and ``{"type": "turn_ended", ...}`` between turns (nothing to read).
The transcript records no times and no tool results: a record's time is when
the index first saw it (the file's modification time then:
``transcripts/first_seen.py``), every write it asked for counts (Cursor
writes the transcript after the tool ran), and a ``Shell`` command has no exit
code. The project is the folder the transcript's ``projects/<slug>`` names
(the slug is its path with every run of other characters than letters and
digits made one ``-``), found among the folders the session touched; files
Cursor keeps below its own ``projects/`` (``agent-tools/``: long tool output
it spilled to a file) are not the project's.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path, PurePosixPath
from typing import Any

from deja_blame.models import Session
from deja_blame.transcripts.builder import SessionBuilder
from deja_blame.transcripts.cursor.asked import asked_at
from deja_blame.transcripts.first_seen import FirstSeen
from deja_blame.transcripts.jsonl import WholeFile
from deja_blame.transcripts.project import work_tree_of
from deja_blame.transcripts.text import clean_user_text, epoch_of, format_time
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
SHELL_TOOLS = {"Shell"}
REDACTED = "[REDACTED]"
_NOT_SLUG = re.compile(r"[^A-Za-z0-9]+")


def parse_transcript(
    path: Path | str, session_id: str | None = None, seen: FirstSeen | None = None
) -> Session:
    """``seen``: when the index saw each record first (none: every record is the file's time)."""
    path = Path(path)
    seen = seen or FirstSeen(file_time(path))
    b = SessionBuilder(session_id or path.stem, str(path.resolve()), AGENT)
    b.seen_time(seen.now)
    lines = WholeFile(path)
    asked: dt.datetime | None = None  # when the turn's request was typed, where it says
    for rec in lines:
        at = seen.at(rec)  # (kept for every record: the index's map of them)
        asked = _asked_at(rec) or asked
        seen_epoch = epoch_of(at)
        if asked is not None and (seen_epoch is None or asked.timestamp() < seen_epoch):
            at = format_time(asked)  # the turn began then: its records are no earlier
        b.seen_time(at)
        _record(b, rec, at)
    session = b.finish(_slug_project(path, b))
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
            else:  # where Cursor left out the model's reasoning
                text = text.replace(REDACTED, "")
            if text.strip():
                b.message(role, text.strip(), at)
        elif part.get("type") == "tool_use" and role == "assistant":
            name = str(part.get("name") or "")
            args = obj(part.get("input"))
            _tool(b, name, args, at)


def _asked_at(rec: dict[str, Any]) -> dt.datetime | None:
    """The time in the ``<timestamp>`` a request opens with (UTC, ``asked.py``), or
    None: another record, or none there."""
    message = rec.get("message")
    content = (
        message.get("content") if rec.get("role") == "user" and isinstance(message, dict) else None
    )
    first = content[0] if isinstance(content, list) and content else None
    text = first.get("text") if isinstance(first, dict) else content
    return asked_at(text[:300]) if isinstance(text, str) else None


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
    elif name in SHELL_TOOLS and isinstance(args.get("command"), str):
        cwd = b.absolute(path_of(first_str(args, "working_directory", "cwd")))
        b.command(args["command"], cwd, at)
    elif name in VIEW_TOOLS:
        full = b.absolute(path_of(first_str(args, "path", "file_path", "target_directory")))
        if full is not None and not _cursor_own(full):
            b.file(full, VIEW_TOOLS[name], at)


def _cursor_own(path: str) -> bool:
    """A file in Cursor's own store (``~/.cursor/projects/<slug>/agent-tools/...``)."""
    return "/.cursor/projects/" in path


def _slug(path: str) -> str:
    return _NOT_SLUG.sub("-", path).strip("-").lower()


def _slug_project(transcript: Path, b: SessionBuilder) -> str | None:
    """The folder named by ``projects/<slug>/agent-transcripts/`` above the transcript,
    found among the folders above the files and commands the session touched (the
    slug alone cannot say which ``-`` was a ``/``); None when none matches."""
    parts = transcript.parts
    if "agent-transcripts" not in parts:
        return None
    at = parts.index("agent-transcripts")
    if at < 2 or parts[at - 2] != "projects":
        return None
    want = _slug(parts[at - 1])
    s = b.session
    touched = [e.path for e in s.edits] + [f.path for f in s.files]
    touched += [c.cwd for c in s.commands if c.cwd]
    for path in touched:
        if not path.startswith("/") and not re.match(r"^[A-Za-z]:/", path):
            continue
        for folder in [PurePosixPath(path), *PurePosixPath(path).parents]:
            if _slug(str(folder)) == want:
                return work_tree_of(str(folder))
    return None
