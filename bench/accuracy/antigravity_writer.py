"""Writing Antigravity transcripts in the real compact format (tests and benchmarks).

The reader's mirror image: ``TranscriptWriter`` appends the records a real
client writes to ``<root>/brain/<session id>/.system_generated/logs/transcript.jsonl``
(format sections 2-4 and 9): every record has ``step_index``, ``source``,
``type``, ``status`` and ``created_at``; every tool-call argument value is JSON
text (decoded once by the reader); tool steps start with a ``Created At:`` /
``Completed At:`` header in the machine's local offset; edits carry a
``[diff_block_start]`` unified diff made from the full file before and after.

All times come from the writer's clock, which the caller sets (``at=``) and
moves (``advance``), so a simulator can place every edit before or after a
commit. Each record is stamped with the clock, which then moves on by ``tick``
seconds. The writer remembers the content of every file it wrote or was shown,
so ``replace`` can diff whole files without touching the disk.

Example::

    w = TranscriptWriter(root, "4b1c...", start=1784278800)
    w.user("Add a health check.", cwd="/work/api")
    w.replace("/work/api/app.py", "    return None\\n", "    return ok()\\n")
    w.run_command("pytest -q", exit_code=0, cwd="/work/api")
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

__all__ = ["TranscriptWriter", "WriterError", "unified_diff_text"]

Moment = datetime | int | float

COMPACT_NAME = "transcript.jsonl"
_VERIFY_NOTE = (
    "If relevant, proactively run terminal commands to verify these changes "
    "(e.g. run tests or linters)."
)
_MODIFIED_ONLY_NOTE = (
    "The above diff shows only the modified lines and a few lines of context "
    "around them, not the whole file."
)
_VIEW_NOTE = (
    "The following code has been modified to include a line number before every "
    "line, in the format: <line_number>: <original_line>. Please note that any "
    "changes targeting the original code should remove the line number, colon, "
    "and leading space."
)


class WriterError(ValueError):
    """A request the writer cannot turn into a transcript (e.g. text not found)."""


@dataclass
class EditResult:
    """What an edit did to a file: its full text before and after, and the record times."""

    path: str
    before: str
    after: str
    at: datetime  # the CODE_ACTION step's created_at


def _to_datetime(moment: Moment) -> datetime:
    if isinstance(moment, datetime):
        if moment.tzinfo is None:
            return moment.replace(tzinfo=timezone.utc)
        return moment.astimezone(timezone.utc)
    return datetime.fromtimestamp(float(moment), tz=timezone.utc)


def _utc_text(dt: datetime) -> str:
    text = dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    if dt.microsecond:
        text += f".{dt.microsecond // 1000:03d}"
    return text + "Z"


def _local_text(dt: datetime, offset: timedelta) -> str:
    """The ``Created At:`` header uses the machine's local offset, not UTC."""
    return dt.astimezone(timezone(offset)).isoformat(timespec="seconds")


def _arg(value: Any) -> str:
    """Compact transcripts hold each argument value as JSON text, quotes included."""
    return json.dumps(value, ensure_ascii=False)


def _lines(text: str) -> list[str]:
    return text.splitlines()


def unified_diff_text(path_label: str, before: str, after: str, context: int = 3) -> str:
    """The diff block body: ``--- a/x`` / ``+++ b/x`` headers and ``@@`` hunks (n lines of context)."""
    diff = difflib.unified_diff(
        _lines(before),
        _lines(after),
        fromfile=f"a/{path_label}",
        tofile=f"b/{path_label}",
        n=context,
        lineterm="",
    )
    return "\n".join(diff)


def _file_uri(path: str) -> str:
    """``file://`` URI of a path, percent-encoded as clients write it (a space is %20)."""
    if re.match(r"^[A-Za-z]:[\\/]", path):
        path = path.replace("\\", "/")  # a Windows path; on POSIX a backslash is a name's
    if not path.startswith("/"):
        path = "/" + path  # C:/Users/u -> /C:/Users/u
    return "file://" + quote(path, safe="/:")


