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
