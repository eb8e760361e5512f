"""A block one edit wrote, brought by one commit: its repeated lines are the edit's too.

The commit-window rule (``window.py``) turns away a write older than the version
its line's commit was made from when its text was committed since: someone
brought it again. For a text the file holds many times (Go's ``if err != nil {``,
a test's ``dir := t.TempDir()``, ``require.NoError(t, err)``) it always was, in
some other test. Work rebased before it was pushed, or split over several
commits, leaves every write of a session older than its commit's parent (on the
recorded sessions of a real Go repository the parent is often seconds older than
the commit): the block's own lines keep the edit (no commit had them before),
and its repeated lines, between them, went to nobody.

Their place says whose they are. A line still unmatched is line ``k + 1`` of an
edit when the line above it is that edit's line ``k`` (or the line below it line
``k - 1``), and:

- it has the text of the edit's line ``k + 1`` and no other line took that write;
- the edit wrote its lines ``k`` and ``k + 1`` one below the other (``position``:
  an edit's added lines are those of all its hunks, and the last line of one hunk
  is followed by the first of the next, which landed further down); where the
  edit says no place (``cat >> f <<EOF``, a block without ``@@`` headers) its
  lines are one block;
- git blame names the same commit for it as for that neighbour (the commit
  brought both: a line an older commit kept is not part of this block);
- the write was made before that commit, and no person's write of its text
  (a USER diff block) came after it.

The rule runs out from every matched line that is not a lone bracket or blank
line, both ways, at most ``REACH`` lines, so a block of lines that are all repeated texts
(``t.Parallel()`` / ``dir := setupGitRepo(t)``) is taken line by line from the
first line of it that is matched. Lone brackets are passed through, not given:
git's diff slides them, and on replayed real histories a person's ``}`` or
``* @api private`` typed beside a session's lines (or a bracket the matcher gave
on weaker evidence, as a chain's start) went to that session. A blank line the
chain reaches is given: git names the same commit for it as for the edit's line
beside it (a pair git slid onto an older commit's lines is not reached), and
without it a rebased session's two blank lines above its function went to
nobody once the gap rule (``lines._fill_gaps``) stopped giving a person's older
pair to a later write. A line passed
needs only the edit's text and place: git may blame a blank line or bracket on an
older commit (its diff slid it), and the matcher may have given its write to a blank
line elsewhere (recorded sessions of a real Go repository: the chain stopped there,
and the block's ``repo, err := git.PlainOpen(dir)`` below it went to nobody); a
line given (a blank one too) must be one the block's commit brought.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Callable

from deja_blame.attribution.facts.model import (
    BLANK_FP,
    BlameLine,
    Key,
    LineTexts,
    WriteSet,
)
from deja_blame.attribution.match.clock import Deadlines
from deja_blame.attribution.match.lines import LineMatch

CONFIDENCE = 0.85  # each line's text alone says little; its place in the edit does
# how far a block runs from the last line an earlier rule matched: ``deja why`` and
# ``blame -L`` match a window of ``facts.gather.WINDOW_CONTEXT`` lines each side, and
# must see the line the block runs from to give the answer blame gives
REACH = 40


def continue_blocks(
    fps: list[int],
    trivial: list[bool],
    blamed: list[BlameLine | None],
    matches: list[LineMatch | None],
    writes: WriteSet,
    deadlines: Deadlines,
    position: Callable[[Key], int | None] | None = None,
) -> list[LineMatch | None]:
    """``matches`` with the unmatched lines of matched edits' blocks filled in (see the
    module). ``fps``: each line's fingerprint; ``trivial``: blank or a lone bracket;
    ``blamed``: each line's blame; ``deadlines``: how late a session's write may be
    dated and be each line's source (``clock.py``); ``position(key)``: where a write
    landed in the session's file (0-based), None where its edit did not say."""
    out = list(matches)
    info = writes.info
    used = {(m.sid, m.edit_ord, m.idx) for m in out if m is not None}
    given = [False] * len(out)  # lines this rule gave
    n = len(out)
    person = PersonWrites(writes)

    def follows(i: int, prev: Key, step: int) -> Key | None:
        """The write of line i that continues the block whose line ``i - step`` is
        ``prev``: the edit's next line, with line i's text, landed beside it."""
        key = (prev[0], prev[1], prev[2] + step)
        w = info.get(key)
        if w is None or w[0] != fps[i] or w[2]:
            return None
        if position is not None and not _beside(position, prev, key, step):
            return None
        return key

    def givable(i: int, key: Key, anchor: BlameLine | None) -> bool:
        """Whether line i may be given ``key``: the block's commit brought it (the
        commit of its last line not blank nor a bracket, blamed as ``anchor``), no
        other line has the write, made before the commit and no person's since."""
        bi = blamed[i]
        if bi is None or anchor is None or bi.commit != anchor.commit or key in used:
            return False
        return person.kept(fps[i], info[key][1], deadlines.of_session(i, key[0]))

    for step in (1, -1):  # down from each matched line, then up
        prev: Key | None = None  # the write of the line before, in the block being followed
        anchor: BlameLine | None = None  # the blame of its last line not blank nor a bracket
        reach = 0  # lines since the last line an earlier rule matched
        for i in range(n) if step == 1 else range(n - 1, -1, -1):
            m = out[i]
            key = None if m is None else (m.sid, m.edit_ord, m.idx)
            if key is not None and not trivial[i]:
                if not given[i]:
                    reach = 0
                prev, anchor = key, blamed[i]
                continue
            reach += 1
            if prev is None or reach > REACH:
                prev = None
                continue
            if key is not None and _next(prev, step) == key:
                prev = key  # a bracket or blank line matched in the block's run
                continue
            got = follows(i, prev, step)
            if got is not None and not trivial[i] and not givable(i, got, anchor):
                got = None  # the block ends here
            if (
                got is not None
                and (not trivial[i] or fps[i] == BLANK_FP)
                and givable(i, got, anchor)
            ):
                w = info[got]
                out[i] = LineMatch(
                    sid=got[0], edit_ord=got[1], idx=got[2], at=w[1], confidence=CONFIDENCE, run=1
                )
                used.add(got)
                given[i] = True
            prev = got  # a bracket is passed, not given: its place is git's (its diff
            # slides them: another commit may have it), and a person's "}" beside the
            # session's lines is as likely; a blank line the block's commit brought is given
    return out


