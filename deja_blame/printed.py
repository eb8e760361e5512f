"""A warm ``deja blame FILE --json --no-refresh`` answered before click and the engine
load: the bytes the same question printed last, kept with what they were made from.

A warm answer read from the attribution cache costs a third of git's blame of the
file in imports alone (click, the cache's and the answer's modules, orjson: about
0.08 s of 0.14 s CPU on click's ``core.py``), where the answer is a row. So the
console script (``entry.run_here``) asks here first, loading nothing of deja's but
the git files' reader: when the repository, the file, the index and the cached
answer are as they were when the same question was printed, the printed bytes
are written again. Anything else (another form of the command, a file or state
this cannot read without git, a question never printed) goes the whole way, and
that run keeps what it printed (``keep``) for the next.

What the printed answer depends on, and how each is checked here (``_Stamp``):

- the question: the arguments, the current folder, whether stdout and stderr are
  terminals, and the environment deja, git and the terminal read (part of the key);
- the repository: the top, HEAD and the notes' tips (``gitfiles``, from git's own
  files: anything those cannot say, a worktree, a packed-refs doubt, goes the whole
  way), the working file's bytes, no configured ignore-revs file or mailmap and no
  ``.mailmap`` (each changes git's answer or its authors), no late notes waiting
  (any command first completes them: ``hooks/late.py``);
- the index: every write to any path (``path_gen``: its rows are only added, their
  generations only grow, so their count and sum change with any new or removed
  write, ``queries.writes_generation``), whether any session is indexed (a hint on
  stderr when none), the answer's sessions' rows (agent, project, times, prompt,
  model, as printed), and the cached answer's own row (its token and data: a cache
  emptied, an entry evicted or recomputed by other rules is another row);
- deja itself: its version and its rules' (``CACHE_VERSION``, ``IDENTITY_VERSION``).

Only an answer the attribution cache gave for the commit's own text (no uncommitted
line, no warning printed) is kept, and only when the stamp taken before the command
ran is the stamp after it: nothing moved while it answered.
"""

from __future__ import annotations

import os
import sys
import zlib

try:  # hashlib's own import costs 8-10 ms (it sets up every OpenSSL digest): BLAKE2's module
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

from deja_blame import __version__, gitfiles
from deja_blame.attribution.rule_versions import CACHE_VERSION, IDENTITY_VERSION
from deja_blame.notes.refs import GITAI_REF, NOTES_REF

# Neither ``typing`` nor ``dataclasses`` is loaded here (8 ms of a 60 ms answer):
# type checkers read this name as typing's own.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    from deja_blame.attribution.model import FileBlame

# Bump when what a kept answer holds, or how its stamp is made, changes.
PRINTED_VERSION = 1
# The form answered here: ``deja blame FILE`` with exactly these flags, in any order.
FLAGS = frozenset({"--json", "--no-refresh"})
# The environment that can change what deja or git print (besides the key's own).
_ENV_PREFIXES = ("DEJA_", "GIT_", "XDG_", "LC_")
_ENV_NAMES = frozenset(
    {"HOME", "PATH", "TZ", "LANG", "LANGUAGE", "TERM", "COLUMNS", "NO_COLOR", "FORCE_COLOR",
     "CLICOLOR", "CLICOLOR_FORCE", "PAGER", "LESS", "PYTHONIOENCODING", "PYTHONUTF8"}
)  # fmt: skip
LATE_DIR = "late"  # hooks/late.py's records' folder in .git/deja (a test holds them equal)
_TABLE = "attribution_cache"  # kept answers live beside the entries they print


class Question:
    """One eligible ``deja blame`` question: where its answer is kept and what it reads."""

    __slots__ = ("key", "db", "top", "file", "repo")

    def __init__(self, key: str, db: str, top: str, file: str, repo: bytes) -> None:
        self.key = key  # the kept answer's key in the attribution cache's table
        self.db = db  # the index
        self.top = top  # the repository's top (real path)
        self.file = file  # the file's real path
        self.repo = repo  # what git's files say: rev-parse's and for-each-ref's output


_ASKED: tuple[Question, str] | None = None  # the question this process answers, its stamp


def replay(args: list[str]) -> bool:
    """Write the kept answer to ``deja blame ARGS`` when it still holds; False: nothing
    written (the command runs, and ``keep`` may keep what it prints). Whatever goes
    wrong before the answer is written only means the whole way."""
    global _ASKED
    _ASKED = None
    try:
        found = _kept_answer(args)
    except Exception:  # noqa: BLE001 - a kept answer is an optimisation, never an error
        _ASKED = None
        return False
    if found is None:
        return False
    try:
        sys.stdout.buffer.write(found)
        sys.stdout.flush()
    except BrokenPipeError:
        # a reader that stopped early (``| head``): deja's exit 0, as the command line's
        sys.stderr.close()
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nothing left for the exit's flush
    return True


