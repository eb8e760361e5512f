"""What the installed hooks run: ``python -m deja_blame.hooks.run post-commit|post-rewrite``.

Never raises and always exits 0: a problem (no index, a locked or damaged
index, an error in deja, the time budget spent) becomes one warning line on
stderr and in ``.git/deja/hook.log``, and the commit stands. The shell hook
runs this in the background and enforces the hard time budget by killing it;
this process also watches the budget itself, to stop cleanly and say why.

post-commit annotates HEAD (not after an amend or a rebase pick: post-rewrite
does those, carrying the old notes). post-rewrite reads ``<old> <new>`` pairs
on stdin and gives each new commit its note.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
import traceback
from pathlib import Path
from types import FrameType

import pygit2

from deja_blame.errors import DejaError, IndexCorruptError
from deja_blame.gitutil import no_git_env, open_repository
from deja_blame.hooks import late
from deja_blame.hooks.log import HookLog
from deja_blame.hooks.refresh import refresh
from deja_blame.notes.store import deja_dir

DEFAULT_TIMEOUT = 2.0  # seconds, in the foreground (git waits)
BACKGROUND_TIMEOUT = 30.0  # in the background (git does not wait; bounds a stuck deja)
HOOK_TYPES = ("post-commit", "post-rewrite")
INDEX_BUSY_MS = 400  # in the foreground, where git waits
# In the background a busy index (another deja writing) is waited for, up to this
# share of the budget: giving up after 400 ms left commits without notes.
BACKGROUND_BUSY_SHARE = 0.4


class HookTimeout(Exception):
    pass


def _config(repo: pygit2.Repository, key: str) -> str | None:
    try:
        return str(repo.config[key])
    except (KeyError, pygit2.GitError, ValueError):
        return None


def hook_timeout(repo: pygit2.Repository | None) -> float:
    """The time budget in seconds: DEJA_HOOK_TIMEOUT (set by the shell hook) or deja.hook.timeout."""
    raw = os.environ.get("DEJA_HOOK_TIMEOUT") or (
        _config(repo, "deja.hook.timeout") if repo is not None else None
    )
    # a background job holds nothing up: its budget only bounds a stuck deja
    default = BACKGROUND_TIMEOUT if os.environ.get("DEJA_HOOK_CHILD") == "1" else DEFAULT_TIMEOUT
    try:
        value = float(raw) if raw else default
    except ValueError:
        value = default
    return value if value > 0 else default


def background_wanted(repo: pygit2.Repository | None) -> bool:
    if os.environ.get("DEJA_HOOK_SYNC") == "1" or os.environ.get("DEJA_HOOK_CHILD") == "1":
        return False
    raw = (_config(repo, "deja.hook.background") if repo is not None else None) or "true"
    return raw.strip().lower() not in ("false", "no", "off", "0")


def open_index(log: HookLog) -> sqlite3.Connection | None:
    """The index, or None with a warning when it is damaged or unusable.

    A missing index is created here: the first commit after ``deja hooks
    install`` gets its note with no ``deja index`` run by hand. A background
    job (git does not wait for it) also upgrades an index of an older schema;
    the foreground leaves that to the next deja command.
    """
    from deja_blame.index.db import connect, default_db_path

    path = default_db_path()
    # the shell hook says whether git waits for this job
    in_background = os.environ.get("DEJA_HOOK_BACKGROUND") == "true"
    try:
        conn = connect(path, create=True, upgrade=in_background)
    except IndexCorruptError as exc:
        log.warn(f"{exc}; only carried notes are used (run: deja index --rebuild)")
        return None
    except DejaError as exc:
        hint = f" ({exc.hint})" if exc.hint else ""
        log.warn(f"{exc}; only carried notes are used{hint}")
        return None
    except sqlite3.Error as exc:
        log.warn(f"cannot open the index {path} ({exc}); only carried notes are used")
        return None
    busy_ms = INDEX_BUSY_MS
    if in_background:
        busy_ms = max(INDEX_BUSY_MS, int(hook_timeout(None) * BACKGROUND_BUSY_SHARE * 1000))
    conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
    return conn


# Of the hook's budget, the share that reading transcripts may take: the rest is
# for computing and writing the note.
REFRESH_SHARE = 0.6


def last_head_move(repo: pygit2.Repository, sha: str | None = None) -> str:
    """The message of HEAD's reflog entry that made ``sha`` (default: the newest entry),
    as in "commit (amend): ...", "rebase (pick): ..."."""
    try:
        for entry in repo.lookup_reference("HEAD").log():
            if sha is None or str(entry.oid_new) == sha:
                return str(entry.message or "")
    except (KeyError, pygit2.GitError, ValueError, AttributeError):
        pass
    return ""


class Progress:
    """What a hook run has done, for the message when its budget runs out."""

    def __init__(self) -> None:
        self.commits: list[str] = []  # the commits this run is for
        self.own_done = False  # their notes are written; the rest of the time is for late ones


def _commit_id(repo: pygit2.Repository, rev: str) -> str | None:
    try:
        return str(repo.revparse_single(rev).peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError):
        return None


def _owned_until(repo: pygit2.Repository) -> float:
    """The epoch second until which this job owns its late-note records (the shell's
    job marker uses the same deadline)."""
    return time.time() + hook_timeout(repo) + 5


LATE_HINT = "the next deja command or commit completes it (or now: deja annotate --pending)"


def _late_words(shas: list[str]) -> str:
    return f"the note of {shas[0][:12]} is" if len(shas) == 1 else f"{len(shas)} notes are"


def _note_is_late(
    repo: pygit2.Repository, log: HookLog, shas: list[str], why: str, say: bool = True
) -> None:
    """Record the notes of ``shas`` as late; ``say``: in a line of its own (else the
    warning that made them late said so already, through ``late_suffix``)."""
    where = deja_dir(repo)
    for sha in shas:
        late.mark(where, sha, log.hook, why)
    if say:
        log.late_suffix = ""
        log.warn(f"{_late_words(shas)} late ({why}); {LATE_HINT}")


def _late_on_failure(repo: pygit2.Repository, log: HookLog, progress: Progress) -> None:
    """deja failed before this run's notes were written: they are late, and the
    failure's warning says so."""
    if progress.commits and not progress.own_done:
        _note_is_late(repo, log, progress.commits, "deja failed", say=False)
        log.late_suffix = f"; {_late_words(progress.commits)} late: {LATE_HINT}"
    else:
        log.late_suffix = ""


