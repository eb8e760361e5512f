"""Opening the index: one helper, WAL, a busy timeout, a schema version, named migrations.

The index is derived data, but it also keeps sessions whose transcripts have
since been deleted, so a schema change migrates rather than drops where it can.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from deja_blame.errors import DejaError, IndexCorruptError

SCHEMA_VERSION = 15
DB_ENV = "DEJA_DB"
BUSY_TIMEOUT_MS = 30_000  # the default wait for another process's write lock
BUSY_ENV = "DEJA_BUSY_TIMEOUT"  # seconds, where a script would rather fail sooner

REFRESH_BUSY_MS = 3_000  # how long a refresh waits for another process's write lock


def wait_briefly(conn: sqlite3.Connection) -> int:
    """Wait at most ``REFRESH_BUSY_MS`` for another process's write lock (unless the
    user set how long): returns the wait to put back after."""
    waited = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    if not os.environ.get(BUSY_ENV, "").strip():
        conn.execute(f"PRAGMA busy_timeout = {min(waited, REFRESH_BUSY_MS)}")
    return waited


# below this much free space SQLite cannot make its -shm (32 KB) and WAL pages
FULL_DISK_BYTES = 256 * 1024
# WAL with NORMAL: commits are not flushed one by one, checkpoints are; a crash
# or power loss can lose the last commits but never damages the file.
SYNCHRONOUS = "NORMAL"
# Pages of a new index: an edit's packed text (0.1-4 KB) left a 4 KB page a sixth
# empty where the next row did not fit, and the fewer, larger pages of 16 KB keep
# them together: 4 % less index for 120 MB of transcripts, the same time to build.
PAGE_SIZE = 16384


def busy_timeout_ms() -> int:
    """How long a command waits for another process's write lock on the index:
    ``DEJA_BUSY_TIMEOUT`` seconds, else 30 s."""
    raw = os.environ.get(BUSY_ENV, "").strip()
    if not raw:
        return BUSY_TIMEOUT_MS
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 24 * 3600:
        raise DejaError(f"{BUSY_ENV} must be a number of seconds (0 to 86400), not {raw!r}")
    return int(seconds * 1000)


# Each migration brings the schema from version i to i+1: SQL statements, or a
# function where rows must be rewritten in Python. Add, never edit.
MIGRATIONS: list[tuple[str, str | Callable[[sqlite3.Connection], None]]] = [
    (
        "0001_initial",
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE sessions (
            sid INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL UNIQUE,
            source TEXT NOT NULL,
            transcript TEXT NOT NULL,
            root TEXT,
            project TEXT NOT NULL DEFAULT '-',
            started_at TEXT,
            ended_at TEXT,
            started_epoch REAL,
            skipped_lines INTEGER NOT NULL DEFAULT 0,
            first_prompt TEXT,
            n_messages INTEGER NOT NULL DEFAULT 0,
            n_commands INTEGER NOT NULL DEFAULT 0,
            n_edits INTEGER NOT NULL DEFAULT 0,
            -- where reading stopped: the byte after the last complete line
            size INTEGER NOT NULL DEFAULT 0,
            mtime_ns INTEGER NOT NULL DEFAULT 0,
            inode INTEGER NOT NULL DEFAULT 0,
            offset INTEGER NOT NULL DEFAULT 0,
            head_hash TEXT,
            state BLOB
        );
        CREATE INDEX sessions_project ON sessions(project);
        CREATE TABLE messages (
            sid INTEGER NOT NULL, ord INTEGER NOT NULL, step INTEGER NOT NULL,
            role TEXT NOT NULL, text TEXT NOT NULL, at TEXT,
            PRIMARY KEY (sid, ord)
        ) WITHOUT ROWID;
        CREATE TABLE commands (
            sid INTEGER NOT NULL, ord INTEGER NOT NULL, step INTEGER NOT NULL,
            command TEXT NOT NULL, cwd TEXT, exit_code INTEGER, status TEXT, at TEXT,
            PRIMARY KEY (sid, ord)
        ) WITHOUT ROWID;
        CREATE TABLE files (
            sid INTEGER NOT NULL, ord INTEGER NOT NULL, step INTEGER NOT NULL,
            path TEXT NOT NULL, action TEXT NOT NULL, at TEXT,
            PRIMARY KEY (sid, ord)
        ) WITHOUT ROWID;
        CREATE TABLE edits (
            sid INTEGER NOT NULL, ord INTEGER NOT NULL, step INTEGER NOT NULL,
            path TEXT NOT NULL, tool TEXT NOT NULL, source TEXT NOT NULL,
            removed BLOB NOT NULL, added BLOB NOT NULL, hunks BLOB, witness BLOB,
            truncated INTEGER NOT NULL DEFAULT 0, at TEXT, at_epoch REAL,
            PRIMARY KEY (sid, ord)
        ) WITHOUT ROWID;
        CREATE TABLE paths (
            path_id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL
        );
        CREATE INDEX paths_name ON paths(name);
        -- One row per added line of every edit: "which sessions added this line
        -- to this file, when" is one lookup on (path_id, fp).
        CREATE TABLE lines (
            path_id INTEGER NOT NULL,
            fp INTEGER NOT NULL,
            sid INTEGER NOT NULL,
            edit_ord INTEGER NOT NULL,
            idx INTEGER NOT NULL,
            at_epoch REAL,
            by_user INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX lines_path_fp ON lines(path_id, fp);
        CREATE INDEX lines_sid ON lines(sid);
        """,
    ),
    (
        "0002_blame_cache",
        """
        -- git blame results keyed by commit (or HEAD + working-file hash) and path:
        -- a repeated deja blame skips git entirely.
        CREATE TABLE blame_cache (
            key TEXT PRIMARY KEY,
            data BLOB NOT NULL,
            used REAL NOT NULL
        );
        CREATE INDEX blame_cache_used ON blame_cache(used);
        """,
    ),
    (
        "0003_tool_output_in_transcript",
        """
        -- Long tool output stays in the transcript: the row keeps an excerpt, the
        -- byte span of the transcript line and the full text's length in characters
        -- (NULL: the text column holds all of it, as every row before this did).
        -- Messages and edits become rowid tables: a WITHOUT ROWID row over about
        -- 1 KB spills into a mostly empty overflow page, which had these two tables
        -- at 40% waste.
        CREATE TABLE messages_v3 (
            sid INTEGER NOT NULL, ord INTEGER NOT NULL, step INTEGER NOT NULL,
            role TEXT NOT NULL, text TEXT NOT NULL, at TEXT,
            src_offset INTEGER, src_len INTEGER, full_chars INTEGER,
            UNIQUE (sid, ord)
        );
        INSERT INTO messages_v3(sid, ord, step, role, text, at)
            SELECT sid, ord, step, role, text, at FROM messages ORDER BY sid, ord;
        DROP TABLE messages;
        ALTER TABLE messages_v3 RENAME TO messages;
        CREATE TABLE edits_v3 (
            sid INTEGER NOT NULL, ord INTEGER NOT NULL, step INTEGER NOT NULL,
            path TEXT NOT NULL, tool TEXT NOT NULL, source TEXT NOT NULL,
            removed BLOB NOT NULL, added BLOB NOT NULL, hunks BLOB, witness BLOB,
            truncated INTEGER NOT NULL DEFAULT 0, at TEXT, at_epoch REAL,
            UNIQUE (sid, ord)
        );
        INSERT INTO edits_v3 SELECT * FROM edits ORDER BY sid, ord;
        DROP TABLE edits;
        ALTER TABLE edits_v3 RENAME TO edits;
        -- Lines: one B-tree keyed (path_id, fp, ...) instead of a table and two
        -- indexes. Every added line of every edit is a row, so each B-tree less is
        -- a third less work per line indexed. Lookups by session go through edits.
        CREATE TABLE lines_v3 (
            path_id INTEGER NOT NULL,
            fp INTEGER NOT NULL,
            sid INTEGER NOT NULL,
            edit_ord INTEGER NOT NULL,
            idx INTEGER NOT NULL,
            at_epoch REAL,
            by_user INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (path_id, fp, sid, edit_ord, idx)
        ) WITHOUT ROWID;
        INSERT OR IGNORE INTO lines_v3
            SELECT path_id, fp, sid, edit_ord, idx, at_epoch, by_user FROM lines;
        DROP TABLE lines;
        ALTER TABLE lines_v3 RENAME TO lines;
        """,
    ),
    (
        "0004_attribution_cache",
        """
        -- A generation per path, bumped whenever lines are written to or removed
        -- from it: the attribution of a file is valid while its paths' generations
        -- stay what they were when it was computed.
        CREATE TABLE path_gen (
            path_id INTEGER PRIMARY KEY,
            gen INTEGER NOT NULL
        );
        -- The attribution of one file at one commit (or HEAD for a working file
        -- equal to it): blame, sessions, confidences, so a warm blame reads one row.
        CREATE TABLE attribution_cache (
            key TEXT PRIMARY KEY,
            token TEXT NOT NULL,
            data BLOB NOT NULL,
            used REAL NOT NULL
        );
        CREATE INDEX attribution_cache_used ON attribution_cache(used)
        """,
    ),
    (
        "0005_session_model",
        """
        -- The model the person chose for the session (the latest "Model Selection"
        -- setting in its transcript), or NULL where the transcript does not say.
        ALTER TABLE sessions ADD COLUMN model TEXT;
        """,
    ),
    (
        "0006_edit_model",
        """
        -- The model the person had chosen when the edit was made (NULL: not known).
        ALTER TABLE edits ADD COLUMN model TEXT;
        """,
    ),
    ("0007_edit_text_in_one_value", lambda conn: _edit_text_in_one_value(conn)),  # below
    (
        "0008_note_docs",
        """
        -- The notes, indexed as the transcripts are: what a commit's note says about
        -- that commit (its files' line ranges and its sessions, checked and remapped),
        -- keyed by the commit and the note's blob id. A blob id names its content, so
        -- a row never goes stale: a note rewritten, fetched or copied is another blob.
        -- Blame of an annotated history reads a row per commit instead of the note.
        CREATE TABLE note_docs (
            commit_id TEXT NOT NULL,
            blob TEXT NOT NULL,
            doc BLOB NOT NULL,
            PRIMARY KEY (commit_id, blob)
        ) WITHOUT ROWID;
        """,
    ),
    (
        "0009_messages_by_rowid",
        """
        -- A message's key is its rowid, the session's sid and its ordinal in one integer
        -- (keys.message_id): the (sid, ord) index that UNIQUE kept beside the table, an
        -- eighth of the messages' bytes, and the two columns go. A session's
        -- messages are one rowid range (keys.message_ids). Its at has no type: a
        -- canonical time is kept as its seconds, an integer (index/times.py), which
        -- a TEXT column would turn into digits. The rows copied keep their text.
        CREATE TABLE messages_v9 (
            id INTEGER PRIMARY KEY, step INTEGER NOT NULL,
            role TEXT NOT NULL, text TEXT NOT NULL, at,
            src_offset INTEGER, src_len INTEGER, full_chars INTEGER
        );
        INSERT INTO messages_v9
            SELECT (sid << 32) | ord, step, role, text, at, src_offset, src_len, full_chars
            FROM messages ORDER BY sid, ord;
        DROP TABLE messages;
        ALTER TABLE messages_v9 RENAME TO messages;
        """,
    ),
    (
        "0010_edit_times",
        """
        -- An edit's time and whether the person made it, once per edit instead of on
        -- every row of its added lines (8 of a line row's 29 bytes): the lines table
        -- keeps the blame path's key only, and a query joins each row to its edit's
        -- here (a small B-tree, cached). The rows copied keep their values.
        CREATE TABLE edit_times (
            sid INTEGER NOT NULL, ord INTEGER NOT NULL,
            at_epoch REAL, by_user INTEGER NOT NULL,
            PRIMARY KEY (sid, ord)
        ) WITHOUT ROWID;
        INSERT INTO edit_times
            SELECT sid, edit_ord, min(at_epoch), max(by_user) FROM lines
            GROUP BY sid, edit_ord ORDER BY sid, edit_ord;
        CREATE TABLE lines_v10 (
            path_id INTEGER NOT NULL,
            fp INTEGER NOT NULL,
            sid INTEGER NOT NULL,
            edit_ord INTEGER NOT NULL,
            idx INTEGER NOT NULL,
            PRIMARY KEY (path_id, fp, sid, edit_ord, idx)
        ) WITHOUT ROWID;
        INSERT INTO lines_v10
            SELECT path_id, fp, sid, edit_ord, idx FROM lines
            ORDER BY path_id, fp, sid, edit_ord, idx;
        DROP TABLE lines;
        ALTER TABLE lines_v10 RENAME TO lines;
        """,
    ),
    ("0011_file_times_as_seconds", lambda conn: _file_times_as_seconds(conn)),  # below
    ("0012_command_times_as_seconds", lambda conn: _command_times_as_seconds(conn)),
    (
        "0013_message_roles_as_codes",
        """
        -- A message's role as a letter (index/keys.py: ROLE_CODES), 3-9 bytes less on
        -- every row (a role no reader gives stays its name). Rows are updated where
        -- they are: the pages' freed bytes are reused by the next rows written.
        UPDATE messages SET role = CASE role WHEN 'user' THEN 'u' WHEN 'assistant' THEN 'a'
            WHEN 'tool' THEN 't' ELSE role END
        """,
    ),
    ("0014_edit_place_among_messages", lambda conn: _edit_place_among_messages(conn)),
    ("0015_edit_shapes", lambda conn: _edit_shapes(conn)),  # below
]


