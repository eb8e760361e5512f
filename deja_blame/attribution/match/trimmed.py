"""A line a person trimmed: characters deleted from a session's line, none added.

Commander 9.0 dropped the ``;`` after every method (``};`` -> ``}``). Where a session
made that edit, its write of ``}`` is placed by ``lone.py``; where the person made
it, no write has the new text, and the line went to nobody. It is still made only
of the older session's characters, in their order: a line a person edited slightly
is judged by its tokens, not its whole text, and it keeps the session that wrote
them (as the real-history bench's truth does, and as ``git blame -w`` keeps a
re-indented line's author).

Its text says nothing; its place does. A line still unmatched is line ``k`` of an
edit when its neighbours above and below are that edit's lines ``k - d`` and
``k + e`` (the lines between them as many as in the edit: at most TRIM_GAP), and:

- it is a line of no words, and its text, white space aside, is line ``k``'s
  without its ``;`` (``is_trimmed``: a formatter's comma or bracket moved between
  lines is not a trim; on packaging's formatter variant that took two brackets);
- line ``k``'s text was in the file before the line's commit (that commit
  trimmed a line that was there);
- no lone edit of the line's own text left unplaced by ``lone.py`` may be this
  line (between the lines its session's neighbouring lone writes took): then the
  trim may be that session's, and the line is left to nobody rather than given
  to the older writer.

Less certain than a line matched as written: confidence 0.8.
"""

from __future__ import annotations

from collections.abc import Callable

from deja_blame.attribution.facts.model import LineTexts
from deja_blame.attribution.match.lines import LineMatch

TRIM_GAP = 3  # unmatched lines between two lines of one edit
CONFIDENCE = 0.8


def is_trimmed(short: str, trivial: bool, long_: str) -> bool:
    """Whether a line of no words (``trivial``), ``short`` without its white space
    (``LineTexts.bare``), is a written line (``long_``, without its white space too)
    with its statement's ``;`` deleted and nothing else changed. A bracket a formatter
    changed (``),`` -> ``)``, where it joined or split a call) is not: the formatter
    moved the line's characters between lines, and the bracket may be another's."""
    if not short or len(short) >= len(long_) or not trivial:
        return False
    return ";" not in short and long_.replace(";", "") == short


def trimmed_lines(
    texts: LineTexts,
    matches: list[LineMatch | None],
    added_bare: Callable[[int, int], list[str]],
    added_fps: Callable[[int, int], list[int]],
    existed: Callable[[int, int], bool],
    lone_open: set[int],
) -> list[LineMatch | None]:
    """``matches`` with the trimmed lines (see the module) given their edit's line.
    ``added_bare(sid, edit)``, ``added_fps(sid, edit)``: the edit's added lines without
    white space and their fingerprints (stage 1's: ``SessionEdits``); ``existed(i, fp)``: text of
    fingerprint ``fp`` was in the file before line i's commit; ``lone_open``: the
    lines a lone edit left unplaced may still be (``lone._left_open``)."""
    out = list(matches)
    n = len(out)
    # blank lines are interchangeable (a blank line may take another blank write of
    # the edit): they neither anchor nor break a gap
    blank = [not bare for bare in texts.bare]
    i = 0
    while i < n:
        above = out[i]
        if above is None or blank[i]:
            i += 1
            continue
        j = i + 1
        while j < n and (out[j] is None or blank[j]) and j - i <= TRIM_GAP + 1:
            j += 1
        gap = j - i - 1
        below = out[j] if j < n else None
        if (
            0 < gap <= TRIM_GAP
            and below is not None
            and (below.sid, below.edit_ord) == (above.sid, above.edit_ord)
            and below.idx - above.idx == gap + 1
        ):
            added = added_bare(above.sid, above.edit_ord)
            for k in range(1, gap + 1):
                idx = above.idx + k
                line = i + k
                if idx >= len(added):
                    break
                if (
                    out[line] is None
                    and is_trimmed(texts.bare[line], texts.trivial[line], added[idx])
                    and existed(line, added_fps(above.sid, above.edit_ord)[idx])
                    and line not in lone_open
                ):
                    out[line] = LineMatch(
                        sid=above.sid,
                        edit_ord=above.edit_ord,
                        idx=idx,
                        at=above.at,
                        confidence=CONFIDENCE,
                        run=1,
                    )
        i = j if j > i + 1 else i + 1
    return out
