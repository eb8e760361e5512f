"""Reading notes for blame: (commit, path, line) -> the session its note names."""

from __future__ import annotations

from collections.abc import Callable

import pygit2

from deja_blame.notes.remap import effective_note
from deja_blame.notes.schema import NOTES_REF, LineMap, Note
from deja_blame.notes.store import read_note_docs


def read_note(repo: pygit2.Repository, commit: str) -> Note | None:
    """The commit's note as it applies to that commit (copied documents remapped)."""
    return effective_note(repo, commit, read_note_docs(repo, commit))


def has_notes(repo: pygit2.Repository) -> bool:
    try:
        repo.references[NOTES_REF]
    except (KeyError, pygit2.GitError):
        return False
    return True


def note_lookup_for(
    repo: pygit2.Repository,
) -> Callable[[str, str, int], tuple[str, float] | None] | None:
    """A lookup function over this repository's notes, or None when it has none."""
    if not has_notes(repo):
        return None
    notes: dict[str, Note | None] = {}
    lines: dict[tuple[str, str], LineMap] = {}

    def lookup(commit: str, path: str, line: int) -> tuple[str, float] | None:
        key = (commit, path)
        if key not in lines:
            if commit not in notes:
                notes[commit] = read_note(repo, commit)
            note = notes[commit]
            lines[key] = note.line_map(path) if note is not None else {}
        return lines[key].get(line)

    return lookup