def _edit_place_among_messages(conn: sqlite3.Connection) -> None:
    """0014: an edit's place among its session's messages (``models.Edit.after_message``):
    a Claude Code turn's messages all have its step, and why's "The agent said" showed
    the turn's last words instead of those around the edit. Rows written before keep
    NULL and are answered by step, as they were. A column there already (an index a
    test or a newer deja wrote, its version set back) is kept."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(edits)")}
    if "after_message" not in columns:
        conn.execute("ALTER TABLE edits ADD COLUMN after_message INTEGER")


FILES_V11 = """
    CREATE TABLE files_v11 (
        sid INTEGER NOT NULL, ord INTEGER NOT NULL, step INTEGER NOT NULL,
        path TEXT NOT NULL, action TEXT NOT NULL,
        -- no type: a canonical time is kept as its seconds (index/times.py), as the
        -- messages' since 0009; a TEXT column would turn the integer into digits
        at,
        PRIMARY KEY (sid, ord)
    ) WITHOUT ROWID
"""


def _file_times_as_seconds(conn: sqlite3.Connection) -> None:
    """0011: a file record's ``at`` in the canonical form becomes its seconds (20 bytes
    of text -> a 4-byte integer, a fifth of the files table); any other form is
    copied as it was, and read back as it was (``shown_time``)."""
    _times_as_seconds_function(conn)
    conn.execute(FILES_V11)
    conn.execute(
        "INSERT INTO files_v11 SELECT sid, ord, step, path, action, deja_stored_time(at)"
        " FROM files ORDER BY sid, ord"
    )
    conn.execute("DROP TABLE files")
    conn.execute("ALTER TABLE files_v11 RENAME TO files")


def _times_as_seconds_function(conn: sqlite3.Connection) -> None:
    """``deja_stored_time(at)`` in SQL: ``stored_time`` of a text, anything else as it is."""
    from deja_blame.index.times import stored_time

    def seconds(at: Any) -> Any:
        return stored_time(at) if isinstance(at, str) else at

    conn.create_function("deja_stored_time", 1, seconds, deterministic=True)


COMMANDS_V12 = """
    CREATE TABLE commands_v12 (
        sid INTEGER NOT NULL, ord INTEGER NOT NULL, step INTEGER NOT NULL,
        command TEXT NOT NULL, cwd TEXT, exit_code INTEGER, status TEXT,
        at,  -- no type, as the files' since 0011
        PRIMARY KEY (sid, ord)
    ) WITHOUT ROWID
