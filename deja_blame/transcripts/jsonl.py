"""Reading JSONL from a byte offset: complete lines only, malformed ones counted.

A line is *complete* when it ends with a newline. A last line without one is
usually being written right now: the index leaves it unconsumed (its offset
stays before it) and reads it again once complete, unless it already parses as
a whole JSON object (a writer that never ends its last line).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

import orjson

from deja_blame.transcripts.reading import too_many_containers
from deja_blame.transcripts.text import record_epoch

CHUNK_BYTES = 8 * 1024 * 1024  # lines read per batch; bounds memory on huge transcripts
# A line longer than this is skipped and counted as malformed, read past in pieces
# and never held whole: no client writes one (messages are capped at 1 MiB), and
# a 2 GB line would take gigabytes to decode.
MAX_LINE_BYTES = 64 * 1024 * 1024
BIG_LINE = 1 << 20  # a line longer than this has its objects counted before it is decoded


@dataclass
class LineBatch:
    """Decoded lines, in file order: ``records[i]`` came from bytes ``spans[i]``."""

    records: list[dict[str, Any] | None]  # None: malformed (skip and count)
    spans: list[tuple[int, int]]  # (start, end) byte offsets of each line
    end_offset: int  # the byte just after the last line read (blank ones included)


def iter_batches(
    fh: IO[bytes], start: int, final: bool, batch_bytes: int = CHUNK_BYTES
) -> Iterator[LineBatch]:
    """Batches of decoded lines from ``start``.

    ``final`` (a one-shot parse) means an unfinished last line is malformed and
    counted; otherwise it is left for the next run unless it parses.
    """
    # Plain lists, not an object per line: this loop runs once per transcript line.
    fh.seek(start)
    offset = start
    records: list[dict[str, Any] | None] = []
    spans: list[tuple[int, int]] = []
    size = 0
    limit = MAX_LINE_BYTES
    while True:
        raw = fh.readline(limit)
        if not raw:
            break
        if len(raw) >= limit and not raw.endswith(b"\n"):
            length, done = _skip_rest_of_line(fh, len(raw), limit)
            if not done and not final:
                break  # an oversized line still being written: its end decides later
            spans.append((offset, offset + length))
            records.append(None)  # too long: malformed, counted by the reader
            offset += length
            continue
        end = offset + len(raw)
        # one line of millions of empty objects would decode to gigabytes
        record = None if len(raw) > BIG_LINE and too_many_containers(raw) else decode_line(raw)
        if record is None:
            if not final and not raw.endswith(b"\n"):
                break  # half written: read again once complete
            if not raw.strip():
                offset = end
                continue  # blank line: nothing, and not malformed
        spans.append((offset, end))
        records.append(record)
        offset = end
        size += len(raw)
        if size >= batch_bytes:
            yield LineBatch(records, spans, end)
            records, spans, size = [], [], 0
    if records:
        yield LineBatch(records, spans, offset)


def _skip_rest_of_line(fh: IO[bytes], length: int, limit: int) -> tuple[int, bool]:
    """Read past the rest of an oversized line; its whole length, and whether it ended."""
    while True:
        more = fh.readline(limit)
        length += len(more)
        if not more:
            return length, False
        if more.endswith(b"\n"):
            return length, True


def decode_line(raw: bytes) -> dict[str, Any] | None:
    """One line -> its JSON object, or None when it is not one (invalid JSON or UTF-8, not an object)."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


class WholeFile:
    """Every complete record of a JSON Lines file, from its start; malformed lines are
    counted in ``skipped``, a half-written last line is left for the next read.

    What the readers of whole transcripts (Claude Code, Codex, Gemini CLI) iterate.
    """

    def __init__(self, path: str | bytes | os.PathLike[str]) -> None:
        self.path = path
        self.skipped = 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        from deja_blame.transcripts.reading import (
            LINES_BUFFER,
            check_line_count,
            max_transcript_bytes,
            open_regular,
            too_large,
        )

        limit = max_transcript_bytes()
        with open_regular(self.path, LINES_BUFFER) as fh:
            # the reader keeps the session it builds in memory: bounded like a document
            if os.fstat(fh.fileno()).st_size > limit:
                raise too_large(limit)
            check_line_count(fh, 0)
            for batch in iter_batches(fh, 0, final=False):
                for record in batch.records:
                    if record is None:
                        self.skipped += 1
                    else:
                        yield record


def with_extras(
    batches: Iterable[LineBatch], extra: list[dict[str, Any]], start: int = 0
) -> Iterator[tuple[LineBatch, list[dict[str, Any] | None], list[tuple[int, int] | None]]]:
    """Each batch of the primary file as ``(batch, records, spans)``, the extra records
    (lines only another file of the session holds) put in by their ``created_at``:
    each before the first line of the primary written after it, those later
    than a batch in the next one (the last batch takes the rest). The reader
    then meets every line in the order it was written (a rewind where it
    happened). An extra record has no span in the primary file."""
    pending = deque(sorted(extra, key=lambda r: _time_or(r, float("-inf"))))
    batch_list = iter(batches)
    current = next(batch_list, None)
    if current is None:
        if pending:  # the primary holds nothing yet: the extra records alone
            yield LineBatch([], [], start), list(pending), [None] * len(pending)
        return
    while current is not None:
        upcoming = next(batch_list, None)
        if not pending:
            # nothing to put in (the common case: one file per session): the batch as
            # it is, without a time parse of each of its records
            yield current, list(current.records), list[tuple[int, int] | None](current.spans)
            current = upcoming
            continue
        records: list[dict[str, Any] | None] = []
        spans: list[tuple[int, int] | None] = []
        last = float("-inf")
        for rec, span in zip(current.records, current.spans):
            if rec is not None:
                last = _time_or(rec, last)
                while pending and _time_or(pending[0], last) < last:
                    records.append(pending.popleft())
                    spans.append(None)
            records.append(rec)
            spans.append(span)
        if upcoming is None and pending:
            spans += [None] * len(pending)
            records += pending
            pending.clear()
        yield current, records, spans
        current = upcoming


def _time_or(rec: dict[str, Any], default: float) -> float:
    epoch = record_epoch(rec.get("created_at"))
    return default if epoch is None else epoch
