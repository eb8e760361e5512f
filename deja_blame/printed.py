"""A warm ``deja blame`` answered before click and the engine load: the bytes the same
question printed last, written again while everything they were made from holds.

A warm answer read from the attribution cache spends most of its CPU on imports
(click, the cache's and the answer's modules, orjson), where the answer is a row.
So the console script (``entry.run_here``) asks here first, loading only sqlite3,
zlib, BLAKE2, ``gitfiles`` and ``clone_paths``. The forms served are those people
and editors type: ``deja blame FILE``, with any of ``--json``, ``--no-refresh`` and
numeric ``-L`` windows (``-L A,B``, ``-L A,+N``, ``-L A``), on a stdout that is no
terminal (a terminal's answer goes through the pager). Anything else goes the
whole way, and that run keeps what it printed (``keep``) for the next.

What the printed answer depends on, and how each is checked (``_stamp``):

- the question: the arguments, the current folder, the file's real path, the index's
  path, whether stdout and stderr are terminals, and the environment deja, git and
  the terminal read (``_ENV_*``): the key;
- deja itself: its version and its rules' (``CACHE_VERSION``, ``IDENTITY_VERSION``):
  the key;
- ``DEJA_NO_CACHE``: never served, never kept;
- the repository (from git's own files, ``gitfiles``; anything they cannot say goes
  the whole way): the top, HEAD and shallowness (``rev_parse``), the notes' tips
  (deja's and git-ai's), the replace refs and grafts (``replacements``), git's
  configuration files (their size and time, and none setting an ignore-revs file or
  a mailmap: ``blame_config``), no ``.mailmap``, no late notes waiting (any command
  first completes them: ``hooks/late.py``);
- the working file's bytes;
- the index: every write to any path (``path_gen``: rows only added, generations
  only grow, so their count and sum change with any write or removal), whether any
  session is indexed (a hint on stderr when none), the printed sessions' rows, the
  attribution entry's own row (its token and data), and what ``cache.load`` checks
  on every read besides: which written paths stand for the file here and which are
  another clone's (``clone_paths.stands_for``, which looks at folders on disk);
- the transcripts, for a form that refreshes the index first: Antigravity's sessions
  as the refresh itself looked at them (``index/look.py``: each root's listing and
  each session's transcript's stat, handed over by the refresh, no second pass), and
  every file and folder below every other agent's roots (``_walk``: a new file
  changes its folder's time, an appended one its size and time), the roots' own
  folders where they are not there yet, and the variables that choose the roots.
  Both are taken no later than the refresh looks (the walk before the command runs),
  so a transcript written while it answers makes the kept answer stale, never the
  other way. In a fork of the resident server whose watch vouches for Antigravity's
  roots, the look is the watch's word (``index/watched.look_text``: the watch and its
  last event naming a session), with no stat of any session.

Only an answer the attribution cache holds for the commit's own text is kept (no
uncommitted line), with nothing written on stderr, exit 0, and only when the
repository's and the index's stamp taken before the command ran is the stamp after
it. The transcripts are not looked at again to keep it: one written since the refresh
looked already differs from what the kept answer names, so it is never served.
"""

from __future__ import annotations

import io
import os
import sys
import zlib

from deja_blame import __version__, gitfiles
from deja_blame.attribution.rule_versions import CACHE_VERSION, IDENTITY_VERSION
from deja_blame.blake2 import blake2b  # not hashlib's (it sets up every OpenSSL digest)
from deja_blame.index import look
from deja_blame.notes.refs import GITAI_REF, NOTES_REF

# Neither ``typing`` nor ``dataclasses`` is loaded here (8 ms of a 50 ms answer):
# type checkers read this name as typing's own.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    from deja_blame.attribution.model import FileBlame

