"""Fuzzing the transcript reader and the incremental index with generated transcripts.

A generated transcript is a list of lines, each built as one kind and labelled
with what the reader must make of it:

- ``user``: a well-formed USER_EXPLICIT record whose (distinct) text must come
  out as a user message, exactly;
- ``command``: a well-formed planner row with a ``run_command`` call whose
  (distinct) command line must come out as a command;
- ``other``: any other well-formed record (assistant text, tool steps, diff
  blocks, write_to_file, SYSTEM, unknown sources and types, wrong JSON types in
  fields the reader does not type-check, deep nesting within the parser's
  limit, huge numbers, enormous content): the reader must not raise;
- ``bad``: a line the reader must skip and count (see ``BAD_KINDS``);
- ``blank``: white space only: neither read nor counted.

What counts as *bad* (``_well_formed`` in ``deja_blame/transcripts/antigravity/reader.py``
and ``decode_line`` in ``jsonl.py``), precisely:

1. not valid JSON: cut off (a proper prefix of a record), garbage, ``NaN``,
   an object followed by more text, nesting deeper than orjson's 1,024 levels;
2. not valid UTF-8 (stray continuation bytes, overlong forms, encoded
   surrogates, a cut multi-byte sequence), or a ``\\ud800`` escape without its
   low half (no UTF-8 text can hold it);
3. valid JSON but not an object (array, string, number, true/false/null);
4. an object whose ``source``, ``type``, ``content``, ``status`` or
   ``created_at`` is present, not null and not a string, or whose
   ``tool_calls`` is present, not null and not a list.

Anything else is read (unknown fields, wrong types in other fields such as
``step_index``, ``exit_code``, a tool call's ``args``) and must not raise.

The generator (``transcripts()``) and the checks (``check_reader``,
``check_incremental``) are shared with ``bench/fuzz.py``, which runs them on
10,000+ transcripts; the suite runs a few hundred.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deja_blame.index.db import connect
from deja_blame.index.ingest import IndexReport, index_transcript
from deja_blame.index.store import load_session
from deja_blame.transcripts.antigravity.reader import parse_transcript
from deja_blame.transcripts.project import shared_directory
from deja_blame.transcripts.text import CONTENT_CAP
from deja_blame.transcripts.transcript_file import TranscriptFile

SESSION = "fuzz-session-0001"

# -- building blocks -------------------------------------------------------------------

# Text with any code point JSON can carry as UTF-8 (no lone surrogates), without the
# characters that would turn a user's words into markup the reader strips ("<" starts
# <USER_REQUEST>/<ADDITIONAL_METADATA>) or into another record (a raw newline is
# escaped by the serialiser anyway). \ue000 is reserved for the invalid-UTF-8 splice.
_free = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="<\ue000"),
    max_size=40,
)
_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_./ ", min_size=0, max_size=20)

_PATHS = [
    "/work/api/src/app.py",
    "/work/api/src/deep/er/x.ts",
    "../../etc/passwd",
    "/etc/passwd",
    "file:///etc/shadow",
    "file://localhost/work/api/a.py",
    "file:///work/api/a%20b.py",
    "file:///work/api/nul%00byte.py",
    "file:///work/api/bad%ff.py",
    "C:\\Users\\u\\shop\\a.py",
    "C:/Users/u/shop/b.py",
    "relative/path.py",
    "/",
    "",
    "/work/api/\x1b[2Jclear.py",
    "/home/u/.gemini/antigravity/brain/fuzz-session-0001/plan.md",
]
_path = st.one_of(st.sampled_from(_PATHS), _word.map(lambda w: "/work/api/" + w))

_TIMES = [
    "2026-07-17T09:00:00Z",
    "2026-07-17T09:00:01.5Z",
    "2026-07-17T12:00:02.123456789+03:00",
    "2026-02-30T00:00:00Z",  # no such day
    "9999-12-31T23:59:59-23:59",  # past the end of datetime once made UTC
    "0001-01-01T00:00:00+23:59",  # before its start
    "2026-07-17 09:00:00",
    "yesterday",
    "",
]
_time = st.one_of(st.none(), st.sampled_from(_TIMES))


def _big_int() -> st.SearchStrategy[Any]:
    """Integers at and past the 64-bit edges, as raw JSON (orjson will not write them)."""
    return st.sampled_from(
        [
            2**63 - 1,
            -(2**63),
            orjson.Fragment(b"9223372036854775808"),
            orjson.Fragment(b"18446744073709551615"),
            orjson.Fragment(b"-9223372036854775809"),
            orjson.Fragment(b"123456789012345678901234567890"),
            orjson.Fragment(b"1e308"),
            orjson.Fragment(b"-0.0"),
        ]
    )


def _deep(depth: int, inner: bytes = b"0") -> orjson.Fragment:
    """``depth`` nested arrays (or objects) as raw JSON: orjson writes at most 255 levels."""
    return orjson.Fragment(b"[" * depth + inner + b"]" * depth)


def _deep_object(depth: int) -> orjson.Fragment:
    return orjson.Fragment(b'{"a":' * depth + b"1" + b"}" * depth)


_json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    _free,
)
_json = st.recursive(
    _json_leaf,
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(_word, kids, max_size=4)),
    max_leaves=12,
)
# a value of the wrong JSON type for a field that must be a string
_not_string = st.one_of(
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(_json_leaf, max_size=3),
    st.dictionaries(_word, _json_leaf, max_size=3),
    _big_int(),
    st.integers(2, 900).map(_deep),
)
# ... and for tool_calls, which must be a list
_not_list = st.one_of(
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    _free,
    st.dictionaries(_word, _json_leaf, max_size=3),
    _big_int(),
)
# anything at all, for the fields the reader reads leniently
_anything = st.one_of(
    _json, _big_int(), st.integers(2, 1000).map(_deep), st.integers(2, 1000).map(_deep_object)
)


def dumps(record: Any) -> bytes:
    return orjson.dumps(record)


def _arg(value: Any, compact: bool) -> Any:
    """A tool-call argument as the file holds it: JSON text in compact transcripts."""
    if not compact:
        return value
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # a raw fragment (deep, huge): keep it native
        return value


@dataclass
class Line:
    data: bytes  # without its newline
    kind: str  # user | command | other | bad | blank
    expect: str | None = None  # the user text or command line that must survive
    bad_kind: str | None = None


@dataclass
class Transcript:
    lines: list[Line]
    compact: bool

    def to_bytes(self) -> bytes:
        return b"".join(line.data + b"\n" for line in self.lines)

    @property
    def bad(self) -> int:
        return sum(1 for line in self.lines if line.kind == "bad")

    def describe(self) -> str:
        return "\n".join(f"{ln.kind:>7} {ln.bad_kind or ''} {ln.data[:160]!r}" for ln in self.lines)


# -- records ---------------------------------------------------------------------------


def _base(draw: st.DrawFn, step: Any, source: Any, type_: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {}
    if step is not _ABSENT:
        rec["step_index"] = step
    if source is not _ABSENT:
        rec["source"] = source
    if type_ is not _ABSENT:
        rec["type"] = type_
    status = draw(st.sampled_from([_ABSENT, "DONE", "RUNNING", "ERROR", "done", None]))
    if status is not _ABSENT:
        rec["status"] = status
    at = draw(_time)
    if at is not None or draw(st.booleans()):
        rec["created_at"] = at
    return rec


_ABSENT = object()


def _step(draw: st.DrawFn, i: int, ordered: bool) -> Any:
    if ordered:
        # non-decreasing: a transcript read in several runs sorts steps per batch only
        return draw(st.sampled_from([i, i, i, _ABSENT, "7", None, 1.5, True]))
    return draw(
        st.one_of(
            st.just(i),
            st.integers(-5, 60),
            st.sampled_from([_ABSENT, "7", None, 1.5, True, [1]]),
            _big_int(),
        )
    )


@st.composite
def user_line(draw: st.DrawFn, i: int, ordered: bool) -> Line:
    text = f"ask {i}: {draw(_free)}".strip()
    shape = draw(st.integers(0, 3))
    if shape == 0:
        content = text
    elif shape == 1:
        content = f"<USER_REQUEST>{text}</USER_REQUEST>"
    elif shape == 2:
        content = (
            f"<USER_REQUEST>\n{text}\n</USER_REQUEST>\n"
            '<ADDITIONAL_METADATA>{"cwd":"/work/api"}</ADDITIONAL_METADATA>\n'
            "<USER_SETTINGS_CHANGE>mode</USER_SETTINGS_CHANGE>"
        )
    else:
        content = (
            "Comments on artifact URI: file:///x/brain/y/plan.md\n"
            f"<USER_REQUEST>{text}</USER_REQUEST>"
        )
    rec = _base(
        draw,
        _step(draw, i, ordered),
        "USER_EXPLICIT",
        draw(st.sampled_from(["USER_INPUT", _ABSENT, None, "SOMETHING_NEW"])),
    )
    rec["content"] = content
    _extra_fields(draw, rec)
    return Line(dumps(rec), "user", expect=text)


@st.composite
def command_line(draw: st.DrawFn, i: int, ordered: bool, compact: bool) -> Line:
    command = f"cmd-{i} {draw(_free)}"
    args: dict[str, Any] = {"CommandLine": _arg(command, compact)}
    if draw(st.booleans()):
        args["Cwd"] = _arg(draw(_path), compact)
    if draw(st.booleans()):
        args["WaitMsBeforeAsync"] = _arg(draw(st.integers(0, 10_000)), compact)
    call_args: Any = args
    if draw(st.integers(0, 4)) == 0:
        call_args = orjson.dumps(args).decode()  # the whole object as one JSON string
    calls: list[Any] = [{"name": "run_command", "args": call_args}]
    calls += draw(st.lists(tool_call(compact), max_size=2))
    calls = draw(st.permutations(calls))
    rec = _base(
        draw,
        _step(draw, i, ordered),
        "MODEL",
        draw(st.sampled_from(["PLANNER_RESPONSE", _ABSENT, None])),
    )
    content = draw(st.one_of(st.just(_ABSENT), st.none(), _free))
    if content is not _ABSENT:
        rec["content"] = content
    rec["tool_calls"] = calls
    _extra_fields(draw, rec)
    return Line(dumps(rec), "command", expect=command)


@st.composite
def tool_call(draw: st.DrawFn, compact: bool) -> Any:
    """Any tool call a planner row may carry, including malformed ones."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.one_of(_json_leaf, st.lists(_json_leaf, max_size=2)))  # not an object
    if kind == 1:
        return {"name": draw(_not_string), "args": {}}
    if kind == 2:  # args nested wrongly
        return {
            "name": draw(st.sampled_from(["run_command", "write_to_file", "view_file"])),
            "args": draw(
                st.one_of(
                    _anything,
                    st.just("{not json"),
                    st.just("[1, 2]"),
                    st.just({"args": {"CommandLine": '"ls"'}}),
                    st.just({"CommandLine": {"nested": ["ls"]}}),
                    st.just({"CommandLine": ["ls", "-l"]}),
                    st.just({"CommandLine": None}),
                    st.just({"CommandLine": 12}),
                )
            ),
        }
    if kind == 3:
        return {"name": "view_file", "args": {"AbsolutePath": _arg(draw(_path), compact)}}
    if kind == 4:
        return {"name": "list_dir", "args": {"DirectoryPath": _arg(draw(_path), compact)}}
    if kind == 5:
        return {
            "name": draw(st.sampled_from(["replace_file_content", "multi_replace_file_content"])),
            "args": {
                "TargetFile": _arg(draw(_path), compact),
                "ReplacementContent": _arg(draw(st.one_of(_free, _anything)), compact),
                "ReplacementChunks": _arg(
                    draw(
                        st.one_of(
                            st.lists(
                                st.fixed_dictionaries({"ReplacementContent": _free}), max_size=3
                            ),
                            _anything,
                        )
                    ),
                    compact,
                ),
            },
        }
    if kind == 6:
        content = draw(
            st.one_of(
                _free,
                _json,
                st.integers(250, 1000).map(_deep),  # deeper than orjson writes
                st.integers(250, 1000).map(_deep_object),
                _big_int(),
                st.just('"cut off\n<truncated 807 bytes>\n'),
            )
        )
        return {
            "name": "write_to_file",
            "args": {
                "TargetFile": _arg(draw(_path), compact),
                "CodeContent": _arg(content, compact),
            },
        }
    if kind == 7:  # a run_command without a usable command line
        return {"name": "run_command", "args": {"CommandLine": _arg(draw(_anything), compact)}}
    if kind == 8:
        return {"name": draw(_word), "args": draw(st.dictionaries(_word, _anything, max_size=3))}
    return {"args": {}}  # no name


