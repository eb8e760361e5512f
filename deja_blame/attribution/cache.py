"""The attribution cache: a file's whole answer at one commit, read back in one row.

What ``blame_file`` computes for the committed lines of a file depends on the
commit (git's blame), the index's writes to the file's paths, and the notes.
So an entry is keyed by (repository, commit, path, and the replace refs and
grafts git's blame follows: ``replaced``) and carries a token: the
generation of every candidate path of the file (``path_gen``, bumped whenever
the index writes or removes lines of a path) and the tip of ``refs/notes/deja``.
A new session that edits another file leaves the entry valid; one that edits
this file, or a fetched note, makes it stale.

The working tree is HEAD's entry plus the lines that differ from HEAD: a file
saved in an editor re-matches only its uncommitted lines (``overlay``).

This module reaches git through the ``git`` program only, and never imports
pygit2: a warm ``deja blame`` or ``deja why`` is a read of HEAD, the notes refs
and the file (``gitfiles``: a ``git rev-parse`` and a ``git for-each-ref`` where
those files cannot say it all) and one row.
"""

from __future__ import annotations

import operator
import os
import sqlite3
import subprocess
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from deja_blame import __version__, gitfiles
from deja_blame.attribution import blame_options
from deja_blame.attribution.facts.indexread import candidate_paths
from deja_blame.attribution.rule_versions import CACHE_VERSION as CACHE_VERSION  # bump it there
from deja_blame.attribution.rule_versions import IDENTITY_VERSION
from deja_blame.blake2 import blake2b
from deja_blame.index import queries as Q
from deja_blame.notes.refs import GITAI_REF, NOTES_REF

if TYPE_CHECKING:
    from deja_blame.attribution.model import FileBlame, LineAttribution
    from deja_blame.notes.store import NotesTips

CACHE_ENTRIES = 500


@dataclass(frozen=True)
class RepoState:
    """What a cache lookup needs of the repository: its root, HEAD and notes tip."""

    root: str
    head: str | None  # None: no commit yet
    notes: str  # the tips of git-ai's and deja's notes, one a line ("" when none)
    deja_notes: bool = False  # refs/notes/deja exists: blame reads its notes


