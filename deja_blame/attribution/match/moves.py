"""Stage 2 of the moves rule: a block a person moved here from another file keeps
its session.

Stage 1 (``facts/moved.py``) found which lines the other rules left unmatched
came from another file, and where, and read the writes to those files; the
matcher then matches those lines as it matches any (``match.match_moved``), as
their blame where they came from says. Here: which of those matches stand.
Moved lines are less certain than lines matched in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from deja_blame.attribution.facts.model import MOVED_BLOCK
from deja_blame.attribution.match.scaffolding import is_comment, is_distinctive

if TYPE_CHECKING:
    from deja_blame.attribution.model import LineAttribution

MOVED_CONFIDENCE = 0.9  # of a line matched in place


def block_texts(
    lines: list[LineAttribution], trivial: list[bool], moved: list[bool], left_file: list[bool]
) -> dict[str, set[str]]:
    """Each session's different texts among the lines given it as moved here that
    say who wrote them: lines whose text left the file the session wrote them in (a
    move), or distinctive lines (``scaffolding.py``)."""
    texts: dict[str, set[str]] = {}
    for k, ln in enumerate(lines):
        if moved[k] and ln.session is not None and ln.via == "index" and not trivial[k]:
            if left_file[k] or (is_distinctive(ln.text) and not is_comment(ln.text)):
                texts.setdefault(ln.session, set()).add(ln.text.strip())
    return texts


def keep_blocks(
    lines: list[LineAttribution],
    trivial: list[bool],
    moved: list[bool],
    left_file: list[bool],
    whole: Mapping[str, set[int]] | None = None,
) -> None:
    """A session keeps the lines it was given as moved here only where at least
    ``MOVED_BLOCK`` different lines of its own moved here that say who wrote them
    (``block_texts``). One ``import re`` that arrived with a person's new code is a
    line that happens to recur; so are the imports, the fixture and the short
    asserts a person types into a new test file that a session once wrote into
    another (git blame -C finds them all the same).

    The count is the whole file's. A window (``deja why``, ``blame -L``) sees a few
    of a session's moved lines: where they fall short, a line keeps its session
    only where the whole file's answer gives it that session (``whole``: session ->
    the file's lines it is given, made by stage 1 at the first ask, since it costs
    the whole file's answer). Counting the window's lines alone dropped what the
    whole file keeps (entireio ``transcript/parse.go``: the session's imports moved
    70 lines above); adding the whole file's count to a window that matched a moved
    line to another writer than the whole file did gave it a session the file does
    not (``reset.go``)."""
    texts = block_texts(lines, trivial, moved, left_file)
    for k, ln in enumerate(lines):
        if not (moved[k] and ln.via == "index"):
            continue
        if len(texts.get(ln.session or "", ())) >= MOVED_BLOCK:
            continue
        if whole is not None and ln.session and ln.line in whole.get(ln.session, ()):
            continue  # short here, but the whole file gives it this session
        ln.session = ln.source = ln.written_at = None
        ln.confidence = None
        ln.edit_ord = None
        ln.via = None


def less_certain(lines: list[LineAttribution], moved: list[bool]) -> None:
    """Moved lines are less certain than lines matched in place."""
    for k, ln in enumerate(lines):
        if moved[k] and ln.session is not None and ln.confidence is not None:
            ln.confidence = round(ln.confidence * MOVED_CONFIDENCE, 2)
