"""Aider's chat history: Markdown that ``aider/io.py`` appends to.

``# aider chat started at 2026-10-02 12:00:00`` opens a chat (local time);
``#### <line>`` is what the person typed: a request of several lines is
written one ``#### `` line each (every one but the last ending in two spaces),
so consecutive ``#### `` lines are one request (``<blank>``: an empty one).
``> <line>`` is aider's own output (tool results: ``> Applied edit to a.py``; the
model, ``> Main model: NAME with diff edit format``, ``> Model: NAME ...`` in newer
versions); every other line is the model's reply, but between a chat's start and
its first request (aider's banner, where a ``-m`` text of several lines goes on
without ``> ``).

Input that starts with ``/`` is an in-chat command, not a request (aider takes
any unambiguous prefix of a command's name): ``/add``, ``/drop``, ``/undo``,
``/clear`` ... are nobody's words. ``/run CMD`` (or ``!CMD``) and ``/test CMD``
ran a command (the session's command). ``/ask Q``, ``/code R``, ``/architect R``
send their text as the request in that mode; alone (or ``/chat-mode M``) they
switch the mode for the requests after them. A request in ``ask``, ``help``
or ``context`` mode writes no file: its reply's blocks are never edits.

A reply's SEARCH/REPLACE blocks (the file name on a line before
``<<<<<<< SEARCH``, the old text, ``=======``, the new text, ``>>>>>>> REPLACE``)
were written only when aider said ``Applied edit to <file>`` for that file
before the next request: a block that did not match, or a reply the person
did not apply, is nobody's. Aider places a block where its SEARCH text is, so
the lines that differ between SEARCH and REPLACE are the session's. The other
edit formats, by the same rule: ``udiff`` (a fenced ``diff`` of ``--- a`` /
``+++ b`` and ``@@`` hunks: each hunk's ``-`` and context lines replaced by its
``+`` and context lines) and ``whole`` (the file name on the line before a fence,
the whole new file inside it: every line the session's, as a file written whole).

A ``#### `` line can also be aider's own: a question whose answer an earlier
"(A)ll" or "(S)kip all" gave (``aider/io.py`` logs ``#### Create new file?
(Y)es/(N)o/(A)ll/(S)kip all [Yes]: a`` as if typed). It is no request, and it does
not end the reply it stands in (the edits it asked about are applied after it).

The chat history says when a chat started, not when each request was made: a
chat can last hours, and an edit stamped with its start looks older than a
person's commit made before it (that commit's line of the same text, typed by
the person, then looks the session's). Aider's input history
(``.aider.input.history``, beside the chat history: aider writes both at the
work tree's top) stamps every input: ``# 2026-10-02 12:31:07.123456`` (local
time), then its lines, each after a ``+``. A request is timed by its input there
(the next input, from the chat's start on, with the same text); without one it
keeps the time of the request before it.

A chat recorded on Windows names its files as Windows does (``src\\app.py``), from
the folder the history sits in, wherever it is read now: its backslashes are
folder separators, read as ``/``. A Linux file name can hold a backslash, so this
is only done on the chat's own evidence (``recorded_on_windows``).
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from deja_blame.models import Session
from deja_blame.transcripts.builder import SessionBuilder
from deja_blame.transcripts.reading import read_whole
from deja_blame.transcripts.text import format_time
from deja_blame.transcripts.tool_edits import add_replacement, add_write, file_time

AGENT = "aider"
TOOL = "search_replace"
_STARTED = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
_SEARCH = re.compile(r"^<{5,9} SEARCH\s*$")  # <<<<<<< SEARCH
_DIVIDER = re.compile(r"^={5,9}\s*$")  # =======
_REPLACE = re.compile(r"^>{5,9} REPLACE\s*$")  # >>>>>>> REPLACE
_APPLIED = re.compile(r"^Applied edit to (.+?)\s*$")  # > Applied edit to a.py
# > Main model: claude-3-5-sonnet-20241022 with diff edit format (``Model:`` since 0.8x),
# written as a chat starts and when ``/model`` changes it
_MODEL = re.compile(r"^(?:Main model|Model): (\S+) with ")
# a confirmation aider logs as typed: "... (Y)es/(N)o/(A)ll/(S)kip all [Yes]: a"
_CONFIRMED = re.compile(r"^\S.* \(Y\)es/\(N\)o(?:/\([A-Z]\)[^/\[]+)* \[[^\]]*\]: ?[a-z]?\s*$")
_FENCE = "```"
INPUT_HISTORY = ".aider.input.history"
_TYPED_AT = re.compile(r"^# (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:\.\d+)?\s*$")
INPUT_LOOKAHEAD = 200  # inputs a request's own may be past (typed in another chat since)
# a Windows path with its drive: ``C:\\Users``, after a space, a quote or the line's start
_DRIVE_PATH = re.compile(r"""(?:^|[\s"'`=(])[A-Za-z]:\\[^\\\s]""")


class _Block:
    def __init__(self, path: str) -> None:
        self.path = path
        self.search: list[str] = []
        self.replace: list[str] = []


def parse_transcript(path: Path | str, session_id: str | None = None) -> Session:
    path = Path(path)
    b = SessionBuilder(session_id or path.stem, str(path.resolve()), AGENT)
    b.cwd = str(path.resolve().parent)  # aider's paths are the repository's, from its top
    text = read_whole(path).decode("utf-8", "replace")
    at: str | None = None
    reply: list[str] = []
    applied: set[str] = set()
    typed: list[str] = []  # the ``#### `` lines of the request being read
    chat = _Chat()
    inputs = _Inputs(path.with_name(INPUT_HISTORY))
    windows = recorded_on_windows(text)
    # text before any chat started or request was typed answers nothing: not a
    # reply but a line not read (a file of other bytes under aider's name is no session)
    begun = False
    # between a chat's start and its first request, aider's banner: a line of it
    # that is not ``> `` goes on an argument of the command line (``-m`` text of
    # several lines), not the model's reply
    banner = False

    def end_turn() -> None:
        _reply(b, reply, applied, at, chat.writes, windows)
        reply.clear()
        applied.clear()

    def end_request() -> None:
        nonlocal at
        if typed:
            text = "\n".join(typed).strip()
            at = inputs.time_of(text, at)
            b.seen_time(at)
            chat.request(b, text, at)
            typed.clear()

    for raw in text.split("\n"):
        line = raw.rstrip("\r")
        if not typed and line.startswith("#### ") and _CONFIRMED.match(line[5:]):
            continue  # aider's question, answered for it: no request, no end of the reply
        if line.startswith("#### ") or line == "####":
            begun = True
            banner = False
            if not typed:
                end_turn()
            typed.append(line[5:].rstrip())
            continue
        end_request()
        started = _STARTED.match(line)
        if started:
            begun = True
            end_turn()
            at = _local_time(started.group(1))
            b.seen_time(at)
            inputs.chat_started(at)
            chat.mode = "code"  # a new run of aider starts in its own mode
            banner = True
        elif line.startswith("> ") or line == ">":
            said = line[2:].rstrip()
            done = _APPLIED.match(said)
            if done:
                applied.add(_file(done.group(1).strip().strip("`"), windows))
            model = _MODEL.match(said)
            if model:
                b.session.model = model.group(1)
        elif banner:
            continue  # the banner's argument going on: aider's, read as nothing
        elif begun:
            reply.append(line)
        elif line.strip():
            b.session.skipped_lines += 1  # as a JSON reader counts a line it cannot read
    end_request()
    end_turn()
    b.seen_time(file_time(path))
    return b.finish(b.cwd)


# aider's in-chat commands (``aider/commands.py``), matched by a unique prefix as aider does
COMMANDS = (
    "add", "architect", "ask", "chat-mode", "clear", "code", "commit", "context", "copy",
    "copy-context", "diff", "drop", "edit", "editor", "editor-model", "exit", "git", "help",
    "lint", "load", "ls", "map", "map-refresh", "model", "models", "multiline-mode", "paste",
    "quit", "read-only", "reasoning-effort", "report", "reset", "run", "save", "settings",
    "test", "think-tokens", "tokens", "undo", "voice", "weak-model", "web",
)  # fmt: skip
MODES = ("ask", "code", "architect", "context", "help")
NO_WRITE_MODES = ("ask", "context", "help")  # aider's coders for these edit no file
RUNS = ("run", "test")  # their command line ran


class _Chat:
    """The mode requests are sent in, and whether the current turn may write."""

    def __init__(self) -> None:
        self.mode = "code"
        self.writes = True

    def request(self, b: SessionBuilder, text: str, at: str | None) -> None:
        """One request as the person typed it: words, a command, or a mode switch."""
        if not text or text == "<blank>":
            return
        if text.startswith("!"):  # aider's shorthand for /run
            self.writes = True  # (a failed command's output may go to the model)
            if text[1:].strip():
                b.command(text[1:].strip(), b.cwd, at)
            return
        if not text.startswith("/"):
            self.writes = self.mode not in NO_WRITE_MODES
            b.message("user", text, at)
            return
        name, _, rest = text[1:].partition(" ")
        rest = rest.strip()
        command = _command(name.strip().lower())
        if command in MODES:
            if rest:  # this request in that mode
                self.writes = command not in NO_WRITE_MODES
                b.message("user", rest, at)
            else:  # the requests after it in that mode
                self.mode, self.writes = command, False
            return
        if command == "chat-mode":
            self.mode = rest if rest in MODES else self.mode
            self.writes = False
            return
        if command in RUNS and rest:
            b.command(rest, b.cwd, at)
        # /lint and /test hand their errors to the model, which may fix them (its
        # edits count once applied); /add, /drop, /undo ... get no reply that writes
        self.writes = command in ("lint", "test", "run")


def _command(name: str) -> str | None:
    """The command ``/name`` runs: its full name, or a prefix of exactly one."""
    if name in COMMANDS:
        return name
    matches = [c for c in COMMANDS if c.startswith(name)]
    return matches[0] if len(matches) == 1 else None


class _Inputs:
    """When each request was typed: aider's input history, in order (see the module)."""

    def __init__(self, path: Path) -> None:
        self.entries: list[tuple[str, str]] = []  # (time, text)
        self.next = 0
        try:  # a link or a FIFO is no history (never followed, never waited on)
            data = read_whole(path).decode("utf-8", "replace")
        except OSError:
            return
        at: str | None = None
        lines: list[str] = []
        for raw in data.split("\n"):
            line = raw.rstrip("\r")
            stamp = _TYPED_AT.match(line)
            if stamp:
                self._add(at, lines)
                at, lines = _local_time(stamp.group(1)), []
            elif line.startswith("+"):
                lines.append(line[1:].rstrip())
        self._add(at, lines)

    def _add(self, at: str | None, lines: list[str]) -> None:
        if at is not None and lines:
            self.entries.append((at, "\n".join(lines).strip()))

    def chat_started(self, at: str | None) -> None:
        """Inputs typed before a chat started are an earlier chat's."""
        while at is not None and self.next < len(self.entries) and self.entries[self.next][0] < at:
            self.next += 1

    def time_of(self, text: str, at: str | None) -> str | None:
        """When ``text`` was typed: its input's time, else ``at`` (the time known so far)."""
        for k in range(self.next, min(len(self.entries), self.next + INPUT_LOOKAHEAD)):
            when, typed = self.entries[k]
            if typed == text and (at is None or when >= at):
                self.next = k + 1
                return when
        return at


def recorded_on_windows(text: str) -> bool:
    """Whether aider wrote this chat on Windows, by the chat's own evidence: its lines
    end in CRLF (aider appends to it in text mode, which writes ``\\r\\n`` there), or
    the banner aider writes as a chat starts (the command line it was started with,
    ``> C:\\Users\\bob\\...\\aider.exe --model ...``, its settings) names a drive."""
    lines = text.split("\n")
    ended = [line for line in lines if line]
    if ended and sum(1 for line in ended if line.endswith("\r")) * 2 > len(ended):
        return True
    banner = False
    for line in lines:
        line = line.rstrip("\r")
        if _STARTED.match(line):
            banner = True
        elif banner and line.startswith("> "):
            if _DRIVE_PATH.search(line[2:]):
                return True
        elif line.strip():
            banner = False  # the banner ends at the first line that is not aider's
    return False


def _file(name: str, windows: bool) -> str:
    """A file name as aider wrote it, its folders split as on the machine that wrote it."""
    return name.replace("\\", "/") if windows else name


def _local_time(text: str) -> str | None:
    """Aider writes the machine's local time, without an offset."""
    try:
        when = dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S").astimezone()
    except ValueError:
        return None
    return format_time(when.astimezone(dt.timezone.utc))


def _reply(
    b: SessionBuilder,
    lines: list[str],
    applied: set[str],
    at: str | None,
    writes: bool,
    windows: bool = False,
) -> None:
    words = "\n".join(lines).strip()
    if not words:
        return
    b.message("assistant", words, at)
    if not writes or not applied:
        return
    blocks = _blocks(lines)
    for block in blocks:
        name = _file(block.path, windows)
        if name in applied:
            add_replacement(b, name, TOOL, "\n".join(block.search), "\n".join(block.replace), at)
    if blocks:
        return
    hunks = _diff_hunks(lines)
    for path, old, new in hunks:
        name = _file(path, windows)
        if name in applied:
            add_replacement(b, name, "udiff", old, new, at)
    if hunks:
        return
    for path, content in _whole_files(lines):
        name = _file(path, windows)
        if name in applied:
            add_write(b, name, "whole", content, at)


def _diff_hunks(lines: list[str]) -> list[tuple[str, str, str]]:
    """(file, old text, new text) of each hunk of the reply's fenced ``diff`` blocks
    (aider's udiff format: ``--- a.py``, ``+++ a.py``, ``@@ ... @@``, then lines)."""
    out: list[tuple[str, str, str]] = []
    in_diff = False
    path: str | None = None
    old: list[str] = []
    new: list[str] = []

    def flush() -> None:
        if path is not None and (old or new) and old != new:
            out.append((path, "\n".join(old), "\n".join(new)))
        old.clear()
        new.clear()

    for line in lines:
        if line.startswith(_FENCE):
            if in_diff:
                flush()
                in_diff, path = False, None
            else:
                in_diff = line[3:].strip().lower() == "diff"
            continue
        if not in_diff:
            continue
        if line.startswith("--- "):
            flush()
        elif line.startswith("+++ "):
            name = line[4:].strip()
            path = name[2:] if name.startswith("b/") else name
        elif line.startswith("@@"):
            flush()
        elif line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
        else:
            text = line[1:] if line.startswith(" ") else line
            old.append(text)
            new.append(text)
    flush()
    return out


def _whole_files(lines: list[str]) -> list[tuple[str, str]]:
    """(file, content) of each fenced block with a file name on the line before it
    (aider's whole format, read as ``wholefile_coder.py`` reads it)."""
    out: list[tuple[str, str]] = []
    name: str | None = None
    body: list[str] = []
    inside = False
    for i, line in enumerate(lines):
        if not line.startswith(_FENCE):
            if inside:
                body.append(line)
            continue
        if inside:
            if name:
                out.append((name, "\n".join(body) + "\n"))
            inside, name, body = False, None, []
            continue
        inside = True
        before = lines[i - 1].strip() if i > 0 else ""
        name = before.strip("*").rstrip(":").strip("`").lstrip("#").strip() or None
    return out


def _blocks(lines: list[str]) -> list[_Block]:
    blocks: list[_Block] = []
    last_path: str | None = None
    current: _Block | None = None
    side = ""
    for i, line in enumerate(lines):
        if current is None:
            if _SEARCH.match(line):
                last_path = _file_name(lines[max(0, i - 3) : i]) or last_path
                if last_path is not None:
                    current, side = _Block(last_path), "search"
            continue
        if side == "search" and _DIVIDER.match(line):
            side = "replace"
        elif side == "replace" and _REPLACE.match(line):
            blocks.append(current)
            current = None
        elif side == "search":
            current.search.append(line)
        else:
            current.replace.append(line)
    return blocks


def _file_name(before: list[str]) -> str | None:
    """The file a block edits: the nearest line before it that is not a fence (as aider reads it)."""
    for line in reversed(before):
        name = line.strip()
        if not name or name.startswith("```"):
            continue
        name = name.rstrip(":").strip("`*# ")
        return name or None
    return None