# Bump when what a kept answer holds, or how its stamp is made, changes.
PRINTED_VERSION = 3
# The flags of the forms answered here (besides numeric -L windows), in any order.
FLAGS = frozenset({"--json", "--no-refresh"})
# The environment that can change what deja or git print (besides the key's own).
_ENV_PREFIXES = ("DEJA_", "GIT_", "XDG_", "LC_")
_ENV_NAMES = frozenset(
    {"HOME", "PATH", "TZ", "LANG", "LANGUAGE", "TERM", "COLUMNS", "LINES", "NO_COLOR",
     "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "PAGER", "LESS", "PYTHONIOENCODING",
     "PYTHONUTF8"}
)  # fmt: skip
LATE_DIR = "late"  # hooks/late.py's records' folder in .git/deja (a test holds them equal)
_TABLE = "attribution_cache"  # kept answers live beside the entries they print
_DIGITS = frozenset("0123456789")


class Question:
    """One eligible ``deja blame`` question: where its answer is kept and what it reads."""

    __slots__ = ("key", "db", "top", "file", "rel", "repo", "refresh")

    def __init__(self, key: str, db: str, top: str, file: str, repo: bytes, refresh: bool) -> None:
        self.key = key  # the kept answer's key in the attribution cache's table
        self.db = db  # the index
        self.top = top  # the repository's top (real path)
        self.file = file  # the file's real path
        self.rel = file[len(top.rstrip("/")) + 1 :]  # its path in the repository
        self.repo = repo  # what git's files say (``_repository``)
        self.refresh = refresh  # the command reads new transcripts first


class _Asked:
    """The question a whole-way run answers: its stamp before the command, the
    transcripts as they stood before it (``watched``) and as its refresh looked at
    Antigravity's (``seen``), what it printed and whether it wrote on stderr
    (``_Tee``), the answer it gave."""

    __slots__ = ("question", "before", "watched", "seen", "out", "err", "result")

    def __init__(
        self, question: Question, before: str, watched: _Watched | None, seen: look.Seen | None
    ) -> None:
        self.question = question
        self.before = before
        self.watched = watched
        self.seen = seen
        self.out = _Tee(sys.stdout.buffer, keep=True)
        self.err = _Tee(sys.stderr.buffer, keep=False)
        self.result: FileBlame | None = None


_ASKED: _Asked | None = None


def replay(args: list[str]) -> bool:
    """Write the kept answer to ``deja ARGS`` when it still holds; False: nothing
    written (the command runs, and ``keep`` may keep what it prints). Whatever goes
    wrong before the answer is written only means the whole way."""
    global _ASKED
    _ASKED = None
    try:
        found = _kept_answer(args)
    except Exception:  # noqa: BLE001 - a kept answer is an optimisation, never an error
        _ASKED = None
        look.stop()
        return False
    if found is None:
        if _ASKED is not None:
            _capture(_ASKED)
        return False
    try:
        sys.stdout.buffer.write(found)
        sys.stdout.flush()
    except BrokenPipeError:
        # a reader that stopped early (``| head``): deja's exit 0, as the command line's
        sys.stderr.close()
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nothing left for the exit's flush
    return True


def answered(result: FileBlame) -> None:
    """``deja blame`` printed ``result``: the answer ``keep`` may keep."""
    if _ASKED is not None:
        _ASKED.result = result


def keep(code: object) -> None:
    """The command ended with ``code``: keep what it printed when it may be written
    again (a failure costs the kept answer only)."""
    global _ASKED
    asked, _ASKED = _ASKED, None
    if asked is None:
        return
    look.stop()
    try:
        _release(asked)
        if code in (0, None) and not asked.err.wrote and asked.result is not None:
            _keep(asked)
    except Exception:  # noqa: BLE001, S110 - see above
        pass


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
        kept = conn.execute(f"SELECT token, data FROM {_TABLE} WHERE key=?", (question.key,))
        row = kept.fetchone()
        if row is not None:
            header, printed = _unpack(zlib.decompress(row[1]))
            now = _stamp(conn, question, header)
            if now is not None and _digest(now) == row[0]:
                return printed
        before = _stamp(conn, question, None)
        if before is None:
            return None
        watched = _watch_transcripts(conn) if question.refresh else None
    finally:
        conn.close()
    # the refresh hands over its look at Antigravity's sessions (``index/look.py``)
    seen = look.wait() if watched is not None else None
    _ASKED = _Asked(question, before, watched, seen)
    return None


