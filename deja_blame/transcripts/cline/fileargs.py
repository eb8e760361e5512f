"""Roo Code's (and Kilo Code's) calls on several files at once, and which of those
files the call changed.

Since mid-2025 Roo's ``apply_diff`` and ``read_file`` can name several files in one
call. Written as XML in the assistant's text, the call carries one ``args``
parameter::

    <apply_diff>
    <args>
    <file>
      <path>src/a.py</path>
      <diff>
        <content>
    <<<<<<< SEARCH
    ...
    >>>>>>> REPLACE
        </content>
        <start_line>12</start_line>
      </diff>
      <diff>...</diff>          (several diffs to one file)
    </file>
    <file>...</file>            (several files)
    </args>
    </apply_diff>

``read_file`` takes the same ``<args><file><path>`` (with ``<line_range>``); as a
native tool call it is ``{"files": [{"path": ..., "line_ranges": ...}]}``, and an
unreleased native ``apply_diff`` was ``{"files": [{"path": ..., "diff": ...}]}``.

The call's result is the files' results joined: a file that was saved says so with
its own ``<file_write_result><path>P</path>`` (JSON ``{"path": P, "operation": ...}``
under the native protocol); a file denied ("Changes to P were not approved by
user"), blocked, missing, or whose every diff failed has none. So a file's diffs
are the session's only when its own saved result is there. A file saved with some
of its diffs failed ("Unable to apply all diff parts") keeps all of them, as a
single-file ``apply_diff`` does: the result does not say which failed, and a
failed block's lines are not in the file to match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from deja_blame.transcripts.tool_edits import array, first_str, obj

# the tags the scan stops at; a value runs to the first closing tag after its opening,
# as Roo's XML parser reads it (``content`` is a stop node: read raw to its ``</content>``)
_TAG = re.compile(r"<(file|path|content)>")
_WRITE_RESULT = "<file_write_result>"


@dataclass
class FileArgs:
    """One ``<file>`` of a call: its path as written, and its diffs' texts in order."""

    path: str | None = None
    diffs: list[str] = field(default_factory=list)


def xml_files(text: str) -> list[FileArgs]:
    """The files an ``<args>`` value names, in order. Linear in ``text``: the scan only
    moves forward, and a value whose closing tag is missing ends the scan (nothing after
    it can be told from its text)."""
    files: list[FileArgs] = []
    at = 0
    while (found := _TAG.search(text, at)) is not None:
        tag = found.group(1)
        if tag == "file":
            files.append(FileArgs())
            at = found.end()
            continue
        stop = text.find(f"</{tag}>", found.end())
        value = text[found.end() : stop if stop >= 0 else len(text)]
        if not files:
            files.append(FileArgs())  # a path or diff before any <file>: Roo reads it as one
        if tag == "path":
            if stop < 0:
                break
            if files[-1].path is None:
                files[-1].path = value.strip()
        else:
            # the model writes the tag on its own line: that newline is no line of the diff
            files[-1].diffs.append(value[1:] if value.startswith("\n") else value)
        if stop < 0:
            break
        at = stop + len(tag) + 3
    return files


def native_files(args: dict[str, Any]) -> list[FileArgs]:
    """The files of a native call's ``files`` array."""
    out: list[FileArgs] = []
    for entry in array(args.get("files")):
        path = first_str(obj(entry), "path")
        diff = obj(entry).get("diff")
        out.append(FileArgs(path, [diff] if isinstance(diff, str) else []))
    return out


def call_files(args: dict[str, Any]) -> list[FileArgs] | None:
    """The files of a multi-file call (its ``args`` XML or native ``files``), or None
    when the call names one file the usual way."""
    raw = args.get("args")
    if isinstance(raw, str):
        return xml_files(raw)
    if isinstance(args.get("files"), list):
        return native_files(args)
    return None


def saved_paths(result: str) -> set[str]:
    """The paths a multi-file call's result says were saved: each ``<file_write_result>``'s
    own ``<path>`` (its text escaped as XML), or each JSON part with a ``path`` and an
    ``operation``."""
    saved: set[str] = set()
    at = 0
    while (start := result.find(_WRITE_RESULT, at)) >= 0:
        at = start + len(_WRITE_RESULT)
        end = result.find("</file_write_result>", at)
        body = result[at : end if end >= 0 else len(result)]
        opening = body.find("<path>")
        closing = body.find("</path>", opening + 6) if opening >= 0 else -1
        if closing >= 0:
            saved.add(_unescape(body[opening + 6 : closing]).strip())
        if end < 0:
            break
        at = end
    for part in result.split("\n\n"):
        part = part.strip()
        if not part.startswith("{"):
            continue
        try:
            doc = obj(orjson.loads(part))
        except orjson.JSONDecodeError:
            continue
        if isinstance(doc.get("path"), str) and isinstance(doc.get("operation"), str):
            saved.add(doc["path"].strip())
    return saved


def _unescape(text: str) -> str:
    """The three characters Roo's XML builder escapes, and no other entity."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
