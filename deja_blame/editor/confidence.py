"""The confidence an editor or an agent is shown for a run of one session's lines.

One rule for every surface that groups lines (the LSP's lenses and annotations,
``deja mcp``'s blame): the run's lowest, over its lines that are evidence (not
the engine's trivial lines: blank, punctuation only, or too short, ``});``,
``end``, ``pass``). Those are matched with less certainty than the code around
them, and a run that begins with one showed that line's confidence (0.79) as the
run's on one surface and the code's (0.97) on another.
"""

from __future__ import annotations

from collections.abc import Iterable

from deja_blame.attribution.model import LineAttribution
from deja_blame.index.fingerprint import is_trivial


def run_confidence(lines: Iterable[LineAttribution | None]) -> float | None:
    """The lowest confidence of the run's non-trivial lines, else of all its lines."""
    known = [ln for ln in lines if ln is not None and ln.confidence is not None]
    with_text = [ln.confidence for ln in known if not is_trivial(ln.text)]
    scores = with_text or [ln.confidence for ln in known]
    return min(s for s in scores if s is not None) if scores else None
