"""What the editor shows, made from the attribution API's plain data: a lens per run
of lines one session wrote, the gutter's runs, and hover text.

Everything from a transcript (requests, edits, ids, projects) is shown inside
code fences: a prompt holding ``![x](https://...)`` must not make the editor
fetch anything, nor a lens title carry markup.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from deja_blame.attribution.model import FileBlame, LineAttribution
from deja_blame.editor.confidence import run_confidence
from deja_blame.output import (
    UNPLACED_HUNK,
    code,
    hunk_header,
    inert,
    placed_by_text,
    shorten,
    terminal,
    utc_minute,
)
from deja_blame.outputs.escape import lsp_markdown
from deja_blame.outputs.redact import redact
from deja_blame.outputs.session_text import no_edit_text, via_text
from deja_blame.session_ids import short
from deja_blame.transcripts.registry import label_of

REQUEST_CHARS = 600  # of the person's request on a hover
EDIT_LINES = 30  # of the edit's diff on a hover


@dataclass(frozen=True)
class Run:
    """Buffer lines ``start``..``end`` (0-based, inclusive) written by one session."""

    start: int
    end: int
    line: LineAttribution  # the run's first line (session, agent, when)
    confidence: float | None = None  # the run's, by editor.confidence's rule

    @property
    def title(self) -> str:
        return lens_title(self.line, self.confidence)

    def to_json(self, colour: int) -> dict[str, Any]:
        ln = self.line
        return {
            "start": self.start,
            "end": self.end,
            "session": ln.session,
            "agent": ln.source,
            "label": self.title,
            "colour": colour,
        }


def runs(lines: list[LineAttribution | None]) -> list[Run]:
    """Consecutive lines of one session; people's lines and unsaved lines make none."""
    out: list[Run] = []
    i, n = 0, len(lines)
    while i < n:
        first = lines[i]
        if first is None or not first.session:
            i += 1
            continue
        j = i
        while j + 1 < n and (nxt := lines[j + 1]) is not None and nxt.session == first.session:
            j += 1
        out.append(Run(i, j, first, run_confidence(lines[i : j + 1])))
        i = j + 1
    return out


def when(ln: LineAttribution) -> str:
    """The agent's time, as blame's text shows it (the index keeps UTC, and says so)."""
    return utc_minute(ln.written_at)


def lens_title(ln: LineAttribution, confidence: float | None = None) -> str:
    """``agy 3f2a9c1e 2026-07-17 09:30 UTC 0.95``: blame's agent columns, plain text
    (``confidence``: a run's, else the line's own)."""
    sure = ln.confidence if confidence is None else confidence
    conf = f"{sure:.2f}" if sure is not None else "note"
    parts = [label_of(ln.source), short(ln.session or ""), when(ln), conf]
    return " ".join(terminal(p) for p in parts if p)  # plain text: one line, inert


def _fenced(text: str, lang: str = "text") -> str:
    """``text`` in a code fence longer than any run of backticks inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def _code(text: str) -> str:
    """Inline code that no backtick inside ``text`` can close early, on one line (a
    blank line would end the paragraph, and the code span with it)."""
    text = " ".join(inert(text).split())
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    tick = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{tick}{pad}{text}{pad}{tick}"


def agent_hover(
    blame: FileBlame, ln: LineAttribution, story: dict[str, Any], notes_request: str | None
) -> str:
    """The hover of a session's line: who, when, the request, the edit, the history."""
    sid = ln.session or ""
    info = blame.sessions.get(sid)
    model = (info.model if info else None) or (story.get("edit") or {}).get("model")
    # every field a transcript or a note gave goes through md_text or inside code:
    # a note's agent "![x](https://...)" would make the editor fetch it on hover
    # the agent by blame's word, as the lens and every text output name it
    head = f"**deja** · {md_text(label_of(ln.source))} session {_code(inert(sid))}"
    conf = f"{ln.confidence:.2f}" if isinstance(ln.confidence, (int, float)) else "1.00"
    facts = [
        f"written {md_text(when(ln)) or '?'}",
        f"confidence {conf} (from {md_text(via_text(ln.via))})",
    ]
    if model:
        facts.insert(0, f"model {_code(inert(model))}")
    out = [head, " · ".join(facts)]
    if info is not None and info.project:
        out.append(f"project {_code(inert(info.project))}")
    if ln.commit:
        out.append(f"commit {_code(inert(ln.commit)[:12])}")
    else:
        out.append("not committed yet")
    prompt = story.get("prompt")
    request = prompt["text"] if prompt else notes_request
    if request:
        out.append("**Asked**\n\n" + _fenced(shorten(redact(inert(request)), REQUEST_CHARS)))
    elif story.get("note_only"):
        out.append("*the request is not in this repository's notes (the transcript is elsewhere)*")
    missing = story.get("no_edit_of_file")
    if missing is not None:
        other = missing.get("added_elsewhere")
        shown = _code(inert(other)) if other else None
        out.append(f"*{no_edit_text(_code(inert(blame.path)), shown)}*")
    edit = story.get("edit")
    if edit:
        diff: list[str] = []
        for h in edit["hunks"]:
            if h.get("old_start") is not None:
                removed, added = len(h["removed"]), len(h["added"])
                header = hunk_header(h["old_start"], removed, h["new_start"], added)
                if h.get("placed_by_text"):
                    header += " " + placed_by_text(ln.commit)
                diff.append(header)
            else:
                diff.append(UNPLACED_HUNK)
            # a file's lines: control characters shown (``code``), as the terminal does
            diff += [f"-{code(r)}" for r in h["removed"]] + [f"+{code(a)}" for a in h["added"]]
        more = len(diff) - EDIT_LINES
        body = "\n".join(diff[:EDIT_LINES]) + (f"\n... {more} more lines" if more > 0 else "")
        tool, at = _code(inert(str(edit["tool"] or "?"))), md_text(str(edit["at"] or "?"))
        out.append(f"**The edit** ({tool}, written {at})\n\n")
        out[-1] += _fenced(body, "diff")
    history = story.get("history") or []
    if len(history) > 1:
        out.append(
            "**History** (oldest first, by commit time)\n\n" + _fenced(_history_text(history))
        )
    return "\n\n".join(out)


def _history_text(history: list[dict[str, Any]]) -> str:
    rows = []
    for v in history:
        at = terminal(utc_minute(v.get("at")))
        if v.get("session"):
            who = f"{inert(short(v['session']))[:8]} {label_of(v.get('agent'))}"
        else:
            who = inert(v.get("author") or "-")
        rows.append(
            f"{v['commit'][:8]} {at:<20} {shorten(who, 24):<24} {shorten(code(v['text']), 60)}"
        )
    return "\n".join(rows)


def person_hover(commit: str, author: str, email: str, time: int, summary: str) -> str:
    """The hover of a person's line: git blame's author, date and commit summary."""
    day = datetime.fromtimestamp(time, tz=timezone.utc).strftime("%Y-%m-%d %H:%M")
    return (
        f"**{md_text(author)}** {_code(inert('<' + email + '>'))} · {day} · commit {_code(commit[:12])}"
        f"\n\n{_fenced(inert(summary))}"
    )


def unsaved_hover() -> str:
    return "**deja** · typed and not saved: no session wrote this line (save to blame it again)"


def uncommitted_hover() -> str:
    return "**deja** · not committed yet, and no indexed session wrote this line"


# the editor's one escaping of a field (outputs/escape.py)
md_text = lsp_markdown
