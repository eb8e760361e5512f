"""The command line: parses arguments and calls ``deja_blame.commands``. Nothing else.

Known failures (DejaError) become one line on stderr and exit 1; usage errors
exit 2; Ctrl-C exits 130; anything unexpected is logged with its traceback and
reported in one line.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from deja_blame import __version__
from deja_blame.errors import DejaError

if TYPE_CHECKING:
    import sqlite3

# Only what parsing needs is imported here (``deja --help`` and every command
# pay for it): each command imports its library, the index and git when it runs.

F = TypeVar("F", bound=Callable[..., Any])


def db_option(f: F) -> F:
    return click.option(
        "--db",
        "db",
        # a directory, or a file this user may not read, gets deja's own error and hint
        type=click.Path(path_type=Path, readable=False),
        default=None,
        envvar="DEJA_DB",
        help="Index file (default $XDG_DATA_HOME/deja/index.db; env DEJA_DB).",
    )(f)


def json_option(f: F) -> F:
    return click.option(
        "--json", "as_json", is_flag=True, help="Print one JSON document on stdout."
    )(f)


def _db_path(db: Path | None) -> Path:
    from deja_blame.index.db import default_db_path

    return db if db is not None else default_db_path()


def with_index(
    f: Callable[..., int],
    creates: bool = True,
    says_missing: bool = False,
    answers_without: bool = False,
) -> Callable[..., int]:
    """Open the index for a command; the connection is closed afterwards.

    ``creates=False`` (commands that only read it): an index that is not there is
    not made (a mistyped --db leaves no directories behind); the command sees an
    empty one, in memory, and a line says so, unless ``says_missing``: the command
    says it in its own words (``db.stand_in_for``), with the rest of its advice.
    ``answers_without`` (blame, why, stats, report): an index this user may not
    read is said, with its fix, and the command answers from the notes and git
    alone, reading no transcript (newcomer 17 #4: every command stopped).
    """

    @functools.wraps(f)
    def wrapper(db: Path | None, **kwargs: Any) -> int:
        import sqlite3

        from deja_blame.index.db import (
            IndexUnreadableError,
            connect,
            database_error,
            empty_stand_in,
            index_command,
        )
        from deja_blame.output import terminal, warn

        path = _db_path(db)
        if not creates and not path.exists():
            if not says_missing:
                warn(f"no index at {path} yet (run: {index_command(path)})")
            conn = empty_stand_in(path)
        else:
            try:
                conn = connect(path, notice=warn)
            except IndexUnreadableError as exc:
                if not answers_without:
                    raise
                warn(
                    f"{exc}; answering from the notes and git alone (a line no note"
                    " covers shows as its commit's author's)"
                )
                click.echo(f"hint: {terminal(exc.hint or '')}", err=True)
                conn = empty_stand_in(path)
                if "no_refresh" in kwargs:
                    kwargs["no_refresh"] = True  # what refreshes writes to the index
        try:
            if creates and not kwargs.get("pending"):
                _complete_late_notes(conn)
            return f(conn, **kwargs)
        except sqlite3.DatabaseError as exc:
            raise database_error(path, exc) from exc
        finally:
            conn.close()

    return wrapper


def _complete_late_notes(conn: sqlite3.Connection) -> None:
    """Any command run in a repository first completes the notes its hooks left late
    (``hooks/late.py``; a few seconds at most, failing open)."""
    from deja_blame.hooks.late import any_records_near

    root = any_records_near(Path.cwd())
    if root is None:
        return  # the common case, found without opening the repository
    from deja_blame.hooks.late import complete_for_command
    from deja_blame.output import warn

    try:
        from deja_blame.gitutil import open_repository

        repo = open_repository(root)
    except DejaError:
        return
    complete_for_command(repo, conn, warn)


def reading_index(f: Callable[..., int]) -> Callable[..., int]:
    """``with_index`` for commands that only read the index: they create none."""
    return with_index(f, creates=False)


class _Deja(click.Group):
    """``--no-pager`` and ``--color`` are taken after the command too (``deja blame F
    --no-pager``, as people type them with git's own commands): moved before it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        front: list[str] = []
        rest: list[str] = []
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                rest += args[i:]
                break
            if arg == "--no-pager" or arg.startswith("--color="):
                front.append(arg)
            elif arg == "--color" and i + 1 < len(args) and rest:
                front += [arg, args[i + 1]]
                i += 1
            else:
                rest.append(arg)
            i += 1
        return super().parse_args(ctx, front + rest)


@click.group(
    cls=_Deja, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}
)
@click.version_option(__version__, prog_name="deja")
@click.option(
    "-C",
    "chdir",
    metavar="DIR",
    type=click.Path(path_type=Path, exists=True, file_okay=False),
    help="Run as if deja was started in DIR (like git -C).",
)
@click.option(
    "--db",
    "global_db",
    type=click.Path(path_type=Path),
    default=None,
    help="Index file for any command (like each command's --db; env DEJA_DB).",
)
@click.option(
    "--color",
    "color",
    type=click.Choice(["auto", "always", "never"]),
    default=None,
    help="Colour: on a terminal (auto, the default; NO_COLOR turns it off), always, never.",
)
@click.option(
    "--no-pager",
    is_flag=True,
    help="Do not page long output (the pager: DEJA_PAGER, git's core.pager, PAGER, less).",
)
def cli(chdir: Path | None, global_db: Path | None, color: str | None, no_pager: bool) -> None:
    """Which AI agent session wrote this line, and why?

    deja reads the transcripts of Antigravity / agy, Claude Code, Codex CLI,
    Gemini CLI, Cursor, GitHub Copilot (VS Code), GitHub Copilot CLI, Windsurf,
    OpenCode, Amp, Droid, Continue, Aider, pi, Cline, Roo Code, Kilo Code and
    SpecStory's histories after the fact, indexes them, and matches each line of
    your repository to the session that wrote it.

    \b
    Start here:
      deja index                 # read every agent's transcripts where it keeps them
      deja sessions              # what was indexed
      deja show 3f2a             # one session (an id prefix is enough)
      deja blame src/app.py      # git blame, with the session that wrote each line
      deja why src/app.py:42     # the prompt, edit and history behind one line
      deja stats                 # how much of this repository agents wrote
      deja demo                  # try it all on the bundled fixtures
    """
    from deja_blame.output import COLOR_ENV, NO_PAGER_ENV

    if color is not None:
        os.environ[COLOR_ENV] = color
        # click.echo strips styles off a pipe unless its context says otherwise
        click.get_current_context().color = {"always": True, "never": False}.get(color)
    if no_pager:
        os.environ[NO_PAGER_ENV] = "1"
    if global_db is not None:
        from deja_blame.index.db import note_default_db

        note_default_db()  # hints name this --db where it is not the index found by itself
        # before the command's own --db reads DEJA_DB: its --db, if given, still wins
        os.environ["DEJA_DB"] = str(global_db.absolute())
    if chdir is not None:
        os.chdir(chdir)


class _AgentChoice(click.Choice):
    """The registered agents' names, looked up when a value or --help needs them:
    the registry imports every agent's discovery code. ``handoff``: only the agents
    with a command line to start."""

    def __init__(self, handoff: bool = False) -> None:
        self.handoff = handoff
        super().__init__((), case_sensitive=False)

    @property  # type: ignore[override]
    def choices(self) -> Sequence[str]:
        from deja_blame.transcripts.registry import ALL_NAMES, handoff_targets

        return sorted(handoff_targets()) if self.handoff else ALL_NAMES

    @choices.setter
    def choices(self, value: Sequence[str]) -> None:
        pass  # click.Choice.__init__ sets it; the registry is the one source

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from deja_blame.transcripts.registry import ALL_NAMES, agent_named, handoff_targets

        name = str(value).strip().lower()
        if self.handoff and name in ALL_NAMES and name not in handoff_targets():
            # an agent deja reads that has no command line (an editor extension): say so
            self.fail(
                f"{agent_named(name).display_name} has no command line to start a session"
                f" with; hand over to one of: {', '.join(self.main_names())}"
                " (--print prints the prompt, to paste into any agent)",
                param,
                ctx,
            )
        if name not in self.choices:
            self.fail(self.unknown(str(value)), param, ctx)
        return super().convert(value, param, ctx)

    def main_names(self) -> list[str]:
        """One name an agent: --to's by the word blame shows (agy, claude), --agent's by
        the id (antigravity, claude-code); the aliases (roo-cline, kilocode) left out."""
        from deja_blame.transcripts.registry import AGENTS, handoff_targets

        if self.handoff:
            targets = set(handoff_targets().values())
            return [self.main_name(a) for a in AGENTS if a in targets]
        return [self.main_name(a) for a in AGENTS]

    def main_name(self, agent: Any) -> str:
        return str(agent.label if self.handoff else agent.id)

    def unknown(self, value: str) -> str:
        """A mistyped name: the few names like it (as click says of a mistyped command),
        then the agents' main names, not every alias. A name like an alias is suggested
        by its agent's main name, as the list says it (``codx``: ``codex``, not
        ``codex-cli``, an alias the list does not show)."""
        import difflib

        from deja_blame.outputs.escape import terminal
        from deja_blame.transcripts.registry import agent_named

        like = difflib.get_close_matches(value.strip().lower(), self.choices, n=3)
        close = [repr(n) for n in dict.fromkeys(self.main_name(agent_named(n)) for n in like)]
        either = ", ".join(close[:-1]) + " or " + close[-1] if len(close) > 1 else "".join(close)
        guess = f" Did you mean {either}?" if close else ""
        return (
            f"{terminal(value)!r} is no agent deja knows.{guess} One of:"
            f" {', '.join(self.main_names())}"
        )


def _agent_choice() -> click.Choice:
    return _AgentChoice()


def _handoff_choice() -> click.Choice:
    return _AgentChoice(handoff=True)


@cli.command("parse")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--agent",
    type=_agent_choice(),
    default=None,
    help="The agent that wrote the transcript (default: told from its name and first lines).",
)
@json_option
def parse_cmd(path: Path, agent: str | None, as_json: bool) -> None:
    """Parse one transcript file (no index) and print the session.

    Reads a transcript of any agent deja reads (the --agent choices below), told
    from the file's name and first records; --agent says which when it cannot be.

    \b
    Examples:
      deja parse ~/.gemini/antigravity/brain/3f2a*/.system_generated/logs/transcript.jsonl --json
      deja parse ~/.claude/projects/*shop/0b7c*.jsonl
      deja parse ~/.codex/sessions/2026/12/01/rollout-*.jsonl --json
    """
    from deja_blame.commands.parse import run_parse

    sys.exit(run_parse(path, as_json, agent))


