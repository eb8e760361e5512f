"""What the rest of deja asks of the index: its reads (and the caches' writes) outside it.

The schema lives in ``index/``: attribution, the commands, the hooks and the
reports call these functions, which return plain values or the data classes
of ``models.py``. The attribution engine's facts stage runs its own reads
(``attribution/facts/indexread.py``: a file's paths, the writes of its texts,
the edits behind them, their sessions), so a change of schema touches this
package and that module. Rows of
sessions are addressed by ``sid`` (the table's integer key) where a caller
already holds one, else by the session id.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deja_blame.index.db import in_chunks, transaction
from deja_blame.index.keys import message_id, message_ids, role_code
from deja_blame.index.times import shown_time
from deja_blame.models import UNKNOWN_AGENT
from deja_blame.pathtext import as_key, as_text

if TYPE_CHECKING:
    from deja_blame.models import Edit

# index/store.py (edits' bodies, messages) is imported by the functions that read them:
# it loads the transcript readers' text rules, which a blame answered from the notes
# or the cache never needs.

# The writes, as the lines table held them before schema 15: a row per edit and added
# line (path_id, fp, sid, edit_ord, idx) with the edit's time and author (at_epoch,
# by_user). A (path_id, fp) range of the edits' shapes (index/shapes.py), each row
# joined to the edits of its shape; SQLite flattens it into the query that uses it.
LINES = (
    "(SELECT l.path_id AS path_id, l.fp AS fp, t.sid AS sid, t.ord AS edit_ord, l.idx AS idx,"
    " t.at_epoch AS at_epoch, t.by_user AS by_user"
    " FROM shape_lines l CROSS JOIN edit_times t ON t.shape = l.shape)"
)
LINES_TIMED = f"{LINES} l"

# -- sessions --------------------------------------------------------------------------------


@dataclass
class SessionRow:
    """One session as attribution and the outputs show it."""

    sid: int
    session_id: str
    source: str
    project: str
    started_at: str | None
    ended_at: str | None
    first_prompt: str | None
    model: str | None


_SESSION_COLS = "sid, session_id, source, project, started_at, ended_at, first_prompt, model"


def _session_row(row: tuple[Any, ...] | None) -> SessionRow | None:
    if row is None:
        return None
    return SessionRow(
        int(row[0]), row[1], row[2] or UNKNOWN_AGENT, row[3], row[4], row[5], row[6], row[7]
    )


def session_by_id(conn: sqlite3.Connection, session_id: str) -> SessionRow | None:
    return _session_row(
        conn.execute(
            f"SELECT {_SESSION_COLS} FROM sessions WHERE session_id=?", (session_id,)
        ).fetchone()
    )


def sessions_by_ids(conn: sqlite3.Connection, session_ids: Iterable[str]) -> dict[str, SessionRow]:
    """``session_by_id`` of many sessions in one query a chunk (an answer names hundreds)."""
    out: dict[str, SessionRow] = {}
    for part, marks in in_chunks(sorted(set(session_ids))):
        for row in conn.execute(
            f"SELECT {_SESSION_COLS} FROM sessions WHERE session_id IN ({marks})", part
        ):
            got = _session_row(row)
            if got is not None:
                out[got.session_id] = got
    return out


def session_project(conn: sqlite3.Connection, sid: int) -> str | None:
    row = conn.execute("SELECT project FROM sessions WHERE sid=?", (sid,)).fetchone()
    return None if row is None else str(row[0])


def session_agent_model(conn: sqlite3.Connection, session_id: str) -> tuple[str, str | None] | None:
    row = conn.execute(
        "SELECT source, model FROM sessions WHERE session_id=?", (session_id,)
    ).fetchone()
    return None if row is None else (str(row[0] or UNKNOWN_AGENT), row[1])


def has_sessions(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sessions LIMIT 1").fetchone() is not None


def count_sessions(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0])


# -- a session's edits -----------------------------------------------------------------------


def agent_edits(
    conn: sqlite3.Connection, sid: int
) -> Iterator[tuple[str, str, list[str], list[str]]]:
    """(path, tool, removed, added) of every edit the session's agent made, in order."""
    from deja_blame.index.store import edit_lines

    for path, tool, body in conn.execute(
        "SELECT path, tool, body FROM edits WHERE sid=? AND source='agent' ORDER BY step, ord",
        (sid,),
    ):
        yield (path, tool, *edit_lines(body))


