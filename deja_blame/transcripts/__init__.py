"""Stage 1: reading agent transcripts into sessions (no SQLite, no git, no click)."""

from deja_blame.transcripts.antigravity import parse_transcript
from deja_blame.transcripts.roots import TranscriptFile, discover_roots, find_transcripts

__all__ = ["TranscriptFile", "discover_roots", "find_transcripts", "parse_transcript"]