@cli.command("index")
@db_option
@click.option(
    "--root",
    "roots",
    multiple=True,
    type=click.Path(path_type=Path),
    help="A folder to read instead of the agents' own places (repeatable; only these"
    " are read): with one --agent, that agent's store (the folder its DEJA_<AGENT>_ROOT"
    " names); without, every agent's transcripts in it, each told by its file names and"
    " first records. A root that is not there: one line, exit 1.",
)
@click.option(
    "--agent",
    "agents",
    multiple=True,
    type=_agent_choice(),
    help="Only this agent's transcripts (repeatable): antigravity, claude-code, codex,"
    " gemini-cli, cursor, copilot, copilot-cli, windsurf, opencode, amp, droid, continue, aider,"
    " pi, cline, roo-code, kilo-code, specstory.",
)
@click.option("--rebuild", is_flag=True, help="Delete the index and read everything again.")
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Processes reading transcripts while one writes the index. Default: 2 (1 on a"
    " one-core machine) when there are 32 MB or more to read, else 1 (all in this process).",
)
@click.option("-q", "--quiet", is_flag=True, help="No summary line.")
@json_option
def index_cmd(
    db: Path | None,
    roots: tuple[Path, ...],
    agents: tuple[str, ...],
    rebuild: bool,
    jobs: int | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Read new transcript lines into the index (only what changed since the last run).

    \b
    Where each agent keeps its transcripts (a variable replaces each):
      Antigravity  ~/.gemini/antigravity*/brain             DEJA_ANTIGRAVITY_ROOT
      Claude Code  ${CLAUDE_CONFIG_DIR:-~/.claude}/projects  DEJA_CLAUDE_ROOT
      Codex CLI    ${CODEX_HOME:-~/.codex}/sessions          DEJA_CODEX_ROOT
      Gemini CLI   ~/.gemini/tmp/*/chats                     DEJA_GEMINI_ROOT
      Cursor       ~/.cursor/projects/*/agent-transcripts    DEJA_CURSOR_ROOT
      Copilot      ~/.config/Code/User/workspaceStorage      DEJA_COPILOT_ROOT
      Copilot CLI  ~/.copilot/session-state                  DEJA_COPILOT_CLI_ROOT
      Windsurf     ~/.windsurf/transcripts                   DEJA_WINDSURF_ROOT
      OpenCode     ~/.local/share/opencode                   DEJA_OPENCODE_ROOT
      Amp          ~/.local/share/amp/threads                DEJA_AMP_ROOT
      Droid        ~/.factory/sessions                       DEJA_DROID_ROOT
      Continue     ~/.continue/sessions                      DEJA_CONTINUE_ROOT
      Aider        ./.aider.chat.history.md (this repo)      DEJA_AIDER_ROOT
      pi           ${PI_CODING_AGENT_DIR:-~/.pi/agent}/sessions  DEJA_PI_ROOT
      Cline        <editor>/User/globalStorage/saoudrizwan.claude-dev/tasks,
                   ~/.cline/data/tasks                       DEJA_CLINE_ROOT
      Roo Code     <editor>/User/globalStorage/rooveterinaryinc.roo-cline/tasks
                                                             DEJA_ROO_CODE_ROOT
      Kilo Code    <editor>/User/globalStorage/kilocode.kilo-code/tasks
                                                             DEJA_KILO_CODE_ROOT
      SpecStory    ./.specstory/history (here, up to the repo's top)
                                                             DEJA_SPECSTORY_ROOT
      (<editor>: ~/.config/Code, or Code - Insiders, VSCodium, Cursor, Windsurf;
      ~/Library/Application Support on macOS, %APPDATA% on Windows; remote
      windows' ~/.vscode-server/data)

    Long tool output (files the agent viewed, command output) is not copied:
    the index keeps its start and end and reads the rest from the transcript
    when a session is shown.

    \b
    Examples:
      deja index
      DEJA_ANTIGRAVITY_ROOT=~/backup/antigravity deja index --json
      deja index --rebuild          # after "the index ... is unreadable"
      deja index --jobs 1           # read in this process only
      deja index --agent claude-code --agent codex
      deja index --agent amp --root ~/backup/amp      # one agent's store, elsewhere
      deja index --root ~/backup/claude-projects       # whose it is, told by the files
    """
    from deja_blame.commands.index import run_index

    sys.exit(
        run_index(
            _db_path(db),
            list(roots) or None,
            rebuild,
            as_json,
            quiet,
            jobs,
            agents=list(agents) or None,
        )
    )


@cli.command("sessions")
@db_option
@click.option("--project", help="Only sessions of this project directory (or under it).")
@click.option("--agent", type=_agent_choice(), default=None, help="Only this agent's sessions.")
@click.option(
    "-n", "--limit", type=click.IntRange(min=1), default=None, help="Show at most N sessions."
)
@json_option
@functools.partial(with_index, creates=False, says_missing=True)
def sessions_cmd(
    conn: sqlite3.Connection,
    project: str | None,
    agent: str | None,
    limit: int | None,
    as_json: bool,
) -> int:
    """List indexed sessions, newest first.

    In a clone with none indexed (a reviewer's, no transcripts here), the
    sessions the repository's notes name, marked "notes" (deja show ID). Their
    LINES: the lines the notes of HEAD's history give the session; COMMITS: how
    many of those commits name it. Notes of commits outside HEAD's history (a
    branch's commits before its squash merge, another branch's) are not counted
    there, and a line on stderr says which sessions have some (--json:
    lines/commits count every note, lines_on_head/commits_on_head HEAD's).

    \b
    Examples:
      deja sessions
      deja sessions --project ~/src/shop --json
      deja sessions --agent claude-code
    """
    from deja_blame.commands.sessions import run_sessions

    return run_sessions(conn, as_json, project=project, limit=limit, agent=agent)


@cli.command("forget")
@click.argument("session", required=False)
@click.option("--undo", is_flag=True, help="Stop forgetting SESSION: the next index run reads it.")
@db_option
@json_option
@reading_index
def forget_cmd(conn: sqlite3.Connection, session: str | None, undo: bool, as_json: bool) -> int:
    """Remove one session from the index, for good (no rebuild needed).

    SESSION is a session id or a unique prefix of one. Its transcript is left
    alone. The session is kept out of every index deja builds, deja index
    --rebuild too, whatever its transcript becomes, until deja forget --undo
    SESSION. With no SESSION: the sessions forgotten (kept, one a line, in
    ~/.config/deja/forgotten).

    Commit notes (refs/notes/deja) written while it was indexed still name it,
    and blame, why, stats and report read notes first: it says how many of this
    repository's do. deja has no command that takes a session out of a note
    (deja annotate merges with it): edit it with git notes --ref=deja edit COMMIT.

    \b
    Examples:
      deja forget 3f2a9c1e
      deja forget 3f2a9c1e --json
      deja forget
      deja forget --undo 3f2a9c1e && deja index
    """
    from deja_blame.commands.forget import run_forget

    return run_forget(conn, session, as_json, undo=undo)


@cli.command("trust")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--remove", is_flag=True, help="Stop trusting the PATHS.")
@click.option(
    "--list",
    "everything",
    is_flag=True,
    help="Show what is trusted and the histories read as yours before you committed them.",
)
@click.option(
    "--forget",
    is_flag=True,
    help="Stop reading the histories remembered at or under PATHS as yours once committed.",
)
@json_option
def trust_cmd(
    paths: tuple[Path, ...], remove: bool, everything: bool, forget: bool, as_json: bool
) -> int:
    """Read the sessions in PATHS (files or folders) as yours.

    deja leaves out a transcript a repository tracks (it came with a clone) or
    another user owns (deja doctor lists them). With no PATHS: what is trusted.

    An Aider or SpecStory history deja read while your work tree did not track
    it stays yours once you commit it: deja remembers the bytes it read there
    (--list shows them, --forget takes them back). The memory is by path: in a
    clone moved to another folder, trust the histories again.

    \b
    Examples:
      deja trust ~/src/app/.aider.chat.history.md
      deja trust --remove ~/src/app/.aider.chat.history.md
      deja trust --list
      deja trust --forget ~/src/app/.specstory
    """
    from deja_blame.commands.trust import run_trust

    if remove and forget:
        raise click.UsageError("--remove and --forget: choose one")
    # --list only shows: with PATHS it would trust them first (deja trust PATH
    # does), which a user asking what is remembered there never meant.
    if everything and (paths or remove or forget):
        raise click.UsageError(
            "--list takes no PATHS nor --remove/--forget: it only shows"
            " (deja trust PATH trusts, --forget PATH takes a history back)"
        )
    return run_trust(list(paths), remove, as_json, forget=forget, everything=everything)


@cli.command("show")
@click.argument("session")
@db_option
@click.option("--full", is_flag=True, help="Print the whole conversation too.")
@json_option
@reading_index
def show_cmd(conn: sqlite3.Connection, session: str, full: bool, as_json: bool) -> int:
    """Show one indexed session: requests, commands, edits.

    SESSION is a session id or a unique prefix of one.

    \b
    Examples:
      deja show 3f2a9c1e
      deja show 3f2a9c1e --json | jq '.edits[].path'
    """
    from deja_blame.commands.show import run_show

    return run_show(conn, session, as_json, full=full)


@cli.command("demo")
@click.option(
    "--root",
    type=click.Path(path_type=Path),
    default=None,
    help="Transcript root to use (default: the bundled fixtures/antigravity/demo).",
)
def demo_cmd(root: Path | None) -> int:
    """Index the bundled demo transcripts into a throwaway index, then list and show them.

    \b
    Example:
      deja demo
    """
    from deja_blame.commands.demo import DemoSteps, run_demo
    from deja_blame.commands.index import run_index
    from deja_blame.commands.sessions import run_sessions
    from deja_blame.commands.show import run_show
    from deja_blame.commands.why import run_why

    steps = DemoSteps(index=run_index, sessions=run_sessions, show=run_show, why=run_why)
    return run_demo(root, steps)


class _BlameCommand(click.Command):
    """git blame's ``-M[<num>]`` and ``-C[<num>]``: a number only when attached
    (``-C50``); ``-C file.py`` is -C and a file, as in git."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        out: list[str] = []
        for i, arg in enumerate(args):
            if arg == "--":
                out += args[i:]
                break
            m = _MOVE_COPY.match(arg)
            out.append(f"--git-{m.group(1)}={m.group(2)}" if m else arg)
        return super().parse_args(ctx, out)


_MOVE_COPY = re.compile(r"^-([MC])(\d*)$")


def _date_format(value: str | None) -> str | None:
    """--date checked as it is read: a bad one is bad usage (exit 2), even where the
    file has no person's line to show a date on."""
    from deja_blame.outputs.blame_text import DATE_FORMATS

    if value is None or value.startswith("format:") or value in DATE_FORMATS:
        return value
    raise click.BadParameter(
        f"unknown date format {value!r} (one of: {', '.join(DATE_FORMATS[:8])}, format:...)"
    )


def _two_files(args: tuple[str, ...]) -> bool:
    """``deja blame a.py b.py``: two files where git would read a revision and a
    file (asked of git only then: a file may share a branch's name)."""
    if not (os.path.isfile(args[0]) and os.path.lexists(args[1])):
        return False
    return _not_a_revision(args[0])


def _swapped(args: tuple[str, ...]) -> bool:
    """``deja blame calc.py v1.2``: a file here, then no file: the revision after the
    file (git would say "bad revision 'calc.py'")."""
    if not (os.path.isfile(args[0]) and not os.path.lexists(args[1])):
        return False
    return _not_a_revision(args[0])


def _not_a_revision(name: str) -> bool:
    from deja_blame.gitutil import try_git

    proc = try_git(Path.cwd(), ["rev-parse", "-q", "--verify", f"{name}^{{commit}}"])
    return proc is not None and proc.returncode != 0


@cli.command("blame", cls=_BlameCommand)
@click.argument("args", nargs=-1, required=True, metavar="[REV] [--] FILE")
@click.option(
    "-L",
    "line_ranges",
    metavar="START,END",
    multiple=True,
    help="Only these lines, in git's -L forms (START,END  START,+COUNT  START  :FUNCNAME"
    "  /REGEX/,+N); repeatable.",
)
@click.option("--rev", help="Blame FILE as of this revision (default: the working tree).")
@click.option("-w", "ignore_whitespace", is_flag=True, help="Ignore white space (git blame -w).")
@click.option(
    "--git-M", "moves", multiple=True, hidden=True, help="-M[<num>]: lines moved within the file."
)
@click.option(
    "--git-C", "copies", multiple=True, hidden=True, help="-C[<num>]: lines moved from other files."
)
@click.option("-n", "--show-number", is_flag=True, help="The line's number in the commit blamed.")
@click.option("-f", "--show-name", is_flag=True, help="The file's name in the commit blamed.")
@click.option("-l", "long_sha", is_flag=True, help="Whole commit ids.")
@click.option("--abbrev", type=click.IntRange(4, 40), metavar="N", help="N-digit commit ids.")
@click.option("-t", "raw_time", is_flag=True, help="Raw timestamps (as --date raw).")
@click.option("-b", "blank_boundary", is_flag=True, help="No commit id on root commits' lines.")
@click.option("--root", "root", is_flag=True, help="Root commits are no boundary (with -b).")
@click.option("-c", "annotate", is_flag=True, help="git annotate's tab-separated columns.")
@click.option(
    "--contents",
    metavar="FILE",
    help="Blame FILE's text as the file's working-tree version (- : stdin; editors' buffers).",
)
@click.option(
    "--reverse",
    metavar="REV..REV",
    help="git blame --reverse: each line of the first REV, with the last commit it was in.",
)
@click.option("--since", help="Blame no further back than this date (git blame --since).")
@click.option("--ignore-rev", "ignore_revs", multiple=True, metavar="REV", help="Skip REV.")
@click.option(
    "--ignore-revs-file",
    "ignore_revs_files",
    multiple=True,
    metavar="FILE",
    help="Skip the revisions in FILE (default: git's blame.ignoreRevsFile).",
)
@click.option(
    "-p",
    "--porcelain",
    is_flag=True,
    help="git blame --porcelain plus deja-session/deja-confidence lines.",
)
@click.option(
    "--line-porcelain",
    is_flag=True,
    help="As --porcelain, with the commit's details on every line.",
)
@click.option(
    "--date",
    "date_format",
    metavar="FORMAT",
    default=None,
    callback=lambda _ctx, _param, value: _date_format(value),
    help="Dates as git shows them: short (default), iso, iso-strict, relative, unix, raw.",
)
@click.option("-e", "--show-email", is_flag=True, help="The author's email instead of the name.")
@click.option("-s", "suppress", is_flag=True, help="No author name and date.")
@click.option(
    "--no-refresh", is_flag=True, help="Do not read new transcript lines into the index first."
)
@db_option
@json_option
@functools.partial(with_index, answers_without=True)
def blame_cmd(
    conn: sqlite3.Connection,
    args: tuple[str, ...],
    line_ranges: tuple[str, ...],
    rev: str | None,
    ignore_whitespace: bool,
    moves: tuple[str, ...],
    copies: tuple[str, ...],
    since: str | None,
    ignore_revs: tuple[str, ...],
    ignore_revs_files: tuple[str, ...],
    porcelain: bool,
    line_porcelain: bool,
    date_format: str | None,
    show_email: bool,
    suppress: bool,
    show_number: bool,
    show_name: bool,
    long_sha: bool,
    abbrev: int | None,
    raw_time: bool,
    blank_boundary: bool,
    root: bool,
    annotate: bool,
    contents: str | None,
    reverse: str | None,
    no_refresh: bool,
    as_json: bool,
) -> int:
    """Show, for each line of FILE, the commit and the agent session that wrote it.

    Lines not yet committed are matched too (without a revision). A line is
    given to a session only on evidence: the session wrote that line to that
    file before the commit that introduced it. As with git blame, a revision
    may come before the file (or use --rev); after --, every argument is a
    file. Attribution follows the commit and file git names for each line.
    A history the repository carries (an Aider chat committed with the code)
    is left out, as whoever committed it wrote it: deja trust PATH reads it.

    \b
    Columns: the commit (00000000: not committed yet, as is every line of a file
    git does not track yet, which git blame refuses); for a session's line its
    id, agent, model (where the transcript names one), when it wrote the line
    (its edit's time in the transcript, as deja why's "written"; not the commit's),
    and the confidence (0-1); for a person's line the commit's author and date
    (as committed: no mailmap); then the line number and the text.
    The agent and model columns are as wide as the widest shown; agents:
    agy (Antigravity), claude, codex, gemini, cursor, copilot, copilot-cli,
    windsurf, opencode, amp, droid, continue, aider, pi, cline, roo, kilo,
    specstory.

    \b
    git blame's options that choose the commit, passed to git:
      -w                 ignore white space
      -M[<num>]          lines moved within the file
      -C[<num>]          ... or from other files (-C -C, -C -C -C: more files)
      --since, --ignore-rev, --ignore-revs-file
    and those that shape its columns: -n -f -l -t -s -e -b -c --root --abbrev --date,
    -p (--porcelain), --line-porcelain.

    \b
    Examples:
      deja blame src/app.py
      deja blame v1.2 src/app.py -L 40,60 -L 90,+5
      deja blame -L 40,60 v1.2 -- src/app.py
      deja blame -w -C src/app.py        # through reformatting and moves
      deja blame -n -f -l src/app.py -L 5,3
      deja blame src/app.py --json | jq '.lines[] | select(.session)'
    """
    from deja_blame.attribution.blame_options import GitBlameOptions
    from deja_blame.commands.blame import run_blame
    from deja_blame.outputs.blame_text import BlameLook

    if len(args) > 2:
        option = next((a for a in args[1:] if a.startswith("-")), None)
        if option is not None:
            # git too: after --, every argument is a path
            raise click.UsageError(
                f"{option!r} after --: after -- every argument is a file, as in git;"
                f" give options before -- (deja blame -L 40,60 v1.2 -- src/app.py)"
            )
        raise click.UsageError("too many arguments: deja blame [REV] [--] FILE")
    if len(args) == 2:
        if rev is not None:
            raise click.UsageError("a revision twice: give REV or --rev, not both")
        rev = args[0]
        if _two_files(args):
            raise click.UsageError(
                f"one file at a time: {args[0]!r} is a file, not a revision"
                " (deja blame [REV] FILE; deja stats for many files)"
            )
        if _swapped(args):
            import shlex

            from deja_blame.output import terminal

            f, r = (shlex.quote(terminal(a)) for a in args)
            raise click.UsageError(
                f"{terminal(args[0])!r} is a file here, not a revision: the revision comes"
                f" first, as in git (deja blame {r} {f}, or deja blame --rev {r} {f})"
            )
    if porcelain and line_porcelain:
        raise click.UsageError("--porcelain or --line-porcelain, not both")
    if reverse is not None:
        start, dots, _end = reverse.partition("..")
        if rev is not None or not dots or not start:
            raise click.UsageError("--reverse takes the range itself: --reverse v1.0..HEAD FILE")
        rev = start  # the lines of the range's start, each with the last commit that had it
    options = GitBlameOptions(
        ignore_whitespace=ignore_whitespace,
        moves=moves,
        copies=copies,
        since=since,
        ignore_revs=ignore_revs,
        # as git reads them, from here: deja's git runs in the repository's top
        ignore_revs_files=tuple(str(Path(f).resolve()) if f else f for f in ignore_revs_files),
    )
    look = BlameLook(
        date_format=date_format or ("raw" if raw_time else None),
        show_email=show_email,
        suppress=suppress,
        long_sha=long_sha,
        abbrev=abbrev,
        show_name=show_name,
        show_number=show_number,
        blank_boundary=blank_boundary,
        root=root,
        annotate=annotate,
    )
    return run_blame(
        conn,
        Path(args[-1]),
        rev,
        line_ranges,
        as_json,
        porcelain or line_porcelain,
        refresh=not no_refresh,
        options=options,
        look=look,
        line_porcelain=line_porcelain,
        contents=contents,
        reverse=reverse,
    )


@cli.command("stats")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path), metavar="[PATH]... | RANGE")
@click.option("--rev", help="The tree of this revision (default: the working tree).")
@click.option(
    "--by",
    type=click.Choice(["week", "month"]),
    default=None,
    help="Instead: lines added by agents and by people in the commits of each period of RANGE.",
)
@click.option(
    "--no-refresh", is_flag=True, help="Do not read new transcript lines into the index first."
)
@click.option(
    "--html",
    "html_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="With --by: also write the history as a self-contained HTML page of charts to FILE.",
)
@db_option
@json_option
@functools.partial(with_index, answers_without=True)
def stats_cmd(
    conn: sqlite3.Connection,
    paths: tuple[Path, ...],
    rev: str | None,
    by: str | None,
    no_refresh: bool,
    html_out: Path | None,
    as_json: bool,
) -> int:
    """How much of this repository agents wrote: lines, share, by agent, model, session, person.

    The numbers are deja blame's, summed over the tracked files (under PATHs);
    binary files are skipped. New transcripts that name neither the repository
    nor its remotes are left for deja index, and stats says how many on stderr
    (unread_transcripts in --json). With --by, the history of the share instead: per
    week or month, the lines the commits of RANGE added, by agents and by
    people (RANGE as in deja report; default: all of HEAD's history).

    \b
    Examples:
      deja stats
      deja stats src/ --rev v1.2
      deja stats --json | jq '.by_agent'
      deja stats --by month v1.0..HEAD
      deja stats --by month --html share.html
    """
    from deja_blame.commands.stats import run_history, run_stats

    if html_out is not None and by is None:
        raise click.UsageError("--html draws the history: give --by week or --by month")
    if by is not None:
        if rev is not None or len(paths) > 1:
            raise click.UsageError("with --by: one RANGE (deja stats --by week v1.0..HEAD)")
        return run_history(
            conn,
            str(paths[0]) if paths else None,
            by,
            as_json,
            refresh=not no_refresh,
            html_out=html_out,
        )
    return run_stats(conn, paths, rev, as_json, refresh=not no_refresh)


@cli.command("export")
@click.argument("range_spec", metavar="[RANGE]", required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["agent-trace", "rows"]),
    default="agent-trace",
    show_default=True,
    help="agent-trace: one Agent Trace 0.1.0 record per commit (JSON Lines). rows: one row"
    " per commit x file x session for a warehouse (JSON Lines; Parquet with -o F.parquet).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to this file (0600) instead of stdout; rows to a .parquet file are Parquet"
    " (needs pyarrow where deja is installed: pip install pyarrow, or pipx inject deja pyarrow).",
)
@click.option(
    "--repository",
    default=None,
    metavar="NAME",
    help="rows: the repository's name in every row (default: origin's address, as"
    " host/owner/name, without credentials).",
)
@db_option
@with_index
def export_cmd(
    conn: sqlite3.Connection,
    range_spec: str | None,
    fmt: str,
    output: Path | None,
    repository: str | None,
) -> int:
    """Write the attribution of a range's commits in an interchange format, on stdout.

    agent-trace: one Agent Trace 0.1.0 record per commit with attributed lines
    (JSON Lines): the files, one conversation per session with its contributor
    (the model where known) and line ranges in that commit's version. rows: one
    row per commit x file x session (people's lines: session null) with its
    agent, model, lines added and lines still there at the range's tip
    (docs/warehouse.md loads them into DuckDB, BigQuery, ClickHouse or Spark).
    RANGE as in deja report; default: all of HEAD's history. From the commits'
    notes, else the index.

    \b
    Examples:
      deja export > traces.jsonl
      deja export --format agent-trace origin/main..HEAD
      deja export --format rows -o rows.jsonl
    """
    from deja_blame.commands.export import run_export

    if fmt != "rows" and repository is not None:
        raise click.UsageError("--repository is for --format rows")
    return run_export(conn, range_spec, fmt, output, repository)


@cli.command("why")
@click.argument("target", metavar="FILE:LINE")
@click.option("--rev", help="Look at FILE as of this revision (default: the working tree).")
@click.option(
    "--no-refresh", is_flag=True, help="Do not read new transcript lines into the index first."
)
@db_option
@json_option
@functools.partial(with_index, answers_without=True)
def why_cmd(
    conn: sqlite3.Connection, target: str, rev: str | None, no_refresh: bool, as_json: bool
) -> int:
    """Explain one line: the session, the request behind it, the edit, what ran after.

    \b
    Examples:
      deja why src/app.py:42
      deja why src/app.py:42 --json
      deja why src/app.py:42 --no-refresh   # the index as it is (a script asking many)
    """
    from deja_blame.commands.why import run_why

    return run_why(conn, target, rev, as_json, refresh=not no_refresh)


@cli.command("lsp")
@db_option
def lsp_cmd(db: Path | None) -> int:
    """Serve the Language Server Protocol on stdin/stdout, for editors.

    Code lenses on each run of lines one session wrote (agent, session, when,
    confidence), a hover on every line (the session, the request, the edit and
    the line's history, or the person's commit), kept in step with unsaved
    edits, refreshed on save, on a new commit and on new transcript lines. It
    works in a reviewer's clone from the notes alone. Commands: deja.why,
    deja.handoff.

    \b
    Editors start it themselves (each editor's whole setup, Zed and Sublime Text
    too: docs/editors.md in deja's source repository, not in the installed package):
      Neovim:  vim.lsp.start({ name = "deja", cmd = { "deja", "lsp" } })  -- 0.8+,
               for the current buffer; lenses only with vim.lsp.codelens.refresh()
               run on BufEnter and BufWritePost (Neovim does not draw them itself)
      Helix:   [language-server.deja] command = "deja", args = ["lsp"]
      Emacs:   (add-to-list 'eglot-server-programs
                 '((python-mode python-ts-mode) . ("deja" "lsp")))
      VS Code: the extension in editors/vscode of the source repository
    """
    from deja_blame.commands.lsp import run_lsp

    return run_lsp(db)


@cli.command("mcp")
@click.option(
    "--repo",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="The repository to answer about (default: the client's roots, else here).",
)
@click.option(
    "--prompts",
    is_flag=True,
    help="Show the person's requests (redacted) even where git config deja.notes.prompts"
    " is not true.",
)
@db_option
def mcp_cmd(db: Path | None, repo: Path | None, prompts: bool) -> int:
    """Serve the Model Context Protocol on stdin/stdout, for coding agents.

    Tools: why (the session, request, reasoning, edit and tests behind a line),
    blame (who wrote each line), sessions (the sessions that touched a path),
    show (one session); the resource deja://stats. Answers are bounded (a cursor
    for more), redacted, and hold the person's requests only where they opted
    in (git config deja.notes.prompts true, or --prompts). Nothing outside the
    repository is read.

    \b
    Agents start it themselves (docs/mcp.md in deja's source repository):
      Claude Code:  claude mcp add deja -- deja mcp
      Codex CLI:    codex mcp add deja -- deja mcp
      Gemini CLI:   gemini mcp add deja deja mcp
    """
    from deja_blame.commands.mcp import run_mcp

    return run_mcp(db, repo, prompts)


@cli.command("handoff")
@click.option(
    "--to",
    "target",
    required=True,
    type=_handoff_choice(),
    help="Agent to hand over to (one with a command line that starts on a prompt): agy"
    " (Antigravity), claude, codex, gemini, cursor (cursor-agent), copilot (VS Code's"
    " code chat), copilot-cli, opencode, droid, continue (cn), pi, cline.",
)
@click.option(
    "--session",
    default=None,
    callback=lambda _ctx, _param, value: _named_session(value),
    help="Session id or unique prefix (default: the newest one here).",
)
@click.option(
    "--print", "print_only", is_flag=True, help="Print the prompt instead of starting the agent."
)
@click.option(
    "--max-chars",
    type=click.IntRange(1000, 30000),
    default=16000,
    show_default=True,
    help="Bound on the prompt's length; a long session is summarised newest first.",
)
@click.option(
    "--no-refresh", is_flag=True, help="Do not read new transcript lines into the index first."
)
@db_option
@json_option
@with_index
def handoff_cmd(
    conn: sqlite3.Connection,
    target: str,
    session: str | None,
    print_only: bool,
    max_chars: int,
    no_refresh: bool,
    as_json: bool,
) -> int:
    """Start an agent on a session's context: goal, edits, commands, what is left open.

    Without --session, the newest session of the repository (or directory) you
    stand in, whichever agent wrote it; new transcripts are read into the index
    first, as blame and why do (--no-refresh: the index as it is). The prompt is redacted
    and passed as one argument (never through a shell): `agy -i PROMPT`,
    `claude PROMPT`, `codex PROMPT`, `gemini -i PROMPT`, `cursor-agent PROMPT`,
    `droid PROMPT`, `cn PROMPT`, `pi PROMPT`, `code chat --mode agent PROMPT` (--to copilot:
    VS Code's Copilot), `copilot -i PROMPT` (--to copilot-cli), `opencode
    --prompt PROMPT`; the agent starts in the session's project.

    \b
    Examples:
      deja handoff --to agy
      deja handoff --to antigravity --session 3f2a
      deja handoff --to agy --print > prompt.txt
      deja handoff --to claude --session c0de     # a Codex session, continued in Claude Code
      deja handoff --to droid --print             # ... or for Droid, Cursor's CLI, Continue's cn
    """
    from deja_blame.commands.handoff import run_handoff

    return run_handoff(
        conn,
        target,
        session,
        print_only=print_only,
        as_json=as_json,
        max_chars=max_chars,
        refresh=not no_refresh,
    )


def _named_session(value: str | None) -> str | None:
    """``--session``'s value: an empty one (``--session ''``, an unset variable) is a
    mistake, not "the newest session here" (leaving the option out says that)."""
    if value is not None and not value.strip():
        raise click.BadParameter(
            "an empty session id: name one (deja sessions lists them), or leave --session"
            " out for the newest session here",
            param_hint="'--session'",
        )
    return value


@cli.command("report")
@click.argument("range_spec", metavar="[RANGE]", required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "json", "html", "text"]),
    default=None,
    help="markdown (a PR comment: the default piped or with -o), text (the default on a"
    " terminal), json (docs/report.md) or html (one file).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the report to FILE instead of stdout.",
)
@click.option(
    "--prompts",
    is_flag=True,
    help="Show the person's requests (redacted) even where git config deja.notes.prompts"
    " is not true.",
)
@click.option("--no-prompts", is_flag=True, help="Leave every prompt's text out of the report.")
@click.option(
    "--no-refresh", is_flag=True, help="Do not read new transcript lines into the index first."
)
@db_option
@json_option
@functools.partial(with_index, answers_without=True)
def report_cmd(
    conn: sqlite3.Connection,
    range_spec: str | None,
    fmt: str | None,
    output: Path | None,
    prompts: bool,
    no_prompts: bool,
    no_refresh: bool,
    as_json: bool,
) -> int:
    """Provenance report for the commits in RANGE: lines by agent sessions and by people.

    RANGE is a git revision range (default: the branch's upstream..HEAD, else the
    last commit); a single revision means that one commit. Attribution comes from
    the commits' notes (refs/notes/deja) first, then the index.

    On a terminal it prints plain text; piped or written with -o, Markdown for a
    PR comment (--format says which).

    A report is made to be shared (a PR comment), so it follows the notes' rule:
    the person's requests only where they opted in (git config deja.notes.prompts
    true, or --prompts), and every text redacted, home folders written ~ and the
    repository's own folder . (commands and projects too). A first request a
    commit's note carries was published by its author: it is shown, as deja why
    shows it, unless --no-prompts.

    \b
    Examples:
      deja report                                  # upstream..HEAD, as text here
      deja report | head -1                        # ... Markdown when piped: <!-- deja-report -->
      deja report origin/main..HEAD --format json | jq .totals
      deja report main..feature --format html -o report.html
      deja report HEAD~5.. --prompts               # with the person's requests
      deja report HEAD~5.. --no-prompts            # no prompt text at all
    """
    from deja_blame.commands.report import run_report

    if as_json and fmt not in (None, "json"):
        raise click.UsageError(f"--json and --format {fmt} disagree; give one of them")
    if prompts and no_prompts:
        raise click.UsageError("--prompts and --no-prompts disagree; give one of them")
    return run_report(
        conn,
        range_spec,
        "json" if as_json else (fmt or _report_default_format(output)),
        output,
        include_prompts=False if no_prompts else (True if prompts else None),
        refresh=not no_refresh,
    )


