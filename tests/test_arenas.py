"""The commands that blame on threads share few malloc arenas (``deja_blame/arenas.py``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

# Eight threads, alive together, each allocating with the C library's malloc; then
# glibc's own count of its arenas (malloc_stats writes "Arena N:" per arena to stderr).
_PROGRAM = """
import ctypes, sys, threading
if sys.argv[1] == "few":
    from deja_blame.arenas import few_arenas
    few_arenas()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
barrier = threading.Barrier(8)
def work():
    libc.malloc(4096)
    barrier.wait()
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
if hasattr(libc, "malloc_stats"):  # glibc's; another C library has none
    libc.malloc_stats()
"""


def _arenas(mode: str) -> int:
    proc = subprocess.run(
        [sys.executable, "-c", _PROGRAM, mode], capture_output=True, text=True, check=True
    )
    return sum(1 for row in proc.stderr.splitlines() if row.startswith("Arena "))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc only")
def test_threads_share_two_arenas() -> None:
    many = _arenas("each")
    if many == 0:
        pytest.skip("not glibc: no malloc_stats")
    assert many > 2  # each thread its own arena by default
    assert _arenas("few") == 2
