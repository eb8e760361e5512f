"""Fewer malloc arenas for the commands that blame files on threads.

glibc's malloc gives each new thread an arena of its own (up to eight per core),
and what a thread frees stays in its arena: ``deja stats`` blames files on four
threads, each holding one file's facts at a time, and on entireio/cli its peak
resident memory was 167 MB, 152 MB with two arenas (the same answers and CPU).
Python's own allocator takes small objects from its arenas either way; what the
threads share is the memory of larger ones (lists, dicts, texts).
"""

from __future__ import annotations

import ctypes
import sys
import threading
from typing import Any

M_ARENA_MAX = -8  # mallopt's parameter in glibc's malloc.h
ARENAS = 2

_done = threading.Event()


def few_arenas() -> None:
    """Let the threads started from now on share ``ARENAS`` malloc arenas (glibc on
    Linux; elsewhere nothing). Asked once per process."""
    if _done.is_set() or not sys.platform.startswith("linux"):
        return
    _done.set()
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return  # not a C library with mallopt (it is glibc's and musl's)
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    mallopt(M_ARENA_MAX, ARENAS)


# files blamed between two trims: a trim walks the heap (1-3 ms at stats' size)
TRIM_EVERY = 8

_trim: list[Any] = []  # glibc's malloc_trim, looked up once ([None]: none)


def trim() -> None:
    """Give the free pages inside the C heap back to the system (glibc's
    ``malloc_trim``; elsewhere nothing). What a finished file's facts freed between
    live blocks stays resident, and where the next files' larger blocks do not fit
    those holes the heap grows past them: on entireio/cli's cold ``deja stats`` the
    process peaked at 147.7-148.7 MB, trimmed at 138.0-141.2 MB (the same answers)."""
    if not _trim:
        try:
            found: Any = ctypes.CDLL(None).malloc_trim if sys.platform.startswith("linux") else None
        except (OSError, AttributeError):
            found = None  # musl has no malloc_trim (it gives pages back itself)
        if found is not None:
            found.argtypes = [ctypes.c_size_t]
            found.restype = ctypes.c_int
        _trim.append(found)
    if _trim[0] is not None:
        _trim[0](0)
