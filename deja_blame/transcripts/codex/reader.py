"""The Codex CLI rollout reader: JSON Lines of ``{timestamp, type, payload}``.

- ``session_meta``: the session id and its ``cwd``; ``turn_context``: the ``cwd``
  and ``model`` of each turn (the latest model is the session's).
- ``response_item`` payloads: ``message`` (user and assistant text; the
  environment and instruction blocks Codex adds are not the person's),
  ``function_call`` / ``custom_tool_call`` / ``local_shell_call`` and their
  ``*_output`` by ``call_id``.
- ``apply_patch`` in every form Codex has written it: a ``custom_tool_call``
  with the patch as input, a ``function_call`` with ``{"input": patch}``, or a
  shell command (``["apply_patch", patch]``, a heredoc in ``bash -lc``,
  ``shell_command``, ``exec_command``). Paths are relative to the call's
  ``workdir`` or the session's ``cwd``, or absolute.
- A patch counts once its output came and does not say it failed (a non-zero
  exit code, "verification failed", an error). Exit codes of commands come from their
  output (``{"metadata": {"exit_code"}}``, ``Exit code: N``, ``Process exited
  with code N``) or the ``exec_command_end`` event.
- The oldest rollouts have no envelope: a first line with ``id`` and
  ``timestamp``, then the response items themselves.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import orjson

from deja_blame.models import Edit, Session
from deja_blame.transcripts.builder import SessionBuilder, record_time
from deja_blame.transcripts.codex.discover import AGENT, session_id_of
from deja_blame.transcripts.codex.patch import FileOp, find_patches, parse_patch
from deja_blame.transcripts.edits import edit_from_doc, edit_from_hunks, edit_to_doc, patch_hunks
from deja_blame.transcripts.jsonl import WholeFile
from deja_blame.transcripts.text import int64, int64_text

ITEM_TYPES = {
    "message",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "reasoning",
}
SHELL_TOOLS = {"shell", "shell_command", "exec_command", "container.exec", "local_shell"}
# Blocks Codex puts in user messages itself
_NOT_TYPED = (
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "# AGENTS.md instructions",
    "<user_shell_command>",
    "<turn_aborted>",
)
_EXIT = re.compile(r"(?:^|\n)\s*(?:Exit code:?|Process exited with code)\s*(-?\d+)", re.IGNORECASE)
_FAILED = re.compile(r"verification failed|^error|failed to apply|patch rejected", re.IGNORECASE)


def parse_transcript(path: Path | str, session_id: str | None = None) -> Session:
    path = Path(path)
    reader = _Reader(session_id or session_id_of(path), str(path.resolve()))
    lines = WholeFile(path)
    for record in lines:
        reader.record(record)
    session = reader.finish()
    session.skipped_lines = lines.skipped
    return session


class _Call:
    def __init__(self, patches: list[str], command: int | None, base: str | None, at: str | None):
        self.patches = patches
        self.command = command  # the command's ordinal (None: a patch)
        self.base = base
        self.at = at


class _Reader:
    def __init__(self, session_id: str, transcript: str) -> None:
        self.builder = SessionBuilder(session_id, transcript, AGENT)
        self.turn_cwd: str | None = None
        self.calls: dict[str, _Call] = {}
        self.patch_edits: dict[str, list[Edit]] = {}  # by call id, until its output

    def to_state(self) -> dict[str, Any]:
        return {
            "builder": self.builder.to_state(),
            "turn_cwd": self.turn_cwd,
            "calls": {k: [c.patches, c.command, c.base, c.at] for k, c in self.calls.items()},
            "patch_edits": {k: [edit_to_doc(e) for e in v] for k, v in self.patch_edits.items()},
        }

    @classmethod
    def from_state(cls, doc: dict[str, Any]) -> _Reader:
        reader = cls.__new__(cls)
        reader.builder = SessionBuilder.from_state(doc["builder"])
        reader.turn_cwd = doc.get("turn_cwd")
        reader.calls = {k: _Call(*v) for k, v in doc["calls"].items()}
        reader.patch_edits = {
            k: [e for e in (edit_from_doc(d) for d in v) if e is not None]
            for k, v in doc["patch_edits"].items()
        }
        return reader

    def finish(self) -> Session:
        return self.builder.finish()

    def record(self, rec: dict[str, Any]) -> None:
        kind = _str(rec.get("type"))
        payload = rec.get("payload")
        at = record_time(rec.get("timestamp"))
        if not isinstance(payload, dict):
            if kind in ITEM_TYPES:  # the oldest layout: the item itself
                payload, kind = rec, "response_item"
            elif isinstance(rec.get("id"), str) and "timestamp" in rec and kind is None:
                payload, kind = rec, "session_meta"
            else:
                return
        b = self.builder
        if at is None:
            at = record_time(payload.get("timestamp"))
        b.seen_time(at)
        if kind == "session_meta":
            cwd = payload.get("cwd")
            if isinstance(cwd, str) and cwd:
                b.cwd = b.absolute(cwd, "/")
            return
        if kind == "turn_context":
            cwd = payload.get("cwd")
            if isinstance(cwd, str) and cwd:
                self.turn_cwd = b.absolute(cwd, "/")
                b.cwd = b.cwd or self.turn_cwd
            model = payload.get("model")
            if isinstance(model, str) and model:
                b.session.model = model
            return
        if kind == "event_msg":
            self._event(payload)
            return
        if kind == "response_item":
            self._item(payload, at)

    # -- response items ------------------------------------------------------------------

    def _item(self, item: dict[str, Any], at: str | None) -> None:
        kind = _str(item.get("type"))
        if kind == "message":
            role = item.get("role")
            text = _content_text(item.get("content"))
            if role == "user":
                if text and not text.lstrip().startswith(_NOT_TYPED):
                    self.builder.message("user", text, at)
            elif role == "assistant":
                self.builder.message("assistant", text, at)
        elif kind == "function_call":
            name = str(item.get("name") or "")
            args = _json_args(item.get("arguments"))
            self._call(str(item.get("call_id") or ""), name, args, at)
        elif kind == "custom_tool_call":
            name = str(item.get("name") or "")
            raw = item.get("input")
            args = {"input": raw} if name == "apply_patch" else _json_args(raw)
            self._call(str(item.get("call_id") or item.get("id") or ""), name, args, at)
        elif kind == "local_shell_call":
            raw_action = item.get("action")
            action: dict[str, Any] = raw_action if isinstance(raw_action, dict) else {}
            args = {"command": action.get("command"), "workdir": action.get("working_directory")}
            self._call(str(item.get("call_id") or item.get("id") or ""), "local_shell", args, at)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._output(str(item.get("call_id") or ""), item.get("output"), at)

    def _call(self, call_id: str, name: str, args: dict[str, Any], at: str | None) -> None:
        b = self.builder
        workdir = args.get("workdir") or args.get("cwd")
        base = (
            b.absolute(workdir, self.turn_cwd or b.cwd or "/") if isinstance(workdir, str) else None
        )
        base = base or self.turn_cwd or b.cwd
        patches: list[str] = []
        command = None
        if name == "apply_patch":
            raw = args.get("input") or args.get("patch")
            patches = find_patches(raw) if isinstance(raw, str) else []
        elif name in SHELL_TOOLS:
            text = _command_text(args.get("command") if "command" in args else args.get("cmd"))
            if text is None:
                return
            patches = find_patches(text)
            if not patches:
                command = b.command(text, base, at).seq
        else:
            return
        edits: list[Edit] = []
        for body in patches:
            for op in parse_patch(body):
                edits += self._op_edits(op, base, at)
        if edits:
            self.patch_edits.setdefault(call_id, []).extend(edits)
        self.calls[call_id] = _Call(patches, command, base, at)

    def _op_edits(self, op: FileOp, base: str | None, at: str | None) -> list[Edit]:
        b = self.builder
        path = b.absolute(op.path, base)
        if path is None:
            return []
        if op.kind == "delete":
            b.file(path, "edit", at)
            return []
        target = b.absolute(op.move_to, base) if op.move_to else path
        if target is None:
            return []
        if target != path:
            b.file(path, "edit", at)
        hunks = [h for body in op.hunks for h in patch_hunks(body, None, None)]
        if op.kind == "add":
            for h in hunks:
                h.new_start = 1
        edit = edit_from_hunks(target, "apply_patch", hunks, at)
        return [edit] if edit is not None else []

    def _output(self, call_id: str, output: object, at: str | None) -> None:
        call = self.calls.pop(call_id, None)
        text, code = _output_text(output)
        if text:
            self.builder.message("tool", text, at)
        if call is None:
            return
        if call.command is not None:
            if code is not None:
                self.builder.set_exit(call.command, code)
            return
        if code not in (None, 0) or (code is None and _FAILED.search(text)):
            self.patch_edits.pop(call_id, None)  # the patch was not applied
            return
        self._keep_patch(call_id)

    def _keep_patch(self, call_id: str) -> None:
        for edit in self.patch_edits.pop(call_id, []):
            self.builder.edit(edit)

    def _event(self, payload: dict[str, Any]) -> None:
        kind = _str(payload.get("type"))
        call_id = str(payload.get("call_id") or "")
        if kind == "exec_command_end":
            call = self.calls.get(call_id)
            code = int64(payload.get("exit_code"))
            if call is not None and call.command is not None and code is not None:
                self.builder.set_exit(call.command, code)
        elif kind == "patch_apply_end" and payload.get("success") is False:
            self.patch_edits.pop(call_id, None)


def _str(value: object) -> str | None:
    """A field that should be text, or None (a record of another shape)."""
    return value if isinstance(value, str) else None


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(p.get("text"))
        for p in content
        if isinstance(p, dict) and isinstance(p.get("text"), str)
    ).strip()


def _json_args(raw: object) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}
    return {}


def _command_text(command: object) -> str | None:
    """A shell call's command as one line of text (an argv list is joined as a shell would)."""
    if isinstance(command, str):
        return command
    if isinstance(command, list) and all(isinstance(x, str) for x in command) and command:
        if len(command) == 3 and command[1] in ("-lc", "-c") and command[0].endswith("sh"):
            return command[2]  # bash -lc "<script>": the script is what was run
        return shlex.join(command)
    return None


def _output_text(output: object) -> tuple[str, int | None]:
    """A call's output text and the exit code it reports, if any."""
    if isinstance(output, dict):  # {"content": ..., "success": bool} in some versions
        text = _content_text(output.get("content")) or str(output.get("output") or "")
        success = output.get("success")
        return text.strip(), (0 if success is True else 1 if success is False else None)
    if isinstance(output, list):
        return _content_text(output), None
    if not isinstance(output, str):
        return "", None
    text = output
    if text.startswith("{"):
        try:
            doc = orjson.loads(text)
        except orjson.JSONDecodeError:
            doc = None
        if isinstance(doc, dict) and "output" in doc:
            raw_meta = doc.get("metadata")
            meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
            code = meta.get("exit_code")
            return str(doc.get("output") or "").strip(), int64(code)
    m = _EXIT.search(text)
    return text.strip(), int64_text(m.group(1)) if m else None


def resume(state: dict[str, Any] | None, session_id: str, transcript: str) -> _Reader:
    """A reader that goes on from ``state`` (None: from the start)."""
    if state is None:
        return _Reader(session_id, transcript)
    return _Reader.from_state(state)