def commands_mentioning(
    conn: sqlite3.Connection, name: str
) -> list[tuple[str, str, str | None, str | None]]:
    """(session id, command, cwd, at) of the commands that succeeded and name ``name``."""
    like = "%" + as_text(name).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    return [
        (str(sid), str(cmd), cwd, shown_time(at))
        for sid, cmd, cwd, at in conn.execute(
            "SELECT s.session_id, c.command, c.cwd, c.at FROM commands c"
            " JOIN sessions s ON s.sid = c.sid"
            " WHERE c.exit_code = 0 AND c.command LIKE ? ESCAPE '\\'",
            (like,),
        )
    ]


@dataclass
class EditAt:
    """An edit, and where it stands in its session (the step its messages are ordered by,
    and the seq of the last message read before it where the index keeps that)."""

    edit: Edit
    step: int
    after_message: int | None = None


def edit_with_step(conn: sqlite3.Connection, sid: int, edit_ord: int) -> EditAt | None:
    from deja_blame.index.store import EDIT_COLUMNS, edit_from_row

    row = conn.execute(
        f"SELECT {EDIT_COLUMNS}, step, after_message FROM edits WHERE sid=? AND ord=?",
        (sid, edit_ord),
    ).fetchone()
    if row is None:
        return None
    place = None if row[-1] is None else int(row[-1])
    return EditAt(edit_from_row(row[:-2]), int(row[-2]), place)


def last_request_before(
    conn: sqlite3.Connection, sid: int, step: int
) -> tuple[str, str | None] | None:
    """(text, at) of the person's latest request at or before ``step``."""
    row = conn.execute(
        "SELECT text, at FROM messages WHERE id BETWEEN ? AND ? AND role=? AND step<=?"
        " ORDER BY step DESC, id DESC LIMIT 1",
        (*message_ids(sid), role_code("user"), step),
    ).fetchone()
    return None if row is None else (row[0], shown_time(row[1]))


def agent_words_around(
    conn: sqlite3.Connection, sid: int, step: int, after_message: int | None = None
) -> list[tuple[str, str | None]]:
    """(text, at) of the agent's words around an edit: its last two messages before the
    edit and its next one, in record order.

    ``after_message`` is the edit's place among the session's messages (the seq of the
    last one read before it): the words are then those of the edit's own request, the
    messages between it and the edit and the first after the edit before the next
    request. A reader that numbers the person's requests as steps (Claude Code, Codex,
    Gemini CLI...) gives every message of a request one step, so the step alone picked
    the request's last words, about its last edit. Without a place (an index written
    before deja kept it, Antigravity's steps, one per record), by step."""
    from deja_blame.index.store import message_texts

    cols = "role, text, src_offset, src_len, full_chars, at"
    first, last = message_ids(sid)
    if after_message is None:
        before = conn.execute(
            f"SELECT {cols} FROM messages WHERE id BETWEEN ? AND ? AND role=?"
            " AND step<=? ORDER BY step DESC, id DESC LIMIT 2",
            (first, last, role_code("assistant"), step),
        ).fetchall()
        after = conn.execute(
            f"SELECT {cols} FROM messages WHERE id BETWEEN ? AND ? AND role=?"
            " AND step>? ORDER BY step, id LIMIT 1",
            (first, last, role_code("assistant"), step),
        ).fetchall()
    else:
        place = message_id(sid, after_message) if after_message > 0 else first - 1
        user = role_code("user")
        asked = conn.execute(
            "SELECT max(id) FROM messages WHERE id BETWEEN ? AND ? AND role=?",
            (first, place, user),
        ).fetchone()[0]
        following = conn.execute(
            "SELECT min(id) FROM messages WHERE id > ? AND id <= ? AND role=?",
            (place, last, user),
        ).fetchone()[0]
        before = conn.execute(
            f"SELECT {cols} FROM messages WHERE id BETWEEN ? AND ? AND role=?"
            " ORDER BY id DESC LIMIT 2",
            (first if asked is None else asked, place, role_code("assistant")),
        ).fetchall()
        after = conn.execute(
            f"SELECT {cols} FROM messages WHERE id > ? AND id <= ? AND role=? ORDER BY id LIMIT 1",
            (place, last if following is None else following, role_code("assistant")),
        ).fetchall()
    rows = [*reversed(before), *after]
    return [(text, shown_time(r[5])) for r, text in zip(rows, message_texts(conn, sid, rows))]


