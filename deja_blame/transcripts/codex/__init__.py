"""OpenAI Codex CLI: ``${CODEX_HOME:-~/.codex}/sessions/YYYY/MM/DD/rollout-*.jsonl``."""

from typing import Any

from deja_blame.transcripts.codex.discover import ROOT_ENV, default_roots, find_transcripts

AGENT = "codex"


def __getattr__(name: str) -> Any:
    # the reader is imported on first use: discovery (every warm blame) does not pay for it
    if name == "parse_transcript":
        from deja_blame.transcripts.codex.reader import parse_transcript

        return parse_transcript
    raise AttributeError(name)


__all__ = ["AGENT", "ROOT_ENV", "default_roots", "find_transcripts", "parse_transcript"]
