"""Reading and writing sessions in the index.

Writers: ``chunk_rows`` turns a reader's batch into rows (in a worker process,
when indexing in parallel), ``write_rows`` appends them to a session inside the
caller's transaction. Readers: ``load_session`` rebuilds the session document,
``list_sessions`` the summaries, ``resolve_session_id`` turns a prefix into an id.
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from deja_blame.errors import DejaError
from deja_blame.index.fingerprint import fingerprint, fingerprints
from deja_blame.index.keys import message_id, message_ids, role_code, role_name
from deja_blame.index.shapes import ShapeIds, distinct_pairs, drop_unused, shape_of
from deja_blame.index.times import shown_time, stored_time
from deja_blame.models import Command, Edit, FileRecord, Hunk, Message, Session
from deja_blame.session_ids import like_patterns
from deja_blame.transcripts.text import epoch_of, excerpt_of

if TYPE_CHECKING:
    from deja_blame.transcripts.reading import Chunk


@dataclass
class SessionSummary:
    session_id: str
    source: str
    project: str
    started_at: str | None
    ended_at: str | None
    n_messages: int
    n_commands: int
    n_edits: int
    skipped_lines: int
    first_prompt: str | None
    transcript: str
    model: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "source": self.source,
            "agent": self.source,
            "model": self.model,
            "project": self.project,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "messages": self.n_messages,
            "commands": self.n_commands,
            "edits": self.n_edits,
            "skipped_lines": self.skipped_lines,
            "first_prompt": self.first_prompt,
            "transcript": self.transcript,
        }


def path_basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


class PathIds:
    """Interns file paths (transcript-absolute) into small integers for the lines table."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.cache: dict[str, int] = {}

    def get(self, path: str) -> int:
        pid = self.cache.get(path)
        if pid is not None:
            return pid
        row = self.conn.execute("SELECT path_id FROM paths WHERE path=?", (path,)).fetchone()
        if row is None:
            cur = self.conn.execute(
                "INSERT INTO paths(path, name) VALUES (?, ?)", (path, path_basename(path))
            )
            pid = int(cur.lastrowid or 0)
        else:
            pid = int(row[0])
        self.cache[path] = pid
        return pid


def clear_session_rows(conn: sqlite3.Connection, sid: int) -> None:
    # A session's lines are its edits' shapes (index/shapes.py), found through
    # edit_times; the paths its edits wrote have their generations bumped.
    pids = conn.execute(
        "SELECT DISTINCT p.path_id FROM edits e JOIN paths p ON p.path = e.path WHERE e.sid=?",
        (sid,),
    ).fetchall()
    shapes = [
        (int(shape), int(pid))
        for shape, pid in conn.execute(
            "SELECT t.shape, p.path_id FROM edit_times t JOIN edits e ON e.sid = t.sid"
            " AND e.ord = t.ord JOIN paths p ON p.path = e.path WHERE t.sid=?",
            (sid,),
        )
    ]
    bump_paths(conn, [pid for (pid,) in pids])
    conn.execute("DELETE FROM messages WHERE id BETWEEN ? AND ?", message_ids(sid))
    for table in ("commands", "files", "edits", "edit_times"):
        conn.execute(f"DELETE FROM {table} WHERE sid=?", (sid,))
    # the session's edits' shapes that no other edit has: their lines go too
    drop_unused(conn, shapes)


def remove_session(conn: sqlite3.Connection, session_id: str) -> None:
    """Remove one session and what was read from it (inside the caller's transaction),
    nothing remembered of it (``forget_session`` remembers)."""
    row = conn.execute("SELECT sid FROM sessions WHERE session_id=?", (session_id,)).fetchone()
    if row is not None:
        clear_session_rows(conn, int(row[0]))
        conn.execute("DELETE FROM sessions WHERE sid=?", (int(row[0]),))


def forget_session(conn: sqlite3.Connection, session_id: str) -> str | None:
    """Remove one session and everything read from it (inside the caller's
    transaction); its transcript path, or None when no such session is indexed."""
    row = conn.execute(
        "SELECT sid, transcript FROM sessions WHERE session_id=?", (session_id,)
    ).fetchone()
    if row is None:
        return None
    transcript = str(row[1])
    stat = conn.execute(
        "SELECT size, mtime_ns, inode FROM sessions WHERE sid=?", (int(row[0]),)
    ).fetchone()
    clear_session_rows(conn, int(row[0]))
    conn.execute("DELETE FROM sessions WHERE sid=?", (int(row[0]),))
    # the notes indexed that name it (notes/indexed.py): read again from git if asked
    conn.execute(
        "DELETE FROM note_docs WHERE instr(CAST(doc AS TEXT), ?) > 0",
        (orjson.dumps(session_id).decode(),),
    )
    remember_forgotten(conn, session_id, (transcript, *stat))
    return transcript