def _keep(asked: _Asked) -> None:
    from deja_blame.attribution import cache

    question, result = asked.question, asked.result
    assert result is not None
    key = result.cache_key
    if key is None or result.rev is not None:
        return  # not the cache's answer for HEAD's text (a --reverse, a --contents...)
    conn = _open(question.db)
    if conn is None:
        return
    try:
        lines = question.repo.split(b"\n")
        head, notes = lines[2].decode(), _notes_tips(question.repo)
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
        if _stamp(conn, question, None) != asked.before:
            return  # the repository or the index moved while the command answered
        watched, seen = asked.watched, asked.seen
        transcripts = None
        if question.refresh:
            if watched is None or seen is None or seen.roots is None or seen.text is None:
                return  # the refresh did not look at every session (or did not run)
            transcripts = _transcripts_text(watched.before, seen.text)
            if transcripts is None:
                return
        roots = [] if seen is None or seen.roots is None else seen.roots
        header = _Header(key, sorted(result.sessions), sorted(entry.orig_paths), watched, roots)
        # the transcripts as the refresh looked (not again: one written since then
        # already differs from this, and the kept answer is never served)
        after = _stamp(conn, question, header, transcripts)
        if after is None:
            return
        from deja_blame.index import queries as Q

        data = zlib.compress(_pack(header, bytes(asked.out.kept or b"")), 1)
        Q.cache_put(conn, _TABLE, question.key, data, cache.CACHE_ENTRIES, token=_digest(after))
        conn.commit()
    finally:
        conn.close()


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


# -- what was printed -------------------------------------------------------------------


class _Tee(io.RawIOBase):
    """A standard stream's bytes on their way out: kept (stdout's, to keep) or only
    noticed (stderr's: an answer beside a warning is not kept)."""

    def __init__(self, out: Any, keep: bool) -> None:
        super().__init__()
        self.out = out
        self.kept = bytearray() if keep else None
        self.wrote = False

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        raw = bytes(data)
        self.out.write(raw)
        # out at once: the tee's own buffer is the one in front of it (a flush with
        # nothing left there does not reach here; a server's fork hands the stream
        # back after such a flush: ``resident/server._hand_back``)
        self.out.flush()
        self.wrote = self.wrote or bool(raw)
        if self.kept is not None:
            self.kept += raw
        return len(raw)

    def flush(self) -> None:
        self.out.flush()

    def isatty(self) -> bool:
        return bool(self.out.isatty())

    def fileno(self) -> int:
        return int(self.out.fileno())


_SAVED: tuple[Any, Any] | None = None


def _capture(asked: _Asked) -> None:
    """stdout and stderr through ``asked``'s tees, as text streams like the ones they
    replace (every writer, click's and ``print_json``'s, goes through them)."""
    global _SAVED
    _SAVED = (sys.stdout, sys.stderr)
    sys.stdout = _text_over(asked.out, sys.stdout)
    sys.stderr = _text_over(asked.err, sys.stderr)


def _text_over(tee: _Tee, stream: Any) -> Any:
    return io.TextIOWrapper(
        io.BufferedWriter(tee),
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=stream.line_buffering,
        write_through=True,
    )


def _release(asked: _Asked) -> None:
    """The standard streams back, everything written through the tees flushed."""
    global _SAVED
    saved, _SAVED = _SAVED, None
    if saved is None:
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    sys.stdout, sys.stderr = saved


# -- the kept answer ------------------------------------------------------------------


