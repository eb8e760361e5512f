"""When each record of a transcript that records no times was first seen.

Cursor's, Windsurf's and Continue's transcripts carry no times: a record is
dated by the file's modification time. A chat that goes on after a commit moves
that time past the commit, and the edits the commit took would look later than
it. So the index keeps, per session, the time each record was first seen (a
64-bit hash of the record, and which occurrence of it) and a record it has seen
keeps that time when the file is read again, grown or rewritten. A record not
seen before takes the file's time now. ``deja index --rebuild`` reads every
transcript again and takes these times from the old index (``index.ingest.keep_first_seen``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from deja_blame.blake2 import blake2b
from deja_blame.transcripts.text import epoch_of


class FirstSeen:
    """The time to give each record of one reading of a transcript."""

    def __init__(self, now: str | None, known: Mapping[str, Any] | None = None) -> None:
        self.now = now  # the file's modification time: the time of records never seen
        self._known: dict[int, str] = {}
        for at, keys in (known or {}).items():
            if isinstance(at, str) and isinstance(keys, list):
                for key in keys:
                    if isinstance(key, int) and not isinstance(key, bool):
                        self._known[key] = at
        self._counts: dict[bytes, int] = {}
        self._seen: dict[str, list[int]] = {}  # this reading's records, by their time

    def at(self, record: object) -> str | None:
        """The time ``record`` was first seen: when it was seen before, that time
        (the earlier of it and now), else now."""
        key = self._key(record)
        before = self._known.get(key)
        at = self.now if before is None else _earlier(before, self.now)
        if at is not None:
            self._seen.setdefault(at, []).append(key)
        return at

    def to_state(self) -> dict[str, list[int]]:
        """Every record of this reading as ``{time: [key, ...]}`` (for the next reading)."""
        return self._seen

    def _key(self, record: object) -> int:
        """A record's hash with which occurrence of it this is (a record a transcript
        holds twice, the same edit made again later, is two records)."""
        try:
            data = orjson.dumps(record, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            data = repr(record).encode("utf-8", "backslashreplace")
        digest = blake2b(data, digest_size=8).digest()
        n = self._counts.get(digest, 0)
        self._counts[digest] = n + 1
        if n:
            digest = blake2b(digest + n.to_bytes(8, "little"), digest_size=8).digest()
        return int.from_bytes(digest, "little") >> 1  # 63 bits: a JSON integer everywhere


def _earlier(before: str, now: str | None) -> str:
    if now is None:
        return before
    a, b = epoch_of(before), epoch_of(now)
    return now if a is None or (b is not None and b < a) else before