class TranscriptWriter:
    """Appends one session's records, in the real compact format, as the session goes.

    ``root`` is a transcript root (the directory holding ``brain/``);
    ``workspace`` (optional) is the project directory: diff headers name files
    relative to it, as the client does, and it goes into the user metadata.
    """

    def __init__(
        self,
        root: Path | str,
        session_id: str,
        start: Moment,
        *,
        workspace: str | None = None,
        tick: float = 1.0,
        local_offset: timedelta = timedelta(hours=3),
        exit_code_field: bool = False,
    ) -> None:
        self.root = Path(root)
        self.session_id = session_id
        self.workspace = workspace.rstrip("/") if workspace else None
        self.now = _to_datetime(start)
        self.tick = timedelta(seconds=tick)
        self.local_offset = local_offset
        self.exit_code_field = exit_code_field  # newer builds: top-level "exit_code"
        self.step_index = 0
        self.files: dict[str, str] = {}  # what the session knows each file holds
        self.logs_dir = self.root / "brain" / session_id / ".system_generated" / "logs"
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.logs_dir / COMPACT_NAME
        self.path.touch()

    # -- the clock -------------------------------------------------------------

    def advance(self, seconds: float) -> datetime:
        """Move the clock forward (or back, with a negative value); returns the new time."""
        self.now += timedelta(seconds=seconds)
        return self.now

    def set_time(self, at: Moment) -> datetime:
        self.now = _to_datetime(at)
        return self.now

    def _stamp(self, at: Moment | None) -> datetime:
        if at is not None:
            self.now = _to_datetime(at)
        stamp = self.now
        self.now = stamp + self.tick
        return stamp

    # -- raw records -----------------------------------------------------------

    def record(
        self,
        source: str,
        type_: str,
        *,
        content: str | None = None,
        status: str = "DONE",
        at: Moment | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Append one record (any source/type) and return it."""
        stamp = self._stamp(at)
        rec: dict[str, Any] = {
            "step_index": self.step_index,
            "source": source,
            "type": type_,
            "status": status,
            "created_at": _utc_text(stamp),
        }
        if content is not None:
            rec["content"] = content
        rec.update(extra)
        self.step_index += 1
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        return rec

    def _header(self, created: datetime, duration: float) -> str:
        done = created + timedelta(seconds=duration)
        return (
            f"Created At: {_local_text(created, self.local_offset)}\n"
            f"Completed At: {_local_text(done, self.local_offset)}\n"
        )

    def _step(
        self,
        type_: str,
        body: str,
        *,
        status: str = "DONE",
        duration: float = 1.0,
        at: Moment | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        created = self.now if at is None else _to_datetime(at)
        return self.record(
            "MODEL",
            type_,
            content=self._header(created, duration) + body,
            status=status,
            at=created,
            **extra,
        )

    def _planner(
        self, calls: Sequence[dict[str, Any]], say: str | None, at: Moment | None
    ) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if calls:
            extra["tool_calls"] = list(calls)
        return self.record("MODEL", "PLANNER_RESPONSE", content=say, at=at, **extra)

    # -- conversation ----------------------------------------------------------

    def user(self, text: str, at: Moment | None = None, cwd: str | None = None) -> dict[str, Any]:
        """A USER_EXPLICIT request, wrapped and followed by metadata as real clients write it."""
        stamp = self.now if at is None else _to_datetime(at)
        meta = {
            "cwd": cwd or self.workspace or "",
            "local_time": _local_text(stamp, self.local_offset),
        }
        content = (
            f"<USER_REQUEST>\n{text}\n</USER_REQUEST>\n"
            f"<ADDITIONAL_METADATA>\n{json.dumps(meta)}\n</ADDITIONAL_METADATA>"
        )
        return self.record("USER_EXPLICIT", "USER_INPUT", content=content, at=stamp)

    def assistant(self, text: str, at: Moment | None = None) -> dict[str, Any]:
        """A planner row with text and no tool calls."""
        return self._planner([], text, at)

    def system(self, type_: str = "CHECKPOINT", content: str | None = None) -> dict[str, Any]:
        """A SYSTEM record (the reader ignores these; real transcripts interleave them)."""
        return self.record("SYSTEM", type_, content=content)

    # -- tools -----------------------------------------------------------------

    def run_command(
        self,
        cmd: str,
        exit_code: int = 0,
        cwd: str | None = None,
        output: str = "",
        say: str | None = None,
        at: Moment | None = None,
    ) -> dict[str, Any]:
        """A run_command call, then its RUN_COMMAND step with the exit code."""
        cwd = cwd or self.workspace
        args = {"CommandLine": _arg(cmd), "WaitMsBeforeAsync": _arg(5000)}
        if cwd:
            args["Cwd"] = _arg(cwd)
        self._planner([{"name": "run_command", "args": args}], say, at)
        body = f"Task Description: {cmd}\n\tThe command exited with code {exit_code}.\nOutput:\n"
        body += output
        extra: dict[str, Any] = {"exit_code": exit_code} if self.exit_code_field else {}
        return self._step("RUN_COMMAND", body, **extra)

    def view(
        self,
        path: str,
        content: str | None = None,
        say: str | None = None,
        at: Moment | None = None,
    ) -> dict[str, Any]:
        """A view_file call and its VIEW_FILE step (numbered lines when the content is known)."""
        if content is not None:
            self.files[path] = content
        text = self.files.get(path)
        if text is None:
            text = self._read_disk(path) or ""
            self.files[path] = text
        lines = _lines(text)
        args = {
            "AbsolutePath": _arg(path),
            "StartLine": _arg(1),
            "EndLine": _arg(max(len(lines), 1)),
        }
        self._planner([{"name": "view_file", "args": args}], say, at)
        body = (
            f"File Path: `{_file_uri(path)}`\n"
            f"Total Lines: {len(lines)}\n"
            f"Total Bytes: {len(text.encode())}\n"
            f"Showing lines 1 to {len(lines)}\n{_VIEW_NOTE}\n"
        )
        body += "\n".join(f"{i}: {line}" for i, line in enumerate(lines, 1))
        return self._step("VIEW_FILE", body)

    def replace(
        self,
        path: str,
        old_text: str,
        new_text: str,
        *,
        current: str | None = None,
        say: str | None = None,
        instruction: str = "",
        at: Moment | None = None,
    ) -> EditResult:
        """A replace_file_content call and its CODE_ACTION step with the diff block.

        ``current`` is the file's full text before the edit; by default what the
        writer last saw of it (written, replaced, viewed), else the file on disk.
        ``old_text`` must occur in it; its first occurrence is replaced.
        """
        before = self._current(path, current)
        after, start, end = _apply(before, old_text, new_text, path)
        args = {
            "TargetFile": _arg(path),
            "TargetContent": _arg(old_text),
            "ReplacementContent": _arg(new_text),
            "StartLine": _arg(start),
            "EndLine": _arg(end),
            "AllowMultiple": _arg(False),
            "Instruction": _arg(instruction or "Apply the requested change."),
        }
        self._planner([{"name": "replace_file_content", "args": args}], say, at)
        return self._code_action_diff(path, before, after, "replace_file_content")

    def multi_replace(
        self,
        path: str,
        chunks: Sequence[tuple[str, str]],
        *,
        current: str | None = None,
        say: str | None = None,
        at: Moment | None = None,
    ) -> EditResult:
        """A multi_replace_file_content call (ReplacementChunks) and one diff block for all."""
        before = self._current(path, current)
        after = before
        encoded: list[dict[str, Any]] = []
        for old_text, new_text in chunks:
            after, start, end = _apply(after, old_text, new_text, path)
            encoded.append(
                {
                    "TargetContent": old_text,
                    "ReplacementContent": new_text,
                    "StartLine": start,
                    "EndLine": end,
                    "AllowMultiple": False,
                }
            )
        args = {
            "TargetFile": _arg(path),
            "ReplacementChunks": _arg(encoded),
            "Instruction": _arg("Apply the requested changes."),
        }
        self._planner([{"name": "multi_replace_file_content", "args": args}], say, at)
        return self._code_action_diff(path, before, after, "multi_replace_file_content")

    def write_file(
        self,
        path: str,
        content: str,
        *,
        overwrite: bool = False,
        say: str | None = None,
        at: Moment | None = None,
    ) -> EditResult:
        """A write_to_file call (CodeContent), then the CODE_ACTION step that confirms it (DONE)."""
        before = self.files.get(path, "")
        args = {
            "TargetFile": _arg(path),
            "Overwrite": _arg(overwrite),
            "CodeContent": _arg(content),
            "Description": _arg(f"Create {path.rsplit('/', 1)[-1]}"),
        }
        self._planner([{"name": "write_to_file", "args": args}], say, at)
        stamp = self.now
        self._step("CODE_ACTION", f"Created file {_file_uri(path)} with requested content.")
        self.files[path] = content
        return EditResult(path=path, before=before, after=content, at=stamp)

    def user_edit(
        self,
        path: str,
        old_text: str,
        new_text: str,
        *,
        current: str | None = None,
        at: Moment | None = None,
    ) -> EditResult:
        """A change the person made while the session ran ("made by the USER" diff block)."""
        before = self._current(path, current)
        after, _, _ = _apply(before, old_text, new_text, path)
        if at is not None:
            self.set_time(at)
        stamp = self.now
        body = (
            f"The following changes were made by the USER to: {path}\n"
            f"[diff_block_start]\n{self._diff(path, before, after)}\n[diff_block_end]"
        )
        self._step("CODE_ACTION", body)
        self.files[path] = after
        return EditResult(path=path, before=before, after=after, at=stamp)

    # -- caches ----------------------------------------------------------------

    def register_workspace(self, workspace: str, kind: str = "cli", title: str = "") -> Path:
        """Name this session's project in the root's cache, merged with what is there.

        ``kind="cli"``: ``cache/last_conversations.json`` (``{workspace: session id}``);
        ``kind="ide"``: ``cache/conversation_metadata.json`` (``conversations`` with
        ``summary.WorkspaceURIs``).
        """
        cache = self.root / "cache"
        cache.mkdir(parents=True, exist_ok=True)
        if kind == "cli":
            target = cache / "last_conversations.json"
            doc = _load_json(target)
            doc[workspace] = self.session_id
        elif kind == "ide":
            target = cache / "conversation_metadata.json"
            doc = _load_json(target)
            conversations = doc.setdefault("conversations", {})
            conversations[self.session_id] = {
                "summary": {
                    "ID": self.session_id,
                    "Title": title or "Untitled conversation",
                    "WorkspaceURIs": [_file_uri(workspace)],
                },
                "is_internal": False,
                "last_modified_time": int(self.now.timestamp()),
            }
        else:
            raise WriterError(f"unknown cache kind {kind!r} (cli or ide)")
        target.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        return target

    # -- helpers ---------------------------------------------------------------

    def _current(self, path: str, current: str | None) -> str:
        if current is not None:
            return current
        if path in self.files:
            return self.files[path]
        text = self._read_disk(path)
        if text is None:
            raise WriterError(f"no known content for {path}: pass current= or view/write it first")
        return text

    @staticmethod
    def _read_disk(path: str) -> str | None:
        try:
            return Path(path).read_text(encoding="utf-8")
        except OSError:
            return None

    def _label(self, path: str) -> str:
        if self.workspace and path.startswith(self.workspace + "/"):
            return path[len(self.workspace) + 1 :]
        return path.lstrip("/")

    def _diff(self, path: str, before: str, after: str) -> str:
        return unified_diff_text(self._label(path), before, after)

    def _code_action_diff(self, path: str, before: str, after: str, tool: str) -> EditResult:
        stamp = self.now
        body = (
            f"The following changes were made by the {tool} tool to: {path}. {_VERIFY_NOTE}\n"
            f"[diff_block_start]\n{self._diff(path, before, after)}\n[diff_block_end]\n"
            f"{_MODIFIED_ONLY_NOTE}"
        )
        self._step("CODE_ACTION", body)
        self.files[path] = after
        return EditResult(path=path, before=before, after=after, at=stamp)


def _apply(before: str, old_text: str, new_text: str, path: str) -> tuple[str, int, int]:
    """Replace the first ``old_text`` in ``before``; also its 1-based start and end lines."""
    at = before.find(old_text)
    if at < 0 or not old_text:
        raise WriterError(f"target text not found in {path}: {old_text[:60]!r}")
    start = before.count("\n", 0, at) + 1
    end = start + max(old_text.rstrip("\n").count("\n"), 0)
    return before[:at] + new_text + before[at + len(old_text) :], start, end


def _load_json(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}