def _complete_late(
    repo: pygit2.Repository,
    conn: sqlite3.Connection | None,
    log: HookLog,
    progress: Progress,
    stop: float | None,
) -> None:
    """The next commit's hook completes the notes earlier hooks left late."""
    progress.own_done = True
    if conn is None:
        return
    result = late.complete(repo, conn, stop, refresh_first=False, skip=frozenset(progress.commits))
    if result.done:
        log.warn(f"wrote {len(result.done)} late note(s): {', '.join(c[:12] for c in result.done)}")
    _history_pass(repo, conn, stop)


# Of a background hook's budget, at most this for the history's notes: `deja notes
# push` right after a commit waits for the hook's job. The next commit goes on.
HISTORY_SECONDS = 10.0


def _history_pass(repo: pygit2.Repository, conn: sqlite3.Connection, stop: float | None) -> None:
    """The history's missing and stale notes (``deja annotate --all``), in a background
    hook only (git does not wait for it), until ``stop`` and for at most
    ``HISTORY_SECONDS``: a first install annotates the history over the first commits,
    and a transcript that arrives later re-derives the notes it concerns. Nothing to
    do (no pass since the index's writes changed) costs one query."""
    if os.environ.get("DEJA_HOOK_BACKGROUND") != "true":
        return
    from deja_blame.notes.annotate_all import annotate_history, history_lock, needs_pass

    if not needs_pass(repo, conn):
        return
    end = time.monotonic() + HISTORY_SECONDS
    if stop is not None:
        end = min(end, stop)
    with history_lock(repo, wait=False) as mine:
        if not mine:
            return  # a deja annotate --all is at work here
        annotate_history(repo, conn, deadline=end)  # what it wrote: deja annotate --all


def post_commit(
    repo: pygit2.Repository,
    log: HookLog,
    rev: str | None = None,
    deadline: float | None = None,
    progress: Progress | None = None,
    stop: float | None = None,
) -> None:
    """Annotate the commit the hook ran for: ``rev``, which the shell hook names before
    going to the background (by then a quick next commit may have moved HEAD), or HEAD.

    Its note is recorded as not done (``hooks/late.py``) until it is complete: a
    busy or unreadable index, or the budget running out, leaves a late note that
    the next deja command or commit completes. Then, until ``stop``, this run
    completes the late notes of earlier commits."""
    from deja_blame.notes.annotate import annotate

    progress = progress if progress is not None else Progress()
    sha = _commit_id(repo, rev or "HEAD")
    if last_head_move(repo, rev).startswith(("commit (amend)", "rebase")):
        if sha is not None:
            late.clear(deja_dir(repo), sha)  # the shell's record: post-rewrite owns it
        return  # post-rewrite gives the new commit its note, from the old one
    if sha is not None:
        progress.commits.append(sha)
        late.mark(deja_dir(repo), sha, log.hook, "being written", _owned_until(repo))
    before = len(log.warnings)
    if sha is not None:
        log.late_suffix = f"; {_late_words([sha])} late: {LATE_HINT}"
    conn = open_index(log)
    if conn is not None:
        conn = refresh(conn, log, repo, deadline)
    written = None
    try:
        written = annotate(repo, rev or "HEAD", conn)
    except sqlite3.DatabaseError as exc:
        log.warn(f"the index failed while reading ({exc}); trying with carried notes only")
        conn = None
        annotate(repo, rev or "HEAD", None)
    log.late_suffix = ""
    if sha is None:
        return
    if conn is None or len(log.warnings) > before:
        # written from what the index held: a session's new lines may be missing
        _note_is_late(repo, log, [sha], "the index could not be read in full", say=False)
        return
    late.clear(deja_dir(repo), sha)
    if written is not None and written.note.is_empty():
        from deja_blame.notes.annotate_all import record_looked_at

        try:
            record_looked_at(repo, conn, sha)  # blame reads its lines as people's, unasked
        except (DejaError, sqlite3.Error):
            pass  # costs the matcher a look at its lines, nothing else
    _complete_late(repo, conn, log, progress, stop)


