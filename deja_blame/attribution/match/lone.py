"""A lone bracket edit: a session's small edit that wrote only trivial lines.

``};`` -> ``}`` (a linter's rule adopted), a blank line added between two
functions: the edit wrote a ``}`` or a blank line and nothing else, so no run
of its lines passes through a non-trivial line and no neighbour of its own
edit anchors it (``lines._fill_gaps``). Its text alone says nothing: every file
holds hundreds of ``}``. Its time and place do. The write is the line's source
when all of these hold:

- it was made inside the line's commit window: after the version the line's
  commit was made from (``floor``), before the commit (plus clock skew);
- its edit is small: at most LONE_LINES added lines, all of them trivial (an
  edit that also wrote a non-trivial line is placed by that line, or not at all);
- it has the line's exact text: a bracket's indent is all it says of which
  block it closes;
- it landed where the commit put the line: the write's place in the session's
  file (0-based) is the line's place in the commit's version (blame's original
  line), or is within SHIFT_SLACK of it once carried through the session's
  later edits of the file made by the commit (``carried``: their hunks say how
  many lines each put above it; an agent that fixes a file from the bottom up
  moves every bracket it wrote before), or once shifted as much as the nearest
  line (where written) the session wrote for that commit and the matcher gave
  it (``_Shifts``: what later edits put above both). Without either, a place
  that is merely near is not enough: on commander's history a person's own
  ``}`` seven lines from a session's took its write;
- it is the latest such write there: a later write of the same text at the same
  place (the person's, reported by the transcript) takes the line away.

A block the person deleted (or typed) between two of the session's edits is in no
transcript: every bracket the session carried below it is off by the block's
length, each by the same count. Of the writes still unplaced after that, a run of
at least SHARED_RUN neighbours (in the session's file, in order) whose carried
places are each the same count of lines from an unmatched line of their text in
the commit's version is placed at those lines (``_shared_shifts``): one count
explaining a run of brackets is the person's block, where a single bracket that
far from its place could be anyone's. Where another count explains as long a run
of the same writes (methods of one length, their brackets evenly spaced), neither
is taken. On commander's history 9.0's session fixed
`};` bottom-up while the person deleted an 8-line block above some of them: 16
brackets of ``plain`` were missed.

A ``}`` a person typed elsewhere in the same commit has no write at its place;
one an older session wrote was committed before the window opened.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable

from deja_blame.attribution.facts.model import BlameLine, Hunks, Key, WriteSet
from deja_blame.index.fingerprint import is_trivial

LONE_LINES = 3  # added lines: a bracket, a blank line or two beside it
ANCHOR_LINES = 40  # how near (where written) a line of the session must be to lend its shift
SHIFT_SLACK = 1  # lines the shifted place may miss by
SHARED_RUN = 2  # neighbouring writes one unseen shift must explain
SHARED_REACH = 80  # lines a shared shift may span (a deleted block and a bracket's method)

# (edit ord, time, hunks) of each edit a session made of one file, in order
FileEdits = Callable[[int, int], list[tuple[int, float | None, Hunks]]]


def place_lone_edits(
    chosen: list[tuple[Key, int] | None],
    texts: list[str],
    fps: list[int],
    trivial: list[bool],
    blamed: list[BlameLine | None],
    writes: WriteSet,
    used: set[Key],
    limits: list[float],
    floor: Callable[[int], float | None],
    position: Callable[[Key], int | None],
    added_lines: Callable[[int, int], list[str]],
    file_edits: FileEdits | None = None,
    left_open: set[int] | None = None,
    late: Callable[[int, int, float], bool] | None = None,
    glance_added: Callable[[int, int], list[str]] | None = None,
) -> None:
    """Give each trivial line still unmatched the lone edit that wrote it at its
    place in its commit's window (see the module). ``left_open`` is given the lines
    a lone write left unplaced may still be (``_left_open``). ``late(i, sid, at)``: a
    write of a session on git's clock made after line i's commit (``clock.py``).
    ``glance_added``: an edit's added lines as ``added_lines`` gives them, not kept
    once read (most edits whose writes are in a window are not lone, and are not
    read again)."""
    todo = [
        i for i in range(len(chosen)) if chosen[i] is None and trivial[i] and blamed[i] is not None
    ]
    if not todo:
        return
    windows: dict[int, tuple[float, float]] = {}
    for i in todo:
        low = floor(i)
        if low is not None:
            windows[i] = (low, limits[i])
    if not windows:
        return
    writes.read_window_writes({fps[i] for i in windows}, set(windows.values()))
    info = writes.info
    small: dict[tuple[int, int], bool] = {}
    # An edit's writes here are some of its added lines (``idx``: the line's place among
    # them, ``fp``: its text's): one of a text the file holds that is not trivial, or
    # one past the first LONE_LINES, says it is no lone edit without its body read
    # (at 10,000 sessions on click's core.py most edits asked about are so told).
    solid = {fp for fp, bare in zip(fps, trivial, strict=True) if not bare}
    by_edit = writes.by_edit

    def lone(sid: int, edit: int) -> bool:
        got = small.get((sid, edit))
        if got is None and any(
            idx >= LONE_LINES or fp in solid for idx, fp in by_edit.get((sid, edit), ())
        ):
            got = small[(sid, edit)] = False
        if got is None:
            added = (glance_added or added_lines)(sid, edit)
            got = small[(sid, edit)] = 0 < len(added) <= LONE_LINES and all(
                is_trivial(t) for t in added
            )
        return got

    # Each text's writes the pass below weighs, found once in one pass over them: made
    # in one of its lines' windows, to the exact path, a person's or a lone edit's not
    # yet used; sorted by time (stable: the order the pass saw them in). Each line then
    # bisects these, where it passed every write of ``}`` in its window, nearly all of
    # them skipped (at 10,000 sessions on click's core.py, 86,325 passes).
    spans: dict[int, list[tuple[float, float]]] = {}
    for i, window in windows.items():
        spans.setdefault(fps[i], []).append(window)
    weighed: dict[int, _InTime] = {}

    def may_weigh(fp: int) -> _InTime:
        got = weighed.get(fp)
        if got is None:
            merged = _merged(spans[fp])
            starts = [low for low, _ in merged]
            keep: list[Key] = []
            for key in writes.by_fp.get(fp, ()):
                _, at, by_person, exact, _ = info[key]
                k = bisect_right(starts, at) - 1
                if k < 0 or at > merged[k][1] or not exact:
                    continue
                if by_person or (key not in used and lone(key[0], key[1])):
                    keep.append(key)
            got = weighed[fp] = _InTime(keep, info)
        return got

    shifts = _Shifts(chosen, trivial, blamed, position)
    # (distance from the place, -time, seq, line, write): nearest first, then latest
    options: list[tuple[int, float, int, int, Key]] = []
    # (write, its carried place, line, the line's commit): for ``_shared_shifts``
    far: list[tuple[Key, int, int, str | None]] = []
    # (session, the line's commit) -> each lone write seen there -> (its place, its line)
    seen: dict[tuple[int, str | None], dict[Key, int]] = {}
    for i, (low, high) in windows.items():
        b = blamed[i]
        assert b is not None
        where = b.orig_line - 1
        person_at: float | None = None  # the person's latest write here, in the window
        found: list[tuple[int, float, int, int, Key]] = []
        for key in may_weigh(fps[i]).between(low, high):
            fp, at, by_person, exact, seq = info[key]
            if not exact:
                continue
            if by_person:
                if position(key) == where and (person_at is None or at > person_at):
                    person_at = at
                continue
            if key in used or not lone(key[0], key[1]):
                continue
            if late is not None and late(i, key[0], at):
                continue
            added = added_lines(key[0], key[1])
            if key[2] >= len(added) or added[key[2]] != texts[i]:
                continue  # a bracket's indent is all it says of which block it closes
            landed = position(key)
            if landed is None:
                continue
            off = 0 if landed == where else None
            moved = None if file_edits is None else carried(landed, key, high, file_edits)
            if moved is not None:
                seen.setdefault((key[0], b.commit), {})[key] = moved
            if off is None and file_edits is not None:
                if moved is not None and abs(moved - where) <= SHIFT_SLACK:
                    off = abs(moved - where)
            if off is None:
                off = shifts.distance(key[0], b.commit, landed, where)
            if off is not None:
                found.append((off, -at, seq, i, key))
            elif moved is not None and abs(moved - where) <= SHARED_REACH:
                if person_at is None or at > person_at:
                    far.append((key, moved, i, b.commit))
        options += [o for o in found if person_at is None or -o[1] > person_at]
    for _, _, _, i, key in sorted(options):
        if chosen[i] is None and key not in used:
            chosen[i] = (key, 1)
            used.add(key)
    if far:
        _shared_shifts(chosen, blamed, used, far)
    if left_open is not None:
        left_open.update(_left_open(chosen, texts, blamed, used, seen, added_lines))


def _merged(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """These (from, to) time spans (both ends in) merged where they overlap, in order."""
    out: list[tuple[float, float]] = []
    for low, high in sorted(spans):
        if out and low <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], high))
        else:
            out.append((low, high))
    return out


def _left_open(
    chosen: list[tuple[Key, int] | None],
    texts: list[str],
    blamed: list[BlameLine | None],
    used: set[Key],
    seen: dict[tuple[int, str | None], dict[Key, int]],
    added_lines: Callable[[int, int], list[str]],
) -> set[int]:
    """The unmatched lines a lone write left unplaced may still be: a session's lone
    writes stand in the file in the order of their places, so one left unplaced is
    between the lines its placed neighbours (by place) took, and nowhere else."""
    line_of = {pick[0]: i for i, pick in enumerate(chosen) if pick is not None}
    # the unmatched lines of each (text, commit), in order: a write's are bisected
    # between its neighbours' lines, where each write passed every line between them
    unmatched: dict[tuple[str, str | None], list[int]] = {}
    for i, b in enumerate(blamed):
        if chosen[i] is None and b is not None:
            unmatched.setdefault((texts[i], b.commit), []).append(i)
    out: set[int] = set()
    for (_, commit), places in seen.items():
        order = sorted(places, key=lambda k: places[k])
        took = [line_of.get(key) for key in order]  # the line each write took, if any
        below = [len(chosen)] * len(order)  # the line its next placed neighbour took
        for k in range(len(order) - 2, -1, -1):
            after = took[k + 1]
            below[k] = below[k + 1] if after is None else after
        above = -1  # the line its previous placed neighbour took
        for k, key in enumerate(order):
            if key not in used:
                text = added_lines(key[0], key[1])[key[2]]
                lines = unmatched.get((text, commit), [])
                out.update(lines[bisect_right(lines, above) : bisect_left(lines, below[k])])
            line = took[k]
            if line is not None:
                above = line
    return out


def _shared_shifts(
    chosen: list[tuple[Key, int] | None],
    blamed: list[BlameLine | None],
    used: set[Key],
    far: list[tuple[Key, int, int, str | None]],
) -> None:
    """Place runs of writes off their lines by one shared count (see the module).
    ``far``: (write, its carried place, a line of its text, the line's commit) of
    each write still unplaced and each unmatched line within SHARED_REACH of it."""
    # per session and commit: carried place of each write, and the shifts it could have
    places: dict[tuple[int, str | None], dict[Key, int]] = {}
    lines_at: dict[tuple[int, str | None, Key, int], int] = {}  # (.., write, shift) -> line
    for key, moved, i, commit in far:
        if key in used or chosen[i] is not None:
            continue
        b = blamed[i]
        assert b is not None
        group = (key[0], commit)
        places.setdefault(group, {})[key] = moved
        lines_at.setdefault((key[0], commit, key, moved - (b.orig_line - 1)), i)
    for (sid, commit), writes in places.items():
        order = sorted(writes, key=lambda k: writes[k])  # as they stand in the file
        shifts = sorted({s for (g0, g1, _, s) in lines_at if (g0, g1) == (sid, commit)})
        runs: list[tuple[int, int, list[Key]]] = []  # (-length, shift, writes)
        for shift in shifts:
            run: list[Key] = []
            for key in order:
                if (sid, commit, key, shift) in lines_at:
                    run.append(key)
                    continue
                if len(run) >= SHARED_RUN:
                    runs.append((-len(run), shift, run))
                run = []
            if len(run) >= SHARED_RUN:
                runs.append((-len(run), shift, run))
        for length, shift, run in sorted(runs):
            if any(
                other != shift and -n >= -length and not set(run).isdisjoint(keys)
                for n, other, keys in runs
            ):
                continue  # another count explains as many of these: brackets evenly spaced
            for key in run:
                i = lines_at[(sid, commit, key, shift)]
                if key not in used and chosen[i] is None:
                    chosen[i] = (key, 1)
                    used.add(key)


def carried(landed: int, key: Key, until: float, file_edits: FileEdits) -> int | None:
    """Where a write that landed at ``landed`` stood after the session's later edits of
    the file made by ``until`` (0-based); None where one of them replaced it, or said
    no place."""
    place = landed
    for ord_, at, hunks in file_edits(key[0], key[1]):
        if ord_ <= key[1] or at is None or at > until:
            continue
        if hunks is None:
            return None
        shift = 0
        for old_start, _, removed, added in hunks:
            first = old_start - 1
            if place < first:
                continue
            if place < first + removed:
                return None  # the session rewrote the line: a later write is its source
            shift += added - removed
        place += shift
    return place


def old_lines_above(key: Key, file_edits: FileEdits) -> int | None:
    """How many lines the file had above the run a write belongs to, as its edit found
    the file (the hunk's old start, less one); None where the edit said no place."""
    for ord_, _, hunks in file_edits(key[0], key[1]):
        if ord_ != key[1]:
            continue
        seen = 0
        for old_start, _, _, added in hunks or ():
            if key[2] < seen + added:
                return old_start - 1
            seen += added
        return None
    return None


class _InTime:
    """One text's writes by time: those of a window found by bisection, not by a
    pass over every write of ``}`` for every ``}`` of the file."""

    def __init__(self, keys: list[Key], info: dict[Key, tuple[int, float, bool, bool, int]]):
        self.keys = sorted(keys, key=lambda k: info[k][1])
        self.times = [info[k][1] for k in self.keys]

    def between(self, low: float, high: float) -> list[Key]:
        return self.keys[bisect_left(self.times, low) : bisect_right(self.times, high)]


class _Shifts:
    """How far a write's place is from a line's place in the line's commit: as
    written (0), or shifted as the session's nearest line of that commit was
    shifted since it was written (what the commit's later edits put above them)."""

    def __init__(
        self,
        chosen: list[tuple[Key, int] | None],
        trivial: list[bool],
        blamed: list[BlameLine | None],
        position: Callable[[Key], int | None],
    ) -> None:
        self.chosen, self.trivial, self.blamed, self.position = chosen, trivial, blamed, position
        self.anchors: dict[tuple[int, str | None], list[tuple[int, int]]] | None = None

    def distance(self, sid: int, commit: str | None, landed: int, where: int) -> int | None:
        """0 where the write landed at the line's place; else the distance once shifted
        as the session's nearest anchor (at most SHIFT_SLACK); None: too far."""
        if landed == where:
            return 0
        if self.anchors is None:
            self.anchors = {}
            for j, pick in enumerate(self.chosen):
                b = self.blamed[j]
                if pick is None or self.trivial[j] or b is None:
                    continue
                at = self.position(pick[0])
                if at is not None:
                    spot = (pick[0][0], b.commit)
                    self.anchors.setdefault(spot, []).append((at, b.orig_line - 1 - at))
            for spots in self.anchors.values():
                spots.sort()
        spots = self.anchors.get((sid, commit), [])
        if not spots:
            return None
        k = bisect_left(spots, (landed, -(1 << 32)))
        near = min(
            (spots[x] for x in (k - 1, k) if 0 <= x < len(spots)),
            key=lambda s: abs(s[0] - landed),
        )
        if abs(near[0] - landed) > ANCHOR_LINES:
            return None
        off = abs(landed + near[1] - where)
        return 1 + off if off <= SHIFT_SLACK else None
