"""The note: one JSON document per commit under ``refs/notes/deja``.

Schema 2 (schema 1 is read as well: the same without the written time)::

    {
      "schema": 2,
      "tool": "deja-blame 0.1.0",
      "commit": "<sha>",
      "files": {
        "src/app.py": {"<session id>": [[10, 12, 0.97, 1784278860], [20, 20, 0.75, 1784279000]]}
      },
      "sessions": {
        "<session id>": {"agent": "antigravity", "project": "/work/api",
                          "started_at": "2026-07-17T09:00:00Z"}
      },
      "derived_from": {"<session key>": 42}
    }

Ranges are 1-based, inclusive, in that commit's version of the file: [start,
end, confidence, written] where every line of the range has that confidence and
was written by the session at that time (epoch seconds; absent when unknown), so
blame read from a note gives the same fields as blame from the index. Paths are repository-relative. Prompt
text (``sessions.<id>.first_prompt``) only when the user opted in
(``git config deja.notes.prompts true``). ``commit`` names the commit the
ranges were computed for: a note git copied to another commit on a rewrite
(``notes.rewriteRef``) still names the old one, so its ranges can be remapped.

``derived_from`` (optional; ``notes/derived_from.py``) says what the note was
computed from: per session that wrote to the commit's files by the commit's
time, a key (a digest of its id: a session that left no line in the commit is
not named) and how many lines it had written there. A reader that does not know
the field ignores it; a note without it was computed from an unknown set.

git may hand us several documents in one note: ``notes.rewriteMode=concatenate``
(the default) joins the notes of squashed commits with a blank line, and a
``union`` notes merge does the same. ``parse_note_docs`` returns each one;
``parse_note`` merges them, the first document winning where two claim a line.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from deja_blame.models import UNKNOWN_AGENT
from deja_blame.notes.public import one_line

# the refs' names: ``notes/refs.py`` (the attribution cache reads them there, without
# loading this module), and here, where the notes' readers import them from
from deja_blame.notes.refs import GITAI_REF as GITAI_REF
from deja_blame.notes.refs import NOTES_REF as NOTES_REF
from deja_blame.pathtext import as_text, text_only

SCHEMA = 2

# path -> session id -> [[start, end, confidence], ...]
Files = dict[str, dict[str, list[list[Any]]]]
# line -> (session id, confidence, written at (epoch seconds) or None), for one file
LineMap = dict[int, tuple[str, float, "int | None"]]
# (first line, last line, session id, confidence, written at or None)
Range = tuple[int, int, str, float, "int | None"]


def ranges_line_map(ranges: list[Range]) -> LineMap:
    """Each line the ranges hold -> the first range's answer for it."""
    out: LineMap = {}
    for start, end, sid, conf, written in ranges:
        for line in range(start, end + 1):
            out.setdefault(line, (sid, conf, written))
    return out


