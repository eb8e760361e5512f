"""Python's cyclic garbage collector paused while one file's answer is made.

A cold blame holds the index's writes of the file's texts as Python objects (click's
``core.py`` with 10,000 replayed sessions: 125,244 writes, each a key and a value
tuple, in dicts and lists) and makes many more while the rules run. Every full
collection walks all of them, and there are none of the cycles it is for among
them: the collector cost 0.23 s of that blame's 1.33 s of CPU (6 full passes 0.14 s),
and 0.06 s of 0.57 s at 1,000 sessions. Reference counting still frees what the
answer lets go of; what cycles it made are collected once it is done.

Indexing pauses it too, one transcript at a time (``index.ingest``): a batch's records
and rows are dicts, lists and tuples, never cycles, and on real Claude Code transcripts
(351 MB) the collector's passes over them were 0.17 s of ``deja index``'s 3.5 s.

Questions on several threads at once (the resident server) share one pause: the
collector runs again when the last of them ends, and stays off if it was off.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_paused = 0  # questions under way
_was_enabled = False  # the collector's state before the first of them


@contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic cyclic collection until the block (and every other one under way)
    ends; the collector's state before is restored then."""
    global _paused, _was_enabled
    with _lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _lock:
            _paused -= 1
            if _paused == 0 and _was_enabled:
                gc.enable()
