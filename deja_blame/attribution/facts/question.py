"""Stage 1's one door: a question about one file in, its facts out (``of_question``).

``blame.blame_file`` makes the ``Question`` once, where it is asked (the file's
version, the notes' tips read once, the index, the line window or commit asked);
``of_question`` reads everything the matcher is given, in one sequence: the
notes' state (``notes_state.py``), the file's facts (``noted_range.py`` for a few
settled lines, else ``gather.py``), and the rules' facts (``source.py``). The
blame module then holds only facts -> match -> answer -> cache.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from deja_blame.attribution.facts.gather import gather_file
from deja_blame.attribution.facts.noted_range import noted_range
from deja_blame.attribution.facts.notes_state import notes_state

if TYPE_CHECKING:
    import pygit2

    from deja_blame.attribution.facts.model import FileFacts
    from deja_blame.attribution.facts.rule_facts import RuleFacts
    from deja_blame.attribution.facts.source import FactSource
    from deja_blame.attribution.model import NoteLookup
    from deja_blame.gitutil import FileVersion
    from deja_blame.notes.gitai import GitAiLookup
    from deja_blame.notes.history_state import HistoryState
    from deja_blame.notes.store import NotesTips


@dataclass(frozen=True)
class Question:
    """One file's question to stage 1: ``version`` (a commit's, or the working tree's
    text) and the notes it is answered with (``note_lookup``, ``tips``), asked of an
    index (``of_question``'s ``conn``: what is asked, not part of the question);
    ``gitai``, ``history``: the other notes, read where the question is asked
    (``notes.lookup.notes_besides``).
    ``window``: a line range (with context) rather than the whole file; ``focus``: a
    commit whose lines alone are matched; ``before_match``: run while git blame works
    (deja blame reads new transcript lines into the index there)."""

    repo: pygit2.Repository
    version: FileVersion
    note_lookup: NoteLookup | None
    tips: NotesTips
    gitai: GitAiLookup | None
    history: HistoryState | None
    engine: str = "auto"
    before_match: Callable[[], None] | None = None
    window: tuple[int, int] | None = None
    focus: str | None = None

    def whole_file(self) -> Question:
        """The same question about every line of the file (nothing run meanwhile)."""
        return replace(self, window=None, before_match=None, focus=None)


@dataclass
class Facts:
    """What stage 1 gives the matcher for one question: the file's facts, and the
    rules' (None where no rule has a line to match, or there is no index);
    ``source`` answers what the rules and the moves rule still ask (None with the
    rules' facts)."""

    file: FileFacts
    rules: RuleFacts | None
    source: FactSource | None


def of_question(q: Question, conn: sqlite3.Connection | None) -> Facts:
    """The facts of ``q`` (from git, and the index ``conn`` where there is one), read
    in one sequence: the notes' state, the file's facts (the window's lines alone
    where the notes settle them all: ``noted_range``), then the rules' facts."""
    notes = notes_state(conn, q.focus, q.gitai, q.history)
    facts = None
    if q.window is not None and q.focus is None and q.before_match is None:
        facts = noted_range(q.repo, conn, q.version, q.note_lookup, notes, q.engine, q.window)
    if facts is None:
        facts = gather_file(
            q.repo,
            conn,
            q.version,
            q.note_lookup,
            notes,
            q.engine,
            q.before_match,
            q.window,
            q.focus,
        )
    if conn is None or not facts.rules_run():
        # every line settled by the notes: no rule runs (``FactSource.for_file`` gives
        # None), and nothing the rules, the writes or the file's history need loads
        return Facts(facts, None, None)
    from deja_blame.attribution.facts.source import FactSource

    source = FactSource(conn, facts.root, q.version.commit)
    return Facts(facts, source.for_file(facts), source)
