"""Plain data classes passed between the stages of the pipeline.

transcript reading -> index -> attribution -> notes/hooks -> outputs.
Each stage takes and returns these; none of them knows about click or SQLite.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SessionId = str  # each agent's own id of a session

# the agent of a session or line nobody recorded one for (agents: transcripts.registry)
UNKNOWN_AGENT = "unknown"


@dataclass
class Message:
    role: str  # "user" | "assistant" | "tool"
    text: str
    at: str | None
    seq: int = 0  # position in reading order (after step_index sort)
    # the person's request it followed (1: the first; 0: before any), the index's step
    # for agents whose transcripts number no steps (why's "Asked", the report's request)
    turn: int = 0
    # (start, end) byte offsets of the transcript line it came from: the index keeps
    # long tool output there, not in its own rows, and reads it back on demand
    source_span: tuple[int, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "text": self.text, "at": self.at}


@dataclass
class Command:
    command: str
    cwd: str | None
    exit_code: int | None
    at: str | None
    seq: int = 0  # ordinal among the session's commands; exit codes patch by it
    status: str | None = None  # "DONE" | "RUNNING" (background) when known
    turn: int = 0  # as Message.turn
    after_message: int | None = None  # as Edit.after_message

    def to_json(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "cwd": self.cwd,
            "exit_code": self.exit_code,
            "at": self.at,
        }


@dataclass
class FileRecord:
    path: str
    action: str  # "view" | "list" | "edit" | "write"
    at: str | None
    seq: int = 0
    turn: int = 0  # as Message.turn

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "action": self.action, "at": self.at}


@dataclass
class Hunk:
    """One run of an edit: removed and added lines, with positions when known.

    old_start/new_start come from an ``@@ -a,b +c,d @@`` header (1-based) and
    are None when the block had no header. ``added`` is the ordered span of
    written lines: blame matches runs of neighbours inside it, which is what
    makes short lines like ``}`` attributable.
    """

    removed: list[str]
    added: list[str]
    old_start: int | None = None
    new_start: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "old_start": self.old_start,
            "new_start": self.new_start,
            "removed": self.removed,
            "added": self.added,
        }


@dataclass
class Edit:
    path: str
    tool: str  # replace_file_content | multi_replace_file_content | write_to_file
    removed: list[str]
    added: list[str]
    at: str | None
    source: str = "agent"  # "agent" | "user" (a change the person made, per the transcript)
    hunks: list[Hunk] = field(default_factory=list)
    # The planner call's ReplacementContent / chunks: a second, fuller witness
    # of the written side (the diff block shows only modified lines).
    witness: list[str] = field(default_factory=list)
    truncated: bool = False
    seq: int = 0
    model: str | None = None  # the model chosen when the edit was made, where known
    turn: int = 0  # as Message.turn
    # the seq of the session's last message read before the edit (0: none), where the
    # reader keeps one order for all its records: a turn's messages share one step, and
    # why's "The agent said" is the words around the edit, not the turn's last ones
    after_message: int | None = None

    def to_json(self, session_model: str | None = None) -> dict[str, Any]:
        """The edit's document; its model only where it differs from the session's
        (the person changed the model during the session)."""
        doc: dict[str, Any] = {
            "path": self.path,
            "tool": self.tool,
            "removed": self.removed,
            "added": self.added,
            "at": self.at,
            "source": self.source,
        }
        if self.hunks and any(h.old_start is not None for h in self.hunks):
            doc["hunks"] = [h.to_json() for h in self.hunks]
        if self.witness:
            doc["witness"] = self.witness
        if self.truncated:
            doc["truncated"] = True
        if self.model and self.model != session_model:
            doc["model"] = self.model
        return doc


@dataclass
class Session:
    session_id: SessionId
    transcript: str
    source: str = UNKNOWN_AGENT  # the agent's id (transcripts.registry)
    project: str = "-"
    started_at: str | None = None
    ended_at: str | None = None
    skipped_lines: int = 0
    model: str | None = None  # the model the person chose, where the transcript says
    messages: list[Message] = field(default_factory=list)
    commands: list[Command] = field(default_factory=list)
    files: list[FileRecord] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)

    @property
    def first_prompt(self) -> str | None:
        for m in self.messages:
            if m.role == "user" and m.text:
                return m.text
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "source": self.source,
            "agent": self.source,
            "transcript": self.transcript,
            "project": self.project,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "skipped_lines": self.skipped_lines,
            "model": self.model,
            "messages": [m.to_json() for m in self.messages],
            "commands": [c.to_json() for c in self.commands],
            "files": [f.to_json() for f in self.files],
            "edits": [e.to_json(self.model) for e in self.edits],
        }