FORGOTTEN = "forgotten:"  # meta key prefix: a session left out until its transcript changes
# meta key prefix: a file found where an agent keeps its transcripts that holds no
# record its reader knows (random bytes, another program's file): no session, and
# not read again until it changes
NOT_A_SESSION = "not-a-session:"
# meta key prefix: a transcript copying a chat the index holds from its agent's own
# store (SpecStory's history of a Claude Code session): not read while it is as it was
A_COPY = "a-copy:"
# meta key prefix + the agent's session id -> the copy's session id, read before the
# agent's own session was indexed: removed once it is (``ingest._drop_copies``)
COPIED = "copied:"
SET_ASIDE = (FORGOTTEN, NOT_A_SESSION, A_COPY)


def remember_forgotten(
    conn: sqlite3.Connection, session_id: str, stat: tuple[str, int, int, int] | None
) -> None:
    """Keep ``session_id`` out of the index while its transcript keeps this
    (path, size, mtime_ns, inode); None: not any more."""
    _set_aside(conn, FORGOTTEN, session_id, stat)


def remember_not_a_session(
    conn: sqlite3.Connection, session_id: str, stat: tuple[Any, ...] | None
) -> None:
    """``session_id``'s file held no record its reader knows with this (path, *stat);
    None: not any more."""
    _set_aside(conn, NOT_A_SESSION, session_id, stat)


def remember_a_copy(
    conn: sqlite3.Connection, session_id: str, stat: tuple[Any, ...] | None
) -> None:
    """``session_id``'s transcript copies a chat the index holds from its agent's own
    store, as it was with this (path, *stat); None: not any more."""
    _set_aside(conn, A_COPY, session_id, stat)


def forgotten_sessions(conn: sqlite3.Connection) -> dict[str, tuple[str, int, int, int]]:
    """Forgotten session id -> (transcript, size, mtime_ns, inode) when it was forgotten."""
    return set_aside(conn, FORGOTTEN)


def not_sessions(conn: sqlite3.Connection) -> dict[str, tuple[str, int, int, int]]:
    """Session id -> (path, size, mtime_ns, inode) of the files that held no record."""
    return set_aside(conn, NOT_A_SESSION)


def _set_aside(
    conn: sqlite3.Connection, prefix: str, session_id: str, stat: tuple[Any, ...] | None
) -> None:
    if stat is None:
        conn.execute("DELETE FROM meta WHERE key=?", (prefix + session_id,))
        return
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
        (prefix + session_id, orjson.dumps(list(stat)).decode()),
    )


def set_aside(conn: sqlite3.Connection, prefix: str) -> dict[str, tuple[str, int, int, int]]:
    """Session id -> the stat kept under ``prefix`` (one of ``SET_ASIDE``)."""
    out: dict[str, tuple[str, int, int, int]] = {}
    end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    for key, value in conn.execute(
        "SELECT key, value FROM meta WHERE key >= ? AND key < ?", (prefix, end)
    ):
        try:
            path, size, mtime, inode = orjson.loads(value)
            out[key[len(prefix) :]] = (str(path), int(size), int(mtime), int(inode))
        except (orjson.JSONDecodeError, TypeError, ValueError):
            continue
    return out


# -- packed columns ----------------------------------------------------------------------
#
# The bulk of an index is the text of edits (an edit's removed, added and witness
# lines and hunks, as one JSON value), the reader's state, and the messages of
# agents whose readers keep no byte spans. Longer values are stored
# zlib-compressed (level 1: ~300 MB/s); a compressed value starts with zlib's
# 0x78 byte, which no JSON value ("[", "{") and no text stored as TEXT can be
# taken for, so values stored uncompressed read as they are.

PACK_MIN_BYTES = 128
# An edit's text, the bulk of the index, at level 4: 5 % smaller than level 1 (13 %
# on real code) for 10 % more of compression's time, which is mostly zlib's set-up
# per value (bodies of 0.1-4 KB): 0.06 s of `deja index` for 120 MB of transcripts.
# Levels 6 and 9 save 1 % more for twice the time on real code.
EDIT_LEVEL = 4


