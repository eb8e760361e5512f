"""The Antigravity transcript reader: records -> messages, commands, files, edits.

The reader is a resumable state machine so that the index can read a grown
transcript from the byte offset after its last complete line: everything it
must remember between lines (the session start, the planner row's pending
calls, unconfirmed write_to_file contents, counters) lives in ``ReaderState``,
which serialises to a small dict. A one-shot parse is the same machine run over
the whole file in one go.

Rules: ``docs/antigravity-format.md`` sections 2-6 and 9.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from deja_blame.models import Command, Edit, FileRecord, Hunk, Message, Session
from deja_blame.transcripts import patterns as P
from deja_blame.transcripts.antigravity.discover import AGENT, sibling_transcripts
from deja_blame.transcripts.diffblock import find_diff_blocks, parse_diff_block
from deja_blame.transcripts.jsonl import decode_line, iter_batches, with_extras
from deja_blame.transcripts.project import ProjectHints, agent_place, resolve_project
from deja_blame.transcripts.reading import (
    Chunk,
    IncompleteTranscript,
    ReaderState,
    check_line_count,
    open_regular,
)
from deja_blame.transcripts.text import (
    cap_text,
    clean_user_text,
    common_directory,
    int64,
    int64_text,
    is_absolute,
    normalise_path,
    normalise_time,
    parent_directory,
    record_epoch,
    strip_step_header,
)

COMMAND_TYPES = {"RUN_COMMAND", "GENERIC"}
FILE_TYPES = {"VIEW_FILE": "view", "CODE_ACTION": "edit", "LIST_DIRECTORY": "list"}
EDIT_TOOLS = {"replace_file_content", "multi_replace_file_content"}
# USER_EXPLICIT records of a tool step's type are the person's own actions in the IDE
MAX_WEIGHED_DIRS = 2000  # directories counted for the project guess, per kind
REWIND_TYPES = frozenset({"USER_INPUT", "CHECKPOINT"})
IDE_EVENT_TYPES = frozenset({*COMMAND_TYPES, *FILE_TYPES, "GREP_SEARCH", "OPEN_FILE"})


@dataclass
class PendingCall:
    """A planner row's tool call, waiting for the step that reports on it."""

    kind: str  # "command" | "file"
    key: str  # the command text, or the normalised path
    ordinal: int  # the command's or file record's ordinal
    action: str = ""  # for files
    claimed: bool = False

    def to_dict(self) -> dict[str, Any]:
        """What ``asdict`` gives, without its deep copy (this runs for every tool call)."""
        return {
            "kind": self.kind,
            "key": self.key,
            "ordinal": self.ordinal,
            "action": self.action,
            "claimed": self.claimed,
        }