class _Watched:
    """The transcripts' files and folders a refresh looks below, and how they stood."""

    __slots__ = ("env", "paths", "before")

    def __init__(self, env: list[str], paths: list[str]) -> None:
        self.env = env  # NAME=VALUE of each variable that chooses the roots
        self.paths = paths  # every path to stat, absolute
        self.before: str | None = None  # how they stood before the command ran


class _Header:
    """What a kept answer names besides the question: the cached attribution it was
    printed from, the sessions it printed, the paths the entry's lines were written
    at (renames), and the transcripts it was answered after (refreshing forms): the
    other agents' paths and the Antigravity roots the refresh looked in."""

    __slots__ = ("entry_key", "sessions", "orig", "watched", "roots")

    def __init__(
        self,
        entry_key: str,
        sessions: list[str],
        orig: list[str],
        watched: _Watched | None,
        roots: list[str],
    ) -> None:
        self.entry_key = entry_key
        self.sessions = sessions
        self.orig = orig
        self.watched = watched
        self.roots = roots


def _pack(header: _Header, printed: bytes) -> bytes:
    w = header.watched
    parts = [
        header.entry_key.replace("\0", "\1"),
        "\1".join(header.sessions),
        "\1".join(header.orig),
        "" if w is None else "\1".join(w.env),
        "" if w is None else "\1".join(w.paths),
        "-" if w is None else "+",
        "\1".join(header.roots),
    ]
    raw = "\0".join(parts).encode("utf-8", "surrogateescape")
    return b"%d\n" % len(raw) + raw + printed


def _unpack(data: bytes) -> tuple[_Header, bytes]:
    size, _, rest = data.partition(b"\n")
    n = int(size)
    fields = rest[:n].decode("utf-8", "surrogateescape").split("\0")
    key, sessions, orig, env, paths, has, roots = fields

    def listed(text: str) -> list[str]:
        return text.split("\1") if text else []

    watched = _Watched(listed(env), listed(paths)) if has == "+" else None
    header = _Header(
        key.replace("\1", "\0"), listed(sessions), listed(orig), watched, listed(roots)
    )
    return header, rest[n:]


# -- the question -----------------------------------------------------------------------


def _question(args: list[str]) -> Question | None:
    if args[:1] != ["blame"] or os.environ.get("DEJA_NO_CACHE", ""):
        return None
    if sys.stdout.isatty():
        return None  # a terminal's answer goes through the pager
    files: list[str] = []
    flags: set[str] = set()
    rest = args[1:]
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg in FLAGS and arg not in flags:
            flags.add(arg)
        elif arg == "-L" and i + 1 < len(rest) and _numeric_range(rest[i + 1]):
            i += 1
        elif arg.startswith("-L") and _numeric_range(arg[2:]):
            pass
        elif arg.startswith("-"):
            return None  # another form: the whole way
        else:
            files.append(arg)
        i += 1
    if len(files) != 1:
        return None
    name = files[0]
    if not os.path.isfile(name) or os.path.islink(name):
        return None
    cwd = os.getcwd()
    path = os.path.realpath(name)
    if path != os.path.abspath(name):
        return None  # through a linked folder: git's path is not this one's
    repo = gitfiles.rev_parse(os.path.dirname(path))
    if repo is None or repo != gitfiles.rev_parse(cwd):
        return None  # the command's own repository is another (its late notes...)
    fields = repo.split(b"\n")
    if len(fields) < 4 or not fields[2]:
        return None  # no commit yet
    top = os.fsdecode(fields[0])
    if not path.startswith(top.rstrip("/") + "/"):
        return None
    notes = gitfiles.ref_tips(top, (NOTES_REF, GITAI_REF))
    replaced = gitfiles.replacements(top)
    if notes is None or replaced is None or gitfiles.blame_config(top) != b"":
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
    ttys = (sys.stdout.isatty(), sys.stderr.isatty())
    what = repr(
        (PRINTED_VERSION, __version__, CACHE_VERSION, IDENTITY_VERSION, args, cwd, path, db,
         env, ttys)
    )  # fmt: skip
    key = "printed\0" + blake2b(what.encode("utf-8", "surrogateescape")).hexdigest()
    said = repo + b"\0" + notes + b"\0" + replaced + b"\0" + _config_stat(top)
    return Question(key, db, top, path, said, "--no-refresh" not in flags)


