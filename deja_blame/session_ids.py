"""A session's id as people see it (its first characters) and found again from them.

Aider and SpecStory histories carry no id of their own: their readers name a session
``<agent>-<digest>``. Cut to its first eight characters such an id is the agent's name
and two or three digits (``aider-da``: 256 values, which two repositories' histories
share often), so the short form is the digest's first characters, and a prefix of
the digest finds the session as a prefix of the whole id does."""

from __future__ import annotations

# The readers that make an id from a digest (transcripts/aider, transcripts/specstory).
DIGEST_NAMED = ("aider-", "specstory-")
SHOWN = 8  # characters of an id a column shows, as git shows a commit's


def short(session_id: str) -> str:
    """The id's first characters as blame, why, reports and editors show them."""
    for named in DIGEST_NAMED:
        if session_id.startswith(named) and len(session_id) > len(named):
            return session_id[len(named) : len(named) + SHOWN]
    return session_id[:SHOWN]


def has_prefix(session_id: str, prefix: str) -> bool:
    """Whether ``prefix`` is how the id begins, or how its digest begins (what
    ``short`` showed); every id has the prefix ``""``."""
    if session_id.startswith(prefix):
        return True
    return any(
        session_id.startswith(named) and session_id.startswith(prefix, len(named))
        for named in DIGEST_NAMED
    )


def like_patterns(prefix: str) -> list[str]:
    """SQL LIKE patterns (escaped with ``\\``) of the ids ``has_prefix`` accepts."""
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    return [escaped, *(named + escaped for named in DIGEST_NAMED)]
