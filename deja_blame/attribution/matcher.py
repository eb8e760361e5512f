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

import sqlite3
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath

from deja_blame.attribution.blame_engine import BlameLine
from deja_blame.index.fingerprint import fingerprint, is_trivial

CLOCK_SKEW = 120.0  # seconds a transcript clock may run ahead of git's


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
            f"SELECT path_id, fp, sid, edit_ord, idx, at_epoch, by_user FROM lines"
            f" WHERE path_id IN ({marks})",
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
) -> list[LineMatch | None]:
    """One LineMatch (or None) per line of ``texts``; ``blamed[i]`` is line i's blame."""
    now = time.time() if now is None else now
    n = len(texts)
    fps = [fingerprint(t) for t in texts]
    trivial = [is_trivial(t) for t in texts]
    # Candidate writes per line: before the commit that introduced the line.
    cands: list[dict[tuple[int, int, int], Write]] = []
    for i in range(n):
        b = blamed[i]
        limit = (
            b.commit_time if b is not None and b.commit is not None and b.commit_time else now
        ) + CLOCK_SKEW
        row: dict[tuple[int, int, int], Write] = {}
        for w in writes_by_fp.get(fps[i], ()):
            if w.at <= limit:
                row[(w.sid, w.edit_ord, w.idx)] = w
        cands.append(row)
    # Runs: line i and i+1 matching consecutive lines (idx, idx+1) of one edit.
    down: list[dict[tuple[int, int, int], tuple[int, int]]] = [dict() for _ in range(n)]
    for i in range(n - 1, -1, -1):
        for key in cands[i]:
            nxt = down[i + 1].get((key[0], key[1], key[2] + 1)) if i + 1 < n else None
            length, solid = nxt if nxt else (0, 0)
            down[i][key] = (length + 1, solid + (0 if trivial[i] else 1))
    up: list[dict[tuple[int, int, int], tuple[int, int]]] = [dict() for _ in range(n)]
    for i in range(n):
        for key in cands[i]:
            prv = up[i - 1].get((key[0], key[1], key[2] - 1)) if i > 0 else None
            length, solid = prv if prv else (0, 0)
            up[i][key] = (length + 1, solid + (0 if trivial[i] else 1))
    # How often each fingerprint occurs in each session's edits of the file.
    common: Counter[tuple[int, int]] = Counter()
    for fp in set(fps):
        for w in writes_by_fp.get(fp, ()):
            common[(w.sid, fp)] += 1
    out: list[LineMatch | None] = []
    for i in range(n):
        best: tuple[float, int, Write, int] | None = None
        for key, w in cands[i].items():
            run = up[i][key][0] + down[i][key][0] - 1
            solid = up[i][key][1] + down[i][key][1] - (0 if trivial[i] else 1)
            if trivial[i] and (run < 2 or solid < 1):
                continue  # a lone "}" or blank line is no evidence
            score = (w.at, run)
            if best is None or score > (best[0], best[1]):
                best = (w.at, run, w, run)
        if best is None or best[2].by_user:
            out.append(None)  # nobody, or the person wrote it last
            continue
        w, run = best[2], best[3]
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
    return out


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
