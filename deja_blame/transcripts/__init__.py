"""Stage 1: reading agent transcripts into sessions (no SQLite, no git, no click)."""

from typing import Any

from deja_blame.transcripts.antigravity.discover import (
    TranscriptFile,
    discover_roots,
    find_transcripts,
)

__all__ = ["TranscriptFile", "discover_roots", "find_transcripts", "parse_transcript"]


def __getattr__(name: str) -> Any:
    # The reader is imported on first use: discovering roots (every warm
    # ``deja blame``) does not pay for it.
    if name == "parse_transcript":
        from deja_blame.transcripts.antigravity.reader import parse_transcript

        return parse_transcript
    raise AttributeError(name)
