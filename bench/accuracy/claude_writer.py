"""Claude Code transcripts for the accuracy simulations: the writer's interface of
``antigravity_writer.TranscriptWriter``, Claude Code's records.

Each step is what Claude Code writes: an ``assistant`` record with a
``tool_use`` (``Edit``, ``MultiEdit``, ``Write``, ``Read``, ``Bash``), then a
``user`` record with its ``tool_result`` and ``toolUseResult`` (for edits the
``structuredPatch`` of the change, three lines of context, as Claude Code
computes it). A person's edit while the session runs leaves no record: Claude
Code does not report one.
"""

from __future__ import annotations

import difflib
import json
import re
import uuid
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_writer import AgentWriter
from antigravity_writer import EditResult

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def structured_patch(before: str, after: str) -> list[dict[str, Any]]:
    a, b = before.splitlines(), after.splitlines()
    hunks: list[dict[str, Any]] = []
    for line in difflib.unified_diff(a, b, lineterm="", n=3):
        m = _HUNK.match(line)
        if m:
            hunks.append(
                {
                    "oldStart": int(m.group(1)),
                    "oldLines": int(m.group(2) or 1),
                    "newStart": int(m.group(3)),
                    "newLines": int(m.group(4) or 1),
                    "lines": [],
                }
            )
        elif hunks and line[:1] in (" ", "-", "+"):
            hunks[-1]["lines"].append(line)  # the file headers come before the first hunk
    return hunks


class ClaudeWriter(AgentWriter):
    def __init__(
        self, root: Path | str, session_id: str, start: float, *, workspace: str | None = None
    ) -> None:
        super().__init__(start, workspace)
        self.session_id = session_id
        folder = "-" + self.workspace.strip("/").replace("/", "-")
        self.path = Path(root) / "projects" / folder / f"{session_id}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.touch()
        self.parent: str | None = None

    def _record(self, kind: str, message: dict[str, Any], **extra: Any) -> None:
        stamp = self.stamp()
        rid = str(uuid.uuid4())
        rec = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.workspace,
            "sessionId": self.session_id,
            "version": "2.0.31",
            "gitBranch": "main",
            "type": kind,
            "message": message,
            "uuid": rid,
            "timestamp": stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z",
            **extra,
        }
        self.parent = rid
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")

    def _tool(
        self, name: str, args: dict[str, Any], output: str, result: Any, error: bool = False
    ) -> datetime:
        tid = "toolu_" + uuid.uuid4().hex[:24]
        self._record(
            "assistant",
            {
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [{"type": "tool_use", "id": tid, "name": name, "input": args}],
            },
        )
        stamp = self.now
        part: dict[str, Any] = {"tool_use_id": tid, "type": "tool_result", "content": output}
        if error:
            part["is_error"] = True
        self._record("user", {"role": "user", "content": [part]}, toolUseResult=result)
        return stamp

    # -- conversation --------------------------------------------------------------------

    def user(self, text: str, at: Any = None, cwd: str | None = None) -> None:
        self._record("user", {"role": "user", "content": text})

    def assistant(self, text: str, at: Any = None) -> None:
        self._record(
            "assistant",
            {
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [{"type": "text", "text": text}],
            },
        )

    def run_command(
        self, command: str, exit_code: int = 0, cwd: str | None = None, output: str = "", **_: Any
    ) -> None:
        text = output if exit_code == 0 else f"Exit code {exit_code}\n{output}"
        self._tool(
            "Bash",
            {"command": command, "description": "Run it"},
            text,
            {"stdout": output, "stderr": "", "interrupted": False, "isImage": False},
            error=exit_code != 0,
        )

    def view(self, path: str, content: str | None = None, **_: Any) -> None:
        if content is not None:
            self.files[path] = content
        self._tool(
            "Read", {"file_path": path}, content or "", {"type": "text", "file": {"filePath": path}}
        )

    def _edit(
        self, name: str, path: str, args: dict[str, Any], before: str, after: str
    ) -> EditResult:
        result = {
            "filePath": path,
            "originalFile": before,
            "structuredPatch": structured_patch(before, after),
            "userModified": False,
            "replaceAll": False,
        }
        stamp = self._tool(name, args, f"The file {path} has been updated.", result)
        self.files[path] = after
        return EditResult(path=path, before=before, after=after, at=stamp)

    def replace(
        self, path: str, old_text: str, new_text: str, *, current: str | None = None, **_: Any
    ) -> EditResult:
        before = self._current(path, current)
        after = self.applied(path, before, [(old_text, new_text)])
        args = {"file_path": path, "old_string": old_text, "new_string": new_text}
        return self._edit("Edit", path, args, before, after)

    def multi_replace(
        self, path: str, chunks: Sequence[tuple[str, str]], *, current: str | None = None, **_: Any
    ) -> EditResult:
        before = self._current(path, current)
        after = self.applied(path, before, chunks)
        args = {
            "file_path": path,
            "edits": [{"old_string": o, "new_string": n} for o, n in chunks],
        }
        return self._edit("MultiEdit", path, args, before, after)

    def write_file(
        self, path: str, content: str, *, overwrite: bool = False, **_: Any
    ) -> EditResult:
        before = self.files.get(path, "")
        kind = "update" if overwrite and before else "create"
        result = {
            "type": kind,
            "filePath": path,
            "content": content,
            "structuredPatch": structured_patch(before, content) if kind == "update" else [],
            "originalFile": before if kind == "update" else None,
        }
        stamp = self._tool(
            "Write",
            {"file_path": path, "content": content},
            f"File created successfully at: {path}",
            result,
        )
        self.files[path] = content
        return EditResult(path=path, before=before, after=content, at=stamp)