def pack(data: bytes, level: int = 1) -> bytes:
    if len(data) < PACK_MIN_BYTES:
        return data
    packed = zlib.compress(data, level)
    return packed if len(packed) < len(data) else data


def unpack(value: bytes | str) -> bytes | str:
    if isinstance(value, bytes) and value[:1] == b"x":
        return zlib.decompress(value)
    return value


def load_json(value: bytes | str) -> Any:
    """A packed JSON column (an edit's body) -> its value."""
    return orjson.loads(unpack(value))


def message_text(value: bytes | str | None) -> str:
    """A messages.text value: text, or packed UTF-8 (the agent's and tools' long ones)."""
    if value is None:
        return ""
    data = unpack(value)
    return data.decode("utf-8", "surrogatepass") if isinstance(data, bytes) else data


def _pack_text(role: str, text: str) -> str | bytes:
    # The person's requests stay TEXT: SQL reads them (a session's first prompt).
    if role == "user" or len(text) < PACK_MIN_BYTES:
        return text
    data = text.encode("utf-8", "surrogatepass")
    packed = pack(data)
    return packed if packed is not data else text


def latest_edit_adding(
    conn: sqlite3.Connection,
    sid: int,
    fp: int,
    of_file: Callable[[str], bool] | None = None,
    written: int | None = None,
) -> int | None:
    """The ordinal of session ``sid``'s latest edit that added a line with fingerprint
    ``fp``; with ``of_file``, only among its edits of the paths it accepts; an edit
    made at ``written`` (epoch seconds, a note's time of the line) before any other."""
    latest: int | None = None
    for ordinal, path, at, body in conn.execute(
        "SELECT ord, path, at_epoch, body FROM edits WHERE sid=? ORDER BY at_epoch DESC, ord DESC",
        (sid,),
    ):
        if of_file is not None and not of_file(str(path)):
            continue
        if not any(fingerprint(line) == fp for line in edit_lines(body)[1]):
            continue
        if written is None or (at is not None and int(at) == written):
            return int(ordinal)
        if latest is None:
            latest = int(ordinal)
    return latest


def line_steps_by_name(conn: sqlite3.Connection, sid: int) -> dict[str, dict[int, int]]:
    """File name -> fingerprint -> the last step at which session ``sid`` added that line."""
    out: dict[str, dict[int, int]] = {}
    for step, path, body in conn.execute("SELECT step, path, body FROM edits WHERE sid=?", (sid,)):
        steps = out.setdefault(path_basename(path), {})
        for line in edit_lines(body)[1]:
            fp = fingerprint(line)
            if steps.get(fp, -1) < step:
                steps[fp] = int(step)
    return out


# The lazy tier: the agent's messages and tool output longer than this, where the
# reader knows their transcript line, are read back from there when shown; the
# index keeps a short excerpt (for a transcript that is gone or was rewritten),
# stored as it is: no compression to spend time on at index time. The end of a
# command's output says most, the start of a message. Only the excerpt's two ends
# are stored, head then tail (``LAZY_EXCERPT`` characters exactly): the line
# between them, which says how many characters are left out, is rebuilt from
# ``full_chars`` when shown. Nothing else reads an excerpt (show, why and handoff
# read the transcript), so it is kept short: 16 characters (32 before, and
# 128 before: each cut made the messages table smaller by a third to a sixth,
# ``EARLIER_EXCERPTS``); a command's last 12 characters still say how it ended,
# a message's first 12 what it began with. A row is told by its length: the ends
# of this cut or of an earlier one (rebuilt with that cut), or anything else, the
# whole excerpt an older deja stored, line and all (shown as it is). A new cut
# must therefore differ in length from every cut before it, which stay listed here.
# A text up to ``LAZY_TEXT_CHARS`` of its role is stored whole (its excerpt and span
# would save it little): the agent's own words up to 160 characters, tool output up
# to 64. Claude Code deletes a transcript after 30 days, and ``why`` of an older
# line then shows what the index kept: a message of 65-160 characters as 16 of them
# was most of the agent's words lost (session 9 stored every role whole up to 64).
# The 0.5 MB it costs on the bench root is paid by the role's one-letter code
# (``ROLE_CODES``). Rows stored whole by a deja with another length read as they are.
LAZY_TEXT_CHARS = {"tool": 64, "assistant": 160}
LAZY_EXCERPT = {"tool": (4, 12), "assistant": (12, 4)}  # role -> (head, tail) characters
EARLIER_EXCERPTS = {  # what rows may hold
    "tool": ((8, 24), (32, 96)),
    "assistant": ((24, 8), (96, 32)),
}


