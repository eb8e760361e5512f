"""Reading notes for blame: (commit, path, line) -> the session its note names."""

from __future__ import annotations

import pygit2

from deja_blame.notes.schema import NOTES_REF, Note, parse_note


def read_note(repo: pygit2.Repository, commit: str) -> Note | None:
    try:
        note = repo.lookup_note(commit, NOTES_REF)
    except (KeyError, pygit2.GitError, ValueError):
        return None
    return parse_note(note.message)


def has_notes(repo: pygit2.Repository) -> bool:
    try:
        repo.references[NOTES_REF]
    except (KeyError, pygit2.GitError):
        return False
    return True


def note_lookup_for(repo: pygit2.Repository):  # type: ignore[no-untyped-def]
    """A lookup function over this repository's notes, or None when it has none."""
    if not has_notes(repo):
        return None
    cache: dict[str, Note | None] = {}

    def lookup(commit: str, path: str, line: int) -> tuple[str, float] | None:
        if commit not in cache:
            cache[commit] = read_note(repo, commit)
        note = cache[commit]
        return note.session_at(path, line) if note is not None else None

    return lookup
