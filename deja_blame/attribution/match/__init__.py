"""Stage 2: the matcher. Given a file's facts, which session wrote each line.

The rules, each a module of this package, read the ``FileFacts`` the first stage
gathered and the ``RuleFacts`` it made for them (``facts/rule_facts.py``: the
edits behind the writes, the file's versions, when the repository began), and
ask of its ``FactSource`` only what depends on what they matched (whether a
suffix-matched session belongs here, the writes of a split text, the winners'
names); none of them runs git, reads SQLite or starts a thread. In the order
they apply:

- ``lines.py``: a line is the latest write of its text before its commit, a run
  of neighbouring lines of one edit being the strongest evidence (trivial lines
  only inside such runs, or as a lone bracket edit in their commit's window at
  their place: ``lone.py``); a person's later write takes it away;
- ``before_history.py``: a session that wrote here before the file's first
  commit must have left most of its lines in that first version (another
  project once lived at this path);
- ``window.py``: a write older than the version its commit was made from, whose
  text was committed since, is stale (someone else brought it again);
- ``block.py``: a line its commit brought between lines of one edit, at that
  edit's place for its text, is the edit's (a rebased block's repeated lines);
- ``own_place.py``: a line an edit's write lands on, placed by that edit's line
  the file holds once in the same commit, is the edit's (the commit window
  opened to a rebased or split series' earlier commits);
- ``reflow.py``: lines a formatter split are the session's that wrote the line;
- ``trimmed.py``: a line a person trimmed (``};`` -> ``}``) between two lines of
  one edit keeps that edit's session;
- ``moves.py``: a block moved here from another file keeps its session;
- ``from_git_ai``: what is left unexplained, git-ai's notes may say.

``docs/engine.md`` tells the stages and the rules' order for a newcomer.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from deja_blame.attribution.match.before_history import strangers_before_history
from deja_blame.attribution.match.block import continue_blocks, placed_between
from deja_blame.attribution.match.clock import Deadlines
from deja_blame.attribution.match.lines import match_lines
from deja_blame.attribution.match.moves import keep_blocks, less_certain, short_sessions
from deja_blame.attribution.match.own_place import placed_by_own_lines
from deja_blame.attribution.match.reflow import reflow_matches
from deja_blame.attribution.match.trimmed import trimmed_lines
from deja_blame.attribution.match.window import CommitWindow
from deja_blame.attribution.model import format_time_epoch

if TYPE_CHECKING:
    from deja_blame.attribution.facts.edits import SessionEdits
    from deja_blame.attribution.facts.model import (
        BlameLine,
        FileFacts,
        LineTexts,
        MovedLines,
        WriteSet,
    )
    from deja_blame.attribution.facts.rule_facts import RuleFacts
    from deja_blame.attribution.facts.versions import FileHistory
    from deja_blame.attribution.match.lines import LineMatch
    from deja_blame.attribution.model import LineAttribution


def match_file(facts: FileFacts, given: RuleFacts | None) -> bool:
    """Give ``facts.lines`` their sessions from the index's writes (with the
    commit-window, block, reflow and trimmed rules), reading what stage 1 ``given``
    them (``FactSource.for_rules``; None: no index). Lines a current note settled
    (``facts.settled``) keep what it says. Whether the rules were asked (an index,
    and a line not settled): then the lines they left may have moved here from
    another file (``facts/moved.py``, ``moves.moved_here``, then ``match_moved``)."""
    if given is None or not facts.rules_run():
        return False
    open_lines = [not done for done in facts.settled] if any(facts.settled) else None
    attribute_lines(
        given,
        facts.lines,
        facts.texts,
        facts.blamed,
        facts.writes,
        facts.paths,
        facts.rev_time,
        only=open_lines,
    )
    return True


def match_moved(facts: FileFacts, moved: MovedLines, given: RuleFacts) -> set[str]:
    """The lines that moved here from another file, matched as their blame where they
    came from says against the writes to that file too (``given``: the rules' facts
    of those writes). The sessions given fewer moved lines here than a block
    (``moves.short_sessions``): where ``facts`` are a window's, the whole file's
    answer says which of their lines they keep (``keep_moved``)."""
    attribute_lines(
        given,
        facts.lines,
        facts.texts,
        moved.evidence,
        facts.writes,
        moved.paths,
        facts.rev_time,
        only=moved.moved,
    )
    return short_sessions(facts.lines, facts.texts.trivial, moved.moved, moved.left_file)


def keep_moved(
    facts: FileFacts, moved: MovedLines, whole: Mapping[str, set[int]] | None = None
) -> None:
    """A session keeps the lines matched as moved here only as a block (``moves.py``;
    in a window where its lines fall short, those the whole file gives it: ``whole``),
    less certain than lines matched in place."""
    keep_blocks(facts.lines, facts.texts.trivial, moved.moved, moved.left_file, whole)
    less_certain(facts.lines, moved.moved)


def attribute_lines(
    given: RuleFacts,
    lines: list[LineAttribution],
    line_texts: LineTexts,
    blamed: list[BlameLine | None],
    writes: WriteSet,
    paths: dict[int, bool],
    rev_time: float | None,
    only: list[bool] | None = None,
) -> None:
    """Match ``lines`` (their texts: ``line_texts``) against ``writes``; writes after the blamed revision cannot be
    in it (``rev_time``; the working tree: now), nor writes older than their
    line's commit window (``window.py``). ``only`` marks the lines to set; a line
    a commit's note already gave keeps it (the note wins over the index)."""
    if not writes:
        return
    path_ids = sorted(paths)
    exact_ids = [pid for pid, exact in paths.items() if exact]
    suffix_ids = [pid for pid, exact in paths.items() if not exact]
    fps, trivial = line_texts.fps, line_texts.trivial
    edits, history, source = given.edits, given.history, given.asks
    now = time.time() if rev_time is None else rev_time
    same_clock = given.same_clock  # sessions on git's clock: no skew (``clock.py``)
    # how late each session's write may be dated and be each line's source, made once
    # for the rules after the first (``match_lines`` makes its own, of ``rev_time``)
    deadlines = Deadlines.of(blamed, now, same_clock)
    try:
        window = CommitWindow(history, blamed, line_texts)
        lone_open: set[int] = set()  # lines a lone bracket edit left unplaced may be
        matches = match_lines(
            line_texts,
            blamed,
            writes,
            now=rev_time,
            final_fps=lambda sid: edits.final_fingerprints(sid, path_ids),
            has_exact=lambda sid: edits.edited_any(sid, exact_ids),
            stale=window.stale,
            fresh=window.fresh,
            floor=window.floor,
            added_lines=edits.added_lines,
            glance_added=edits.glance_added,
            added_fps=edits.added_fps,
            same_project=lambda sid: (
                False if source.wrote_outside_from_here(sid, suffix_ids) else source.belongs(sid)
            ),
            written_text=edits.written_text,
            position=edits.position,
            file_edits=edits.file_edits,
            lone_open=lone_open,
            same_clock=same_clock,
        )
        matches = _without_strangers_before_history(
            given.repository_start, edits, matches, writes, history, path_ids
        )
        matches = placed_between(line_texts, blamed, matches, writes, deadlines, edits.position)
        matches = placed_by_own_lines(
            line_texts, blamed, matches, writes, deadlines, edits.position
        )
        matches = continue_blocks(fps, trivial, blamed, matches, writes, deadlines, edits.position)
        matches = reflow_matches(
            given,
            line_texts,
            blamed,
            matches,
            paths,
            deadlines,
            window.existed,
            window.fresh,
            window.version,
        )
        matches = trimmed_lines(
            line_texts,
            matches,
            edits.added_bare,
            edits.added_fps,
            window.existed,
            lone_open,
        )
    finally:
        history.close()
    names = source.session_names({m.sid for m in matches if m is not None})
    when: dict[float, str] = {}
    for k, (ln, m) in enumerate(zip(lines, matches)):
        if m is None or ln.via == "note" or (only is not None and not only[k]):
            continue
        ln.session, ln.source = names.get(m.sid, (None, None))
        ln.confidence = m.confidence
        if m.at not in when:
            when[m.at] = format_time_epoch(m.at)
        ln.written_at = when[m.at]
        ln.edit_ord = m.edit_ord
        ln.via = "index"


