"""The confidence an editor or an agent is shown for a run of one session's lines.

One rule for every surface that groups lines (the LSP's lenses and annotations,
``deja mcp``'s blame): the run's lowest, over its lines with text. A blank line
or a lone bracket is matched with less certainty than the code around it, and a
run that begins with one showed that line's confidence (0.79) as the run's on
one surface and the code's (0.97) on another.
"""

from __future__ import annotations

from collections.abc import Iterable

from deja_blame.attribution.model import LineAttribution


def run_confidence(lines: Iterable[LineAttribution | None]) -> float | None:
    """The lowest confidence of the run's lines with text, else of all its lines."""
    known = [ln for ln in lines if ln is not None and ln.confidence is not None]
    with_text = [
        ln.confidence for ln in known if ln.text.strip() not in ("", "{", "}", "(", ")", "[", "]")
    ]
    scores = with_text or [ln.confidence for ln in known]
    return min(s for s in scores if s is not None) if scores else None
