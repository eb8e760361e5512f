"""The blobs' lines ``copies.py`` keeps for one question: counted by the memory they
take, and the least asked go first, so a sweep through a big commit's files does
not drive out the files asked again and again. Plain data: no git."""

from __future__ import annotations

import pytest

from deja_blame.attribution.facts import copies
from deja_blame.attribution.facts.copies import _Kept, held_size


def _held(n: int, width: int = 20) -> copies.Held:
    lines = [f"line{k:0{width}d}".encode() for k in range(n)]
    return frozenset(lines), b"\n" + b"\n".join(lines) + b"\n"


def _ask(kept: _Kept, spec: str, held: copies.Held) -> bool:
    """One ask as ``_lines_of`` makes it: True when it was kept."""
    if kept.get(spec) is not None:
        return True
    kept.put(spec, held)
    return False


def test_the_budget_counts_the_memory_not_the_text() -> None:
    held = _held(1000)
    assert held_size(held) > 2.5 * len(held[1])


def test_a_sweep_through_many_blobs_leaves_the_blob_asked_most(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hot = _held(100)
    monkeypatch.setattr(copies, "MEMORY_KEPT", 3 * held_size(hot))
    kept = _Kept()
    misses = 0
    for round_ in range(10):
        misses += not _ask(kept, "commit:hot.go", hot)
        for k in range(6):  # a big commit's other files, more than the budget holds
            _ask(kept, f"commit:other{k}-{round_}.go", _held(100))
    assert misses <= 2  # its first ask, and once more before it was asked more than the rest
    assert kept.size <= copies.MEMORY_KEPT


class _Scanned:
    """The policy as a scan of every kept blob at each drop: the least asked first,
    the earliest kept of those (what ``_Kept``'s heap must give)."""

    def __init__(self) -> None:
        self.held: dict[str, int] = {}
        self.asked: dict[str, int] = {}
        self.size = 0

    def get(self, spec: str) -> bool:
        self.asked[spec] = self.asked.get(spec, 0) + 1
        return spec in self.held

    def put(self, spec: str, size: int) -> None:
        self.held[spec] = size
        self.size += size
        while self.size > copies.MEMORY_KEPT and len(self.held) > 1:
            gone = min(self.held, key=lambda k: (self.asked.get(k, 0), k == spec))
            self.size -= self.held.pop(gone)


def test_the_heap_drops_what_a_scan_of_every_blob_would(monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    blobs = {f"c:{k}.go": _held(5 + k % 7 * 20) for k in range(40)}
    monkeypatch.setattr(copies, "MEMORY_KEPT", 6 * held_size(blobs["c:10.go"]))
    rng = random.Random(38)
    for _ in range(20):
        kept, scanned = _Kept(), _Scanned()
        # some blobs asked often, others swept once in a while
        names = sorted(blobs)
        asks = [rng.choice(names[: rng.randint(1, 40)]) for _ in range(600)]
        for spec in asks:
            was = scanned.get(spec)
            assert (kept.get(spec) is not None) == was
            if not was:
                kept.put(spec, blobs[spec])
                scanned.put(spec, held_size(blobs[spec]))
            assert list(kept.held) == list(scanned.held)
            assert kept.size == scanned.size
