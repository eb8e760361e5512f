"""Gemini CLI: ``~/.gemini/tmp/<project>/chats/session-*.json`` and ``.jsonl``."""

from deja_blame.transcripts.gemini_cli.discover import (
    AGENT,
    ROOT_ENV,
    default_roots,
    find_transcripts,
)

# The reader (``gemini_cli.reader``) is imported where a transcript is read: discovery
# (before every warm blame) does not pay for it.
__all__ = ["AGENT", "ROOT_ENV", "default_roots", "find_transcripts"]
