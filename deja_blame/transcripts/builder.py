"""A session put together record by record, for the readers of whole transcripts.

The Claude Code, Codex and Gemini CLI readers read a transcript from its start
each time it changes (Gemini's JSON file is rewritten whole; Claude's
sub-agent files sit beside the main one), so they build a ``Session`` in
memory; the index takes it as one batch (``as_batch``), like Antigravity's.
"""

from __future__ import annotations

from deja_blame.models import Command, Edit, FileRecord, Message, Session
from deja_blame.transcripts.antigravity import Chunk, ReaderState
from deja_blame.transcripts.project import UNKNOWN, work_tree_of
from deja_blame.transcripts.text import (
    cap_text,
    common_directory,
    epoch_of,
    is_absolute,
    normalise_path,
    normalise_time,
    parent_directory,
)

# Tool output kept in the index for these readers (they keep no byte spans to
# read it back from): the head and the tail, as the index does for Antigravity.
TOOL_TEXT_KEPT = 4096


def record_time(value: object) -> str | None:
    return normalise_time(value)[0]


class SessionBuilder:
    def __init__(self, session_id: str, transcript: str, agent: str) -> None:
        self.session = Session(session_id=session_id, transcript=transcript, source=agent)
        self.touched_dir: str | None = None
        self.cwd: str | None = None  # the session's working directory, when recorded
        self._seq = 0
        self._first_at: float | None = None
        self._last_at: float | None = None

    # -- what a reader adds ----------------------------------------------------------

    def seen_time(self, at: str | None) -> None:
        epoch = epoch_of(at)
        if epoch is None or at is None:
            return
        if self._first_at is None or epoch < self._first_at:
            self._first_at, self.session.started_at = epoch, at
        if self._last_at is None or epoch >= self._last_at:
            self._last_at, self.session.ended_at = epoch, at

    def _next(self) -> int:
        self._seq += 1
        return self._seq

    def message(self, role: str, text: str, at: str | None) -> None:
        if not text:
            return
        if role == "tool" and len(text) > TOOL_TEXT_KEPT:
            from deja_blame.index.store import tool_excerpt

            text = tool_excerpt(text)
        self.session.messages.append(
            Message(role=role, text=cap_text(text), at=at, seq=self._next())
        )

    def command(self, command: str, cwd: str | None, at: str | None) -> Command:
        cmd = Command(
            command=command, cwd=cwd, exit_code=None, at=at, seq=len(self.session.commands)
        )
        self.session.commands.append(cmd)
        return cmd

    def file(self, path: str, action: str, at: str | None) -> None:
        self.session.files.append(
            FileRecord(path=path, action=action, at=at, seq=len(self.session.files))
        )
        self.touch(path)

    def edit(self, edit: Edit) -> None:
        edit.seq = len(self.session.edits)
        edit.model = edit.model or self.session.model  # the model when it was made
        self.session.edits.append(edit)
        self.touch(edit.path)

    def touch(self, path: str) -> None:
        if is_absolute(path):
            self.touched_dir = common_directory(self.touched_dir, parent_directory(path))

    def absolute(self, path: object, cwd: str | None = None) -> str | None:
        """A path as the index keeps it: absolute (relative ones against ``cwd``), normalised."""
        if not isinstance(path, str) or not path.strip():
            return None
        path = normalise_path(path)
        base = cwd or self.cwd
        if not is_absolute(path) and base:
            parts: list[str] = base.rstrip("/").split("/")
            for part in path.split("/"):
                if part in ("", "."):
                    continue
                if part == "..":
                    if len(parts) > 1:
                        parts.pop()
                    continue
                parts.append(part)
            path = "/".join(parts) or "/"
        return path

    # -- the result -------------------------------------------------------------------

    def finish(self, project: str | None = None) -> Session:
        """The session, its project from ``project``, else the working directory, else
        the directory the touched files share (lifted to its git work tree)."""
        if project:
            self.session.project = project
        elif self.cwd and is_absolute(self.cwd):
            self.session.project = work_tree_of(self.cwd)
        elif self.touched_dir and self.touched_dir != "/":
            self.session.project = work_tree_of(self.touched_dir)
        else:
            self.session.project = UNKNOWN
        return self.session


def as_batch(session: Session) -> tuple[Chunk, ReaderState]:
    """A whole session as one batch for the index: its rows and the state the
    session row is written from."""
    chunk = Chunk(
        messages=[(0, m) for m in session.messages],
        commands=[(0, c) for c in session.commands],
        files=[(0, f) for f in session.files],
        edits=[(0, e) for e in session.edits],
        skipped=session.skipped_lines,
    )
    state = ReaderState(
        started_at=session.started_at,
        ended_at=session.ended_at,
        skipped=session.skipped_lines,
        n_messages=len(session.messages),
        n_commands=len(session.commands),
        n_files=len(session.files),
        n_edits=len(session.edits),
        model=session.model,
    )
    return chunk, state