class SessionReader:
    """Feeds records of one transcript through the format rules."""

    def __init__(
        self, state: ReaderState | None = None, transcript: str | Path | None = None
    ) -> None:
        """``transcript``: the file the records' spans are in, where a pending write's
        content is read back from (``_pending_content``)."""
        self.state = state or ReaderState()
        self._seen = set(self.state.seen_steps)
        self.chunk = Chunk()
        self._span: tuple[int, int] | None = None  # the record being read, in the file
        self._transcript = transcript
        # the content of each pending write the state keeps by its line only: path ->
        # text, while this reader runs (a state read back holds none of them)
        self._write_contents: dict[str, str] = {}

    # -- driving -------------------------------------------------------------

    def feed(
        self,
        records: list[dict[str, Any] | None],
        spans: list[tuple[int, int] | None] | None = None,
    ) -> Chunk:
        """Read one batch of lines (None = malformed) and return what it added.

        ``spans`` are the lines' (start, end) byte offsets in the transcript, when
        known: tool output messages carry theirs (``Message.source_span``).
        """
        self.chunk = Chunk()
        st = self.state
        ordered: list[tuple[int, int, int, dict[str, Any], float | None]] = []
        for seq, record in enumerate(records):
            if record is None or not _well_formed(record):
                st.skipped += 1
                self.chunk.skipped += 1
                continue
            key = step_checksum(record)
            if key is not None:
                if key in self._seen:
                    continue  # the same step written out again
                self._seen.add(key)
                st.seen_steps.append(key)
            epoch = record_epoch(record.get("created_at"))
            step = int64(record.get("step_index"))
            if step is not None:
                if (
                    step < st.top_step
                    and record.get("type") in REWIND_TYPES
                    and epoch is not None
                    and st.top_epoch is not None
                    and epoch > st.top_epoch
                ):
                    st.branch += 1  # a rewind: the numbers start again from here
                    st.top_step = step
                st.top_step = max(st.top_step, step)
                st.last_step = step
            if epoch is not None and (st.top_epoch is None or epoch > st.top_epoch):
                st.top_epoch = epoch
            ordered.append((st.branch, st.last_step, seq, record, epoch))
        # step_index puts the steps of a branch in order (62 can be written before
        # 61); after a rewind each branch stays whole instead of the two being
        # interleaved step by step (section 9)
        ordered.sort(key=lambda t: (t[0], t[1], t[2]))
        for branch, step, seq, record, epoch in ordered:
            self._span = spans[seq] if spans is not None else None
            self._record(branch_position(branch, step), record, epoch)
        self._span = None
        return self.chunk

    # -- one record ----------------------------------------------------------

    def _record(self, step: int, rec: dict[str, Any], epoch: float | None = None) -> None:
        """``epoch``: ``record_epoch`` of the record's ``created_at``, where known."""
        st = self.state
        created = rec.get("created_at")
        at = _record_time(created)
        if at is None:
            at = st.started_at  # timestamp fallback: the session start, once seen
        else:
            # the canonical form comes back as it is: its epoch is the one feed parsed
            self._seen_time(at, epoch if at is created and epoch is not None else record_epoch(at))
        source = rec.get("source")
        if source == "USER_EXPLICIT":
            content = cap_text(rec.get("content") or "")
            if "Model Selection" in content:
                for chosen in P.MODEL_SELECTION.finditer(content):
                    if chosen.group("new").strip() not in ("", "None"):
                        st.model = chosen.group("new").strip()[:200]
            # an IDE event (the person opened a file, ran a command) is no request
            text = "" if _ide_event(rec) else clean_user_text(content)
            if "made by the USER" in text:
                text = P.USER_CHANGE_NOTICE.sub("", text).strip()
            if text:
                self._message(step, "user", text, at)
            if "made by the USER" in content:
                # the person's own change, reported in the conversation: evidence
                # that those lines are not the agent's
                self._diff_edits(step, content, at, user_only=True)
            return
        if source != "MODEL":
            return  # SYSTEM, USER_IMPLICIT, ...: ignored
        kind = rec.get("type") or "PLANNER_RESPONSE"
        if kind == "PLANNER_RESPONSE":
            self._planner(step, rec, at)
        elif kind == "GENERIC" and _reports_edit(rec):
            # one build reports every tool step as GENERIC, writes included:
            # the content says what the step did
            self._file_step(step, rec, at, "edit")
        elif kind in COMMAND_TYPES:
            self._command_step(step, rec, at)
        elif kind in FILE_TYPES:
            self._file_step(step, rec, at, FILE_TYPES[kind])
        # GREP_SEARCH, SEARCH_WEB, ASK_QUESTION, ...: nothing

    def _seen_time(self, at: str, epoch: float | None) -> None:
        """The session runs from its earliest time to its latest, whatever the step order
        (``epoch``: ``record_epoch(at)``)."""
        st = self.state
        if epoch is None:
            return
        if st.started_epoch is None or epoch < st.started_epoch:
            st.started_at, st.started_epoch = at, epoch
        if st.ended_epoch is None or epoch >= st.ended_epoch:
            st.ended_at, st.ended_epoch = at, epoch

    def _message(
        self,
        step: int,
        role: str,
        text: str,
        at: str | None,
        span: tuple[int, int] | None = None,
    ) -> None:
        message = Message(role=role, text=text, at=at, seq=self.state.n_messages, source_span=span)
        self.chunk.messages.append((step, message))
        self.state.n_messages += 1

    def _new_command(self, step: int, command: str, cwd: str | None, at: str | None) -> int:
        ordinal = self.state.n_commands
        self.chunk.commands.append(
            (step, Command(command=command, cwd=cwd, exit_code=None, at=at, seq=ordinal))
        )
        self.state.n_commands += 1
        return ordinal

    def _new_file(self, step: int, path: str, action: str, at: str | None) -> int:
        ordinal = self.state.n_files
        self.chunk.files.append((step, FileRecord(path=path, action=action, at=at, seq=ordinal)))
        self.state.n_files += 1
        self._touch(path, directory=(action == "list"))
        if action in ("view", "list"):
            self._weigh(self.state.file_dirs, path, directory=(action == "list"))
        return ordinal

    def _new_edit(self, step: int, edit: Edit) -> None:
        edit.seq = self.state.n_edits
        edit.model = edit.model or self.state.model
        self.chunk.edits.append((step, edit))
        self.state.n_edits += 1
        self._touch(edit.path, directory=False)
        self._weigh(self.state.edit_dirs, edit.path, directory=False)

    def _weigh(self, counts: dict[str, int], path: str, directory: bool) -> None:
        """One more of the session's paths in ``path``'s directory, for the project guess."""
        if not is_absolute(path) or agent_place(path):
            return
        where = path if directory else parent_directory(path)
        if where in counts or len(counts) < MAX_WEIGHED_DIRS:
            counts[where] = counts.get(where, 0) + 1

    def _touch(self, path: str, directory: bool) -> None:
        st = self.state
        if not is_absolute(path):
            return
        if st.artifact_dir and (st.artifact_dir + "/" in path or path.endswith(st.artifact_dir)):
            return  # agent artifacts (plans, task lists) are not project files
        touched = st.touched_dir
        if touched is not None and not touched.endswith("/") and path.startswith(touched + "/"):
            return  # already under the shared directory: it stays as it is
        st.touched_dir = common_directory(touched, path if directory else parent_directory(path))

    # -- planner rows --------------------------------------------------------

    def _planner(self, step: int, rec: dict[str, Any], at: str | None) -> None:
        text = planner_text(rec)
        if text:
            self._message(step, "assistant", text, at, self._span)
        calls = rec.get("tool_calls")
        if not isinstance(calls, list) or not calls:
            return
        self.state.planner_calls = []  # a new planner row: steps now report on its calls
        for number, call in enumerate(calls):
            if not isinstance(call, dict):
                continue
            name = call.get("name")
            args = self._decode_args(call.get("args"))
            if not isinstance(name, str) or args is None:
                continue
            self._tool_call(step, name, args, at, number)

    def _decode_args(self, raw: object) -> dict[str, Any] | None:
        """Tool-call args: an object (or one JSON string holding it), decoded once where
        the compact file encoded its values (``encoded_args`` tells by the content)."""
        if isinstance(raw, str):
            try:
                raw = orjson.loads(raw)
            except orjson.JSONDecodeError:
                return None
        if not isinstance(raw, dict):
            return None
        if not encoded_args(raw):
            return raw  # native values (transcript_full.jsonl): never decoded again
        out: dict[str, Any] = {}
        for key, value in raw.items():
            decoded = _decode_once(value)
            if isinstance(decoded, TruncatedText):
                out[TRUNCATED_KEY] = True
                decoded = str(decoded)
            out[key] = decoded
        return out

    def _tool_call(
        self, step: int, name: str, args: dict[str, Any], at: str | None, number: int = 0
    ) -> None:
        """``number``: the call's place in its planner row's ``tool_calls``."""
        st = self.state
        if name == "schedule":
            # a timer: its step (GENERIC, RUNNING, "Task Description: Timer: 30s, ...")
            # is no command
            st.planner_calls.append(PendingCall("timer", "", -1).to_dict())
            return
        if name == "run_command":
            command = _text_arg(args, "CommandLine")
            if not command:
                return
            cwd = _text_arg(args, "Cwd")
            cwd = normalise_path(cwd) if cwd else None
            if cwd and st.first_cwd is None:
                st.first_cwd = cwd
            if cwd and is_absolute(cwd):
                self._weigh(st.cwds, cwd, directory=True)
            ordinal = self._new_command(step, command, cwd, at)
            st.planner_calls.append(PendingCall("command", command.strip(), ordinal).to_dict())
            return
        path_raw = _text_arg(args, "AbsolutePath") or _text_arg(args, "TargetFile")
        if name == "list_dir":
            path_raw = _text_arg(args, "DirectoryPath") or path_raw
        if not path_raw:
            return
        path = normalise_path(path_raw)
        if name == "view_file":
            self._planner_file(step, path, "view", at)
        elif name == "list_dir":
            st.pending_list_dir = path
            self._planner_file(step, path, "list", at)
        elif name in EDIT_TOOLS:
            self._planner_file(step, path, "edit", at)
            witness = _replacement_witness(args)
            if witness:
                st.pending_witness[path] = witness
        elif name == "write_to_file":
            got = _write_content(args)
            if got is None:
                return  # nested past what can be written back as text: no usable content
            kept, truncated = got
            pending: dict[str, Any] = {
                "truncated": truncated,
                "step": step,
                "at": at,  # the file record takes the call's time, the edit the step's
            }
            self._write_contents.pop(path, None)
            if self._span is not None and self._transcript is not None:
                # The state keeps where the call is, not its content: a write never
                # confirmed stays in the index's state for good (0.3 MB of 18 on the
                # bench root), and one confirmed in a later batch or run is read back
                # from its line (one that no longer gives the write: see _code_action).
                start, end = self._span
                pending["line"] = [start, end - start, number]
                self._write_contents[path] = kept
            else:
                pending["content"] = kept  # a line of the session's other file
            st.pending_writes[path] = pending

    def _planner_file(self, step: int, path: str, action: str, at: str | None) -> None:
        ordinal = self._new_file(step, path, action, at)
        self.state.planner_calls.append(PendingCall("file", path, ordinal, action=action).to_dict())

    def _claim(self, kind: str, key: str, action: str = "") -> dict[str, Any] | None:
        for call in self.state.planner_calls:
            if call["kind"] != kind or call["claimed"]:
                continue
            if call["key"] == key or (kind == "command" and _first_line(call["key"]) == key):
                # a background command's "Task Description:" holds only the first
                # line of a command of several lines
                if kind == "file" and action and call["action"] != action:
                    continue
                call["claimed"] = True
                return call
        return None

    def _timer(self, named: str | None) -> bool:
        """Is this step a ``schedule`` timer of the planner row before it?"""
        if named is not None and P.TIMER_DESCRIPTION.match(named):
            for call in self.state.planner_calls:
                if call["kind"] == "timer" and not call["claimed"]:
                    call["claimed"] = True
                    break
            return True
        for call in self.state.planner_calls:
            if call["kind"] == "timer" and not call["claimed"]:
                if named is not None and self._pending_command(named):
                    return False
                call["claimed"] = True
                return True
        return False

    def _pending_command(self, named: str) -> bool:
        return any(
            c["kind"] == "command"
            and not c["claimed"]
            and (c["key"] == named or _first_line(c["key"]) == named)
            for c in self.state.planner_calls
        )

    # -- tool steps ----------------------------------------------------------

    def _tool_output(self, step: int, rec: dict[str, Any], at: str | None) -> str:
        body = tool_output_text(rec)
        if body:
            self._message(step, "tool", body, at, self._span)
        return body

    def _command_step(self, step: int, rec: dict[str, Any], at: str | None) -> None:
        body = self._tool_output(step, rec, at)
        m = P.TASK_DESCRIPTION.search(body) if "Task Description:" in body else None
        named = m.group(1).strip() if m and m.group(1).strip() else None
        if self._timer(named):
            return  # a schedule timer waits; it runs nothing
        code = _exit_code(rec, body)
        target: int | None = None
        if named:
            call = self._claim("command", named)
            if call is not None:
                target = call["ordinal"]
            else:
                target = self._new_command(step, named, None, at)
        else:
            commands = [c for c in self.state.planner_calls if c["kind"] == "command"]
            if len(commands) == 1:
                # the only run_command of the planner row before it; with two or
                # more and no name, there is no telling which (#4530): left off
                target = commands[0]["ordinal"]
                commands[0]["claimed"] = True
        if target is None:
            return
        status = _status(rec, body)
        if status is not None:
            self._set_status(target, status)
        if code is not None:
            self._set_exit(target, code)

    def _set_exit(self, ordinal: int, code: int) -> None:
        for _, cmd in self.chunk.commands:
            if cmd.seq == ordinal:
                cmd.exit_code = code
                return
        self.chunk.exit_patches[ordinal] = code  # a command of an earlier batch

    def _set_status(self, ordinal: int, status: str) -> None:
        for _, cmd in self.chunk.commands:
            if cmd.seq == ordinal:
                cmd.status = status
                return
        self.chunk.status_patches[ordinal] = status

    def _file_step(self, step: int, rec: dict[str, Any], at: str | None, action: str) -> None:
        body = self._tool_output(step, rec, at)
        if action == "edit":
            self._code_action(step, rec, body, at)
            return
        path: str | None = None
        m = P.FILE_PATH_LINE.search(body)
        if m:
            path = normalise_path(m.group(1))
        elif action == "list" and body.lstrip().startswith("{"):
            path = self.state.pending_list_dir  # JSON-lines listing carries no path
        else:
            path = _first_absolute_path(body) or (
                self.state.pending_list_dir if action == "list" else None
            )
        if not path:
            return
        if self._claim("file", path, action) is None:
            self._new_file(step, path, action, at)

    def _diff_edits(self, step: int, body: str, at: str | None, user_only: bool = False) -> bool:
        """Edits from "The following changes were made by ... to: <path>" + diff blocks."""
        st = self.state
        changes = list(P.CHANGES_MADE_BY.finditer(body))
        if user_only:
            changes = [ch for ch in changes if ch.group("user") is not None]
        if not changes:
            return False
        blocks = find_diff_blocks(body)
        for i, ch in enumerate(changes):
            path = _path_from_sentence(_sentence_rest(body, ch))
            if not path:
                continue
            by_user = ch.group("user") is not None
            tool = "user_edit" if by_user else (ch.group("tool") or "replace_file_content")
            end = changes[i + 1].start() if i + 1 < len(changes) else len(body)
            mine = [text for start, text in blocks if ch.end() <= start < end]
            if not by_user and self._claim("file", path, "edit") is None:
                self._new_file(step, path, "edit", at)
            witness = [] if by_user else st.pending_witness.pop(path, [])
            for block in mine:
                hunks = parse_diff_block(block)
                edit = Edit(
                    path=path,
                    tool=tool,
                    removed=[ln for h in hunks for ln in h.removed],
                    added=[ln for h in hunks for ln in h.added],
                    at=at,
                    source="user" if by_user else "agent",
                    hunks=hunks,
                    witness=witness,
                )
                witness = []  # the call's witness goes with its first block
                self._new_edit(step, edit)
        return True

    def _code_action(self, step: int, rec: dict[str, Any], body: str, at: str | None) -> None:
        st = self.state
        if self._diff_edits(step, body, at):
            return
        created = P.CREATED_FILE.search(body)
        path = normalise_path(created.group(1)) if created else _first_absolute_path(body)
        if not path:
            return  # a failed step names no file: nothing is recorded (#4528)
        pending = st.pending_writes.get(path)
        if pending is not None and _status(rec, body) not in ("DONE", None):
            return
        content = None if pending is None else self._pending_content(path, pending)
        if pending is not None and content is None:
            # the call's line no longer gives its write (the transcript changed where the
            # index's hash of its head and tail cannot see): the write is lost, so it is
            # counted as a line skipped, and deja index and show say so
            del st.pending_writes[path]
            self._write_contents.pop(path, None)
            st.skipped += 1
            self.chunk.skipped += 1
        if pending is not None and content is not None:
            del st.pending_writes[path]
            self._write_contents.pop(path, None)
            lines = content.split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            if self._claim("file", path, "write") is None:
                self._new_file(step, path, "write", pending.get("at", at))
            self._new_edit(
                step,
                Edit(
                    path=path,
                    tool="write_to_file",
                    removed=[],
                    added=lines,
                    at=at,
                    hunks=[Hunk(removed=[], added=lines, old_start=None, new_start=1)],
                    truncated=bool(pending["truncated"]),
                ),
            )
            return
        if self._claim("file", path, "edit") is None:
            self._new_file(step, path, "edit", at)

    def _pending_content(self, path: str, pending: dict[str, Any]) -> str | None:
        """A pending write's content: in the state, held by this reader, or read back
        from the call's line in the transcript (None where that line no longer gives
        a write to ``path``)."""
        content = pending.get("content")
        if isinstance(content, str):
            return content
        held = self._write_contents.get(path)
        if held is not None:
            return held
        where = pending.get("line")
        if self._transcript is None or not isinstance(where, list) or len(where) != 3:
            return None
        start, length, number = where
        try:
            with open_regular(self._transcript) as fh:
                fh.seek(start)
                rec = decode_line(fh.read(length))
        except OSError as exc:
            # not read now (a read error, the file replaced): the next run reads on from
            # the index's state, with the call still pending, and loses nothing
            raise IncompleteTranscript(
                f"{self._transcript}: a pending write's line cannot be read back"
                f" ({exc.strerror or exc})"
            ) from exc
        calls = rec.get("tool_calls") if rec is not None else None
        if not isinstance(calls, list) or not 0 <= number < len(calls):
            return None
        call = calls[number]
        args = self._decode_args(call.get("args")) if isinstance(call, dict) else None
        if args is None or call.get("name") != "write_to_file":
            return None
        named = _text_arg(args, "AbsolutePath") or _text_arg(args, "TargetFile")
        if not named or normalise_path(named) != path:
            return None
        got = _write_content(args)
        return None if got is None else got[0]


