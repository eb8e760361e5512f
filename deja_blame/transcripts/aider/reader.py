"""Aider's chat history: Markdown that ``aider/io.py`` appends to.

``# aider chat started at 2026-10-02 12:00:00`` opens a chat (local time);
``#### <request>`` is the person's; ``> <line>`` is aider's own output (tool
results: ``> Applied edit to a.py``); every other line is the model's reply.
A reply's SEARCH/REPLACE blocks (the file name on a line before
``<<<<<<< SEARCH``, the old text, ``=======``, the new text, ``>>>>>>> REPLACE``)
were written only when aider said ``Applied edit to <file>`` for that file
before the next request: a block that did not match, or a reply the person
did not apply, is nobody's. Aider places a block where its SEARCH text is, so
the lines that differ between SEARCH and REPLACE are the session's.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from deja_blame.models import Session
from deja_blame.transcripts.builder import SessionBuilder
from deja_blame.transcripts.text import format_time
from deja_blame.transcripts.tool_edits import add_replacement, file_time

AGENT = "aider"
TOOL = "search_replace"
_STARTED = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
_SEARCH = re.compile(r"^<{5,9} SEARCH\s*$")  # <<<<<<< SEARCH
_DIVIDER = re.compile(r"^={5,9}\s*$")  # =======
_REPLACE = re.compile(r"^>{5,9} REPLACE\s*$")  # >>>>>>> REPLACE
_APPLIED = re.compile(r"^Applied edit to (.+?)\s*$")  # > Applied edit to a.py


class _Block:
    def __init__(self, path: str) -> None:
        self.path = path
        self.search: list[str] = []
        self.replace: list[str] = []


def parse_transcript(path: Path | str, session_id: str | None = None) -> Session:
    path = Path(path)
    b = SessionBuilder(session_id or path.stem, str(path.resolve()), AGENT)
    b.cwd = str(path.resolve().parent)  # aider's paths are the repository's, from its top
    text = path.read_bytes().decode("utf-8", "replace")
    at: str | None = None
    reply: list[str] = []
    applied: set[str] = set()

    def end_turn() -> None:
        _reply(b, reply, applied, at)
        reply.clear()
        applied.clear()

    for raw in text.split("\n"):
        line = raw.rstrip("\r")
        started = _STARTED.match(line)
        if started:
            end_turn()
            at = _local_time(started.group(1))
            b.seen_time(at)
        elif line.startswith("#### "):
            end_turn()
            request = line[5:].rstrip()
            if request and not request.startswith("/"):
                b.message("user", request, at)
        elif line.startswith("> ") or line == ">":
            done = _APPLIED.match(line[2:].rstrip())
            if done:
                applied.add(done.group(1).strip().strip("`"))
        else:
            reply.append(line)
    end_turn()
    b.seen_time(file_time(path))
    return b.finish(b.cwd)


def _local_time(text: str) -> str | None:
    """Aider writes the machine's local time, without an offset."""
    try:
        when = dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S").astimezone()
    except ValueError:
        return None
    return format_time(when.astimezone(dt.timezone.utc))


def _reply(b: SessionBuilder, lines: list[str], applied: set[str], at: str | None) -> None:
    words = "\n".join(lines).strip()
    if not words:
        return
    b.message("assistant", words, at)
    for block in _blocks(lines):
        if block.path in applied:
            add_replacement(
                b, block.path, TOOL, "\n".join(block.search), "\n".join(block.replace), at
            )


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