def _header(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        return "Created At: 2026-07-17T12:00:03+03:00\nCompleted At: 2026-07-17T12:00:09+03:00\n"
    return ""


@st.composite
def _diff_block(draw: st.DrawFn) -> str:
    lines = []
    if draw(st.booleans()):
        lines += ["--- a/src/app.py", "+++ b/src/app.py"]
    for _ in range(draw(st.integers(0, 3))):
        old = draw(st.one_of(st.integers(0, 500), _BIG_DIGITS))
        new = draw(st.one_of(st.integers(0, 500), _BIG_DIGITS))
        lines.append(f"@@ -{old},2 +{new},3 @@")
        for _ in range(draw(st.integers(0, 4))):
            lines.append(draw(st.sampled_from(["-", "+", " ", ""])) + draw(_free).replace("\n", ""))
    return "[diff_block_start]\n" + "\n".join(lines) + "\n[diff_block_end]"


_BIG_DIGITS = st.sampled_from(
    ["9223372036854775807", "9223372036854775808", "18446744073709551616", "1" + "0" * 5000]
)


@st.composite
def other_line(draw: st.DrawFn, i: int, ordered: bool, compact: bool) -> Line:
    step = _step(draw, i, ordered)
    kind = draw(st.integers(0, 13))
    if kind == 0:  # assistant text, maybe with calls
        rec = _base(draw, step, "MODEL", draw(st.sampled_from(["PLANNER_RESPONSE", _ABSENT])))
        rec["content"] = draw(_free)
        rec["tool_calls"] = draw(st.lists(tool_call(compact), max_size=4))
    elif kind == 1:  # a command step
        rec = _base(draw, step, "MODEL", draw(st.sampled_from(["RUN_COMMAND", "GENERIC"])))
        body = _header(draw)
        if draw(st.booleans()):
            named = draw(_free).split("\n")[0]
            body += f"Task Description: {named}\n"
        body += draw(
            st.sampled_from(
                [
                    "\tThe command exited with code 1.\nOutput:\nFAIL",
                    "The command exited with code 99999999999999999999999.",
                    "The command exited with code -99999999999999999999999.",
                    "The command failed with exit code: 184467440737095516150",
                    "The command exited with code " + "7" * 5000 + ".",
                    "The command completed successfully.",
                    "Tool is running as a background task with task id: 7",
                    "",
                ]
            )
        )
        rec["content"] = body
        if draw(st.booleans()):
            rec["exit_code"] = draw(st.one_of(st.integers(-300, 300), _big_int(), _anything))
    elif kind == 2:  # a file step
        type_ = draw(st.sampled_from(["VIEW_FILE", "LIST_DIRECTORY", "CODE_ACTION"]))
        rec = _base(draw, step, "MODEL", type_)
        path = draw(_path)
        rec["content"] = _header(draw) + draw(
            st.sampled_from(
                [
                    f"File Path: `{path}`\n1: x",
                    f"Viewed file {path}",
                    f"Listed directory {path}",
                    '{"name":"src","isDir":true}\n{"name":"a.py"}',
                    f"Created file {path} with requested content.",
                    f"Created file file://{path} with requested content.\nStatus: DONE",
                    "no path here at all",
                ]
            )
        )
    elif kind == 3:  # an edit: diff blocks
        rec = _base(draw, step, "MODEL", "CODE_ACTION")
        who = draw(st.sampled_from(["the replace_file_content tool", "the USER", "the x tool"]))
        parts = [_header(draw)]
        for _ in range(draw(st.integers(1, 2))):
            parts.append(
                f"The following changes were made by {who} to: {draw(_path)}. If relevant, run tests."
            )
            parts += [draw(_diff_block()) for _ in range(draw(st.integers(0, 2)))]
        rec["content"] = "\n".join(parts)
    elif kind == 4:  # the person's own change
        rec = _base(draw, step, "USER_EXPLICIT", "USER_INPUT")
        rec["content"] = f"The following changes were made by the USER to: {draw(_path)}\n" + draw(
            _diff_block()
        )
    elif kind == 5:  # system chatter
        rec = _base(
            draw,
            step,
            "SYSTEM",
            draw(st.sampled_from(["CHECKPOINT", "SYSTEM_MESSAGE", "CONVERSATION_HISTORY"])),
        )
        if draw(st.booleans()):
            rec["content"] = draw(_free)
    elif kind == 6:  # unknown sources and types
        rec = _base(
            draw,
            step,
            draw(st.one_of(st.sampled_from(["USER_IMPLICIT", "ALIEN", "", _ABSENT, None]), _word)),
            draw(st.one_of(st.sampled_from(["GREP_SEARCH", "TELEPORT", _ABSENT, None]), _word)),
        )
        if draw(st.booleans()):
            rec["content"] = draw(_free)
    elif kind == 7:  # wrong JSON types where the reader is lenient
        odd_step = step if ordered else draw(_anything)
        rec = _base(draw, odd_step, "MODEL", draw(st.sampled_from(["RUN_COMMAND", _ABSENT])))
        rec["exit_code"] = draw(_anything)
        rec["thinking"] = draw(_anything)
        rec["error"] = draw(_anything)
        rec["truncated_fields"] = draw(_anything)
        rec["tool_calls"] = draw(st.lists(_anything, max_size=3))
    elif kind == 8:  # deep nesting within the parser's limit
        rec = _base(draw, step, "MODEL", _ABSENT)
        rec["deep"] = draw(st.integers(100, 1000).map(_deep))
        rec["deeper"] = draw(st.integers(100, 1000).map(_deep_object))
    elif kind == 9:  # an enormous line (content past the 1 MiB cap)
        rec = _base(draw, step, draw(st.sampled_from(["MODEL", "USER_EXPLICIT"])), _ABSENT)
        size = draw(st.integers(CONTENT_CAP - 8, CONTENT_CAP + 300_000))
        unit = draw(st.sampled_from(["x", "é", "€", "😀"]))
        rec["content"] = unit * (size // len(unit.encode()))
    elif kind == 10:  # an empty object
        rec = {}
    elif kind == 11:  # every field null
        rec = dict.fromkeys(
            ["step_index", "source", "type", "status", "created_at", "content", "tool_calls"]
        )
    elif kind == 12:  # a user record without usable text
        rec = _base(draw, step, "USER_EXPLICIT", _ABSENT)
        rec["content"] = draw(
            st.sampled_from(["", "   ", "<USER_REQUEST></USER_REQUEST>", "<ADDITIONAL_METADATA>"])
        )
    else:  # write_to_file then its CODE_ACTION, in one planner row's worth of calls
        rec = _base(draw, step, "MODEL", "PLANNER_RESPONSE")
        rec["tool_calls"] = [draw(tool_call(compact))]
    _extra_fields(draw, rec)
    return Line(dumps(rec), "other")


def _extra_fields(draw: st.DrawFn, rec: dict[str, Any]) -> None:
    if draw(st.integers(0, 3)) == 0:
        rec.update(
            draw(st.dictionaries(st.sampled_from(["x", "y", "meta", "z"]), _anything, max_size=2))
        )


BAD_KINDS = (
    "cut",  # a record cut off (a proper prefix)
    "utf8",  # invalid UTF-8 inside a string
    "surrogate",  # a \ud800 escape without its low half
    "not_object",
    "wrong_type",  # a known field with the wrong JSON type
    "too_deep",  # nesting past orjson's 1,024 levels
    "garbage",
    "nan",
    "trailing",  # an object followed by more text (not for the incremental test)
    "enormous",  # an enormous line that is not JSON
)

_BAD_UTF8 = [
    b"\xff",
    b"\xfe",
    b"\xc0\xaf",
    b"\xed\xa0\x80",
    b"\xe2\x82",
    b"\x80",
    b"\xf5\x80\x80\x80",
]


@st.composite
def bad_line(draw: st.DrawFn, i: int, compact: bool, kinds: tuple[str, ...] = BAD_KINDS) -> Line:
    kind = draw(st.sampled_from(kinds))
    if kind == "cut":
        whole = draw(st.one_of(user_line(i, False), command_line(i, False, compact))).data
        cut = draw(st.integers(1, len(whole) - 1))
        data = whole[:cut]
    elif kind == "utf8":
        rec = {"source": "USER_EXPLICIT", "content": draw(_free) + "\ue000" + draw(_free)}
        data = dumps(rec).replace("\ue000".encode(), draw(st.sampled_from(_BAD_UTF8)))
    elif kind == "surrogate":
        data = b'{"source":"USER_EXPLICIT","content":"half \\ud800 a pair"}'
    elif kind == "not_object":
        data = dumps(draw(st.one_of(st.lists(_json, max_size=3), _json_leaf)))
    elif kind == "wrong_type":
        rec = draw(
            st.sampled_from(
                [
                    {"source": "USER_EXPLICIT", "type": "USER_INPUT", "content": f"ask {i}"},
                    {
                        "source": "MODEL",
                        "content": "running",
                        "tool_calls": [
                            {"name": "run_command", "args": {"CommandLine": f"cmd-{i}"}}
                        ],
                    },
                ]
            )
        )
        rec = {**rec, "status": "DONE", "created_at": "2026-07-17T09:00:00Z"}
        field = draw(
            st.sampled_from(["source", "type", "content", "status", "created_at", "tool_calls"])
        )
        rec[field] = draw(_not_list if field == "tool_calls" else _not_string)
        data = dumps(rec)
    elif kind == "too_deep":
        depth = draw(st.integers(1025, 5000))
        data = dumps({"source": "MODEL", "x": _deep(depth)})
    elif kind == "garbage":
        junk = draw(st.binary(max_size=60)).replace(b"\n", b"")
        data = draw(st.sampled_from([b"#", b"\x00", b"{,", b"<html>", b"]"])) + junk
    elif kind == "nan":
        data = draw(
            st.sampled_from(
                [b'{"source":"MODEL","x":NaN}', b'{"a":Infinity}', b"{'single':'quotes'}"]
            )
        )
    elif kind == "trailing":
        whole = draw(user_line(i, False)).data
        data = whole + draw(st.sampled_from([b" x", b"}", b",{}", b" {}", b"\x00"]))
    else:  # enormous
        size = draw(st.integers(1_100_000, 2_000_000))
        data = b'{"source":"MODEL","content":"' + b"y" * size  # never closed
    return Line(data, "bad", bad_kind=kind)


@st.composite
def transcripts(
    draw: st.DrawFn,
    ordered: bool = False,
    bad_kinds: tuple[str, ...] = BAD_KINDS,
    max_lines: int = 30,
) -> Transcript:
    """A transcript of up to ``max_lines`` lines of every kind, each labelled."""
    compact = draw(st.booleans())
    lines: list[Line] = []
    for i in range(draw(st.integers(0, max_lines))):
        kind = draw(st.sampled_from(["user", "command", "other", "other", "bad", "blank"]))
        if kind == "user":
            lines.append(draw(user_line(i, ordered)))
        elif kind == "command":
            lines.append(draw(command_line(i, ordered, compact)))
        elif kind == "other":
            line = draw(other_line(i, ordered, compact))
            lines.append(line)
        elif kind == "bad":
            lines.append(draw(bad_line(i, compact, bad_kinds)))
        else:
            lines.append(
                Line(draw(st.sampled_from([b"", b" ", b"\t", b"\r", b" \x0b\x0c "])), "blank")
            )
    return Transcript(lines, compact)


# -- the properties ----------------------------------------------------------------------


def write_transcript(base: Path, data: bytes, compact: bool) -> Path:
    name = "transcript.jsonl" if compact else "transcript_full.jsonl"
    path = base / "root" / "brain" / SESSION / ".system_generated" / "logs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path.resolve()


def check_reader(t: Transcript) -> None:
    """The reader never raises, keeps every valid record, counts exactly the bad lines."""
    with tempfile.TemporaryDirectory() as tmp:
        path = write_transcript(Path(tmp), t.to_bytes(), t.compact)
        session = parse_transcript(path)
    assert session.skipped_lines == t.bad, t.describe()
    users = [m.text for m in session.messages if m.role == "user"]
    commands = [c.command for c in session.commands]
    for line in t.lines:
        if line.kind == "user":
            assert line.expect in users, (line.expect, users)
        elif line.kind == "command":
            assert line.expect in commands, (line.expect, commands)
    assert len(users) >= sum(1 for ln in t.lines if ln.kind == "user")
    for m in session.messages:
        assert len(m.text.encode("utf-8")) <= CONTENT_CAP
    # the session document can always be printed (deja parse --json)
    orjson.dumps(session.to_json())


def check_incremental(t: Transcript, cuts: list[int], batch_bytes: int) -> None:
    """Reading the file in several runs, as it grows, gives the one-shot session."""
    data = t.to_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        path = write_transcript(base, b"", t.compact)
        root = base / "root"
        conn = connect(base / "index.db")
        try:
            tf = TranscriptFile(SESSION, path, root.resolve(), "antigravity")
            for cut in [*sorted(cuts), len(data)]:
                path.write_bytes(data[:cut])
                index_transcript(conn, tf, IndexReport(), batch_bytes=batch_bytes)
            held = conn.execute("SELECT 1 FROM sessions WHERE session_id=?", (SESSION,)).fetchone()
            indexed = load_session(conn, SESSION).to_json() if held else None
        finally:
            conn.close()
        whole = parse_transcript(path, session_id=SESSION, root=root.resolve()).to_json()
    if indexed is None:  # no record in it: no session (test_not_a_session)
        assert not any(whole[k] for k in ("messages", "commands", "files", "edits")), t.describe()
        assert all(ln.kind in ("bad", "blank") for ln in t.lines), t.describe()
        return
    assert indexed == whole, t.describe()


FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@FUZZ
@given(transcripts())
def test_reader_never_raises_keeps_valid_records_and_counts_bad_lines(t: Transcript) -> None:
    check_reader(t)


@st.composite
def incremental_case(draw: st.DrawFn) -> tuple[Transcript, list[int], int]:
    # An object followed by more text parses once cut right after the object (a
    # writer that never ends its last line): the one case where a run that sees
    # half the line reads more than a one-shot parse. Real writers never do it.
    kinds = tuple(k for k in BAD_KINDS if k != "trailing")
    t = draw(transcripts(ordered=True, bad_kinds=kinds, max_lines=20))
    size = len(t.to_bytes())
    cuts = draw(st.lists(st.integers(0, size), min_size=1, max_size=4))
    batch_bytes = draw(st.sampled_from([1, 64, 4096, 8 * 1024 * 1024]))
    return t, cuts, batch_bytes


@settings(FUZZ, max_examples=100)
@given(incremental_case())
def test_incremental_index_equals_one_shot_parse(case: tuple[Transcript, list[int], int]) -> None:
    check_incremental(*case)


# The project guess walks down from a too-general directory (a home, ``Users``); on
# paths with empty parts (``/home/``, ``/home//x``) it once found the same directory
# again and looped for ever, hanging the fuzz test above and with it CI.
@FUZZ
@given(
    st.dictionaries(
        st.lists(st.sampled_from(["", "home", "Users", "u", "p", ".gemini", "C:"]), max_size=5).map(
            "/".join
        ),
        st.integers(0, 5),
        max_size=6,
    )
)
def test_shared_directory_always_ends_on_a_directory_the_paths_share(
    counts: dict[str, int],
) -> None:
    guess = shared_directory(counts)
    if guess is not None:
        assert any(d == guess or d.startswith(guess.rstrip("/") + "/") for d in counts if counts[d])


def test_shared_directory_of_a_bare_home_with_an_empty_part_ends() -> None:
    assert shared_directory({"/home/": 1}) == "/home/"
    assert shared_directory({"/home//x": 3, "/home/a/b": 1}) == "/home"