# -- helpers -------------------------------------------------------------------


def _write_content(args: dict[str, Any]) -> tuple[str, bool] | None:
    """A write_to_file call's content as kept (capped) and whether it is cut short;
    None when it cannot be written back as text."""
    content = args.get("CodeContent")
    truncated = False
    if not isinstance(content, str):
        try:
            content = "" if content is None else orjson.dumps(content).decode()
        except TypeError:
            return None
    if P.TRUNCATED_MARK.search(content):
        truncated = True
    kept = cap_text(content)
    if len(kept) < len(content):
        truncated = True  # past the 1 MiB cap: said in show and parse, not silent
    return kept, truncated or bool(args.get(TRUNCATED_KEY))


def planner_text(rec: dict[str, Any]) -> str:
    """A planner row's words to the person, as kept: stripped and capped."""
    content = rec.get("content")
    return cap_text(content.strip()) if isinstance(content, str) else ""


def tool_output_text(rec: dict[str, Any]) -> str:
    """A tool step's output as kept: the content, capped, minus its step header."""
    content = rec.get("content")
    return strip_step_header(cap_text(content)) if isinstance(content, str) else ""


# 2026-07-17T09:00:00Z   (what clients write: UTC, whole seconds, already canonical)
_CANONICAL_TIME = re.compile(r"([1-9]\d{3}-\d\d-\d\d)T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\dZ", re.ASCII)
_VALID_DAYS: dict[str, bool] = {}


