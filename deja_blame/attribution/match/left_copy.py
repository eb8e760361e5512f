"""A copy of a text left to nobody because its own write was given to another copy.

Writes older than a line's commit window are served longest run first, then the
latest (``lines.rank_of``): the order never asks where each write landed, so
two edits of one session with runs of one length over two copies of a text can
both reach the first copy, and the later edit takes it. Its own copy is then
left to nobody: the earlier edit's write, which should have had the first copy,
is far from the second (entireio ``phase_transitions_test.go``, 4c20622e: one
guard put at two places, the first edit with its comment line above, the second
52 lines below with the ``}`` it closes, both before the commit's parent).

Ordering every older write by where it landed found that copy, but moved lines
it had given right: where other evidence (a block's chain, the moved-lines pass)
had chosen among equal runs, nearness took over, and lines went to another edit
or to nobody. So the order stays, and only a copy left to nobody is looked at:
``give_left_copies`` gives it the write that landed nearer it than at the copy
holding it, when another write of the same session, as strong there and nearer
there than here, is free for that copy. Both copies stay the session's; the
copy that had a line keeps one; only a line that had none gains one.
"""

from __future__ import annotations

from collections.abc import Callable

from deja_blame.attribution.facts.model import Key


def give_left_copies(
    chosen: list[tuple[Key, int] | None],
    runs: list[dict[Key, tuple[int, int, int]]],
    fps: list[int],
    repeated: list[bool],
    used: set[Key],
    distance: Callable[[int, Key], int],
    older: Callable[[int, Key], bool],
) -> list[int]:
    """Give lines left to nobody (``chosen[j] is None``) whose text the file holds
    more than once the write another copy holds, where (all of):

    - line ``j``'s run with that write is at least as long as the run it holds
      at its copy ``i``, and the write landed nearer ``j`` (``distance``);
    - another write of the same session, free (not in ``used``), has a run at
      ``i`` at least as long and landed nearer ``i`` than ``j``: ``i`` takes it;
    - both writes are usable where they go and older than the line's commit
      window (``older(line, key)``: the order that placed them did not weigh
      where they landed; a write in the window was placed by it).

    ``chosen`` and ``used`` are updated; returns the lines given."""
    holder = {pick[0]: i for i, pick in enumerate(chosen) if pick is not None}
    given = []
    for j, pick in enumerate(chosen):
        if pick is not None or not repeated[j]:
            continue
        held_here = [(key, found[0]) for key, found in runs[j].items() if key in holder]
        for key, run_j in sorted(held_here, key=lambda kv: distance(j, kv[0])):
            i = holder[key]
            if fps[i] != fps[j]:
                continue
            held = chosen[i]
            if held is None or held[0] != key or run_j < held[1]:
                continue
            if distance(j, key) >= distance(i, key) or not older(j, key):
                continue
            alt = _nearer_write(i, j, key[0], held[1], runs[i], used, distance, older)
            if alt is None:
                continue
            chosen[i] = (alt, runs[i][alt][0])
            chosen[j] = (key, run_j)
            used.add(alt)
            holder[alt] = i
            holder[key] = j
            given.append(j)
            break
    return given


def _nearer_write(
    i: int,
    j: int,
    sid: int,
    run: int,
    found: dict[Key, tuple[int, int, int]],
    used: set[Key],
    distance: Callable[[int, Key], int],
    older: Callable[[int, Key], bool],
) -> Key | None:
    """The free write of session ``sid`` nearest line ``i`` with a run there of at
    least ``run``, that landed nearer ``i`` than ``j``, usable at ``i``."""
    best: tuple[int, Key] | None = None
    for key, (length, _, _) in found.items():
        if key[0] != sid or key in used or length < run:
            continue
        here = distance(i, key)
        if here >= distance(j, key) or (best is not None and here >= best[0]):
            continue
        if older(i, key):
            best = (here, key)
    return None if best is None else best[1]
