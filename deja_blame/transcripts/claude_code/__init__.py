"""Claude Code: ``${CLAUDE_CONFIG_DIR:-~/.claude}/projects/<dir>/<session>.jsonl``."""

from typing import Any

from deja_blame.transcripts.claude_code.discover import ROOT_ENV, default_roots, find_transcripts

AGENT = "claude-code"


def __getattr__(name: str) -> Any:
    # the reader is imported on first use: discovery (every warm blame) does not pay for it
    if name == "parse_transcript":
        from deja_blame.transcripts.claude_code.reader import parse_transcript

        return parse_transcript
    raise AttributeError(name)


__all__ = ["AGENT", "ROOT_ENV", "default_roots", "find_transcripts", "parse_transcript"]