def _message_row(step: int, m: Message) -> tuple[Any, ...]:
    span = m.source_span
    cut = LAZY_EXCERPT.get(m.role)
    at = stored_time(m.at)
    role = role_code(m.role)
    if span is None or cut is None:
        return (m.seq, step, role, _pack_text(m.role, m.text), at, None, None, None)
    if len(m.text) <= LAZY_TEXT_CHARS[m.role]:
        return (m.seq, step, role, m.text, at, None, None, None)
    start, end = span
    head, tail = cut
    kept = m.text[:head] + m.text[len(m.text) - tail :]
    return (m.seq, step, role, kept, at, start, end - start, len(m.text))


def stored_excerpt(role: str, value: bytes | str | None, full_chars: int | None) -> str:
    """What a ``messages`` row holds of its text, as shown: the text itself, or for a
    text kept in the transcript its excerpt, the line between its ends rebuilt."""
    text = message_text(value)
    cut = LAZY_EXCERPT.get(role)
    if full_chars is None or cut is None:
        return text  # all of it
    for head, tail in (cut, *EARLIER_EXCERPTS.get(role, ())):
        if len(text) == head + tail:
            return excerpt_of(text[:head], text[head:], full_chars - head - tail)
    return text  # an excerpt written whole by an older deja


def _hunk_list(e: Edit) -> list[Any] | None:
    """The hunks as [old_start, new_start, removed, added] counts: their lines are the
    edit's own ``removed`` and ``added``, cut in order (stored once, not twice)."""
    if not e.hunks:
        return None
    if [ln for h in e.hunks for ln in h.removed] != e.removed or [
        ln for h in e.hunks for ln in h.added
    ] != e.added:
        return [h.to_json() for h in e.hunks]  # not the edit's lines: all of them
    return [[h.old_start, h.new_start, len(h.removed), len(h.added)] for h in e.hunks]


def edit_body(
    removed: list[str], added: list[str], witness: list[str], hunks: list[Any] | None
) -> bytes:
    """The ``edits.body`` value: [removed, added, witness, hunks], packed."""
    return pack(orjson.dumps([removed, added, witness, hunks]), EDIT_LEVEL)


def edit_lines(body: bytes | str) -> tuple[list[str], list[str]]:
    """(removed, added) of an ``edits.body`` value."""
    doc = load_json(body)
    return doc[0], doc[1]


@dataclass
class ChunkRows:
    """One batch of a session as the index's rows, all but the session's ``sid``.

    Made where the batch was read (a worker process, when indexing in parallel):
    it pickles small, and the writer only adds the sid and path ids.
    """

    # (ord, step, role code, text, at, src_offset, src_len, full_chars)
    messages: list[tuple[Any, ...]]
    commands: list[tuple[Any, ...]]  # (ord, step, command, cwd, exit_code, status, at)
    files: list[tuple[Any, ...]]  # (ord, step, path, action, at)
    edits: list[tuple[Any, ...]]  # (ord, step, path, tool, source, body, truncated, ...)
    # per edit: (path, edit ord, at_epoch, by_user, fingerprints of its added lines)
    lines: list[tuple[str, int, float | None, int, list[int]]]
    exit_patches: dict[int, int]
    status_patches: dict[int, str]
    skipped: int
    has_user: bool  # a user message is among them (the session's first prompt may change)


def chunk_rows(chunk: Chunk) -> ChunkRows:
    from deja_blame.transcripts.shell_writes import command_edits

    edits = []
    lines = []
    for step, e in [*chunk.edits, *command_edits(chunk.commands)]:
        at_epoch = epoch_of(e.at)
        edits.append(
            (
                e.seq,
                step,
                e.path,
                e.tool,
                e.source,
                edit_body(e.removed, e.added, e.witness, _hunk_list(e)),
                int(e.truncated),
                _edit_at(e.at, at_epoch),
                at_epoch,
                e.model,
                e.after_message,
            )
        )
        fps = fingerprints(e.added)
        lines.append((e.path, e.seq, at_epoch, int(e.source == "user"), fps))
    return ChunkRows(
        messages=[_message_row(step, m) for step, m in chunk.messages],
        commands=[
            (c.seq, step, c.command, c.cwd, c.exit_code, c.status, stored_time(c.at))
            for step, c in chunk.commands
        ],
        files=[(f.seq, step, f.path, f.action, stored_time(f.at)) for step, f in chunk.files],
        edits=edits,
        lines=lines,
        exit_patches=chunk.exit_patches,
        status_patches=chunk.status_patches,
        skipped=chunk.skipped,
        has_user=any(m.role == "user" for _, m in chunk.messages),
    )