def commands_from(
    conn: sqlite3.Connection, sid: int, step: int, limit: int = 10
) -> list[tuple[str, int | None, str | None, str | None]]:
    """(command, exit code, at, status) of the session's commands from ``step`` on."""
    return [
        (c, x, shown_time(a), st)
        for c, x, a, st in conn.execute(
            "SELECT command, exit_code, at, status FROM commands WHERE sid=? AND step>=?"
            " ORDER BY step, ord LIMIT ?",
            (sid, step, limit),
        )
    ]


# -- paths and the lines written to them (stage 1's own: attribution/facts/indexread.py) ----


def paths_under(conn: sqlite3.Connection, root: str) -> list[tuple[int, str]]:
    """(path id, path) of every written path under the directory ``root``."""
    return [
        (int(p), str(path))
        for p, path in conn.execute(
            "SELECT path_id, path FROM paths WHERE path >= ? AND path < ?",
            (root + "/", root + "0"),
        )
    ]


def fingerprints_written_to_any(
    conn: sqlite3.Connection, path_ids: list[int], fps: Iterable[int]
) -> set[int]:
    """Which of ``fps`` some session wrote to one of these paths."""
    found: set[int] = set()
    wanted = sorted(set(fps))
    for pids, pmarks in in_chunks(path_ids):
        for part, marks in in_chunks(wanted):
            for (fp,) in conn.execute(
                f"SELECT DISTINCT fp FROM {LINES} WHERE path_id IN ({pmarks}) AND fp IN ({marks})",
                [*pids, *part],
            ):
                found.add(int(fp))
    return found


def fingerprints_written_by(
    conn: sqlite3.Connection, path_ids: Iterable[int], fps: Iterable[int], until: float
) -> set[int]:
    """Which of ``fps`` some session wrote to one of these paths at or before ``until``
    (epoch seconds; a write of unknown time counts)."""
    found: set[int] = set()
    wanted = sorted(set(fps))
    for pids, pmarks in in_chunks(sorted(set(path_ids))):
        for part, marks in in_chunks(wanted):
            for (fp,) in conn.execute(
                f"SELECT DISTINCT l.fp FROM {LINES_TIMED}"
                f" WHERE l.path_id IN ({pmarks}) AND l.fp IN ({marks})"
                " AND (l.at_epoch IS NULL OR l.at_epoch <= ?)",
                [*pids, *part, until],
            ):
                found.add(int(fp))
    return found


def path_generations(conn: sqlite3.Connection, path_ids: list[int]) -> dict[int, int]:
    """path id -> how many times writes to it changed (what cached answers depend on)."""
    gens: dict[int, int] = {}
    for part, marks in in_chunks(path_ids):
        for pid, gen in conn.execute(
            f"SELECT path_id, gen FROM path_gen WHERE path_id IN ({marks})", part
        ):
            gens[int(pid)] = int(gen)
    return gens


# -- the caches ------------------------------------------------------------------------------


def note_docs_get(
    conn: sqlite3.Connection, keys: list[tuple[str, str]]
) -> dict[tuple[str, str], bytes]:
    """The indexed notes (``notes/indexed.py``) of (commit, note blob) pairs."""
    out: dict[tuple[str, str], bytes] = {}
    if len(keys) == 1:
        row = conn.execute(
            "SELECT doc FROM note_docs WHERE commit_id=? AND blob=?", keys[0]
        ).fetchone()
        return {keys[0]: row[0]} if row is not None else {}
    wanted = dict(keys)
    for chunk, marks in in_chunks(wanted):
        for commit, blob, doc in conn.execute(
            f"SELECT commit_id, blob, doc FROM note_docs WHERE commit_id IN ({marks})", chunk
        ):
            if wanted.get(commit) == blob:
                out[(commit, blob)] = doc
    return out


