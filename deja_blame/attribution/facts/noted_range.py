"""Stage 1 for a few lines (``deja why FILE:LINE``, ``deja blame -L``) the notes settle:
git's blame of those lines alone, no window around them.

Asked about a line range with nothing cached, ``gather_file`` blames the range and
``WINDOW_CONTEXT`` lines on each side (81 lines for one), because the rules that
read the index need the neighbours: a run of an edit's lines is the strongest
evidence, blank lines and brackets are matched only beside their edit's anchored
lines, reflow joins up to 12 lines, the lone-bracket and trimmed rules look at the
edit's lines around, a moved block is a block. On click's ``core.py`` git blames
that window in about 145 ms of CPU, one line in 5-130 ms.

None of those rules touches a settled line (``settled.py``): in an annotated
history the line's commit has a current note or a record of no line, and the line
is the note's session's or a person's, whatever its neighbours. So where a history
pass has completed, the range is blamed alone first (``git blame -L N,N``, what the
plain git question costs); when every line of it is settled, that is the answer,
and git blame of the window is never run. Otherwise (a commit newer than the pass,
a transcript that unsettled it) ``None``: the window, as before.

git's blame of a line does not depend on the other lines asked about with
the default options (each line follows the whole file's diffs); ``-M``, ``-C``
and ignored revisions move or guess lines by the blocks git tracks, so they keep
the window.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from deja_blame.attribution import blame_options
from deja_blame.attribution.facts.git_blame import start_blame
from deja_blame.attribution.facts.model import BlameLine, FileFacts, LineTexts
from deja_blame.attribution.facts.noted_lines import noted_line, sessions_noted
from deja_blame.attribution.facts.notes_state import NotesState
from deja_blame.attribution.facts.settled import settled_lines
from deja_blame.attribution.model import LineAttribution, NoteLookup
from deja_blame.gitutil import FileVersion, workdir

if TYPE_CHECKING:
    import pygit2


def noted_range(
    repo: pygit2.Repository,
    conn: sqlite3.Connection | None,
    version: FileVersion,
    note_lookup: NoteLookup | None,
    notes: NotesState,
    engine: str,
    line_range: tuple[int, int],
) -> FileFacts | None:
    """The facts of ``line_range`` of ``version`` when the notes settle every line of
    it (``FileFacts.settled`` all true: the matcher leaves them as the notes say);
    None when the caller must gather the window (``gather_file``)."""
    if conn is None or note_lookup is None or version.commit is None:
        return None
    if not blame_options.current().default or getattr(note_lookup, "noted", None) is None:
        return None
    passed = notes.passed
    if passed is None or not passed.completed:
        return None  # no history pass: few lines are settled, the window is needed
    texts = version.lines()
    lo, hi = line_range[0], min(line_range[1], len(texts))
    if lo < 1 or lo > hi:
        return None  # past the end: the window path says so
    root = workdir(repo)
    pending = start_blame(root, repo, version.relpath, version.commit, engine=engine, span=(lo, hi))
    found = {b.line: b for b in pending.result()}
    blamed: list[BlameLine | None] = [found.get(n) for n in range(lo, hi + 1)]
    lines: list[LineAttribution] = []
    times: dict[int, str] = {}
    for n, b in zip(range(lo, hi + 1), blamed):
        if b is None or b.commit is None:
            return None  # git said nothing of it, or it is not committed: not settled
        ln = LineAttribution(
            line=n,
            text=texts[n - 1],
            commit=b.commit,
            commit_time=b.commit_time,
            orig_path=b.orig_path,
            orig_line=b.orig_line,
        )
        noted_line(ln, version.relpath, note_lookup, times)
        lines.append(ln)
    settled = settled_lines(conn, str(root), note_lookup, passed, lines)
    if not all(settled):
        return None
    facts = FileFacts(
        version.relpath,
        str(root),
        version.commit,
        len(texts),
        lines,
        blamed,
        LineTexts.of(texts[lo - 1 : hi]),
    )
    facts.settled = settled
    facts.blame_authors = pending.authors()
    sessions_noted(facts, note_lookup)
    facts.gitai, facts.gitai_confidence = notes.gitai, notes.gitai_confidence
    save_notes = getattr(note_lookup, "save", None)
    if save_notes is not None:
        save_notes()  # the notes read from git, indexed for the next question
    return facts
