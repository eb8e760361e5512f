"""Gemini CLI: ``~/.gemini/tmp/<project>/chats/session-*.json`` and ``.jsonl``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.transcripts.agent import BY_CONTENT, BY_NAME, Agent, Handoff, Sniffed
from deja_blame.transcripts.gemini_cli.discover import (
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


def _read(tf: TranscriptFile) -> Session:
    """Read whole: its JSON file is rewritten, and rewinds undo JSON Lines records."""
    from deja_blame.transcripts.gemini_cli.reader import parse_transcript

    return parse_transcript(tf.path, tf.session_id, tf.parts)


def _sniff(s: Sniffed) -> int:
    name = s.path.name
    if name.startswith("session-") and name.endswith((".json", ".jsonl")):
        return BY_NAME
    if not s.records and b'"projectHash"' in s.head:
        return BY_CONTENT  # one JSON document
    for rec in s.records:
        if "projectHash" in rec or "$rewindTo" in rec or "$set" in rec:
            return BY_CONTENT
    return 0


def _parts(path: Path) -> tuple[Path, ...]:
    return subagent_files(path)


PLUGIN = Agent(
    id=AGENT,
    label="gemini",
    display_name="Gemini CLI",
    root_env=ROOT_ENV,
    default_roots=default_roots,
    find=find_transcripts,
    read=_read,
    # 1: each record's step is the person's request it followed
    # 2: an edit's place among its session's messages (why's words around it)
    reader_version=2,
    sniff=_sniff,
    where="~/.gemini/tmp/*/chats",
    location_env=("GEMINI_CLI_HOME",),
    aliases=("gemini",),
    parts=_parts,
    handoff=Handoff("gemini", ("-i",), "install Gemini CLI: npm install -g @google/gemini-cli"),
    other_names=("gemini",),
)

__all__ = ["PLUGIN"]