@dataclass
class Note:
    commit: str
    files: Files = field(default_factory=dict)
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    tool: str = ""
    schema: int = SCHEMA
    # session key -> lines it had written to the commit's files by then (None: not said)
    derived_from: dict[str, int] | None = None
    # read and not yet checked (``parse_note_docs(..., derived=False)``: blame reads
    # hundreds of notes and needs few of these): ``recorded_from`` checks it
    raw_derived_from: Any = field(default=None, repr=False, compare=False)

    def recorded_from(self) -> dict[str, int] | None:
        """``derived_from``, checked now if it was read unchecked."""
        if self.derived_from is None and self.raw_derived_from is not None:
            self.derived_from = _derived_from(self.raw_derived_from)
            self.raw_derived_from = None
        return self.derived_from

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema": self.schema,
            "tool": self.tool,
            "commit": self.commit,
            "files": self.files,
            "sessions": self.sessions,
        }
        if self.derived_from is not None:
            out["derived_from"] = dict(sorted(self.derived_from.items()))
        return out

    def dumps(self) -> str:
        """The note's text: sorted, one line per file's session and per session (diffable)."""

        def j(value: Any) -> str:
            # a file name that is not UTF-8 goes as pathtext.as_text (its lookup too)
            return orjson.dumps(text_only(value), option=orjson.OPT_SORT_KEYS).decode()

        files = []
        for path in sorted(self.files):
            per = self.files[path]
            inner = ",\n".join(f"      {j(sid)}: {j(per[sid])}" for sid in sorted(per))
            files.append(f"    {j(path)}: {{\n{inner}\n    }}")
        sessions = [f"    {j(sid)}: {j(self.sessions[sid])}" for sid in sorted(self.sessions)]
        files_text = "{\n" + ",\n".join(files) + "\n  }" if files else "{}"
        sessions_text = "{\n" + ",\n".join(sessions) + "\n  }" if sessions else "{}"
        derived = ""
        if self.derived_from is not None:
            derived = f',\n  "derived_from": {j(self.derived_from)}'
        return (
            "{\n"
            f'  "schema": {self.schema},\n'
            f'  "tool": {j(self.tool)},\n'
            f'  "commit": {j(self.commit)},\n'
            f'  "files": {files_text},\n'
            f'  "sessions": {sessions_text}'
            f"{derived}\n"
            "}\n"
        )

    def is_empty(self) -> bool:
        return not any(self.files.values())

    def session_at(self, path: str, line: int) -> tuple[str, float, int | None] | None:
        for sid, ranges in (self.files.get(path) or self.files.get(as_text(path)) or {}).items():
            for r in ranges:
                if int(r[0]) <= line <= int(r[1]):
                    return sid, float(r[2]) if len(r) > 2 else 1.0, _written(r)
        return None

    def line_map(self, path: str) -> LineMap:
        """Every attributed line of ``path``: line -> (session, confidence, written)."""
        return ranges_line_map(self.ranges_of(path))

    def ranges_of(self, path: str) -> list[Range]:
        """``path``'s ranges as (start, end, session, confidence, written), in the
        order they claim a line (the first that holds it, ``ranges_line_map``): what a
        reader asking a few lines of many notes bisects instead of expanding each."""
        out = []
        for sid, ranges in sorted(self.files.get(path, {}).items()):
            for r in ranges:
                conf = float(r[2]) if len(r) > 2 else 1.0
                out.append((int(r[0]), int(r[1]), sid, conf, _written(r)))
        return out

    def line_count(self) -> int:
        return sum(len(self.line_map(p)) for p in self.files)

    def same_content(self, other: Note | None) -> bool:
        """Same attribution (files, sessions, commit); the tool version does not count."""
        if other is None:
            return False
        return (
            self.commit == other.commit
            and normalise_files(self.files) == normalise_files(other.files)
            and self.sessions == other.sessions
        )


def set_lines(note: Note, path: str, lines: LineMap) -> None:
    """Replace ``path``'s ranges in ``note`` by ``lines`` (dropping the file when empty)."""
    per: dict[str, list[tuple[int, float, int | None]]] = {}
    for line, (sid, conf, written) in lines.items():
        per.setdefault(sid, []).append((line, conf, written))
    if per:
        note.files[path] = {sid: ranges_of(v) for sid, v in sorted(per.items())}
    else:
        note.files.pop(path, None)


def normalise_files(files: Files) -> Files:
    """The canonical form of ``files``: one range list per session, sorted, merged."""
    probe = Note(commit="", files=files)
    out: Files = {}
    for path in sorted(files):
        lines = probe.line_map(path)
        if lines:
            tmp = Note(commit="")
            set_lines(tmp, path, lines)
            out[path] = tmp.files[path]
    return out


