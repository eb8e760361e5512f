"""OpenCode's sessions: messages (``role``, ``time.created`` in ms, ``path.cwd``)
made of parts (``text``; ``tool`` with ``tool``, ``state.status``,
``state.input``). ``edit`` (``filePath``, ``oldString``, ``newString``) and
``write`` (``filePath``, ``content``) are edits once their state is
``completed``; ``error`` (refused, failed) wrote nothing.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from deja_blame.models import Session
from deja_blame.transcripts.builder import SessionBuilder
from deja_blame.transcripts.files import Below, one_name
from deja_blame.transcripts.opencode import db_error, json_file, open_db
from deja_blame.transcripts.reading import (
    IncompleteTranscript,
    load_document,
    max_transcript_records,
    too_many,
    too_many_containers,
)
from deja_blame.transcripts.tool_edits import (
    add_patch,
    add_replacement,
    add_write,
    epoch_ms_time,
    first_str,
    obj,
    path_of,
)

AGENT = "opencode"
VIEW_TOOLS = {"read": "view", "list": "list", "glob": "list"}


def read_database(db: Path, session_id: str | None) -> Session:
    conn = open_db(db)
    try:
        if not session_id:  # ``deja parse opencode.db``: the newest session
            row = conn.execute(
                "SELECT id FROM session ORDER BY time_updated DESC LIMIT 1"
            ).fetchone()
            session_id = str(row[0]) if row else ""
        # the record limit before any row is read: the database has no byte limit
        (held,) = conn.execute(
            "SELECT (SELECT count(*) FROM message WHERE session_id=?)"
            " + (SELECT count(*) FROM part WHERE session_id=?)",
            (session_id, session_id),
        ).fetchone()
        if int(held) > max_transcript_records():
            raise too_many(max_transcript_records())
        row = conn.execute("SELECT directory FROM session WHERE id=?", (session_id,)).fetchone()
        directory = str(row[0]) if row and row[0] else None
        messages = [
            (str(mid), _doc(data))
            for mid, data in conn.execute(
                "SELECT id, data FROM message WHERE session_id=? ORDER BY time_created, id",
                (session_id,),
            )
        ]
        parts: dict[str, list[dict[str, Any]]] = {}
        for mid, data in conn.execute(
            "SELECT message_id, data FROM part WHERE session_id=? ORDER BY time_created, id",
            (session_id,),
        ):
            parts.setdefault(str(mid), []).append(_doc(data))
    except sqlite3.Error as exc:
        raise db_error(db, exc) from exc
    finally:
        conn.close()
    return _session(session_id, f"{db.resolve()}", directory, messages, parts)


def read_storage(first_message: Path, session_id: str) -> Session:
    """The JSON file layout: ``storage/message/<session>/*.json``, ``storage/part/<message>/*.json``."""
    storage = first_message.parents[2]
    below = Below(storage)  # its folders listed as the finder lists them: no link followed
    messages = []
    files = below.files(first_message.parent, json_file)
    if len(files) > max_transcript_records():
        raise too_many(max_transcript_records())
    for f in files:
        doc = _load(f)
        messages.append((str(doc.get("id") or f.stem), doc))
    messages.sort(key=lambda m: (_created(m[1]), m[0]))
    parts: dict[str, list[dict[str, Any]]] = {}
    parts_there = below.folder(storage / "part")
    for mid, _ in messages:
        part = storage / "part" / mid
        found = (
            [_load(p) for p in below.files(part, json_file)]
            if parts_there and one_name(mid)
            else []
        )
        parts[mid] = sorted(found, key=lambda p: (_created(p), str(p.get("id") or "")))
    directory = None
    session_dir = storage / "session"
    if below.folder(session_dir) and one_name(session_id):
        for project in below.folders(session_dir):
            for f in below.files(project, lambda n: n == f"{session_id}.json"):
                directory = first_str(_load(f), "directory")
    return _session(session_id, str(first_message.parent.resolve()), directory, messages, parts)


def _session(
    session_id: str,
    transcript: str,
    directory: str | None,
    messages: list[tuple[str, dict[str, Any]]],
    parts: dict[str, list[dict[str, Any]]],
) -> Session:
    b = SessionBuilder(session_id, transcript, AGENT)
    b.cwd = directory
    for mid, msg in messages:
        role = msg.get("role")
        at = epoch_ms_time(_created(msg))
        b.seen_time(at)
        path = obj(msg.get("path"))
        if b.cwd is None and isinstance(path.get("cwd"), str):
            b.cwd = path["cwd"]
        model = msg.get("modelID")
        if role == "assistant" and isinstance(model, str):
            b.session.model = model
        for part in parts.get(mid, []):
            _part(b, role, part, at)
    return b.finish()


def _part(b: SessionBuilder, role: object, part: dict[str, Any], at: str | None) -> None:
    kind = part.get("type")
    time = obj(part.get("time"))
    at = epoch_ms_time(time.get("start")) or at
    if kind == "text" and isinstance(part.get("text"), str) and not part.get("synthetic"):
        b.message("user" if role == "user" else "assistant", part["text"].strip(), at)
        return
    if kind != "tool":
        return
    state = obj(part.get("state"))
    if state.get("status") != "completed":
        return  # pending, running, or error (refused or failed): nothing written
    args = obj(state.get("input"))
    tool = str(part.get("tool") or "")
    target = first_str(args, "filePath", "path")
    if tool == "edit":
        if "oldString" in args or "newString" in args:
            add_replacement(b, target, tool, args.get("oldString"), args.get("newString"), at)
        else:
            add_write(b, target, tool, args.get("content"), at)
    elif tool == "write":
        add_write(b, target, tool, args.get("content"), at)
    elif tool == "patch":
        add_patch(b, first_str(args, "patchText", "patch"), tool, at)
    elif tool == "bash" and isinstance(args.get("command"), str):
        b.command(args["command"], b.cwd, at)
    elif tool in VIEW_TOOLS:
        full = b.absolute(path_of(target))
        if full is not None:
            b.file(full, VIEW_TOOLS[tool], at)


def _created(doc: dict[str, Any]) -> float:
    time = doc.get("time")
    value = (time.get("created") or time.get("start")) if isinstance(time, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _doc(data: object) -> dict[str, Any]:
    if isinstance(data, (str, bytes)) and too_many_containers(data):
        return {}  # one row of millions of empty objects: gigabytes decoded
    try:
        doc = json.loads(data) if isinstance(data, (str, bytes)) else None
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def _load(path: Path) -> dict[str, Any]:
    """One file of the storage layout; gone meanwhile: nothing. OpenCode writes each
    whole: caught half written, the session waits for the next run (IncompleteTranscript)."""
    try:
        doc = load_document(path)
    except IncompleteTranscript:
        raise
    except OSError:
        return {}
    return doc if isinstance(doc, dict) else {}
