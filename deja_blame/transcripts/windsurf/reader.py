"""Windsurf's Cascade transcripts: one record per step, ``{"type": T, T: {...},
"status": ...}``, no times (a record's time is when the index first saw it:
``transcripts/first_seen.py``).

``code_action`` holds the file's content before and after
(``original_content``/``new_content``) and what the person did with it:
``acknowledgement_type`` ``..._ACCEPT`` or ``..._REJECT``. A rejected change
is nobody's; only the lines an accepted one changed are the session's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deja_blame.models import Session
from deja_blame.transcripts.builder import SessionBuilder
from deja_blame.transcripts.first_seen import FirstSeen
from deja_blame.transcripts.jsonl import WholeFile
from deja_blame.transcripts.text import clean_user_text, int64
from deja_blame.transcripts.tool_edits import add_replacement, file_time, path_of

AGENT = "windsurf"


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
        _step(b, rec, at)
    session = b.finish()
    session.skipped_lines = lines.skipped
    return session


def _step(b: SessionBuilder, rec: dict[str, Any], at: str | None) -> None:
    kind = rec.get("type")
    body = rec.get(kind) if isinstance(kind, str) else None
    if not isinstance(body, dict):
        return
    if kind == "user_input" and isinstance(body.get("user_response"), str):
        b.message("user", clean_user_text(body["user_response"]).strip(), at)
    elif kind == "planner_response" and isinstance(body.get("response"), str):
        b.message("assistant", body["response"].strip(), at)
    elif kind == "code_action":
        if "REJECT" in str(body.get("acknowledgement_type") or "").upper():
            return  # the person turned it down: nothing was written
        if str(rec.get("status") or "done").lower() not in ("done", "completed"):
            return
        add_replacement(
            b, body.get("path"), kind, body.get("original_content"), body.get("new_content"), at
        )
    elif kind == "run_command" and isinstance(body.get("command"), str):
        if body.get("user_rejected") is True:
            return
        cwd = body.get("cwd") if isinstance(body.get("cwd"), str) else None
        if cwd and b.cwd is None:
            b.cwd = cwd
        cmd = b.command(body["command"], cwd, at)
        code = int64(body.get("exit_code"))
        if code is not None:
            b.set_exit(cmd.seq, code)
    elif kind == "view_file":
        full = b.absolute(path_of(body.get("path")))
        if full is not None:
            b.file(full, "view", at)
