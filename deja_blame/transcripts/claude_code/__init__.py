"""Claude Code: ``${CLAUDE_CONFIG_DIR:-~/.claude}/projects/<dir>/<session>.jsonl``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.transcripts.agent import BY_CONTENT, PLAUSIBLE, Agent, Handoff, Sniffed
from deja_blame.transcripts.claude_code.discover import (
    AGENT,
    ROOT_ENV,
    default_roots,
    find_transcripts,
    subagent_files,
)
from deja_blame.transcripts.transcript_file import TranscriptFile

if TYPE_CHECKING:  # the reader is imported where a transcript is read: discovery
    # (before every warm blame) does not pay for it
    from deja_blame.models import Session
    from deja_blame.transcripts.agent import Reader
    from deja_blame.transcripts.reading import ReaderState


def _read(tf: TranscriptFile) -> Session:
    from deja_blame.transcripts.claude_code.reader import parse_transcript

    return parse_transcript(tf.path, tf.session_id, tf.parts)


def _resume(tf: TranscriptFile, state: ReaderState | None) -> Reader | None:
    """Its transcripts only grow (JSON Lines appended to); a session's sub-agent files
    interleave with it by time, so one with sub-agents is read whole."""
    if tf.parts:
        return None
    from deja_blame.transcripts.builder import BatchReader
    from deja_blame.transcripts.claude_code.reader import resume

    other = state.other if state is not None else None
    skipped = state.skipped if state is not None else 0
    return BatchReader(resume(other, tf.session_id, str(tf.path.resolve())), skipped)


def _sniff(s: Sniffed) -> int:
    plausible = 0
    for rec in s.records:
        if rec.get("type") in ("user", "assistant", "summary", "system"):
            if "sessionId" in rec:
                return BY_CONTENT
            if isinstance(rec.get("message"), dict):
                # the envelope without the ids (a transcript written by hand or by
                # another tool): not taken for the first agent's empty session
                plausible = PLAUSIBLE
    return plausible


def _parts(path: Path) -> tuple[Path, ...]:
    return tuple(subagent_files(path))


PLUGIN = Agent(
    id=AGENT,
    label="claude",
    display_name="Claude Code",
    root_env=ROOT_ENV,
    default_roots=default_roots,
    find=find_transcripts,
    read=_read,
    # 1: each record's step is the person's request it followed;
    # 3: an edit's place among its session's messages (why's words around it)
    reader_version=3,
    # 2: a failed Bash's exit code read from "Error: Exit code N" and toolUseResult
    sniff=_sniff,
    where="${CLAUDE_CONFIG_DIR:-~/.claude}/projects",
    location_env=("CLAUDE_CONFIG_DIR",),
    aliases=("claude",),
    resume=_resume,
    parts=_parts,
    handoff=Handoff("claude", (), "install Claude Code: npm install -g @anthropic-ai/claude-code"),
    other_names=("claude",),
)

__all__ = ["PLUGIN"]