def _numeric_range(spec: str) -> bool:
    """``A,B``, ``A,+N`` or ``A``: a window deja cuts from the whole file's answer
    (``:FUNC`` and ``/REGEX/`` ask git for their lines)."""
    start, sep, end = spec.partition(",")
    end = end[1:] if end.startswith("+") else end
    return bool(start) and set(start) <= _DIGITS and (not sep or bool(end) and set(end) <= _DIGITS)


def _config_stat(top: str) -> bytes:
    """git's configuration files' size and time: any edit of them is another stamp
    (``blame_config`` says none sets what changes blame; this covers the rest)."""
    out = []
    for path in gitfiles.config_files(top):
        try:
            st = os.stat(path)
            out.append(f"{path} {st.st_size} {st.st_mtime_ns} {st.st_ino}")
        except OSError:
            out.append(f"{path} -")
    return "\n".join(out).encode("utf-8", "surrogateescape")


def _notes_tips(repo: bytes) -> str:
    """The notes' tips, one a line, as ``cache.notes_tips_cli`` gives them."""
    said = repo.split(b"\0")[1]
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


# -- the stamp ------------------------------------------------------------------------


def _stamp(
    conn: sqlite3.Connection,
    question: Question,
    header: _Header | None,
    transcripts: str | None = None,
) -> str | None:
    """What the answer depends on, as one text (see the module's docstring): the
    repository and the index, and with ``header`` the kept answer's own rows, the
    written paths' standing and the transcripts (``transcripts``: as they were
    looked at; else as they stand now)."""
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
        parts.append(_standing(conn, question.top, header.orig))
        if question.refresh:
            if transcripts is None:
                if header.watched is None:
                    return None
                transcripts = _transcripts_text(
                    _transcripts_stat(header.watched), look.now(header.roots)
                )
            parts.append(transcripts)
    return repr(parts)


def _standing(conn: sqlite3.Connection, top: str, orig: list[str]) -> list[Any]:
    """Which written paths stand for the entry's files here, and which for another
    clone's (``facts.indexread.candidate_paths``, as ``cache.token`` reads it: a
    folder inside the checkout that appears or goes changes it)."""
    from deja_blame.attribution.facts.clone_paths import stands_for
    from deja_blame.pathtext import as_text

    out: dict[int, bool] = {}
    root = top.rstrip("/")
    for rel in orig:
        if not rel:
            continue
        name = rel.rpartition("/")[2]
        for pid, written in conn.execute(
            "SELECT path_id, path FROM paths WHERE name=?", (as_text(name),)
        ):
            here = stands_for(str(written), rel, root)
            if here or (here is False and pid not in out):
                out[int(pid)] = here
    return sorted(out.items())


