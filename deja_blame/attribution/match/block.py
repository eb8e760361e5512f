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
line, both ways, so a block of lines that are all repeated texts
(``t.Parallel()`` / ``dir := setupGitRepo(t)``) is taken line by line from the
first line of it that is matched. Lone brackets are passed through, not given:
git's diff slides them, and on replayed real histories a person's ``}`` or
``* @api private`` typed beside a session's lines (or a bracket the matcher gave
on weaker evidence, as a chain's start) went to that session. A blank line the
chain reaches is given: git names the same commit for it as for the edit's line
beside it (a pair git slid onto an older commit's lines is not reached), and
without it a rebased session's two blank lines above its function went to
nobody once the gap rule (``lines._fill_gaps``) stopped giving a person's older
pair to a later write.
"""

from __future__ import annotations

from collections.abc import Callable

from deja_blame.attribution.facts.model import CLOCK_SKEW, BlameLine, Key, WriteSet
from deja_blame.attribution.match.lines import LineMatch
from deja_blame.index.fingerprint import fingerprint

CONFIDENCE = 0.85  # each line's text alone says little; its place in the edit does
_BLANK = fingerprint("")


def continue_blocks(
    fps: list[int],
    trivial: list[bool],
    blamed: list[BlameLine | None],
    matches: list[LineMatch | None],
    writes: WriteSet,
    now: float,
    position: Callable[[Key], int | None] | None = None,
) -> list[LineMatch | None]:
    """``matches`` with the unmatched lines of matched edits' blocks filled in (see the
    module). ``fps``: each line's fingerprint; ``trivial``: blank or a lone bracket;
    ``blamed``: each line's blame; ``now``: the limit for lines not yet committed;
    ``position(key)``: where a write landed in the session's file (0-based), None
    where its edit did not say."""
    out = list(matches)
    info = writes.info
    used = {(m.sid, m.edit_ord, m.idx) for m in out if m is not None}
    n = len(out)

    def follows(i: int, prev: Key, step: int) -> Key | None:
        """The write of line i that continues the block whose line ``i - step`` is
        ``prev``, if it meets the module's conditions."""
        bi, bj = blamed[i], blamed[i - step]
        if bi is None or bj is None or bi.commit != bj.commit:
            return None
        key = (prev[0], prev[1], prev[2] + step)
        w = info.get(key)
        if w is None or w[0] != fps[i] or w[2] or key in used:
            return None
        if position is not None and not _beside(position, prev, key, step):
            return None
        limit = (bi.commit_time if bi.commit is not None and bi.commit_time else now) + CLOCK_SKEW
        if w[1] > limit or _person_since(writes, fps[i], w[1], limit):
            return None
        return key

    for step in (1, -1):  # down from each matched line, then up
        prev: Key | None = None  # the write of the line before, in the block being followed
        for i in range(n) if step == 1 else range(n - 1, -1, -1):
            m = out[i]
            if m is not None:
                key = (m.sid, m.edit_ord, m.idx)
                # a bracket or blank line matched on its own starts no block
                prev = (
                    key
                    if not trivial[i] or (prev is not None and _next(prev, step) == key)
                    else None
                )
                continue
            got = None if prev is None else follows(i, prev, step)
            if got is not None and (not trivial[i] or fps[i] == _BLANK):
                w = info[got]
                out[i] = LineMatch(
                    sid=got[0], edit_ord=got[1], idx=got[2], at=w[1], confidence=CONFIDENCE, run=1
                )
                used.add(got)
            prev = got  # a bracket is passed, not given: its place is git's (its
            # diff slides them), and a person's "}" beside the session's lines is as likely
    return out


def _next(key: Key, step: int) -> Key:
    return (key[0], key[1], key[2] + step)


def _person_since(writes: WriteSet, fp: int, at: float, limit: float) -> bool:
    """Whether a person wrote this text (a USER diff block) after ``at``, by ``limit``."""
    info = writes.info
    return any(info[k][2] and at < info[k][1] <= limit for k in writes.by_fp.get(fp, ()))


def _beside(position: Callable[[Key], int | None], anchor: Key, key: Key, step: int) -> bool:
    """Whether the edit wrote ``key`` just below (``step`` 1) or above (-1) ``anchor``:
    both landed one line apart, or neither has a place (one block)."""
    here, there = position(key), position(anchor)
    if here is None or there is None:
        return here is None and there is None
    return here == there + step
