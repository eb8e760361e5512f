"""deja handoff --to AGENT: start an agent on an indexed session's context.

The prompt (``outputs.handoff_prompt``) goes to the agent's command line as its
plug-in says (``Agent.handoff``: ``agy -i <prompt>``, ``claude <prompt>``, ...),
as one argument of an argument vector: no shell ever sees transcript text. On
POSIX deja replaces itself with the agent (``os.execvp`` after ``chdir``), so
the terminal and the exit status belong to it.
"""

from __future__ import annotations

import os
import re
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import click

from deja_blame.errors import DejaError
from deja_blame.gitutil import find_repo_root
from deja_blame.index.db import index_command, index_path
from deja_blame.index.store import SessionSummary, list_sessions, load_session, resolve_session_id
from deja_blame.jsonout import print_json
from deja_blame.outputs.handoff_prompt import DEFAULT_LIMIT, build_prompt, project_dir
from deja_blame.transcripts.registry import handoff_targets


def _places(cwd: Path, repo_root: Path | None) -> list[str]:
    """The project paths that count as "here": the cwd as given and resolved, the repo root."""
    out: list[str] = []
    for p in (cwd, cwd.resolve(), repo_root, repo_root.resolve() if repo_root else None):
        if p is not None and str(p) not in out and str(p) != "/":
            out.append(str(p))
    return out


def sessions_here(
    conn: sqlite3.Connection, cwd: Path, repo_root: Path | None
) -> list[SessionSummary]:
    """Sessions whose project is the cwd or its repository, or under/above them, and
    those that worked on the repository wherever they ran (``identity.py``); newest first."""
    seen: dict[str, SessionSummary] = {}
    for place in _places(cwd, repo_root):
        for s in list_sessions(conn, project=place):
            seen.setdefault(s.session_id, s)
    if repo_root is not None:
        from deja_blame.attribution.facts.repository import sessions_of_repository

        ids = sessions_of_repository(conn, repo_root) - set(seen)
        if ids:
            for s in list_sessions(conn):
                if s.session_id in ids:
                    seen[s.session_id] = s
    return sorted(seen.values(), key=lambda s: (s.started_at or "", s.session_id), reverse=True)


def choose_session(
    conn: sqlite3.Connection,
    session: str | None,
    cwd: Path,
    repo_root: Path | None,
    again: str = "deja handoff --to agy",
) -> str:
    """``again``: the command as typed, for the hint (the same --to and flags)."""
    if session is not None:
        try:
            return resolve_session_id(conn, session)
        except DejaError as exc:
            if exc.hint is None or "ambiguous" in str(exc):
                raise
            here = sessions_here(conn, cwd, repo_root)[:5]
            if not here:
                raise
            # whole ids: a cut one (12 characters, inside a UUID) cannot be pasted back
            shown = ", ".join(f"{s.session_id} ({s.started_at or 'no time'})" for s in here)
            raise DejaError(str(exc), hint=f"recent sessions here: {shown}") from exc
    here = sessions_here(conn, cwd, repo_root)
    if not here:
        where = f"{cwd}" + (
            f" or its repository {repo_root}" if repo_root and repo_root != cwd else ""
        )
        raise DejaError(
            f"no indexed session has {where} as its project",
            hint=f"read new transcripts with: {index_command(index_path(conn))}; or name one: {again}"
            " --session ID (list: deja sessions)",
        )
    return here[0].session_id


def read_new_transcripts(conn: sqlite3.Connection, repo_root: Path | None) -> None:
    """The refresh blame and why make before answering: "the newest session here" is
    then the one that just ended, not the newest one ``deja index`` last read (newcomer
    18 #4: an agent was started on an older session's context). In a repository only
    the new transcripts that name it are read now, as for ``deja stats``."""
    from deja_blame.index.refresh import refresh_index

    if repo_root is None:
        refresh_index(conn)
        return
    from deja_blame.index.prescan import needles_for

    refresh_index(conn, concern=needles_for(repo_root))


