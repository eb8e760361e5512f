"""OpenAI Codex CLI: ``${CODEX_HOME:-~/.codex}/sessions/YYYY/MM/DD/rollout-*.jsonl``."""

from deja_blame.transcripts.codex.discover import AGENT, ROOT_ENV, default_roots, find_transcripts

# The reader (``codex.reader``) is imported where a transcript is read: discovery
# (before every warm blame) does not pay for it.
__all__ = ["AGENT", "ROOT_ENV", "default_roots", "find_transcripts"]
