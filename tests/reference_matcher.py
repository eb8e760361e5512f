"""The matcher as it was before its cost was bounded (stop 12): the reference that
``test_matcher_scale`` holds the fast matcher to, write for write.

The matcher: give a line to a session only on evidence.

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

import sqlite3
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from deja_blame.attribution.facts.model import BlameLine
from deja_blame.index.fingerprint import fingerprint, is_trivial, normalise_line
from deja_blame.index.queries import LINES

CLOCK_SKEW = 120.0  # seconds a transcript clock may run ahead of git's
STRONG_RUN = 3  # runs this long are all strong evidence: the latest write wins


@dataclass(frozen=True)
class Write:
    sid: int
    edit_ord: int
    idx: int
    at: float
    by_user: bool
    exact_path: bool


@dataclass
class LineMatch:
    sid: int
    edit_ord: int
    idx: int
    at: float
    confidence: float
    run: int


def candidate_paths(conn: sqlite3.Connection, root: str, relpaths: set[str]) -> dict[int, bool]:
    """path_id -> exact (under this repository's root) or False (suffix match: another clone)."""
    out: dict[int, bool] = {}
    root = root.rstrip("/")
    for rel in relpaths:
        if not rel:
            continue
        name = PurePosixPath(rel).name
        suffix = "/" + rel
        for pid, path in conn.execute("SELECT path_id, path FROM paths WHERE name=?", (name,)):
            if path == root + suffix:
                out[pid] = True
            elif path.endswith(suffix) and pid not in out:
                out[pid] = False
    return out


def load_writes(conn: sqlite3.Connection, paths: dict[int, bool]) -> dict[int, list[Write]]:
    """fingerprint -> every write of it to these paths, from the lines table."""
    by_fp: dict[int, list[Write]] = {}
    if not paths:
        return by_fp
    ids = list(paths)
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        for pid, fp, sid, edit_ord, idx, at, by_user in conn.execute(
            "SELECT l.path_id, l.fp, l.sid, l.edit_ord, l.idx, l.at_epoch, l.by_user"
            f" FROM {LINES} l WHERE l.path_id IN ({marks})",
            part,
        ):
            if at is None:
                continue  # a write with no time cannot be placed before a commit
            by_fp.setdefault(fp, []).append(
                Write(sid, edit_ord, idx, at, bool(by_user), paths[pid])
            )
    return by_fp


def match_lines(
    texts: list[str],
    blamed: list[BlameLine | None],
    writes_by_fp: dict[int, list[Write]],
    now: float | None = None,
    final_fps: Callable[[int], set[int]] | None = None,
) -> list[LineMatch | None]:
    """One LineMatch (or None) per line of ``texts``; ``blamed[i]`` is line i's blame."""
    now = time.time() if now is None else now
    n = len(texts)
    fps = [fingerprint(t) for t in texts]
    trivial = [is_trivial(t) for t in texts]
    # Every write of each line's text (for runs), and the candidates: the writes
    # made before the commit that introduced the line.
    every: list[dict[tuple[int, int, int], Write]] = []
    cands: list[dict[tuple[int, int, int], Write]] = []
    limits: list[float] = []
    for i in range(n):
        b = blamed[i]
        limit = (
            b.commit_time if b is not None and b.commit is not None and b.commit_time else now
        ) + CLOCK_SKEW
        limits.append(limit)
        row: dict[tuple[int, int, int], Write] = {}
        ok: dict[tuple[int, int, int], Write] = {}
        for w in writes_by_fp.get(fps[i], ()):
            key = (w.sid, w.edit_ord, w.idx)
            row[key] = w
            if w.at <= limit:
                ok[key] = w
        every.append(row)
        cands.append(ok)
    # Runs: line i and i+1 matching consecutive lines (idx, idx+1) of one edit.
    # A run is evidence of place, whichever commit brought its neighbours: a
    # session that rewrote a whole file runs through lines older commits kept.
    down: list[dict[tuple[int, int, int], tuple[int, int]]] = [dict() for _ in range(n)]
    for i in range(n - 1, -1, -1):
        for key in every[i]:
            nxt = down[i + 1].get((key[0], key[1], key[2] + 1)) if i + 1 < n else None
            length, solid = nxt if nxt else (0, 0)
            down[i][key] = (length + 1, solid + (0 if trivial[i] else 1))
    up: list[dict[tuple[int, int, int], tuple[int, int]]] = [dict() for _ in range(n)]
    for i in range(n):
        for key in every[i]:
            prv = up[i - 1].get((key[0], key[1], key[2] - 1)) if i > 0 else None
            length, solid = prv if prv else (0, 0)
            up[i][key] = (length + 1, solid + (0 if trivial[i] else 1))
    # Each write is one line: it can account for one line of the file, not for
    # every line with the same text (a person's own "return None" elsewhere, or a
    # copy left behind when a block moved). Strongest evidence is served first:
    # the longest run up to STRONG_RUN lines, then the latest write (a later
    # session that re-wrote a block beats the longer run of the earlier one that
    # wrote it whole), then the longer run.
    proposals: list[tuple[int, float, int, tuple[int, int, int]]] = []
    for i in range(n):
        for key, w in cands[i].items():
            run = up[i][key][0] + down[i][key][0] - 1
            solid = up[i][key][1] + down[i][key][1] - (0 if trivial[i] else 1)
            if trivial[i] and (run < 2 or solid < 1):
                continue  # a lone "}" or blank line is no evidence on its own
            proposals.append((run, w.at, i, key))
    proposals.sort(key=lambda p: (-min(p[0], STRONG_RUN), -p[1], -p[0], p[2]))
    chosen: list[tuple[tuple[int, int, int], int] | None] = [None] * n
    used: set[tuple[int, int, int]] = set()
    for run, _, i, key in proposals:
        if chosen[i] is None and key not in used:
            chosen[i] = (key, run)
            used.add(key)

    # Identical trivial lines ("}", blank) are interchangeable to git's diff: blame
    # may say an old commit kept the "}" that a later session actually added next
    # to its own lines. So the gap rule may use any write made by the blamed
    # revision, anchored to its own edit's lines; across a line no session wrote,
    # only one made before the line's commit.
    late = [
        {k: w for k, w in every[i].items() if w.at <= now + CLOCK_SKEW} if trivial[i] else {}
        for i in range(n)
    ]
    blank = [not normalise_line(t) for t in texts]
    _fill_gaps(chosen, late, trivial, used, blank, limits)
    if n and all(trivial) and not any(chosen):
        _whole_file(chosen, fps, writes_by_fp, min(limits))
    # How often each fingerprint occurs in each session's edits of the file.
    common: Counter[tuple[int, int]] = Counter()
    for fp in set(fps):
        for w in writes_by_fp.get(fp, ()):
            common[(w.sid, fp)] += 1
    out: list[LineMatch | None] = []
    for i in range(n):
        pick = chosen[i]
        if pick is None or every[i][pick[0]].by_user:
            out.append(None)  # nobody, or the person wrote it last
            continue
        key, run = pick
        w = every[i][key]
        out.append(
            LineMatch(
                sid=w.sid,
                edit_ord=w.edit_ord,
                idx=w.idx,
                at=w.at,
                confidence=_confidence(run, common[(w.sid, fps[i])], w.exact_path, trivial[i]),
                run=run,
            )
        )
    return _drop_strangers(out, fps, writes_by_fp, final_fps)


GAP_WINDOW = 8  # lines; how far a trivial line may sit from its edit's other lines


def _whole_file(
    chosen: list[tuple[tuple[int, int, int], int] | None],
    fps: list[int],
    writes_by_fp: dict[int, list[Write]],
    limit: float,
) -> None:
    """A file of trivial lines only is the latest edit of this exact path, before
    every line's commit, whose writes of the file's texts are the file line for line."""
    pairs: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for fp in set(fps):
        for w in writes_by_fp.get(fp, ()):
            pairs.setdefault((w.sid, w.edit_ord), []).append((w.idx, fp))
    want = list(enumerate(fps))
    best: tuple[float, int, int] | None = None
    for w in writes_by_fp.get(fps[0], ()):
        if w.idx != 0 or w.by_user or not w.exact_path or w.at > limit:
            continue
        if sorted(pairs[(w.sid, w.edit_ord)]) != want:
            continue
        if best is None or (-w.at, w.sid, w.edit_ord) < (-best[0], best[1], best[2]):
            best = (w.at, w.sid, w.edit_ord)
    if best is not None:
        for i in range(len(fps)):
            chosen[i] = ((best[1], best[2], i), len(fps))


def _fill_gaps(
    chosen: list[tuple[tuple[int, int, int], int] | None],
    cands: list[dict[tuple[int, int, int], Write]],
    trivial: list[bool],
    used: set[tuple[int, int, int]],
    blank: list[bool],
    limits: list[float],
) -> None:
    """Trivial lines between lines another session rewrote.

    A ``}`` or blank line whose neighbours were rewritten by a later session has
    no run left. It is still the first session's when a nearby line matched on
    its own evidence (not by this rule) comes from the same edit, on the same
    side in the file as in the edit (above it with a smaller index, or below
    with a larger one), and the distance in the edit fits the distance in the file.
    """
    anchors = [c for c in chosen]  # lines matched by runs or on their own
    n = len(chosen)
    for strict in (True, False):  # writes made before the line's commit first, then slid
        for i in range(n):
            if chosen[i] is not None or not trivial[i] or not cands[i]:
                continue
            best: tuple[float, tuple[int, int, int]] | None = None
            for key, w in cands[i].items():
                if key in used or w.by_user or (strict and w.at > limits[i]):
                    continue
                sid, edit, idx = key
                ways = {_anchored(anchors, trivial, i, sid, edit, idx, step) for step in (-1, 1)}
                near = "beside" in ways or (blank[i] and _beside(anchors, blank, i, sid, edit))
                if not near and "across" in ways:
                    near = w.at <= limits[i]  # across a line no session wrote
                if near:
                    if best is None or w.at > best[0]:
                        best = (w.at, key)
            if best is not None:
                chosen[i] = (best[1], 1)
                used.add(best[1])


def _beside(
    anchors: list[tuple[tuple[int, int, int], int] | None],
    blank: list[bool],
    i: int,
    sid: int,
    edit: int,
) -> bool:
    """A non-blank line of this edit follows or precedes the blank run holding line i."""
    for step in (-1, 1):
        j = i + step
        while 0 <= j < len(anchors) and blank[j] and abs(j - i) <= 2:
            j += step
        if 0 <= j < len(anchors) and abs(j - i) <= 3:
            a = anchors[j]
            if a is not None and a[0][0] == sid and a[0][1] == edit and not blank[j]:
                return True
    return False


def _anchored(
    anchors: list[tuple[tuple[int, int, int], int] | None],
    trivial: list[bool],
    i: int,
    sid: int,
    edit: int,
    idx: int,
    step: int,
) -> str | None:
    """The nearest anchor of this edit in direction ``step`` agrees with ``idx``:
    "beside" it, or "across" a line no session wrote; None: it does not."""
    j = i + step
    crossed = False
    while 0 <= j < len(anchors) and abs(j - i) <= GAP_WINDOW:
        a = anchors[j]
        if a is not None and a[0][0] == sid and a[0][1] == edit:
            d_file, d_edit = abs(j - i), (a[0][2] - idx) * step
            if not 0 < d_edit <= 2 * d_file + 2:
                return None
            return "across" if crossed else "beside"
        if a is None and not trivial[j]:
            crossed = True
        j += step
    return None


SUFFIX_COVERAGE = 0.75


def _drop_strangers(
    out: list[LineMatch | None],
    fps: list[int],
    writes_by_fp: dict[int, list[Write]],
    final_fps: Callable[[int], set[int]] | None,
) -> list[LineMatch | None]:
    """Sessions matched only by path suffix must look like this project's.

    A suffix match (``…/app/config.py``) is how a session in another clone of
    the project is found, but an unrelated project can have the same relative
    path and the same boilerplate (imports, a logger, ``raw = os.environ.get``).
    Such a session keeps its lines only when most of the distinct lines it left
    in the file (``final_fps``: what it wrote minus what it replaced itself) are
    in the file: work pulled from another clone arrives whole, a coincidence of
    boilerplate does not.
    """
    suffix_only: dict[int, set[int]] = {}
    exact: set[int] = set()
    for fp, ws in writes_by_fp.items():
        for w in ws:
            if w.exact_path:
                exact.add(w.sid)
            else:
                suffix_only.setdefault(w.sid, set()).add(fp)
    strangers = set()
    present = set(fps)
    for sid, written in suffix_only.items():
        if sid in exact or not written:
            continue
        if final_fps is not None:
            written = final_fps(sid) or written
        if len(written & present) / len(written) < SUFFIX_COVERAGE:
            strangers.add(sid)
    if not strangers:
        return out
    return [None if m is not None and m.sid in strangers else m for m in out]


def _confidence(run: int, occurrences: int, exact_path: bool, trivial: bool) -> float:
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
