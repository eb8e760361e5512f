"""Work that can wait until the answer is out: writing what a command learnt.

A cold ``deja blame`` computes the answer, prints it, and keeps it (the
attribution cache, the commits' authors, the ``answered`` hint): the keeping is
a fifth of its time and nobody waits on it. Code ``defer``s such work; inside
``answering()`` (``deja blame``) it waits for ``finish``, anywhere else (a hook,
the editor's server, a report of many files) it runs at once, as before.

``finish`` runs it. Run by the console script, that is at once (the process ends
after it). In a resident server's fork (``resident/server.py``) the answer is
handed back first: the exit code is sent, the client's streams are let go (a
reader sees the end of the output), and the work runs after.

Deferred work must be safe to lose (a cache) and must not print.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["answer_first", "answering", "defer", "finish"]

_PENDING: list[Callable[[], None]] | None = None  # None: not answering, work runs at once
# The resident server's fork sets this: hand the answer back now, exit code given
on_answer: Callable[[int], None] | None = None


def defer(work: Callable[[], None]) -> None:
    """Run ``work`` once the command has answered (``finish``), or now outside
    ``answering()``."""
    if _PENDING is None:
        work()
    else:
        _PENDING.append(work)


@contextmanager
def answering() -> Iterator[None]:
    """A command's answer is being made: deferred work waits for ``finish`` (work left
    when the command fails is dropped: it kept what a failed answer learnt)."""
    global _PENDING
    outer, _PENDING = _PENDING, []
    try:
        yield
    finally:
        _PENDING = outer


def finish(code: int) -> None:
    """The command answered with ``code``: give the answer back, then run what waited.
    A failure in the work costs what it would have kept, never the answer."""
    pending = _PENDING
    if not pending:
        return
    if on_answer is not None:
        on_answer(code)
    while pending:
        work = pending.pop(0)
        try:
            work()
        except Exception:  # noqa: BLE001, S110 - a cache that is not written is recomputed
            pass


def answer_first(command: F) -> F:
    """A command whose deferred work runs once it has answered (its return: the exit code)."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with answering():
            code = command(*args, **kwargs)
            finish(code if isinstance(code, int) else 0)
        return code

    return wrapper  # type: ignore[return-value]
