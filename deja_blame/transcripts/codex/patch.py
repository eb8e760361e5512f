"""Codex's ``apply_patch`` language: ``*** Begin Patch`` ... ``*** End Patch``.

File operations: ``*** Add File: P`` (every line after it a ``+`` line),
``*** Delete File: P``, ``*** Update File: P`` with an optional
``*** Move to: Q`` and ``@@`` hunks of `` ``/``-``/``+`` lines (a hunk is
placed by its context lines and its ``@@ header``, never by line numbers, so
the hunks found here carry no positions). Read leniently, as Codex applies it:
a line inside a hunk without a prefix is context.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

BEGIN = "*** Begin Patch"
END = "*** End Patch"
_PATCH = re.compile(
    r"\*\*\* Begin Patch[ \t]*\r?\n(.*?)^\*\*\* End Patch", re.DOTALL | re.MULTILINE
)
_OP = re.compile(r"^\*\*\* (Add File|Delete File|Update File|Move to):[ \t]*(.+?)[ \t]*$")


@dataclass
class FileOp:
    kind: str  # "add" | "delete" | "update"
    path: str
    move_to: str | None = None
    # each hunk's body lines, with their prefix (" ", "-", "+")
    hunks: list[list[str]] = field(default_factory=list)


def find_patches(text: str) -> list[str]:
    """Every patch inside ``text`` (a tool input, or a shell command with a heredoc)."""
    if BEGIN not in text:
        return []
    found = [m.group(1) for m in _PATCH.finditer(text)]
    if not found:  # no end marker (cut off): what there is
        found = [text.split(BEGIN, 1)[1].lstrip("\r\n")]
    return found


def parse_patch(body: str) -> list[FileOp]:
    """The file operations of one patch body (the text between its markers)."""
    ops: list[FileOp] = []
    current: FileOp | None = None
    hunk: list[str] | None = None
    for raw in body.split("\n"):
        line = raw[:-1] if raw.endswith("\r") else raw
        m = _OP.match(line)
        if m:
            kind, path = m.group(1), m.group(2)
            if kind == "Move to":
                if current is not None:
                    current.move_to = path
                continue
            current = FileOp(kind=kind.split()[0].lower(), path=path)
            ops.append(current)
            hunk = None
            if current.kind == "add":
                hunk = []
                current.hunks.append(hunk)
            continue
        if current is None or current.kind == "delete":
            continue
        if line.startswith("*** End of File") or line.startswith(END):
            continue
        if line.startswith("@@"):
            hunk = []
            current.hunks.append(hunk)
            continue
        if hunk is None:
            hunk = []
            current.hunks.append(hunk)
        if current.kind == "add":
            if line.startswith("+"):
                hunk.append(line)
            continue
        if line[:1] in ("+", "-", " "):
            hunk.append(line)
        else:
            hunk.append(" " + line)
    return ops