def note_docs_put(conn: sqlite3.Connection, rows: list[tuple[str, str, bytes]]) -> None:
    """Index notes read (commit, note blob, doc); a busy index raises
    ``sqlite3.OperationalError`` after ``CACHE_BUSY_MS`` (the notes are read again)."""
    with _short_wait(conn), transaction(conn):
        conn.executemany(  # a commit's older notes: rewritten, each blob another row
            "DELETE FROM note_docs WHERE commit_id=? AND blob<>?", [r[:2] for r in rows]
        )
        conn.executemany(
            "INSERT OR REPLACE INTO note_docs(commit_id, blob, doc) VALUES (?, ?, ?)", rows
        )


def cache_get(conn: sqlite3.Connection, table: str, key: str) -> tuple[Any, ...] | None:
    """A cached row (``blame_cache``: (data,), ``attribution_cache``: (token, data, used))."""
    cols = "data" if table == "blame_cache" else "token, data, used"
    row: tuple[Any, ...] | None = conn.execute(
        f"SELECT {cols} FROM {_cache_table(table)} WHERE key=?", (as_key(key),)
    ).fetchone()
    return row


# A cache write waits this long for another process's write lock, not the command's
# whole busy timeout: the answer is already computed, a missed entry costs one recompute
# (a locked index made `deja blame` wait 30 s for each of its two cache writes).
CACHE_BUSY_MS = 250


@contextmanager
def _short_wait(conn: sqlite3.Connection) -> Iterator[None]:
    (busy_ms,) = conn.execute("PRAGMA busy_timeout").fetchone()
    conn.execute(f"PRAGMA busy_timeout = {min(int(busy_ms), CACHE_BUSY_MS)}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")


# An entry read again within this many seconds of its last use is not marked again: the
# mark orders entries for eviction, and a write per warm answer cost it a tenth of its time.
CACHE_TOUCH_EVERY = 600.0


def cache_touch(conn: sqlite3.Connection, table: str, key: str, used: float | None = None) -> None:
    """Mark an entry used now (``used``: its last mark, when the caller read it)."""
    if used is not None and time.time() - used < CACHE_TOUCH_EVERY:
        return
    with _short_wait(conn):
        conn.execute(
            f"UPDATE {_cache_table(table)} SET used=? WHERE key=?", (time.time(), as_key(key))
        )


def cache_replace_data(
    conn: sqlite3.Connection, table: str, key: str, data: bytes, was: bytes
) -> None:
    """Replace an entry's data, its token and use kept, if it still holds ``was`` (another
    process may have stored a newer answer under the key since it was read)."""
    with _short_wait(conn):
        conn.execute(
            f"UPDATE {_cache_table(table)} SET data=? WHERE key=? AND data=?",
            (data, as_key(key), was),
        )


def cache_put(
    conn: sqlite3.Connection, table: str, key: str, data: bytes, keep: int, token: str | None = None
) -> None:
    """Store one entry and keep the ``keep`` most recently used; a busy index raises
    ``sqlite3.OperationalError`` after ``CACHE_BUSY_MS``."""
    name = _cache_table(table)
    key = as_key(key)
    with _short_wait(conn):
        _cache_write(conn, name, key, data, keep, token)


def _cache_write(
    conn: sqlite3.Connection, name: str, key: str, data: bytes, keep: int, token: str | None
) -> None:
    if name == "blame_cache":
        conn.execute(
            "INSERT OR REPLACE INTO blame_cache(key, data, used) VALUES (?, ?, ?)",
            (key, data, time.time()),
        )
    else:
        conn.execute(
            "INSERT OR REPLACE INTO attribution_cache(key, token, data, used) VALUES (?,?,?,?)",
            (key, token, data, time.time()),
        )
    conn.execute(
        f"DELETE FROM {name} WHERE key IN (SELECT key FROM {name}"
        " ORDER BY used DESC LIMIT -1 OFFSET ?)",
        (keep,),
    )


def _cache_table(table: str) -> str:
    if table not in ("blame_cache", "attribution_cache"):
        raise ValueError(f"not a cache: {table}")
    return table


# -- for the outputs and the doctor ----------------------------------------------------------


def requests_of(conn: sqlite3.Connection, sid: int) -> list[tuple[int, str]]:
    """(step, text) of the person's requests in the session, in order."""
    return [
        (int(step), text)
        for step, text in conn.execute(
            "SELECT step, text FROM messages WHERE id BETWEEN ? AND ? AND role=? ORDER BY step, id",
            (*message_ids(sid), role_code("user")),
        )
    ]


