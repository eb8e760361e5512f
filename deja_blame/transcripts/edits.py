"""Edits from what other agents record: a string replaced, a patch applied, a file written.

Antigravity's diff blocks list only changed lines. Claude Code, Codex and
Gemini CLI record a replacement (old and new text, with whatever context the
model chose to repeat), a unified patch, or a whole file. Only the lines the
edit wrote are the session's: context lines repeated in both old and new text
are not, so a replacement is diffed line by line and cut into hunks at every
unchanged line (each hunk is then a run of neighbouring written lines, which is
what blame matches).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from deja_blame.linediff import equal_runs
from deja_blame.models import Edit, Hunk
from deja_blame.transcripts.text import int64_text


def split_lines(text: str) -> list[str]:
    """Lines of ``text`` without their newline (``\\r\\n`` too); a final newline adds no line."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def hunks_between(old: list[str], new: list[str], new_base: int | None = None) -> list[Hunk]:
    """The changed runs from ``old`` to ``new``: one hunk per run of changed lines.

    ``new_base``: the line (1-based) where ``new`` starts in the file, when known.
    """
    hunks: list[Hunk] = []
    # git's diff (linediff), near-linear: difflib's matcher is quadratic in lines
    # that repeat, and one 12,000-line block in a planted history took a minute
    i = j = 0
    for a, b, size in [*equal_runs(old, new), (len(old), len(new), 0)]:
        if a > i or b > j:
            hunks.append(
                Hunk(
                    removed=old[i:a],
                    added=new[j:b],
                    old_start=None if new_base is None else new_base + i,
                    new_start=None if new_base is None else new_base + j,
                )
            )
        i, j = a + size, b + size
    return hunks


def edit_from_hunks(
    path: str, tool: str, hunks: list[Hunk], at: str | None, source: str = "agent"
) -> Edit | None:
    hunks = [h for h in hunks if h.removed or h.added]
    if not hunks:
        return None
    return Edit(
        path=path,
        tool=tool,
        removed=[ln for h in hunks for ln in h.removed],
        added=[ln for h in hunks for ln in h.added],
        at=at,
        source=source,
        hunks=hunks,
    )


def replacement_edit(path: str, tool: str, old: str, new: str, at: str | None) -> Edit | None:
    """A string replacement as an edit of the lines it changed."""
    return edit_from_hunks(path, tool, hunks_between(split_lines(old), split_lines(new)), at)


def whole_file_edit(path: str, tool: str, content: str, at: str | None) -> Edit | None:
    lines = split_lines(content)
    if not lines:
        return None
    return Edit(
        path=path,
        tool=tool,
        removed=[],
        added=lines,
        at=at,
        hunks=[Hunk(removed=[], added=lines, old_start=None, new_start=1)],
    )


def patch_hunks(lines: Iterable[str], old_start: int | None, new_start: int | None) -> list[Hunk]:
    """One unified hunk's body (``" "``, ``"-"``, ``"+"`` prefixed lines) cut at context lines.

    Positions, when the header gave them, are counted forward line by line.
    """
    hunks: list[Hunk] = []
    old_no, new_no = old_start, new_start
    current: Hunk | None = None
    for raw in lines:
        kind, text = raw[:1], raw[1:]
        if kind == "\\":
            continue  # "\ No newline at end of file"
        if kind == "-" or kind == "+":
            if current is None:
                current = Hunk(removed=[], added=[], old_start=old_no, new_start=new_no)
                hunks.append(current)
            if kind == "-":
                current.removed.append(text)
                old_no = None if old_no is None else old_no + 1
            else:
                current.added.append(text)
                new_no = None if new_no is None else new_no + 1
            continue
        current = None  # a context line (" ", or an empty line some writers leave)
        old_no = None if old_no is None else old_no + 1
        new_no = None if new_no is None else new_no + 1
    return hunks


def split_by_proposal(edit: Edit, proposed: list[str]) -> list[Edit]:
    """An edit a person changed before accepting it: the model's lines stay the
    agent's, the lines the person typed become an edit of ``source="user"``.

    ``proposed`` is the model's proposal (its new text): an added line that is
    not in it, as often as it occurs there, is the person's.
    """
    left: dict[str, int] = {}
    for line in proposed:
        left[line] = left.get(line, 0) + 1
    agent: list[Hunk] = []
    user: list[Hunk] = []
    for h in edit.hunks or [Hunk(removed=edit.removed, added=edit.added)]:
        mine = Hunk(removed=h.removed, added=[], old_start=h.old_start, new_start=h.new_start)
        theirs = Hunk(removed=[], added=[], old_start=h.old_start, new_start=h.new_start)
        for line in h.added:
            if left.get(line, 0) > 0:
                left[line] -= 1
                mine.added.append(line)
            else:
                theirs.added.append(line)
        agent.append(mine)
        if theirs.added:
            user.append(theirs)
    out = []
    first = edit_from_hunks(edit.path, edit.tool, agent, edit.at)
    if first is not None:
        out.append(first)
    second = edit_from_hunks(edit.path, edit.tool, user, edit.at, source="user")
    if second is not None:
        out.append(second)
    return out


_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def unified_hunks(diff: str) -> list[Hunk]:
    """The hunks of a unified diff of one file (``---``/``+++`` headers and all)."""
    hunks: list[Hunk] = []
    body: list[str] = []
    start: tuple[int | None, int | None] | None = None
    for line in diff.split("\n"):
        m = _HUNK_HEADER.match(line)
        if m:
            if start is not None:
                hunks += patch_hunks(body, *start)
            start, body = (int64_text(m.group(1)), int64_text(m.group(2))), []
        elif start is not None and line[:1] in (" ", "-", "+", "\\"):
            body.append(line[:-1] if line.endswith("\r") else line)
    if start is not None:
        hunks += patch_hunks(body, *start)
    return hunks


def edit_to_doc(edit: Edit) -> dict[str, Any]:
    """Everything of an edit, as JSON (a reader's state between runs)."""
    return {
        "path": edit.path,
        "tool": edit.tool,
        "at": edit.at,
        "source": edit.source,
        "model": edit.model,
        "hunks": [[h.old_start, h.new_start, h.removed, h.added] for h in edit.hunks],
    }


def edit_from_doc(doc: dict[str, Any]) -> Edit | None:
    hunks = [Hunk(removed=r, added=a, old_start=o, new_start=n) for o, n, r, a in doc["hunks"]]
    edit = edit_from_hunks(
        doc["path"], doc["tool"], hunks, doc.get("at"), doc.get("source", "agent")
    )
    if edit is not None:
        edit.model = doc.get("model")
    return edit
