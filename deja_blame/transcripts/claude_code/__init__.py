"""Claude Code: ``${CLAUDE_CONFIG_DIR:-~/.claude}/projects/<dir>/<session>.jsonl``."""

from deja_blame.transcripts.claude_code.discover import ROOT_ENV, default_roots, find_transcripts
from deja_blame.transcripts.claude_code.reader import parse_transcript

AGENT = "claude-code"

__all__ = ["AGENT", "ROOT_ENV", "default_roots", "find_transcripts", "parse_transcript"]