def run_handoff(
    conn: sqlite3.Connection,
    target: str,
    session: str | None = None,
    print_only: bool = False,
    as_json: bool = False,
    max_chars: int = DEFAULT_LIMIT,
    cwd: Path | None = None,
    refresh: bool = True,
) -> int:
    targets = handoff_targets()
    chosen = targets.get(target.strip().lower())
    if chosen is None or chosen.handoff is None:
        names = sorted({min(a.names, key=len) for a in targets.values()})
        raise DejaError(f"unknown handoff target {target!r}", hint=f"use --to {', '.join(names)}")
    program, options = chosen.handoff.program, chosen.handoff.options
    here = cwd if cwd is not None else Path(os.getcwd())
    repo_root = find_repo_root(here)
    again = f"deja handoff --to {target}" + (" --print" if print_only else "")
    if refresh:
        read_new_transcripts(conn, repo_root)
    session_id = choose_session(conn, session, here, repo_root, again)
    loaded = load_session(conn, session_id)
    prompt = build_prompt(loaded, repo_root=repo_root, limit=max_chars)
    # where it ran, when that folder is here; else (another machine's, a clone that
    # moved) the repository's top, where the prompt's paths are named from
    workdir = project_dir(loaded.project) or repo_root or here
    argv = [program, *options, prompt]
    if as_json:
        print_json({"session_id": session_id, "target": program, "cwd": str(workdir), "argv": argv})
        return 0
    if print_only:
        click.echo(prompt, nl=False)
        return 0
    # the prompt of this very session: without --session the newest one would be printed
    # the whole id: a prefix cut inside it (99999999-aaa) reads as a typo, and may not be
    # unique; quoted, since a person pastes it into a shell and an id comes from a
    # transcript's file name
    print_instead = (
        f"deja handoff --to {shlex.quote(target)} --session {shlex.quote(session_id)} --print"
    )
    found = find_on_path(program)
    if found is None:
        raise DejaError(
            f"{program} is not on PATH: cannot start the handoff",
            hint=f"{chosen.handoff.install}, or print the prompt instead: {print_instead}",
        )
    executable = os.path.abspath(found)  # before chdir: a relative PATH entry would move
    if runs_through_a_shell(executable):
        raise DejaError(
            f"{program} is {os.path.basename(executable)}, a batch file: Windows runs it"
            " through cmd.exe, which would read the prompt as commands",
            hint=f"print the prompt and paste it instead: {print_instead}",
        )
    conn.close()
    return _start(executable, argv, workdir)


def find_on_path(
    program: str, env: dict[str, str] | None = None, windows: bool | None = None
) -> str | None:
    """``program`` in the absolute folders of PATH, and nowhere else. Not
    ``shutil.which``: on Windows it looks in the current folder first (a cloned
    repository's own ``claude.exe`` would run, as Python's docs warn), and an empty
    or relative PATH entry (``PATH=:/usr/bin``) is the current folder on any system."""
    env = dict(os.environ) if env is None else env
    windows = os.name == "nt" if windows is None else windows
    exts = [""]
    if windows:
        exts = [e for e in (env.get("PATHEXT") or ".COM;.EXE;.BAT;.CMD").lower().split(";") if e]
        if os.path.splitext(program)[1].lower() in exts:
            exts = ["", *exts]
    for entry in (env.get("PATH") or "").split(";" if windows else os.pathsep):
        entry = entry.strip().strip('"')
        if not entry or not _absolute(entry, windows):
            continue
        for ext in exts:
            candidate = os.path.join(entry, program + ext)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
    return None


def _absolute(entry: str, windows: bool) -> bool:
    """A folder named from a drive's root (``C:\\bin``) or a share (``\\\\host\\bin``) on
    Windows; from ``/`` elsewhere."""
    if windows:
        return re.match(r"^(?:[A-Za-z]:[\\/]|\\\\)", entry) is not None
    return os.path.isabs(entry)


def runs_through_a_shell(executable: str, windows: bool | None = None) -> bool:
    """Would starting ``executable`` pass its arguments through a shell? On Windows a
    ``.cmd`` or ``.bat`` (npm's shims for ``claude``, ``codex``, ``cn`` ...; VS Code's
    ``code.cmd``) is run by cmd.exe, which parses the prompt as a command line and
    no quoting makes that safe (the "BatBadBut" class of bugs)."""
    windows = os.name == "nt" if windows is None else windows
    return windows and executable.lower().endswith((".cmd", ".bat"))


def _start(executable: str, argv: list[str], workdir: Path) -> int:
    """Run ``argv`` in ``workdir``: on POSIX deja becomes the program; elsewhere it waits."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        if os.name == "posix":
            os.chdir(workdir)
            os.execvp(executable, argv)  # an absolute path: argv[0] stays "agy"
        return subprocess.run([executable, *argv[1:]], cwd=workdir, check=False).returncode
    except OSError as exc:
        raise DejaError(f"could not start {argv[0]}: {exc.strerror or exc}") from exc
