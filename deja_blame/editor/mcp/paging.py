"""Bounded answers: a size cap per answer and a cursor for the rest.

A cursor is opaque to the client (base64 of the tool, a digest of the question
and where the next page starts); a cursor given with another question, or
edited, is refused rather than guessed at.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import orjson

from deja_blame.errors import DejaError

CURSOR = "cursor"  # MCP's name for where a list goes on (also an agent's name: one place)
MAX_TEXT = 8_000  # characters of text per answer: a few hundred tokens to a model
MAX_FIELD = 1_200  # one request, one reply of the agent's, one command
MAX_ITEMS = 50  # entries of a list per page, whatever their size


def question_key(tool: str, args: dict[str, Any]) -> str:
    asked = {k: v for k, v in args.items() if k != CURSOR}
    digest = hashlib.sha256(orjson.dumps([tool, asked], option=orjson.OPT_SORT_KEYS))
    return digest.hexdigest()[:16]


def make_cursor(tool: str, args: dict[str, Any], offset: int) -> str:
    doc = {"t": tool, "k": question_key(tool, args), "o": offset}
    return base64.urlsafe_b64encode(orjson.dumps(doc)).decode("ascii").rstrip("=")


def read_cursor(tool: str, args: dict[str, Any]) -> int:
    """Where the page the ``cursor`` argument asks for starts (0 without one)."""
    cursor = args.get(CURSOR)
    if cursor is None:
        return 0
    try:
        if not isinstance(cursor, str) or len(cursor) > 200:
            raise ValueError
        doc = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        offset = doc["o"]
        if doc["t"] != tool or doc["k"] != question_key(tool, args) or type(offset) is not int:
            raise ValueError
        if offset < 0:
            raise ValueError
    except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        raise DejaError(
            "the cursor is not one this question's answer gave: ask again without it"
        ) from None
    return offset


def cut(text: str | None, limit: int = MAX_FIELD) -> str | None:
    """``text`` shortened to ``limit`` characters, saying how much was left out."""
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit} more characters]"


def page(items: list[Any], sizes: list[int], offset: int, budget: int = MAX_TEXT) -> int:
    """How many of ``items[offset:]`` fit in ``budget`` characters (at least one)."""
    used = 0
    n = 0
    for size in sizes[offset:]:
        if n and (used + size > budget or n >= MAX_ITEMS):
            break
        used += size
        n += 1
    return n
