"""deja stats: how much of the tree (or of PATHs) agents wrote, by agent, model, session, person."""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import click

from deja_blame.arenas import few_arenas
from deja_blame.attribution.api import compute
from deja_blame.attribution.facts import shared
from deja_blame.attribution.model import FileBlame
from deja_blame.attribution.stats import Stats, collect_stats, tree_files
from deja_blame.errors import DejaError
from deja_blame.gitutil import SHALLOW_WARNING, open_repository, resolve_commit, workdir
from deja_blame.index import queries as Q
from deja_blame.index.db import connect
from deja_blame.index.refresh import refresh_index
from deja_blame.jsonout import print_json
from deja_blame.output import (
    CommitProgress,
    agent_word,
    counted,
    shorten,
    style,
    terminal,
    use_colour,
    warn,
)
from deja_blame.session_ids import short


def run_stats(
    conn: sqlite3.Connection,
    paths: tuple[Path, ...],
    rev: str | None,
    as_json: bool,
    refresh: bool = True,
) -> int:
    start = Path.cwd()
    repo = open_repository(start)
    root = workdir(repo)
    if repo.is_shallow:
        warn(SHALLOW_WARNING)
    specs = [_pathspec(root, p) for p in paths]
    # the commit's id, never the tree's: files are blamed at a commit
    commit = str(resolve_commit(repo, rev).id) if rev is not None else None
    files = files_of(root, commit, specs)
    if sys.stderr.isatty() and not as_json:
        with click.progressbar(length=len(files), label="blaming files", file=sys.stderr) as bar:
            stats = stats_of(conn, root, commit, files, refresh, lambda _p: bar.update(1))
    else:
        stats = stats_of(conn, root, commit, files, refresh)
    if stats.lines and not stats.attributed and not Q.count_sessions(conn):
        from deja_blame.commands.blame import say_none_indexed, unreadable_index

        # 0 % of an index with no session means "not known", not "none" (newcomer 18 #9)
        if not unreadable_index(conn):
            say_none_indexed(conn, root)
    if as_json:
        print_json(stats.to_json())
    else:
        _print(stats)
    return 0


def files_of(root: Path, commit: str | None, specs: list[str]) -> list[str]:
    """The tracked files of ``root`` under ``specs`` (all for none) at ``commit``."""
    files = tree_files(root, commit, specs)
    if not files:
        raise DejaError("no tracked files" + (f" under {', '.join(specs)}" if specs else ""))
    return files


def stats_of(
    conn: sqlite3.Connection,
    root: Path,
    commit: str | None,
    files: list[str],
    refresh: bool = True,
    progress: Callable[[str], None] | None = None,
) -> Stats:
    """deja stats' numbers for ``files`` (``files_of``) at ``commit`` (the working tree
    for None); ``progress(path)`` after each file."""
    few_arenas()  # before any thread: the blaming threads' memory in one pool
    unread: int | None = None
    if refresh:
        from deja_blame.index.prescan import needles_for

        # the sums are only as complete as the index: a transcript left unread is said
        # (on stderr and in the JSON), whatever reads the output
        unread = refresh_index(conn, concern=needles_for(Path(root)), say_left=True)
    db_path = Path(Q.database_path(conn))
    local = threading.local()

    opened: list[sqlite3.Connection] = []

    def blame(path: Path) -> FileBlame:
        # one connection per thread, used by its thread alone; closed here once the
        # threads are done, not left to their end: an sqlite3 connection is freed by
        # the garbage collector only (its statement cache refers to it), and one
        # still open when the command's own closes keeps the WAL beside the index
        # (a resident server's fork, which ends without collecting, left it there)
        mine = getattr(local, "conn", None)
        if mine is None:
            mine = local.conn = connect(db_path, upgrade=False, check_same_thread=False)
            opened.append(mine)
        return compute(mine, path, commit, None, refresh=False)

    jobs = max(1, min(MAX_JOBS, 2 * (os.cpu_count() or 1)))
    try:
        # every file's blame shares what holds for the whole tree (HEAD, the notes,
        # what sessions wrote to each file): asked once, not once a file
        with shared.one_question(root):
            stats = collect_stats(root, files, commit, blame, progress, jobs)
    finally:
        for conn_of_thread in opened:  # the threads have ended (collect_stats waits)
            conn_of_thread.close()
    stats.unread_transcripts = unread
    return stats


# threads blaming files at once: each mostly waits on git, so twice the cores,
# but no more than this (each holds a file's blame and a connection)
MAX_JOBS = 8


