"""deja index: read every transcript under the roots into the index, incrementally."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
from pathlib import Path

import click

from deja_blame.index.db import (
    NotAnIndexError,
    connect,
    corrupt,
    database_error,
    in_deja_own_place,
    is_foreign_database,
    rebuild_path,
    refuse_not_ours,
    remove_index,
    set_aside,
    swap_in,
)
from deja_blame.index.ingest import (
    IndexReport,
    forget_kept_first_seen,
    index_roots,
    keep_first_seen,
)
from deja_blame.jsonout import print_json
from deja_blame.output import terminal, warn
from deja_blame.transcripts.agent import Agent
from deja_blame.transcripts.files import Skipped
from deja_blame.transcripts.registry import AGENTS, agent_named, discover, discover_in
from deja_blame.transcripts.transcript_file import roots_named


def run_index(
    db_path: Path,
    roots: list[Path] | None,
    rebuild: bool,
    as_json: bool,
    quiet: bool = False,
    jobs: int | None = None,
    agents: list[str] | None = None,
) -> int:
    target = db_path
    if roots:
        roots = list(dict.fromkeys(roots))  # a folder named twice is read (and said) once
    # A root that is not there, named on the command line or by a variable
    # (DEJA_<AGENT>_ROOT), is a mistake: one line says which and where it came
    # from, the others are still read, and the exit status says something was wrong.
    named_missing = [root for root in roots or () if not root.exists()]
    if not roots:
        named_missing += [root for h in _chosen(agents) for root in _named_roots(h)]
        named_missing = [root for root in named_missing if not root.exists()]
    if rebuild:
        # Never destroy what is not ours; build beside the old index and swap it in
        # at the end, so a killed rebuild leaves the old index as it was. In deja's
        # own place anything unreadable is a damaged index: set aside, not refused.
        if in_deja_own_place(db_path) and db_path.is_file() and _unreadable(db_path):
            aside = set_aside(db_path)
            warn(f"{db_path} was no readable deja index: kept as {aside}; building a new one")
        refuse_not_ours(db_path)
        if db_path.exists() and is_foreign_database(db_path):
            raise NotAnIndexError(
                f"{db_path} is not a deja index (an SQLite database without a deja"
                " schema version); deja leaves it as it is",
                hint="name another file with --db or DEJA_DB",
            )
        db_path = rebuild_path(target)
        remove_index(db_path)  # what a killed rebuild left
    conn = connect(db_path, notice=None if quiet else warn)
    try:
        if rebuild and target.is_file():
            # when each record of a transcript with no times was first seen: the old
            # index's memory, not the transcripts' (transcripts/first_seen.py)
            keep_first_seen(target, conn)
        report = IndexReport()
        skipped = Skipped()  # links and special files below the roots: never followed
        if roots:
            # only these are read: the chosen agent's store, or (no --agent) each
            # agent's files found in them (registry.discover_in)
            files = discover_in(roots, agents, report.problems, skipped)
            if not files and not named_missing:
                report.problems.append(
                    "no transcripts found under "
                    + ", ".join(str(r) for r in roots)
                    + " (a root is the folder an agent's DEJA_<AGENT>_ROOT names:"
                    " see deja index --help)"
                )
        else:
            from deja_blame.index.below import roots_below

            below = roots_below(agents)  # a monorepo's subprojects' histories
            files = discover(agents, problems=report.problems, skipped=skipped, below=below)
            if not files and not _any_root(agents) and not named_missing:
                report.problems.append(
                    "no transcripts found (looked in "
                    + ", ".join(_where(h) for h in _chosen(agents))
                    + "); set "
                    + ", ".join(h.root_env for h in _chosen(agents))
                    + " to where yours are"
                )
        problems = list(report.problems)
        try:
            if sys.stderr.isatty() and not as_json and not quiet and files:
                with click.progressbar(
                    length=len(files), label="indexing transcripts", file=sys.stderr
                ) as bar:
                    report = index_roots(
                        conn,
                        [],
                        progress=lambda _tf: bar.update(1),
                        transcripts=files,
                        jobs=jobs,
                        compact=True,
                    )
            else:
                report = index_roots(conn, [], transcripts=files, jobs=jobs, compact=True)
        except sqlite3.OperationalError as exc:
            # locked, disk full, read-only: the index is fine, say what stopped the run
            raise database_error(db_path, exc) from exc
        except sqlite3.DatabaseError as exc:
            # "database disk image is malformed" met past the header: a damaged index
            raise corrupt(db_path, exc) from exc
        if rebuild:
            forget_kept_first_seen(conn)
        if not roots and not agents:
            from deja_blame.index.prescan import forget_memos

            # every agent's transcripts read: the refreshes' memos of unread ones are
            # spent (they held a mark per transcript, in up to 64 rows)
            forget_memos(conn)
        report.problems = problems + report.problems
        report.skipped_entries = skipped.to_json()
    except BaseException:
        if rebuild:
            # interrupted (Ctrl-C) or failed: the old index stays, the half-built one goes
            conn.close()
            remove_index(db_path)
        raise
    finally:
        if rebuild:
            with contextlib.suppress(sqlite3.ProgrammingError):  # closed above
                _close_for_swap(conn)
        else:
            conn.close()
    if rebuild:
        swap_in(db_path, target)
    said = report.problems + report.incomplete + skipped.lines()
    missing = [p for p in said if p.startswith(ROOT_NOT_FOUND)]
    for problem in missing:
        # bad input, said as every other: "deja: error: ..." and a hint
        click.echo(f"deja: error: {terminal(problem)}", err=True)
    if missing:
        click.echo(f"hint: {MISSING_ROOT_HINT}", err=True)
    for problem in said:
        if not problem.startswith(ROOT_NOT_FOUND):
            warn(problem)
    if as_json:
        print_json(report.to_json())
    elif not quiet and not (roots and len(named_missing) == len(roots)):
        # (a --root naming only folders that are not there read nothing: no summary)
        click.echo(report.summary(), err=True)
    return 1 if named_missing else 0


ROOT_NOT_FOUND = "transcript root not found: "
MISSING_ROOT_HINT = (
    "name the folder an agent keeps its transcripts in (deja doctor lists each agent's;"
    " deja index --help says where they are)"
)


def _unreadable(path: Path) -> bool:
    """Not an SQLite file, one without deja's schema (what ``connect`` refuses), or
    one whose schema cannot be read (damaged past its header)."""
    from urllib.parse import quote

    try:
        refuse_not_ours(path)
    except NotAnIndexError:
        return True
    if is_foreign_database(path):
        return True
    try:
        conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
        try:
            conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return True
    return False


def _chosen(agents: list[str] | None) -> list[Agent]:
    return [agent_named(a) for a in agents] if agents else list(AGENTS)


def _named_roots(h: Agent) -> list[Path]:
    return roots_named(os.environ, h.root_env) or []


def _where(h: Agent) -> str:
    """Where the agent's transcripts were looked for: the roots its variable names, else
    its own places."""
    named = _named_roots(h)
    return ", ".join(str(r) for r in named) if named else h.where


def _any_root(agents: list[str] | None) -> bool:
    return any(root.is_dir() for h in _chosen(agents) for root in h.roots())


def _close_for_swap(conn: sqlite3.Connection) -> None:
    """Fold the WAL into the file and leave WAL mode, so the file alone is the index."""
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode = DELETE")
    finally:
        conn.close()