def _report_default_format(output: Path | None) -> str:
    """Text on a terminal, else Markdown (piped, -o FILE: what scripts and CI read)."""
    return "text" if output is None and sys.stdout.isatty() else "markdown"


@cli.command("annotate")
@click.argument("rev", required=False, metavar="[REV]")
@click.option(
    "--no-refresh", is_flag=True, help="Do not read new transcript lines into the index first."
)
@click.option("--dry-run", is_flag=True, help="Compute the note and print it; write nothing.")
@click.option(
    "--pending",
    is_flag=True,
    help="Complete the notes the hooks left late (deja hooks status counts them); no REV.",
)
@click.option(
    "--all",
    "all_history",
    is_flag=True,
    help="Every commit of the branch's history that sessions touched (missing or stale notes).",
)
@click.option(
    "--prompts",
    is_flag=True,
    help="Put the sessions' requests (redacted) in these commits' notes, even where the note"
    " already there has none (otherwise a note written again keeps what it published).",
)
@db_option
@json_option
@with_index
def annotate_cmd(
    conn: sqlite3.Connection,
    rev: str | None,
    no_refresh: bool,
    dry_run: bool,
    as_json: bool,
    pending: bool,
    all_history: bool,
    prompts: bool,
) -> int:
    """Store which sessions wrote a commit's lines as its note (refs/notes/deja).

    REV is a commit (default HEAD) or a range A..B. Idempotent; merges with a
    note already there; writes nothing for a commit with no attributed lines.

    \b
    Examples:
      deja annotate                    # HEAD; what the post-commit hook runs
      deja annotate main..HEAD         # every commit of a branch
      deja annotate HEAD~1 --json      # print the note
      deja annotate --pending          # the notes the hooks left late
      deja annotate --all              # the whole history: resumable, idempotent
      deja annotate HEAD~1 --prompts   # publish its sessions' requests (redacted)
    """
    from deja_blame.commands.annotate import run_annotate, run_annotate_all, run_pending

    if prompts and (all_history or pending):
        raise click.UsageError("--prompts takes the commits by name: REV, not --all or --pending")
    if all_history:
        if rev is not None or pending or dry_run:
            raise click.UsageError("--all takes no REV, --pending or --dry-run")
        return run_annotate_all(conn, as_json, refresh_first=not no_refresh)
    if pending:
        return run_pending(conn, as_json, refresh_first=not no_refresh)
    return run_annotate(
        conn,
        rev or "HEAD",
        as_json,
        refresh_first=not no_refresh,
        dry_run=dry_run,
        add_prompts=prompts,
    )


