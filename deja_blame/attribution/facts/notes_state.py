"""Stage 1's reading of the repository's notes state, once per question: what the
history passes recorded (``settled.py``'s ``PassRecord``) and git-ai's notes.

``gather_file`` and ``noted_range`` (one question may ask both: a line range the
notes do not settle is gathered as a window) are given it as plain data instead of
each reading ``.git/deja/history`` and git-ai's ref again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deja_blame.attribution.facts.settled import PassRecord, pass_record

if TYPE_CHECKING:
    from deja_blame.attribution.facts.model import FileFacts
    from deja_blame.notes.gitai import GitAiLookup
    from deja_blame.notes.history_state import HistoryState


@dataclass(frozen=True)
class NotesState:
    """``passed``: what the history passes recorded (None where no line is settled by
    them: no index, no notes read, or one commit's lines asked); ``gitai``: git-ai's
    notes where the repository has some, their lines given ``gitai_confidence``."""

    passed: PassRecord | None
    gitai: Callable[[str, str, int], Any] | None
    gitai_confidence: float


def notes_state(
    conn: sqlite3.Connection | None,
    focus: str | None,
    gitai: GitAiLookup | None,
    history: HistoryState | None,
) -> NotesState:
    """The notes' state a question's answer is gathered with, from what the question
    read of them (``notes.lookup.notes_besides``: git-ai's lookup, the history
    passes' record; ``focus``: a commit whose lines alone are matched, the others
    kept as the notes say: no pass asked)."""
    from deja_blame.notes.gitai import CONFIDENCE

    passed = None
    if conn is not None and history is not None and focus is None:
        passed = pass_record(conn, history.none, history.done, history.done_notes)
    return NotesState(passed, gitai, CONFIDENCE)


def gitai_authors(facts: FileFacts) -> dict[int, Any]:
    """What git-ai's notes say of the lines the rules and the notes left unexplained
    (line index -> its author there; each commit's note read once, by ``facts.gitai``):
    read after the matcher matched, for ``match.from_git_ai``."""
    lookup = facts.gitai
    if lookup is None:
        return {}
    authors: dict[int, Any] = {}
    for k, ln in enumerate(facts.lines):
        if ln.session is not None or ln.commit is None:
            continue
        who = lookup(ln.commit, ln.orig_path or facts.path, ln.orig_line or ln.line)
        if who is not None:
            authors[k] = who
    return authors
