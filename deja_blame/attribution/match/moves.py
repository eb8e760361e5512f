"""Stage 2 of the moves rule: a block a person moved here from another file keeps
its session.

Stage 1 (``facts/moved.py``) found which lines the other rules left unmatched
came from another file, and where, and read the writes to those files; the
matcher then matches those lines as it matches any (``match.match_moved``), as
their blame where they came from says. Here: which of those matches stand.
Moved lines are less certain than lines matched in place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deja_blame.attribution.facts.model import MOVED_BLOCK
from deja_blame.attribution.match.scaffolding import is_comment, is_distinctive

if TYPE_CHECKING:
    from deja_blame.attribution.model import LineAttribution

MOVED_CONFIDENCE = 0.9  # of a line matched in place


def keep_blocks(
    lines: list[LineAttribution], trivial: list[bool], moved: list[bool], left_file: list[bool]
) -> None:
    """A session keeps the lines it was given as moved here only where at least
    ``MOVED_BLOCK`` different lines of its own moved here that say who wrote them:
    lines whose text left the file the session wrote them in (a move), or
    distinctive lines (``scaffolding.py``). One ``import re`` that arrived with a
    person's new code is a line that happens to recur; so are the imports, the
    fixture and the short asserts a person types into a new test file that a
    session once wrote into another (git blame -C finds them all the same)."""
    texts: dict[str, set[str]] = {}
    for k, ln in enumerate(lines):
        if moved[k] and ln.session is not None and ln.via == "index" and not trivial[k]:
            if left_file[k] or (is_distinctive(ln.text) and not is_comment(ln.text)):
                texts.setdefault(ln.session, set()).add(ln.text.strip())
    for k, ln in enumerate(lines):
        if moved[k] and ln.via == "index" and len(texts.get(ln.session or "", ())) < MOVED_BLOCK:
            ln.session = ln.source = ln.written_at = None
            ln.confidence = None
            ln.edit_ord = None
            ln.via = None


def less_certain(lines: list[LineAttribution], moved: list[bool]) -> None:
    """Moved lines are less certain than lines matched in place."""
    for k, ln in enumerate(lines):
        if moved[k] and ln.session is not None and ln.confidence is not None:
            ln.confidence = round(ln.confidence * MOVED_CONFIDENCE, 2)
