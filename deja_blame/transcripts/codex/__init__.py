"""OpenAI Codex CLI: ``${CODEX_HOME:-~/.codex}/sessions/YYYY/MM/DD/rollout-*.jsonl``."""

from deja_blame.transcripts.codex.discover import ROOT_ENV, default_roots, find_transcripts
from deja_blame.transcripts.codex.reader import parse_transcript

AGENT = "codex"

__all__ = ["AGENT", "ROOT_ENV", "default_roots", "find_transcripts", "parse_transcript"]