"""


def _command_times_as_seconds(conn: sqlite3.Connection) -> None:
    """0012: a command's ``at`` in the canonical form becomes its seconds, as 0011 did
    for the files (``index/times.py``); any other form is copied as it was."""
    _times_as_seconds_function(conn)
    conn.execute(COMMANDS_V12)
    conn.execute(
        "INSERT INTO commands_v12 SELECT sid, ord, step, command, cwd, exit_code, status,"
        " deja_stored_time(at) FROM commands ORDER BY sid, ord"
    )
    conn.execute("DROP TABLE commands")
    conn.execute("ALTER TABLE commands_v12 RENAME TO commands")


EDITS_V7 = """
    CREATE TABLE edits_v7 (
        sid INTEGER NOT NULL, ord INTEGER NOT NULL, step INTEGER NOT NULL,
        path TEXT NOT NULL, tool TEXT NOT NULL, source TEXT NOT NULL,
        -- [removed, added, witness, hunks] as one packed JSON value: a replacement's
        -- witness repeats its added lines, and one zlib stream says them once
        body BLOB NOT NULL,
        truncated INTEGER NOT NULL DEFAULT 0, at TEXT, at_epoch REAL, model TEXT,
        UNIQUE (sid, ord)
    )
"""


def _edit_text_in_one_value(conn: sqlite3.Connection) -> None:
    """0007: an edit's removed, added, witness and hunks columns become one ``body``
    (27 % smaller, one decompression to read an edit instead of three)."""
    from deja_blame.index.store import edit_body, load_json

    conn.execute(EDITS_V7)
    rows = conn.execute(
        "SELECT sid, ord, step, path, tool, source, removed, added, witness, hunks, truncated,"
        " at, at_epoch, model FROM edits ORDER BY sid, ord"
    )
    while batch := rows.fetchmany(2000):
        conn.executemany(
            "INSERT INTO edits_v7 VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    *r[:6],
                    edit_body(
                        load_json(r[6]),
                        load_json(r[7]),
                        load_json(r[8]) if r[8] else [],
                        load_json(r[9]) if r[9] else None,
                    ),
                    *r[10:],
                )
                for r in batch
            ],
        )
    conn.execute("DROP TABLE edits")
    conn.execute("ALTER TABLE edits_v7 RENAME TO edits")


EDIT_SHAPES_V14 = """
    -- An edit's shape: its path and added lines. Edits of one shape (a retried edit,
    -- a hunk many sessions replayed) share its rows of shape_lines, and each edit's row
    -- of edit_times names its shape (index/shapes.py). A shape is found by its digest
    -- and confirmed by n (its lines) and the rows themselves.
    CREATE TABLE shapes (
        digest INTEGER NOT NULL,
        shape INTEGER NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (digest, shape)
    ) WITHOUT ROWID;
    CREATE TABLE shape_lines (
        path_id INTEGER NOT NULL,
        fp INTEGER NOT NULL,
        shape INTEGER NOT NULL,
        idx INTEGER NOT NULL,
        PRIMARY KEY (path_id, fp, shape, idx)
    ) WITHOUT ROWID;
    ALTER TABLE edit_times ADD COLUMN shape INTEGER
