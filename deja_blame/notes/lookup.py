"""Reading notes for blame: (commit, path, line) -> the session its note names."""

from __future__ import annotations

import sqlite3
from bisect import bisect_right
from typing import TYPE_CHECKING, Any

from deja_blame.notes import indexed
from deja_blame.notes.remap import effective_note
from deja_blame.notes.schema import LineMap, Note, Range, ranges_line_map
from deja_blame.notes.store import (
    NotesTips,
    notes_tree,
    notes_tree_at,
    read_note_docs,
    ref_target,
)

if TYPE_CHECKING:
    import pygit2

    from deja_blame.notes.gitai import GitAiLookup
    from deja_blame.notes.history_state import HistoryState


def read_note(
    repo: pygit2.Repository, commit: str, derived: bool = True, tree: pygit2.Tree | None = None
) -> Note | None:
    """The commit's note as it applies to that commit (copied documents remapped);
    ``derived=False``: its ``derived_from`` checked only when asked (``recorded_from``);
    ``tree``: the notes tree (``store.notes_tree``), resolved once by a reader of many."""
    docs = read_note_docs(repo, commit, derived=derived, tree=tree)
    return effective_note(repo, commit, docs)


class NotesLookup:
    """(commit, path, line) -> (session, confidence, written) over this repository's
    notes, reading each commit's note once; ``session_info`` gives what the notes
    read so far say of a session (agent, project, start time). With an index
    (``conn``), a note it holds is a row, not a read (``indexed.py``); ``save``
    indexes the notes read. ``tip``: the notes commit, where the question read it
    already (``store.read_tips``)."""

    def __init__(
        self,
        repo: pygit2.Repository,
        conn: sqlite3.Connection | None = None,
        tip: str | None = None,
    ) -> None:
        self.repo = repo
        self.notes: dict[str, Note | None] = {}
        # (commit, path) -> its ranges by start, or (where they overlap) line -> answer
        self.ranges: dict[tuple[str, str], _Ranges] = {}
        self.sessions: dict[str, dict[str, Any]] = {}
        self._tree: pygit2.Tree | None = None  # the notes' tree, as at the first lookup
        self._index = indexed.NoteIndex(conn) if conn is not None else None
        self._tip: object = _UNREAD if tip is None else tip
        self._given_tip = tip

    def __call__(self, commit: str, path: str, line: int) -> tuple[str, float, int | None] | None:
        key = (commit, path)
        found = self.ranges.get(key)
        if found is None:
            note = self._note(commit)
            found = self.ranges[key] = _by_start(note.ranges_of(path) if note else [])
        if isinstance(found, dict):
            return found.get(line)
        starts, ranges = found
        k = bisect_right(starts, line) - 1
        if k >= 0 and line <= ranges[k][1]:
            return ranges[k][2:]
        return None

    def _note(self, commit: str) -> Note | None:
        if commit not in self.notes:
            if self._tree is None:
                self._tree = self._notes_tree()
            if self._tree is None:
                note = None
            elif self._index is not None:
                note = self._index.note(self.repo, self._tree, commit)
            else:
                note = read_note(self.repo, commit, derived=False, tree=self._tree)
            self.notes[commit] = note
            if note is not None:
                for sid, info in note.sessions.items():
                    self.sessions.setdefault(sid, info)
        return self.notes[commit]

    def prefetch(self) -> None:
        """Read every indexed note's row now (``indexed.NoteIndex.prefetch``)."""
        if self._index is None:
            return
        if self._tree is None:
            self._tree = self._notes_tree()
        if self._tree is not None:
            self._index.prefetch(self.repo, self._tree)

    def _notes_tree(self) -> pygit2.Tree | None:
        """The notes' tree: at the tip the question read (``tip``), else as the ref
        stands now."""
        if self._given_tip is not None:
            return notes_tree_at(self.repo, self._given_tip)
        return notes_tree(self.repo)

    def tip(self) -> str | None:
        """The notes commit read (``refs/notes/deja``'s target), or None."""
        if self._tip is _UNREAD:
            self._tip = ref_target(self.repo)
        return self._tip  # type: ignore[return-value]

    def noted(self, commit: str) -> bool:
        """Whether the commit has a note (its lines are the note's sessions' or people's)."""
        return self._note(commit) is not None

    def derived_from(self, commit: str) -> dict[str, int] | None:
        """What the commit's note was computed from (``notes/derived_from.py``); None
        when it has no note or the note does not say (an older deja's)."""
        note = self._note(commit)
        if note is not None and self._index is not None and self._index.holds(commit):
            # the index keeps what a note says of lines, not what it was derived from
            read = self._index.read_again(self.repo, commit)
            return read.recorded_from() if read is not None else None
        return note.recorded_from() if note is not None else None

    def save(self) -> None:
        """Index the notes read from git (the next blame reads them as rows)."""
        if self._index is not None:
            self._index.save()

    def session_info(self, sid: str) -> dict[str, Any] | None:
        return self.sessions.get(sid)


_UNREAD = object()
_Ranges = tuple[list[int], list[Range]] | LineMap


def _by_start(ranges: list[Range]) -> _Ranges:
    """A note's ranges of one path, for lookups by line: sorted by start (bisected)
    when none overlap, as every note deja writes; else the line map (where the
    ranges' order decides which claims a shared line)."""
    ordered = sorted(ranges)
    if all(a[1] < b[0] for a, b in zip(ordered, ordered[1:])):
        return [r[0] for r in ordered], ordered
    return ranges_line_map(ranges)


def note_lookup_for(
    repo: pygit2.Repository, conn: sqlite3.Connection | None, tips: NotesTips
) -> NotesLookup | None:
    """A lookup over this repository's notes (through the index ``conn`` where it
    holds them), or None when it has none; ``tips``: the notes' refs as the question
    read them (``store.read_tips``)."""
    if tips.deja is None:
        return None
    return NotesLookup(repo, conn, tip=tips.deja)


def notes_besides(
    repo: pygit2.Repository,
    conn: sqlite3.Connection | None,
    lookup: object | None,
    tips: NotesTips,
    focus: str | None = None,
) -> tuple[GitAiLookup | None, HistoryState | None]:
    """What one blame question reads of the notes besides deja's own (``lookup``), once,
    where it is asked: git-ai's notes where the repository has some (each commit's
    note read at its first ask), and ``.git/deja/history`` (what the history passes
    settled) where an index and deja's notes can settle lines by it and no one
    commit's lines alone are asked (``focus``)."""
    from deja_blame.notes.gitai import GitAiLookup
    from deja_blame.notes.history_state import HistoryState

    gitai = GitAiLookup(repo) if tips.gitai is not None else None
    settled = conn is not None and lookup is not None and focus is None
    return gitai, HistoryState(repo) if settled else None