def _record_time(value: object) -> str | None:
    """``normalise_time(value)[0]``, with a fast path for the canonical form.

    For ``2026-07-17T09:00:00Z`` normalise_time only checks that the fields
    make a valid time and gives the text back; the day's validity is memoised.
    """
    if type(value) is str:
        m = _CANONICAL_TIME.fullmatch(value)
        if m is not None:
            day = m.group(1)
            valid = _VALID_DAYS.get(day)
            if valid is None:
                if len(_VALID_DAYS) > 4096:
                    _VALID_DAYS.clear()
                valid = _VALID_DAYS[day] = normalise_time(value)[0] == value
            if valid:
                return value
    return normalise_time(value)[0]


_STR_FIELDS = ("source", "type", "content", "status")


def _well_formed(rec: dict[str, Any]) -> bool:
    """A record whose known fields have the wrong JSON type counts as malformed."""
    for key in _STR_FIELDS:
        value = rec.get(key)
        if value is not None and not isinstance(value, str):
            return False
    created = rec.get("created_at")
    if created is not None and not isinstance(created, str):
        return False
    calls = rec.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        return False
    return True


TRUNCATED_KEY = "\0truncated"  # marks, in decoded args, a value the compact file cut


def encoded_args(args: dict[str, Any]) -> bool:
    """Are these args the compact file's (each value JSON text), not native values?

    Decided by the content, never by the file's name: the full file's lines
    saved as ``transcript.jsonl`` (or handed to ``deja parse``) are native, and
    decoding them again turns a ``CodeContent`` that is the text of a
    ``package.json`` into an object. Compact values are all strings and each
    parses as JSON (or is JSON text cut with ``<truncated N bytes>``); one
    native value (a boolean, a number, a list, a path without quotes) says the
    call is native.
    """
    if not args:
        return False
    for value in args.values():
        if not isinstance(value, str):
            return False
        if not _is_json_text(value):
            return False
    return True