def placed_between(
    texts: LineTexts,
    blamed: list[BlameLine | None],
    matches: list[LineMatch | None],
    writes: WriteSet,
    deadlines: Deadlines,
    position: Callable[[Key], int | None] | None = None,
) -> list[LineMatch | None]:
    """``matches`` with the lines between two lines of one edit filled in, where the
    edit placed them exactly: two lines the file holds once (``unique``) matched to
    lines ``a`` and ``b`` of one edit, as far apart in the file as in the edit, and
    every line between with the text of the edit's line at that distance, written
    one below the other (``position``). A line between that its commit brought
    (the commit of the line above it) and no rule matched is that edit's line,
    although the file holds its text more than once: a line elsewhere that took the
    write (a look-alike block an older commit brought) gives it up.

    Work rebased before it was pushed makes every write older than its commit's
    parent, and the commit-window rule turns away a write whose text an older
    commit of the pair brought since (``t.Parallel()``, ``state := &State{``): the
    edit's repeated lines went to the older commit's look-alike test and their own
    lines to nobody (entireio ``a5eca19c``, ``session/state_test.go``). Blank lines
    between are given, lone brackets passed, as ``continue_blocks`` does: given, a
    person's ``}`` inside a session's placed block went to the session in 3 variants
    of immer's replayed history. A write must be in its line's commit by its
    session's deadline there (``deadlines``: ``clock.py``)."""
    fps, trivial = texts.fps, texts.trivial
    counts = texts.file_counts if texts.file_counts is not None else Counter(fps)
    out = list(matches)
    info = writes.info
    # the matched lines of each edit, by their distance from the edit's lines (a
    # block the edit placed keeps one distance all through it)
    rows: dict[tuple[int, int, int], list[int]] = {}
    for i, m in enumerate(out):
        if m is not None and not trivial[i]:
            rows.setdefault((m.sid, m.edit_ord, i - m.idx), []).append(i)
    taken = {(m.sid, m.edit_ord, m.idx): i for i, m in enumerate(out) if m is not None}
    person = PersonWrites(writes)
    for (sid, edit, shift), lines in rows.items():
        if not any(counts[fps[i]] == 1 for i in lines):
            continue  # nothing places the edit here: its texts are all repeated
        spans = _spans(
            lines, [counts[fps[i]] == 1 for i in lines], fps, sid, edit, shift, info, position
        )
        for i, j in spans:
            anchor = blamed[i]
            for k in range(i + 1, j):
                key = (sid, edit, k - shift)
                bk = blamed[k]
                if out[k] is not None or bk is None or anchor is None:
                    continue
                if bk.commit != anchor.commit or (trivial[k] and fps[k] != BLANK_FP):
                    continue  # a lone bracket is passed, as continue_blocks passes it
                at = info[key][1]
                if not person.kept(fps[k], at, deadlines.of_session(k, sid)):
                    continue
                other = taken.pop(key, None)
                if other is not None:
                    out[other] = None
                out[k] = LineMatch(
                    sid=sid, edit_ord=edit, idx=key[2], at=at, confidence=CONFIDENCE, run=1
                )
                taken[key] = k
    return out


