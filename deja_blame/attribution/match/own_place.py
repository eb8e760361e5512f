"""A write its own edit places: the commit window opened to a session's earlier commits.

The commit-window rule (``window.py``) turns away a write older than the version
its line's commit was made from when its text was committed since: someone
brought it again. Work split over commits (``git add -p``) or rebased before it
was pushed breaks that reading: a rebase gives every commit of the series a new
time, seconds apart, so each write of the session is older than its commit's
parent, and a text the file held already (``if err != nil {``, ``return nil``,
``t.Parallel()``) was "committed since" in every earlier commit of the series.
The edit's lines the file holds once keep it (no commit had them); its repeated
lines went to nobody, or to a look-alike line of an older commit.

The write's own evidence says whose they are. An edit with a line matched in
the file whose text the file holds once (an *anchor*) is placed there: its other
lines landed where they stand from that line in the session's file (their
``position``: an edit's added lines are those of all its hunks, so a one-line
change three lines below is three lines below; an edit with no place, a
heredoc, counts its lines one below the other). A line still unmatched that
such an edit's write of its very text lands on, within ``REACH`` lines of the
anchor and brought by the anchor's commit (git blame names the same commit: the
commit brought the edit's work, not an older one), is that write's, when the
write was made before that commit and no person's write of the text came since.
A line elsewhere that took the write gives it up unless an anchor of the same
edit places it there too (then it keeps it).

Lines a person changed between the edit's lines (a reworded call, a renamed
variable) do not break the chain, as they break ``block.py``'s: the place is
told by the distance, and a person who inserted or deleted lines between moves
the line off it (then it is left). Blank lines and lone brackets are not given
(a person's ``}`` at that place is as likely: ``block.py`` passes them too).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable

from deja_blame.attribution.facts.model import BlameLine, Key, LineTexts, WriteSet
from deja_blame.attribution.match.block import CONFIDENCE, PersonWrites
from deja_blame.attribution.match.clock import Deadlines
from deja_blame.attribution.match.lines import LineMatch

# How far from its anchor a line may be placed. On entireio's recorded sessions the
# rebased lines found lie 1-6 lines from one; ``deja why`` matches 40 lines each side
# of its line, so the anchor of any line it asks about is in its window.
REACH = 20
# Passes at most: each pass after the first places only lines a pass gave back.
PASSES = 3


def placed_by_own_lines(
    texts: LineTexts,
    blamed: list[BlameLine | None],
    matches: list[LineMatch | None],
    writes: WriteSet,
    deadlines: Deadlines,
    position: Callable[[Key], int | None] | None = None,
) -> list[LineMatch | None]:
    """``matches`` with the lines an anchored edit's writes land on filled in (see the
    module). ``deadlines``: how late a session's write may be and still be in its
    line's commit (``clock.py``); ``position(key)``: where a write landed in the
    session's file (0-based), None where its edit did not say.

    A line that gave its write back may be another anchored edit's place (two edits
    of one text: the matcher gave the later edit's write to the earlier one's line,
    both fresh there), so the pass runs again while lines are given back, at most
    ``PASSES`` times."""
    out = list(matches)
    for _ in range(PASSES):
        out, freed = _one_pass(texts, blamed, out, writes, deadlines, position)
        if not freed:
            break
    return out


def _one_pass(
    texts: LineTexts,
    blamed: list[BlameLine | None],
    matches: list[LineMatch | None],
    writes: WriteSet,
    deadlines: Deadlines,
    position: Callable[[Key], int | None] | None,
) -> tuple[list[LineMatch | None], bool]:
    """One pass of ``placed_by_own_lines``: the matches, and whether a line gave its
    write back (and is open again)."""
    fps, trivial = texts.fps, texts.trivial
    counts = texts.file_counts if texts.file_counts is not None else Counter(fps)
    n = len(fps)
    out = list(matches)
    info = writes.info
    open_lines = [i for i in range(n) if out[i] is None and not trivial[i]]
    if not open_lines:
        return out, False
    where = position if position is not None else (lambda key: None)

    def place(key: Key) -> tuple[bool, int]:
        """Where the edit put the write: (by position, the line) or (by index)."""
        pos = where(key)
        return (True, pos) if pos is not None else (False, key[2])

    anchors: dict[tuple[int, int], list[tuple[int, Key]]] = {}
    for j, m in enumerate(out):
        if m is None or trivial[j] or counts[fps[j]] != 1:
            continue
        b = blamed[j]
        if b is None or b.commit is None:
            continue
        anchors.setdefault((m.sid, m.edit_ord), []).append((j, (m.sid, m.edit_ord, m.idx)))
    if not anchors:
        return out, False
    taken = {(m.sid, m.edit_ord, m.idx): i for i, m in enumerate(out) if m is not None}
    person = PersonWrites(writes)
    # candidates: (distance from the anchor, line, write), the nearest placed first
    found: list[tuple[int, int, Key]] = []
    for edit, rows in anchors.items():
        by_place: dict[tuple[bool, int], Key] = {}
        for idx, _ in writes.by_edit.get(edit, ()):
            key = (edit[0], edit[1], idx)
            w = info.get(key)
            if w is not None and not w[2]:
                by_place[place(key)] = key
        for j, anchor in rows:
            lo = bisect_left(open_lines, j - REACH)
            hi = bisect_right(open_lines, j + REACH)
            if lo == hi:
                continue
            exact, at_anchor = place(anchor)
            commit = blamed[j].commit  # type: ignore[union-attr]
            for i in open_lines[lo:hi]:
                bi = blamed[i]
                if bi is None or bi.commit != commit:
                    continue  # an older commit kept this line: not the edit's work here
                hit = by_place.get((exact, at_anchor + i - j))
                if hit is not None and info[hit][0] == fps[i]:
                    found.append((abs(i - j), i, hit))
    found.sort()

    def placed_at(o: int, key: Key) -> bool:
        """Whether an anchor of the write's own edit places it on line ``o`` too."""
        exact, here = place(key)
        for j, anchor in anchors.get((key[0], key[1]), ()):
            a_exact, at_anchor = place(anchor)
            if abs(o - j) <= REACH and a_exact == exact and at_anchor + o - j == here:
                return True
        return False

    freed = False
    for _, i, key in found:
        if out[i] is not None:
            continue
        at = info[key][1]
        if not person.kept(fps[i], at, deadlines.of_session(i, key[0])):
            continue
        other = taken.get(key)
        if other is not None:
            if placed_at(other, key):
                continue  # its own edit places it there as well: it keeps it
            out[other] = None
            freed = True
        out[i] = LineMatch(
            sid=key[0], edit_ord=key[1], idx=key[2], at=at, confidence=CONFIDENCE, run=1
        )
        taken[key] = i
    return out, freed
