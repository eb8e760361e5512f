"""Where an edit without line numbers stood: its hunks found by their text in the file.

Claude Code's ``Edit`` without its ``structuredPatch`` and Codex's ``apply_patch``
give the text an edit replaced and wrote, not its place: the agent found the place
by the text. ``deja why`` and the hover showed such hunks under ``@@ ? @@``. Here
each hunk's written lines are looked for in the file as the edit left it (the
commit that holds the line asked about, or the working tree), starting from the
hunk that wrote that line, at the line's own place; the edit's other hunks are
taken in their order, each the nearest match after the one before (before the one
after, going back). A hunk that writes no line (a removal alone) or whose lines
are not there any more stays unplaced. The old side's start is the new side's
less what the edit's earlier hunks added and removed.

Pure: plain lists in, positions out.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence

# (removed, added) of each hunk, in the edit's order
HunkLines = tuple[Sequence[str], Sequence[str]]


def place_hunks(
    hunks: Sequence[HunkLines], lines: Sequence[str], line: int, text: str
) -> list[tuple[int, int] | None]:
    """Each hunk's (old_start, new_start), 1-based as in git's ``@@`` header, or None
    where it cannot be placed. ``lines``: the file after the edit (as far as it is
    known); ``line``: the place in it (1-based) of the line asked about, whose text
    is ``text``. Nothing is placed unless the hunk that wrote that line is found
    there or one hunk's lines stand at one place only."""
    spots = _all_spots([added for _, added in hunks], lines)
    anchor = _anchor(hunks, spots, lines, line, text)
    if anchor is None:
        return [None] * len(hunks)
    k0, p0 = anchor
    starts: list[int | None] = [None] * len(hunks)
    starts[k0] = p0
    end = p0 + len(hunks[k0][1])
    for k in range(k0 + 1, len(hunks)):  # spots are in order: the nearest by bisection
        j = bisect_left(spots[k], end)
        if j < len(spots[k]):
            starts[k] = spots[k][j]
            end = spots[k][j] + len(hunks[k][1])
    begin = p0
    for k in range(k0 - 1, -1, -1):
        j = bisect_right(spots[k], begin - len(hunks[k][1]))
        if j:
            starts[k] = begin = spots[k][j - 1]
    out: list[tuple[int, int] | None] = []
    grown = 0  # lines the edit's earlier hunks added, less those they removed
    for (removed, added), start in zip(hunks, starts):
        out.append(None if start is None else (start + 1 - grown, start + 1))
        grown += len(added) - len(removed)
    return out


def _all_spots(blocks: Sequence[Sequence[str]], lines: Sequence[str]) -> list[list[int]]:
    """Where (0-based) each block stands whole in ``lines``. Each is looked for by its
    rarest line (a block led by a blank line is not compared at every blank line),
    and the file is walked once for all of them (an edit of a thousand hunks)."""
    counts = Counter(lines)
    keys: list[tuple[int, str] | None] = []
    for added in blocks:
        at, key = min(enumerate(added), key=lambda x: counts.get(x[1], 0), default=(0, ""))
        keys.append((at, key) if added and counts.get(key) else None)
    wanted = {k[1] for k in keys if k is not None}
    where: dict[str, list[int]] = {}
    for i, t in enumerate(lines):
        if t in wanted:
            where.setdefault(t, []).append(i)
    spots: list[list[int]] = []
    for added, k in zip(blocks, keys):
        if k is None:
            spots.append([])
            continue
        n = len(added)
        starts = (i - k[0] for i in where[k[1]])
        spots.append(
            [p for p in starts if p >= 0 and p + n <= len(lines) and _stands_at(added, lines, p)]
        )
    return spots


def _stands_at(added: Sequence[str], lines: Sequence[str], p: int) -> bool:
    return all(lines[p + i] == t for i, t in enumerate(added))


def _anchor(
    hunks: Sequence[HunkLines],
    spots: list[list[int]],
    lines: Sequence[str],
    line: int,
    text: str,
) -> tuple[int, int] | None:
    """(hunk, start) to place the others from: the hunk that wrote the line asked
    about, where it stands whole around that line; else where most of its lines
    still stand with the line at its own place (a later edit of the session changed
    one of them before the commit); else a hunk found at one place only."""
    i = line - 1
    if not 0 <= i < len(lines) or lines[i] != text:
        return _only_one(spots)
    for k, (_, added) in enumerate(hunks):
        for p in spots[k]:
            if p <= i < p + len(added):
                return k, p
    for k, (_, added) in enumerate(hunks):
        for j, t in enumerate(added):
            p = i - j
            if t != text or p < 0 or p + len(added) > len(lines):
                continue
            same = sum(lines[p + m] == a for m, a in enumerate(added))
            if 2 * same > len(added):
                return k, p
    return _only_one(spots)


def _only_one(spots: list[list[int]]) -> tuple[int, int] | None:
    return next(((k, s[0]) for k, s in enumerate(spots) if len(s) == 1), None)