@cli.group("hooks")
def hooks_group() -> None:
    """Manage this repository's git hooks (post-commit, post-rewrite) that keep notes.

    \b
    Examples:
      deja hooks install
      deja hooks status
      deja hooks uninstall
    """


@hooks_group.command("install")
@json_option
def hooks_install_cmd(as_json: bool) -> int:
    """Install the hooks, chaining any hook already there; honours core.hooksPath.

    \b
    Example:
      deja hooks install && git config deja.hook.timeout 5
    """
    from deja_blame.commands.hooks import run_install

    return run_install(as_json)


@hooks_group.command("uninstall")
@json_option
def hooks_uninstall_cmd(as_json: bool) -> int:
    """Remove the hooks and put back what install changed (hooks, git config).

    \b
    Example:
      deja hooks uninstall
    """
    from deja_blame.commands.hooks import run_uninstall

    return run_uninstall(as_json)


@hooks_group.command("status")
@json_option
def hooks_status_cmd(as_json: bool) -> int:
    """Show which hooks are installed, what they chain, and the last warning.

    \b
    Example:
      deja hooks status --json
    """
    from deja_blame.commands.hooks import run_status

    return run_status(as_json)


@hooks_group.command("run", context_settings={"ignore_unknown_options": True})
@click.argument("hook")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hooks_run_cmd(hook: str, args: tuple[str, ...]) -> int:
    """Run deja's part of a hook from your own (husky, lefthook, a tracked .githooks).

    What deja's hook scripts and pre-commit's deja-annotate hook run: it never
    fails the commit, and the note is written in the background (git config
    deja.hook.background false: in the foreground, within deja.hook.timeout).
    Only Python's start is in the foreground (about 0.2 s of CPU); from a shell
    hook, post-commit can go wholly to the background with a trailing `&`
    (post-rewrite reads git's list of rewritten commits on stdin: call it as is).

    \b
    In your hook manager's hook files:
      deja hooks run post-commit             # .husky/post-commit
      deja hooks run post-rewrite "$@"       # .husky/post-rewrite (stdin: git's list)
    """
    from deja_blame.commands.hooks import run_hook

    return run_hook(hook, args)


