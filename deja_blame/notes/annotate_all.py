"""``deja annotate --all``: a note for every commit of the branch's history that
sessions touched, root commit included, at git's pace.

One ``git log --raw`` reads the history (``notes/history.py``: every commit's time
and paths, oldest first, from the first indexed session's start on), one SQL pass
the index's writes to those paths (``notes/derived_from.py``). A commit whose note
says it was computed from what the index holds now is up to date. A commit whose
files no session wrote by its time can hold only a block of session lines moved
from another file: it is derived only when its introduced lines say so
(``notes/worth.py``), and each derived commit blames only the files that can hold
a session's line. The others are derived (``notes/annotate.derive_commit``: the attribution's
own entry point, as ``deja annotate REV`` and the post-commit hook use it) and
written in batches, about one notes commit a second: an interrupted pass keeps
what it wrote, and the next one does only what is left.

A commit derived with no attributed line gets no note (as everywhere); that it
was looked at, and from what, is kept in ``.git/deja/history`` (``none <sha>
<digest>`` lines), so it is not derived again until a session's writes to its
files change (a commit none wrote the files of, until a session arrives).
``done <generation>`` records a complete pass and the index's
writes at the time (``index.queries.writes_generation``): the post-commit hook's
late pass runs the pass again only when they changed.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pygit2

from deja_blame import statefile
from deja_blame.attribution.facts.indexread import session_writes
from deja_blame.attribution.facts.settled import commit_none_value
from deja_blame.gitcli import git_errors
from deja_blame.gitutil import workdir
from deja_blame.index import queries as Q
from deja_blame.notes.annotate import (
    AnnotateResult,
    Derivation,
    derive_commit,
    own_document,
    prompts_opted_in,
    store_notes,
)
from deja_blame.notes.derived_from import SKEW, SessionWrites, is_stale, none_value
from deja_blame.notes.history import read_history
from deja_blame.notes.history_state import HistoryState
from deja_blame.notes.store import check_notes_ref, deja_dir, read_note_docs, ref_target
from deja_blame.notes.worth import files_worth_deriving

LOCK_FILE = "history.lock"
FLUSH_SECONDS = 1.0  # a notes commit about this often: what an interrupt may lose
FLUSH_COMMITS = 64


@dataclass
class HistoryResult:
    commits: int = 0  # of the branch's history, from the first session's start on
    touched: int = 0  # that sessions wrote to the files of, by their time
    fresh: int = 0  # whose note (or record of none) was up to date
    fresh_none: int = 0  # of those, the records of none (no attributed line: no note)
    derived: int = 0  # derived now
    written: list[str] = field(default_factory=list)  # notes written or updated
    left: int = 0  # touched, not up to date, not derived (out of time)
    busy: bool = False  # another pass holds the lock

    @property
    def complete(self) -> bool:
        return not self.left and not self.busy

    def to_json(self) -> dict[str, Any]:
        return {
            "commits": self.commits,
            "touched": self.touched,
            "fresh": self.fresh,
            "fresh_none": self.fresh_none,
            "derived": self.derived,
            "written": self.written,
            "left": self.left,
        }


# (done, to do, notes written so far): after each commit derived
Progress = Callable[[int, int, int], None]


def record_looked_at(repo: pygit2.Repository, conn: sqlite3.Connection, sha: str) -> None:
    """Record a commit derived with no line (the post-commit hook's), as a pass would:
    while the index's writes stay as the last complete pass saw them, blame then
    takes its lines for people's without matching them (``facts/settled.py``)."""
    count, _ = Q.earliest_session_start(conn)
    HistoryState(repo).record_none(sha, commit_none_value(conn, workdir(repo), sha, count))


def needs_pass(repo: pygit2.Repository, conn: sqlite3.Connection) -> bool:
    """Whether a history pass may have work: none completed yet, or the index's writes
    changed since the last one (cheap: one small query and one small file), or the
    last one did not say which notes it ended at (an older deja's record: blame
    settles from it as that deja did, and a pass records the tip), or that notes
    commit is gone (rewritten, then gc: blame cannot tell which notes changed)."""
    state = HistoryState(repo)
    if state.done != Q.writes_generation(conn) or state.done_notes is None:
        return True
    if state.done_notes:
        try:
            repo[state.done_notes]
        except git_errors():
            return True
    return False


@contextmanager
def history_lock(repo: pygit2.Repository, wait: bool) -> Iterator[bool]:
    """One history pass at a time per repository; yields whether this one has the lock
    (``wait``: until it is free). Without fcntl (Windows) every pass goes ahead."""
    try:
        import fcntl
    except ImportError:
        yield True
        return
    where = deja_dir(repo)
    fd = statefile.open_lock(where / LOCK_FILE) if statefile.ensure_dir(where) else None
    if fd is None:
        yield True
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def annotate_history(
    repo: pygit2.Repository,
    conn: sqlite3.Connection,
    rev: str = "HEAD",
    deadline: float | None = None,
    on_progress: Progress | None = None,
    include_prompts: bool | None = None,
) -> HistoryResult:
    """Write the notes of ``rev``'s history that are missing or stale, until ``deadline``
    (monotonic). The caller holds ``history_lock``."""
    check_notes_ref(repo)
    result = HistoryResult()
    if repo.head_is_unborn:
        return result
    if include_prompts is None:
        include_prompts = prompts_opted_in(repo)
    generation = Q.writes_generation(conn)
    state = HistoryState(repo)
    count, first_start = Q.earliest_session_start(conn)
    moves_key = none_value({}, count)
    if not count:
        state.record_done(generation, ref_target(repo))
        return result
    root = workdir(repo)
    since = first_start - SKEW if first_start is not None else None
    commits = read_history(root, [rev], since)
    result.commits = len(commits)
    writes = session_writes(conn, str(root), {p for c in commits for p in c.paths})
    todo: list[tuple[str, dict[str, int], str, set[str] | None]] = []
    if writes.touched():
        for c in commits:
            local = writes.of(c)
            if local:
                noted, none, up_to_date = _current(
                    repo, c.sha, local, state, count, writes.after(c)
                )
                result.touched += 1
                if up_to_date:
                    result.fresh += 1
                    result.fresh_none += not noted
                else:
                    todo.append((c.sha, local, none, None))
                continue
            # no session wrote to its files: a block of their lines moved here from
            # another file is all it may hold (looked at again when the writes change)
            if state.none.get(c.sha) == moves_key or read_note_docs(repo, c.sha):
                continue
            commit = repo[c.sha].peel(pygit2.Commit)
            only = files_worth_deriving(repo, commit, conn, writes)
            if only:
                result.touched += 1
                todo.append((c.sha, local, moves_key, only))
            else:
                state.record_none(c.sha, moves_key)
    from deja_blame.attribution.facts.derived_blame import share_blames

    # oldest first: each file's blame at a commit is derived from its last one
    with share_blames(root):
        _derive_all(
            repo,
            conn,
            writes,
            todo,
            state,
            result,
            bool(include_prompts),
            deadline,
            on_progress,
        )
    if result.complete:
        state.record_done(generation, ref_target(repo))
    _index_notes(repo, conn, result.written)
    return result


def _current(
    repo: pygit2.Repository,
    sha: str,
    local: dict[str, int],
    state: HistoryState,
    count: int,
    after: dict[str, int],
) -> tuple[bool, str, bool]:
    """Of a commit sessions wrote to the files of: whether it has a note of its own,
    the value its record of no line would hold, and whether that note (or record) is
    up to date with the index's writes (``local``)."""
    own = own_document(read_note_docs(repo, sha), sha)
    none = none_value(local, count, after)
    if own is not None:
        return True, none, not is_stale(own.derived_from, local)
    return False, none, state.none.get(sha) == none


def unannotated(repo: pygit2.Repository, conn: sqlite3.Connection, rev: str = "HEAD") -> int | None:
    """How many commits of ``rev``'s history sessions wrote to the files of (by their
    time) have no up-to-date note or record of no line: what the next ``deja annotate
    --all`` would derive, the moved blocks aside. None when the last complete pass is
    current (``needs_pass``: one small query, no history read). Derives nothing; the
    history is read as the pass reads it (one ``git log`` from the first session's
    start, one SQL pass), so ``deja doctor`` can say a late transcript left a commit
    without its note."""
    if repo.head_is_unborn or not needs_pass(repo, conn):
        return None
    count, first_start = Q.earliest_session_start(conn)
    if not count:
        return None
    state = HistoryState(repo)
    since = first_start - SKEW if first_start is not None else None
    commits = read_history(workdir(repo), [rev], since)
    writes = session_writes(conn, str(workdir(repo)), {p for c in commits for p in c.paths})
    if not writes.touched():
        return 0
    left = 0
    for c in commits:
        local = writes.of(c)
        if local and not _current(repo, c.sha, local, state, count, writes.after(c))[2]:
            left += 1
    return left


def _index_notes(repo: pygit2.Repository, conn: sqlite3.Connection, commits: list[str]) -> None:
    """The notes just written, indexed (``notes/indexed.py``): blame after the pass
    reads rows, not the notes (a few ms a hundred notes, against a blame's wait)."""
    from deja_blame.notes.lookup import NotesLookup

    if not commits:
        return
    lookup = NotesLookup(repo, conn)
    lookup.prefetch()
    for sha in commits:
        lookup.noted(sha)
    lookup.save()


def _derive_all(
    repo: pygit2.Repository,
    conn: sqlite3.Connection,
    writes: SessionWrites,
    todo: list[tuple[str, dict[str, int], str, set[str] | None]],
    state: HistoryState,
    result: HistoryResult,
    include_prompts: bool,
    deadline: float | None,
    on_progress: Progress | None,
) -> None:
    batch: list[Derivation] = []
    nones_of: dict[str, str] = {}  # what a commit given no line is recorded with

    def flush() -> None:
        if not batch:
            return
        results: dict[str, AnnotateResult] = {}
        store_notes(repo, batch, include_prompts, f"deja annotate --all: {len(batch)}", results)
        for d in batch:
            r = results[d.sha]
            if r.written:
                result.written.append(d.sha)
            if r.note.is_empty():
                state.record_none(d.sha, nones_of[d.sha])
        result.derived += len(batch)
        batch.clear()

    last = time.monotonic()
    done = 0
    try:
        for sha, local, none, only in todo:
            if deadline is not None and time.monotonic() > deadline:
                break
            commit = repo[sha].peel(pygit2.Commit)
            if only is None:
                only = files_worth_deriving(repo, commit, conn, writes)
            batch.append(
                derive_commit(repo, commit, conn, include_prompts, derived_from=local, only=only)
            )
            nones_of[sha] = none
            done += 1
            if time.monotonic() - last > FLUSH_SECONDS or len(batch) >= FLUSH_COMMITS:
                flush()
                last = time.monotonic()
            if on_progress is not None:
                on_progress(done, len(todo), len(result.written))
    except BaseException:
        # Ctrl-C, the hook's budget: what was derived is written, the rest left for
        # the next pass (a failure inside the write itself is not retried here)
        try:
            flush()
        finally:
            result.left = len(todo) - result.derived
        raise
    flush()
    result.left = len(todo) - result.derived
