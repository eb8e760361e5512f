"""The matcher: give a line to a session only on evidence.

Evidence for session S on line L (introduced by commit C at time tc):
- S added a line with L's fingerprint to the same file (transcript paths mapped
  to this repository: exactly under its root, or by path suffix when the clone
  moved or the session worked in another clone of the project);
- at or before tc (plus a small clock skew);
- it is the latest such write before tc: a later write by another session, or
  by the person (a USER diff block in a transcript), takes the line away;
- a trivial line (blank, lone punctuation, very short) counts only inside a run
  of neighbouring lines that match consecutive lines of the same edit, with at
  least one non-trivial line in the run.

A line a person changed after the agent wrote it has another fingerprint and
matches nothing. Confidence grows with the run length and falls when the line
is common in the session's edits of the file or the path matched by suffix.
"""

from __future__ import annotations

import heapq
import time
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from deja_blame.attribution.facts.model import (
    CLOCK_SKEW,
    BlameLine,
    Key,
    LineTexts,
    Twins,
    WriteSet,
)
from deja_blame.attribution.match.clock import Deadlines
from deja_blame.attribution.match.left_copy import give_left_copies
from deja_blame.attribution.match.lone import (
    FileEdits,
    carried,
    old_lines_above,
    place_lone_edits,
)

# A run of this many lines is strong evidence of place: among writes with runs at
# least this long made in the line's commit window the latest wins (a later
# session re-wrote a block an earlier one wrote whole); shorter runs, and older
# writes, are weighed by their length first.
STRONG_RUN = 3
_SPAN = 1 << 32  # more lines than a file has: (run, distance) as one number


@dataclass
class LineMatch:
    sid: int
    edit_ord: int
    idx: int
    at: float
    confidence: float
    run: int


# A fingerprint whose writes times its lines in the file exceed this is "common":
# each of its lines then considers only its latest writes before its commit (and
# any write that continues a run of a rarer neighbour), so ten thousand sessions
# writing the same line cost a bounded amount per line.
PAIR_BUDGET = 20_000
COMMON_KEEP = 16
# When a file's (line, write) pairs exceed SEED_BUDGET + SEED_BUDGET_PER_LINE
# per line (a block pasted hundreds of times, each copy written by many
# sessions), the matcher bounds its work: a text the file holds more than
# REPEATED times seeds each of its lines with its REPEATED_KEEP latest writes
# only (its other writes still reach it through runs from rarer lines), and the
# runs of one edit are walked within a budget, rarest lines first (where an
# edit really landed is found from its unique lines before the copies of its
# common ones). Below that, every write is considered, as the rules say.
SEED_BUDGET = 50_000
SEED_BUDGET_PER_LINE = 4
REPEATED = 8
REPEATED_KEEP = 4
EDIT_RUN_BUDGET = 64  # run entries per edit, plus 4 per line it wrote
# A line tries at most this many twins of one group that other lines took first
# (lines holding the same text at the same place of identical edits; only a
# file with that text pasted hundreds of times gets near it).
TWIN_RETRIES = 64
# A twin offered a line that the group's first turned away as far from its place
# takes it only where it landed itself, this near (its shift read as ``_distances``).
TWIN_NEAR = 2
# Lines: a short run of a text the file holds several times is no evidence for a
# copy this far from where its write landed (shifted as its edit moved since).
FAR_LINES = 40