@cli.group("server")
def server_group() -> None:
    """A resident server: deja loaded once, so each command starts at once.

    Commands whose output is not a terminal (scripts, editors, agents, pipes) are
    run by a fork of the server with their own folder, environment and streams;
    where none runs, or DEJA_SERVER=0, they run as always. It stops after
    --idle minutes without a command, and when deja's code changes on disk.

    \b
    Examples:
      deja server start            # until 30 minutes pass without a command
      deja blame src/app.py --json # now answered by the server
      deja server status
      deja server stop
    """


@server_group.command("start")
@click.option(
    "--idle",
    "idle",
    type=click.FloatRange(min=0.1),
    default=30.0,
    show_default=True,
    help="Minutes without a command before the server exits.",
)
@json_option
def server_start_cmd(idle: float, as_json: bool) -> int:
    """Start the server (nothing to do when one runs)."""
    from deja_blame.commands.server import run_start

    return run_start(idle, as_json)


@server_group.command("stop")
@json_option
def server_stop_cmd(as_json: bool) -> int:
    """Stop the server (commands then run as always)."""
    from deja_blame.commands.server import run_stop

    return run_stop(as_json)


@server_group.command("status")
@json_option
def server_status_cmd(as_json: bool) -> int:
    """Whether a server runs, since when and how many commands it ran (exit 1: none)."""
    from deja_blame.commands.server import run_status

    return run_status(as_json)


