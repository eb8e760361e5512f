"""Line fingerprints: what blame compares between a file's lines and an edit's.

White space is removed entirely before hashing, so a reindent or a formatter
that adds or drops spaces (``f(a,b)`` -> ``f(a, b)``) still matches.
"""

from __future__ import annotations

import hashlib
import re

_WS = re.compile(r"\s+")
# Lines that say nothing on their own: blank, lone punctuation, very short.
_TRIVIAL_CHARS = 6


def normalise_line(line: str) -> str:
    return _WS.sub("", line)


def fingerprint(line: str) -> int:
    """A signed 64-bit integer (SQLite INTEGER) of the normalised line."""
    digest = hashlib.blake2b(normalise_line(line).encode("utf-8", "surrogatepass"), digest_size=8)
    return int.from_bytes(digest.digest(), "big", signed=True)


def is_trivial(line: str) -> bool:
    """Blank, punctuation only, or too short to be evidence alone (``}``, ``end``, ``pass``)."""
    norm = normalise_line(line)
    if len(norm) <= _TRIVIAL_CHARS:
        return True
    return not any(ch.isalnum() for ch in norm)
