"""Reading JSONL from a byte offset: complete lines only, malformed ones counted.

A line is *complete* when it ends with a newline. A last line without one is
usually being written right now: the index leaves it unconsumed (its offset
stays before it) and reads it again once complete, unless it already parses as
a whole JSON object (a writer that never ends its last line).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

import orjson

CHUNK_BYTES = 8 * 1024 * 1024  # lines read per batch; bounds memory on huge transcripts


@dataclass
class RawLine:
    record: dict[str, Any] | None  # None: malformed (skip and count)
    end_offset: int  # byte offset just after this line
    start_offset: int = 0  # byte offset of its first byte: the index reads it back from there


def iter_batches(
    fh: IO[bytes], start: int, final: bool, batch_bytes: int = CHUNK_BYTES
) -> Iterator[list[RawLine]]:
    """Batches of decoded lines from ``start``.

    ``final`` (a one-shot parse) means an unfinished last line is malformed and
    counted; otherwise it is left for the next run unless it parses.
    """
    fh.seek(start)
    offset = start
    batch: list[RawLine] = []
    size = 0
    for raw in fh:
        end = offset + len(raw)
        complete = raw.endswith(b"\n")
        record = decode_line(raw)
        if not complete and record is None and not final:
            break  # half written: read again once complete
        offset = end
        if record is None and not raw.strip():
            continue  # blank line: nothing, and not malformed
        batch.append(RawLine(record=record, end_offset=end, start_offset=end - len(raw)))
        size += len(raw)
        if size >= batch_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def decode_line(raw: bytes) -> dict[str, Any] | None:
    """One line -> its JSON object, or None when it is not one (invalid JSON or UTF-8, not an object)."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
