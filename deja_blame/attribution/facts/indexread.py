"""Stage 1's questions to the index: the SQL that reads what a file's facts need.

Every read the facts stage makes of the index runs here (``index/queries.py``
keeps what the commands, the reports, the notes and the caches ask): the paths
that stand for a file (this path, and the same path in other clones, by
suffix), the writes of its texts (the edit shapes' lines of a path, one range,
and the shapes' edits, one range each: ``writes.load_writes``), the edits behind
them, and the sessions' names and what their identity depends on. The schema
is ``index/``'s (``db.py``): a change of it that touches these tables touches
this module too. Each function returns plain values.
"""

from __future__ import annotations

import sqlite3
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from deja_blame.attribution.facts.clone_paths import stands_for
from deja_blame.index.db import in_chunks
from deja_blame.index.queries import LINES, LINES_TIMED
from deja_blame.models import UNKNOWN_AGENT
from deja_blame.pathtext import as_text

if TYPE_CHECKING:
    from deja_blame.notes.derived_from import SessionWrites

# -- the paths that stand for a file ---------------------------------------------------


def paths_named(conn: sqlite3.Connection, name: str) -> list[tuple[int, str]]:
    """(path id, path) of every written path whose file name is ``name``."""
    return [(int(p), str(path)) for p, path in conn.execute(
        "SELECT path_id, path FROM paths WHERE name=?", (as_text(name),)
    )]  # fmt: skip


def candidate_paths(conn: sqlite3.Connection, root: str, relpaths: set[str]) -> dict[int, bool]:
    """The written paths that may be these files of the repository at ``root``:
    path_id -> exact (under ``root``) or False (a suffix match: another clone;
    never a folder outside any clone, ``clone_paths.stands_for``)."""
    out: dict[int, bool] = {}
    root = root.rstrip("/")
    for rel in relpaths:
        if not rel:
            continue
        for pid, path in paths_named(conn, PurePosixPath(rel).name):
            here = stands_for(path, rel, root)
            if here or (here is False and pid not in out):
                out[pid] = here
    return out


def session_writes(conn: sqlite3.Connection, root: str, relpaths: Iterable[str]) -> SessionWrites:
    """The index's writes to these files of the repository at ``root`` (each file's
    written paths: ``candidate_paths``), for what a note is derived from."""
    from deja_blame.notes.derived_from import SessionWrites

    pids: dict[str, list[int]] = {}
    for rel in set(relpaths):
        found = candidate_paths(conn, root, {rel})
        if found:
            pids[rel] = sorted(found)
    return SessionWrites(conn, pids)


def path_texts(conn: sqlite3.Connection, path_ids: Iterable[int]) -> dict[int, str]:
    """path id -> the written path, for these path ids."""
    return {
        int(pid): str(path)
        for pid, path in conn.execute(
            "SELECT path_id, path FROM paths WHERE path_id IN (SELECT value FROM json_each(?))",
            (_json_ints(sorted(set(path_ids))),),
        )
    }


def all_paths(conn: sqlite3.Connection) -> list[tuple[int, str]]:
    """(path id, path) of every written path."""
    return [(int(p), str(path)) for p, path in conn.execute("SELECT path_id, path FROM paths")]


# -- the writes of a file's texts -----------------------------------------------------

# A write's columns (``queries.LINES_TIMED``: a row of ``lines`` with its edit's time
# and author), in the lines table's order.
WRITE_COLS = "l.path_id, l.fp, l.sid, l.edit_ord, l.idx, l.at_epoch, l.by_user"
WRITE_ORDER = "l.fp, l.sid, l.edit_ord, l.idx"


def line_writes(
    conn: sqlite3.Connection, path_id: int, fps: list[int]
) -> list[tuple[int, int, int, int, int, float | None, int]]:
    """(path_id, fp, sid, edit_ord, idx, at_epoch, by_user) of the writes of ``fps`` to
    the path: one B-tree range per (path, fingerprint)."""
    rows: list[tuple[int, int, int, int, int, float | None, int]] = []
    for part, marks in in_chunks(fps):
        rows += conn.execute(
            f"SELECT {WRITE_COLS} FROM {LINES_TIMED}"
            f" WHERE l.path_id=? AND l.fp IN ({marks}) ORDER BY {WRITE_ORDER}",
            [path_id, *part],
        ).fetchall()
    return rows


def shape_lines_of(
    conn: sqlite3.Connection, path_id: int, fps: list[int]
) -> list[tuple[int, int, int]]:
    """(fp, shape, idx) of the edit shapes' lines of ``fps`` on the path (``index/shapes.py``),
    in that order: a shape's line once, however many edits made it."""
    return conn.execute(
        "SELECT fp, shape, idx FROM shape_lines WHERE path_id=?"
        " AND fp IN (SELECT value FROM json_each(?)) ORDER BY fp, shape, idx",
        (path_id, _json_ints(fps)),
    ).fetchall()