def _edit_at(at: str | None, at_epoch: float | None) -> str | None:
    """What an edit's ``at`` column keeps: nothing where its ``at_epoch`` says the same
    (the canonical form, ``2026-07-17T09:00:00Z``: 20 bytes a row, and what
    ``edit_from_row`` writes back from the seconds), else the text as read."""
    seconds = stored_time(at)
    return None if isinstance(seconds, int) and seconds == at_epoch else at


def write_rows(conn: sqlite3.Connection, sid: int, rows: ChunkRows, paths: PathIds) -> None:
    """Append one batch of session ``sid`` inside the caller's transaction."""
    if rows.messages:
        conn.executemany(
            "INSERT OR REPLACE INTO messages(id, step, role, text, at, src_offset, src_len,"
            " full_chars) VALUES (?,?,?,?,?,?,?,?)",
            [(message_id(sid, r[0]), *r[1:]) for r in rows.messages],
        )
    if rows.commands:
        conn.executemany(
            "INSERT OR REPLACE INTO commands(sid, ord, step, command, cwd, exit_code, status, at)"
            " VALUES (?,?,?,?,?,?,?,?)",
            [(sid, *r) for r in rows.commands],
        )
    for ordinal, status in rows.status_patches.items():
        conn.execute("UPDATE commands SET status=? WHERE sid=? AND ord=?", (status, sid, ordinal))
    for ordinal, code in rows.exit_patches.items():
        conn.execute("UPDATE commands SET exit_code=? WHERE sid=? AND ord=?", (code, sid, ordinal))
    if rows.files:
        conn.executemany(
            "INSERT OR REPLACE INTO files(sid, ord, step, path, action, at) VALUES (?,?,?,?,?,?)",
            [(sid, *r) for r in rows.files],
        )
    if rows.edits:
        conn.executemany(
            "INSERT OR REPLACE INTO edits(sid, ord, step, path, tool, source, body, truncated, at,"
            " at_epoch, model, after_message) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            [(sid, *r) for r in rows.edits],
        )
    times: list[tuple[int, int, float | None, int, int]] = []
    written: set[int] = set()
    ids = ShapeIds(conn)
    for path, edit_ord, at_epoch, by_user, fps in rows.lines:
        if not fps:
            continue
        pid = paths.get(path)
        # Every added line is in its edit's shape, trivial ones (blank, a lone bracket)
        # too: they are the evidence of the matcher's runs and gap fills and a lone
        # bracket edit's only trace. Without them 1,253 of click's core.py's 3,799
        # lines (997 sessions) answered otherwise, for 1.6 % less index (docs/engine.md).
        # Identical edits share one shape: its lines are kept once (index/shapes.py).
        shape = shape_of(conn, pid, list(enumerate(fps)), ids)
        # an edit's time once (edit_times), not on each of its lines' rows
        times.append((sid, edit_ord, at_epoch, by_user, shape))
        written.add(pid)
    ids.save()
    if times:
        conn.executemany(
            "INSERT OR REPLACE INTO edit_times(sid, ord, at_epoch, by_user, shape)"
            " VALUES (?,?,?,?,?)",
            times,
        )
        bump_paths(conn, written)


