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

When the writes changed since (a session at work, a transcript synced), each
commit is asked as the pass asks it: its note is current while its
``derived_from`` counts every session that wrote to the commit's files by its
time, with as many lines; its record of no line while the same writes give the
same digest. A session writing now leaves older commits settled (its writes come
after them); one whose transcript arrived late unsettles the commits it concerns,
whose lines are matched again until the next pass re-derives them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deja_blame.attribution.facts.indexread import session_writes
from deja_blame.attribution.model import LineAttribution
from deja_blame.errors import DejaError
from deja_blame.index import queries as Q
from deja_blame.notes.derived_from import SKEW, none_value, still_derived


@dataclass(frozen=True)
class PassRecord:
    """What ``.git/deja/history`` says of the history passes: the commits recorded with
    no line (sha -> the value recorded: what the index held of their files), whether
    the last complete pass saw the index's writes as they are now (``current``), the
    time before which no indexed session can have written a line (None: some
    session's start is unknown), and how many sessions the index holds."""

    none: dict[str, str]
    current: bool
    since: float | None
    completed: bool  # some pass completed: most commits are settled
    sessions: int
    notes: str | None = None  # the notes commit the last complete pass ended at


def settled_lines(
    conn: sqlite3.Connection,
    root: str,
    note_lookup: Any,
    passed: PassRecord,
    lines: list[LineAttribution],
) -> list[bool]:
    """One flag per line: its commit's note or the history passes' record answers for
    it. While the last complete pass is current, every commit it recorded or noted
    is; else each commit is asked whether the index's writes to its files by its
    time are what its note or record was computed from (a session at work now does
    not unsettle older commits: its writes come after them)."""
    noted: Callable[[str], bool] | None = getattr(note_lookup, "noted", None)
    if noted is None:
        return [False] * len(lines)
    times: dict[str, int] = {}
    for ln in lines:
        if ln.commit is not None and ln.commit_time is not None:
            times.setdefault(ln.commit, ln.commit_time)
    since = passed.since
    done = {c for c, at in times.items() if since is not None and at < since}
    later: set[str] = set()  # notes the last pass did not end with: asked like the rest
    if passed.current:
        later = _noted_since(root, note_lookup, passed, set(times))
        done |= {c for c in times if c not in later and (c in passed.none or noted(c))}
        if not later:
            return [ln.commit in done for ln in lines]
    asked = [c for c in times if c not in done and (c in passed.none or noted(c))]
    if asked:
        done |= still_current(conn, root, asked, note_lookup.derived_from, passed)
    return [ln.commit in done for ln in lines]


def _noted_since(root: str, note_lookup: Any, passed: PassRecord, commits: set[str]) -> set[str]:
    """Of ``commits``, those whose note is not the one the last complete pass ended
    with: written since (a hook's note of a new commit) or fetched from elsewhere (a
    stranger's note settles nothing before the index is asked about it). All of them
    where that cannot be told (git failed); none after an older deja's pass."""
    from deja_blame.notes.store import notes_changed

    if passed.notes is None:
        # an older deja's record (no tip): settled as that deja did, until the next
        # pass records one (annotate_all.needs_pass); asking every note instead made
        # an upgraded install's blame 3x slower at 10,000 sessions
        return set()
    tip = getattr(note_lookup, "tip", None)
    now = tip() if tip is not None else None
    if now is None or now == passed.notes:
        return set()
    changed = notes_changed(root, passed.notes, now) if passed.notes else None
    return commits if changed is None else commits & changed


def still_current(
    conn: sqlite3.Connection,
    root: str,
    commits: list[str],
    recorded_of: Callable[[str], dict[str, int] | None],
    passed: PassRecord,
) -> set[str]:
    """Of ``commits``, those whose note (``recorded_of``: its ``derived_from``) or record
    of no line (``passed.none``) was computed from what the index holds now of the writes to
    the commit's files by its time: the test ``deja annotate --all`` makes, over the
    same paths (one ``git log`` of those commits for their files, one SQL pass)."""
    from deja_blame.notes.history import read_history

    try:
        found = read_history(root, ["--no-walk=unsorted", *sorted(commits)])
    except DejaError:
        return set()
    writes = session_writes(conn, root, {p for c in found for p in c.paths})
    out: set[str] = set()
    for c in found:
        local = writes.of(c)
        recorded = recorded_of(c.sha)
        after = writes.after(c) if recorded is None and local else None
        if still_derived(recorded, passed.none.get(c.sha), local, passed.sessions, after):
            out.add(c.sha)
    return out


def commit_derived_from(conn: sqlite3.Connection, root: str | Path, sha: str) -> dict[str, int]:
    """What one commit's note is derived from (``SessionWrites.of``: the hooks' and
    ``deja annotate REV``'s note)."""
    from deja_blame.notes.history import read_history

    commits = read_history(root, ["-1", sha])
    if not commits:
        return {}
    return session_writes(conn, str(root), commits[0].paths).of(commits[0])


def commit_none_value(conn: sqlite3.Connection, root: str | Path, sha: str, sessions: int) -> str:
    """What one commit derived with no line is recorded with (``none_value``: the
    post-commit hook's record)."""
    from deja_blame.notes.history import read_history

    commits = read_history(root, ["-1", sha])
    if not commits:
        return none_value({}, sessions)
    writes = session_writes(conn, str(root), commits[0].paths)
    return none_value(writes.of(commits[0]), sessions, writes.after(commits[0]))


def pass_record(
    conn: sqlite3.Connection, none: dict[str, str], done: str | None, notes: str | None = None
) -> PassRecord:
    """What ``.git/deja/history`` tells: ``none``, ``done``, the writes generation the
    last complete pass saw (None: no pass completed), and ``notes``, the notes commit
    it ended at."""
    count, first_start = Q.earliest_session_start(conn)
    since = first_start - SKEW if count and first_start is not None else None
    current = done is not None and done == Q.writes_generation(conn)
    return PassRecord(none, current, since, done is not None, count, notes)