def edits_of_shapes(
    conn: sqlite3.Connection, shapes: list[int]
) -> dict[int, list[tuple[int, int, float | None, int]]]:
    """shape -> (sid, edit_ord, at_epoch, by_user) of each edit of that shape, by
    (sid, edit_ord): one range of ``edit_times_shape`` (which covers them) a shape."""
    out: dict[int, list[tuple[int, int, float | None, int]]] = {}
    rows = conn.execute(
        "SELECT shape, sid, ord, at_epoch, by_user FROM edit_times"
        " WHERE shape IN (SELECT value FROM json_each(?)) ORDER BY shape, sid, ord",
        (_json_ints(shapes),),
    ).fetchall()
    for shape, sid, edit_ord, at, by_user in rows:
        got = out.get(shape)
        if got is None:
            out[shape] = [(sid, edit_ord, at, by_user)]
        else:
            got.append((sid, edit_ord, at, by_user))
    return out


def line_writes_of_sessions(
    conn: sqlite3.Connection, path_id: int, fps: list[int], sids: list[int]
) -> list[tuple[int, int, int, int, int, float | None, int]]:
    """(path_id, fp, sid, edit_ord, idx, at_epoch, by_user) of these sessions' writes of
    ``fps`` to the path: one B-tree range per (path, fingerprint, session)."""
    return conn.execute(
        f"SELECT {WRITE_COLS} FROM {LINES_TIMED} WHERE l.path_id=?"
        " AND l.fp IN (SELECT value FROM json_each(?))"
        " AND l.sid IN (SELECT value FROM json_each(?))",
        (path_id, _json_ints(fps), _json_ints(sids)),
    ).fetchall()


def line_writes_between(
    conn: sqlite3.Connection,
    path_id: int,
    fps: list[int],
    windows: list[tuple[float, float]],
) -> list[tuple[int, int, int, int, int, float | None, int]]:
    """(path_id, fp, sid, edit_ord, idx, at_epoch, by_user) of the writes of ``fps`` to
    the path made in one of these (from, to) time windows (epoch seconds, both ends
    in): one B-tree range per (path, fingerprint) within the windows' span, each row
    then kept or not by a bisect over the merged windows."""
    if not windows or not fps:
        return []
    # The windows merged, one time range asked of SQLite and each row kept by a bisect:
    # testing every row against every window in SQL (json_each per row) cost 1.8 s
    # for a '}' 10,000 sessions wrote.
    merged: list[list[float]] = []
    for a, b in sorted((float(a), float(b)) for a, b in windows):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    starts = [a for a, _ in merged]
    rows = conn.execute(
        f"SELECT {WRITE_COLS} FROM {LINES_TIMED}"
        " WHERE l.path_id=?1 AND l.fp IN (SELECT value FROM json_each(?2))"
        " AND l.at_epoch BETWEEN ?3 AND ?4"
        f" ORDER BY {WRITE_ORDER}",
        (path_id, _json_ints(fps), merged[0][0], merged[-1][1]),
    ).fetchall()
    out = []
    for row in rows:
        k = bisect_right(starts, row[5]) - 1
        if k >= 0 and row[5] <= merged[k][1]:
            out.append(row)
    return out


def has_timed_write(conn: sqlite3.Connection, path_id: int, fps: list[int]) -> bool:
    """Whether some session wrote one of ``fps`` to the path at a known time."""
    row = conn.execute(
        f"SELECT 1 FROM {LINES_TIMED} WHERE l.path_id=? AND l.fp IN (SELECT value FROM json_each(?))"
        " AND l.at_epoch IS NOT NULL LIMIT 1",
        (path_id, _json_ints(fps)),
    ).fetchone()
    return row is not None


def _json_ints(values: list[int]) -> str:
    # one parameter for a list of any length: one query, no chunks (which keeps the
    # order, and asks SQLite once for a set of ids or fingerprints)
    return "[" + ",".join(map(str, values)) + "]"


def fingerprints_written(conn: sqlite3.Connection, path_id: int, fps: Iterable[int]) -> set[int]:
    """Which of ``fps`` some session wrote to the path."""
    return {
        int(fp)
        for (fp,) in conn.execute(
            f"SELECT DISTINCT fp FROM {LINES} WHERE path_id=?"
            " AND fp IN (SELECT value FROM json_each(?))",
            (path_id, _json_ints(sorted(set(fps)))),
        )
    }


def fingerprints_of_paths(conn: sqlite3.Connection, path_ids: list[int]) -> dict[int, set[int]]:
    """Every fingerprint some session wrote to each of these paths."""
    found: dict[int, set[int]] = {pid: set() for pid in path_ids}
    for pid, fp in conn.execute(
        f"SELECT DISTINCT path_id, fp FROM {LINES}"
        " WHERE path_id IN (SELECT value FROM json_each(?))",
        (_json_ints(sorted(path_ids)),),
    ):
        found[int(pid)].add(int(fp))
    return found


