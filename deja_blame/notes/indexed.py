"""The notes, indexed as the transcripts are: a commit's note read once, then a row.

Blame of an annotated history asks the note of every commit its lines come from
(hundreds for a long-lived file). Reading a note is a blob read, a JSON parse and
the checks a stranger's input needs (``schema._note_of``), with ``derived_from``
naming every session that wrote the commit's files: about 0.5 ms a note, most of a
cold blame's own work. What blame needs of it (the files' line ranges and the
sessions, checked and remapped: ``remap.effective_note``) is kept in the index's
``note_docs`` under the commit and the note's blob id. A blob id names its content,
so a row is never stale: a note rewritten, fetched or carried is another blob, read
and indexed in its turn. ``derived_from`` is not kept (``NotesLookup.derived_from``
reads the note when a check asks).

A note with lines another tool wrote is not indexed (reading it says so, each time),
nor one git copied from another commit (its remap depends on the clone). Indexing a
note drops the rows of the commit's other notes; ``deja forget`` drops the rows
that name the session forgotten.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

import orjson

from deja_blame.index import queries as Q
from deja_blame.notes.remap import effective_note
from deja_blame.notes.schema import Note, parse_note_docs
from deja_blame.notes.store import note_blob, read_note_blob, said_foreign, tree_note_blobs

if TYPE_CHECKING:
    import pygit2

# Part of every row: rows written under other checks (a change to ``_note_of``: bump
# this) are read again from the note.
FORMAT = 2  # 2: escape sequences dropped whole (escape.inert), as from a transcript


class NoteIndex:
    """The notes of one lookup, through the index ``conn``."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._read: list[tuple[str, str, bytes]] = []  # read from git, to index
        self._held: dict[str, str] = {}  # commit -> the blob of the row that answered it
        self._blobs: dict[str, str] | None = None  # every note's blob (``prefetch``)
        self._rows: dict[tuple[str, str], bytes] = {}

    def prefetch(self, repo: pygit2.Repository, tree: pygit2.Tree) -> None:
        """The rows of every note in ``tree``, read at once (while git blame runs:
        blame asks for the notes of the commits it names when it is done)."""
        self._blobs = tree_note_blobs(repo, tree)
        try:
            self._rows = Q.note_docs_get(self.conn, list(self._blobs.items()))
        except sqlite3.OperationalError:
            self._rows = {}

    def note(self, repo: pygit2.Repository, tree: pygit2.Tree, commit: str) -> Note | None:
        """``commit``'s note as it applies to it: a row, else read (and kept to index)."""
        if self._blobs is not None:
            blob = self._blobs.get(commit)
        else:
            blob = note_blob(tree, commit)
        if blob is None:
            return None
        row = self._rows.get((commit, blob))
        if row is None and self._blobs is None:
            try:
                row = Q.note_docs_get(self.conn, [(commit, blob)]).get((commit, blob))
            except sqlite3.OperationalError:
                row = None  # an index without the table (read-only, older): read the note
        if row is not None:
            held = note_of_row(row)
            if held is not None:
                self._held[commit] = blob
                return held
        text = read_note_blob(repo, commit, blob)
        if text is None:
            return None
        foreign = said_foreign(commit, text)
        docs = parse_note_docs(text, derived=False)
        note = effective_note(repo, commit, docs)
        # a document git copied from another commit is remapped by that commit's text,
        # which one clone has and another not: such a note is read each time
        copied = any(d.commit and d.commit != commit for d in docs)
        if note is not None and not foreign and not copied:
            row = row_of(note)
            if row is not None:
                self._read.append((commit, blob, row))
        return note

    def read_again(self, repo: pygit2.Repository, commit: str) -> Note | None:
        """``commit``'s note, answered by a row (``holds``), read from its blob for
        what a row does not keep (``derived_from``)."""
        blob = self._held.get(commit)
        text = read_note_blob(repo, commit, blob) if blob is not None else None
        if text is None:
            return None
        return effective_note(repo, commit, parse_note_docs(text, derived=False))

    def holds(self, commit: str) -> bool:
        """Whether ``commit``'s note came from a row (``derived_from`` not at hand)."""
        return commit in self._held

    def save(self) -> None:
        """Index the notes read; a busy or read-only index only costs the next read."""
        rows, self._read = self._read, []
        if not rows:
            return
        try:
            Q.note_docs_put(self.conn, rows)
        except sqlite3.OperationalError:
            pass


def row_of(note: Note) -> bytes | None:
    try:
        return orjson.dumps(
            [FORMAT, note.commit, note.files, note.sessions, note.tool, note.schema]
        )
    except TypeError:
        return None  # a file name that is not UTF-8 (pathtext): read each time


def note_of_row(row: bytes) -> Note | None:
    try:
        fmt, commit, files, sessions, tool, schema = orjson.loads(row)
    except (orjson.JSONDecodeError, TypeError, ValueError):
        return None
    if fmt != FORMAT:
        return None
    return Note(commit=commit, files=files, sessions=sessions, tool=tool, schema=schema)
