"""Amp: ``${XDG_DATA_HOME:-~/.local/share}/amp/threads/T-<id>.json`` (``%LOCALAPPDATA%\\amp``
on Windows), one JSON document per thread."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.transcripts.agent import BY_CONTENT, BY_NAME, Agent, Sniffed
from deja_blame.transcripts.files import Below, Skipped, files_as_sessions
from deja_blame.transcripts.transcript_file import TranscriptFile

if TYPE_CHECKING:
    from deja_blame.models import Session

AGENT = "amp"
ROOT_ENV = "DEJA_AMP_ROOT"


def default_roots(env: Mapping[str, str], home: Path) -> list[Path]:
    data = env.get("XDG_DATA_HOME")
    roots = [(Path(data) if data else home / ".local" / "share") / "amp"]
    if env.get("LOCALAPPDATA"):
        roots.append(Path(env["LOCALAPPDATA"]) / "amp")
    return roots


def find_transcripts(
    root: Path, problems: list[str] | None = None, skipped: Skipped | None = None
) -> Iterator[TranscriptFile]:
    below = Below(root, problems, skipped)
    base = below.base("threads")
    wanted = below.files(base, lambda n: n.startswith("T-") and n.endswith(".json")) if base else []
    return files_as_sessions(iter(wanted), root, AGENT, lambda p: p.stem)


def _read(tf: TranscriptFile) -> Session:
    from deja_blame.transcripts.amp.reader import parse_transcript

    return parse_transcript(tf.path, tf.session_id)


def _sniff(s: Sniffed) -> int:
    if s.path.name.startswith("T-") and s.path.suffix == ".json":
        return BY_NAME
    if b'"toolUseID"' in s.head or (b'"nextMessageId"' in s.head and b'"messages"' in s.head):
        return BY_CONTENT
    return 0


PLUGIN = Agent(
    id=AGENT,
    label="amp",
    display_name="Amp",
    root_env=ROOT_ENV,
    default_roots=default_roots,
    find=find_transcripts,
    read=_read,
    # 1: each record's step is the person's request it followed
    # 2: an edit's place among its session's messages (why's words around it)
    reader_version=2,
    sniff=_sniff,
    where="${XDG_DATA_HOME:-~/.local/share}/amp/threads",
    location_env=("XDG_DATA_HOME",),
    # ``amp -x PROMPT`` runs and exits: no interactive session that starts with a prompt
    handoff=None,
)

__all__ = ["PLUGIN"]