def _watch_transcripts(conn: sqlite3.Connection) -> _Watched | None:
    """Every other agent's transcript roots, as the refresh finds them (``registry``),
    walked, the folder Antigravity's roots are found in by name (its sessions are the
    refresh's own look: ``index/look.py``), and the files of what the user trusts (the
    refresh first drops what trust taken back let in): what a later
    ``_transcripts_stat`` compares, as it stood before the command ran. None: the
    refresh also reads what no file here says (a repository's own config trusting its
    sessions)."""
    from deja_blame.index.provenance import TRUSTED_ENV, gate_files
    from deja_blame.transcripts.antigravity.discover import ROOT_ENV, discover_roots, gemini_folder
    from deja_blame.transcripts.registry import OTHER_AGENTS

    gate = gate_files(conn)
    if gate is None:
        return None

    names = {ROOT_ENV, TRUSTED_ENV, "HOME", "XDG_CONFIG_HOME"}
    roots: list[tuple[str, bool]] = []  # (root, named by its variable): walked
    # Antigravity's sessions: the refresh's own look (``index/look.py``); here only
    # the folder its roots are found in by name (a new one changes its time)
    parents = [] if os.environ.get(ROOT_ENV) else [str(gemini_folder())]
    # ... and left out of another agent's walk that holds them (Gemini CLI's root is
    # ``~/.gemini``, where it reads only ``tmp/``: no other agent reads their files)
    looked = {os.path.normpath(str(r)) for r in discover_roots()}
    chain = False
    for agent in OTHER_AGENTS:
        names.add(agent.root_env)
        names.update(agent.location_env)
        # a root a variable names (deja's, or the agent's own that moves its store)
        named = any(os.environ.get(n) for n in (agent.root_env, *agent.location_env))
        found = [(str(r), named) for r in agent.roots()]
        if agent.file_roots and not named:
            # Aider's and SpecStory's histories, found from the current folder up to
            # the work tree's top: none there (else the whole way), and a new one
            # changes the time of a folder on that way (or of its .specstory)
            if found:
                return None
            chain = True
            continue
        roots += found
    env = [f"{n}={os.environ.get(n, '')}" for n in sorted(names)]
    paths: list[str] = list(gate) + (_way_up() if chain else []) + parents
    for folder, named in roots:
        if not named:
            # a root found by its name in a folder (``~/.gemini/tmp``) or chosen
            # by what is there: a new one changes its parent's time
            paths.append(os.path.dirname(folder.rstrip("/")) or "/")
        paths += _walk(folder, looked)
    watched = _Watched(env, paths)
    watched.before = _transcripts_stat(watched)
    return watched


def _way_up() -> list[str]:
    """The folders from the current one up to its work tree's top (or the home folder),
    as Aider's and SpecStory's ``default_roots`` walk them, each with the folder a
    SpecStory history is kept in."""
    from deja_blame.transcripts.specstory import HISTORY, STORE

    home = os.environ.get("HOME") or os.path.expanduser("~")
    out = []
    here = os.getcwd()
    while True:
        out += [here, os.path.join(here, STORE), os.path.join(here, STORE, HISTORY)]
        parent = os.path.dirname(here)
        if os.path.exists(os.path.join(here, ".git")) or here == home or parent == here:
            return out
        here = parent


def _walk(root: str, besides: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """``root`` and everything below it (links not followed) but the folders
    ``besides``; a root not there yet, itself (its making changes its stat)."""
    if not os.path.lexists(root):
        return [root]
    out = []
    stack = [os.path.normpath(root)]
    while stack:
        folder = stack.pop()
        out.append(folder)
        try:
            with os.scandir(folder) as found:
                for item in found:
                    if item.is_dir(follow_symlinks=False):
                        if item.path not in besides:
                            stack.append(item.path)
                    else:
                        out.append(item.path)
        except OSError:
            continue  # a file as root, or unreadable: its stat says what it is
    return out


def _transcripts_stat(watched: _Watched) -> str | None:
    """How the watched paths stand now; None when the roots' variables changed."""
    for item in watched.env:
        name, _, value = item.partition("=")
        if os.environ.get(name, "") != value:
            return None
    lstat = os.lstat
    out = []
    for path in watched.paths:
        try:
            st = lstat(path)
            out.append(f"{st.st_mode} {st.st_size} {st.st_mtime_ns} {st.st_ino}")
        except OSError:
            out.append("-")
    return blake2b("\n".join(out).encode()).hexdigest()


def _transcripts_text(walked: str | None, looked: str) -> str | None:
    """The transcripts' part of the stamp: the other agents' walk (``_transcripts_stat``)
    and the refresh's look at Antigravity's sessions (``look``)."""
    return None if walked is None else f"{walked} {looked}"


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
