"""Claude Code: ``${CLAUDE_CONFIG_DIR:-~/.claude}/projects/<dir>/<session>.jsonl``."""

from deja_blame.transcripts.claude_code.discover import (
    AGENT,
    ROOT_ENV,
    default_roots,
    find_transcripts,
)

# The reader (``claude_code.reader``) is imported where a transcript is read: discovery
# (before every warm blame) does not pay for it.
__all__ = ["AGENT", "ROOT_ENV", "default_roots", "find_transcripts"]