def forget() -> None:
    """The command is over: what ``replay`` was asked is no other command's."""
    global _ASKED
    _ASKED = None


def _kept_answer(args: list[str]) -> bytes | None:
    """The bytes to write, or None (then ``_ASKED`` holds the question, for ``keep``)."""
    global _ASKED
    question = _question(args)
    if question is None:
        return None
    conn = _open(question.db)
    if conn is None:
        return None
    try:
        row = conn.execute(f"SELECT token, data FROM {_TABLE} WHERE key=?", (question.key,))
        kept = row.fetchone()
        before = _stamp(conn, question, None)
        if before is None:
            return None
        if kept is not None:
            header, printed = _unpack(zlib.decompress(kept[1]))
            now = _stamp(conn, question, header)
            if now is not None and _digest(now) == kept[0]:
                return printed
        _ASKED = (question, before)
        return None
    finally:
        conn.close()


def keep(conn: sqlite3.Connection, result: FileBlame, printed: bytes, warned: bool) -> None:
    """Keep ``printed``, the answer to the question ``replay`` was asked, when the
    attribution cache gave it for the commit's own text and nothing it depends on
    moved while the command ran (a failure costs the kept answer only)."""
    global _ASKED
    asked, _ASKED = _ASKED, None
    if asked is None or warned or result.cache_key is None:
        return
    question, before = asked
    try:
        _keep(conn, question, before, result, printed)
    except Exception:  # noqa: BLE001 - see above
        return


def _keep(
    conn: sqlite3.Connection, question: Question, before: str, result: FileBlame, printed: bytes
) -> None:
    from deja_blame.attribution import cache

    key = result.cache_key
    assert key is not None
    lines = question.repo.split(b"\n")
    head, notes = lines[2].decode(), _notes_tips(question.repo)
    deja_notes = f" {NOTES_REF}\n".encode() in question.repo
    if not key.endswith("\0" + ("notes" if deja_notes else "")):
        return  # the answer read other notes than the repository has now
    entry = cache.load(conn, key, notes, question.top)  # still valid for the index now
    if entry is None or entry.commit != head:
        return
    try:
        with open(question.file, "rb") as f:
            if cache.content_hash(f.read()) != entry.data_hash:
                return  # uncommitted lines: the answer is HEAD's with an overlay
    except OSError:
        return
    if not _sessions_as_printed(conn, result):
        return
    header = _Header(key, sorted(result.sessions))
    if _stamp(conn, question, None) != before:
        return  # the repository or the index moved while the command answered
    after = _stamp(conn, question, header)
    if after is None:
        return
    from deja_blame.index import queries as Q

    data = zlib.compress(_pack(header, printed), 1)
    Q.cache_put(conn, _TABLE, question.key, data, cache.CACHE_ENTRIES, token=_digest(after))


def _sessions_as_printed(conn: sqlite3.Connection, result: FileBlame) -> bool:
    """Whether the index's rows of the answer's sessions say what the answer printed
    of them (a row that changed while it answered would be kept as the new one)."""
    from deja_blame.models import UNKNOWN_AGENT

    rows = _session_rows(conn, sorted(result.sessions))
    for name, info in result.sessions.items():
        row = rows.get(name)
        if row is None:
            return False  # a session only a note names: its row is not the answer's
        shown = (info.source, info.project, info.started_at, info.first_prompt, info.model)
        if shown != (row[2] or UNKNOWN_AGENT, row[3], row[4], row[6], row[7]):
            return False
    return True


class _Header:
    """What a kept answer names of the index besides the question: the cached
    attribution it was printed from and the sessions it printed."""

    __slots__ = ("entry_key", "sessions")

    def __init__(self, entry_key: str, sessions: list[str]) -> None:
        self.entry_key = entry_key
        self.sessions = sessions


def _pack(header: _Header, printed: bytes) -> bytes:
    head = "\0".join([header.entry_key.replace("\0", "\1"), *header.sessions])
    raw = head.encode("utf-8", "surrogateescape")
    return b"%d\n" % len(raw) + raw + printed


def _unpack(data: bytes) -> tuple[_Header, bytes]:
    size, _, rest = data.partition(b"\n")
    n = int(size)
    fields = rest[:n].decode("utf-8", "surrogateescape").split("\0")
    return _Header(fields[0].replace("\1", "\0"), fields[1:]), rest[n:]


