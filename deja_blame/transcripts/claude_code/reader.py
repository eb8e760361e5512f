"""The Claude Code transcript reader: JSON Lines of ``user``/``assistant`` records.

- ``assistant`` records carry ``message.content`` parts: ``text`` (the answer),
  ``tool_use`` (``id``, ``name``, ``input``) and ``message.model``.
- ``user`` records carry the person's request (a string, or ``text`` parts) or
  ``tool_result`` parts answering a ``tool_use`` by id, with the record's
  ``toolUseResult``: for ``Edit``/``MultiEdit``/``Write`` its ``structuredPatch``
  (unified hunks with line numbers) and ``userModified`` (the person changed the
  proposal before accepting it).
- An edit counts once its result says it was applied (not ``is_error``, not a
  rejection); its lines are the patch's ``+`` lines; with ``userModified``, those
  not in the model's proposal are the person's.
- ``Bash`` commands: exit code 0 when the result is no error, else the
  ``Exit code N`` (or ``Error: Exit code N``) its content or ``toolUseResult``
  starts with; an error with neither (the person refused the command, a sibling
  call failed first: it did not run) records no exit code.
- ``isSidechain`` records (sub-agents, also in their own files) are the
  session's work; their requests come from the agent, not the person.
- ``progress`` records of type ``agent_progress`` carry a sub-agent's
  ``user``/``assistant`` records (``data.message``) in the main transcript, as
  it runs: read as that sub-agent's records. The sub-agent's own file, when it
  exists too, holds the same tool uses by id: each is read once.
- ``cwd`` of the records: the session's working directory.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from deja_blame.models import Edit, Hunk, Session
from deja_blame.transcripts.builder import SessionBuilder, record_time
from deja_blame.transcripts.claude_code.discover import AGENT
from deja_blame.transcripts.edits import (
    edit_from_hunks,
    patch_hunks,
    replacement_edit,
    split_by_proposal,
    split_lines,
    whole_file_edit,
)
from deja_blame.transcripts.jsonl import WholeFile
from deja_blame.transcripts.text import int64_text
from deja_blame.transcripts.tool_edits import array

EDIT_TOOLS = {"Edit", "MultiEdit", "Write"}
VIEW_TOOLS = {"Read": "view", "NotebookRead": "view", "LS": "list", "Glob": "list"}
# A failed Bash's result: content "Exit code N\n<output>", and the record's
# toolUseResult the same with "Error: " before it (every failed command of the
# recorded sessions we read has both); either is read, with or without the prefix
_EXIT_CODE = re.compile(r"^\s*(?:Error:\s*)?Exit code:?\s*(-?\d+)", re.IGNORECASE)
_REJECTED = re.compile(r"user (?:rejected|denied|doesn't want)", re.IGNORECASE)
# What Claude Code puts in user records that the person did not type
_NOT_TYPED = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<command-name>",  # a slash command (/clear, /compact): not a request
    "<command-message>",
    "Caveat: ",
    "[Request interrupted",
)


def parse_transcript(
    path: Path | str, session_id: str | None = None, parts: tuple[Path, ...] = ()
) -> Session:
    path = Path(path)
    reader = _Reader(session_id or path.stem, str(path.resolve()))
    main = WholeFile(path)
    if not parts:  # one file: its records streamed, never all held at once
        for record in main:
            reader.record(record)
        return _finish(reader, main.skipped)
    records: list[tuple[str, int, dict[str, Any]]] = []
    skipped = 0
    for lines in (main, *(WholeFile(p) for p in parts)):
        last = ""
        for record in lines:
            at = record.get("timestamp")
            last = at if isinstance(at, str) else last
            # sub-agent files interleave with the main one by time
            records.append((last, len(records), record))
        skipped += lines.skipped
    records.sort(key=lambda r: (r[0], r[1]))
    for _, _, record in records:
        reader.record(record)
    return _finish(reader, skipped)


def _finish(reader: _Reader, skipped: int) -> Session:
    session = reader.builder.finish()
    session.skipped_lines = skipped
    return session


class _Reader:
    def __init__(self, session_id: str, transcript: str) -> None:
        self.builder = SessionBuilder(session_id, transcript, AGENT)
        # tool uses waiting for their result: id -> (name, input, at, command ordinal)
        self.calls: dict[str, tuple[str, dict[str, Any], str | None, int | None]] = {}
        # tool uses already answered, and sub-agent records already read (by uuid):
        # a sub-agent's work reaches the session twice (progress records and its file)
        self.answered: set[str] = set()
        self.seen: set[str] = set()

    def to_state(self) -> dict[str, Any]:
        return {
            "builder": self.builder.to_state(),
            "calls": self.calls,
            "answered": sorted(self.answered),
            "seen": sorted(self.seen),
        }

    @classmethod
    def from_state(cls, doc: dict[str, Any]) -> _Reader:
        reader = cls.__new__(cls)
        reader.builder = SessionBuilder.from_state(doc["builder"])
        reader.calls = {k: (v[0], v[1], v[2], v[3]) for k, v in doc["calls"].items()}
        reader.answered = set(doc.get("answered") or ())
        reader.seen = set(doc.get("seen") or ())
        return reader

    def record(self, rec: dict[str, Any]) -> None:
        kind = rec.get("type")
        if kind == "progress":
            inner = _sub_agent_record(rec)
            if inner is not None:
                self.record(inner)
            return
        if kind not in ("user", "assistant"):
            return
        if rec.get("isSidechain"):
            uuid = rec.get("uuid")
            if isinstance(uuid, str) and uuid:
                if uuid in self.seen:
                    return  # read already, from the sub-agent's file or its progress
                self.seen.add(uuid)
        b = self.builder
        at = record_time(rec.get("timestamp"))
        b.seen_time(at)
        cwd = rec.get("cwd")
        if isinstance(cwd, str) and cwd and b.cwd is None:
            b.cwd = b.absolute(cwd, "/")
        message = rec.get("message")
        if not isinstance(message, dict):
            return
        content = message.get("content")
        side = bool(rec.get("isSidechain"))
        if kind == "assistant":
            model = message.get("model")
            # the model the person chose: a sub-agent may run on another
            if isinstance(model, str) and model and not model.startswith("<") and not side:
                b.session.model = model
            for part in content if isinstance(content, list) else []:
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "text" and isinstance(part.get("text"), str):
                    b.message("assistant", part["text"].strip(), at)
                elif part.get("type") == "tool_use":
                    self._tool_use(part, at, cwd if isinstance(cwd, str) else None)
            return
        if isinstance(content, str):
            self._request(content, at, side, rec)
            return
        for part in content if isinstance(content, list) else []:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                self._request(part["text"], at, side, rec)
            elif part.get("type") == "tool_result":
                self._tool_result(part, rec.get("toolUseResult"), at)

    def _request(self, text: str, at: str | None, side: bool, rec: dict[str, Any]) -> None:
        text = text.strip()
        if not text or rec.get("isMeta") or rec.get("isCompactSummary"):
            return
        if text.startswith(_NOT_TYPED):
            return
        # a sub-agent's prompt is written by the agent that started it
        self.builder.message("assistant" if side else "user", text, at)

    def _tool_use(self, part: dict[str, Any], at: str | None, cwd: str | None) -> None:
        name, args, call_id = part.get("name"), part.get("input"), part.get("id")
        if not isinstance(name, str) or not isinstance(args, dict) or not isinstance(call_id, str):
            return
        if call_id in self.calls or call_id in self.answered:
            return  # a sub-agent's tool use met again (its file and its progress records)
        b = self.builder
        command = None
        if name == "Bash" and isinstance(args.get("command"), str):
            cwd_abs = b.absolute(cwd, "/") if cwd else b.cwd
            command = b.command(args["command"], cwd_abs, at).seq
        elif name in VIEW_TOOLS:
            target = b.absolute(
                args.get("file_path") or args.get("path") or args.get("notebook_path")
            )
            if target:
                b.file(target, VIEW_TOOLS[name], at)
        self.calls[call_id] = (name, args, at, command)

    def _tool_result(self, part: dict[str, Any], result: object, at: str | None) -> None:
        call_id = str(part.get("tool_use_id"))
        if call_id in self.answered:
            return  # its answer was read already
        call = self.calls.pop(call_id, None)
        if call is not None:
            self.answered.add(call_id)
        text = _result_text(part.get("content"))
        if text:
            self.builder.message("tool", text, at)
        if call is None:
            return
        name, args, called_at, command = call
        failed = bool(part.get("is_error")) or (
            isinstance(result, str) and _REJECTED.search(result)
        )
        if command is not None:
            m = _EXIT_CODE.match(text)
            if m is None and failed and isinstance(result, str):
                m = _EXIT_CODE.match(result)
            # failed with no code: refused by the person, or never run (a sibling
            # call's error): no exit code, not a failure of the command
            self.builder.set_exit(command, int64_text(m.group(1)) if m else (None if failed else 0))
            return
        if name not in EDIT_TOOLS or failed:
            return
        for edit in _edits(
            self.builder, name, args, result if isinstance(result, dict) else {}, at or called_at
        ):
            self.builder.edit(edit)


def _sub_agent_record(rec: dict[str, Any]) -> dict[str, Any] | None:
    """The sub-agent record a ``progress`` record carries (``agent_progress``), as a
    sidechain record with the outer record's working directory; None for others
    (hook and bash progress)."""
    data = rec.get("data")
    if not isinstance(data, dict) or data.get("type") != "agent_progress":
        return None
    inner = data.get("message")
    if not isinstance(inner, dict) or inner.get("type") not in ("user", "assistant"):
        return None
    out = dict(inner)
    out["isSidechain"] = True
    if not isinstance(out.get("timestamp"), str):
        out["timestamp"] = rec.get("timestamp")
    if "cwd" not in out:
        out["cwd"] = rec.get("cwd")
    return out


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text")) for p in content if isinstance(p, dict) and p.get("type") == "text"
        ).strip()
    return ""


def _edits(
    b: SessionBuilder, name: str, args: dict[str, Any], result: dict[str, Any], at: str | None
) -> list[Edit]:
    path = b.absolute(result.get("filePath") or args.get("file_path"))
    if path is None:
        return []
    edit: Edit | None = None
    patch = result.get("structuredPatch")
    if isinstance(patch, list) and patch:
        hunks: list[Hunk] = []
        for h in patch:
            if isinstance(h, dict) and isinstance(h.get("lines"), list):
                hunks += patch_hunks(
                    [x for x in h["lines"] if isinstance(x, str)],
                    _int(h.get("oldStart")),
                    _int(h.get("newStart")),
                )
        edit = edit_from_hunks(path, name, hunks, at)
    elif name == "Write":
        content = result.get("content", args.get("content"))
        original = result.get("originalFile")
        if isinstance(content, str) and isinstance(original, str):
            edit = replacement_edit(path, name, original, content, at)
        elif isinstance(content, str):
            edit = whole_file_edit(path, name, content, at)
    elif name == "Edit":
        old, new = args.get("old_string"), args.get("new_string")
        if isinstance(old, str) and isinstance(new, str):
            edit = replacement_edit(path, name, old, new, at)
    elif name == "MultiEdit":
        parts = [
            replacement_edit(
                path, name, str(e.get("old_string", "")), str(e.get("new_string", "")), at
            )
            for e in array(args.get("edits"))
            if isinstance(e, dict)
        ]
        edit = edit_from_hunks(path, name, [h for p in parts if p for h in p.hunks], at)
    if edit is None:
        return []
    if result.get("userModified"):
        return split_by_proposal(edit, _proposal(name, args))
    return [edit]


def _proposal(name: str, args: dict[str, Any]) -> list[str]:
    """The model's own new text, before the person changed it."""
    if name == "Write":
        return split_lines(str(args.get("content") or ""))
    if name == "MultiEdit":
        return [
            ln
            for e in array(args.get("edits"))
            if isinstance(e, dict)
            for ln in split_lines(str(e.get("new_string") or ""))
        ]
    return split_lines(str(args.get("new_string") or ""))


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def resume(state: dict[str, Any] | None, session_id: str, transcript: str) -> _Reader:
    """A reader that goes on from ``state`` (None: from the start)."""
    if state is None:
        return _Reader(session_id, transcript)
    return _Reader.from_state(state)
