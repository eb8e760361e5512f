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