def merge_notes(
    notes: Iterable[Note | None], commit: str | None = None, tool: str | None = None
) -> Note:
    """Union of ``notes`` per file and session; for a line claimed twice the earlier note wins.

    Session details come from the first note that has them, with fields it
    leaves empty filled from later ones. Only sessions that keep a line stay.
    """
    present = [n for n in notes if n is not None]
    first = present[0] if present else None
    merged = Note(
        commit=commit if commit is not None else (first.commit if first else ""),
        tool=tool if tool is not None else (first.tool if first else ""),
    )
    paths: list[str] = []
    for n in present:
        paths.extend(p for p in n.files if p not in paths)
    for path in sorted(paths):
        lines: LineMap = {}
        for n in reversed(present):  # later notes first, so earlier ones overwrite
            lines.update(n.line_map(path))
        set_lines(merged, path, lines)
    used = {sid for per in merged.files.values() for sid in per}
    for n in present:
        for sid, info in n.sessions.items():
            if sid not in used:
                continue
            have = merged.sessions.setdefault(sid, {})
            for key, value in info.items():
                if have.get(key) in (None, "", "-") and value not in (None, ""):
                    have[key] = value
                else:
                    have.setdefault(key, value)
    for sid in used:
        merged.sessions.setdefault(
            sid, {"agent": UNKNOWN_AGENT, "project": "-", "started_at": None}
        )
    merged.sessions = dict(sorted(merged.sessions.items()))
    return merged


# Notes arrive from teammates and forks: input from strangers. A range, a session
# id or a string that no deja writes is dropped, never trusted to size a loop.
MAX_LINE = 10_000_000  # no source file has more lines
MAX_NOTE_LINES = 2_000_000  # lines one note may claim in all
MAX_RANGES = 100_000
MAX_PATH = 4096
MAX_TEXT = 4096
MAX_NOTE_BYTES = 16 * 1024 * 1024  # deja's largest notes are a few hundred KB
_SESSION_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:")


def _good_session_id(sid: Any) -> bool:
    return isinstance(sid, str) and 0 < len(sid) <= 128 and set(sid) <= _SESSION_ID_CHARS


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _good_range(r: Any) -> list[Any] | None:
    """[start, end, confidence(, written)] with sane values, or None."""
    if not isinstance(r, list) or len(r) < 2:
        return None
    for x in r[:4]:  # _number, inline: blame checks every range of hundreds of notes
        kind = type(x)
        if kind is not int and not (kind is float and math.isfinite(x)):
            return None
    start, end = int(r[0]), int(r[1])
    if not 1 <= start <= end <= MAX_LINE:
        return None
    out: list[Any] = [start, end]
    if len(r) > 2:
        out.append(min(1.0, max(0.0, float(r[2]))))
    if len(r) > 3 and 0 < int(r[3]) < 32_503_680_000:  # 1970 .. 3000, whole seconds
        out.append(int(r[3]))
    return out


def _clean_info(info: dict[Any, Any]) -> dict[str, Any]:
    """A session's details: plain strings (capped, no control characters) and nulls.

    Escape sequences go whole first, by the function every output cleans a
    transcript's text with (``escape.inert``): a request read from a note then
    shows as the same request read from its transcript, not with the ``[31m`` an
    escape sequence leaves when only its ESC byte is dropped."""
    from deja_blame.outputs.escape import inert

    out: dict[str, Any] = {}
    for key, value in list(info.items())[:32]:
        if not isinstance(key, str) or len(key) > 64:
            continue
        if isinstance(value, str):
            text = inert(value[:MAX_TEXT])
            if key != "first_prompt":  # printed on one line: a newline would forge another
                out[key] = one_line(text)
            else:
                out[key] = "".join(ch for ch in text if ch.isprintable() or ch in "\n\t")
        elif value is None or isinstance(value, bool) or _number(value):
            out[key] = value
    return out


MAX_FOREIGN_LINES = 10_000  # another tool's lines kept in one note
# A document tried at a line that fails past that line cost the text it read: lines of
# nested openings ('{"a":' a line, 1 MB of them) cost seconds a MB when each line is
# tried again. After this many such failures the note's other lines are text, its
# documents so far kept: deja's own notes fail past a line only where one is damaged.
MAX_OVERRUNS = 16


# The start of a document deja wrote (``Note.dumps``, and schema 1's), however spaced:
# a text that starts so and does not parse is deja's own note, damaged (cut short,
# edited), not another tool's lines
_DEJA_START = re.compile(r'\{\s*"schema"\s*:\s*\d+\s*,\s*"tool"\s*:\s*"deja-blame')
_BLANK_LINE = re.compile(r"\n[ \t\r]*\n")


