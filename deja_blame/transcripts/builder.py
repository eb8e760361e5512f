"""A session put together record by record, for the readers of whole transcripts.

The Claude Code, Codex and Gemini CLI readers read a transcript from its start
each time it changes (Gemini's JSON file is rewritten whole; Claude's
sub-agent files sit beside the main one), so they build a ``Session`` in
memory; the index takes it as one batch (``as_batch``), like Antigravity's.
"""

from __future__ import annotations

from typing import Any

from deja_blame.models import Command, Edit, FileRecord, Message, Session
from deja_blame.transcripts.project import UNKNOWN, work_tree_of
from deja_blame.transcripts.reading import Chunk, ReaderState
from deja_blame.transcripts.text import (
    cap_text,
    common_directory,
    epoch_of,
    excerpt,
    int64,
    is_absolute,
    normalise_path,
    normalise_time,
    on_a_drive,
    parent_directory,
)

# Tool output kept in the index for these readers (they keep no byte spans to
# read it back from): past TOOL_TEXT_KEPT characters, its head and its tail.
TOOL_TEXT_KEPT = 4096
TOOL_EXCERPT = (128, 384)


def record_time(value: object) -> str | None:
    return normalise_time(value)[0]


class SessionBuilder:
    """A session, record by record. Read in batches (``take`` after each), it holds
    only what the batch added; ``state`` and ``from_state`` carry it to the next run."""

    def __init__(self, session_id: str, transcript: str, agent: str) -> None:
        self.session = Session(session_id=session_id, transcript=transcript, source=agent)
        self.touched_dir: str | None = None
        self.cwd: str | None = None  # the session's working directory, when recorded
        self._seq = 0
        # the person's requests so far: each record's step in the index, so that why and
        # the report find the request an edit followed (every record is step 0 otherwise)
        self.turn = 0
        self._first_at: float | None = None
        self._last_at: float | None = None
        self._seen_last: str | None = (
            None  # the last time seen_time took (min/max: a repeat changes nothing)
        )
        # ordinals taken by earlier batches (the index has those rows)
        self._taken = {"messages": 0, "commands": 0, "files": 0, "edits": 0}
        self.exit_patches: dict[int, int] = {}  # exit codes of commands taken before

    # -- what a reader adds ----------------------------------------------------------

    def seen_time(self, at: str | None) -> None:
        if at == self._seen_last:
            return  # most records of a transcript with no times share one: parse it once
        self._seen_last = at
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
            text = excerpt(text, *TOOL_EXCERPT)
        if role == "user":
            self.turn += 1
        self.session.messages.append(
            Message(role=role, text=cap_text(text), at=at, seq=self._next(), turn=self.turn)
        )

    def command(self, command: str, cwd: str | None, at: str | None) -> Command:
        ordinal = self._taken["commands"] + len(self.session.commands)
        cmd = Command(
            command=command,
            cwd=cwd,
            exit_code=None,
            at=at,
            seq=ordinal,
            turn=self.turn,
            after_message=self._seq,
        )
        self.session.commands.append(cmd)
        return cmd

    def set_exit(self, ordinal: int, code: int | None) -> None:
        """A command's exit code, once its result came (in this batch or a later one);
        one past 64 bits is none (the index and JSON could not hold it)."""
        code = int64(code)
        local = ordinal - self._taken["commands"]
        if 0 <= local < len(self.session.commands):
            self.session.commands[local].exit_code = code
        elif code is not None:
            self.exit_patches[ordinal] = code

    def file(self, path: str, action: str, at: str | None) -> None:
        ordinal = self._taken["files"] + len(self.session.files)
        self.session.files.append(
            FileRecord(path=path, action=action, at=at, seq=ordinal, turn=self.turn)
        )
        self.touch(path)

    def edit(self, edit: Edit) -> None:
        edit.seq = self._taken["edits"] + len(self.session.edits)
        edit.turn = self.turn
        edit.after_message = self._seq  # the messages' seq so far: its place among them
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
            base = normalise_path(base)  # as a reader may keep it: C:\\Users\\bob
            if on_a_drive(base):
                # a session on Windows: ``src\\app.py`` is two parts there, not a name,
                # and ``\\src\\app.py`` is on the working folder's drive, from its root
                path = path.replace("\\", "/")
                if path.startswith("/"):
                    base = base[:3]
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

    # -- reading in batches --------------------------------------------------------------

    def take(self) -> Chunk:
        """What was added since the last take, as one batch for the index; the
        builder then holds nothing of it."""
        s = self.session
        chunk, _ = as_batch(s)
        chunk.exit_patches = dict(self.exit_patches)
        for name in self._taken:
            self._taken[name] += len(getattr(s, name))
            getattr(s, name).clear()
        self.exit_patches.clear()
        s.skipped_lines = 0  # counted in this chunk
        return chunk

    def summary(self) -> ReaderState:
        """The session's row as read so far (its counts take in what was taken)."""
        s = self.session
        self.finish()
        return ReaderState(
            started_at=s.started_at,
            ended_at=s.ended_at,
            n_messages=self._taken["messages"] + len(s.messages),
            n_commands=self._taken["commands"] + len(s.commands),
            n_files=self._taken["files"] + len(s.files),
            n_edits=self._taken["edits"] + len(s.edits),
            model=s.model,
            first_cwd=s.project if s.project != UNKNOWN else None,
        )

    def to_state(self) -> dict[str, Any]:
        s = self.session
        return {
            "session_id": s.session_id,
            "transcript": s.transcript,
            "agent": s.source,
            "touched_dir": self.touched_dir,
            "cwd": self.cwd,
            "seq": self._seq,
            "first_at": self._first_at,
            "last_at": self._last_at,
            "started_at": s.started_at,
            "ended_at": s.ended_at,
            "model": s.model,
            "taken": dict(self._taken),
            "turn": self.turn,
        }

    @classmethod
    def from_state(cls, doc: dict[str, Any]) -> SessionBuilder:
        b = cls(str(doc["session_id"]), str(doc["transcript"]), str(doc["agent"]))
        b.touched_dir, b.cwd, b._seq = doc.get("touched_dir"), doc.get("cwd"), int(doc["seq"])
        b._first_at, b._last_at = doc.get("first_at"), doc.get("last_at")
        b.session.started_at, b.session.ended_at = doc.get("started_at"), doc.get("ended_at")
        b.session.model = doc.get("model")
        b._taken = {k: int(v) for k, v in doc["taken"].items()}
        b.turn = int(doc.get("turn", 0))
        return b


