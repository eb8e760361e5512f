"""Terminal output helpers: colour only on a terminal, NO_COLOR respected, text made inert."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

import click

# ANSI/VT escape sequences and other control characters from transcript text
# must never reach the terminal as commands: CSI and OSC sequences whole (in their
# ESC and their one-character C1 forms, U+009B and U+009D), then any C0 or C1
# control left (a lone ESC, BEL, DCS U+0090, ...), except tab and newline.
# The bidirectional controls go too: U+202E reverses what follows on screen, so
# text could show other code than it holds ("Trojan Source").
_CONTROL = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def inert(text: str) -> str:
    """Transcript text safe to print: escape sequences and control characters removed."""
    return _CONTROL.sub("", text)


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


def shorten(text: str | None, width: int) -> str:
    if not text:
        return ""
    one = " ".join(inert(text).split())
    return one if len(one) <= width else one[: max(0, width - 1)] + "…"


def warn(message: str) -> None:
    click.echo(f"deja: {inert(message)}", err=True)


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