def _is_json_text(value: str) -> bool:
    text = value.strip()
    if not text:
        return False
    first = text[0]
    if first == '"':
        if text.endswith('"') and len(text) > 1:
            return True  # checked by decoding when it is used; a quoted value is JSON text
        return P.TRUNCATED_MARK.search(text) is not None
    if first in "{[" or first == "-" or first.isdigit() or text in ("true", "false", "null"):
        try:
            orjson.loads(text)
        except orjson.JSONDecodeError:
            return P.TRUNCATED_MARK.search(text) is not None
        return True
    return False


def _decode_once(value: object) -> object:
    """A compact argument value is JSON text, quotes included: decode it once.

    A long value cut with ``<truncated N bytes>`` no longer parses: the text
    before the marker is decoded as a JSON string missing its closing quote (the
    partial last line kept); a plain string that is not JSON is kept as it is.
    """
    if not isinstance(value, str):
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        pass
    mark = P.TRUNCATED_MARK.search(value)
    if mark and value.startswith('"'):
        head = value[: mark.start()].rstrip("\n")
        for cut in range(0, 8):  # the cut may split an escape sequence: back off a little
            try:
                decoded = orjson.loads(head[: len(head) - cut] + '"')
            except orjson.JSONDecodeError:
                continue
            return TruncatedText(decoded)
    return value