@cli.group("notes")
def notes_group() -> None:
    """Share the attribution notes (refs/notes/deja) with a remote.

    \b
    Examples:
      deja notes fetch              # from origin, merged into the local notes
      deja notes push upstream
      deja notes carry v1.0..HEAD --local   # commits the forge made (CI: --push)
    """


@notes_group.command("fetch")
@click.argument("remote", default="origin", metavar="[REMOTE]")
@click.option(
    "--git-ai",
    "git_ai",
    is_flag=True,
    help="Also fetch git-ai's authorship notes (refs/notes/ai; fast-forward only):"
    " blame, why, stats and report read them for lines deja's own do not explain.",
)
@json_option
def notes_fetch_cmd(remote: str, git_ai: bool, as_json: bool) -> int:
    """Fetch REMOTE's notes (default origin) into refs/notes/deja-remote/REMOTE and merge them.

    \b
    Examples:
      deja notes fetch && deja blame src/app.py
      deja notes fetch --git-ai     # a repository whose people use git-ai too
    """
    from deja_blame.commands.notes import run_fetch

    return run_fetch(remote, as_json, git_ai=git_ai)


@notes_group.command("push")
@click.argument("remote", default="origin", metavar="[REMOTE]")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Say what would be pushed and where (the remote's URL), sending nothing.",
)
@json_option
def notes_push_cmd(remote: str, dry_run: bool, as_json: bool) -> int:
    """Push the notes to REMOTE (default origin), never forcing: merge theirs first if needed.

    The notes go to REMOTE's push URL, named in the line it prints: in a clone of
    someone else's project, origin is theirs (--dry-run first, or name your own).

    \b
    Examples:
      deja notes push --dry-run
      deja notes push
      deja notes push myfork
    """
    from deja_blame.commands.notes import run_push

    return run_push(remote, as_json, dry_run=dry_run)