def post_rewrite(
    repo: pygit2.Repository,
    log: HookLog,
    text: str,
    deadline: float,
    progress: Progress | None = None,
) -> None:
    from deja_blame.notes.annotate import parse_rewrite_pairs, rewrite_notes

    progress = progress if progress is not None else Progress()
    pairs = parse_rewrite_pairs(text)
    if not pairs:
        return
    where = deja_dir(repo)
    news = list(dict.fromkeys(new for old, new in pairs if old != new))
    owned = _owned_until(repo)
    for sha in news:
        progress.commits.append(sha)
        late.mark(where, sha, log.hook, "being written", owned)
    before = len(log.warnings)
    log.late_suffix = f"; {_late_words(news)} late: {LATE_HINT}" if news else ""
    conn = open_index(log)
    if conn is not None:
        conn = refresh(conn, log, repo, time.monotonic() + (deadline - time.monotonic()) / 2)
    result = rewrite_notes(repo, pairs, conn, deadline=deadline)
    unfinished = list(result.unfinished)
    if result.unfinished:
        first, last = result.unfinished[0], result.unfinished[-1]
        log.late_suffix = f"; {LATE_HINT.replace('completes it', 'completes them')}"
        log.warn(
            f"out of time: {len(result.unfinished)} rewritten commits keep only their carried"
            f" notes; run: deja annotate {first[:12]}^..{last[:12]}"
        )
    log.late_suffix = ""
    if conn is None or len(log.warnings) > before:
        unfinished = news
    if unfinished:
        _note_is_late(repo, log, unfinished, "not re-derived from the index", say=False)
    for sha in news:
        if sha not in unfinished:
            late.clear(where, sha)
    progress.own_done = True


def _spawn_background(hook: str, args: list[str], text: str) -> None:
    """Hand the work to a detached copy of this runner (stdio closed) and return."""
    import tempfile

    stdin = subprocess.DEVNULL
    tmp = None
    if text:
        tmp = tempfile.TemporaryFile()
        tmp.write(text.encode())
        tmp.seek(0)
        stdin = tmp  # type: ignore[assignment]
    subprocess.Popen(
        [sys.executable, "-m", "deja_blame.hooks.run", hook, *args],
        stdin=stdin,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "DEJA_HOOK_CHILD": "1"},
        start_new_session=True,
        close_fds=True,
    )
    if tmp is not None:
        tmp.close()


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    started = time.monotonic()
    hook = argv[0] if argv else "?"
    args = argv[1:]
    # git's variables for the commit in progress must not steer deja's own git runs
    keep = no_git_env()
    for key in list(os.environ):
        if key not in keep:
            del os.environ[key]
    log = HookLog(hook, None)
    try:
        repo = open_repository(Path.cwd())
    except DejaError as exc:
        log.warn(str(exc))
        return 0
    log = HookLog(hook, repo)
    if hook not in HOOK_TYPES:
        log.warn(f"unknown hook {hook!r} (deja handles {', '.join(HOOK_TYPES)})")
        return 0
    text = ""
    if hook == "post-rewrite":
        try:
            text = sys.stdin.read()
        except (OSError, ValueError):
            text = ""
    if background_wanted(repo):
        _spawn_background(hook, args, text)
        return 0
    budget = hook_timeout(repo)
    # Stop cleanly a little before the shell's hard kill, to say why.
    stop_at = max(0.2, budget - (time.monotonic() - started) - 0.15)

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        raise HookTimeout

    use_alarm = hasattr(signal, "setitimer")
    if use_alarm:
        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, stop_at)
    progress = Progress()
    try:
        if hook == "post-commit":
            post_commit(
                repo,
                log,
                args[0] if args else None,
                time.monotonic() + stop_at * REFRESH_SHARE,
                progress,
                stop=time.monotonic() + stop_at * 0.85,
            )
        else:
            post_rewrite(repo, log, text, time.monotonic() + stop_at * 0.6, progress)
    except HookTimeout:
        if progress.own_done:
            left = len(late.late_records(deja_dir(repo)))
            if left:
                log.warn(f"out of time for late notes: {late.summary(left)}")
        elif progress.commits:
            _note_is_late(
                repo,
                log,
                progress.commits,
                f"gave up after {budget:g}s, git config deja.hook.timeout",
            )
        else:
            log.warn(
                f"gave up after {budget:g}s (git config deja.hook.timeout): this commit may"
                " lack its note; run: deja annotate"
            )
    except DejaError as exc:
        _late_on_failure(repo, log, progress)
        log.warn(f"{exc}; the commit itself is fine")
    except Exception as exc:  # noqa: BLE001 - a hook must never fail the commit
        _late_on_failure(repo, log, progress)
        log.warn(
            f"unexpected error: {type(exc).__name__}: {exc}; the commit itself is fine",
            details=traceback.format_exc(),
        )
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
