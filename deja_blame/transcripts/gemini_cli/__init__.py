"""Gemini CLI: ``~/.gemini/tmp/<project>/chats/session-*.json`` and ``.jsonl``."""

from deja_blame.transcripts.gemini_cli.discover import ROOT_ENV, default_roots, find_transcripts
from deja_blame.transcripts.gemini_cli.reader import parse_transcript

AGENT = "gemini-cli"

__all__ = ["AGENT", "ROOT_ENV", "default_roots", "find_transcripts", "parse_transcript"]