def commands_of(conn: sqlite3.Connection, sid: int) -> list[tuple[str, int | None, str | None]]:
    """(command, exit code, at) of the session's commands, in order."""
    return [
        (c, x, shown_time(a))
        for c, x, a in conn.execute(
            "SELECT command, exit_code, at FROM commands WHERE sid=? ORDER BY step, ord", (sid,)
        )
    ]


def paths_touched(conn: sqlite3.Connection, sid: int) -> list[tuple[str, str]]:
    """(path, action) of every file the session read, wrote or edited, in order:
    ``edit`` for its edits, the file records' own actions (view, write...) for the rest."""
    seen: dict[tuple[str, str], None] = {}
    for path, action in conn.execute(
        "SELECT path, 'edit' FROM edits WHERE sid=? AND source='agent'"
        " UNION ALL SELECT path, action FROM files WHERE sid=?",
        (sid, sid),
    ):
        seen.setdefault((str(path), str(action)), None)
    return list(seen)


def transcript_stats(
    conn: sqlite3.Connection, ids: Iterable[str] | None = None, not_agent: str | None = None
) -> dict[str, tuple[Any, ...]]:
    """session id -> (transcript, size, mtime_ns, inode) as the index last read it: of
    every session, of ``ids``, or of every agent's but ``not_agent``. A transcript the
    index holds no session of, but read as it is (forgotten, or holding no session:
    ``store.SET_ASIDE``), is there too: nothing about it is new."""
    from deja_blame.index.store import SET_ASIDE, set_aside

    select = "SELECT session_id, transcript, size, mtime_ns, inode FROM sessions"
    out: dict[str, tuple[Any, ...]] = {}
    if ids is not None:
        ids = list(ids)
        for part, marks in in_chunks(ids):
            for r in conn.execute(f"{select} WHERE session_id IN ({marks})", part):
                out[r[0]] = (r[1], r[2], r[3], r[4])
    else:
        if not_agent is not None:
            rows = conn.execute(f"{select} WHERE source != ?", (not_agent,))
        else:
            rows = conn.execute(select)
        out = {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}
    wanted = None if ids is None else set(ids)
    for prefix in SET_ASIDE:
        for session_id, stat in set_aside(conn, prefix).items():
            if session_id not in out and (wanted is None or session_id in wanted):
                out[session_id] = stat
    return out


def write_counts(
    conn: sqlite3.Connection, path_ids: Iterable[int]
) -> list[tuple[int, str, float | None, int]]:
    """(path id, session id, written at, lines) of the writes to these paths, one row
    per session and edit time: what a commit's note is computed from (``notes/derived_from``)."""
    out: list[tuple[int, str, float | None, int]] = []
    for part, marks in in_chunks(sorted(set(path_ids))):
        for pid, session_id, at, n in conn.execute(
            f"SELECT l.path_id, s.session_id, l.at_epoch, count(*) FROM {LINES_TIMED}"
            f" JOIN sessions s ON s.sid = l.sid WHERE l.path_id IN ({marks})"
            " GROUP BY l.path_id, l.sid, l.at_epoch",
            part,
        ):
            out.append((int(pid), str(session_id), None if at is None else float(at), int(n)))
    return out


def earliest_session_start(conn: sqlite3.Connection) -> tuple[int, float | None]:
    """(how many sessions, the earliest start of them, or None when some start is unknown)."""
    count, known, first = conn.execute(
        "SELECT count(*), count(started_epoch), min(started_epoch) FROM sessions"
    ).fetchone()
    return int(count), (float(first) if count and known == count else None)


def writes_generation(conn: sqlite3.Connection) -> str:
    """A value that changes whenever the index's writes change (any path): whether a
    history pass done before may have something new to look at."""
    count, total = conn.execute("SELECT count(*), coalesce(sum(gen), 0) FROM path_gen").fetchone()
    return f"{int(count)}.{int(total)}"


def has_any_table(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None


def database_path(conn: sqlite3.Connection) -> str:
    """The file the connection has open (its main database)."""
    return str(conn.execute("PRAGMA database_list").fetchone()[2])