def insert_writes(
    conn: sqlite3.Connection, rows: Iterable[tuple[int, int, int, int, int, float | None, int]]
) -> None:
    """Rows as the queries return them, (path_id, fp, sid, edit_ord, idx, at_epoch,
    by_user), into the edits' shapes and edit_times (tests and benches that build an
    index by hand; an edit's first row gives its time and path)."""
    edits: dict[tuple[int, int], tuple[int, float | None, int, set[tuple[int, int]]]] = {}
    for pid, fp, sid, edit_ord, idx, at, by_user in rows:
        if (sid, edit_ord) not in edits:
            edits[(sid, edit_ord)] = (pid, at, by_user, set())
        edits[(sid, edit_ord)][3].add((idx, fp))
    ids = ShapeIds(conn)
    for (sid, edit_ord), (pid, at, by_user, pairs) in edits.items():
        row = conn.execute(
            "SELECT at_epoch, by_user, shape FROM edit_times WHERE sid=? AND ord=?",
            (sid, edit_ord),
        ).fetchone()
        if row is not None:  # more lines of an edit already there: its time stays
            at, by_user = row[0], row[1]
            pairs.update(
                conn.execute(
                    "SELECT idx, fp FROM shape_lines WHERE path_id=? AND shape=?", (pid, row[2])
                ).fetchall()
            )
        shape = shape_of(conn, pid, distinct_pairs(pairs), ids)
        conn.execute(
            "INSERT OR REPLACE INTO edit_times(sid, ord, at_epoch, by_user, shape)"
            " VALUES (?,?,?,?,?)",
            (sid, edit_ord, at, by_user, shape),
        )
        if row is not None:
            drop_unused(conn, [(row[2], pid)])
    ids.save()


def bump_paths(conn: sqlite3.Connection, path_ids: Iterable[int]) -> None:
    """New or removed writes to these paths: cached attributions of them are stale.
    A path's first generation is random: the sum over every path stands for this
    index's writes (``queries.writes_generation``, what a history pass recorded), and
    another index (rebuilt, another --db) reaching the same count and sum from 1 up
    took a pass over other writes for current (newcomer 15 #3)."""
    conn.executemany(
        "INSERT INTO path_gen(path_id, gen) VALUES (?, 1 + abs(random() % 1000000000))"
        " ON CONFLICT(path_id) DO UPDATE SET gen = gen + 1",
        [(pid,) for pid in sorted(set(path_ids))],
    )


# -- reading ------------------------------------------------------------------------

_SUMMARY_COLS = (
    "session_id, source, project, started_at, ended_at, n_messages, n_commands, n_edits,"
    " skipped_lines, first_prompt, transcript, model"
)


def _summary(row: tuple[Any, ...]) -> SessionSummary:
    return SessionSummary(*row)


def list_sessions(
    conn: sqlite3.Connection,
    project: str | None = None,
    limit: int | None = None,
    agent: str | None = None,
) -> list[SessionSummary]:
    """Newest first. ``project`` keeps sessions whose project is it or lies under/above it;
    ``agent`` those of one agent."""
    sql = f"SELECT {_SUMMARY_COLS} FROM sessions"
    params: list[Any] = []
    where: list[str] = []
    if project:
        where.append("(project = ? OR project LIKE ? ESCAPE '\\' OR ? LIKE project || '/%')")
        like = project.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%"
        params += [project, like, project]
    if agent:
        where.append("source = ?")
        params.append(agent)
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY COALESCE(started_at, '') DESC, session_id"
    if limit:
        sql += " LIMIT ?"
        params.append(limit)
    return [_summary(r) for r in conn.execute(sql, params)]


def resolve_session_id(conn: sqlite3.Connection, prefix: str) -> str:
    """A full id, or a unique prefix of one; otherwise a DejaError listing candidates."""
    if not prefix.strip():
        raise DejaError(
            "no session id given", hint="give one, or its first characters (see: deja sessions)"
        )
    row = conn.execute("SELECT session_id FROM sessions WHERE session_id=?", (prefix,)).fetchone()
    if row:
        return str(row[0])
    likes = like_patterns(prefix)  # the id's first characters, or its digest's (session_ids)
    rows = conn.execute(
        "SELECT session_id, project, started_at FROM sessions WHERE "
        + " OR ".join(["session_id LIKE ? ESCAPE '\\'"] * len(likes))
        + " ORDER BY started_at DESC LIMIT 11",
        likes,
    ).fetchall()
    if len(rows) == 1:
        return str(rows[0][0])
    if not rows:
        raise DejaError(f"no indexed session matches {prefix!r}", hint="list them: deja sessions")
    shown = ", ".join(f"{r[0]} ({r[1]}, {r[2] or 'no time'})" for r in rows[:10])
    more = " ..." if len(rows) > 10 else ""
    raise DejaError(f"session id {prefix!r} is ambiguous: {shown}{more}")


