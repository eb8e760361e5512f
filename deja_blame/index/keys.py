"""The rowid of an indexed message (its session's row id, then its ordinal) and its role's code.

A leaf of ``index/``: the store (``store.py``) and the database (``db.py``) both
key messages so, and neither imports the other for it.
"""

from __future__ import annotations

MESSAGE_ORD_BITS = 32  # a message's rowid: its session's sid, then this many bits of ordinal


def message_id(sid: int, ordinal: int) -> int:
    """The rowid of session ``sid``'s message ``ordinal`` (schema 9 on)."""
    return (sid << MESSAGE_ORD_BITS) | ordinal


def message_ids(sid: int) -> tuple[int, int]:
    """The first and last rowid session ``sid``'s messages can have: ``id BETWEEN``."""
    return sid << MESSAGE_ORD_BITS, ((sid + 1) << MESSAGE_ORD_BITS) - 1


# A message's role as the index keeps it (schema 13): a letter for each role the
# readers give, 3-9 bytes less on every row (0.2 MB of the bench root's 18); a role
# not listed is kept as its name. SQL that picks a role asks for its code.
ROLE_CODES = {"user": "u", "assistant": "a", "tool": "t"}
ROLE_NAMES = {code: role for role, code in ROLE_CODES.items()}


def role_code(role: str) -> str:
    """What ``messages.role`` holds for ``role``."""
    return ROLE_CODES.get(role, role)


def role_name(stored: str) -> str:
    """The role a ``messages.role`` value stands for."""
    return ROLE_NAMES.get(stored, stored)