def _question(args: list[str]) -> Question | None:
    if args[:1] != ["blame"] or os.environ.get("DEJA_NO_CACHE", ""):
        return None
    files = [a for a in args[1:] if not a.startswith("-")]
    flags = [a for a in args[1:] if a.startswith("-")]
    if len(files) != 1 or len(flags) != len(FLAGS) or set(flags) != FLAGS:
        return None
    name = files[0]
    if not os.path.isfile(name):
        return None
    cwd = os.getcwd()
    path = os.path.realpath(name)
    repo = gitfiles.rev_parse(os.path.dirname(os.path.abspath(name)))
    if repo is None or repo != gitfiles.rev_parse(cwd):
        return None  # the command's own repository is another (its late notes...)
    fields = repo.split(b"\n")
    if len(fields) < 4 or not fields[2]:
        return None  # no commit yet
    top = os.fsdecode(fields[0])
    if not path.startswith(top.rstrip("/") + "/"):
        return None
    notes = gitfiles.ref_tips(top, (NOTES_REF, GITAI_REF))
    if notes is None or gitfiles.blame_config(top) != b"":
        return None  # refs the files cannot say, or blame's settings: the whole way
    if os.path.lexists(os.path.join(top, ".mailmap")):
        return None  # git's authors are mapped: asked of git log
    late = os.path.join(top, ".git", "deja", LATE_DIR)
    if os.path.isdir(late) and os.listdir(late):
        return None  # late notes to complete first
    db = _db_path()
    env = sorted(
        (k, v) for k, v in os.environ.items() if k in _ENV_NAMES or k.startswith(_ENV_PREFIXES)
    )
    ttys = (os.isatty(1), os.isatty(2))
    what = repr(
        (PRINTED_VERSION, __version__, CACHE_VERSION, IDENTITY_VERSION, args, cwd, path, db,
         env, ttys)
    )  # fmt: skip
    key = "printed\0" + blake2b(what.encode("utf-8", "surrogateescape")).hexdigest()
    return Question(key, db, top, path, repo + b"\0" + notes)


def _notes_tips(repo: bytes) -> str:
    """The notes' tips, one a line, as ``cache.notes_tips_cli`` gives them."""
    said = repo.partition(b"\0")[2]
    rows = [ln.split(" ", 1) for ln in said.decode().splitlines() if " " in ln]
    return "\n".join(sha for sha, _ in rows)


def _db_path() -> str:
    """``index.db.default_db_path`` (its module loads what this one should not)."""
    env = os.environ
    if env.get("DEJA_DB"):
        return os.path.realpath(os.path.expanduser(env["DEJA_DB"]))
    data = env.get("XDG_DATA_HOME") or os.path.join(
        env.get("HOME") or os.path.expanduser("~"), ".local", "share"
    )
    return os.path.realpath(os.path.join(data, "deja", "index.db"))


def _open(db: str) -> sqlite3.Connection | None:
    """The index, for reading, if it is there (never made here)."""
    import sqlite3
    from urllib.parse import quote

    if not os.path.isfile(db):
        return None
    try:
        conn = sqlite3.connect(f"file:{quote(db)}?mode=rw", uri=True, timeout=0.25)
    except sqlite3.Error:
        return None
    return conn


def _stamp(conn: sqlite3.Connection, question: Question, header: _Header | None) -> str | None:
    """What the answer depends on, as one text (see the module's docstring): the
    repository and the index, and with ``header`` the kept answer's own rows."""
    try:
        with open(question.file, "rb") as f:
            text = blake2b(f.read(), digest_size=16).hexdigest()
    except OSError:
        return None
    count, total = conn.execute("SELECT count(*), coalesce(sum(gen), 0) FROM path_gen").fetchone()
    anyone = conn.execute("SELECT 1 FROM sessions LIMIT 1").fetchone() is not None
    parts: list[Any] = [question.repo, text, count, total, anyone]
    if header is not None:
        entry = conn.execute(
            f"SELECT token, data FROM {_TABLE} WHERE key=?", (header.entry_key,)
        ).fetchone()
        if entry is None:
            return None
        parts.append(blake2b(entry[0].encode() + b"\0" + entry[1]).hexdigest())
        rows = _session_rows(conn, header.sessions)
        parts.append(sorted(rows.values()))
    return repr(parts)


def _session_rows(conn: sqlite3.Connection, names: list[str]) -> dict[str, tuple[Any, ...]]:
    """The answer's sessions' rows, as ``queries.sessions_by_ids`` reads them."""
    out: dict[str, tuple[Any, ...]] = {}
    for i in range(0, len(names), 500):
        part = names[i : i + 500]
        marks = ",".join("?" * len(part))
        for row in conn.execute(
            "SELECT sid, session_id, source, project, started_at, ended_at, first_prompt,"
            f" model FROM sessions WHERE session_id IN ({marks})",
            part,
        ):
            out[str(row[1])] = tuple(row)
    return out


def _digest(stamp: str) -> str:
    return blake2b(stamp.encode("utf-8", "surrogateescape")).hexdigest()