def load_session(conn: sqlite3.Connection, session_id: str) -> Session:
    row = conn.execute(
        "SELECT sid, session_id, source, transcript, project, started_at, ended_at, skipped_lines,"
        " offset, head_hash, model FROM sessions WHERE session_id=?",
        (session_id,),
    ).fetchone()
    if row is None:
        raise DejaError(f"no indexed session {session_id!r}", hint="list them: deja sessions")
    sid = row[0]
    session = Session(
        session_id=row[1],
        source=row[2],
        transcript=row[3],
        project=row[4],
        started_at=row[5],
        ended_at=row[6],
        skipped_lines=row[7],
        model=row[10],
    )
    rows = conn.execute(
        "SELECT role, text, src_offset, src_len, full_chars, at, id - ? FROM messages"
        " WHERE id BETWEEN ? AND ? ORDER BY step, id",
        (message_ids(sid)[0], *message_ids(sid)),
    ).fetchall()
    texts = message_texts(conn, sid, rows, transcript=(row[3], row[8], row[9]))
    session.messages = [
        Message(role=role_name(r[0]), text=text, at=shown_time(r[5]), seq=r[6])
        for r, text in zip(rows, texts)
    ]
    session.commands = [
        Command(command=r[0], cwd=r[1], exit_code=r[2], at=shown_time(r[3]), seq=r[4], status=r[5])
        for r in conn.execute(
            "SELECT command, cwd, exit_code, at, ord, status FROM commands WHERE sid=?"
            " ORDER BY step, ord",
            (sid,),
        )
    ]
    session.files = [
        FileRecord(path=r[0], action=r[1], at=shown_time(r[2]), seq=r[3])
        for r in conn.execute(
            "SELECT path, action, at, ord FROM files WHERE sid=? ORDER BY step, ord", (sid,)
        )
    ]
    session.edits = [
        edit_from_row(r)
        for r in conn.execute(
            f"SELECT {EDIT_COLUMNS} FROM edits WHERE sid=? ORDER BY step, ord",
            (sid,),
        )
    ]
    return session


def message_texts(
    conn: sqlite3.Connection,
    sid: int,
    rows: list[tuple[Any, ...]],
    transcript: tuple[str, int, str | None] | None = None,
) -> list[str]:
    """The full texts of message rows that start (role, text, src_offset, src_len, full_chars).

    A text the index keeps an excerpt of is read back from the transcript line;
    where it cannot be (gone, rewritten), the stored excerpt stands, saying so.
    ``transcript`` is the session's (transcript, offset, head_hash), if at hand.
    """
    spans = [(r[2], r[3], r[4], role_name(r[0])) for r in rows if r[2] is not None]
    full: dict[int, str] = {}
    if spans:
        if transcript is None:
            transcript = conn.execute(
                "SELECT transcript, offset, head_hash FROM sessions WHERE sid=?", (sid,)
            ).fetchone()
        if transcript is not None:
            # the reader is imported only where a long text is read back
            from deja_blame.index.source import read_messages

            full = read_messages(transcript[0], transcript[1], transcript[2], spans)
    return [full.get(r[2]) or stored_excerpt(role_name(r[0]), r[1], r[4]) for r in rows]


# the columns edit_from_row reads, in its order
EDIT_COLUMNS = "path, tool, source, body, truncated, at, ord, model, at_epoch"


def edit_from_row(r: tuple[Any, ...]) -> Edit:
    """An Edit from a row of ``EDIT_COLUMNS``."""
    removed, added, witness, hunk_list = load_json(r[3])
    hunks: list[Hunk] = []
    at_removed = at_added = 0
    for h in hunk_list or []:
        if isinstance(h, list):  # [old_start, new_start, removed, added] counts
            old_start, new_start, n_removed, n_added = h
            hunks.append(
                Hunk(
                    removed=removed[at_removed : at_removed + n_removed],
                    added=added[at_added : at_added + n_added],
                    old_start=old_start,
                    new_start=new_start,
                )
            )
            at_removed += n_removed
            at_added += n_added
        else:
            hunks.append(
                Hunk(
                    removed=h["removed"],
                    added=h["added"],
                    old_start=h.get("old_start"),
                    new_start=h.get("new_start"),
                )
            )
    return Edit(
        path=r[0],
        tool=r[1],
        source=r[2],
        removed=removed,
        added=added,
        hunks=hunks,
        witness=witness,
        truncated=bool(r[4]),
        # no text where the seconds said it (_edit_at)
        at=r[5] if r[5] is not None or r[8] is None else shown_time(int(r[8])),
        seq=r[6],
        model=r[7],
    )