def edit_bodies_of_path(
    conn: sqlite3.Connection, path_id: int, limit: int
) -> list[bytes | str] | None:
    """The body of every edit that wrote lines to the path (its rows of ``lines``:
    an edit's added lines are its rows), or None where there are more than ``limit``."""
    rows = conn.execute(
        "SELECT body FROM edits WHERE (sid, ord) IN"
        f" (SELECT DISTINCT sid, edit_ord FROM {LINES} WHERE path_id=?) LIMIT ?",
        (path_id, limit + 1),
    ).fetchall()
    return None if len(rows) > limit else [body for (body,) in rows]


# -- the edits behind the writes -------------------------------------------------------


# An edit's row as ``attribution/facts/edits.py`` reads it, its tool and source as 0/1
# (small ints Python shares, where each row's text was a string of its own).
EDIT_COLS = (
    "e.sid, e.ord, e.step, e.tool = 'write_to_file', e.source = 'agent', e.at_epoch,"
    " p.path_id, e.body"
)


def edits_of_sessions(
    conn: sqlite3.Connection, sids: list[int], path_ids: list[int]
) -> Iterator[tuple[Any, ...]]:
    """(sid, ord, step, whole_file, by_agent, at_epoch, path_id, body) of every edit these
    sessions made of these paths (``attribution/facts/edits.py`` reads them)."""
    if not sids or not path_ids:
        return
    pmarks = ",".join("?" * len(path_ids))
    for part, marks in in_chunks(sids):
        yield from conn.execute(
            f"SELECT {EDIT_COLS} FROM edits e JOIN paths p ON p.path = e.path"
            f" WHERE e.sid IN ({marks}) AND p.path_id IN ({pmarks})",
            [*part, *path_ids],
        )


def edit_row(conn: sqlite3.Connection, sid: int, edit_ord: int) -> tuple[Any, ...] | None:
    """One edit as ``edits_of_sessions`` gives it, whatever its path."""
    row = conn.execute(
        f"SELECT {EDIT_COLS} FROM edits e LEFT JOIN paths p ON p.path = e.path"
        " WHERE e.sid=? AND e.ord=?",
        (sid, edit_ord),
    ).fetchone()
    return None if row is None else tuple(row)


def agent_edits_timed(
    conn: sqlite3.Connection, sid: int
) -> Iterator[tuple[str, str, float | None, list[str], list[str]]]:
    """(path, tool, at_epoch, removed, added) of every edit the session's agent made, in order."""
    from deja_blame.index.store import edit_lines

    for path, tool, at, body in conn.execute(
        "SELECT path, tool, at_epoch, body FROM edits WHERE sid=? AND source='agent'"
        " ORDER BY step, ord",
        (sid,),
    ):
        yield (path, tool, at, *edit_lines(body))


# -- the sessions ----------------------------------------------------------------------


def session_names(conn: sqlite3.Connection, sids: Iterable[int]) -> dict[int, tuple[str, str]]:
    """sid -> (session id, agent)."""
    return {
        int(sid): (name, source or UNKNOWN_AGENT)
        for sid, name, source in conn.execute(
            "SELECT sid, session_id, source FROM sessions WHERE sid IN (SELECT value FROM json_each(?))",
            (_json_ints(sorted(set(sids))),),
        )
    }


def session_identity_row(conn: sqlite3.Connection, sid: int) -> tuple[str, str, int, int] | None:
    """(session id, project, transcript size, mtime_ns): what a judgement of the session
    depends on (a re-read transcript changes the last two)."""
    row = conn.execute(
        "SELECT session_id, project, size, mtime_ns FROM sessions WHERE sid=?", (sid,)
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]), int(row[2]), int(row[3]))


def sessions_writing(conn: sqlite3.Connection, path_ids: Iterable[int]) -> set[int]:
    """The sessions that wrote a line to any of these paths."""
    return {
        int(sid)
        for (sid,) in conn.execute(
            f"SELECT DISTINCT sid FROM {LINES} WHERE path_id IN (SELECT value FROM json_each(?))",
            (_json_ints(sorted(set(path_ids))),),
        )
    }


def sessions_size(conn: sqlite3.Connection) -> tuple[int, int]:
    """(the highest session row id, how many sessions): changes when one is added or
    dropped, for a cache of what is known of every session."""
    row = conn.execute("SELECT coalesce(max(sid), 0), count(*) FROM sessions").fetchone()
    return int(row[0]), int(row[1])


def session_projects(conn: sqlite3.Connection) -> list[tuple[int, str]]:
    """(row id, project folder) of every indexed session that names one."""
    return [
        (int(sid), as_text(project))
        for sid, project in conn.execute(
            "SELECT sid, project FROM sessions WHERE project IS NOT NULL AND project != ''"
        )
    ]