def match_lines(
    line_texts: LineTexts,
    blamed: list[BlameLine | None],
    writes: WriteSet,
    now: float | None = None,
    final_fps: Callable[[int], set[int]] | None = None,
    has_exact: Callable[[int], bool] | None = None,
    stale: Callable[..., bool] | None = None,
    fresh: Callable[[int, float], bool] | None = None,
    floor: Callable[[int], float | None] | None = None,
    added_lines: Callable[[int, int], list[str]] | None = None,
    glance_added: Callable[[int, int], list[str]] | None = None,
    added_fps: Callable[[int, int], list[int]] | None = None,
    same_project: Callable[[int], bool | None] | None = None,
    written_text: Callable[[Key], str | None] | None = None,
    position: Callable[[Key], int | None] | None = None,
    file_edits: FileEdits | None = None,
    lone_open: set[int] | None = None,
    same_clock: frozenset[int] = frozenset(),
) -> list[LineMatch | None]:
    """One LineMatch (or None) per line of ``line_texts``; ``blamed[i]`` is line i's blame.

    ``stale(i, at, copies)`` says a write made at ``at`` cannot be line i's source
    (commit-window evidence, ``window.py``; ``copies``: the lines of that text the
    write's edit made): such writes are never given to the line. ``fresh(i, at)``
    says it was made after the version line i's commit was made from (no file is
    read to say so): only among such writes does a later one beat a longer run.
    ``written_text(key)`` is a write's exact text: where the file holds one text at
    several indents, a write goes first to the copy it matches exactly.
    ``position(key)`` is where the write landed in the session's file (0-based):
    where the file holds one text several times, a write goes first to the copy
    nearest that place, shifted as the write's edit (or session) shifted in the
    file since (``_distances``). ``file_edits(sid, edit)`` is the session's edits of
    the file that edit changed (their hunks): how far a lone bracket's write was
    moved since it landed (``lone.carried``). ``lone_open`` is given the lines a lone
    write left unplaced may still be (``lone._left_open``). ``same_clock``: the
    sessions that ran in a checkout of this repository on this machine, whose writes
    dated after a line's commit are not in it (``clock.py``).

    Cost: the writes of each non-trivial line's text (one per group of identical
    edits), plus the runs through them. Trivial lines (blank, ``)``) are never
    matched against every write of their text; they take writes only from runs
    that pass through a non-trivial line, or from an edit anchored beside them
    (``_fill_gaps``).
    """
    now = time.time() if now is None else now
    texts, fps, trivial = line_texts.texts, line_texts.fps, line_texts.trivial
    n = len(texts)
    info = writes.info
    deadlines = Deadlines.of(blamed, now, same_clock)
    limits = deadlines.loose  # the latest any session's write may be (``clock.py``)
    late = deadlines.late if same_clock else None
    # how often the file holds each text: the whole file's count where these lines
    # are a window of it (``LineTexts.file_counts``), so a window answers as the file
    occurrences = line_texts.counts()
    twins = writes.twins()
    # seeds[i]: the writes line i may take on its own text alone (first twins only).
    seeds: list[list[Key]] = [[] for _ in range(n)]
    firsts = _first_writes(writes, twins, fps)
    pairs = sum(len(firsts[fps[i]]) for i in range(n) if not trivial[i])
    bounded = pairs > SEED_BUDGET + SEED_BUDGET_PER_LINE * n
    sorted_by_time: dict[int, _ByTime] = {}

    def by_time(fp: int) -> _ByTime:
        if fp not in sorted_by_time:
            sorted_by_time[fp] = _ByTime(firsts[fp], info)
        return sorted_by_time[fp]

    for i in range(n):
        if trivial[i]:
            continue
        fp = fps[i]
        keys = firsts[fp]
        if not keys:
            continue
        if bounded and occurrences[fp] > REPEATED:
            seeds[i] = by_time(fp).latest_before(limits[i], REPEATED_KEEP)
        elif len(keys) * occurrences[fp] <= PAIR_BUDGET:
            seeds[i] = keys
        else:
            seeds[i] = by_time(fp).latest_before(limits[i], COMMON_KEEP)
    # Runs: line i and i+1 matching consecutive lines (idx, idx+1) of one edit.
    # A run is evidence of place, whichever commit brought its neighbours: a
    # session that rewrote a whole file runs through lines older commits kept.
    # Each run is walked once, from any seed on it, through trivial lines too.
    # prefix counts: non-trivial lines, and those whose text the file holds once
    solid_before = [0] * (n + 1)
    once_before = [0] * (n + 1)
    for i in range(n):
        solid_before[i + 1] = solid_before[i] + (0 if trivial[i] else 1)
        once_before[i + 1] = once_before[i] + (
            1 if not trivial[i] and occurrences[fps[i]] == 1 else 0
        )
    prefix = (solid_before, once_before)
    runs: list[dict[Key, tuple[int, int, int]]] = [dict() for _ in range(n)]
    spent: dict[tuple[int, int], int] = {}
    by_edit = writes.by_edit
    order = sorted(range(n), key=lambda j: occurrences[fps[j]]) if bounded else range(n)
    for i in order:  # bounded: rarest lines first
        for key in seeds[i]:
            if key in runs[i]:
                continue
            if not bounded:
                _walk_run(i, key, fps, prefix, info, runs)
                continue
            edit = (key[0], key[1])
            budget = EDIT_RUN_BUDGET + 4 * len(by_edit[edit])
            used_up = spent.get(edit, 0)
            if used_up >= budget:
                continue
            spent[edit] = used_up + _walk_run(i, key, fps, prefix, info, runs)
    # Each write is one line: it can account for one line of the file, not for
    # every line with the same text (a person's own "return None" elsewhere, or a
    # copy left behind when a block moved). Strongest evidence is served first:
    # the longest run up to STRONG_RUN lines, then the latest write (a later
    # session that re-wrote part of a block beats the longer run of the one that
    # wrote it whole), then the longer run, then the copy nearest the write's
    # place (``rank_of``). Of a group of identical edits a line is offered only as
    # many as there are lines with its text: the others could never reach it.
    # Served from a heap: one entry per (line, run), holding the best twin still
    # free; a twin another line took gives way to the next one, which sorts after
    # it, so the order is the same as sorting every (line, twin) pair up front.
    # Texts the file holds at more than one indent: for their lines a write that
    # matches exactly goes before one that matches only without white space.
    shapes: dict[int, set[str]] = {}
    for i in range(n):
        if not trivial[i]:
            shapes.setdefault(fps[i], set()).add(texts[i])
    indented = {fp for fp, seen in shapes.items() if len(seen) > 1}

    def mismatch(i: int, key: Key) -> int:
        if written_text is None or fps[i] not in indented:
            return 0
        return 0 if written_text(key) == texts[i] else 1

    # Lines whose text the file holds more than once compete for the same writes:
    # among equal evidence, the copy nearest where the write landed goes first.
    repeated = [not trivial[i] and occurrences[fps[i]] > 1 for i in range(n)]
    old_above = carry = None
    if file_edits is not None:
        edits_of = file_edits
        old_above = lambda key: old_lines_above(key, edits_of)  # noqa: E731
        carry = _Carrier(info, writes.edit_info, edits_of, deadlines)
    beyond = text_beyond = runs_beyond = None
    if line_texts.beyond is not None and added_fps is not None:
        beyond = _anchors_beyond(line_texts, writes, twins, added_fps)
        text_beyond = line_texts.text_beyond
        runs_beyond = _RunsBeyond(line_texts, added_fps)
    distance, far_off, taken_beyond, landed_off = _distances(
        runs,
        repeated,
        fps,
        occurrences,
        position,
        old_above,
        _kept_above(blamed, line_texts.start),
        beyond,
        text_beyond,
        carry,
        twins,
    )

    def rank_of(i: int, run: int, at: float, miss: int, far: int) -> tuple[int, float, float]:
        # Runs of STRONG_RUN lines or more are equally strong; among them a write
        # made in the line's commit window (``fresh``) comes first, the latest
        # first. Older writes (each needs the stale check, which reads old
        # versions of the file) come longest run first, as few versions as
        # possible being read: a whole-file write is one version for many lines.
        if fresh is None or fresh(i, at):
            return (-4 * min(run, STRONG_RUN) + 2 * miss, -at, -run * _SPAN + far)
        return (-4 * min(run, STRONG_RUN) + 2 * miss + 1, -run, -at)

    copies = _Copies(writes)

    heap: list[
        tuple[int, float, float, int, int, Key, Twins, int, int, int, float, bool, bool]
    ] = []
    for i in range(n):
        limit = limits[i]
        for key, (run, solid, once) in runs[i].items():
            if trivial[i] and (run < 2 or solid < 1):
                continue  # a lone "}" or blank line is no evidence on its own
            # A run of any length whose every text the file holds more than once (a
            # block repeated in one file: ``if (done) {`` / ``continue;`` / ``}`` a
            # dozen times; a doc comment's closing lines) matches every copy of the
            # block alike: its length says nothing of which copy the write made.
            # Where it landed does (the far-copy rule below), as for a short run.
            placeless = repeated[i] and (run < STRONG_RUN or once == 0)
            group = twins[(key[0], key[1])]
            nxt = _next_twin(group, 0, key[2], info, limit, late=late, line=i)
            if nxt is not None:
                pos, twin, at, seq = nxt
                far = distance(i, key) if repeated[i] or trivial[i] else 0
                miss = mismatch(i, twin)
                rank = rank_of(i, run, at, miss, far)
                heap.append((*rank, i, seq, twin, group, pos, 0, run, at, placeless, False))
    heapq.heapify(heap)
    chosen: list[tuple[Key, int] | None] = [None] * n
    used: set[Key] = set()
    # per (group of twins, index): taken position -> a later one to try (union-find),
    # so a thousand lines sharing one group do not each step over every taken twin
    taken: dict[tuple[int, int], dict[int, int]] = {}
    while heap:
        _, _, _, i, _, key, group, pos, tries, run, at, placeless, landed = heapq.heappop(heap)
        if chosen[i] is not None:
            continue
        if stale is not None and stale(
            i, at, 1 if fresh is not None and fresh(i, at) else copies(key, fps[i], limits[i])
        ):
            continue  # checked only for the write about to be given; older twins are older
        if taken_beyond(i, key) or (runs_beyond is not None and runs_beyond.taken(key, i)):
            continue  # a window's line: the write is a line's outside it
        skips = taken.setdefault((id(group), key[2]), {})
        if landed:
            # offered by a twin that landed elsewhere (below): only where it landed
            if key in used:
                start = _free_from(skips, pos)
            elif landed_off(i, key) > TWIN_NEAR:
                start = pos + 1
            else:
                chosen[i] = (key, run)
                used.add(key)
                skips[pos] = pos + 1
                continue
        elif placeless and far_off(i, key):
            # one of several copies of a text, a run that does not say which (short,
            # or all of repeated texts), and far from where the write landed (shifted
            # as the rest of its edit or session shifted): the copy it wrote is gone,
            # this one is another's (a chain ``.trim()``, ``.split(...)`` repeated in
            # one file; a repeated ``if (done) {`` / ``continue;`` / ``}`` block).
            # An identical edit of the group landed elsewhere: the next may be here
            # (a session pasted one block into two functions: entireio
            # ``git_operations.go``, 5e22650a, where the first twin's place turned the
            # line away before the second was tried). Only a twin that landed at this
            # line takes it then: any copy is near some twin's place (a one-line edit
            # made at two of three copies must not take the person's third).
            start = pos + 1
            landed = True
        elif key not in used:
            chosen[i] = (key, run)
            used.add(key)
            skips[pos] = pos + 1
            continue
        else:
            start = _free_from(skips, pos)
        if tries >= TWIN_RETRIES:
            continue  # a thousand copies of one line: the rest are ambiguous anyway
        nxt = _next_twin(group, start, key[2], info, limits[i], skips, late=late, line=i)
        if nxt is not None:
            pos, twin, at, seq = nxt
            if not (repeated[i] or trivial[i]):
                far = 0
            elif landed:
                far = landed_off(i, twin)
            else:
                far = distance(i, key)  # the order the line's first write set
            rank = rank_of(i, run, at, mismatch(i, twin), far)
            heapq.heappush(
                heap, (*rank, i, seq, twin, group, pos, tries + 1, run, at, placeless, landed)
            )
    if fresh is not None and position is not None:
        window_fresh = fresh

        def older(i: int, key: Key) -> bool:
            # a write older than line i's window, usable there (as the heap checks)
            at = info[key][1]
            if info[key][2] or window_fresh(i, at):
                return False
            if stale is not None and stale(i, at, copies(key, fps[i], limits[i])):
                return False
            return not (
                taken_beyond(i, key) or (runs_beyond is not None and runs_beyond.taken(key, i))
            )

        give_left_copies(chosen, runs, fps, repeated, used, distance, older)
    # Identical trivial lines ("}", blank) are interchangeable to git's diff: blame
    # may say an old commit kept the "}" that a later session actually added next
    # to its own lines. So the gap rule may use any write made by the blamed
    # revision, anchored to its own edit's lines.
    blank = [not bare for bare in line_texts.bare]
    _fill_gaps(
        chosen, fps, trivial, blank, writes, used, deadlines, now + CLOCK_SKEW, stale, copies
    )
    _fill_gaps_where_committed(chosen, fps, trivial, blamed, writes, used, deadlines, stale, copies)
    if n and all(trivial) and not any(chosen):
        _whole_file(chosen, fps, writes, deadlines, stale)
    if floor is not None and position is not None and added_lines is not None:
        place_lone_edits(
            chosen,
            texts,
            fps,
            trivial,
            blamed,
            writes,
            used,
            limits,
            floor,
            position,
            added_lines,
            file_edits,
            lone_open,
            late,
            glance_added,
        )
    # How often each chosen write's text occurs in its session's edits of the file
    # (fingerprint, session): counted over the chosen sessions' edits, not over every
    # write of each chosen text (thousands of sessions wrote ``return None``)
    chosen_sids = {c[0][0] for c in chosen if c is not None}
    wanted = {(info[c[0]][0], c[0][0]) for c in chosen if c is not None}
    common: Counter[tuple[int, int]] = Counter()
    for (sid, _), written in writes.by_edit.items():
        if sid in chosen_sids:
            common.update(pair for pair in ((fp, sid) for _, fp in written) if pair in wanted)
    # and of the writes load_writes left in the index, those of the sessions chosen
    for sid, rows in writes.left_out_of(chosen_sids).items():
        common.update((fp, sid) for _, fp, _ in rows)
    out: list[LineMatch | None] = []
    for i in range(n):
        pick = chosen[i]
        if pick is None or info[pick[0]][2]:
            out.append(None)  # nobody, or the person wrote it last
            continue
        key, run = pick
        fp, at, _, exact, _ = info[key]
        out.append(
            LineMatch(
                sid=key[0],
                edit_ord=key[1],
                idx=key[2],
                at=at,
                confidence=_confidence(run, common[(fp, key[0])], exact, trivial[i]),
                run=run,
            )
        )
    return _drop_strangers(out, writes, final_fps, has_exact, set(occurrences), same_project)


