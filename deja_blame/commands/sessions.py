"""deja sessions: the indexed sessions, newest first."""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import click

from deja_blame.index.db import index_command, index_path, stand_in_for
from deja_blame.index.store import SessionSummary, list_sessions
from deja_blame.jsonout import print_json
from deja_blame.output import agent_word, shorten, style, terminal, use_colour, utc_minute
from deja_blame.session_ids import short


def run_sessions(
    conn: sqlite3.Connection,
    as_json: bool,
    project: str | None = None,
    limit: int | None = None,
    agent: str | None = None,
    waiting_hint: bool = True,
) -> int:
    """``waiting_hint=False``: no word of the transcripts waiting for ``deja index``
    (the demo's throwaway index: an index command for it could not be followed)."""
    if agent:
        from deja_blame.transcripts.registry import agent_named

        agent = agent_named(agent).id
    spellings = project_spellings(project) if project else [None]
    rows = []
    for spelling in spellings:
        rows = list_sessions(conn, project=spelling, limit=limit, agent=agent)
        if rows:
            break
    if project:
        rows = with_repository_sessions(conn, rows, spellings[0], limit, agent)
    from deja_blame.index.provenance import left_out_recorded, left_out_summary

    left_out = left_out_recorded(conn)
    waiting = not_yet_indexed(conn) if waiting_hint else 0
    # none indexed here (a reviewer's clone): the sessions this repository's notes name
    noted = noted_summaries() if not rows and not project and not agent else []
    missing = stand_in_for(conn)  # --db naming an index not made yet
    reads = index_command(index_path(conn))
    # no index, transcripts waiting, a list asked of one project or agent: its advice
    # once, as for the whole list (NEWCOMER14 #6: two lines that said nearly the same)
    once = bool(missing and waiting and not rows and (project or agent) and not as_json)
    if missing and not once and (as_json or rows or project or agent or (noted and not waiting)):
        click.echo(f"deja: no index at {terminal(missing)} yet (run: {terminal(reads)})", err=True)
    if as_json:
        print_json(
            {
                "sessions": [r.to_json() for r in rows],
                "left_out": [lo.to_json() for lo in left_out],
                "not_yet_indexed": waiting,
                "from_notes": noted,
            }
        )
        return 0
    if left_out:
        click.echo(f"deja: {terminal(left_out_summary(left_out))}", err=True)
    if once:
        _say_none_indexed(missing, reads, waiting, [])
    elif waiting and (rows or project or agent):
        from deja_blame.output import counted

        click.echo(
            f"deja: {counted(waiting, 'new or changed transcript')} not yet indexed (this"
            f" list shows the index as it is): {terminal(reads)} reads them",
            err=True,
        )
    if not rows and project:
        click.echo(f"no indexed session worked in {terminal(spellings[0] or project)}", err=True)
        click.echo("hint: deja sessions lists them all", err=True)
        return 0
    if not rows and agent:
        click.echo(f"no indexed session of {agent}", err=True)
        return 0
    if not rows and noted and not waiting:
        _print_noted(noted)  # no transcript here to index: a reviewer's clone
        return 0
    if not rows:
        _say_none_indexed(missing, reads, waiting, noted)
        return 0
    c = use_colour()
    # a wide terminal widens the project (up to half of what is left) and the first
    # prompt takes the rest; a pipe: 28 and 60 characters (COLUMNS says otherwise)
    project_w, prompt_w = 28, 60
    if sys.stdout.isatty() or os.environ.get("COLUMNS"):
        left = shutil.get_terminal_size().columns - FIXED_COLUMNS
        longest = max(len(r.project or "") for r in rows)
        project_w = max(28, min(longest, left // 2))
        prompt_w = max(20, left - project_w - 1)
    click.echo(
        style(
            f"{'SESSION':<10} {'AGENT':<11} {'STARTED':<21} {'EDITS':>5} {'CMDS':>4}"
            f"  {'PROJECT':<{project_w}} FIRST PROMPT",
            c,
            bold=True,
        )
    )
    for r in rows:
        started = terminal(utc_minute(r.started_at))
        click.echo(
            f"{terminal(short(r.session_id))[:8]:<10} {agent_word(r.source)[:11]:<11} {started:<21}"
            f" {r.n_edits:>5} {r.n_commands:>4}  "
            f"{shorten_path(r.project, project_w):<{project_w}} {shorten(r.first_prompt, prompt_w)}"
        )
    _say_future(rows)
    return 0


NOTED_IDS_SHOWN = 5


def _say_none_indexed(
    missing: str | None, reads: str, waiting: int, noted: list[dict[str, Any]]
) -> None:
    """One line of advice (the index, what reads into it), and the sessions the
    notes name by id, so that ``deja show ID`` can be typed from it."""
    from deja_blame.output import counted

    what = (
        f"the {counted(waiting, 'transcript')} waiting"
        if waiting
        else "your agents' transcripts (deja doctor says where it looks)"
    )
    state = f"no index at {terminal(missing)} yet" if missing else "no sessions indexed"
    click.echo(f"deja: {state}: {terminal(reads)} reads {what}", err=True)
    if noted:
        ids = ", ".join(terminal(d["session_id"]) for d in noted[:NOTED_IDS_SHOWN])
        more = f" and {len(noted) - NOTED_IDS_SHOWN} more" if len(noted) > NOTED_IDS_SHOWN else ""
        click.echo(
            f"deja: meanwhile this repository's notes name {counted(len(noted), 'session')}"
            f" (deja show ID): {ids}{more}",
            err=True,
        )


def noted_summaries() -> list[dict[str, Any]]:
    """The sessions the notes of the repository here name (``show.noted_sessions``),
    each as {session_id, agent, model, started_at, project, commits, lines,
    commits_on_head, lines_on_head}: ``commits``/``lines`` over every note naming
    it, the ``_on_head`` pair over the notes of HEAD's history alone (a branch's
    commits before its squash merge, another branch's, are not)."""
    from deja_blame.commands.show import noted_sessions

    docs = noted_sessions(Path.cwd())
    on_head = head_history({c["commit"] for d in docs for c in d["commits"]})
    out = []
    for doc in docs:
        commits = doc["commits"]
        here = [c for c in commits if c["commit"] in on_head]
        out.append(
            {
                "session_id": doc["session_id"],
                "agent": doc.get("agent"),
                "model": doc.get("model"),
                "started_at": doc.get("started_at"),
                "project": doc.get("project"),
                "commits": len(commits),
                "lines": sum(f["lines"] for c in commits for f in c["files"].values()),
                "commits_on_head": len(here),
                "lines_on_head": sum(f["lines"] for c in here for f in c["files"].values()),
            }
        )
    return out


def head_history(commits: set[str]) -> set[str]:
    """Which of ``commits`` HEAD's history holds (one ``git rev-list``)."""
    from deja_blame.gitutil import try_git

    if not commits:
        return set()
    proc = try_git(str(Path.cwd()), ["rev-list", "HEAD", "--"], timeout=60)
    if proc is None or proc.returncode != 0:
        return set()
    return commits & set(proc.stdout.decode("ascii", "replace").split())


def _print_noted(noted: list[dict[str, Any]]) -> None:
    from deja_blame.output import counted

    click.echo(
        f"deja: no sessions indexed here; {counted(len(noted), 'session')} known from this"
        " repository's notes (their transcripts are not on this machine): deja show ID",
        err=True,
    )
    c = use_colour()
    click.echo(
        style(
            f"{'SESSION':<10} {'AGENT':<11} {'STARTED':<21} {'LINES':>5} {'COMMITS':>7}",
            c,
            bold=True,
        )
        + "  FROM"
    )
    for d in noted:
        started = terminal(utc_minute(d["started_at"]) if d["started_at"] else "?")
        click.echo(
            f"{terminal(short(d['session_id']))[:8]:<10} {agent_word(d['agent'] or '?')[:11]:<11}"
            f" {started:<21} {d['lines_on_head']:>5} {d['commits_on_head']:>7}  notes"
        )
    elsewhere = sum(1 for d in noted if d["commits"] > d["commits_on_head"])
    if elsewhere:
        click.echo(
            f"deja: LINES and COMMITS count the notes of HEAD's history; {elsewhere} of these"
            f" session{'s' if elsewhere != 1 else ''} also {'have' if elsewhere != 1 else 'has'}"
            " notes on commits outside it (another branch's, or a branch's commits before"
            " its squash merge): deja show ID lists them all",
            err=True,
        )


def not_yet_indexed(conn: sqlite3.Connection) -> int:
    """How many transcripts are new or changed since the index read them (a stat each,
    as the refresh before an answer makes), those a repository carries left out on
    purpose aside: what ``deja index`` would read now."""
    from deja_blame.index.changes import changed_transcripts
    from deja_blame.index.provenance import split_trusted
    from deja_blame.transcripts.antigravity.discover import discover_roots

    try:
        return len(split_trusted(changed_transcripts(conn, discover_roots()))[0])
    except (OSError, sqlite3.Error):
        return 0  # a listing does not fail for a store it cannot look into


FUTURE_SKEW = 300.0  # seconds a session may start ahead of this machine's clock unremarked


def _say_future(rows: list[SessionSummary]) -> None:
    """A session that starts after this machine's clock gets no commit made before
    its time (blame, why): say so, or its lines' "not written by any session" puzzles."""
    import time

    from deja_blame.output import counted
    from deja_blame.transcripts.text import epoch_of

    now = time.time() + FUTURE_SKEW
    ahead = [r for r in rows if (epoch_of(r.started_at) or 0.0) > now]
    if ahead:
        click.echo(
            f"deja: {counted(len(ahead), 'session')} ({terminal(short(ahead[0].session_id))[:8]}"
            f"{', ...' if len(ahead) > 1 else ''}) started after this machine's clock (a clock"
            " set wrong, here or where it ran): no commit made before a session's time is"
            " given its lines",
            err=True,
        )


# SESSION, AGENT, STARTED, EDITS, CMDS and their spaces, before PROJECT
FIXED_COLUMNS = 10 + 1 + 11 + 1 + 21 + 1 + 5 + 1 + 4 + 2


def shorten_path(path: str | None, width: int) -> str:
    """A directory cut from its start, so its last names (the repository's) stay."""
    one = " ".join(terminal(path or "").split())
    return one if len(one) <= width else "…" + one[len(one) - width + 1 :]


def with_repository_sessions(
    conn: sqlite3.Connection,
    rows: list[SessionSummary],
    place: str | None,
    limit: int | None,
    agent: str | None,
) -> list[SessionSummary]:
    """``rows`` and the sessions that worked on the repository holding ``place``
    wherever they ran (another machine, a clone that moved: ``identity.py``),
    newest first."""
    from deja_blame.attribution.facts.repository import sessions_of_repository
    from deja_blame.gitutil import find_repo_root

    if not place or not os.path.isabs(place) or not Path(place).is_dir():
        return rows
    root = find_repo_root(Path(place))
    if root is None:
        return rows
    ids = sessions_of_repository(conn, root) - {r.session_id for r in rows}
    if not ids:
        return rows
    more = [s for s in list_sessions(conn, agent=agent) if s.session_id in ids]
    merged = sorted([*rows, *more], key=lambda s: (s.started_at or "", s.session_id), reverse=True)
    return merged[:limit] if limit else merged


def project_spellings(project: str) -> list[str]:
    """``--project`` as people type it (``.``, ``src``, ``~/shop/``) -> the absolute
    paths sessions record: as given from here, then with links resolved."""
    expanded = os.path.expanduser(project)
    if len(expanded) > 1:
        expanded = expanded.rstrip("/")
    if not os.path.isabs(expanded) and not Path(expanded).exists():
        return [expanded]  # not a path here: as recorded (another machine's, say)
    absolute = os.path.abspath(expanded)
    resolved = str(Path(absolute).resolve())
    return [absolute] if resolved == absolute else [absolute, resolved]
