"""OpenCode: ``${XDG_DATA_HOME:-~/.local/share}/opencode/opencode.db`` (SQLite: session,
message and part tables) and the older ``storage/`` layout of JSON files
(``session/<project>/<id>.json``, ``message/<session>/<id>.json``,
``part/<message>/<id>.json``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.transcripts.agent import BY_CONTENT, BY_NAME, Agent, Handoff, Sniffed
from deja_blame.transcripts.files import Below, Skipped
from deja_blame.transcripts.transcript_file import TranscriptFile

if TYPE_CHECKING:  # sqlite3 is imported where OpenCode's database is read: --help never needs it
    import sqlite3

    from deja_blame.models import Session

AGENT = "opencode"
ROOT_ENV = "DEJA_OPENCODE_ROOT"
DB_NAME = "opencode.db"
SQLITE_MAGIC = b"SQLite format 3\x00"


def default_roots(env: Mapping[str, str], home: Path) -> list[Path]:
    data = env.get("XDG_DATA_HOME")
    roots = [(Path(data) if data else home / ".local" / "share") / "opencode"]
    if env.get("LOCALAPPDATA"):
        roots.append(Path(env["LOCALAPPDATA"]) / "opencode")
    return roots


def open_db(path: Path) -> sqlite3.Connection:
    """OpenCode's database, read only: deja never writes another program's store."""
    import sqlite3

    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=2)


def db_error(db: Path, exc: sqlite3.Error) -> OSError:
    """What reading OpenCode's database met: locked by OpenCode, or caught while it
    is written (not yet a database, or a page cut short), it is read at the next run
    (IncompleteTranscript); anything else is a problem with the file."""
    import sqlite3

    from deja_blame.transcripts.reading import IncompleteTranscript, MalformedTranscript

    text = str(exc)
    if "locked" in text or "busy" in text or type(exc) is sqlite3.DatabaseError:
        return IncompleteTranscript(f"{db}: {text} (OpenCode is writing it?)")
    # another shape (tables or columns of another version): skipped and counted, the
    # index's ``cannot read PATH: WHY`` line names the file
    return MalformedTranscript(f"not an OpenCode database deja can read, skipped ({text})")


def find_transcripts(
    root: Path, problems: list[str] | None = None, skipped: Skipped | None = None
) -> Iterator[TranscriptFile]:
    below = Below(root, problems, skipped)
    db = root / DB_NAME
    seen: set[str] = set()
    if below.regular(db):
        import sqlite3

        try:
            conn = open_db(db)
            try:
                ids = [str(r[0]) for r in conn.execute("SELECT id FROM session ORDER BY id")]
            finally:
                conn.close()
        except sqlite3.Error as exc:
            # locked or half written: its sessions are listed at the next run; the
            # index keeps what it holds of them meanwhile
            ids = []
            if problems is not None:
                problem = db_error(db, exc)
                problems.append(f"cannot read {db}: {problem.strerror or problem}")
        for sid in ids:
            seen.add(sid)
            yield TranscriptFile(session_id=sid, path=db, root=root, agent=AGENT)
    yield from _storage_sessions(below, seen)


def _storage_sessions(below: Below, seen: set[str]) -> Iterator[TranscriptFile]:
    root = below.root
    storage = root / "storage"
    if not below.folder(storage) or not below.folder(storage / "message"):
        return
    for directory in below.folders(storage / "message", lambda n: n not in seen):
        files = tuple(below.files(directory, json_file))
        if files:
            # the first message file stands for the session; the rest change its stat key
            yield TranscriptFile(
                session_id=directory.name, path=files[0], root=root, agent=AGENT, parts=files[1:]
            )


def json_file(name: str) -> bool:
    return name.endswith(".json") and not name.startswith(".")


def _read(tf: TranscriptFile) -> Session:
    from deja_blame.transcripts.opencode.reader import read_database, read_storage

    if tf.path.name == DB_NAME or tf.path.suffix == ".db":
        return read_database(tf.path, tf.session_id or None)
    return read_storage(tf.path, tf.session_id or tf.path.parent.name)


def _sniff(s: Sniffed) -> int:
    if s.path.name == DB_NAME:
        return BY_NAME
    if s.head.startswith(SQLITE_MAGIC) and b"CREATE TABLE part" in s.head:
        return BY_CONTENT
    if "storage" in s.path.parts and "message" in s.path.parts and s.path.suffix == ".json":
        return BY_NAME
    return 0


PLUGIN = Agent(
    id=AGENT,
    label="opencode",
    display_name="OpenCode",
    root_env=ROOT_ENV,
    default_roots=default_roots,
    find=find_transcripts,
    read=_read,
    # 1: each record's step is the person's request it followed
    # 2: an edit's place among its session's messages (why's words around it)
    reader_version=2,
    sniff=_sniff,
    where="${XDG_DATA_HOME:-~/.local/share}/opencode",
    location_env=("XDG_DATA_HOME",),
    always_report=True,  # a locked database is said, not silently passed over
    handoff=Handoff("opencode", ("--prompt",), "install OpenCode: npm install -g opencode-ai"),
)

__all__ = ["PLUGIN"]