"""

# Read as the lines table was before 0015 through ``queries.LINES`` (a join, not a
# view: SQLite's integrity_check leaves the freelist unchecked in a database with a
# view, and doctor's check of a damaged index with it). The index by shape holds the
# edits' times: a shape's edits are read without a lookup of their rows.
SHAPES_INDEX_V14 = "CREATE INDEX edit_times_shape ON edit_times(shape, at_epoch, by_user)"


def _edit_shapes(conn: sqlite3.Connection) -> None:
    """0015: the lines table's rows become each edit's shape (``index/shapes.py``):
    identical edits' lines are kept once, and a blame reads each once."""
    from deja_blame.index.shapes import ShapeIds, shape_of

    for statement in EDIT_SHAPES_V14.split(";"):
        conn.execute(statement)
    # an edit with lines and no time (none written so): its time unknown, as a
    # lines row without an edit_times row was read by the queries that did not time it
    conn.execute(
        "INSERT OR IGNORE INTO edit_times(sid, ord, at_epoch, by_user)"
        " SELECT DISTINCT sid, edit_ord, NULL, 0 FROM lines"
    )
    rows = conn.execute(
        "SELECT sid, edit_ord, path_id, idx, fp FROM lines ORDER BY sid, edit_ord, path_id, idx"
    )
    edit: tuple[int, int, int] | None = None
    pairs: list[tuple[int, int]] = []
    shaped: list[tuple[int, int, int]] = []

    ids = ShapeIds(conn)

    def done() -> None:
        if edit is not None:
            shaped.append((shape_of(conn, edit[2], pairs, ids), edit[0], edit[1]))

    while batch := rows.fetchmany(5000):
        for sid, edit_ord, path_id, idx, fp in batch:
            if edit is None or (sid, edit_ord, path_id) != edit:
                done()
                edit, pairs = (sid, edit_ord, path_id), []
            pairs.append((idx, fp))
    done()
    ids.save()
    conn.executemany("UPDATE edit_times SET shape=? WHERE sid=? AND ord=?", shaped)
    conn.execute("DROP TABLE lines")
    conn.execute(SHAPES_INDEX_V14)


