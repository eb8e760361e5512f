"""Reading notes for blame: (commit, path, line) -> the session its note names."""

from __future__ import annotations

from typing import Any

import pygit2

from deja_blame.notes.remap import effective_note
from deja_blame.notes.schema import NOTES_REF, LineMap, Note
from deja_blame.notes.store import notes_tree, read_note_docs, ref_target


def read_note(
    repo: pygit2.Repository, commit: str, derived: bool = True, tree: pygit2.Tree | None = None
) -> Note | None:
    """The commit's note as it applies to that commit (copied documents remapped);
    ``derived=False``: its ``derived_from`` checked only when asked (``recorded_from``);
    ``tree``: the notes tree (``store.notes_tree``), resolved once by a reader of many."""
    docs = read_note_docs(repo, commit, derived=derived, tree=tree)
    return effective_note(repo, commit, docs)


def has_notes(repo: pygit2.Repository) -> bool:
    return ref_target(repo, NOTES_REF) is not None


class NotesLookup:
    """(commit, path, line) -> (session, confidence, written) over this repository's
    notes, reading each commit's note once; ``session_info`` gives what the notes
    read so far say of a session (agent, project, start time)."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self.repo = repo
        self.notes: dict[str, Note | None] = {}
        self.lines: dict[tuple[str, str], LineMap] = {}
        self.sessions: dict[str, dict[str, Any]] = {}
        self._tree: pygit2.Tree | None = None  # the notes' tree, as at the first lookup

    def __call__(self, commit: str, path: str, line: int) -> tuple[str, float, int | None] | None:
        key = (commit, path)
        if key not in self.lines:
            note = self._note(commit)
            self.lines[key] = note.line_map(path) if note is not None else {}
        return self.lines[key].get(line)

    def _note(self, commit: str) -> Note | None:
        if commit not in self.notes:
            if self._tree is None:
                self._tree = notes_tree(self.repo)
            note = self.notes[commit] = (
                read_note(self.repo, commit, derived=False, tree=self._tree)
                if self._tree is not None
                else None
            )
            if note is not None:
                for sid, info in note.sessions.items():
                    self.sessions.setdefault(sid, info)
        return self.notes[commit]

    def noted(self, commit: str) -> bool:
        """Whether the commit has a note (its lines are the note's sessions' or people's)."""
        return self._note(commit) is not None

    def derived_from(self, commit: str) -> dict[str, int] | None:
        """What the commit's note was computed from (``notes/derived_from.py``); None
        when it has no note or the note does not say (an older deja's)."""
        note = self._note(commit)
        return note.recorded_from() if note is not None else None

    def session_info(self, sid: str) -> dict[str, Any] | None:
        return self.sessions.get(sid)


def note_lookup_for(repo: pygit2.Repository) -> NotesLookup | None:
    """A lookup over this repository's notes, or None when it has none."""
    if not has_notes(repo):
        return None
    return NotesLookup(repo)
