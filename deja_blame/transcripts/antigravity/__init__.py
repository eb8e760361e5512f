"""Antigravity: ``~/.gemini/antigravity*/brain/<session>/.system_generated/logs/transcript*.jsonl``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deja_blame.transcripts.agent import BY_CONTENT, BY_NAME, PLAUSIBLE, Agent, Handoff, Sniffed
from deja_blame.transcripts.antigravity.discover import (
    AGENT,
    COMPACT_NAME,
    FULL_NAME,
    ROOT_ENV,
    discover_roots,
    find_transcripts,
)
from deja_blame.transcripts.transcript_file import TranscriptFile

if TYPE_CHECKING:  # the reader is imported where a transcript is read
    from deja_blame.models import Session
    from deja_blame.transcripts.agent import Reader
    from deja_blame.transcripts.reading import ReaderState


def _default_roots(env: Mapping[str, str], home: Path) -> list[Path]:
    return discover_roots(env, home)


def _read(tf: TranscriptFile) -> Session:
    from deja_blame.transcripts.antigravity.reader import parse_transcript

    if not tf.session_id:  # a file given alone: its id, root and other file from where it sits
        return parse_transcript(tf.path)
    return parse_transcript(tf.path, tf.session_id, tf.root, tf.parts)


def _extra_records(tf: TranscriptFile) -> list[dict[str, Any]]:
    from deja_blame.transcripts.antigravity.reader import extra_records

    return extra_records(tf.path, tf.parts)


def _resume(tf: TranscriptFile, state: ReaderState | None) -> Reader:
    from deja_blame.transcripts.antigravity.reader import SessionReader, artifact_dir_for
    from deja_blame.transcripts.reading import ReaderState

    state = state if state is not None else ReaderState()
    if state.artifact_dir is None:
        state.artifact_dir = artifact_dir_for(tf.path, tf.session_id)
    return SessionReader(state=state, transcript=tf.path)


def _sniff(s: Sniffed) -> int:
    if "brain" in s.path.parts or s.path.name in (FULL_NAME, COMPACT_NAME):
        return BY_NAME
    if any("step_index" in rec for rec in s.records):
        return BY_CONTENT
    # "source" alone, or one JSON document: the oldest guess, taken when nothing else fits
    return PLAUSIBLE if any("source" in rec for rec in s.records) or not s.records else 0


PLUGIN = Agent(
    id=AGENT,
    label="agy",
    display_name="Antigravity",
    root_env=ROOT_ENV,
    default_roots=_default_roots,
    find=find_transcripts,
    read=_read,
    sniff=_sniff,
    where="~/.gemini/antigravity*",
    aliases=("agy",),
    resume=_resume,
    extra_records=_extra_records,
    native_state=True,
    handoff=Handoff(
        "agy",
        ("-i",),
        "install the Antigravity CLI: curl -fsSL https://antigravity.google/cli/install.sh"
        " | bash (Windows: winget install Google.AntigravityCLI)",
    ),
    always_report=True,
)

__all__ = ["PLUGIN"]