def as_batch(session: Session) -> tuple[Chunk, ReaderState]:
    """A whole session as one batch for the index: its rows and the state the
    session row is written from."""
    chunk = Chunk(
        messages=[(m.turn, m) for m in session.messages],
        commands=[(c.turn, c) for c in session.commands],
        files=[(f.turn, f) for f in session.files],
        edits=[(e.turn, e) for e in session.edits],
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
        first_cwd=session.project if session.project != UNKNOWN else None,
    )
    return chunk, state


class BatchReader:
    """Another agent's reader behind Antigravity's reader's face (``feed`` a batch of
    records, read its ``state``): the index reads a growing Claude Code or Codex
    transcript on from an offset the way it reads Antigravity's."""

    def __init__(self, reader: Any, skipped: int = 0) -> None:
        self.reader = reader  # a harness reader: .builder, .record(), .to_state()
        self.skipped = skipped  # malformed lines, all runs together

    def feed(
        self,
        records: list[dict[str, Any] | None],
        spans: list[tuple[int, int] | None] | None = None,
    ) -> Chunk:
        session = self.reader.builder.session
        for record in records:
            if record is None:
                self.skipped += 1
                session.skipped_lines += 1
            else:
                try:
                    self.reader.record(record)
                except OSError:
                    raise
                except Exception:  # noqa: BLE001 - a record no reader rule foresaw
                    # One record a reader cannot make sense of is a malformed line,
                    # counted: the rest of the session is still read (it stopped the
                    # whole index before, every transcript with it).
                    self.skipped += 1
                    session.skipped_lines += 1
        chunk: Chunk = self.reader.builder.take()
        return chunk

    @property
    def state(self) -> ReaderState:
        state: ReaderState = self.reader.builder.summary()
        state.skipped = self.skipped
        state.other = self.reader.to_state()
        return state
