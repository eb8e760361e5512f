"""The matcher's writes as plain data, for the tests of its rules (no index, no git)."""

from __future__ import annotations

from deja_blame.attribution.facts import model as writes_mod
from deja_blame.index.fingerprint import fingerprint


def write_set(edits: list[tuple[int, int, float, list[str]]]) -> writes_mod.WriteSet:
    """(session, edit, time, added lines) -> the WriteSet of one exact path."""
    rows = [
        (1, fingerprint(t), sid, edit, idx, at, 0)
        for sid, edit, at, added in edits
        for idx, t in enumerate(added)
    ]
    ws = writes_mod.WriteSet()
    ws.add_rows(sorted(rows, key=lambda r: r[:5]), {1: True})
    return ws