def _pathspec(root: Path, path: Path) -> str:
    absolute = path if path.is_absolute() else Path.cwd() / path
    # a tracked link is a file of its own (git's blob: its target's name), wherever
    # it points: its folder is resolved, not the link
    if absolute.is_symlink():
        absolute = absolute.parent.resolve() / absolute.name
    else:
        absolute = absolute.resolve()
    try:
        rel = absolute.relative_to(root.resolve())
    except ValueError as exc:
        raise DejaError(f"{path} is outside the repository {root}") from exc
    return str(rel) if str(rel) != "." else "."


def _pct(n: int, total: int) -> str:
    return f"{100 * n / total:5.1f}%" if total else "    -"


def _print(s: Stats) -> None:
    c = use_colour()
    where = f"at {s.rev[:12]}" if s.rev else "in the working tree"
    click.echo(
        style(f"{s.attributed:,} of {s.lines:,} lines ({_pct(s.attributed, s.lines).strip()})"
              f" in {counted(s.files, 'file')} {where} were written by agent sessions", c, bold=True)
    )  # fmt: skip
    sections = [
        ("agent", [(agent_word(a), n) for a, n in s.by_agent.most_common()]),
        ("model", s.by_model.most_common()),
        ("session", [(f"{short(k)} {agent_word(s.session_agent.get(k)) if k in s.session_agent else ''}", n) for k, n in s.by_session.most_common(10)]),
        ("person", s.by_person.most_common(10)),
    ]  # fmt: skip
    # the lists cut at 10 say what the rest hold, so that the columns add up
    rest = {"session": (s.by_session, "sessions"), "person": (s.by_person, "people")}
    for title, rows in sections:
        if not rows:
            continue
        click.echo("")
        click.echo(style(f"by {title}", c, bold=True))
        for name, n in rows:
            click.echo(f"  {shorten(terminal(str(name)), 40):<40} {n:>8,} {_pct(n, s.lines)}")
        whole, many = rest.get(title, (None, ""))
        if whole is not None and len(whole) > len(rows):
            more = counted(len(whole) - len(rows), "more " + title, "more " + many)
            left = sum(whole.values()) - sum(count for _, count in rows)
            click.echo(f"  {more:<40} {left:>8,} {_pct(left, s.lines)}")
    if s.skipped:
        click.echo("")
        click.echo(f"skipped {len(s.skipped)} file(s): " + ", ".join(
            f"{terminal(p)} ({r})" for p, r in s.skipped[:5]) + (" ..." if len(s.skipped) > 5 else ""),
            err=True)  # fmt: skip


def run_history(
    conn: sqlite3.Connection,
    spec: str | None,
    by: str,
    as_json: bool,
    refresh: bool = True,
    html_out: Path | None = None,
) -> int:
    from deja_blame.report.collect import build_report
    from deja_blame.report.history import share_history

    repo = open_repository(Path.cwd())
    if refresh:
        refresh_index(conn)
    progress = CommitProgress("reading commits") if not as_json else None
    try:
        report = build_report(
            repo,
            spec,
            conn,
            include_prompts=False,
            whole_history=True,
            progress=progress,
            at_tip=False,
        )
    finally:
        if progress is not None:
            progress.close()
    periods = share_history(report, by)
    if html_out is not None:
        from deja_blame.commands.report import _write
        from deja_blame.report.render_history_html import render_history_html

        _write(render_history_html(periods, by, report.spec, report.tip), html_out)
        if not as_json:
            click.echo(f"deja: wrote {terminal(str(html_out))}", err=True)
    if as_json:
        print_json(
            {
                "range": report.spec,
                "tip": report.tip,
                "by": by,
                "periods": [p.to_json() for p in periods],
            }
        )
        return 0
    if not periods:
        click.echo(f"no commits in {report.spec}", err=True)
        return 0
    c = use_colour()
    click.echo(
        style(f"{by.upper():<10} {'COMMITS':>7} {'ADDED':>8} {'AGENTS':>8} {'SHARE':>6}  BY AGENT", c,
              bold=True)
    )  # fmt: skip
    for p in periods:
        agents = ", ".join(
            f"{agent_word(a)} {n}" for a, n in sorted(p.by_agent.items(), key=lambda x: -x[1])
        )
        click.echo(
            f"{p.key:<10} {p.commits:>7} {p.added:>8,} {p.by_agents:>8,}"
            f" {_pct(p.by_agents, p.added)}  {terminal(agents)}"
        )
    return 0
