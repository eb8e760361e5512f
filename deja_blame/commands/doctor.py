"""deja doctor: is everything deja needs here, and in order? What fixes what is not.

Each check gives ``{name, ok, detail, fix}``; ``fix`` is the command to run
(empty when ok, but for a warning: ok, with something to do). Nothing is
changed: the index is opened read-only (never created or migrated), the
repository only read.

Checks, in order: git, pygit2/libgit2, transcript roots (and sessions in each),
the index (file, size, ``PRAGMA integrity_check``, schema version), whether it
is up to date with the transcripts, and, in a git repository, the hooks
(installed, chained, their python still there; ``core.hooksPath`` honoured),
the notes under ``refs/notes/deja``, and the commits a transcript indexed after
the last complete ``deja annotate --all`` left without their note (a warning),
and the latest commits' lines a session of another machine wrote with its clock
ahead of git's (``clock``, a warning).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from deja_blame.errors import DejaError
from deja_blame.index import queries as Q
from deja_blame.index.db import (
    SCHEMA_VERSION,
    busy_timeout_ms,
    disk_full,
    index_command,
    open_read_only,
    refuse_not_ours,
    schema_version,
    writable_place,
)
from deja_blame.index.store import not_sessions
from deja_blame.jsonout import print_json
from deja_blame.output import counted, shorten, style, terminal, use_colour, warn
from deja_blame.session_ids import short
from deja_blame.transcripts.antigravity.discover import (
    ROOT_ENV,
    TranscriptFile,
    discover_roots,
    find_transcripts,
)
from deja_blame.transcripts.files import Skipped

if TYPE_CHECKING:
    from deja_blame.index.provenance import LeftOut

__all__ = ("Check", "run_doctor", "diagnose")


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    # nothing to check here (outside a repository: no hooks, no notes): shown "--", not
    # "ok" in front of a sentence that says what is missing; its JSON is ok
    skipped: bool = False
    # ok (no exit 1), yet something to do: shown "warn", its ``fix`` in the JSON
    warning: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix}


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


# -- the environment ----------------------------------------------------------------------


def check_git() -> Check:
    try:
        proc = subprocess.run(["git", "--version"], capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return Check(
            "git",
            False,
            f"git cannot be run ({exc})",
            "install git (hooks, notes and fast blame need it): apt-get install git",
        )
    version = proc.stdout.decode("utf-8", "replace").strip().removeprefix("git version ")
    if proc.returncode != 0 or not version:
        return Check("git", False, f"git --version exited {proc.returncode}", "reinstall git")
    return Check("git", True, version)


def check_pygit2() -> Check:
    try:
        import pygit2
    except ImportError as exc:  # the package depends on it; a broken install
        return Check("pygit2", False, str(exc), "python -m pip install --force-reinstall pygit2")
    return Check("pygit2", True, f"pygit2 {pygit2.__version__}, libgit2 {pygit2.LIBGIT2_VERSION}")


NO_ROOT_FIX = (
    "run deja where the agents ran; a folder of transcripts copied here: deja index --root DIR"
    " (each agent's variable: deja index --help)"
)


def notes_first(roots: Check, cwd: Path) -> Check:
    """No transcript on this machine, in a clone with a remote and no notes yet: its
    attribution is in the repository's notes (a reviewer's clone, CI), so the fix
    says deja notes fetch first (newcomer 18 #8: it named Antigravity's variable)."""
    from deja_blame.gitutil import find_repo_root
    from deja_blame.notes.where_from import notes_here, remotes

    root = find_repo_root(cwd)
    names = remotes(root) if root is not None else []
    if root is None or not names or notes_here(root):
        return roots
    remote = "" if "origin" in names else f" {names[0]}"
    fix = (
        "this clone has no agent transcripts: fetch the repository's attribution notes,"
        f" deja notes fetch{remote}; or {roots.fix}"
    )
    return Check(roots.name, roots.ok, roots.detail, fix)


def check_roots(
    roots: list[Path], no_session: frozenset[str] = frozenset()
) -> tuple[Check, list[TranscriptFile]]:
    """The transcript roots and what they hold; ``no_session``: the files the index
    read and found no session in (unchanged since), counted apart from the sessions."""
    fix_root = f"export {ROOT_ENV}=/path/to/.gemini/antigravity  # the directory holding brain/"
    parts: list[str] = []
    problems: list[str] = []
    found: list[TranscriptFile] = []
    # links and special files below the roots: passed over, said, not a failure
    skipped = Skipped()
    # the other agents' transcripts, where they keep them (none is a problem only
    # when there is nothing at all)
    from deja_blame.transcripts.registry import OTHER_AGENTS, ROOTS_AGENT

    others = {h.id: h.roots() for h in OTHER_AGENTS}
    for h in OTHER_AGENTS:
        named = bool(os.environ.get(h.root_env))
        for root in others[h.id]:
            if root.is_dir():
                files = list(h.find(root, None, skipped))
                found.extend(files)
                if not files and not named and _holds_another_agents(root, h.id, others, roots):
                    # ~/.gemini holding only Antigravity's antigravity/: Gemini CLI's
                    # "0 sessions" there read as a misconfigured Gemini CLI
                    continue
                empty = sum(1 for f in files if str(f.path) in no_session)
                none = f"; {counted(empty, 'file')} with no session in it" if empty else ""
                parts.append(f"{h.id}: {root} ({counted(len(files) - empty, 'session')}{none})")
            elif named:
                problems.append(f"transcript root not found: {root} (from {h.root_env})")
    if not roots and not found:
        nothing = (
            f"no {ROOTS_AGENT.where} directory, and no "
            + ", ".join(a.display_name for a in OTHER_AGENTS)
            + " transcripts"
        )
        # no agent looked for in particular: no one agent's variable in the fix
        return Check("transcript roots", False, "; ".join([nothing, *problems]), NO_ROOT_FIX), []
    for root in roots:
        before = len(problems)
        files = list(find_transcripts(root, problems, skipped))
        found.extend(files)
        if len(problems) == before or files:
            none = "" if files or (root / "brain").is_dir() else ": no brain/ directory"
            parts.append(f"{ROOTS_AGENT.id}: {root} ({counted(len(files), 'session')}{none})")
    detail = "; ".join(parts + problems + skipped.lines())
    if problems and not found:
        return Check("transcript roots", False, detail, fix_root), found
    if problems:
        return (
            Check("transcript roots", False, detail, "check the permissions of the paths named"),
            found,
        )
    return Check("transcript roots", True, detail), found


def _holds_another_agents(
    root: Path, agent: str, others: dict[str, list[Path]], antigravity: list[Path]
) -> bool:
    """Whether an agent's default root holds another agent's root (or is it)."""
    theirs = [r for a, rs in others.items() if a != agent for r in rs] + list(antigravity)
    return any((r == root or r.is_relative_to(root)) and r.is_dir() for r in theirs)


def check_left_out(left: list[LeftOut]) -> Check | None:
    """The transcripts deja found and does not read (a repository carries them, or
    another user owns them: ``transcripts.provenance``), each with the command that
    reads it. Not a failure: leaving them out is deja working as it should."""
    if not left:
        return None
    return Check("left out", True, "; ".join(lo.line() for lo in left))


# -- the index -------------------------------------------------------------------------------


def _open_read_only(path: Path) -> sqlite3.Connection:
    conn = open_read_only(path)
    conn.execute(f"PRAGMA busy_timeout = {busy_timeout_ms()}")
    return conn


def integrity_summary(rows: list[Any], shown: int = 2) -> str:
    """SQLite's integrity_check report in one short line: its first problems and how
    many more (a row can hold many lines; a damaged index gives up to a hundred)."""
    lines = [
        ln.strip()
        for row in rows
        for ln in str(row).splitlines()
        if ln.strip() and not ln.startswith("*** in database")
    ]
    text = "; ".join(shorten(ln, 80) for ln in lines[:shown])
    more = len(lines) - shown
    return text + (f"; and {more} more problem{'s' if more != 1 else ''}" if more > 0 else "")


def check_index(
    db_path: Path, transcripts: list[TranscriptFile], left_out: Iterable[Path] = ()
) -> tuple[Check, Check | None]:
    """The index file's health, and (when healthy) whether it is behind the transcripts
    (``left_out``: those ``deja index`` leaves out on purpose, which it never will be)."""
    rebuild = index_command(db_path, "--rebuild")
    if not db_path.exists():
        # no problem (NEWCOMER14 #1: a fresh install failed here, exit 1): the first
        # blame, why or stats, or the hook's first commit, builds it
        built_by = (
            "the first deja blame, why or stats builds it, as does a commit with the hooks;"
            f" or now: {index_command(db_path)}"
        )
        return Check("index", True, f"{db_path}: not built yet ({built_by})"), None
    try:
        refuse_not_ours(db_path)
    except DejaError as exc:
        return Check("index", False, str(exc), exc.hint or ""), None
    size = sum(
        Path(str(db_path) + s).stat().st_size
        for s in ("", "-wal")
        if Path(str(db_path) + s).exists()
    )
    where = f"{db_path} ({_size(size)})"
    full = disk_full(db_path)
    if full:
        # SQLite's errors on a full disk look like damage; a rebuild would make it worse
        where += "; its disk is full"
        rebuild = f"free space on the disk of {db_path.parent}"
    try:
        conn = _open_read_only(db_path)
    except sqlite3.Error as exc:
        return Check("index", False, f"{where}: cannot be opened ({exc})", rebuild), None
    try:
        try:
            rows = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
        except sqlite3.DatabaseError as exc:
            return Check("index", False, f"{where}: damaged ({exc})", rebuild), None
        if rows != ["ok"]:
            return Check(
                "index", False, f"{where}: damaged ({integrity_summary(rows)})", rebuild
            ), None
        try:
            version = schema_version(conn)
            has_tables = Q.has_any_table(conn)
        except sqlite3.DatabaseError as exc:
            return Check("index", False, f"{where}: damaged ({exc})", rebuild), None
        if version == 0 and has_tables:
            return (
                Check(
                    "index",
                    False,
                    f"{where}: not a deja index (no deja schema version)",
                    "name another file with --db or DEJA_DB (deja leaves this one as it is)",
                ),
                None,
            )
        if version > SCHEMA_VERSION:
            return (
                Check(
                    "index",
                    False,
                    f"{where}: schema {version} is newer than this deja's {SCHEMA_VERSION}",
                    "upgrade deja from where you installed it (its checkout: git pull, then pip install .),"
                    f" or start afresh: {index_command(db_path, '--rebuild')}",
                ),
                None,
            )
        if version == 0:
            return Check("index", False, f"{where}: empty", index_command(db_path)), None
        sessions = Q.count_sessions(conn)
        stale = "" if version == SCHEMA_VERSION else f", schema {version} (migrates on next use)"
        if full:
            stale += ": read-only until space is freed (blame, why, show work; deja index cannot add to it)"
        elif not writable_place(db_path):
            # a read-only file system, or a directory deja may not write: not damage
            stale += "; read-only here (blame, why, show work; deja index cannot add to it)"
        health = Check(
            "index",
            True,
            f"{where}: integrity ok, schema {version}{stale}, {counted(sessions, 'session')}",
        )
        return health, _check_fresh(conn, transcripts, db_path, left_out)
    finally:
        conn.close()


def _check_fresh(
    conn: sqlite3.Connection,
    transcripts: list[TranscriptFile],
    db_path: Path,
    left_out: Iterable[Path] = (),
) -> Check:
    """New or grown transcripts since the last ``deja index`` (one stat each, as index
    does); a transcript left out on purpose (a repository carries it) is not one
    ``deja index`` would read: not behind."""
    known = Q.transcript_stats(conn)
    leave = {os.path.abspath(p) for p in left_out}
    new = changed = skipped = 0
    for tf in transcripts:
        if leave and os.path.abspath(tf.path) in leave:
            skipped += 1
            continue
        row = known.get(tf.session_id)
        if row is None:
            new += 1
            continue
        try:
            key = tf.stat_key()
        except OSError:
            continue
        if row != (str(tf.path), *key):
            changed += 1
    if new or changed:
        return Check(
            "index up to date",
            False,
            f"{new} new and {changed} changed transcripts not yet indexed",
            index_command(db_path),
        )
    detail = f"all {counted(len(transcripts) - skipped, 'transcript')} indexed"
    if skipped:
        detail += f" ({skipped} left out on purpose: above)"
    return Check("index up to date", True, detail)


# -- the repository ---------------------------------------------------------------------------


def check_repository(cwd: Path) -> list[Check]:
    from deja_blame.errors import UnsupportedRepositoryError
    from deja_blame.gitutil import open_repository

    try:
        repo = open_repository(cwd)
    except UnsupportedRepositoryError as exc:
        return [Check("repository", False, str(exc), exc.hint or "")]
    except DejaError as exc:
        return [Check("repository", True, f"{exc}: hooks and notes not checked", skipped=True)]
    checks = [check_hooks(repo), check_notes(repo)]
    from deja_blame.gitcli import is_cli

    if is_cli(repo):
        checks.insert(0, Check("repository", True, "SHA-256 object names: read through git"))
    late = check_late_notes(repo)
    if late is not None:
        checks.append(late)
    return checks


def check_late_notes(repo: Any) -> Check | None:
    """Commits whose hook could not finish their note (``hooks/late.py``)."""
    from deja_blame.hooks.late import late_records, summary
    from deja_blame.notes.store import deja_dir

    records = late_records(deja_dir(repo))
    if not records:
        return None
    first = records[0]
    why = f" (the first, {first.commit[:12]}: {first.why})" if first.why else ""
    return Check("late notes", False, summary(len(records)) + why, "deja annotate --pending")


def check_hooks(repo: Any) -> Check:
    from deja_blame.hooks import install as hooks_install

    try:
        doc = hooks_install.status(repo)
    except (DejaError, OSError) as exc:
        return Check("hooks", False, f"cannot read the hooks: {exc}", "deja hooks status")
    parts = []
    bad = []
    for hook, info in doc["hooks"].items():
        text = f"{hook} {info['state']}"
        if info.get("chained"):
            text += f", chains {Path(info['chained']).name} ({info.get('chained_kind')})"
        if info.get("python") and not info.get("python_ok"):
            text += f", its python {info['python']} is gone"
            bad.append(hook)
        if not info["state"].startswith("installed"):
            bad.append(hook)
        parts.append(text)
    rewrite = "refs/notes/deja" in (doc.get("config", {}).get("notes.rewriteRef") or [])
    if doc.get("installed") and not rewrite:
        parts.append("notes.rewriteRef lacks refs/notes/deja (notes lost on amend/rebase)")
        bad.append("config")
    detail = f"{doc['hooks_dir']}: " + "; ".join(parts)
    if doc.get("last_warning"):
        detail += f"; last warning: {doc['last_warning']}"
    if not rewrite and not any(
        info["state"].startswith("installed") for info in doc["hooks"].values()
    ):
        # nothing needs installing (the README's promise): the hooks only add a note
        # at each commit, so their absence is a suggestion, not a problem. (Once
        # installed, notes.rewriteRef says so: hooks git no longer runs are one.)
        return Check("hooks", True, f"{detail} (optional: deja hooks install writes notes)")
    if bad:
        return Check("hooks", False, detail, "deja hooks install")
    return Check("hooks", True, detail)


def check_notes(repo: Any) -> Check:
    from deja_blame.notes.schema import NOTES_REF
    from deja_blame.notes.store import (
        WRONG_KIND_HINT,
        note_blob_map,
        ref_object,
        ref_target,
        wrong_kind_message,
    )

    found = ref_object(repo)
    if found is not None and found[1] != "commit":
        message = wrong_kind_message(NOTES_REF, *found)
        return Check("notes", False, message, WRONG_KIND_HINT.format(ref=NOTES_REF))
    target = ref_target(repo)
    if target is None:
        return Check("notes", True, f"{NOTES_REF}: absent (no commit annotated here yet)")
    try:
        count = len(note_blob_map(repo, target))
    except Exception as exc:  # noqa: BLE001 - a damaged notes tree is a finding, not a crash
        return Check(
            "notes",
            False,
            f"{NOTES_REF} -> {target[:12]}: unreadable ({type(exc).__name__}: {exc})",
            "git fsck; then restore the notes from a remote: deja notes fetch",
        )
    return Check("notes", True, f"{NOTES_REF} -> {target[:12]}: {counted(count, 'note')}")


# -- all of it --------------------------------------------------------------------------------


def check_server() -> Check:
    """The resident server (``deja server``): optional, so never a problem; says
    whether commands are handed to one, and why not where they cannot be."""
    from deja_blame.commands.server import status
    from deja_blame.resident import place

    if os.name != "posix":
        return Check("server", True, "not available here (it needs Unix sockets)")
    if place.off():
        return Check("server", True, f"off for these commands ({place.SERVER_ENV}=0)")
    running = status()
    if running is not None:
        served = counted(int(running.get("served", 0)), "command")
        return Check("server", True, f"running (pid {running.get('pid')}, {served} served)")
    if place.socket_path() is None and os.path.lexists(place.folder()):
        return Check("server", True, f"cannot run: {place.problem()}")
    return Check(
        "server", True, "not running (optional: `deja server start` answers each command sooner)"
    )


def diagnose(
    db_path: Path, roots: list[Path] | None = None, cwd: Path | None = None
) -> list[Check]:
    checks = [check_git(), check_pygit2()]
    roots_check, transcripts = check_roots(
        roots if roots is not None else discover_roots(), _no_session_files(db_path)
    )
    repo_checks = check_repository(cwd or Path.cwd())
    from deja_blame.index.below import roots_below
    from deja_blame.index.provenance import left_out_now

    left = left_out_now(below=roots_below())  # a monorepo's subprojects' histories too
    left_out = check_left_out(left)
    if left_out is not None:
        checks.append(left_out)
    notes = next((c for c in repo_checks if c.name == "notes"), None)
    if not transcripts and _no_sessions(db_path) and notes is not None and _has_notes(notes):
        # A reviewer's clone (or CI): no transcripts, no index, and the notes that
        # carry the attribution. Everything deja shows here comes from the notes.
        reader = "not needed here: this clone reads attribution from its notes"
        checks.append(Check("transcript roots", True, f"none ({reader})"))
        checks.append(Check("index", True, f"{db_path}: no sessions ({reader})"))
        for c in repo_checks:
            if c.name == "hooks" and not c.ok:
                c = Check("hooks", True, "not installed (only where commits are made)")
            checks.append(c)
        checks.append(
            Check("mode", True, "reviewer's clone: blame, why, show and report read the notes")
        )
        checks.append(check_server())
        return checks
    if not roots_check.ok and not transcripts:
        roots_check = notes_first(roots_check, cwd or Path.cwd())
    checks.append(roots_check)
    health, fresh = check_index(db_path, transcripts, [lo.path for lo in left])
    checks.append(health)
    if fresh is not None:
        checks.append(fresh)
    checks.extend(repo_checks)
    if health.ok and fresh is not None:
        history = check_history_notes(db_path, cwd or Path.cwd())
        if history is not None:
            checks.append(history)
        clock = check_clock(db_path, cwd or Path.cwd())
        if clock is not None:
            checks.append(clock)
    checks.append(check_server())
    return checks


def check_history_notes(db_path: Path, cwd: Path) -> Check | None:
    """Commits of the branch that sessions wrote to the files of and that have no
    up-to-date note: a transcript indexed after the commit (a late one) attributes
    lines the hook found nobody's. A warning (``deja annotate --all`` writes them),
    not a problem. Nothing is read when the last complete pass is current (one small
    query); otherwise the history as the pass reads it, with nothing derived."""
    from deja_blame.gitutil import open_repository
    from deja_blame.notes.annotate_all import unannotated
    from deja_blame.notes.history_state import HistoryState
    from deja_blame.notes.store import ref_target

    try:
        repo = open_repository(cwd)
        if ref_target(repo) is None and HistoryState(repo).done is None:
            return None  # no notes here, ever: the hooks check says they are optional
        conn = _open_read_only(db_path)
    except (DejaError, sqlite3.Error):
        return None  # the repository and index checks say why
    try:
        left = unannotated(repo, conn)
    except (DejaError, sqlite3.Error, OSError):
        return None  # an older schema (migrates on next use), git failing: not this check's
    finally:
        conn.close()
    if not left:
        return None
    what = "commit" if left == 1 else "commits"
    detail = (
        f"{left} {what} of the branch that sessions wrote to the files of"
        f" {'has' if left == 1 else 'have'} no up-to-date note (a transcript indexed"
        " after the commit, or a commit never annotated; up to"
        f" {left} {'note' if left == 1 else 'notes'} to write, as a commit whose lines all"
        " turn out a person's gets none); blame answers from the index,"
        " but notes pushed now may show their session lines as a person's:"
        " run deja annotate --all"
    )
    return Check("history notes", True, detail, "deja annotate --all", warning=True)


CLOCK_COMMITS = 30  # the latest commits of the branch whose added lines ``clock`` looks at
CLOCK_LINES = 5000  # at most this many of their added lines (one small query each)


def check_clock(db_path: Path, cwd: Path) -> Check | None:
    """Lines of the branch's latest commits that a session of another machine or clone
    wrote, every write of them dated after the commit beyond the skew deja allows: such
    a session's clock runs ahead of git's (or it wrote the lines again later), and its
    lines are the commits' authors' (newcomer 17 #1: nothing said so). A warning."""
    from functools import partial

    from deja_blame.attribution.explain import ahead_write
    from deja_blame.gitutil import PLAIN_DIFF, find_repo_root, try_git
    from deja_blame.index.fingerprint import is_trivial

    root = find_repo_root(cwd.resolve())
    if root is None:
        return None
    proc = try_git(
        root,
        [
            "log",
            f"-{CLOCK_COMMITS}",
            "--no-merges",
            "-p",
            "-U0",
            "--no-renames",
            *PLAIN_DIFF,  # the rows as the reader below reads them, whatever git's config
            "--format=%x00%H %ct",
        ],
        timeout=30,
    )
    if proc is None or proc.returncode != 0:
        return None
    try:
        conn = _open_read_only(db_path)
    except sqlite3.Error:
        return None
    found: list[tuple[str, str, int, dict[str, Any]]] = []
    seen = 0
    try:
        for commit, committed, path, line, text in _added_lines(proc.stdout):
            if is_trivial(text):
                continue
            seen += 1
            if seen > CLOCK_LINES:
                break
            got = ahead_write(conn, str(root), path, text, partial(float, committed))
            if got is not None:
                found.append((commit, path, line, got))
    except (sqlite3.Error, DejaError, OSError):
        return None  # an older schema (migrates on next use): the index check says so
    finally:
        conn.close()
    if not found:
        return None
    sessions = sorted({got["session"] for *_, got in found})
    commit, path, line, got = found[0]
    lead = max(got["ahead_seconds"] for *_, got in found)
    detail = (
        f"{counted(len(found), 'line')} of the latest commits written by"
        f" {counted(len(sessions), 'session')} of another machine or clone"
        f" ({terminal(short(sessions[0]))[:8]}{', ...' if len(sessions) > 1 else ''}), the writes dated"
        f" after the commits that hold them (by up to {max(1, round(lead / 60))} min): the"
        " clock where it ran may be ahead of git's by more than the 2 minutes deja allows,"
        f" and those lines count as the commits' authors' (deja why {terminal(path)}:{line}"
        f" in commit {commit[:8]} says more)"
    )
    fix = "set the clock right where that session ran"
    return Check("clock", True, detail, fix, warning=True)


def _added_lines(log: bytes) -> Iterable[tuple[str, float, str, int, str]]:
    """(commit, its time, path, line number in the commit, text) of each line added in
    ``git log -p -U0 --format=%x00%H %ct``'s output. A hunk's lines are counted by its
    header (an added line that reads ``++ x`` is no file header), and a path git quoted
    (``"b/na\\303\\257ve.py"``) is read back."""
    import re

    from deja_blame.attribution.facts.git_blame import unquote_path

    commit, committed, path, line = "", 0.0, "", 0
    old_left = new_left = 0  # the current hunk's lines still to come
    hunk = re.compile(rb"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
    for raw in log.split(b"\n"):
        if old_left or new_left:
            if raw.startswith(b"-"):
                old_left -= 1
                continue
            if raw.startswith(b"+"):
                new_left -= 1
                if path:
                    yield commit, committed, path, line, raw[1:].decode("utf-8", "replace")
                line += 1
                continue
            if raw.startswith(b"\\"):  # "\ No newline at end of file"
                continue
            old_left = new_left = 0  # the hunk ended early: read the line as a header
        if raw.startswith(b"\x00"):
            head = raw[1:].split()
            commit, committed = head[0].decode(), float(head[1]) if len(head) > 1 else 0.0
            path = ""
        elif raw.startswith(b"+++ "):
            name = unquote_path(raw[4:])
            path = name[2:] if name.startswith("b/") else ""
        elif raw.startswith(b"@@ "):
            m = hunk.match(raw)
            if m is None:
                continue
            old_left = int(m.group(1)) if m.group(1) is not None else 1
            line = int(m.group(2))
            new_left = int(m.group(3)) if m.group(3) is not None else 1


def _no_session_files(db_path: Path) -> frozenset[str]:
    """The transcript files the index read and found no session in, as they still are
    (same size and time): ``deja index`` said "N files with no session in it skipped",
    and the roots' count of sessions leaves them out."""
    if not db_path.exists():
        return frozenset()
    try:
        conn = _open_read_only(db_path)
        try:
            kept = not_sessions(conn)
        finally:
            conn.close()
    except sqlite3.Error:
        return frozenset()  # a damaged or foreign file: the index check says what it is
    out = set()
    for path, size, mtime_ns, _inode in kept.values():
        try:
            st = os.stat(path)
        except OSError:
            continue
        if st.st_size == size and st.st_mtime_ns == mtime_ns:
            out.add(path)
    return frozenset(out)


def _no_sessions(db_path: Path) -> bool:
    """No index, or one that holds no session (what reading notes leaves behind)."""
    if not db_path.exists():
        return True
    try:
        conn = _open_read_only(db_path)
        try:
            return Q.count_sessions(conn) == 0
        finally:
            conn.close()
    except sqlite3.Error:
        return False  # a damaged or foreign file: the index check says what it is


def _has_notes(check: Check) -> bool:
    return check.ok and ": absent" not in check.detail and not check.detail.endswith(": 0 notes")


def run_doctor(db_path: Path, as_json: bool, cwd: Path | None = None) -> int:
    checks = diagnose(db_path, cwd=cwd)
    problems = [c for c in checks if not c.ok]
    try:
        _print_checks(checks, problems, as_json)
    except BrokenPipeError:
        # the reader stopped early (| head -1): the exit code still says whether
        # something needs fixing (newcomer 17 #6: 0 while a check failed)
        _quiet_closed_pipes()
    return 1 if problems else 0


def _quiet_closed_pipes() -> None:
    """Point stdout and stderr at /dev/null, so that nothing more written (the flush at
    exit) raises on a pipe whose reader is gone."""
    null = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(null, stream.fileno())
        except (OSError, ValueError):
            pass
    os.close(null)


def _print_checks(checks: list[Check], problems: list[Check], as_json: bool) -> None:
    if as_json:
        print_json({"ok": not problems, "checks": [c.to_json() for c in checks]})
    else:
        colour = use_colour()
        width = max(len(c.name) for c in checks)
        for c in checks:
            if c.skipped:
                mark = "--  "
            elif c.warning:
                mark = style("warn", colour, fg="yellow")
            elif c.ok:
                mark = style("ok  ", colour, fg="green")
            else:
                mark = style("FAIL", colour, fg="red")
            click.echo(f"{mark}  {c.name:<{width}}  {terminal(c.detail)}")
        if problems:
            click.echo("\nto fix:")
            for c in problems:
                click.echo(f"  {c.name}: {terminal(c.fix)}")
    if problems:
        warn(f"{counted(len(problems), 'problem')} found")
