"""The one way deja prints JSON: orjson, indented, newline-terminated, on stdout."""

from __future__ import annotations

import sys
from typing import Any

import orjson

_OPTS = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS


def dumps(doc: Any) -> bytes:
    return orjson.dumps(doc, option=_OPTS) + b"\n"


def print_json(doc: Any) -> None:
    sys.stdout.buffer.write(dumps(doc))
    sys.stdout.flush()
