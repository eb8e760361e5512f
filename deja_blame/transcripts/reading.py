"""What a reader hands the index: the rows one batch of a transcript added
(``Chunk``) and the state the next batch goes on from (``ReaderState``).

Every agent's reader speaks these; the index writes them without knowing which
agent's transcript they came from.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field, fields
from typing import IO, Any

import orjson

from deja_blame.models import Command, Edit, FileRecord, Message

# A transcript read whole (one JSON document, Aider's Markdown, a JSON Lines file a
# reader keeps in memory) larger than this is not read: one line says so. Decoded,
# a transcript takes several times its size (Python objects, the session built
# from it): 64 MB keeps the worst well under 2 GB, and is ten times the largest
# session file of any agent seen in the wild. DEJA_MAX_TRANSCRIPT_MB moves it.
MAX_TRANSCRIPT_ENV = "DEJA_MAX_TRANSCRIPT_MB"
DEFAULT_MAX_TRANSCRIPT_MB = 64
# A transcript of more records than this (JSON Lines lines; a document's JSON
# objects and arrays; a session's messages, commands, files and edits) is not
# read either: under the byte limit a file of tiny records still makes millions
# of Python objects (1,000,000 one-line messages: 62 s and 245 MB to index; a
# 60 MB line of empty objects alone decodes to 1.9 GB). Real long sessions hold
# 7,000-10,000 records in 15 MB (Claude Code); a 64 MB one about 60,000.
# DEJA_MAX_TRANSCRIPT_RECORDS moves it.
MAX_RECORDS_ENV = "DEJA_MAX_TRANSCRIPT_RECORDS"
DEFAULT_MAX_RECORDS = 250_000
_COUNT_BLOCK = 1 << 20
# A record's JSON objects and arrays, at most, on average: a real Claude Code line
# holds 10-30, a message of a Gemini CLI document fewer; 8 a record over a whole
# transcript, 2,000,000 at the default limit, decode to about 200 MB.
CONTAINERS_PER_RECORD = 8

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)


class IncompleteTranscript(OSError):
    """A transcript that cannot be read as it stands now: a JSON document its agent is
    still writing (or rewriting), a database it holds locked. The index skips it this
    run, keeps what it holds of the session, and reads it once it is complete."""


class Skipped(OSError):
    """A transcript deja will not read, and why (``strerror``: what the index's
    ``cannot read PATH: WHY`` line says)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.strerror = why


class NotARegularFile(Skipped):
    """A transcript's name that is a symbolic link, a FIFO, a device or a socket: never
    read (a link copies whatever it points at into the index, a FIFO's read never
    returns, ``/dev/zero``'s never ends)."""


class MalformedTranscript(Skipped):
    """A transcript its reader cannot make sense of: skipped and counted, never a crash."""


class TooLarge(Skipped):
    """A transcript past deja's byte or record limit: skipped whole, with one line."""


def max_transcript_bytes() -> int:
    """The byte limit of a transcript read whole (``DEJA_MAX_TRANSCRIPT_MB``)."""
    text = os.environ.get(MAX_TRANSCRIPT_ENV, "").strip()
    mb = int(text) if text.isdigit() and int(text) > 0 else DEFAULT_MAX_TRANSCRIPT_MB
    return mb << 20


def max_transcript_records() -> int:
    """The record limit of a transcript (``DEJA_MAX_TRANSCRIPT_RECORDS``)."""
    text = os.environ.get(MAX_RECORDS_ENV, "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else DEFAULT_MAX_RECORDS


def too_many(limit: int) -> TooLarge:
    records = "record" if limit == 1 else "records"
    return TooLarge(f"more than {limit:,} {records}: skipped (the limit: {MAX_RECORDS_ENV})")


def check_line_count(fh: IO[bytes], start: int, already: int = 0) -> None:
    """TooLarge when the lines of ``fh`` from ``start`` and the ``already`` records read
    before it pass the record limit: counted a block at a time (newlines only, no
    decoding), before any is read; the position is left where it was."""
    limit = max_transcript_records()
    if os.fstat(fh.fileno()).st_size - start + already <= limit:
        return  # fewer bytes than the limit: fewer lines too
    where = fh.tell()
    fh.seek(start)
    count = already
    try:
        while count <= limit:
            block = fh.read(_COUNT_BLOCK)
            if not block:
                return
            count += block.count(b"\n")
        raise too_many(limit)
    finally:
        fh.seek(where)


def too_many_containers(data: bytes | str) -> bool:
    """Whether a JSON text holds more objects and arrays than a transcript may
    (``CONTAINERS_PER_RECORD`` to a record of the limit): each decodes to a Python
    object of about 100 bytes, so 60 MB of empty objects would take 1.9 GB.
    Counted on the bytes, before decoding (brackets inside strings too: an upper
    bound); a text shorter than the limit cannot pass it."""
    cap = max_transcript_records() * CONTAINERS_PER_RECORD
    if len(data) <= cap:
        return False
    if isinstance(data, str):
        return data.count("{") + data.count("[") > cap
    return data.count(b"{") + data.count(b"[") > cap


def check_containers(data: bytes) -> None:
    """TooLarge when the JSON document ``data`` passes the record limit (``too_many_containers``)."""
    if too_many_containers(data):
        raise too_many(max_transcript_records())


# The buffer of a handle whose lines are read one after another: a transcript's lines
# run to kilobytes (a tool's result), and io's 8 KB made reading them by lines cost
# twice what it does with 1 MB (Claude Code's 351 MB: 0.19 against 0.09 s of CPU).
LINES_BUFFER = 1 << 20


def open_regular(path: str | bytes | os.PathLike[str], buffering: int = -1) -> IO[bytes]:
    """``path`` opened for reading when it is a regular file, not through a link (its
    last name) and without waiting on a FIFO; NotARegularFile otherwise. ``buffering``
    as ``open`` takes it (``LINES_BUFFER`` for a handle read line after line)."""
    fd = None
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC | _BINARY)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotARegularFile("not a regular file (a FIFO, a device?): skipped")
        if _NONBLOCK:
            os.set_blocking(fd, True)
        fh = os.fdopen(fd, "rb", buffering)
        fd = None
        return fh
    except OSError as exc:
        if isinstance(exc, NotARegularFile):
            raise
        if _NOFOLLOW and exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link
            raise NotARegularFile("a symbolic link: skipped (deja never follows one)") from None
        raise
    finally:
        if fd is not None:
            os.close(fd)