@notes_group.command("carry")
@click.argument("spec", default="HEAD", metavar="[BEFORE..AFTER | REV]")
@click.option(
    "--remote",
    default="origin",
    show_default=True,
    help="Where the notes and pull request heads are fetched from and pushed to.",
)
@click.option(
    "--pr",
    "pulls",
    multiple=True,
    metavar="N",
    help="A pull request the new commits came from, besides those their messages name.",
)
@click.option(
    "--from",
    "sources",
    multiple=True,
    metavar="REV|RANGE",
    help="Candidate old commits: a range, or a ref's or commit id's commits the branch did"
    " not have (a deleted branch: its old tip's id).",
)
@click.option(
    "--forge",
    type=click.Choice(["github", "gitlab"]),
    default="github",
    show_default=True,
    help="Where pull request heads live: refs/pull/N/head or refs/merge-requests/N/head.",
)
@click.option(
    "--local",
    is_flag=True,
    help="Fetch nothing (no notes, no pull request heads): use what is here.",
)
@click.option("--push", is_flag=True, help="Push the notes afterwards (never forcing).")
@json_option
def notes_carry_cmd(
    spec: str,
    remote: str,
    pulls: tuple[str, ...],
    sources: tuple[str, ...],
    forge: str,
    local: bool,
    push: bool,
    as_json: bool,
) -> int:
    """Give commits the forge made on merging (squash, rebase) the pull request's notes.

    For CI on every push to the default branch: BEFORE..AFTER is the push. Each
    new commit gets the notes of the commits it came from, carried by line
    text (no transcripts needed): a squash commit those of its pull request
    (its message's "(#N)"), a rebased commit the one with its patch. A plain
    git remote keeps no pull request heads: there a squash is found in the
    remote's branch (as last fetched) whose change has its patch, else name
    the branch with --from origin/BRANCH, or, deleted on merging, its old tip
    with --from COMMIT-ID. Run twice, it changes nothing, and says so
    ("already noted: unchanged"). In CI: notes carry "$BEFORE..$AFTER" --push
    (the workflow: docs/forge-merges.md). Exit 0 even when commits are left
    without a note (said on stderr with a hint; "how": "none" in --json), so
    that a push to the default branch never fails over a merge it cannot carry;
    a job that should fail then: --json | jq -e 'all(.commits[]; .how != "none")'.

    \b
    Examples:
      deja notes carry v1.0..HEAD --local
      deja notes carry v1.0..HEAD --from v1.0 --local --json
    """
    from deja_blame.commands.notes import run_carry

    if local and push:
        raise click.UsageError("--local fetches nothing and pushes nothing: leave out --push")
    return run_carry(
        spec,
        None if local else remote,
        list(pulls),
        list(sources),
        forge,
        fetch_notes=not local,
        push=push,
        as_json=as_json,
    )