def _first_writes(
    writes: WriteSet, twins: dict[tuple[int, int], Twins], fps: Iterable[int]
) -> dict[int, list[Key]]:
    """Each of ``fps`` -> its writes by the first edit of each group of twins, in
    ``by_fp``'s order (seq): the writes a line may take on its text alone.

    Found by walking the groups, not by asking each write for its group: a group's
    other edits wrote the same lines (at 10,000 sessions on click's core.py, 24,833
    edits in 943 groups; 125,244 writes each asked)."""
    info = writes.info
    firsts: dict[int, list[Key]] = {fp: [] for fp in fps}
    for group in {id(group): group for group in twins.values()}.values():
        sid, edit = group.members[0]
        for idx, fp in writes.by_edit[(sid, edit)]:
            keys = firsts.get(fp)
            if keys is not None:
                keys.append((sid, edit, idx))
    for keys in firsts.values():
        keys.sort(key=lambda k: info[k][4])
    return firsts


class _Carrier:
    """Where a session's write stood in its file at a later time: carried through the
    session's own later edits of the file (their hunks, ``lone.carried``) made by line
    i's commit (the latest its write may be, ``Deadlines``)."""

    def __init__(
        self,
        info: dict[Key, tuple[int, float, bool, bool, int]],
        edit_info: dict[tuple[int, int], tuple[float, bool, bool]],
        file_edits: FileEdits,
        deadlines: Deadlines,
    ) -> None:
        self.info = info
        self.edit_info = edit_info
        self.file_edits = file_edits
        self.deadlines = deadlines
        # a write is asked about once per line that may take it: carried once
        self._done: dict[tuple[Key, int, float], int | None] = {}
        self._edit_times: dict[tuple[int, int], float] | None = None

    def until(self, i: int, sid: int) -> float:
        return self.deadlines.of_session(i, sid)

    def time(self, key: Key) -> float | None:
        """When ``key`` was written; None for a write the question did not load (an
        anchor beyond a window's lines, ``_anchors_beyond``): an edit's writes share
        its time, so any loaded write of the same edit says it."""
        got = self.info.get(key)
        if got is not None:
            return got[1]
        if self._edit_times is None:
            self._edit_times = {edit: got[0] for edit, got in self.edit_info.items()}
        return self._edit_times.get((key[0], key[1]))

    def to(self, key: Key, at: int, until: float) -> int | None:
        asked = (key, at, until)
        if asked not in self._done:
            self._done[asked] = carried(at, key, until, self.file_edits)
        return self._done[asked]