@dataclass
class NoteParts:
    """A note's text, read: deja's JSON documents in order, another tool's lines (kept,
    as they were, for writing back), and deja documents that do not parse (damaged:
    skipped, and not written back: a note deja writes replaces them)."""

    docs: list[Any]
    foreign: list[str]
    damaged: list[str]


def note_parts(text: str) -> NoteParts:
    """A note's text -> its parts (``NoteParts``).

    git concatenates notes (a squash, a ``union`` merge), and other tools write
    to the same ref: deja-vu appends plain lines (``deja: <file>:<line> written
    in <harness> · <id> · <project> (rule: wrote)``). deja's JSON is read
    wherever it stands; every other line is kept. A damaged deja document runs
    from its start to the next blank line (git joins documents with one) or the end."""
    decoder = json.JSONDecoder()
    parts = NoteParts([], [], [])
    pos, end = 0, len(text)
    overrun = 0  # attempts that failed past their own line
    while True:
        while pos < end and text[pos].isspace():
            pos += 1
        if pos >= end:
            return parts
        if text[pos] == "{":
            if overrun < MAX_OVERRUNS:
                try:
                    doc, pos = decoder.raw_decode(text, pos)
                    parts.docs.append(doc)
                    continue
                except json.JSONDecodeError as error:
                    # not JSON after all: a line of text
                    eol = text.find("\n", pos)
                    overrun += 0 <= eol < error.pos
                except (ValueError, RecursionError):
                    overrun += 1  # nested deeper than any note: a line of text
            if _DEJA_START.match(text, pos):
                blank = _BLANK_LINE.search(text, pos)
                stop = end if blank is None else blank.start()
                parts.damaged.append(text[pos:stop][:MAX_TEXT])
                pos = stop
                continue
        eol = text.find("\n", pos)
        eol = end if eol < 0 else eol
        if len(parts.foreign) < MAX_FOREIGN_LINES:
            parts.foreign.append(text[pos:eol].rstrip()[:MAX_TEXT])
        pos = eol + 1


def split_note(text: str) -> tuple[list[Any], list[str]]:
    """A note's text -> (the JSON documents in it, in order; another tool's lines):
    ``note_parts`` without the damaged deja documents."""
    parts = note_parts(text)
    return parts.docs, parts.foreign


def with_foreign(text: str, foreign: list[str]) -> str:
    """A note's new text: the other tools' lines first, as they were, then deja's JSON."""
    if not foreign:
        return text
    return "\n".join(foreign) + "\n\n" + text


def parse_note_docs(text: str | bytes, derived: bool = True) -> list[Note]:
    """Each deja document in a note's text (usually one), in order; ``derived=False``
    leaves ``derived_from`` unchecked until ``Note.recorded_from`` asks."""
    if len(text) > MAX_NOTE_BYTES:
        return []  # not one deja wrote: decoding it would cost memory, not give lines
    try:
        docs = [orjson.loads(text)]
    except orjson.JSONDecodeError:
        raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        docs = split_note(raw)[0]
    out = []
    for doc in docs:
        note = _note_of(doc, derived)
        if note is not None:
            out.append(note)
    return out


def parse_note(text: str | bytes) -> Note | None:
    """A note's text -> Note, or None when it is not a deja note we can read.

    Several concatenated documents are merged, the first one winning where two
    claim the same line.
    """
    docs = parse_note_docs(text)
    if not docs:
        return None
    if len(docs) == 1:
        return docs[0]
    return merge_notes(docs)