def _git(cwd: str, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    from deja_blame.gitutil import try_git

    return try_git(cwd, args, timeout=30)  # None (no git on PATH): the slow path uses pygit2


def repo_state(start: Path) -> RepoState | None:
    """The state of the repository holding ``start`` (a directory), via ``git``."""
    from deja_blame.attribution.facts.early import REV_PARSE, rev_parse_output
    from deja_blame.gitcli import remember_shallow

    said = rev_parse_output(str(start.absolute()))  # the console script asked already
    if said is None:
        said = gitfiles.rev_parse(str(start))  # no process where the files say it all
    if said is None:
        proc = _git(str(start), *REV_PARSE)
        if proc is None:
            return None
        said = proc.stdout
    out = said.decode("utf-8", "surrogateescape").splitlines()
    if len(out) < 2:
        return None
    root = str(Path(out[0]).resolve())
    remember_shallow(root, out[1].strip())
    head = out[2].strip() if len(out) > 2 else None
    notes, deja_notes = notes_tips_cli(root)
    return RepoState(root=root, head=head, notes=notes, deja_notes=deja_notes)


def notes_tips_cli(root: str) -> tuple[str, bool]:
    """The tips of git-ai's notes (``refs/notes/ai``) and deja's, one a line (an
    answer computed with other notes may not be this one), and whether deja's
    notes ref exists."""
    said = gitfiles.ref_tips(root, (NOTES_REF, GITAI_REF))  # the ref files, where they can
    if said is None:
        proc = _git(root, "for-each-ref", "--format=%(objectname) %(refname)", NOTES_REF, GITAI_REF)
        if proc is None or proc.returncode != 0:
            return "", False
        said = proc.stdout
    rows = [ln.split(" ", 1) for ln in said.decode().splitlines() if " " in ln]
    return "\n".join(sha for sha, _ in rows), any(ref == NOTES_REF for _, ref in rows)


def notes_text(tips: NotesTips) -> str:
    """The notes tips one answer was made with (``notes.store.read_tips``) as
    ``notes_tips_cli`` spells them: one a line, in for-each-ref's order
    (``refs/notes/ai`` before ``refs/notes/deja``)."""
    return "\n".join(t for t in (tips.gitai, tips.deja) if t)


def resolve_rev_cli(root: str, rev: str) -> str | None:
    proc = _git(root, "rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}")
    if proc is None or proc.returncode != 0:
        return None
    return proc.stdout.decode().strip() or None


def content_hash(data: bytes) -> str:
    return blake2b(data, digest_size=16).hexdigest()


def entry_key(root: str, commit: str, relpath: str, engine: str, notes_read: str) -> str | None:
    """``notes_read``: which notes the answer read (``notes_read_by``): an answer the
    hook computed without deja's notes is not the answer ``deja blame`` gives with them.
    None: no answer is kept (``replaced``)."""
    swapped = replaced(root)
    if swapped is None:
        return None
    options = blame_options.current().signature()  # -w, -M...: another answer
    rules = f"{CACHE_VERSION}.{IDENTITY_VERSION}/{__version__}"  # who belongs: identity.py
    return f"{rules}\0{root}\0{commit}\0{relpath}\0{engine}{options}\0{notes_read}{swapped}"


def replaced(root: str) -> str | None:
    """The part of a cache key that says which commits git reads in place of the
    stored ones (``git replace``, grafts: ``gitfiles.replacements``): "" for none,
    else their digest. git blame's lines and authors follow them, so an answer taken
    with them is not the answer without, nor with others. None: the repository's
    files cannot say (keep nothing)."""
    said = gitfiles.replacements(root)
    if said is None:
        return None
    return f"\0replaced {content_hash(said)}" if said else ""


def notes_read_by(note_lookup: object | None) -> str:
    """What a note lookup reads, for ``entry_key``: nothing (None), deja's notes as
    ``deja blame`` reads them (``NotesLookup``), or another reader, by its name."""
    if note_lookup is None:
        return ""
    name = getattr(note_lookup, "__qualname__", None) or type(note_lookup).__qualname__
    return "notes" if name == "NotesLookup" else name


def cacheable() -> bool:
    """Whether answers may be cached under the current git blame options: not with a
    ``--since`` (a relative date, ``2.weeks.ago``, means another boundary tomorrow)."""
    return blame_options.current().since is None


def token(conn: sqlite3.Connection, root: str, relpaths: set[str]) -> str:
    """The state of the index an entry was computed from (the notes are checked
    apart: ``notes_allow``)."""
    paths = candidate_paths(conn, root, relpaths)
    ids = sorted(paths)
    gens = Q.path_generations(conn, ids)
    return orjson.dumps([[pid, paths[pid], gens.get(pid, 0)] for pid in ids]).decode()


def notes_allow(root: str, then: str, now: str, commits: set[str]) -> bool:
    """Whether an answer computed with the notes at tips ``then`` holds with the
    notes at ``now``: no note of ``commits`` (the commits its lines were blamed to,
    whose notes are all a line's answer reads) was added, changed or removed in
    between. A commit's hook notes that commit alone: the answers of every file it
    did not touch stay (they were all thrown away at each new note)."""
    if then == now:
        return True
    changed = _notes_changed(root, then, now)
    return changed is not None and not (changed & commits)


_CHANGED: dict[tuple[str, str, str], frozenset[str] | None] = {}


def _notes_changed(root: str, then: str, now: str) -> frozenset[str] | None:
    """The commits whose notes differ between the tips ``then`` and ``now`` (one a
    line, as ``notes_tips_cli``): ``notes/store.notes_changed`` of each notes ref's
    commits; None when that cannot be told (a ref appeared or went, git failed)."""
    key = (root, then, now)
    if key in _CHANGED:
        return _CHANGED[key]
    from deja_blame.notes.store import notes_changed

    old, new = then.split("\n"), now.split("\n")
    got: set[str] | None = set()
    if len(old) != len(new) or not all(old) or not all(new):
        got = None
    else:
        for a, b in zip(old, new):
            if a == b:
                continue
            changed = notes_changed(root, a, b)  # each notes ref's commits, one diff-tree
            if changed is None or got is None:
                got = None
                break
            got |= changed
    result = frozenset(got) if got is not None else None
    if len(_CHANGED) > 64:
        _CHANGED.clear()
    _CHANGED[key] = result
    return result


@dataclass
class Entry:
    """A cached attribution: the file's text at the commit and each line's answer."""

    commit: str
    data_hash: str  # of the file's bytes at the commit
    orig_paths: list[str]  # paths blame followed the lines to (renames)
    lines: list[Any]  # LineAttribution fields, in _FIELDS order (lists, or tuples when made)
    note_sessions: dict[str, Any] = field(default_factory=dict)
    # commit -> [author name, mail, epoch]: added by the first command that printed them
    authors: dict[str, list[Any]] | None = None


# LineAttribution's fields after ``line``, in its order (entries are built positionally)
_FIELDS = (
    "text",
    "commit",
    "session",
    "source",
    "confidence",
    "written_at",
    "commit_time",
    "orig_path",
    "orig_line",
    "edit_ord",
    "via",
)


_ROW = operator.attrgetter(*_FIELDS)


def entry_from(result: FileBlame, commit: str, data: bytes, relpath: str) -> Entry:
    """A snapshot of ``result`` to keep (each line's fields as a tuple: a command may
    change its lines afterwards, ``--reverse`` their commits)."""
    orig = sorted({ln.orig_path for ln in result.lines if ln.orig_path} | {relpath})
    return Entry(
        commit=commit,
        data_hash=content_hash(data),
        orig_paths=orig,
        lines=[_ROW(ln) for ln in result.lines],
        note_sessions=dict(result.note_sessions),
    )


def entry_lines(entry: Entry, line_range: tuple[int, int] | None = None) -> list[LineAttribution]:
    """The entry's lines (``line_range``: those only, 1-based, inclusive)."""
    from deja_blame.attribution.model import LineAttribution

    start, end = (1, len(entry.lines)) if line_range is None else line_range
    rows = entry.lines[max(start, 1) - 1 : max(end, 0)]
    return [LineAttribution(i, *row) for i, row in enumerate(rows, max(start, 1))]


def load(conn: sqlite3.Connection, key: str, notes: str, root: str) -> Entry | None:
    """The entry under ``key`` if it is still valid for the index and the notes."""
    try:
        row = Q.cache_get(conn, "attribution_cache", key)
    except sqlite3.OperationalError:
        return None  # an index without the table (older schema, read-only): no cache
    if row is None:
        return None
    try:
        doc = orjson.loads(zlib.decompress(row[1]))
        entry = Entry(
            doc["commit"],
            doc["hash"],
            doc["orig"],
            doc["lines"],
            doc.get("sessions") or {},
            doc.get("authors") if isinstance(doc.get("authors"), dict) else None,
        )
    except (zlib.error, orjson.JSONDecodeError, KeyError, TypeError):
        return None  # a damaged entry: compute again
    if row[0] != token(conn, root, set(entry.orig_paths)):
        return None
    then = doc.get("notes")
    if not isinstance(then, str):
        return None
    if not notes_allow(root, then, notes, {str(ln[1]) for ln in entry.lines if ln[1]}):
        return None
    with _quiet():
        Q.cache_touch(conn, "attribution_cache", key, row[2] if len(row) > 2 else None)
    return entry


def store(
    conn: sqlite3.Connection,
    key: str,
    entry: Entry,
    notes: str,
    root: str,
    state: str | None = None,
) -> None:
    """Keep ``entry`` under ``key``; ``state``: the index's state it was computed with
    (``token()`` taken when it was; default: now)."""
    try:
        doc = orjson.dumps(
            {
                "commit": entry.commit,
                "hash": entry.data_hash,
                "orig": entry.orig_paths,
                "lines": entry.lines,
                "sessions": entry.note_sessions,
                "notes": notes,  # the notes' tips it was computed with
                **({"authors": entry.authors} if entry.authors is not None else {}),
            }
        )
    except TypeError:
        return  # a file name that is not UTF-8 (pathtext): not cached
    data = zlib.compress(doc, 1)
    with _quiet():  # (the token read too: a busy index)
        if state is None:
            state = token(conn, root, set(entry.orig_paths))
        Q.cache_put(conn, "attribution_cache", key, data, CACHE_ENTRIES, token=state)


def authors_of_lines(
    rows: list[Any], authors: dict[str, tuple[str, str, int]] | None
) -> dict[str, list[Any]] | None:
    """``authors`` to keep with an entry's ``rows`` (``Entry.lines``): only if they
    name every line's commit (a line range's, or git's answer that left one out,
    would make the next answer miss an author)."""
    if authors is None or not {row[1] for row in rows if row[1]} <= set(authors):
        return None
    return {c: list(a) for c, a in authors.items()}


def add_authors(
    conn: sqlite3.Connection, key: str, authors: dict[str, tuple[str, str, int]]
) -> None:
    """Keep the commits' authors with the entry under ``key`` (a commit's author never
    changes; the key names the replace refs and grafts that would show another):
    the next answer from it asks git for none. Nothing under ``DEJA_NO_CACHE``."""
    if not fast_path_enabled():
        return
    with _quiet():
        row = Q.cache_get(conn, "attribution_cache", key)
        if row is None:
            return
        try:
            doc = orjson.loads(zlib.decompress(row[1]))
        except (zlib.error, orjson.JSONDecodeError):
            return
        if not isinstance(doc, dict) or not isinstance(doc.get("lines"), list):
            return
        kept = authors_of_lines(doc["lines"], authors)
        if kept is None:
            return  # some commit's author is unknown (a line range, git left one out)
        doc["authors"] = kept
        try:
            data = zlib.compress(orjson.dumps(doc), 1)
        except TypeError:
            return  # a name that is not UTF-8: not kept
        Q.cache_replace_data(conn, "attribution_cache", key, data, row[1])


class _quiet:
    """A busy or read-only index only costs the cache."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: object, tb: object) -> bool:
        return isinstance(exc, sqlite3.OperationalError)


def fast_path_enabled() -> bool:
    return os.environ.get("DEJA_NO_CACHE", "") == ""