@cli.group("warehouse")
def warehouse_group() -> None:
    """Many repositories' rows in one DuckDB file, and the share queries people ask.

    Needs DuckDB where deja is installed (pip install duckdb). The rows come from
    deja export --format rows, one file per repository; loading a repository
    again replaces its rows. Other engines: docs/warehouse.md.

    \b
    Examples:
      deja export --format rows -o app.jsonl && deja warehouse load org.duckdb app.jsonl
      deja warehouse query org.duckdb share-by-agent
    """


@warehouse_group.command("load")
@click.argument("database", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@json_option
def warehouse_load_cmd(database: Path, files: tuple[Path, ...], as_json: bool) -> int:
    """Load rows files (JSON Lines or .parquet) into DATABASE's table deja_rows.

    \b
    Example:
      deja warehouse load org.duckdb app.jsonl
    """
    from deja_blame.commands.warehouse import run_load

    return run_load(database, list(files), as_json)


@warehouse_group.command("query")
@click.argument("database", type=click.Path(dir_okay=False, path_type=Path))
@click.argument(
    "name",
    type=click.Choice(
        [
            "share-by-repository",
            "share-by-agent",
            "share-by-model",
            "share-by-month",
            "agent-by-month",
        ]
    ),
)
@click.option("--sql", "show_sql", is_flag=True, help="Print the query's SQL instead.")
@json_option
def warehouse_query_cmd(database: Path, name: str, show_sql: bool, as_json: bool) -> int:
    """Run one of the share queries over DATABASE (a table; --json: a list of objects).

    \b
    Examples:
      deja warehouse query org.duckdb share-by-month
      deja warehouse query org.duckdb share-by-model --json
    """
    from deja_blame.commands.warehouse import run_query

    return run_query(database, name, show_sql, as_json)


@cli.command("doctor")
@db_option
@json_option
def doctor_cmd(db: Path | None, as_json: bool) -> int:
    """Check git, pygit2, transcript roots, the index, this repository's hooks and notes.

    In a repository, also whether the latest commits hold lines a session of another
    machine wrote with its clock ahead of git's (clock: such lines count as the
    commits' authors').

    Changes nothing. Prints one line per check, then, for each problem, the
    command that fixes it. Exit 0 when all is well, 1 when something needs fixing
    (also when what reads the output stops early: deja doctor | head -1).
    A warning (warn, with the command worth running; "ok": true in --json) does
    not change the exit code: only a problem makes it 1.

    \b
    Examples:
      deja doctor
      deja doctor --json | jq '.checks[] | select(.ok | not)'
    """
    from deja_blame.commands.doctor import run_doctor

    return run_doctor(_db_path(db), as_json)


# -- the edge: exit codes and one-line errors ----------------------------------------------


def _log_path() -> Path:
    from deja_blame.statefile import state_dir

    return state_dir() / "deja.log"


def main(argv: list[str] | None = None) -> None:
    try:
        rv = cli.main(args=argv, prog_name="deja", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("deja: interrupted", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        click.echo("deja: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except DejaError as exc:
        from deja_blame.output import terminal

        # messages can quote session ids, projects and paths from transcripts: inert
        click.echo(f"deja: error: {terminal(str(exc))}", err=True)
        if exc.hint:
            click.echo(f"hint: {terminal(exc.hint)}", err=True)
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(0)
    except SystemExit as exc:
        if exc.code == 1 and type(sys.stdout).__name__.endswith("PacifyFlushWrapper"):
            # click's exit for a reader that stopped early (``| head``), which it marks by
            # quieting stdout: deja's own is 0, as just above, wherever the pipe broke
            sys.exit(0)
        raise
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no bare tracebacks
        import sqlite3
        import traceback

        if isinstance(exc, sqlite3.OperationalError):
            click.echo(f"deja: error: the index could not be written: {exc}", err=True)
            sys.exit(1)
        log = _log_path()
        try:
            log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            from deja_blame.statefile import append_bytes

            if not append_bytes(log, traceback.format_exc().encode("utf-8", "replace")):
                raise OSError("not a regular file")
            where = f"details in {log}"
        except OSError:
            where = "no log could be written"
        click.echo(f"deja: unexpected error: {type(exc).__name__}: {exc} ({where})", err=True)
        sys.exit(1)
    sys.exit(rv if isinstance(rv, int) else 0)