class TruncatedText(str):
    """A decoded argument value that the compact transcript cut short."""


def _text_arg(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float, bool)):
        return str(value)
    return None


def _replacement_witness(args: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    content = args.get("ReplacementContent")
    if isinstance(content, str):
        lines.extend(content.split("\n"))
    chunks = args.get("ReplacementChunks")
    if isinstance(chunks, str):
        chunks = _decode_once(chunks)
    if isinstance(chunks, list):
        for chunk in chunks:
            if isinstance(chunk, dict) and isinstance(chunk.get("ReplacementContent"), str):
                lines.extend(chunk["ReplacementContent"].split("\n"))
    return [cap_text(x) for x in lines]


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0].strip()


def _reports_edit(rec: dict[str, Any]) -> bool:
    """A step whose content reports a write (``Created file ... with requested
    content.``, ``The following changes were made by the ... tool``)."""
    content = rec.get("content")
    if not isinstance(content, str):
        return False
    return ("Created file" in content and P.CREATED_FILE_DONE.search(content) is not None) or (
        "The following changes were made by the" in content
        and any(ch.group("tool") for ch in P.CHANGES_MADE_BY.finditer(content))
    )


def _ide_event(rec: dict[str, Any]) -> bool:
    """A USER_EXPLICIT record that is something the person did in the IDE (opened a
    file, ran a command: a tool step's type, "The USER performed the following
    action"), not a request. Another new type is still read as a request."""
    if rec.get("type") in IDE_EVENT_TYPES:
        return True
    content = rec.get("content")
    return isinstance(content, str) and content.lstrip().startswith(P.IDE_ACTION)


