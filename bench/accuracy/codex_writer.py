"""Codex CLI rollouts for the accuracy simulations: the writer's interface of
``antigravity_writer.TranscriptWriter``, Codex's records.

A session is ``session_meta`` and ``turn_context`` (its cwd and model), the
person's messages, and its work as Codex does it: ``apply_patch`` as a
``custom_tool_call`` (an Update File with ``@@`` hunks of three context lines,
paths relative to the cwd; Add File for a new file) with its output, shell
commands as ``function_call``\\s with ``{"output", "metadata": {"exit_code"}}``
outputs. A person's edit while the session runs leaves no record.
"""

from __future__ import annotations

import difflib
import json
import uuid
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_writer import AgentWriter
from antigravity_writer import EditResult


def update_patch(rel: str, before: str, after: str) -> str:
    """An apply_patch Update File of ``before`` -> ``after``: @@ hunks, 3 lines of context."""
    a, b = before.splitlines(), after.splitlines()
    out = ["*** Begin Patch", f"*** Update File: {rel}"]
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(3):
        out.append("@@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + x for x in a[i1:i2]]
                continue
            out += ["-" + x for x in a[i1:i2]]
            out += ["+" + x for x in b[j1:j2]]
    out.append("*** End Patch")
    return "\n".join(out) + "\n"


class CodexWriter(AgentWriter):
    def __init__(
        self, root: Path | str, session_id: str, start: float, *, workspace: str | None = None
    ) -> None:
        super().__init__(start, workspace)
        self.session_id = session_id
        day = self.now.strftime("%Y/%m/%d")
        stamp = self.now.strftime("%Y-%m-%dT%H-%M-%S")
        self.path = Path(root) / "sessions" / day / f"rollout-{stamp}-{session_id}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._line("session_meta", {"id": session_id, "cwd": self.workspace, "source": "cli"})
        self._line("turn_context", {"cwd": self.workspace, "model": "gpt-5-codex"})

    def _line(self, kind: str, payload: dict[str, Any]) -> datetime:
        stamp = self.stamp()
        rec = {
            "timestamp": stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z",
            "type": kind,
            "payload": payload,
        }
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        return stamp

    def _rel(self, path: str) -> str:
        prefix = self.workspace + "/"
        return path[len(prefix) :] if path.startswith(prefix) else path

    def user(self, text: str, at: Any = None, cwd: str | None = None) -> None:
        self._line(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
        )

    def assistant(self, text: str, at: Any = None) -> None:
        content = [{"type": "output_text", "text": text}]
        self._line("response_item", {"type": "message", "role": "assistant", "content": content})

    def _call(self, name: str, payload: dict[str, Any], output: str, code: int = 0) -> datetime:
        call_id = "call_" + uuid.uuid4().hex[:20]
        self._line("response_item", {**payload, "call_id": call_id, "name": name})
        out = json.dumps({"output": output, "metadata": {"exit_code": code}})
        kind = (
            "custom_tool_call_output"
            if payload["type"] == "custom_tool_call"
            else "function_call_output"
        )
        return self._line("response_item", {"type": kind, "call_id": call_id, "output": out})

    def run_command(
        self, command: str, exit_code: int = 0, cwd: str | None = None, output: str = "", **_: Any
    ) -> None:
        args = {"command": ["bash", "-lc", command], "workdir": cwd or self.workspace}
        self._call(
            "shell", {"type": "function_call", "arguments": json.dumps(args)}, output, exit_code
        )

    def view(self, path: str, content: str | None = None, **_: Any) -> None:
        if content is not None:
            self.files[path] = content
        args = {"command": ["bash", "-lc", f"sed -n '1,200p' {self._rel(path)}"]}
        self._call("shell", {"type": "function_call", "arguments": json.dumps(args)}, content or "")

    def _patch(self, path: str, before: str, after: str, new_file: bool) -> EditResult:
        rel = self._rel(path)
        if new_file:
            body = "".join("+" + x + "\n" for x in after.splitlines())
            patch = f"*** Begin Patch\n*** Add File: {rel}\n{body}*** End Patch\n"
            done = f"Success. Updated the following files:\nA {rel}\n"
        else:
            patch = update_patch(rel, before, after)
            done = f"Success. Updated the following files:\nM {rel}\n"
        stamp = self._call(
            "apply_patch", {"type": "custom_tool_call", "status": "completed", "input": patch}, done
        )
        self.files[path] = after
        return EditResult(path=path, before=before, after=after, at=stamp)

    def replace(
        self, path: str, old_text: str, new_text: str, *, current: str | None = None, **_: Any
    ) -> EditResult:
        before = self._current(path, current)
        after = self.applied(path, before, [(old_text, new_text)])
        return self._patch(path, before, after, new_file=False)

    def multi_replace(
        self, path: str, chunks: Sequence[tuple[str, str]], *, current: str | None = None, **_: Any
    ) -> EditResult:
        before = self._current(path, current)
        return self._patch(path, before, self.applied(path, before, chunks), new_file=False)

    def write_file(
        self, path: str, content: str, *, overwrite: bool = False, **_: Any
    ) -> EditResult:
        before = self.files.get(path, "")
        return self._patch(path, before, content, new_file=not (overwrite and before))
