"""Line fingerprints: what blame compares between a file's lines and an edit's.

White space is removed entirely before hashing, so a reindent or a formatter
that adds or drops spaces (``f(a,b)`` -> ``f(a, b)``) still matches.
"""

from __future__ import annotations

from deja_blame.blake2 import blake2b

# Lines that say nothing on their own: blank, lone punctuation, very short.
TRIVIAL_CHARS = 6


def normalise_line(line: str) -> str:
    # str.split() and the regex \s both use Python's Unicode white space
    # (str.isspace); split/join is about five times faster on the index's hot path.
    return "".join(line.split())


def fingerprint(line: str) -> int:
    """A signed 64-bit integer (SQLite INTEGER) of the normalised line."""
    fp = _SEEN.get(line)
    if fp is None:
        if len(_SEEN) >= _SEEN_MAX:
            _SEEN.clear()
        fp = _SEEN[line] = _hash(line)
    return fp


def _hash(line: str) -> int:
    digest = _blake2b(
        "".join(line.split()).encode("utf-8", "surrogatepass"), digest_size=8
    ).digest()
    return _from_bytes(digest, "big", signed=True)


_blake2b = blake2b
_from_bytes = int.from_bytes

# Lines repeat (blank ones, closing brackets, a file written again with one change):
# the index asks for a quarter to a half of its lines' fingerprints more than once.
_SEEN: dict[str, int] = {}
_SEEN_MAX = 65_536  # ~10 MB at most; cleared, not evicted one by one


def fingerprints(lines: list[str]) -> list[int]:
    """``[fingerprint(line) for line in lines]``, remembering recent lines' answers."""
    seen = _SEEN
    out = []
    for line in lines:
        fp = seen.get(line)
        if fp is None:
            if len(seen) >= _SEEN_MAX:
                seen.clear()
            fp = seen[line] = _hash(line)
        out.append(fp)
    return out


def is_trivial(line: str) -> bool:
    """Blank, punctuation only, or too short to be evidence alone (``}``, ``end``, ``pass``)."""
    got = _TRIVIAL.get(line)
    if got is None:
        if len(_TRIVIAL) >= _SEEN_MAX:
            _TRIVIAL.clear()
        norm = normalise_line(line)
        got = _TRIVIAL[line] = len(norm) <= TRIVIAL_CHARS or not any(ch.isalnum() for ch in norm)
    return got


# blame asks both of every line of a file, and ``deja report`` of the same file
# at each commit of a range
_TRIVIAL: dict[str, bool] = {}
