"""Terminal output helpers: colour only on a terminal, NO_COLOR respected, text made inert."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

import click

# the terminal's escaping of transcript and note fields (outputs/escape.py), here
# for the commands that print
from deja_blame.outputs.escape import clip as clip
from deja_blame.outputs.escape import code as code
from deja_blame.outputs.escape import inert as inert
from deja_blame.outputs.escape import shorten as shorten
from deja_blame.outputs.escape import terminal as terminal
from deja_blame.outputs.escape import terminal_lines as terminal_lines
from deja_blame.outputs.escape import without_code as without_code

COLOR_ENV = "DEJA_COLOR"  # auto | always | never (set by --color)


def use_colour(stream: IO[str] | None = None) -> bool:
    choice = os.environ.get(COLOR_ENV, "auto")
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return _is_tty(stream or sys.stdout)


def style(text: str, colour: bool, **kwargs: object) -> str:
    return click.style(text, **kwargs) if colour else text  # type: ignore[arg-type]


def warn(message: str) -> None:
    click.echo(f"deja: {terminal(message)}", err=True)


def hunk_header(old_start: int, removed: int, new_start: int, added: int) -> str:
    """git's ``@@ -a,b +c,d @@``: a count of 1 left out; an empty side names the line
    before it (``@@ -28,0 +29,3 @@`` for three lines inserted after line 28)."""

    def side(start: int, count: int) -> str:
        if count == 0:
            return f"{max(0, start - 1)},0"
        return str(start) if count == 1 else f"{start},{count}"

    return f"@@ -{side(old_start, removed)} +{side(new_start, added)} @@"


# A hunk whose transcript gives no line numbers (Claude Code's Edit without its patch,
# Codex's apply_patch: both find their place by the text). Without a line here the
# hunk reads as a unified diff's that lost its header; "?" is where git puts numbers.
UNPLACED_HUNK = (
    "@@ ? @@ (the transcript gives no line numbers: the edit found its place by its text)"
)


def placed_by_text(commit: str | None) -> str:
    """What follows the ``@@`` header of a hunk whose place deja found by its text
    (``attribution/edit_place``): where it looked, and why it had to."""
    where = f"commit {commit[:12]}" if commit else "the working tree"
    return f"(found by its text in {where}: the transcript gives no line numbers)"


def utc_minute(at: str | None) -> str:
    """An agent's time, to the minute, with its zone: ``2026-07-17 09:01 UTC``. The index
    keeps UTC, and a reader in another zone must not take it for local time; a time in
    another form is turned to UTC, one deja cannot read is shown as written (cut to 16
    characters, no zone said). None: "". The caller makes it inert, as any field."""
    if not at:
        return ""
    if len(at) == 20 and at[10] == "T" and at[19] == "Z":
        return f"{at[:10]} {at[11:16]} UTC"
    import time

    from deja_blame.transcripts.text import epoch_of

    epoch = epoch_of(at)
    if epoch is None:
        return at[:16].replace("T", " ")
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch))


def utc_second(at: str | None) -> str:
    """An agent's time to the second, in UTC, for the terminal: ``2026-07-17T09:01:02Z``.
    Agents write milliseconds (Claude Code, Codex) or none (Aider, Antigravity); text
    output shows one form (JSON keeps the transcript's). None: "". A time deja cannot
    read is shown as written; the caller makes it inert, as any field."""
    if not at:
        return ""
    if len(at) == 20 and at[10] == "T" and at[19] == "Z":
        return at
    import time

    from deja_blame.transcripts.text import epoch_of

    epoch = epoch_of(at)
    if epoch is None:
        return at
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def agent_word(agent_id: str | None) -> str:
    """The agent as every text output names it: blame's whole word (``agy``, ``claude``,
    ``copilot-cli``), inert; JSON keeps the id (``claude-code``)."""
    from deja_blame.transcripts.registry import label_of  # the plug-ins: text only

    return terminal(label_of(agent_id))


def counted(n: int, word: str, many: str | None = None) -> str:
    """``1 session``, ``2 sessions`` (``many``: the plural where it is not word + s)."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


PAGER_ENV = "DEJA_PAGER"
NO_PAGER_ENV = "DEJA_NO_PAGER"  # set by --no-pager


def pager_command() -> list[str] | None:
    """The pager, as git finds one: DEJA_PAGER, git's core.pager, PAGER, then
    ``less``; None where there is none to run (or it is ``cat``)."""
    from deja_blame.gitutil import try_git

    command = os.environ.get(PAGER_ENV)
    if command is None:
        proc = try_git(".", ["config", "core.pager"], timeout=5)
        if proc is not None and proc.returncode == 0:
            command = proc.stdout.decode("utf-8", "replace").strip() or None
    if command is None:
        command = os.environ.get("PAGER") or "less"
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    if not argv or argv[0] == "cat":
        return None
    return argv


@contextmanager
def paged() -> Iterator[None]:
    """Send stdout through the pager when it is a terminal (like git): ``less`` gets
    FRX so a short output prints and exits, and colours pass."""
    if os.environ.get(NO_PAGER_ENV) or not _is_tty(sys.stdout):
        yield
        return
    argv = pager_command()
    if argv is None:
        yield
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, env=env, text=True)
    except OSError:
        yield
        return
    saved = sys.stdout
    assert proc.stdin is not None
    sys.stdout = proc.stdin
    try:
        yield
    except BrokenPipeError:
        pass  # the reader quit the pager early
    finally:
        sys.stdout = saved
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
        proc.wait()


def _is_tty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class CommitProgress:
    """A progress bar over commits on stderr, when it is a terminal (else nothing):
    ``progress(done, total)`` as report-like commands walk a history."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.on = sys.stderr.isatty()
        self.bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if not self.on or total < 20:
            return
        if self.bar is None:
            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(1 if done else 0)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.update(max(0, self.bar.length - self.bar.pos))  # the last one done
            self.bar.__exit__(None, None, None)
            self.bar = None
