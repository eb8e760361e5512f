"""The rowid of an indexed message: its session's row id, then its ordinal.

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
