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


# 1,000 blocks of 64 KB from the C heap (below malloc's mmap threshold), all freed
# but the last, which keeps the heap from shrinking at its top by itself; then the
# resident pages before and after a trim
_HOLES = """
import ctypes, os
from deja_blame.arenas import trim
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
blocks = [libc.malloc(64 << 10) for _ in range(1000)]
for b in blocks:
    ctypes.memset(b, 1, 64 << 10)
for b in blocks[:-1]:
    libc.free(b)
before = resident()
trim()
print(before - resident())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc only")
def test_a_trim_gives_the_heaps_free_pages_back() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _HOLES], capture_output=True, text=True, check=True
    )
    assert int(proc.stdout) > 32 << 20  # of the 64 MB freed