def too_large(limit: int) -> TooLarge:
    return TooLarge(f"larger than {limit >> 20} MB: skipped (the limit: {MAX_TRANSCRIPT_ENV})")


def read_whole(path: str | os.PathLike[str], max_bytes: int | None = None) -> bytes:
    """A regular file's bytes, whole; TooLarge past ``max_bytes`` (the transcript limit)."""
    limit = max_transcript_bytes() if max_bytes is None else max_bytes
    with open_regular(path) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise too_large(limit)
    return data


def load_document(path: str | os.PathLike[str], max_bytes: int | None = None) -> Any:
    """The JSON document in ``path``, whole. Not (yet) one complete JSON value (empty,
    cut short, being rewritten): IncompleteTranscript. Larger than ``max_bytes``
    (the transcript limit), or not a regular file: an OSError (a problem the index
    reports; the session is not read)."""
    data = read_whole(path, max_bytes)
    check_containers(data)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        raise IncompleteTranscript(
            f"{os.fspath(path)}: not a complete JSON document (still being written?)"
        ) from None


@dataclass
class ReaderState:
    started_at: str | None = None  # the earliest time seen
    ended_at: str | None = None  # the latest
    started_epoch: float | None = None
    ended_epoch: float | None = None
    skipped: int = 0
    last_step: int = -1
    # Rewinds: a USER_INPUT or CHECKPOINT whose step_index is below the highest
    # seen and whose time is later than any seen starts a new branch, whose
    # steps (their numbers repeat) come after the earlier branch's
    branch: int = 0
    top_step: int = -1  # the highest step_index of this branch
    top_epoch: float | None = None  # the latest time read, in file order
    # the lines read (a 63-bit hash of each): a line a file holds twice (a client
    # wrote the same lines out again) is read once
    seen_steps: list[int] = field(default_factory=list)
    n_messages: int = 0
    n_commands: int = 0
    n_files: int = 0
    n_edits: int = 0
    planner_calls: list[dict[str, Any]] = field(default_factory=list)
    # write_to_file calls waiting for a CODE_ACTION with status DONE: path -> call
    pending_writes: dict[str, dict[str, Any]] = field(default_factory=dict)
    # replace_file_content witnesses waiting for their diff block: path -> lines
    pending_witness: dict[str, list[str]] = field(default_factory=dict)
    pending_list_dir: str | None = None
    touched_dir: str | None = None
    first_cwd: str | None = None
    # what the project guess weighs (project.ProjectHints): directory -> edits
    # there, commands run there, files looked at there (agent places left out)
    edit_dirs: dict[str, int] = field(default_factory=dict)
    cwds: dict[str, int] = field(default_factory=dict)
    file_dirs: dict[str, int] = field(default_factory=dict)
    # "/brain/<id>": paths with this segment are the agent's artifacts (plans,
    # task lists), never the project, whatever root precedes it (the transcript
    # may have been recorded on another machine or copied elsewhere)
    artifact_dir: str | None = None
    # the latest "Model Selection" the person made (read before the block is stripped)
    model: str | None = None
    # another agent's reader state (Claude Code, Codex), where the index reads on from it
    other: dict[str, Any] | None = None
    # the agent's ``reader_version`` that read it (0: a reader from before versions)
    reader_version: int = 0

    def to_bytes(self) -> bytes:
        # The fields' values are JSON already (lists, dicts, text, numbers): a dict of
        # them dumps the same bytes as dataclasses.asdict, without its deep copy of
        # every nested value (a third of reading a small transcript).
        return orjson.dumps({name: getattr(self, name) for name in _STATE_FIELDS})

    @classmethod
    def from_bytes(cls, data: bytes | None) -> ReaderState:
        if not data:
            return cls()
        return cls(**orjson.loads(data))


_STATE_FIELDS = tuple(f.name for f in fields(ReaderState))


@dataclass
class Chunk:
    """What one batch of lines added to a session (plus exit codes for earlier commands)."""

    messages: list[tuple[int, Message]] = field(default_factory=list)  # (step, message)
    commands: list[tuple[int, Command]] = field(default_factory=list)
    files: list[tuple[int, FileRecord]] = field(default_factory=list)
    edits: list[tuple[int, Edit]] = field(default_factory=list)
    # exit codes (and statuses) for commands of this or an earlier chunk, by ordinal
    exit_patches: dict[int, int] = field(default_factory=dict)
    # step statuses (DONE, RUNNING = sent to the background, ERROR) likewise
    status_patches: dict[int, str] = field(default_factory=dict)
    skipped: int = 0
