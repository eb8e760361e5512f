"""Late notes: commits whose hook could not finish their note, completed later.

A hook can end without a full note: the index's write lock held by another
process for longer than the hook's budget (the new transcript bytes cannot be
read, so the commit's lines match nobody), the hook killed at its budget, the
machine going down mid-job. Nothing would come back to such a commit, and
nothing would say it lacks its note.

So each hook job records its commits in ``.git/deja/late/<sha>`` before it
starts ("<deadline epoch> <hook> <why>"), and removes the record when the note
is complete. A record past its deadline is a late note: the hook failed, was
killed, or the machine went down. The next deja command in the repository
and the next commit's hook complete late notes (within a small budget, failing
open: a failure leaves the record for the next try), ``deja annotate
--pending`` completes them all, and ``deja hooks status`` / ``deja doctor``
count them. Records are deja state: never read or written through a link
(``statefile``).
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame import statefile

if TYPE_CHECKING:
    import pygit2

LATE_DIR = "late"
RECORD_BYTES = 512
MAX_RECORDS = 10_000  # a directory filled on purpose is read only this far
COMMAND_BUDGET = 5.0  # seconds a command other than annotate --pending spends on them
_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


@dataclass(frozen=True)
class LateRecord:
    commit: str
    deadline: float  # the job that wrote it owns it until then
    hook: str
    why: str

    def is_late(self, now: float) -> bool:
        return self.deadline < now


@dataclass
class CompleteResult:
    done: list[str] = field(default_factory=list)
    left: int = 0
    problem: str | None = None


def any_records_near(start: Path) -> Path | None:
    """The work tree at or above ``start`` when its repository holds late-note records,
    else None: read from the file system (``.git``, a worktree's ``gitdir:`` and
    ``commondir`` files), so that a command pays no repository opening for this."""
    from deja_blame.gitutil import find_repo_root

    root = find_repo_root(start)
    if root is None:
        return None
    dot_git = root / ".git"
    common = dot_git
    if not dot_git.is_dir():
        text = statefile.read_text(dot_git, 4096) or ""
        if not text.startswith("gitdir:"):
            return None
        gitdir = (root / text[len("gitdir:") :].strip()).resolve()
        pointer = statefile.read_text(gitdir / "commondir", 4096)
        common = (gitdir / pointer.strip()).resolve() if pointer else gitdir
    try:
        with os.scandir(late_dir(common / "deja")) as entries:
            return root if any(True for _ in entries) else None
    except OSError:
        return None


def late_dir(deja_dir: Path) -> Path:
    return deja_dir / LATE_DIR


def mark(deja_dir: Path, commit: str, hook: str, why: str, deadline: float = 0.0) -> None:
    """Record ``commit``'s note as not done: owned by a job until ``deadline`` (epoch
    seconds), late from then on (at once with the default 0). Never raises."""
    if not _SHA.match(commit):
        return
    why = " ".join(why.split())[:200] or "-"
    try:
        directory = late_dir(deja_dir)
        if not (statefile.ensure_dir(deja_dir) and statefile.ensure_dir(directory)):
            return
        text = f"{deadline:.0f} {hook} {why}\n"
        statefile.write_bytes(directory / commit, text.encode("utf-8", "replace"))
    except OSError:
        pass


def clear(deja_dir: Path, commit: str) -> None:
    """The note of ``commit`` is complete: forget its record."""
    if _SHA.match(commit):
        statefile.remove_entry(late_dir(deja_dir) / commit)


def records(deja_dir: Path) -> list[LateRecord]:
    """Every record (owned by a job or late), oldest name order; a name that is not a
    commit id, or an entry that is not a regular file (a planted link), is skipped."""
    try:
        names = sorted(os.listdir(late_dir(deja_dir)))[:MAX_RECORDS]
    except OSError:
        return []
    out: list[LateRecord] = []
    for name in names:
        if not _SHA.match(name):
            continue
        text = statefile.read_text(late_dir(deja_dir) / name, RECORD_BYTES)
        if text is None:
            continue
        fields = text.split(maxsplit=2)
        try:
            deadline = float(fields[0]) if fields else 0.0
        except ValueError:
            deadline = 0.0
        hook = fields[1] if len(fields) > 1 else "?"
        why = fields[2].strip() if len(fields) > 2 else ""
        out.append(LateRecord(name, deadline, hook, why))
    return out


def late_records(deja_dir: Path, now: float | None = None) -> list[LateRecord]:
    """The records no job owns any more: notes that are late."""
    now = time.time() if now is None else now
    return [r for r in records(deja_dir) if r.is_late(now)]


def summary(count: int, fix: bool = True) -> str:
    """The line status and doctor print (``fix``: with the command that writes them;
    not where that command is what failed)."""
    what = "commit waits" if count == 1 else "commits wait"
    line = f"{count} {what} for {'its note' if count == 1 else 'their notes'}"
    return f"{line}; run: deja annotate --pending" if fix else line


def complete(
    repo: pygit2.Repository,
    conn: sqlite3.Connection | None,
    deadline: float | None = None,
    refresh_first: bool = True,
    skip: frozenset[str] = frozenset(),
) -> CompleteResult:
    """Write the late notes of this repository, oldest record first, until ``deadline``
    (monotonic). The index is refreshed first: a record stays when that cannot be done
    (the index still locked), when annotating fails, or when time runs out."""
    from deja_blame.notes.annotate import annotate
    from deja_blame.notes.store import deja_dir as deja_dir_of

    result = CompleteResult()
    where = deja_dir_of(repo)
    todo = [r for r in late_records(where) if r.commit not in skip]
    if not todo:
        return result
    result.left = len(todo)
    if conn is None:
        result.problem = "no index to compute them from"
        return result
    if refresh_first:
        problem = _refresh(repo, conn, deadline)
        if problem is not None:
            result.problem = problem
            return result
    for record in todo:
        if deadline is not None and time.monotonic() > deadline:
            result.problem = "out of time"
            break
        if not _exists(repo, record.commit):
            clear(where, record.commit)  # rewritten away, or another clone's: nothing to do
            result.left -= 1
            continue
        try:
            annotate(repo, record.commit, conn)
        except sqlite3.Error as exc:
            result.problem = f"the index failed ({exc})"
            break
        clear(where, record.commit)
        result.done.append(record.commit)
        result.left -= 1
    return result


def _refresh(
    repo: pygit2.Repository, conn: sqlite3.Connection, deadline: float | None
) -> str | None:
    """Read new transcript bytes into the index; why not, or None when all were read."""
    from deja_blame.hooks.log import HookLog
    from deja_blame.hooks.refresh import refresh

    log = HookLog("late-notes", None)
    log_lines: list[str] = []
    log.warn = lambda message, details=None: log_lines.append(message)  # type: ignore[method-assign]
    if refresh(conn, log, repo, deadline) is None or log_lines:
        return log_lines[0] if log_lines else "the index is unreadable"
    return None


def _exists(repo: pygit2.Repository, sha: str) -> bool:
    try:
        return repo[sha].type_str == "commit"
    except (KeyError, ValueError):
        return False


def complete_for_command(
    repo: pygit2.Repository,
    conn: sqlite3.Connection,
    say: Callable[[str], None],
    budget: float = COMMAND_BUDGET,
) -> CompleteResult | None:
    """What any deja command run in a repository does first: complete its late notes
    within ``budget`` seconds. Fails open: nothing here stops the command."""
    from deja_blame.notes.store import deja_dir

    try:
        if not late_records(deja_dir(repo)):
            return None
        # a short wait on a busy index: the command itself is what was asked for
        (busy_ms,) = conn.execute("PRAGMA busy_timeout").fetchone()
        conn.execute("PRAGMA busy_timeout = 300")
        try:
            result = complete(repo, conn, time.monotonic() + budget)
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
    except Exception as exc:  # noqa: BLE001 - fail open: the command goes on
        say(
            f"could not complete late notes ({type(exc).__name__}: {exc}); run: deja annotate --pending"
        )
        return None
    if result.done:
        say(
            f"wrote {len(result.done)} late note{'s' if len(result.done) != 1 else ''}"
            f" ({', '.join(c[:12] for c in result.done[:3])}{' ...' if len(result.done) > 3 else ''})"
        )
    if result.left:
        say(f"{summary(result.left)} ({result.problem or 'not done'})")
    return result
