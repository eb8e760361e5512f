"""Blame one file: the attribution cache, else the two stages (``facts``, ``match``).

This is the library entry point behind ``deja blame``, ``deja why`` and the
notes: ``blame_file`` returns plain data (``FileBlame``), nothing is printed.
Attribution already stored in a commit's note (``refs/notes/deja``) is used
first when a ``note_lookup`` is given: a fresh clone without transcripts still
gets answers, and where a note and the index disagree the note wins.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from deja_blame.attribution import cache
from deja_blame.attribution.answer import finish_answer, from_entry
from deja_blame.attribution.facts.notes_state import gitai_authors
from deja_blame.attribution.facts.question import Question, of_question
from deja_blame.attribution.model import FileBlame, NoteLookup
from deja_blame.gitutil import FileVersion, read_versions, workdir
from deja_blame.later import defer
from deja_blame.notes.lookup import notes_besides
from deja_blame.notes.store import NotesTips

if TYPE_CHECKING:
    import pygit2

    from deja_blame.attribution.facts.model import FileFacts, MovedLines
    from deja_blame.notes.gitai import GitAiLookup
    from deja_blame.notes.history_state import HistoryState


def blame_file(
    repo: pygit2.Repository,
    relpath: str,
    rev: str | None,
    conn: sqlite3.Connection | None,
    line_range: tuple[int, int] | None = None,
    note_lookup: NoteLookup | None = None,
    engine: str = "auto",
    before_match: Callable[[], None] | None = None,
    focus: str | None = None,
    *,
    tips: NotesTips,
) -> FileBlame:
    """Attribute every line of ``relpath`` at ``rev`` (None: the working tree).

    ``focus`` (a commit, with ``rev``): only the lines that commit brought are
    matched (a commit's note needs no other); the others keep what the notes say,
    and the answer, partial, is not cached.

    The whole file's answer at a commit is kept in the attribution cache
    (``cache``); the working tree is HEAD's answer plus its uncommitted lines.
    With ``line_range`` and nothing cached, only the range (and some context)
    is blamed and matched. ``before_match`` runs while git blame works in the
    background (deja blame reads new transcript lines into the index there).
    ``tips``: the notes' refs as the caller read them, once for the question
    (``notes.store.read_tips``; its notes lookup is made from the same read).
    Reads the notes besides deja's own and the file's versions, then
    ``blame_versions``.
    """
    gitai, history = notes_besides(repo, conn, note_lookup, tips, focus)
    versions = read_versions(repo, relpath, rev)
    return blame_versions(
        repo,
        versions,
        conn,
        line_range,
        note_lookup,
        engine,
        before_match,
        focus,
        tips=tips,
        gitai=gitai,
        history=history,
    )


def blame_versions(
    repo: pygit2.Repository,
    versions: tuple[FileVersion, FileVersion | None],
    conn: sqlite3.Connection | None,
    line_range: tuple[int, int] | None = None,
    note_lookup: NoteLookup | None = None,
    engine: str = "auto",
    before_match: Callable[[], None] | None = None,
    focus: str | None = None,
    *,
    tips: NotesTips,
    gitai: GitAiLookup | None,
    history: HistoryState | None,
) -> FileBlame:
    """``blame_file``'s answer from what the question read already: the file's
    ``versions`` (``gitutil.read_versions``), the notes' ``tips``, deja's notes
    (``note_lookup``) and the others (``gitai``, ``history``:
    ``notes.lookup.notes_besides``)."""

    def question(version: FileVersion, focus: str | None) -> Question:
        return Question(
            repo, version, note_lookup, tips, gitai, history, engine, before_match, focus=focus
        )

    result = _answer(repo, conn, versions, line_range, focus, question)
    return finish_answer(conn, result, line_range)


def _answer(
    repo: pygit2.Repository,
    conn: sqlite3.Connection | None,
    versions: tuple[FileVersion, FileVersion | None],
    line_range: tuple[int, int] | None,
    focus: str | None,
    question: Callable[[FileVersion, str | None], Question],
) -> FileBlame:
    """``blame_file``'s answer before it is finished (its sessions named, its range cut);
    ``versions``: the file at the revision asked (a commit's, or the working tree's),
    and HEAD's beside the working tree's; ``question``: the question about a version
    of the file (``Question``)."""
    work, at_head = versions
    if work.commit is not None:
        return _at_commit(question(work, focus), conn, line_range, rev=work.commit)
    if at_head is None or at_head.is_binary:
        return _compute(question(work, None), conn)
    if at_head.data == work.data:
        return _at_commit(question(at_head, None), conn, line_range, rev=None)
    head_result = _at_commit(question(at_head, None), conn, None, rev=None)
    from deja_blame.attribution.worktree import overlay

    return overlay(conn, head_result, work.data, str(workdir(repo)), work.relpath)


def _at_commit(
    q: Question,
    conn: sqlite3.Connection | None,
    line_range: tuple[int, int] | None,
    rev: str | None,
) -> FileBlame:
    """The file at a commit (``q.version``): from the attribution cache, or computed
    (and cached). With ``line_range`` and nothing cached, only a window around the
    range; the caller filters to the range (``finish_answer``)."""
    version = q.version
    assert version.commit is not None
    root = str(workdir(q.repo))
    if conn is None:
        result = _compute(replace(q, focus=None), conn)
        result.rev = rev
        return result
    notes = cache.notes_text(q.tips)
    key = cache.entry_key(
        root, version.commit, version.relpath, q.engine, cache.notes_read_by(q.note_lookup)
    )
    use_cache = key is not None and cache.cacheable()  # no key: replace refs unread
    # DEJA_NO_CACHE: computed afresh (and still written)
    entry = (
        cache.load(conn, key, notes, root)
        if key is not None and use_cache and cache.fast_path_enabled()
        else None
    )
    if entry is not None and entry.data_hash == cache.content_hash(version.data):
        result = from_entry(entry, version.relpath, rev, root)
        result.cache_key = key
        return result
    if line_range is not None or q.focus is not None:
        # one line or a few, or one commit's lines: only those matched; nothing cached
        result = _compute(replace(q, window=line_range), conn)
        result.rev = rev
        return result
    result = _compute(q, conn)
    if use_cache and key is not None:
        # kept once the answer is out (``later``): nobody waits on the cache's write
        entry = cache.entry_from(result, version.commit, version.data, version.relpath)
        commit, relpath = version.commit, version.relpath
        # the index's state the answer was computed with, taken now: a session read in
        # before the deferred write must make this entry stale, not be taken into it
        token = cache.token(conn, root, set(entry.orig_paths))

        def keep() -> None:
            # the authors the output asked for by now (``FileBlame.keeps_authors``)
            entry.authors = cache.authors_of_lines(entry.lines, result.authors)
            cache.store(conn, key, entry, notes, root, state=token)
            from deja_blame.attribution.facts.early import note_answered

            note_answered(root, commit, relpath)

        defer(keep)
        result.cache_key = key
        result.keeps_authors = True
    result.rev = rev
    return result


def _compute(q: Question, conn: sqlite3.Connection | None) -> FileBlame:
    """The two stages: the file's facts (git's blame, the notes, the index's writes),
    then the matcher. With a window, the lines of the window and its context only
    (the window's lines alone where the notes settle them all: ``noted_range``);
    with ``focus``, the lines of that commit only."""
    facts = _matched(q, conn)
    authors = gitai_authors(facts)
    if authors:
        from deja_blame.attribution.match import from_git_ai

        from_git_ai(facts, authors)  # what is left, git-ai's notes may explain
    return FileBlame(
        path=facts.path,
        rev=q.version.commit,
        root=facts.root,
        lines=facts.lines,
        total_lines=facts.total_lines,
        note_sessions=facts.note_sessions,
        blame_authors=facts.blame_authors,
    )


def _matched(q: Question, conn: sqlite3.Connection | None) -> FileFacts:
    """``_compute``'s facts (stage 1's, ``of_question``), matched by the rules and the
    moves rule (git-ai's notes not yet asked)."""
    got = of_question(q, conn)
    facts = got.file
    if got.rules is None:
        # no rule has a line to match (every line settled by the notes, or no index):
        # the matcher is not even loaded
        return facts
    from deja_blame.attribution.match import keep_moved, match_file, match_moved

    if match_file(facts, got.rules):
        source = got.source
        assert conn is not None and source is not None
        # the lines the rules left: stage 1 asks where they may have come from, stage 2
        # judges which moved here from another file, stage 1 reads the writes to those
        # files, and stage 2 matches the moved lines against them
        moved = _moved(conn, facts)
        if moved is not None:
            short = match_moved(facts, moved, source.for_moved(facts, moved))
            whole = None
            if short and q.window is not None and q.focus is None and _part_of_file(facts):
                # a window sees too few of these sessions' moved lines: the whole
                # file's answer says which they keep
                whole = _given_by_whole_file(q.whole_file(), conn)
            keep_moved(facts, moved, whole)
    return facts


def _moved(conn: sqlite3.Connection, facts: FileFacts) -> MovedLines | None:
    """Which lines the rules left moved here from another file: stage 1 reads where they
    may have come from (``where_from``), stage 2 judges (``moved_here``), in rounds:
    where the judgement lacked answers of git's history or the index, stage 1 reads
    them (``answer_asked``) and it judges again, until it lacks none."""
    from deja_blame.attribution.facts.moved import answer_asked, where_from
    from deja_blame.attribution.match.moves import moved_here

    found = where_from(conn, facts)
    if found is None:
        return None
    judged = moved_here(facts, found)
    while judged.asked:
        answer_asked(found, judged.asked)
        judged = moved_here(facts, found)
    return judged.moved


def _part_of_file(facts: FileFacts) -> bool:
    """Whether ``facts`` are a window's: not every line of the file."""
    return bool(facts.lines) and (
        facts.lines[0].line > 1 or facts.lines[-1].line < facts.total_lines
    )


def _given_by_whole_file(q: Question, conn: sqlite3.Connection) -> dict[str, set[int]]:
    """Each session -> the lines the whole file's answer gives it (git-ai's notes
    aside): what a window's moves rule keeps a session's moved lines by where the
    window sees too few of them (``match.moves.keep_blocks``). Costs the whole
    file's answer; none is cached (a cached answer would have answered the window)."""
    whole = _matched(q, conn)
    given: dict[str, set[int]] = {}
    for ln in whole.lines:
        if ln.session is not None:
            given.setdefault(ln.session, set()).add(ln.line)
    return given
