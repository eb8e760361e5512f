"""The line alignment git blame computes, in process: which lines of a new text
are unchanged from an old one.

git blame passes a commit's lines to its parent where its diff of the two
texts leaves them unchanged, and moves or copies a block where its diff of the
block's lines against another file does (``blame.c``: ``pass_blame_to_parent``,
``find_copy_in_blob``). Both diffs are xdiff's, through ``xdi_diff`` with no
context lines, Myers' alignment with the indent heuristic (``diff.indentHeuristic``,
on by default; blame honours no other diff setting of git 2.39). pygit2's libgit2
vendors the same xdiff, so ``Patch.create_from`` aligns as git does, except for
one step of git's own: with no context lines ``xdi_diff`` first cuts the two
texts' common tail, in 1024-byte blocks then back to a line's end
(``trim_common_tail``), and where a text repeats lines that cut changes which
copy a changed line is aligned with. ``blame_hunks`` cuts it the same way.

Checked equal to ``git diff -U0`` (the same ``xdi_diff``) on every modified
file of click's, express's and entireio's histories, and to ``git diff
--no-index -U0`` in ``tests/test_alignment.py``. The caller checks that no
diff configuration changes git's alignment (``gitread.plain_diff``).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported on first use: loading libgit2 costs more than a line's blame
    from pygit2.enums import DiffOption

# (old start, old count, new start, new count) of one changed stretch, 0-based:
# the arguments xdiff gives blame's hunk callbacks (a stretch that adds lines only
# starts before old line ``old start``; one that removes only, before new line
# ``new start``)
Hunk = tuple[int, int, int, int]

_BLOCK = 1024  # git's xdiff-interface.c trim_common_tail
_FLAGS: DiffOption | None = None  # INDENT_HEURISTIC | FORCE_TEXT, set on first use


def blame_hunks(old: bytes, new: bytes) -> list[Hunk]:
    """The changed stretches of ``old`` -> ``new`` as git blame's diff sees them."""
    global _FLAGS
    import pygit2
    from pygit2.enums import DiffOption

    if _FLAGS is None:
        _FLAGS = DiffOption.INDENT_HEURISTIC | DiffOption.FORCE_TEXT
    old, new = _trim_common_tail(old, new)
    patch = pygit2.Patch.create_from(old, new, flag=_FLAGS, context_lines=0, interhunk_lines=0)
    got: list[Hunk] = []
    for h in patch.hunks:
        # a patch's headers are 1-based, except an empty side's: the line before
        a = h.old_start - 1 if h.old_lines else h.old_start
        b = h.new_start - 1 if h.new_lines else h.new_start
        got.append((a, h.old_lines, b, h.new_lines))
    return got


def _trim_common_tail(a: bytes, b: bytes) -> tuple[bytes, bytes]:
    """git's ``trim_common_tail``: the texts without the common tail it cuts."""
    trimmed = 0
    smaller = min(len(a), len(b))
    la, lb = len(a), len(b)
    while (
        _BLOCK + trimmed <= smaller
        and a[la - trimmed - _BLOCK : la - trimmed] == b[lb - trimmed - _BLOCK : lb - trimmed]
    ):
        trimmed += _BLOCK
    if not trimmed:
        return a, b
    # give back the cut's first line, up to and with its newline
    start = la - trimmed
    nl = a.find(b"\n", start, la)
    recovered = trimmed if nl < 0 else nl - start + 1
    cut = trimmed - recovered
    return a[: la - cut], b[: lb - cut]


# Pairs whose alignment git 2.39 gives as here, each answered otherwise by an
# xdiff without the indent heuristic or with another slide of repeated lines.
_KNOWN: tuple[tuple[bytes, bytes, list[Hunk]], ...] = (
    (b"\n\n{\n", b"\n\n{\n}\n\n{\n", [(2, 0, 2, 3)]),
    (b"}\n\n}\n\n}\n", b"}\n\n}\n\nx\n}\n\n}\n", [(4, 0, 4, 3)]),
)


@functools.cache
def aligns_as_git() -> bool:
    """Whether the installed libgit2 aligns the known pairs as git does: pygit2's
    floor is older than the versions this module was checked on, and an xdiff that
    aligns otherwise must leave the question to git's own ``-C``, not answer it."""
    try:
        return all(blame_hunks(old, new) == want for old, new, want in _KNOWN)
    except Exception:  # an older pygit2 without a flag, or without Patch.create_from
        return False
