"""Facts that hold for one whole question about many files: a ``deja report`` of
a range, a ``deja stats`` of a tree.

Such a command asked git and the index the same things once per file: git for
HEAD three times a file and for the notes' tips once, the index which texts
sessions wrote to each of the repository's files once per file and path (31,000
queries for werkzeug's 291 files), git blame for a file at commit after commit.
Within ``one_question(root)`` these are asked once and kept (``remembered``)
until the command ends: the repository and the index do not change under one
question (stats and report refresh the index before they start). Outside one, as
for a one-file ``deja blame``, each is asked as before: reading the whole of
something for one file would cost more than it saves.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

_LOCK = threading.RLock()
_OPEN: dict[str, int] = {}  # root -> questions open there
_KEPT: dict[str, dict[Any, Any]] = {}  # root -> what the question has learnt
_GIVEN: dict[str, list[dict[Any, Any]]] = {}  # root -> what the command's edge knew (``given``)


@contextmanager
def one_question(root: str | Path) -> Iterator[None]:
    """Share what is asked about the repository at ``root`` until the block ends."""
    key = str(root)
    with counted(_OPEN, key, lambda: _KEPT.pop(key, None)):
        yield


@contextmanager
def counted(
    counts: dict[str, int], key: str, on_last: Callable[[], object] | None = None
) -> Iterator[None]:
    """``key`` in ``counts`` while a block (of any thread, nested or not) holds it;
    ``on_last`` runs when the last of them ends."""
    with _LOCK:
        counts[key] = counts.get(key, 0) + 1
    try:
        yield
    finally:
        with _LOCK:
            counts[key] -= 1
            if not counts[key]:
                del counts[key]
                if on_last is not None:
                    on_last()


def active(root: str | Path) -> bool:
    """Whether a question about many files of ``root`` is being answered."""
    return str(root) in _OPEN


def question_about(path: str | Path) -> str | None:
    """The repository root of an open question that ``path`` lies in, if any."""
    where = str(path)
    with _LOCK:
        for root in _OPEN:
            if where == root or where.startswith(root.rstrip("/") + "/"):
                return root
    return None


@contextmanager
def given(root: str | Path, known: dict[Any, Any]) -> Iterator[None]:
    """Until the block ends, ``remembered`` answers ``known``'s keys about ``root`` from
    it: what the command's edge read already (a one-file question's HEAD, from the
    rev-parse that found the file: stage 1 asked git for it three more times),
    without ``one_question``'s reads of whole histories."""
    where, mine = str(root), dict(known)
    with _LOCK:
        _GIVEN.setdefault(where, []).append(mine)
    try:
        yield
    finally:
        with _LOCK:
            stack = _GIVEN[where]
            stack.remove(mine)
            if not stack:
                del _GIVEN[where]


def remembered(root: str | Path, key: Any, compute: Callable[[], T]) -> T:
    """``compute()`` once per question for ``key`` (a thread asking meanwhile waits
    for that answer); every time outside a question, unless the edge gave it (``given``)."""
    where = str(root)
    with _LOCK:
        stack = _GIVEN.get(where)
        if stack and key in stack[-1]:
            return stack[-1][key]  # type: ignore[no-any-return]
        if where not in _OPEN:
            mine = None
        else:
            kept = _KEPT.setdefault(where, {})
            mine = kept.get(key)
            if mine is None:
                mine = kept[key] = _Answer()
    if mine is None:
        return compute()
    with mine.lock:  # the first thread computes, the others wait for it
        if not mine.done:
            mine.value = compute()  # a git process, an SQL query: outside _LOCK
            mine.done = True
        return mine.value  # type: ignore[no-any-return]


class _Answer:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done = False
        self.value: Any = None


def kept(root: str | Path, key: Any, make: Callable[[], T]) -> T | None:
    """The question's own object under ``key`` (made on first use), or None outside
    a question."""
    where = str(root)
    with _LOCK:
        if where not in _OPEN:
            return None
        mine = _KEPT.setdefault(where, {})
        if key not in mine:
            mine[key] = make()
        return mine[key]  # type: ignore[no-any-return]
