"""The one way deja prints JSON: orjson, indented, newline-terminated, on stdout."""

from __future__ import annotations

import re
import sys
from typing import Any

import orjson

_OPTS = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS


# C1 controls and the bidirectional controls, as UTF-8: orjson writes them raw, and a
# terminal or a viewer acts on them. In JSON they can only be inside strings, where
# a \uXXXX escape is the same text to any parser.
# (U+0080-009F, U+061C, U+200E-200F, U+2028-202E, U+2066-2069)
_UNSAFE = re.compile(rb"\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]")

# What every match above starts with: a document without any needs no regex pass (the
# pass took 9 ms of a warm blame's JSON, for one accented letter in a session's prompt)
_LEADS = (b"\xc2", b"\xd8\x9c", b"\xe2\x80", b"\xe2\x81")


def _escape(m: re.Match[bytes]) -> bytes:
    return b"\\u%04x" % ord(m.group().decode())


def dumps(doc: Any) -> bytes:
    try:
        data = orjson.dumps(doc, option=_OPTS)
    except TypeError:
        # a file name that is not UTF-8 (pathtext): its other bytes as \xNN
        from deja_blame.pathtext import text_only

        data = orjson.dumps(text_only(doc), option=_OPTS)
    if not any(lead in data for lead in _LEADS):  # a byte search each, not a regex scan
        return data + b"\n"
    return _UNSAFE.sub(_escape, data) + b"\n"


def print_json(doc: Any) -> None:
    sys.stdout.buffer.write(dumps(doc))
    sys.stdout.flush()