def _note_of(doc: Any, derived: bool = True) -> Note | None:
    if not isinstance(doc, dict) or not isinstance(doc.get("schema"), int):
        return None
    if doc["schema"] > SCHEMA:
        return None  # written by a newer deja: leave it alone
    files = doc.get("files") if isinstance(doc.get("files"), dict) else {}
    clean: Files = {}
    budget = MAX_NOTE_LINES
    for path, per in (files or {}).items():
        if not isinstance(per, dict) or not isinstance(path, str) or len(path) > MAX_PATH:
            continue
        for sid, ranges in per.items():
            if not isinstance(ranges, list) or not _good_session_id(sid):
                continue
            good = []
            for r in ranges[:MAX_RANGES]:
                r = _good_range(r)
                if r is None:
                    continue
                budget -= r[1] - r[0] + 1
                if budget < 0:
                    break  # a note naming more lines than any commit has: the rest is noise
                good.append(r)
            if good:
                clean.setdefault(path, {})[sid] = good
    sessions = doc.get("sessions") if isinstance(doc.get("sessions"), dict) else {}
    return Note(
        derived_from=_derived_from(doc.get("derived_from")) if derived else None,
        raw_derived_from=None if derived else doc.get("derived_from"),
        commit=str(doc.get("commit", ""))[:80],
        files=clean,
        sessions={
            k: _clean_info(v)
            for k, v in list((sessions or {}).items())[:MAX_RANGES]
            if _good_session_id(k) and isinstance(v, dict)
        },
        tool=str(doc.get("tool", "")),
        schema=int(doc["schema"]),
    )


MAX_DERIVED_FROM = 10_000  # sessions one note may say it was computed from


def _derived_from(value: Any) -> dict[str, int] | None:
    """A note's ``derived_from``: session key -> lines written (absent or unreadable: None).
    Keys are short hex digests; counts whole and sane (input from strangers). A note
    of a file a thousand sessions wrote names them all, and blame reads hundreds of
    notes: the check is one comprehension, not a call per field."""
    if not isinstance(value, dict):
        return None
    items = list(value.items())[:MAX_DERIVED_FROM]
    if _all_good(items):  # deja's own notes: one pass in C, not a check per entry
        return dict(items)
    good = _HEX_KEY.fullmatch
    return {
        key: int(count)
        for key, count in items
        if type(key) is str
        and good(key)
        and (type(count) is int or (type(count) is float and math.isfinite(count)))
        and 0 <= count <= MAX_COUNT
    }


MAX_COUNT = MAX_NOTE_LINES * 1000
_HEX_KEY = re.compile(r"[0-9a-f]{1,64}")
_HEX_KEYS = re.compile(r"(?:[0-9a-f]{1,64}\n)*")


def _all_good(items: list[tuple[Any, Any]]) -> bool:
    """Every key a hex string and every count a whole number in range (what the
    per-entry check below keeps), told by one regular expression over the keys and
    C-level passes over the counts: a note of a file 10,000 sessions wrote names them all."""
    if not items:
        return True
    keys = [k for k, _ in items]
    counts = [v for _, v in items]
    if set(map(type, keys)) != {str} or set(map(type, counts)) != {int}:
        return False
    joined = "\n".join(keys) + "\n"
    return (
        joined.count("\n") == len(keys)  # no key holds a newline of its own
        and _HEX_KEYS.fullmatch(joined) is not None
        and 0 <= min(counts)
        and max(counts) <= MAX_COUNT
    )


def _written(r: list[Any]) -> int | None:
    """A range's written time (schema 2), or None."""
    if len(r) > 3 and isinstance(r[3], (int, float)) and not isinstance(r[3], bool):
        return int(r[3])
    return None


def _line_of(item: tuple[Any, ...]) -> int:
    return int(item[0])


def ranges_of(lines: Iterable[tuple[Any, ...]]) -> list[list[Any]]:
    """Sorted (line, confidence[, written]) -> [[start, end, confidence(, written)], ...]:
    runs of consecutive lines with the same confidence and written time."""
    out: list[list[Any]] = []
    for item in sorted(lines, key=_line_of):
        line, conf = int(item[0]), round(float(item[1] or 0.0), 2)
        written = item[2] if len(item) > 2 else None
        last = out[-1] if out else None
        if (
            last is not None
            and last[1] == line - 1
            and last[2] == conf
            and (last[3] if len(last) > 3 else None) == written
        ):
            last[1] = line
            continue
        out.append([int(line), int(line), conf] + ([int(written)] if written is not None else []))
    return out
