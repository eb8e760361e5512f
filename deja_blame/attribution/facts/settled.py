"""Which lines an annotated history already answers for, so the matcher skips them.

``deja annotate --all`` (and the hooks' late pass) looks at every commit of the
branch's history that sessions could have touched: a commit given a line gets a
note that says what it was computed from (``notes/derived_from.py``); a commit
given none is recorded as looked at (``.git/deja/history``: ``none <sha>``); a
complete pass records the index's writes generation it saw (``done <gen>``).

So while the index holds the same writes as at the last complete pass, every
commit that pass looked at is settled: its note's lines are its sessions', its
other lines (and every line of a commit recorded with none) are people's, and a
commit older than the first indexed session cannot hold a session's line. Blame
of an annotated history is then git blame and a note lookup per commit: no
write of the index is read for those lines, whatever the number of sessions.

When the writes changed since (a transcript arrived), a commit's note is still
current when its ``derived_from`` counts every session that wrote to the file by
the commit's time, with as many lines; other commits are matched as before.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from deja_blame.attribution.model import LineAttribution
from deja_blame.index import queries as Q
from deja_blame.notes.derived_from import SKEW, is_stale, session_key


class PassRecord:
    """The last complete history pass, when the index holds the same writes as it saw:
    the commits it recorded with no line, and where its history began (None: from
    the root commit)."""

    def __init__(self, none: set[str], since: float | None) -> None:
        self.none = none
        self.since = since


def settled_lines(
    conn: sqlite3.Connection,
    note_lookup: Any,
    passed: PassRecord | None,
    lines: list[LineAttribution],
    paths: dict[int, bool],
) -> list[bool]:
    """One flag per line: the last complete history pass (``passed``, still current)
    or a current note of the line's commit answers for it."""
    noted: Callable[[str], bool] | None = getattr(note_lookup, "noted", None)
    if noted is None:
        return [False] * len(lines)
    times: dict[str, int] = {}
    for ln in lines:
        if ln.commit is not None and ln.commit_time is not None:
            times.setdefault(ln.commit, ln.commit_time)
    if passed is not None:
        since = passed.since
        done = {
            c
            for c, at in times.items()
            if c in passed.none or noted(c) or (since is not None and at < since)
        }
        return [ln.commit in done for ln in lines]
    recorded_of: Callable[[str], dict[str, int] | None] = note_lookup.derived_from
    records: dict[str, dict[str, int]] = {}
    for commit in times:
        recorded = recorded_of(commit)
        if recorded is not None:
            records[commit] = recorded
    if not records:
        return [False] * len(lines)
    current = current_commits(records, times, Q.write_counts(conn, paths))
    return [ln.commit in current for ln in lines]


def pass_record(conn: sqlite3.Connection, none: set[str], done: str | None) -> PassRecord | None:
    """The last complete pass as ``.git/deja/history`` tells it (``none``, ``done``: the
    writes generation it saw); None when none completed or the writes changed since."""
    if done is None or done != Q.writes_generation(conn):
        return None
    count, first_start = Q.earliest_session_start(conn)
    since = first_start - SKEW if count and first_start is not None else None
    return PassRecord(none, since)


def current_commits(
    records: dict[str, dict[str, int]],
    times: dict[str, int],
    rows: list[tuple[int, str, float | None, int]],
) -> set[str]:
    """The commits of ``records`` (commit -> what its note was computed from) whose
    note counts every session that wrote ``rows`` (path id, session id, time, lines)
    by the commit's time (``times``), with at least as many lines."""
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
