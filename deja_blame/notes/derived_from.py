"""What a note was computed from, so that whether it is stale is a comparison.

A commit's note is derived from what sessions wrote to the commit's files (every
path its diff names, here or in another clone: stage 1 finds those paths and gives
them, ``attribution/facts/indexread.session_writes``) by the commit's time; a later write cannot give the commit a line. The note's
``derived_from`` records, per such session, a key (``session_key``: a digest of
its id, so a session that left no line in the commit is not named to whoever
reads the notes) and how many lines it had written there then.

A note is stale when this machine's index knows a session the note does not
name, or more lines of one it names: a transcript that arrived (or grew) after
the note was written. A note that names more than this index knows (computed on
another machine, with other transcripts) is not stale here: re-deriving it
would find nothing new. A note without the field (an older deja's, another
tool's) is stale wherever the index knows a session of its commit.
"""

from __future__ import annotations

import math
import sqlite3
from bisect import bisect_right
from collections.abc import Iterable

import orjson

from deja_blame.index import queries as Q
from deja_blame.notes.history import HistoryCommit

# Generous on purpose (identity.SKEW, not the matcher's 120 s): this only chooses the
# sessions worth a look; the matcher's own window decides which line is whose.
SKEW = 600.0
KEY_DIGITS = 16

Recorded = dict[str, int]


def session_key(session_id: str) -> str:
    from hashlib import sha256  # here: its import sets up every OpenSSL digest (4 ms)

    return sha256(session_id.encode("utf-8", "surrogateescape")).hexdigest()[:KEY_DIGITS]


def is_stale(recorded: Recorded | None, local: Recorded) -> bool:
    """Whether a note that says it was computed from ``recorded`` misses what the index
    now holds for its commit (``local``)."""
    if not local:
        return False
    if recorded is None:
        return True
    if recorded == local:
        return False  # the usual answer (a session at work writes after the commit), in C
    return any(recorded.get(key, -1) < n for key, n in local.items())


# the record of a commit no session wrote the files of, that no moved block reached,
# while the index held this many sessions (looked at again when one arrives, not at
# each write of a session at work: the hook's pass would redo every such commit)
MOVES_ONLY = "moves-"


def none_value(local: Recorded, sessions: int, after: Recorded | None = None) -> str:
    """What a commit derived with no line is recorded with (``.git/deja/history``):
    the digest of what the sessions had written to its files by its time
    (``SessionWrites.of``) and of which of those lines came after it (``after``,
    ``SessionWrites.after``), or, where none had, the number of sessions the index
    held. A transcript whose writes are timed again to before the commit (a clock
    corrected) has as many lines, but no longer after it: the value changes, as it
    does for a new write. The pass, the post-commit hook and blame's settled facts
    all compare against this one value."""
    if not local:
        return f"{MOVES_ONLY}{sessions}"
    # none after: the digest of ``local`` alone, as recorded before ``after`` was
    return digest({**local, **{f"{key}+": n for key, n in (after or {}).items()}})


def still_derived(
    recorded: Recorded | None,
    none: str | None,
    local: Recorded,
    sessions: int,
    after: Recorded | None = None,
) -> bool:
    """Whether a commit's note, computed from ``recorded`` (None: it has none, or it
    does not say), or else its record of no line (``none``), was computed from what
    the index holds now (``local``, ``after`` of them after the commit, while it holds
    ``sessions`` sessions)."""
    if recorded is not None:
        return not is_stale(recorded, local)
    return none is not None and none == none_value(local, sessions, after)


def combined(recorded: Recorded | None, local: Recorded) -> Recorded:
    """What a note re-derived here was computed from: what it said, and what is here."""
    out = dict(recorded or {})
    for key, n in local.items():
        out[key] = max(n, out.get(key, 0))
    return dict(sorted(out.items()))


def digest(local: Recorded) -> str:
    """One short value for ``local`` (the local record of commits that got no note)."""
    from hashlib import sha256

    text = orjson.dumps(local, option=orjson.OPT_SORT_KEYS)
    return sha256(text).hexdigest()[:KEY_DIGITS]


class SessionWrites:
    """The index's writes to a history's files, read once: per path, per session and
    edit time, how many lines. ``of(commit)`` is then a sum, no SQL. ``pids``: each
    file's written paths (stage 1's to find: ``indexread.session_writes``)."""

    def __init__(self, conn: sqlite3.Connection, pids: dict[str, list[int]]) -> None:
        self.pids = pids
        wanted = {pid for pids in self.pids.values() for pid in pids}
        self.writes: dict[int, list[tuple[str, float | None, int]]] = {}
        self._timelines: dict[int, _Timeline] = {}
        for pid, session_id, at, n in Q.write_counts(conn, wanted):
            self.writes.setdefault(pid, []).append((session_key(session_id), at, n))

    def touched(self) -> bool:
        """Whether any session wrote to any of these files."""
        return bool(self.writes)

    def of(self, commit: HistoryCommit) -> Recorded:
        """session key -> lines written to the commit's files by its time (plus skew)."""
        return self._until(commit, commit.time + SKEW)

    def after(self, commit: HistoryCommit) -> Recorded:
        """Of ``of(commit)``'s lines, those written after the commit's own time: what
        its record of no line also says (``none_value``)."""
        before = self._until(commit, commit.time)
        out = {key: n - before.get(key, 0) for key, n in self.of(commit).items()}
        return {key: n for key, n in out.items() if n > 0}

    def _until(self, commit: HistoryCommit, limit: float) -> Recorded:
        counts: Recorded = {}
        seen: set[int] = set()
        for rel in commit.paths:
            for pid in self.pids.get(rel, ()):
                if pid in seen:
                    continue
                seen.add(pid)
                self._timeline(pid).add_until(limit, counts)
        return dict(sorted(counts.items()))

    def _timeline(self, pid: int) -> _Timeline:
        got = self._timelines.get(pid)
        if got is None:
            got = self._timelines[pid] = _Timeline(self.writes.get(pid, ()))
        return got


class _Timeline:
    """One path's writes by session, for ``SessionWrites.of`` asked of hundreds of
    commits: a session's writes span minutes, so for a commit it has written all or
    none of them but near its own time. Summing every write for every commit cost
    2.5 s at 10,000 sessions (a blame while a session is at work asks it of every
    noted commit); this is a bisect per session that had begun by the commit."""

    def __init__(self, writes: Iterable[tuple[str, float | None, int]]) -> None:
        times: dict[str, list[tuple[float, int]]] = {}
        for key, at, n in writes:
            times.setdefault(key, []).append((-math.inf if at is None else at, n))
        rows = []
        for key, got in times.items():
            got.sort()
            cum, total = [], 0
            for _, n in got:
                total += n
                cum.append(total)
            rows.append((got[0][0], got[-1][0], key, [t for t, _ in got], cum))
        rows.sort(key=lambda r: r[0])
        self.first = [r[0] for r in rows]  # each session's first write, in order
        self.rows = rows

    def add_until(self, limit: float, counts: Recorded) -> None:
        """Add to ``counts`` each session's lines written at or before ``limit``."""
        for _first, last, key, ats, cum in self.rows[: bisect_right(self.first, limit)]:
            n = cum[-1] if last <= limit else cum[bisect_right(ats, limit) - 1]
            counts[key] = counts.get(key, 0) + n