def _without_strangers_before_history(
    repository_start: float | None,
    edits: SessionEdits,
    matches: list[LineMatch | None],
    writes: WriteSet,
    history: FileHistory,
    path_ids: list[int],
) -> list[LineMatch | None]:
    """``matches`` without the sessions of another project that lived at this path
    before the file's history began (``before_history.py``)."""

    def first_version() -> frozenset[int] | None:
        oldest = history.commits[-1]
        return history.fingerprints(oldest) if history.readable(oldest) else None

    # before the repository itself began (``repository_start``, read by stage 1 where
    # the file has a history): a write older than the file's history that came while
    # the repository was already there (a file renamed, added later) is this
    # project's work; only one older than the whole history may be another's
    strangers = strangers_before_history(
        {m.sid for m in matches if m is not None},
        writes,
        repository_start,
        first_version,
        lambda sid: edits.left_in_file(sid, path_ids),
    )
    if not strangers:
        return matches
    return [None if m is not None and m.sid in strangers else m for m in matches]


def from_git_ai(facts: FileFacts, authors: dict[int, Any]) -> None:
    """Lines deja's notes and index leave unexplained, from git-ai's notes (``authors``:
    line index -> what git-ai's note of its commit says of it, read by stage 1 for the
    lines left: ``notes_state.gitai_authors``): its sessions' lines (``via:
    "git-ai"``); lines it says a person wrote stay people's."""
    for k, ln in enumerate(facts.lines):
        who = authors.get(k)
        if who is None or who.human or ln.session is not None:
            continue
        ln.session, ln.source, ln.via = who.key, who.agent or "unknown", "git-ai"
        ln.confidence = facts.gitai_confidence
        facts.note_sessions.setdefault(who.key, who.info())