def _exit_code(rec: dict[str, Any], body: str) -> int | None:
    top = int64(rec.get("exit_code"))
    if top is not None:
        return top
    m = P.EXITED_WITH_CODE.search(body) or P.FAILED_WITH_CODE.search(body)
    if m:
        return int64_text(m.group(1))
    if P.COMPLETED_OK.search(body):
        return 0
    return None


def _status(rec: dict[str, Any], body: str) -> str | None:
    status = rec.get("status")
    if isinstance(status, str) and status:
        return status.upper()
    m = P.STATUS_LINE.search(body)
    return m.group(1).upper() if m else None


def _sentence_rest(body: str, ch: re.Match[str]) -> str:
    """What follows ``to:``: its line, or up to ``. If relevant`` when that comes
    before the diff block (a file name with a newline in it spans lines)."""
    start = ch.start("rest")
    block = body.find("[diff_block_start]", start)
    cut = body.find(". If relevant", start, block if block >= 0 else len(body))
    return body[start:cut] + ". If relevant" if cut >= 0 else ch.group("rest")


def _path_from_sentence(rest: str) -> str | None:
    """The path after ``to:`` ends before ``. If relevant`` (or at the end of the line)."""
    text = rest.strip()
    cut = text.find(". If relevant")
    if cut >= 0:
        text = text[:cut]
    else:
        text = text.split()[0] if text.split() else ""
        text = text.rstrip(".,;:")
    path = normalise_path(text) if text else ""
    return path if path and (is_absolute(path) or "/" in path) else None


def _first_absolute_path(body: str) -> str | None:
    m = P.ABSOLUTE_PATH.search(body)
    if not m:
        return None
    path = normalise_path(m.group("path").rstrip(".,;:"))
    return path if is_absolute(path) else None


# -- whole files -----------------------------------------------------------------


def apply_chunk(session: Session, chunk: Chunk) -> None:
    """Fold one batch into an in-memory Session (the one-shot parse)."""
    session.messages.extend(m for _, m in chunk.messages)
    session.commands.extend(c for _, c in chunk.commands)
    session.files.extend(f for _, f in chunk.files)
    session.edits.extend(e for _, e in chunk.edits)
    for ordinal, status in chunk.status_patches.items():
        for cmd in session.commands:
            if cmd.seq == ordinal:
                cmd.status = status
    for ordinal, code in chunk.exit_patches.items():
        for cmd in session.commands:
            if cmd.seq == ordinal:
                cmd.exit_code = code


def artifact_dir_for(path: Path, session_id: str) -> str:
    """The path segment that marks this session's agent artifacts: ``/brain/<id>``."""
    return f"/brain/{session_id}"