SQL_IN_CHUNK = 500  # ids per "IN (?, ...)": well under SQLite's variable limit


def in_chunks(ids: Iterable[Any]) -> Iterator[tuple[list[Any], str]]:
    """``ids`` in parts small enough for one ``IN (...)``, each with its ``?`` marks."""
    items = list(ids)
    for start in range(0, len(items), SQL_IN_CHUNK):
        part = items[start : start + SQL_IN_CHUNK]
        yield part, ",".join("?" * len(part))


def default_db_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get(DB_ENV):
        return Path(env[DB_ENV]).expanduser()
    data = env.get("XDG_DATA_HOME") or str(
        Path(env.get("HOME") or Path.home()) / ".local" / "share"
    )
    return Path(data) / "deja" / "index.db"


def in_deja_own_place(path: Path) -> bool:
    """Whether ``path`` is the index file in deja's own data folder (XDG's, not one
    that ``--db`` or DEJA_DB names): whatever lies there deja put there, so a file
    that is not a readable index is a damaged one, which ``--rebuild`` sets aside."""
    env = {k: v for k, v in os.environ.items() if k != DB_ENV}
    try:
        return path.absolute() == default_db_path(env).absolute()
    except (OSError, RuntimeError):
        return False


def set_aside(path: Path) -> Path:
    """Move a damaged index (and its WAL companions) to ``PATH.damaged-N`` beside it,
    kept for whoever wants to look; the name that was free."""
    n = 1
    while (aside := path.with_name(f"{path.name}.damaged-{n}")).exists():
        n += 1
    os.replace(path, aside)
    for suffix in ("-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.replace(str(path) + suffix, str(aside) + suffix)
    return aside


def _not_ours_hint(path: Path) -> str:
    if in_deja_own_place(path):
        return (
            "it lies where deja keeps its index: `deja index --rebuild` sets it aside"
            " and builds a new one from the transcripts"
        )
    return "name another file with --db or DEJA_DB"


# The index deja finds by itself, as the person's environment names it: the CLI
# notes it before a global --db replaces DEJA_DB for the rest of the command.
_found_by_itself: Path | None = None


def note_default_db() -> None:
    global _found_by_itself
    if _found_by_itself is None:
        _found_by_itself = default_db_path()


def index_command(path: Path | str | None, args: str = "") -> str:
    """``deja index ARGS`` as a hint names it for the index at ``path``: with ``--db
    PATH`` where that is not the index deja finds by itself (DEJA_DB, else XDG), so
    that the command hinted works on the index the person named."""
    import shlex

    command = f"deja index {args}".rstrip()
    if not path or str(path) == ":memory:":
        return command
    try:
        if Path(path).resolve() == (_found_by_itself or default_db_path()).resolve():
            return command
    except (OSError, RuntimeError):
        pass
    return f"deja --db {shlex.quote(str(path))} index {args}".rstrip()


def index_path(conn: sqlite3.Connection) -> str | None:
    """The file behind a connection: for an empty stand-in, the file it stands for."""
    for _, name, file in conn.execute("PRAGMA database_list"):
        if name == "main" and file:
            return str(file)
    row = conn.execute("SELECT value FROM meta WHERE key='stands_for'").fetchone()
    return str(row[0]) if row else None


def stand_in_for(conn: sqlite3.Connection) -> str | None:
    """The index file an ``empty_stand_in`` stands for (not there yet), else None."""
    for _, name, file in conn.execute("PRAGMA database_list"):
        if name == "main" and file:
            return None
    row = conn.execute("SELECT value FROM meta WHERE key='stands_for'").fetchone()
    return str(row[0]) if row else None


def empty_stand_in(path: Path) -> sqlite3.Connection:
    """An empty index in memory for a read-only command whose index is not there
    (nothing is created where a mistyped --db points); its hints name ``path``."""
    conn = connect(Path(":memory:"))
    conn.execute("INSERT INTO meta(key, value) VALUES ('stands_for', ?)", (str(path),))
    return conn


SQLITE_MAGIC = b"SQLite format 3\x00"


class NotAnIndexError(DejaError):
    """The file named as the index is something else: deja never writes to it."""


class IndexUnreadableError(DejaError):
    """The index's file (or a folder on its path) may not be read by this user:
    not damage, and nothing to rebuild (newcomer 17 #4: no hint, an empty fix)."""


def unreadable_hint(path: Path) -> str:
    """What gives this user the index at ``path`` back: its owner and mode, and the
    ``chmod`` for a file of theirs; or another index."""
    import pwd
    import shlex

    elsewhere = "or name another index with --db or DEJA_DB"
    try:
        st = path.stat()
    except OSError:
        # a folder above it that this user may not enter
        return (
            f"a folder on the way to {path} may not be entered by you: give yourself"
            f" access (chmod u+rx on it), {elsewhere}"
        )
    try:
        owner = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        owner = f"uid {st.st_uid}"
    mode = f"mode {stat.S_IMODE(st.st_mode):04o}"
    if st.st_uid == os.geteuid():
        return f"it is yours, {mode}: chmod u+rw {shlex.quote(str(path))}, {elsewhere}"
    return f"it belongs to {owner} ({mode}): ask them, {elsewhere}"


def refuse_not_ours(path: Path) -> None:
    """Refuse, before anything is opened or written, a file deja did not make.

    A missing or empty file is deja's to create (an empty one is an interrupted
    creation). Anything that is not an SQLite database (a text file, a mistyped
    --db) is refused with its name; an SQLite database of another program is
    refused by ``connect`` once its tables are read.
    """
    try:
        if path.is_dir():
            raise NotAnIndexError(
                f"{path} is a directory, not a deja index",
                hint="name a file with --db or DEJA_DB (the default: ~/.local/share/deja/index.db)",
            )
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except FileNotFoundError:
        return
    except PermissionError as exc:
        raise IndexUnreadableError(
            f"cannot read the index {path}: {exc.strerror}", hint=unreadable_hint(path)
        ) from exc
    if head and head != SQLITE_MAGIC:
        raise NotAnIndexError(
            f"{path} is not a deja index (not an SQLite database); deja leaves it as it is",
            hint=_not_ours_hint(path),
        )


# tables every deja index has had since 0001: with them, a missing schema version is damage
# (and ``lines`` until 0015)
DEJA_TABLES = frozenset({"meta", "sessions", "paths"})


def is_foreign_database(path: Path) -> bool:
    """An SQLite database with tables, not deja's, and no deja schema version
    (read-only look). deja's own tables without a version readable are a damaged
    deja index (pages scribbled over can hide the version's row without an error)."""
    from urllib.parse import quote

    try:
        conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
    except sqlite3.Error:
        return False
    try:
        return _unversioned_tables(conn) and not _has_deja_tables(conn)
    except sqlite3.DatabaseError:
        return False  # damaged: a deja index past its header, rebuilding it is safe
    finally:
        conn.close()


def corrupt(path: Path, exc: Exception) -> IndexCorruptError:
    return IndexCorruptError(
        f"the index {path} is unreadable ({exc})",
        hint=f"rebuild it from the transcripts: {index_command(path, '--rebuild')}",
    )


def connect(
    path: Path,
    create: bool = True,
    upgrade: bool = True,
    notice: Callable[[str], None] | None = None,
    check_same_thread: bool = True,
) -> sqlite3.Connection:
    """Open (and create or migrate) the index at ``path``.

    ``upgrade=False`` refuses an index of an older schema instead of migrating
    it (a git hook has two seconds; a migration of a big index takes longer).
    ``notice`` hears, once, that an existing index is being upgraded.
    ``check_same_thread=False``: another thread may close it (its own used it alone).
    """
    refuse_not_ours(path)
    if not create and not path.exists():
        raise DejaError(f"no index at {path}", hint=f"build it: {index_command(path)}")
    if _has_content(path) and (not writable_place(path) or disk_full(path)):
        return open_unwritable(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise DejaError(f"cannot create the index directory {path.parent}: {exc.strerror}") from exc
    _create_private(path)
    tighten_old(path)
    conn: sqlite3.Connection | None = None
    try:
        busy_ms = busy_timeout_ms()
        conn = sqlite3.connect(
            str(path),
            timeout=busy_ms / 1000,
            isolation_level=None,
            check_same_thread=check_same_thread,
        )
        conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
        _refuse_foreign(conn, path)  # before WAL: a foreign database is left exactly as it was
        # a new file only (an existing one keeps its size; in WAL it cannot change)
        conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
        _enable_wal(conn)
        conn.execute(f"PRAGMA synchronous = {SYNCHRONOUS}")
        conn.execute("PRAGMA foreign_keys = OFF")
        _migrate(conn, path, upgrade, notice)
    except BaseException as exc:
        if conn is not None:
            conn.close()
        if not isinstance(exc, sqlite3.DatabaseError):
            raise
        if _no_room(exc) and _has_content(path):
            # the disk filled between the check and the open (SQLite could not
            # make its -shm): read what is there; writes will say the disk is full
            return open_unwritable(path)
        raise database_error(path, exc) from exc
    return conn


def _has_content(path: Path) -> bool:
    """An index worth reading where it cannot be written (not the empty file a failed
    first write leaves)."""
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def _no_room(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc)
    return isinstance(exc, sqlite3.OperationalError) and ("full" in text or "disk I/O" in text)


def disk_full(path: Path) -> bool:
    """Whether the index's file system has no room left for SQLite's -shm and journal
    (a full disk makes even a read fail with "disk I/O error" in WAL mode)."""
    try:
        st = os.statvfs(path.parent)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < FULL_DISK_BYTES


def writable_place(path: Path) -> bool:
    """Whether the index and its directory can be written (access() says no on a
    read-only file system, for root too)."""
    return os.access(path.parent, os.W_OK) and os.access(path, os.W_OK)


def open_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection; on a read-only medium, where SQLite cannot make the WAL
    index (-shm) it needs, the file is opened as immutable: nothing can change it there."""
    from urllib.parse import quote

    uri = f"file:{quote(str(path))}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=busy_timeout_ms() / 1000, isolation_level=None)
    if writable_place(path) and not disk_full(path):
        return conn  # damage, if any, is for the caller's first query to report
    try:
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return conn
    except sqlite3.OperationalError as exc:
        if "unable to open" not in str(exc) and not _no_room(exc):
            return conn
        conn.close()
    return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None)


def open_unwritable(path: Path) -> sqlite3.Connection:
    """The index on a read-only file system or in a directory deja may not write:
    read-only commands work; nothing is created, migrated or cached."""
    try:
        conn = open_read_only(path)
        _refuse_foreign(conn, path)
        found = schema_version(conn)
    except sqlite3.DatabaseError as exc:
        raise database_error(path, exc) from exc
    if found != SCHEMA_VERSION:
        conn.close()
        raise DejaError(
            f"the index {path} is read-only and of schema {found} (this deja uses"
            f" {SCHEMA_VERSION}): it cannot be upgraded where it is",
            hint="copy it somewhere writable and name it with --db",
        )
    return conn


def _enable_wal(conn: sqlite3.Connection) -> None:
    """``PRAGMA journal_mode = WAL``, retried while another process switches it.

    Two processes opening a new index at once both hold a shared lock and both
    want the exclusive one the switch needs: SQLite answers one of them "database
    is locked" at once, without its busy handler (waiting could deadlock). By the
    time it asks again the other has switched, and the pragma has nothing to do.
    """
    deadline = time.monotonic() + busy_timeout_ms() / 1000
    delay = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def database_error(path: Path, exc: sqlite3.DatabaseError) -> DejaError:
    """An SQLite failure as a one-line error: locked, not writable, or a damaged index.

    Only damage earns the "rebuild" hint: a full disk or a lock is no reason to
    delete an index that is fine.
    """
    text = str(exc)
    if isinstance(exc, sqlite3.OperationalError):
        if "locked" in text:
            # SQLite may refuse at once (it does where waiting could deadlock), so
            # this says what is known: another process holds it
            return DejaError(
                f"the index {path} is locked by another process"
                f" (deja waits up to {busy_timeout_ms() / 1000:g} s for it)",
                hint="run it again once the other deja command has finished",
            )
        if "unable to open" in text:
            return DejaError(f"cannot open the index {path}: {exc}")
        if _no_room(exc) or "readonly" in text:
            return DejaError(
                f"the index {path} could not be written: {exc}",
                hint="free space on its disk (or choose another file with --db), then run it again",
            )
    return corrupt(path, exc)


def schema_version(conn: sqlite3.Connection) -> int:
    try:
        has_meta = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"
        ).fetchone()
        if not has_meta:
            return 0
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row[0]) if row else 0
    except (UnicodeDecodeError, ValueError) as exc:
        # damaged pages: SQLite's message quotes schema bytes that are no text, or the
        # version's row is no number
        raise sqlite3.DatabaseError("its schema cannot be read") from exc


def _has_deja_tables(conn: sqlite3.Connection) -> bool:
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return DEJA_TABLES <= names


def _unversioned_tables(conn: sqlite3.Connection) -> bool:
    return schema_version(conn) == 0 and bool(
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone()
    )


def _refuse_foreign(conn: sqlite3.Connection, path: Path) -> None:
    """No deja index ever lacked a schema version: tables without one are another
    program's database (a mistyped --db) or a damaged index. Never write into it.

    Both reads see one snapshot: another process creating a new index between
    them (no schema version yet, then its tables) is no foreign database.
    """
    if conn.in_transaction:
        foreign = _unversioned_tables(conn)
    else:
        with read_snapshot(conn):
            foreign = _unversioned_tables(conn)
    if foreign:
        if _has_deja_tables(conn):
            # deja's own tables: damage hid the version's row (is_foreign_database)
            raise corrupt(path, sqlite3.DatabaseError("its schema version cannot be read"))
        raise IndexCorruptError(
            f"{path} is not a deja index (an SQLite database without a deja schema version)",
            hint=_not_ours_hint(path),
        )


def _migrate(
    conn: sqlite3.Connection,
    path: Path,
    upgrade: bool = True,
    notice: Callable[[str], None] | None = None,
) -> None:
    found = schema_version(conn)
    if found == SCHEMA_VERSION:
        return
    if 0 < found < SCHEMA_VERSION:
        if not upgrade:
            raise DejaError(
                f"the index {path} has an older schema ({found}; this deja uses"
                f" {SCHEMA_VERSION}) and is upgraded by the next deja command",
                hint=f"upgrade it now: {index_command(path)}",
            )
        if notice is not None:
            notice(
                f"upgrading the index {path} (schema {found} -> {SCHEMA_VERSION}), once;"
                " about 20 s for a 700 MB index"
            )
    with transaction(conn):
        current = schema_version(conn)  # again, under the write lock
        _refuse_foreign(conn, path)
        if current > SCHEMA_VERSION:
            raise DejaError(
                f"the index {path} was written by a newer deja"
                f" (schema {current} > {SCHEMA_VERSION})",
                hint=f"upgrade deja, or start afresh: {index_command(path, '--rebuild')}",
            )
        for version in range(current, SCHEMA_VERSION):
            name, sql = MIGRATIONS[version]
            if callable(sql):
                sql(conn)
            else:
                for statement in sql.split(";"):
                    if statement.strip():
                        conn.execute(statement)
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
                (str(version + 1),),
            )
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, datetime('now'))",
                (f"migration:{name}",),
            )
    if found:
        _reclaim_free_pages(conn)


def _reclaim_free_pages(conn: sqlite3.Connection) -> None:
    """VACUUM after a migration that copied tables, when a quarter of the file is free
    pages (0003 leaves a 720 MB index at 1.1 GB; VACUUM brings it to 600 MB in ~6 s)."""
    free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    if pages and free * 4 >= pages:
        with contextlib.suppress(sqlite3.OperationalError):  # busy: the space waits for reuse
            conn.execute("VACUUM")


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One writer transaction (BEGIN IMMEDIATE takes the write lock up front)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


@contextmanager
def read_snapshot(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Reads that see one state of the database (a deferred transaction, no lock taken)."""
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")


def _create_private(path: Path) -> None:
    """A new index is the user's alone (0600: it holds raw prompts); SQLite gives its
    -wal and -shm files the same mode. An existing file is left as it is; SQLite's
    in-memory database (``:memory:``, a read-only command's empty stand-in) is no file."""
    if str(path) == ":memory:":
        return
    try:
        fd = os.open(
            path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600
        )
    except OSError:
        return  # there already (or not creatable: sqlite says why)
    os.close(fd)


def tighten_old(path: Path) -> None:
    """An index an older deja created by the umask (0644: anyone on the machine could
    read the prompts it holds) is made the user's alone when opened: the file, its
    -wal and -shm 0600, and deja's own folder 0700 (a folder ``--db`` or DEJA_DB
    names is the user's choice, left as it is). Only what the user owns is changed,
    never through a link."""
    if str(path) == ":memory:":
        return
    for name in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        _restrict(name, stat.S_ISREG, 0o600)
    if in_deja_own_place(path):
        _restrict(path.parent, stat.S_ISDIR, 0o700)


def _restrict(path: Path, kind: Callable[[int], bool], mode: int) -> None:
    try:
        st = os.lstat(path)
        mine = st.st_uid == getattr(os, "geteuid", lambda: st.st_uid)()
        if kind(st.st_mode) and mine and stat.S_IMODE(st.st_mode) & 0o077:
            os.chmod(path, stat.S_IMODE(st.st_mode) & mode)
    except OSError:
        pass  # not there, or not ours to change: SQLite says what matters


def rebuild_path(path: Path) -> Path:
    """Where ``deja index --rebuild`` builds the new index before swapping it in."""
    return path.with_name(path.name + ".rebuild")


def swap_in(new: Path, path: Path) -> None:
    """Replace the index at ``path`` by the finished index at ``new``, atomically.

    ``new`` must be closed and checkpointed (no WAL of its own). The old index's
    WAL goes first: left beside the new file, SQLite would replay it into it.
    """
    for suffix in ("-wal", "-shm", "-journal"):
        try:
            os.unlink(str(path) + suffix)
        except FileNotFoundError:
            pass
    os.replace(new, path)


def remove_index(path: Path) -> None:
    """Delete the index file and its WAL companions (for --rebuild)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(str(path) + suffix)
        except FileNotFoundError:
            pass
