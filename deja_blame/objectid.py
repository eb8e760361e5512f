"""Git object names of either hash: 40 hex digits (SHA-1) or 64 (SHA-256).

Nothing in deja assumes one length: a repository made with
``git init --object-format=sha256`` names its commits with 64 digits.
"""

from __future__ import annotations

import re

# one full object name, as a pattern to embed (no anchors, no groups that capture)
ID = r"[0-9a-f]{40}(?:[0-9a-f]{24})?"
_FULL = re.compile(ID)
LENGTHS = (40, 64)


def is_object_id(text: str) -> bool:
    """``text`` is a full object name (lower-case hex, SHA-1 or SHA-256 length)."""
    return _FULL.fullmatch(text) is not None


def null_id(like: str) -> str:
    """The all-zero name of the same length as ``like`` (git's "no object")."""
    return "0" * (64 if len(like) == 64 else 40)
