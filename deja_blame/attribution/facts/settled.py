"""Which lines a commit's note answers for: notes current for what this index holds.

``deja annotate --all`` (and the hooks) give every commit that sessions touched a
note that says what it was computed from (``notes/derived_from.py``: per session,
the lines it had written to the commit's files by then). Where this machine's
index knows nothing more of a commit than its note was computed from, the note
is its commit's whole answer: the lines it names are its sessions', the others a
person's, and the matcher need not look at them. Blame of an annotated history
is then git blame and a note lookup per commit, whatever the number of sessions:
the author's clone and a reviewer's (notes fetched, no transcripts) take the same
path.

The comparison is made over the writes to this file (under every name blame
followed): a session the note does not know, or one with more lines here than
the note counted for the whole commit, makes the note stale, and its lines are
matched as if it had none (their note still wins where it names a session).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from deja_blame.attribution.model import LineAttribution
from deja_blame.index import queries as Q


def settled_lines(
    conn: sqlite3.Connection,
    note_lookup: Any,
    lines: list[LineAttribution],
    paths: dict[int, bool],
) -> list[bool]:
    """One flag per line: its commit has a note that is current here."""
    recorded_of: Callable[[str], dict[str, int] | None] | None = getattr(
        note_lookup, "derived_from", None
    )
    if recorded_of is None:
        return [False] * len(lines)
    times: dict[str, int] = {}
    for ln in lines:
        if ln.commit is not None and ln.commit_time is not None:
            times.setdefault(ln.commit, ln.commit_time)
    records: dict[str, dict[str, int]] = {}
    for commit in times:
        recorded = recorded_of(commit)
        if recorded is not None:
            records[commit] = recorded
    if not records:
        return [False] * len(lines)
    current = current_commits(records, times, Q.write_counts(conn, paths))
    return [ln.commit in current for ln in lines]


def current_commits(
    records: dict[str, dict[str, int]],
    times: dict[str, int],
    rows: list[tuple[int, str, float | None, int]],
) -> set[str]:
    """The commits of ``records`` (commit -> what its note was computed from) whose
    note counts every session that wrote ``rows`` (path id, session id, time, lines)
    by the commit's time (``times``), with at least as many lines."""
    from deja_blame.notes.derived_from import SKEW, is_stale, session_key

    # the writes in time order; the commits too: each session's count grows as a
    # sweep passes the commits' times, one pass over the writes for them all
    timed = sorted(((at, session_key(sid), n) for _, sid, at, n in rows), key=_time_first)
    local: dict[str, int] = {}
    k = 0
    out: set[str] = set()
    for commit in sorted(records, key=lambda c: times[c]):
        limit = times[commit] + SKEW
        while k < len(timed) and _time_first(timed[k])[1] <= limit:
            _, key, n = timed[k]
            local[key] = local.get(key, 0) + n
            k += 1
        if not is_stale(records[commit], local):
            out.add(commit)
    return out


def _time_first(write: tuple[float | None, str, int]) -> tuple[int, float]:
    # a write of no known time counts for every commit (as the note's own count does)
    at = write[0]
    return (0, float("-inf")) if at is None else (1, at)