def _distances(
    runs: list[dict[Key, tuple[int, int, int]]],
    repeated: list[bool],
    fps: list[int],
    occurrences: Counter[int],
    position: Callable[[Key], int | None] | None,
    old_above: Callable[[Key], int | None] | None = None,
    kept_above: list[int] | None = None,
    beyond: Callable[[int], list[tuple[int, Key]]] | None = None,
    text_beyond: Callable[[int], int | None] | None = None,
    carry: _Carrier | None = None,
    twins: dict[tuple[int, int], Twins] | None = None,
) -> tuple[
    Callable[[int, Key], int],
    Callable[[int, Key], bool],
    Callable[[int, Key], bool],
    Callable[[int, Key], int],
]:
    """``distance(i, key)``: how far line i is from where write ``key`` should be now,
    and ``far(i, key)``: more than FAR_LINES from it, where that is known.

    A write's place in the session's file is shifted by what changed above it
    since: the shift is read off the lines of the same edit whose text the file
    holds once (the median of line minus written place), else off the session's
    other edits of the file. 0 for every line when no place is known.

    Where nothing of the session's says the shift (every line it wrote is a text
    the file holds many times: Go's ``if err != nil {`` / ``return err`` / ``}``),
    the person may still have typed lines above it before committing: then the
    lines above the write as its edit found the file (``old_above``: its hunk's
    old start) are compared with the lines above line i that git kept from
    older commits (``kept_above``), which the person's new lines are not.

    In a window of a longer file, ``beyond(sid)`` gives the session's anchors outside
    it ((line, write) pairs, lines counted from the window's first), as runs over
    the whole file would have found them, and ``text_beyond(line)`` the fingerprint
    of a line outside it (None inside). The third function, ``taken(i, key)``, says
    the write belongs to a line outside the window: where it should be now holds its
    text, which the whole file's matcher gives it (its run there is the edit's own),
    so no line of the window may take it (a ``}`` of a session's test, landed 600
    lines up, given to a ``}`` of a person's copy of that test inside the window).

    ``carry`` says where a write stood once the session's later edits of the file
    made by line i's commit were made (``_Carrier``). Places written at different
    times are different files' lines: where an edit with no anchor of its own is
    far from line i as written, it is measured again as the session's anchor nearest
    it *in the session's file as line i's commit found it* (both carried there),
    and that distance is used where it is near (``carried_off``).

    The fourth function, ``landed_off(i, key)``, is how far line i is from where
    ``key``, any twin of a contested write, landed: asked only of a line the
    group's first twin turned away as far.
    """
    if position is None or not any(repeated):
        return _NO_DISTANCES
    place = position
    # only a write that two lines of one text can both take needs a place; in a
    # window, a copy of the text outside it (the whole file's count) is such a line
    here = Counter(fps)
    seen: Counter[Key] = Counter()
    for i in range(len(runs)):
        if repeated[i]:
            outside = 1 if occurrences[fps[i]] > here[fps[i]] else 0
            for k in runs[i]:
                seen[k] += 1 + outside
    contested = {k for k, n in seen.items() if n > 1}
    if not contested:
        return _NO_DISTANCES
    wanted = {(k[0], k[1]) for k in contested}
    # Runs are walked from the first of identical edits only; each of the others
    # landed at its own place, which is what says which copy it wrote. Those places
    # are read only for a line the first turned away as far (``landed_off``): asked
    # of every twin, they re-ordered and lost lines the first twin's place gave
    # right (express ``lib/response.js`` replayed: four of a session's repeated
    # `` * @public`` lines given to nobody).
    landed_keys = set(contested)
    if twins is not None:
        landed_keys |= {(e[0], e[1], k[2]) for k in contested for e in twins[(k[0], k[1])].members}
    sessions = {k[0] for k in landed_keys}
    # (line, write) pairs of lines whose text the file holds once, by edit
    anchors: dict[tuple[int, int], list[tuple[int, Key]]] = {}
    for i, found in enumerate(runs):
        if occurrences[fps[i]] != 1:
            continue
        for key in found:
            if key[0] in sessions:
                anchors.setdefault((key[0], key[1]), []).append((i, key))
    if beyond is not None:
        for sid in sessions:
            for i, key in beyond(sid):
                anchors.setdefault((key[0], key[1]), []).append((i, key))
    median: dict[tuple[int, int], int | None] = {}
    # anchors as (written place, shift), by place: of one edit, or (None) of all
    # the session's edits
    nearby: dict[tuple[int, int | None], list[tuple[int, int]]] = {}

    def median_of(pairs: Iterable[tuple[int, Key]]) -> int | None:
        shifts = []
        for i, key in pairs:
            at = place(key)
            if at is not None:
                shifts.append(i - at)
        return sorted(shifts)[len(shifts) // 2] if shifts else None

    def shift(key: Key, at: int, i: int | None = None) -> int | None:
        """``i``: carried to line i's commit first (``carried_local``)."""
        edit = (key[0], key[1])
        if edit not in median:
            median[edit] = median_of(anchors.get(edit, ()))
        if median[edit] is not None:
            return median[edit]
        # nothing else of this edit here: the shift of the session's anchor written
        # nearest this place (what was inserted above one part of a file is not
        # what was inserted above another: a median over the file is neither)
        got = (None if i is None else carried_local(key, at, i)) or local(key[0], None, at)
        return None if got is None else got[0]

    # the session's anchors as (place in its file by a time, shift from there)
    by_then: dict[tuple[int, float], list[tuple[int, int]]] = {}

    def carried_local(key: Key, at: int, i: int) -> tuple[int, int] | None:
        """``local`` of the session's edits, read in its file as line i's commit
        found it: the shift (from ``at``, as written) and how far off the anchor
        nearest the write was once both were carried through the session's later
        edits made by then; None where the write cannot be carried or no anchor can."""
        if carry is None:
            return None
        until = carry.until(i, key[0])
        now = carry.to(key, at, until)
        if now is None:
            return None
        sid = key[0]
        if (sid, until) not in by_then:
            found = []
            for e, pairs in anchors.items():
                if e[0] == sid:
                    for a, k in pairs:
                        p = place(k)
                        if p is None:
                            continue
                        then = carry.time(k)
                        q = None if then is None or then > until else carry.to(k, p, until)
                        if q is not None:
                            found.append((q, a - q))
            by_then[(sid, until)] = sorted(found)
        near = _nearest(by_then[(sid, until)], now)
        return None if near is None else (near[1] + now - at, abs(near[0] - now))

    def local(sid: int, edit: int | None, at: int) -> tuple[int, int] | None:
        """(shift, how far from ``at`` it was read) off the anchor written nearest
        ``at``: of this edit (``edit``), or of any edit of the session (None)."""
        if (sid, edit) not in nearby:
            found = []
            for e, pairs in anchors.items():
                if e[0] == sid and (edit is None or e[1] == edit):
                    for i, k in pairs:
                        p = place(k)
                        if p is not None:
                            found.append((p, i - p))
            nearby[(sid, edit)] = sorted(found)
        near = _nearest(nearby[(sid, edit)], at)
        return None if near is None else (near[1], abs(near[0] - at))

    def distance(i: int, key: Key) -> int:
        mine = key in contested
        if not mine and (key[0], key[1]) not in wanted:
            return 0
        at = place(key)
        if at is None:
            return 0
        moved = shift(key, at)
        if moved is None and old_above is not None and kept_above is not None:
            # a "}" of such an edit too: the run through it says nothing of the copy
            above = old_above(key)
            if above is not None:
                return abs(kept_above[i] - above)
        if not mine:
            return 0
        off = abs(i - at - (moved or 0))
        if off > FAR_LINES:
            near = carried_off(i, key, at)
            return off if near is None else near
        return off

    def carried_off(i: int, key: Key, at: int) -> int | None:
        """How far line i is from write ``key`` of an edit with no line of its own here
        (the shift read off the session's other edits), both carried to line i's
        commit (``carried_local``), where that is near; None where it is not.

        Asked only of a write far from line i as written: the session's next edit put
        a 40-line function between the two copies of a block it had just pasted; read
        off the written places the second copy was 42 lines off and went to nobody
        (entireio ``explain.go``, 827a88a4). Read for every write, as the order's
        shift, it moved lines the written places gave right (packaging's reverts and
        moves one wrong line more each; a person's edit between the session's is not
        among the hunks a write is carried through)."""
        if carry is None or median[(key[0], key[1])] is not None:
            return None
        got = carried_local(key, at, i)
        if got is None:
            return None
        off = abs(i - at - got[0])
        return off if off <= FAR_LINES else None

    def landed_off(i: int, key: Key) -> int:
        """How far line i is from where ``key``, any twin of a contested write, landed
        (carried to line i's commit), for a line its group's first turned away."""
        if key not in landed_keys:
            return 0
        at = place(key)
        if at is None:
            return 0
        moved = shift(key, at, i)
        if moved is None and old_above is not None and kept_above is not None:
            above = old_above(key)
            if above is not None:
                return abs(kept_above[i] - above)
        return abs(i - at - (moved or 0))

    def far(i: int, key: Key) -> bool:
        if key not in contested:
            return False
        at = place(key)
        if at is None:
            return False
        # Far by both estimates of the shift where the write landed: the one the
        # order uses (``shift``), and the one off the nearest line of its own edit
        # (else of its session) when that line was written close by. Either alone
        # turned away right answers on the real histories (a whole-file write's
        # median shift is not its shift at one place; a local shift read off a
        # line a later edit moved is not either).
        moved = shift(key, at)
        if moved is None or abs(i - at - moved) <= FAR_LINES:
            return False
        got = local(key[0], key[1], at) or local(key[0], None, at)
        if got is None or got[1] > FAR_LINES // 2:
            return False
        if abs(i - at - got[0]) <= FAR_LINES:
            return False
        return carried_off(i, key, at) is None

    def taken(i: int, key: Key) -> bool:
        if text_beyond is None:
            return False
        at = place(key)
        if at is None:
            return False
        moved = shift(key, at)
        return moved is not None and text_beyond(at + moved) == fps[i]

    return distance, far, taken, landed_off


def _no_distance(i: int, key: Key) -> int:
    return 0


def _not_far(i: int, key: Key) -> bool:
    return False


# nothing competes for a place: every write is where it should be
_NO_DISTANCES = (_no_distance, _not_far, _not_far, _no_distance)


def _nearest(spots: list[tuple[int, int]], at: int) -> tuple[int, int] | None:
    """Of (place, shift) pairs sorted by place, the one whose place is nearest ``at``."""
    if not spots:
        return None
    j = bisect_left(spots, (at, -_SPAN))
    return min((spots[x] for x in (j - 1, j) if 0 <= x < len(spots)), key=lambda s: abs(s[0] - at))


def _anchors_beyond(
    line_texts: LineTexts,
    writes: WriteSet,
    twins: dict[tuple[int, int], Twins],
    added_fps: Callable[[int, int], list[int]],
) -> Callable[[int], list[tuple[int, Key]]]:
    """``beyond(sid)``: for a window, the (line, write) pairs outside it that runs over
    the whole file would make anchors: each line the session's edits of the file
    wrote whose text the file holds once (``LineTexts.beyond``), its line counted
    from the window's first (negative above it)."""
    at_line = line_texts.beyond or {}
    start = line_texts.start
    edits_of: dict[int, list[tuple[int, int]]] = {}
    for edit in writes.by_edit:
        if twins[edit].members[0] == edit:  # runs hold an edit's first twin only
            edits_of.setdefault(edit[0], []).append(edit)

    def beyond(sid: int) -> list[tuple[int, Key]]:
        out = []
        for sid_, edit in sorted(edits_of.get(sid, ())):
            for idx, fp in enumerate(added_fps(sid_, edit)):
                line = at_line.get(fp)
                if line is not None:
                    out.append((line - start, (sid_, edit, idx)))
        return out

    return beyond


class _RunsBeyond:
    """In a window of a longer file: ``taken(key, run)`` says a copy of the write's text
    outside the window is where the whole file's matcher gives it, since the edit's
    run through it there is stronger (``rank_of``: a longer run, up to
    ``STRONG_RUN``, then the longer) and holds a text the file holds once (so the
    far-copy rule cannot turn it away): a line of the window has no claim on it. The
    runs are walked over the whole file's texts against the edit's added lines; what
    the window cannot see (that outside line's commit, hence whether the write is
    stale there) is taken as no obstacle."""

    def __init__(self, line_texts: LineTexts, added_fps: Callable[[int, int], list[int]]):
        self.every = line_texts.file_fps or []
        self.counts = line_texts.counts()
        self.inside = range(line_texts.start, line_texts.start + len(line_texts))
        self.added_fps = added_fps
        self.copies: dict[int, list[int]] | None = None
        self.best: dict[Key, int] = {}
        self.start = line_texts.start

    def _outside(self, fp: int) -> list[int]:
        if self.copies is None:
            self.copies = {}
            for k, f in enumerate(self.every):
                if k not in self.inside:
                    self.copies.setdefault(f, []).append(k)
        return self.copies.get(fp, [])

    def _written(self, key: Key) -> list[int]:
        return self.added_fps(key[0], key[1])

    def _run_at(self, written: list[int], idx: int, k: int) -> tuple[int, int]:
        """(length, lines the file holds once) of the run of the edit's line ``idx`` at
        the file's line ``k``, over the whole file."""
        every = self.every
        top = 0
        while idx - top > 0 and k - top > 0 and every[k - top - 1] == written[idx - top - 1]:
            top += 1
        down = 0
        while (
            idx + down + 1 < len(written)
            and k + down + 1 < len(every)
            and every[k + down + 1] == written[idx + down + 1]
        ):
            down += 1
        once = sum(1 for j in range(k - top, k + down + 1) if self.counts[every[j]] == 1)
        return top + down + 1, once

    def _longest(self, key: Key) -> int:
        """The edit's longest run through a copy of the write's text outside the
        window that holds a text the file holds once."""
        got = self.best.get(key)
        if got is not None:
            return got
        written, idx, best = self._written(key), key[2], 0
        if 0 <= idx < len(written):
            for k in self._outside(written[idx]):
                run, once = self._run_at(written, idx, k)
                if once and run > best:
                    best = run
        self.best[key] = best
        return best

    def taken(self, key: Key, i: int) -> bool:
        there = self._longest(key)
        if there < STRONG_RUN:
            return False
        written = self._written(key)
        if not 0 <= key[2] < len(written):
            return False
        here, _ = self._run_at(written, key[2], self.start + i)  # not cut by the window
        # the whole file's order (``rank_of``); what it cannot weigh here (the outside
        # line's commit: whether the write is older than it, or stale there) it takes
        # as no obstacle: measured on entireio, windows then differ from the whole
        # file on fewer lines (165 -> 140 of 17,063; 155 -> 121 of 8,209), claiming a
        # session the file does not on fewer (111 -> 64; 103 -> 37), and more often
        # giving nobody where the file gives a session (45 -> 68; 36 -> 79)
        return (min(there, STRONG_RUN), there) > (min(here, STRONG_RUN), here)


def _kept_above(blamed: list[BlameLine | None], start: int = 0) -> list[int]:
    """For each line, how many lines above it are not of its commit (git kept them from
    an older one): where it stands in the file its commit was made from. ``start``:
    the file's line (0-based) ``blamed`` begins at, whose lines above are taken as
    kept (a window's blame says nothing of them)."""
    seen: Counter[str | None] = Counter()
    out = []
    for i, b in enumerate(blamed):
        commit = None if b is None else b.commit
        out.append(start + i - seen[commit])
        seen[commit] += 1
    return out


def _free_from(skips: dict[int, int], pos: int) -> int:
    """The first position from ``pos`` on that no line has taken (path-compressed)."""
    root = pos
    while root in skips:
        root = skips[root]
    while pos in skips and skips[pos] != root:
        skips[pos], pos = root, skips[pos]
    return root


def _next_twin(
    group: Twins,
    start: int,
    idx: int,
    info: dict[Key, tuple[int, float, bool, bool, int]],
    limit: float,
    skips: dict[int, int] | None = None,
    late: Callable[[int, int, float], bool] | None = None,
    line: int = 0,
) -> tuple[int, Key, float, int] | None:
    """The first free twin from ``start`` on (latest first) written at or before ``limit``,
    and not ``late(line, sid, at)`` (a session on git's clock, after the line's commit)."""
    pos = max(start, bisect_left(group.neg_at, -limit))
    while True:
        if skips is not None:
            pos = _free_from(skips, pos)
        if pos >= len(group.members):
            return None
        sid, edit = group.members[pos]
        twin = (sid, edit, idx)
        w = info[twin]
        if late is None or not late(line, sid, w[1]):
            return pos, twin, w[1], w[4]
        pos += 1


class _ByTime:
    """One line text's writes, latest first, for ``latest_before`` at many limits: sorted
    once per text, not once per line that holds it (a 30,000-line lockfile of ten
    texts sorted 3,000 writes 30,000 times: 11 s)."""

    def __init__(self, keys: list[Key], info: dict[Key, tuple[int, float, bool, bool, int]]):
        # (-time, position in keys): ties keep the order of ``keys``
        self.order = sorted(range(len(keys)), key=lambda p: (-info[keys[p]][1], p))
        self.neg_at = [-info[keys[p]][1] for p in self.order]
        self.keys = keys

    def latest_before(self, limit: float, keep: int) -> list[Key]:
        """The ``keep`` latest writes at or before ``limit``; all of them, in the order of
        ``keys``, when there are no more than ``keep``."""
        start = bisect_left(self.neg_at, -limit)
        found = self.order[start:]
        if len(found) > keep:
            return [self.keys[p] for p in found[:keep]]
        return [self.keys[p] for p in sorted(found)]


def _walk_run(
    i: int,
    key: Key,
    fps: list[int],
    prefix: tuple[list[int], list[int]],
    info: dict[Key, tuple[int, float, bool, bool, int]],
    runs: list[dict[Key, tuple[int, int, int]]],
) -> int:
    """The run through (line i, write key): its length, solid (non-trivial) count and
    count of lines whose text the file holds once, recorded on every line of it.
    Returns its length."""
    sid, edit, idx = key
    n = len(fps)
    get = info.get
    top = i
    while top > 0:
        up = get((sid, edit, idx - (i - top) - 1))
        if up is None or up[0] != fps[top - 1]:
            break
        top -= 1
    bottom = i
    while bottom + 1 < n:
        down = get((sid, edit, idx + (bottom - i) + 1))
        if down is None or down[0] != fps[bottom + 1]:
            break
        bottom += 1
    solid_before, once_before = prefix
    value = (
        bottom - top + 1,
        solid_before[bottom + 1] - solid_before[top],
        once_before[bottom + 1] - once_before[top],
    )
    base = idx - (i - top)
    for j in range(top, bottom + 1):
        runs[j][(sid, edit, base + (j - top))] = value
    return value[0]


GAP_WINDOW = 8  # lines; how far a trivial line may sit from its edit's other lines


def _fill_gaps(
    chosen: list[tuple[Key, int] | None],
    fps: list[int],
    trivial: list[bool],
    blank: list[bool],
    writes: WriteSet,
    used: set[Key],
    deadlines: Deadlines,
    late: float,
    stale: Callable[..., bool] | None = None,
    copies: _Copies | None = None,
) -> None:
    """Trivial lines between lines another session rewrote.

    A ``}`` or blank line whose neighbours were rewritten by a later session has
    no run left. It is still the first session's when a nearby line matched on
    its own evidence (not by this rule) comes from the same edit, on the same
    side in the file as in the edit (above it with a smaller index, or below
    with a larger one), and the distance in the edit fits the distance in the file.
    Only the writes those anchors point at are looked up, never every write of
    the line's text.

    Across a line no session wrote (a person's ``def b():`` between the blank line
    and the edit's lines) the write must also come before the line's commit
    (``deadlines``): a blank line a person committed at 15:00 above their own
    function is not a session's that wrote blank lines at 15:22 below it. Beside
    the edit's lines, a later write may take a line blamed on an older commit:
    git's diff slides identical trivial lines.
    """
    anchors = list(chosen)  # lines matched by runs or on their own
    # First the lines a write can be made for (before their commit), then, with
    # the writes left, the lines git's diff may have slid one onto: a session's
    # two blank lines above its function, which git says are the two below it,
    # go to those two (its commit's, as its note says), not to the person's
    # older pair above.
    info = writes.info
    n = len(chosen)
    # the writes each line's anchors point at: the anchors are the same in both passes
    scanned: dict[int, tuple[list[Key], set[Key]]] = {}
    for strict in (True, False):  # writes made before the line's commit first
        for i in range(n):
            if chosen[i] is not None or not trivial[i] or fps[i] not in writes.by_fp:
                continue
            got = scanned.get(i)
            if got is None:
                got = scanned[i] = _anchored(i, anchors, trivial, blank, writes)
            found, near = got
            _take_latest(
                i,
                _options(i, found, near, strict, fps, info, used, deadlines, late),
                fps,
                deadlines.loose,
                chosen,
                used,
                stale,
                copies,
            )


def _anchored(
    i: int,
    anchors: list[tuple[Key, int] | None],
    trivial: list[bool],
    blank: list[bool],
    writes: WriteSet,
) -> tuple[list[Key], set[Key]]:
    """The writes trivial line i's anchors point at (``_fill_gaps``): of each edit's
    nearest anchor within GAP_WINDOW lines, its writes on line i's side of it, as far
    as the lines between allow; beside a blank line's run, its anchor's blank writes.
    With those found without crossing a line no session wrote."""
    n = len(anchors)
    found: list[Key] = []
    near: set[Key] = set()  # anchored without crossing a line no session wrote
    for step in (-1, 1):
        seen: set[tuple[int, int]] = set()
        crossed = False
        j = i + step
        while 0 <= j < n and abs(j - i) <= GAP_WINDOW:
            a = anchors[j]
            if a is not None and (a[0][0], a[0][1]) not in seen:
                sid, edit, aidx = a[0]
                seen.add((sid, edit))  # only the nearest anchor of an edit decides
                d_file = abs(j - i)
                # 0 < (aidx - idx) * step <= 2 * d_file + 2
                for d in range(1, 2 * d_file + 3):
                    key = (sid, edit, aidx - d * step)
                    found.append(key)
                    if not crossed:
                        near.add(key)
            elif a is None and not trivial[j]:
                crossed = True
            j += step
    if blank[i]:
        for step in (-1, 1):
            j = i + step
            while 0 <= j < n and blank[j] and abs(j - i) <= 2:
                j += step
            if 0 <= j < n and abs(j - i) <= 3:
                a = anchors[j]
                if a is not None and not blank[j]:
                    beside = writes.blank_by_edit.get((a[0][0], a[0][1]), ())
                    found += beside
                    near.update(beside)
    return found, near


def _options(
    i: int,
    found: list[Key],
    near: set[Key],
    strict: bool,
    fps: list[int],
    info: dict[Key, tuple[int, float, bool, bool, int]],
    used: set[Key],
    deadlines: Deadlines,
    late: float,
) -> list[tuple[float, int, Key]]:
    """Of the writes line i's anchors point at (``found``; ``near``: without crossing a
    line no session wrote), those of its text still free that may be its source, as
    (-time, seq, write): the latest first (``_fill_gaps``)."""
    options: list[tuple[float, int, Key]] = []
    for key in found:
        w = info.get(key)
        if w is None or w[0] != fps[i] or w[2] or key in used:
            continue
        if w[1] > late or ((strict or key not in near) and deadlines.late(i, key[0], w[1])):
            continue
        options.append((-w[1], w[4], key))
    return options


def _take_latest(
    i: int,
    options: list[tuple[float, int, Key]],
    fps: list[int],
    limits: list[float],
    chosen: list[tuple[Key, int] | None],
    used: set[Key],
    stale: Callable[..., bool] | None,
    copies: _Copies | None,
) -> None:
    """Give line i the latest of ``options`` (-time, seq, key) the commit window does
    not turn away (both gap rules)."""
    for neg_at, _, key in sorted(set(options)):
        n_copies = 1 if copies is None else copies(key, fps[i], limits[i])
        if stale is None or not stale(i, -neg_at, n_copies):
            chosen[i] = (key, 1)
            used.add(key)
            return


class _Copies:
    """``copies(key, fp, limit)``: what the commit-window check (``window.stale``) is
    told of a write: how many lines of its text its edit made, where no other
    session wrote to the file between it and ``limit`` (the line's commit); else 0.

    A person who commits a session's work in two commits (``git add -p``, a rebase)
    leaves the first commit with some of the edit's copies of a repeated text
    (``validate(order)`` in three tests) and the line's commit with the rest: the
    write is still the source of those. So is a single copy the first commit did
    not add (the file held the text already: the person's own test's
    ``validate(order)``, the session's copy in the next commit). A session that wrote to the file in
    between is the nearer writer: then the write is stale as soon as its first
    commit had the text (on packaging's tweaks an older session's long run
    otherwise won lines from the later session that wrote them again)."""

    def __init__(self, writes: WriteSet) -> None:
        self.writes = writes
        self.in_edit: dict[tuple[int, int, int], int] = {}
        self._others: _LaterWriters | None = None

    def __call__(self, key: Key, fp: int, limit: float) -> int:
        info = self.writes.info
        if self._others is None:
            self._others = _LaterWriters(self.writes.edit_info)
        if self._others.any_between(info[key][1], limit, key[0]):
            return 0  # another session wrote here since: the nearer writer
        edit = (key[0], key[1], fp)
        got = self.in_edit.get(edit)
        if got is None:
            pairs = self.writes.by_edit[(key[0], key[1])]
            got = self.in_edit[edit] = sum(1 for _, f in pairs if f == fp)
        return got


class _LaterWriters:
    """``any_between(at, limit, sid)``: whether a session other than ``sid`` wrote to
    the file after ``at`` and had begun by ``limit`` (its first write here at or
    before ``limit``, its last after ``at``).

    Each session's span here (first and last write), sorted by its last write: the
    sessions whose last write is after ``at`` are a suffix, and of those only the
    two earliest beginners (of different sessions) can answer, one of them not
    ``sid``. A question is a bisection, not a pass over every session (a thousand
    sessions, five thousand questions on click's core.py)."""

    def __init__(self, edit_info: dict[tuple[int, int], tuple[float, bool, bool]]) -> None:
        spans: dict[int, list[float]] = {}
        for (sid, _), (at, _, _) in edit_info.items():  # an edit's writes share its time
            span = spans.get(sid)
            if span is None:
                spans[sid] = [at, at]
            elif at < span[0]:
                span[0] = at
            elif at > span[1]:
                span[1] = at
        order = sorted(spans.items(), key=lambda item: item[1][1])
        self.lasts = [span[1] for _, span in order]
        # for the suffix from each position: the earliest first write and its session,
        # and the earliest first write of any other session
        inf = float("inf")
        self.best: list[tuple[float, int, float]] = [(inf, -1, inf)] * (len(order) + 1)
        for n in range(len(order) - 1, -1, -1):
            sid, (first, _) = order[n]
            b_first, b_sid, second = self.best[n + 1]
            if first < b_first:
                self.best[n] = (first, sid, b_first)
            else:
                self.best[n] = (b_first, b_sid, min(second, first))

    def any_between(self, at: float, limit: float, sid: int) -> bool:
        b_first, b_sid, second = self.best[bisect_right(self.lasts, at)]
        return (second if b_sid == sid else b_first) <= limit


def _fill_gaps_where_committed(
    chosen: list[tuple[Key, int] | None],
    fps: list[int],
    trivial: list[bool],
    blamed: list[BlameLine | None],
    writes: WriteSet,
    used: set[Key],
    deadlines: Deadlines,
    stale: Callable[..., bool] | None = None,
    copies: _Copies | None = None,
) -> None:
    """Trivial lines whose edit's other lines are now far away, measured where their
    commit put them.

    A later session that rewrote a function above a ``}`` leaves that ``}`` (git
    keeps it: its diff slides identical brackets) far below the first session's
    lines it once closed. In the version of the file the line's commit made
    (blame's original line numbers) it is still beside them: the gap rule's test
    (same edit, same side, distances that fit) applies there, to anchors the same
    commit brought that are now more than GAP_WINDOW lines away (nearer ones the
    gap rule weighed already, with what lies between). The write must come
    before that commit.
    """
    info = writes.info
    n = len(chosen)
    by_commit: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for j in range(n):
        b = blamed[j]
        if chosen[j] is not None and b is not None and b.commit is not None:
            by_commit.setdefault((b.commit, b.orig_path), []).append((b.orig_line, j))
    if not by_commit:
        return
    # where each commit's lines are now, in order: between the line and its anchor
    # the commit may have brought only lines of the anchor's edit (else they were
    # apart already then, and what separates them is no later insertion)
    now_at: dict[str, list[int]] = {}
    for j in range(n):
        b = blamed[j]
        if b is not None and b.commit is not None:
            now_at.setdefault(b.commit, []).append(j)
    for found in by_commit.values():
        found.sort()
    for i in range(n):
        b = blamed[i]
        if chosen[i] is not None or not trivial[i] or b is None or b.commit is None:
            continue
        if fps[i] not in writes.by_fp:
            continue
        spots = by_commit.get((b.commit, b.orig_path), [])
        lo = bisect_left(spots, (b.orig_line - GAP_WINDOW, -1))
        hi = bisect_left(spots, (b.orig_line + GAP_WINDOW + 1, -1))
        options: list[tuple[float, int, Key]] = []
        seen: set[tuple[int, int, int]] = set()
        for orig, j in sorted(spots[lo:hi], key=lambda s: abs(s[0] - b.orig_line)):
            a = chosen[j]
            if a is None or orig == b.orig_line or trivial[j] or a[1] < 2:
                continue  # only a line matched in a run of its edit anchors this far
            if abs(j - i) <= GAP_WINDOW:
                continue  # near here too: the gap rule above had its say
            sid, edit, aidx = a[0]
            mine = now_at[b.commit]
            between = mine[bisect_left(mine, min(i, j) + 1) : bisect_left(mine, max(i, j))]
            if any(_edit_of(chosen[k]) != (sid, edit) for k in between):
                continue  # the commit's other lines between them now: they were apart then
            step = 1 if orig > b.orig_line else -1
            if (sid, edit, step) in seen:
                continue  # only the nearest anchor of an edit on each side decides
            seen.add((sid, edit, step))
            for d in range(1, 2 * abs(orig - b.orig_line) + 3):
                key = (sid, edit, aidx - d * step)
                w = info.get(key)
                if w is None or w[0] != fps[i] or w[2] or key in used:
                    continue
                if deadlines.late(i, sid, w[1]):
                    continue
                options.append((-w[1], w[4], key))
        _take_latest(i, options, fps, deadlines.loose, chosen, used, stale, copies)


def _edit_of(pick: tuple[Key, int] | None) -> tuple[int, int] | None:
    return None if pick is None else (pick[0][0], pick[0][1])


def _whole_file(
    chosen: list[tuple[Key, int] | None],
    fps: list[int],
    writes: WriteSet,
    deadlines: Deadlines,
    stale: Callable[..., bool] | None = None,
) -> None:
    """A file too short to hold evidence (``.python-version``: ``3.13``) whose whole
    text is what one edit of this very path wrote, before the commit: that edit's.

    Each line alone is trivial, but the edit wrote the file line for line, from its
    first line to its last; the latest such write wins.
    """
    info, n = writes.info, len(fps)
    want = [(k, fp) for k, fp in enumerate(fps)]
    best: tuple[float, int, Key] | None = None
    for key in writes.by_fp.get(fps[0], ()):
        sid, edit, idx = key
        fp, at, by_person, exact, seq = info[key]
        if idx != 0 or by_person or not exact:
            continue
        if any(deadlines.late(i, sid, at) for i in range(n)):
            continue
        if sorted(writes.by_edit.get((sid, edit), ())) != want:
            continue
        if best is None or (-at, seq) < (-best[0], best[1]):
            best = (at, seq, key)
    if best is None or (stale is not None and any(stale(i, best[0]) for i in range(n))):
        return
    sid, edit, _ = best[2]
    for i in range(n):
        chosen[i] = ((sid, edit, i), n)


SUFFIX_COVERAGE = 0.75
STRANGER_MIN_LINES = 3  # distinct lines a suffix-only session must have left here


def _drop_strangers(
    out: list[LineMatch | None],
    writes: WriteSet,
    final_fps: Callable[[int], set[int]] | None,
    has_exact: Callable[[int], bool] | None,
    present: set[int],
    same_project: Callable[[int], bool | None] | None = None,
) -> list[LineMatch | None]:
    """Sessions matched only by path suffix must show they worked on this project.

    A suffix match (``…/app/config.py``) is how a session in another clone of
    the project is found, but an unrelated project can have the same relative
    path and the same boilerplate (imports, a logger, ``raw = os.environ.get``).
    ``same_project(sid)`` says whether the session worked on this project: where
    its directory is a git repository on this machine, whether that is a clone of
    this one (same root commit); otherwise whether most of the distinct lines it
    left in its files (at least ``STRANGER_MIN_LINES``) are in the same files
    here. Without it, the session keeps its lines only when most of the distinct
    lines it left in this file (``final_fps``: what it wrote minus what it
    replaced itself) are here: work pulled from another clone arrives whole, a
    coincidence of boilerplate (a two-line helper both wrote) does not.
    """
    matched = {m.sid for m in out if m is not None}
    if not matched or not writes.any_suffix:
        return out
    suffix_only: dict[int, set[int]] = {}
    exact: set[int] = set()
    for edit, (_, _, is_exact) in writes.edit_info.items():  # an edit has one path
        if edit[0] not in matched:
            continue
        if is_exact:
            exact.add(edit[0])
        else:
            suffix_only.setdefault(edit[0], set()).update(fp for _, fp in writes.by_edit[edit])
    for sid, rows in writes.left_out_of(matched).items():
        for _, fp, is_exact in rows:
            if is_exact:
                exact.add(sid)
            else:
                suffix_only.setdefault(sid, set()).add(fp)
    strangers = set()
    for sid, written in suffix_only.items():
        if sid in exact or not written:
            continue
        if has_exact is not None and has_exact(sid):
            continue  # it also wrote this repository's own copy of the file
        known = same_project(sid) if same_project is not None else None
        if known is not None:
            if not known:
                strangers.add(sid)
            continue
        if final_fps is not None:
            written = final_fps(sid) or written
        if len(written & present) / len(written) < SUFFIX_COVERAGE:
            strangers.add(sid)
    if not strangers:
        return out
    return [None if m is not None and m.sid in strangers else m for m in out]


def _confidence(run: int, occurrences: int, exact_path: bool, trivial: bool) -> float:
    runs = 3 if run >= 3 else (2 if run == 2 else 1)
    copies = 1 if occurrences <= 1 else (2 if occurrences < 4 else 4)
    return _CONFIDENCES[(runs, copies, exact_path, trivial)]


def _confidence_of(run: int, occurrences: int, exact_path: bool, trivial: bool) -> float:
    if run >= 3:
        c = 0.97
    elif run == 2:
        c = 0.9
    else:
        c = 0.75
    if occurrences > 1:
        c *= 0.9 if occurrences < 4 else 0.8
    if not exact_path:
        c *= 0.95
    if trivial:
        c *= 0.95
    return round(c, 2)


# every answer _confidence_of gives, computed once (it is asked once per line)
_CONFIDENCES = {
    (run, occ, exact, trivial): _confidence_of(run, occ, exact, trivial)
    for run in (1, 2, 3)
    for occ in (1, 2, 4)
    for exact in (False, True)
    for trivial in (False, True)
}