def record_key(rec: dict[str, Any]) -> tuple[Any, ...]:
    """What makes a step the same step in both files of a session."""
    return (rec.get("step_index"), rec.get("created_at"), rec.get("source"), rec.get("type"))


BRANCH_SPAN = 2**40  # positions of one branch: a later branch's steps come after them all


def branch_position(branch: int, step: int) -> int:
    """Where a step stands in the session: its step_index, after every step of the
    branches before its own (the index orders rows by it; ``why`` finds the
    request an edit answered by it)."""
    if branch == 0:
        return step
    return branch * BRANCH_SPAN + max(0, min(step, BRANCH_SPAN - 1))


def step_checksum(rec: dict[str, Any]) -> int | None:
    """A 63-bit hash of a whole line (its key, content and calls); None for a line
    without step or time. The same line written out twice hashes the same."""
    step, at, source, kind = record_key(rec)
    if step is None or at is None:
        return None
    digest = hashlib.blake2b(digest_size=8)
    digest.update(f"{step}\0{at}\0{source}\0{kind}\0{rec.get('status')}\0".encode())
    content = rec.get("content")
    if isinstance(content, str):
        digest.update(content.encode("utf-8", "surrogatepass"))
    calls = rec.get("tool_calls")
    if calls:
        try:
            digest.update(orjson.dumps(calls))
        except TypeError:
            digest.update(repr(calls).encode("utf-8", "surrogatepass"))
    return int.from_bytes(digest.digest(), "big") >> 1


def extra_records(primary: Path, others: Iterable[Path]) -> list[dict[str, Any]]:
    """The steps of ``others`` (the compact file) that ``primary`` (the full one) lacks.

    The two files of a session can cover different stretches (the full copy
    sometimes only the last part): each step is read once, by ``step_index``
    and ``created_at``, the full file's text preferred. Malformed lines of the
    other file are not counted: the primary's are.
    """
    others = [p for p in others if p != primary]
    if not others:
        return []
    seen: set[tuple[Any, ...]] = set()
    with open_regular(primary) as fh:
        for batch in iter_batches(fh, 0, final=True):
            seen.update(record_key(r) for r in batch.records if r is not None)
    extra: list[dict[str, Any]] = []
    for other in others:
        try:
            fh = open_regular(other)
        except OSError:
            continue
        with fh:
            check_line_count(fh, 0)  # its records are held: bounded like the session's
            for batch in iter_batches(fh, 0, final=True):
                for rec in batch.records:
                    if rec is None or not _well_formed(rec):
                        continue
                    key = record_key(rec)
                    if key not in seen:
                        seen.add(key)
                        extra.append(rec)
    return extra


def parse_transcript(
    path: Path | str,
    session_id: str | None = None,
    root: Path | None = None,
    parts: Iterable[Path] | None = None,
) -> Session:
    """Parse one session into a Session (no index).

    ``path`` is the transcript to read; ``parts`` the other file of the same
    session (``transcript.jsonl`` beside ``transcript_full.jsonl``), whose
    steps ``path`` lacks are read with it. By default the other file beside a
    ``.system_generated/logs/transcript*.jsonl`` is found by itself.
    ``session_id`` defaults to the ``brain/<id>`` directory the file sits in;
    ``root`` (for the project caches) to the directory above ``brain``.
    """
    path = Path(path)
    resolved = path.resolve()
    if session_id is None or root is None:
        dirs = resolved.parts
        if "brain" in dirs:
            i = len(dirs) - 1 - dirs[::-1].index("brain")
            if i + 1 < len(dirs):
                session_id = session_id or dirs[i + 1]
                root = root or Path(*dirs[:i])
        session_id = session_id or path.stem
    others = list(parts) if parts is not None else sibling_transcripts(path)
    reader = SessionReader(transcript=path)
    reader.state.artifact_dir = artifact_dir_for(path, session_id)
    session = Session(session_id=session_id, transcript=str(resolved), source=AGENT)
    with open_regular(path) as fh:
        check_line_count(fh, 0)  # read whole into memory: the record limit first
    extra = extra_records(path, others)
    with open_regular(path) as fh:
        for _, records, spans in with_extras(iter_batches(fh, 0, final=True), extra):
            apply_chunk(session, reader.feed(records, spans))
    st = reader.state
    session.started_at, session.ended_at = st.started_at, st.ended_at
    session.skipped_lines = st.skipped
    session.model = st.model
    session.project = resolve_project(session_id, root, ProjectHints.from_state(st))
    return session
