"""The Gemini CLI session reader: one JSON document, or JSON Lines of records.

- JSON (older versions): ``{sessionId, projectHash, startTime, lastUpdated,
  messages: [...]}``, rewritten whole on every change.
- JSON Lines (current versions): a metadata record (``sessionId``,
  ``projectHash``, ``startTime``), message records keyed by ``id`` (a message
  written again under the same id replaces the earlier one, in its place),
  ``{"$set": {...}}`` metadata updates, and ``{"$rewindTo": id}``, which drops
  that message and every later one (all of them when the id is unknown).
- Messages: ``user`` (``displayContent`` is what the person typed, else
  ``content``), ``gemini`` (text, ``model``, ``toolCalls``); ``info``, ``error``
  and ``warning`` are the CLI's own.
- Tool calls with ``status: "success"``: ``replace`` and ``write_file`` are
  edits, their lines from ``resultDisplay.fileDiff`` (a unified diff) where
  present, else from the arguments; with ``modified_by_user`` the lines that
  are not in ``ai_proposed_content`` are the person's. ``run_shell_command``:
  the command, its exit code from ``Exit Code: N`` in its output (0 when it
  succeeded and says none).
- No working directory is recorded: the project is the chats folder's
  ``.project_root`` where the CLI wrote one, else the folder its name is the
  SHA-256 of (the current folder or one above it), else the directory the
  session's files share.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from deja_blame.models import Edit, Session
from deja_blame.transcripts.builder import SessionBuilder, record_time
from deja_blame.transcripts.edits import (
    edit_from_hunks,
    replacement_edit,
    split_by_proposal,
    split_lines,
    unified_hunks,
    whole_file_edit,
)
from deja_blame.transcripts.gemini_cli.discover import AGENT, project_root_of
from deja_blame.transcripts.jsonl import WholeFile
from deja_blame.transcripts.reading import load_document
from deja_blame.transcripts.text import int64_text

EDIT_TOOLS = {"replace", "write_file", "edit"}
SHELL_TOOLS = {"run_shell_command", "shell"}
VIEW_TOOLS = {"read_file": "view", "read_many_files": "view", "list_directory": "list"}
_EXIT = re.compile(r"Exit Code:\s*(-?\d+)")


def parse_transcript(
    path: Path | str, session_id: str | None = None, parts: tuple[Path, ...] = ()
) -> Session:
    path = Path(path)
    messages, meta, skipped = _load(path)
    for part in parts:  # sub-agents: their messages are the session's work
        sub, _, sub_skipped = _load(part)
        skipped += sub_skipped
        for m in sub:
            m["\0sub"] = True
        messages += sub
    messages.sort(key=lambda m: str(m.get("timestamp") or ""))
    sid = session_id or str(meta.get("sessionId") or path.stem)
    builder = SessionBuilder(sid, str(path.resolve()), AGENT)
    project = project_root_of(path)
    directories = meta.get("directories")
    if not project and isinstance(directories, list) and directories:
        first = directories[0]
        project = first if isinstance(first, str) and first.startswith("/") else None
    builder.cwd = project
    for key in ("startTime", "lastUpdated"):
        builder.seen_time(record_time(meta.get(key)))
    for message in messages:
        _message(builder, message)
    session = builder.finish(project)
    session.skipped_lines = skipped
    return session


def _load(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any], int]:
    """(messages in order, metadata, malformed lines) of one session file."""
    if path.suffix == ".json":
        return _load_json(path)
    meta: dict[str, Any] = {}
    by_id: dict[str, dict[str, Any]] = {}
    skipped = 0
    lines = WholeFile(path)
    for rec in lines:
        if isinstance(rec.get("$rewindTo"), str):
            ids = list(by_id)
            if rec["$rewindTo"] in by_id:
                for gone in ids[ids.index(rec["$rewindTo"]) :]:
                    del by_id[gone]
            else:
                by_id.clear()
        elif isinstance(rec.get("$set"), dict):
            meta.update(rec["$set"])
        elif isinstance(rec.get("id"), str):
            by_id[rec["id"]] = rec  # a re-written id keeps its place
        elif isinstance(rec.get("sessionId"), str):
            meta.update(rec)
        else:
            skipped += 1
    skipped += lines.skipped
    if isinstance(meta.get("messages"), list):  # a $set of the whole list (a migration)
        listed = [m for m in meta["messages"] if isinstance(m, dict)]
        return listed + list(by_id.values()), meta, skipped
    return list(by_id.values()), meta, skipped


def _load_json(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any], int]:
    # The CLI rewrites the file whole: caught half written, it is read again at the
    # next run (IncompleteTranscript), and what the index holds of the session stays.
    doc = load_document(path)
    if not isinstance(doc, dict):
        doc = {}
    messages = doc.get("messages")
    listed = [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    skipped = len(messages) - len(listed) if isinstance(messages, list) else 0
    return listed, doc, skipped


def _text(content: object) -> str:
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, list):
        return "\n".join(
            str(p["text"])
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        ).strip()
    return ""


def _message(b: SessionBuilder, m: dict[str, Any]) -> None:
    at = record_time(m.get("timestamp"))
    b.seen_time(at)
    kind = m.get("type")
    if kind == "user":
        text = _text(m.get("displayContent")) or _text(m.get("content"))
        b.message("assistant" if m.get("\0sub") else "user", text, at)
        return
    if kind != "gemini":
        return
    model = m.get("model")
    if isinstance(model, str) and model and not m.get("\0sub"):  # a sub-agent's may differ
        b.session.model = model
    b.message("assistant", _text(m.get("content")), at)
    calls = m.get("toolCalls")
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            _tool_call(b, call, at)


def _tool_call(b: SessionBuilder, call: dict[str, Any], at_message: str | None) -> None:
    name = call.get("name") if isinstance(call.get("name"), str) else ""
    raw_args = call.get("args")
    args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
    at = record_time(call.get("timestamp")) or at_message
    b.seen_time(at)
    output = _result_text(call.get("result"))
    ok = call.get("status") == "success"
    if output:
        b.message("tool", output, at)
    if name in SHELL_TOOLS and isinstance(args.get("command"), str):
        where = args.get("dir_path") or args.get("directory")
        cmd = b.command(args["command"], b.absolute(where) if isinstance(where, str) else b.cwd, at)
        m = _EXIT.search(output)
        cmd.exit_code = int64_text(m.group(1)) if m else (0 if ok else None)
        return
    if name in VIEW_TOOLS:
        target = b.absolute(
            args.get("file_path")
            or args.get("absolute_path")
            or args.get("dir_path")
            or args.get("path")
        )
        if target:
            b.file(target, VIEW_TOOLS[str(name)], at)
        return
    if name in EDIT_TOOLS and ok:
        for edit in _edits(b, str(name), args, call.get("resultDisplay"), at):
            b.edit(edit)


def _result_text(result: object) -> str:
    parts = result if isinstance(result, list) else [result]
    texts: list[str] = []
    for p in parts:
        if not isinstance(p, dict):
            continue
        fr = p.get("functionResponse")
        response = fr.get("response") if isinstance(fr, dict) else None
        if isinstance(response, dict):
            out = response.get("output", response.get("error"))
            if isinstance(out, str):
                texts.append(out)
        elif isinstance(p.get("text"), str):
            texts.append(p["text"])
    return "\n".join(texts).strip()


def _edits(
    b: SessionBuilder, name: str, args: dict[str, Any], display: object, at: str | None
) -> list[Edit]:
    shown = display if isinstance(display, dict) else {}
    path = b.absolute(shown.get("filePath") or args.get("file_path") or args.get("absolute_path"))
    if path is None:
        return []
    edit: Edit | None = None
    diff = shown.get("fileDiff")
    if isinstance(diff, str) and "@@" in diff:
        edit = edit_from_hunks(path, name, unified_hunks(diff), at)
    elif name == "write_file" and isinstance(args.get("content"), str):
        original = shown.get("originalContent")
        if isinstance(original, str):
            edit = replacement_edit(path, name, original, args["content"], at)
        else:
            edit = whole_file_edit(path, name, args["content"], at)
    elif isinstance(args.get("old_string"), str) and isinstance(args.get("new_string"), str):
        edit = replacement_edit(path, name, args["old_string"], args["new_string"], at)
    if edit is None:
        return []
    proposed = args.get("ai_proposed_content")
    if args.get("modified_by_user") and isinstance(proposed, str):
        return split_by_proposal(edit, split_lines(proposed))
    return [edit]
