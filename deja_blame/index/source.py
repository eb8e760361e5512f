"""The transcript behind the index: is it still what was read, and reading lines back.

The index does not copy the agent's long texts (file bodies it viewed, command
output, its longer messages): it keeps an excerpt and the byte span of the
transcript line, and reads the full text back from there when a session is
shown or a line explained. Whether the file
is still the one that was indexed is told by the hash the ingest stores with
its offset: the first and the last ``HEAD_BYTES`` before that offset.
"""

from __future__ import annotations

from typing import IO

from deja_blame.blake2 import blake2b
from deja_blame.transcripts.antigravity.reader import planner_text, tool_output_text
from deja_blame.transcripts.jsonl import decode_line
from deja_blame.transcripts.reading import open_regular

HEAD_BYTES = 4096
READ_HASH_PREFIX = "ht:"  # head_hash column: hash of the head and tail windows before offset


def head_hash(fh: IO[bytes], length: int) -> str:
    """The first index format: a hash of the first ``length`` bytes (still accepted)."""
    fh.seek(0)
    return f"{length}:{blake2b(fh.read(length), digest_size=16).hexdigest()}"


def read_hash(fh: IO[bytes], offset: int) -> str:
    """A hash of the first and the last ``HEAD_BYTES`` before ``offset``.

    A file that was only appended to since has the same bytes there; one that
    was rewritten (same size or not) almost surely differs in one of them. For
    transcripts up to 8 KB this is every byte read.
    """
    head_len = min(offset, HEAD_BYTES)
    tail_start = max(head_len, offset - HEAD_BYTES)
    h = blake2b(digest_size=16)
    fh.seek(0)
    h.update(fh.read(head_len))
    fh.seek(tail_start)
    h.update(fh.read(offset - tail_start))
    return f"{READ_HASH_PREFIX}{h.hexdigest()}"


def same_bytes(fh: IO[bytes], offset: int, stored: str) -> bool:
    """Is the file still, up to ``offset``, what was read last time?"""
    if stored.startswith(READ_HASH_PREFIX):
        return read_hash(fh, offset) == stored
    length, _, _ = stored.partition(":")
    return length.isdigit() and head_hash(fh, int(length)) == stored


# how a message of each role is made from its transcript line (the reader's own rules)
_TEXT_OF = {"tool": tool_output_text, "assistant": planner_text}


def read_messages(
    transcript: str,
    offset: int,
    stored_hash: str | None,
    spans: list[tuple[int, int, int, str]],
) -> dict[int, str]:
    """Full text for each (start, length, characters, role) span of a message, by start.

    Spans whose text cannot be had as it was indexed are left out: the
    transcript is gone, unreadable, rewritten since (its hash before ``offset``
    differs), or the line no longer gives the same number of characters.
    """
    out: dict[int, str] = {}
    if not stored_hash or not spans:
        return out
    try:
        with open_regular(transcript) as fh:
            if not same_bytes(fh, offset, stored_hash):
                return out
            for start, length, chars, role in spans:
                text_of = _TEXT_OF.get(role)
                if text_of is None or start + length > offset:
                    continue  # past what the index read: cannot be this session's line
                fh.seek(start)
                record = decode_line(fh.read(length))
                if record is None:
                    continue
                text = text_of(record)
                if len(text) == chars:
                    out[start] = text
    except OSError:
        return out
    return out