def _spans(
    lines: list[int],
    unique: list[bool],
    fps: list[int],
    sid: int,
    edit: int,
    shift: int,
    info: dict[Key, tuple[int, float, bool, bool, int]],
    position: Callable[[Key], int | None] | None,
) -> list[tuple[int, int]]:
    """Of the stretches between consecutive ``lines`` (matched to one edit at one
    distance), those the edit placed: each has the edit's texts all through it, and
    a chain of such stretches reaches it from a line the file holds once."""
    ok = [
        _placed(fps[i : j + 1], [(sid, edit, k - shift) for k in range(i, j + 1)], info, position)
        for i, j in zip(lines, lines[1:])
    ]
    reached = [False] * len(ok)
    for u, alone in enumerate(unique):
        if not alone:
            continue
        for step, start in ((1, u), (-1, u - 1)):
            s = start
            while 0 <= s < len(ok) and ok[s] and not reached[s]:
                reached[s] = True
                s += step
    return [(lines[s], lines[s + 1]) for s, done in enumerate(reached) if done]


def _placed(
    fps: list[int],
    keys: list[Key],
    info: dict[Key, tuple[int, float, bool, bool, int]],
    position: Callable[[Key], int | None] | None,
) -> bool:
    """Whether the edit's lines ``keys`` have the texts ``fps`` in order, none a
    person's, and were written one below the other."""
    for fp, key in zip(fps, keys):
        w = info.get(key)
        if w is None or w[0] != fp or w[2]:
            return False
    return position is None or all(
        _beside(position, keys[d - 1], keys[d], 1) for d in range(1, len(keys))
    )


def _next(key: Key, step: int) -> Key:
    return (key[0], key[1], key[2] + step)


class PersonWrites:
    """When people wrote each text (USER diff blocks), sorted, made once per text: a
    blank line's writes are tens of thousands with 10,000 sessions, and each line the
    rule looked at went over all of them."""

    def __init__(self, writes: WriteSet) -> None:
        self._writes = writes
        self._times: dict[int, list[float]] = {}

    def since(self, fp: int, at: float, limit: float) -> bool:
        """Whether a person wrote this text after ``at``, by ``limit``."""
        times = self._times.get(fp)
        if times is None:
            info = self._writes.info
            times = self._times[fp] = sorted(
                info[k][1] for k in self._writes.by_fp.get(fp, ()) if info[k][2]
            )
        j = bisect_right(times, at)  # the first made after ``at``
        return j < len(times) and times[j] <= limit

    def kept(self, fp: int, at: float, limit: float) -> bool:
        """Whether a session's write of this text made at ``at`` can still be its
        line's by ``limit`` (the line's commit, ``clock.Deadlines``): made by then, and
        no person wrote the text in between."""
        return at <= limit and not self.since(fp, at, limit)


def _beside(position: Callable[[Key], int | None], anchor: Key, key: Key, step: int) -> bool:
    """Whether the edit wrote ``key`` just below (``step`` 1) or above (-1) ``anchor``:
    both landed one line apart, or neither has a place (one block)."""
    here, there = position(key), position(anchor)
    if here is None or there is None:
        return here is None and there is None
    return here == there + step
