"""OpenAI Codex CLI: ``${CODEX_HOME:-~/.codex}/sessions/YYYY/MM/DD/rollout-*.jsonl``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from deja_blame.transcripts.agent import BY_CONTENT, BY_NAME, Agent, Handoff, Sniffed
from deja_blame.transcripts.codex.discover import AGENT, ROOT_ENV, default_roots, find_transcripts
from deja_blame.transcripts.transcript_file import TranscriptFile

if TYPE_CHECKING:  # the reader is imported where a transcript is read: discovery
    # (before every warm blame) does not pay for it
    from deja_blame.models import Session
    from deja_blame.transcripts.agent import Reader
    from deja_blame.transcripts.reading import ReaderState

_RECORD_TYPES = ("session_meta", "response_item", "turn_context", "event_msg")


def _read(tf: TranscriptFile) -> Session:
    from deja_blame.transcripts.codex.reader import parse_transcript

    return parse_transcript(tf.path, tf.session_id)


def _resume(tf: TranscriptFile, state: ReaderState | None) -> Reader:
    """Its transcripts only grow (JSON Lines appended to)."""
    from deja_blame.transcripts.builder import BatchReader
    from deja_blame.transcripts.codex.reader import resume

    other = state.other if state is not None else None
    skipped = state.skipped if state is not None else 0
    return BatchReader(resume(other, tf.session_id, str(tf.path.resolve())), skipped)


def _sniff(s: Sniffed) -> int:
    if s.path.name.startswith("rollout-") and s.path.name.endswith(".jsonl"):
        return BY_NAME
    for rec in s.records:
        if "payload" in rec and rec.get("type") in _RECORD_TYPES:
            return BY_CONTENT
    return 0


PLUGIN = Agent(
    id=AGENT,
    label="codex",
    display_name="Codex CLI",
    root_env=ROOT_ENV,
    default_roots=default_roots,
    find=find_transcripts,
    read=_read,
    sniff=_sniff,
    where="${CODEX_HOME:-~/.codex}/sessions",
    location_env=("CODEX_HOME",),
    aliases=("codex-cli",),
    resume=_resume,
    handoff=Handoff("codex", (), "install Codex CLI: npm install -g @openai/codex"),
    # 1: a relative patch path on Windows (``src\\report.py``) split at its backslashes
    # 2: each record's step is the person's request it followed
    # 3: an edit's place among its session's messages (why's words around it)
    reader_version=3,
)

__all__ = ["PLUGIN"]
