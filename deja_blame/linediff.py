"""Which lines of one version of a file are still there in another, and where.

git's own diff (libgit2's copy of xdiff, patience mode: lines unique on both
sides anchor the match, the rest is diffed between them with xdiff's bounded
Myers) instead of ``difflib.SequenceMatcher(autojunk=False)``, which is
quadratic in lines that repeat: on a 30,000-line lockfile it took 13 s to map a
note onto an amended commit, where this takes 0.05 s. The common head and tail
are matched first, so an edit in a long file diffs only the part that changed,
and a small middle (at most ``SMALL`` pairs of lines) goes to difflib, whose
answers there are what deja always gave (and which needs no pygit2: a warm
``deja why`` never imports it).
"""

from __future__ import annotations

from collections.abc import Iterator

SMALL = 40_000  # old x new lines that difflib may compare: 200 x 200, a few ms at worst


def equal_runs(old: list[str], new: list[str]) -> Iterator[tuple[int, int, int]]:
    """(old start, new start, length), 0-based, of the runs of lines the two share
    in order, ascending (as ``SequenceMatcher.get_matching_blocks`` without its
    closing empty block)."""
    n, m = len(old), len(new)
    lo = 0
    while lo < n and lo < m and old[lo] == new[lo]:
        lo += 1
    hi = 0
    while hi < n - lo and hi < m - lo and old[n - 1 - hi] == new[m - 1 - hi]:
        hi += 1
    if lo:
        yield 0, 0, lo
    if lo + hi < n and lo + hi < m:
        yield from _middle(old[lo : n - hi], new[lo : m - hi], lo)
    if hi:
        yield n - hi, m - hi, hi


def _middle(old: list[str], new: list[str], offset: int) -> Iterator[tuple[int, int, int]]:
    if len(old) * len(new) <= SMALL:
        from difflib import SequenceMatcher  # (loaded only where a middle is compared)

        matcher = SequenceMatcher(None, old, new, autojunk=False)
        for a, b, size in matcher.get_matching_blocks():
            if size:
                yield offset + a, offset + b, size
        return
    import pygit2

    patch = pygit2.Patch.create_from(
        _text(old),
        _text(new),
        context_lines=0,
        flag=pygit2.enums.DiffOption.PATIENCE | pygit2.enums.DiffOption.FORCE_TEXT,
    )
    a = b = 0  # next line (0-based) of each side not yet placed
    for hunk in patch.hunks:
        # with no context, a hunk of no old lines starts after old_start (git's convention)
        first_old = hunk.old_start - 1 if hunk.old_lines else hunk.old_start
        same = first_old - a
        if same > 0:
            yield offset + a, offset + b, same
        a = first_old + hunk.old_lines
        b += same + hunk.new_lines
    if a < len(old) and len(old) - a == len(new) - b:
        yield offset + a, offset + b, len(old) - a


def _text(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape")


def line_mapping(old: list[str], new: list[str]) -> dict[int, int]:
    """1-based old line -> new line, for the lines the two share in order."""
    out: dict[int, int] = {}
    for a, b, size in equal_runs(old, new):
        for k in range(1, size + 1):
            out[a + k] = b + k
    return out


def aligned(old: list[str], new: list[str]) -> list[int | None]:
    """For each line of ``new``, the line of ``old`` (0-based) it is, or None where it is new."""
    out: list[int | None] = [None] * len(new)
    for a, b, size in equal_runs(old, new):
        for k in range(size):
            out[b + k] = a + k
    return out
