"""Edits from an agent's file tools, the way most agents record them: a string
replaced (old and new text), a file written whole, a patch in the
``*** Begin Patch`` format (Codex's ``apply_patch``, which Droid and Copilot use
too). The readers decide whether a call took effect; these turn one that did
into ``Edit``s placed as the tool placed them (by content: no line numbers).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import orjson

from deja_blame.models import Edit
from deja_blame.transcripts.builder import SessionBuilder
from deja_blame.transcripts.codex.patch import find_patches, parse_patch
from deja_blame.transcripts.edits import (
    edit_from_hunks,
    patch_hunks,
    replacement_edit,
    whole_file_edit,
)
from deja_blame.transcripts.text import format_time


def file_time(path: Path) -> str | None:
    """The file's modification time, for transcripts that record no times: in whole
    seconds, as every other agent's times are shown (and the index keeps in 4 bytes)."""
    try:
        seconds = int(os.stat(path).st_mtime)  # the second it fell in: never later
        return format_time(dt.datetime.fromtimestamp(seconds, tz=dt.timezone.utc))
    except (OSError, ValueError, OverflowError):
        return None


def epoch_ms_time(value: object) -> str | None:
    """Milliseconds since the epoch as the index's time text."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return None
    try:
        return format_time(dt.datetime.fromtimestamp(value / 1000, tz=dt.timezone.utc))
    except (ValueError, OverflowError, OSError):
        return None


def path_of(value: object) -> str | None:
    """A path as an agent wrote it: plain, or a ``file://`` URI (Windows ones too)."""
    if not isinstance(value, str) or not value.strip():
        return None
    if value.startswith("file://"):
        path = unquote(urlparse(value).path)
        return path or None
    return value


def obj(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (records are untrusted)."""
    return value if isinstance(value, dict) else {}


def array(value: object) -> list[Any]:
    """``value`` when it is a JSON array, else an empty one: ``"edits": 5`` in one
    record is no reason to lose the session (``for e in 5`` raises)."""
    return value if isinstance(value, list) else []


def first_str(args: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return value
    return None


def json_args(raw: object) -> dict[str, Any]:
    """A tool call's arguments: a JSON object, or JSON text of one."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {}
        return doc if isinstance(doc, dict) else {}
    return {}


def add_replacement(
    b: SessionBuilder, path: object, tool: str, old: object, new: object, at: str | None
) -> None:
    """``old`` replaced by ``new`` in ``path``: the lines it changed are the session's."""
    full = b.absolute(path_of(path))
    if full is None or not isinstance(new, str):
        return
    edit = replacement_edit(full, tool, old if isinstance(old, str) else "", new, at)
    if edit is not None:
        b.edit(edit)
    else:
        b.file(full, "edit", at)


def add_replacements(
    b: SessionBuilder,
    path: object,
    tool: str,
    pairs: Iterable[tuple[object, object]],
    at: str | None,
) -> None:
    """Several replacements in one file, one edit (MultiEdit)."""
    full = b.absolute(path_of(path))
    if full is None:
        return
    hunks = []
    for old, new in pairs:
        if isinstance(new, str):
            one = replacement_edit(full, tool, old if isinstance(old, str) else "", new, at)
            if one is not None:
                hunks += one.hunks
    edit = edit_from_hunks(full, tool, hunks, at)
    if edit is not None:
        b.edit(edit)


def add_write(b: SessionBuilder, path: object, tool: str, content: object, at: str | None) -> None:
    """A file written whole: every line is the session's."""
    full = b.absolute(path_of(path))
    if full is None or not isinstance(content, str):
        return
    edit = whole_file_edit(full, tool, content, at)
    if edit is not None:
        b.edit(edit)
    else:
        b.file(full, "edit", at)


def add_patch(b: SessionBuilder, text: object, tool: str, at: str | None) -> None:
    """Every file a ``*** Begin Patch`` text adds or updates (context lines are not written)."""
    if not isinstance(text, str):
        return
    for body in find_patches(text):
        for op in parse_patch(body):
            for edit in _op_edits(b, op.kind, op.path, op.move_to, op.hunks, tool, at):
                b.edit(edit)


def _op_edits(
    b: SessionBuilder,
    kind: str,
    path_text: str,
    move_to: str | None,
    bodies: list[list[str]],
    tool: str,
    at: str | None,
) -> list[Edit]:
    path = b.absolute(path_text)
    if path is None:
        return []
    if kind == "delete":
        b.file(path, "edit", at)
        return []
    target = b.absolute(move_to) if move_to else path
    if target is None:
        return []
    hunks = [h for body in bodies for h in patch_hunks(body, None, None)]
    if kind == "add":
        for h in hunks:
            h.new_start = 1
    edit = edit_from_hunks(target, tool, hunks, at)
    return [edit] if edit is not None else []
