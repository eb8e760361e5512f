"""Terminal output helpers: colour only on a terminal, NO_COLOR respected, text made inert."""

from __future__ import annotations

import os
import re
import sys
from typing import IO

import click

# ANSI/VT escape sequences and other control characters from transcript text
# must never reach the terminal as commands: CSI and OSC sequences whole (in their
# ESC and their one-character C1 forms, U+009B and U+009D), then any C0 or C1
# control left (a lone ESC, BEL, DCS U+0090, ...), except tab and newline.
_CONTROL = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)


def inert(text: str) -> str:
    """Transcript text safe to print: escape sequences and control characters removed."""
    return _CONTROL.sub("", text)


def use_colour(stream: IO[str] | None = None) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    stream = stream or sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


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
