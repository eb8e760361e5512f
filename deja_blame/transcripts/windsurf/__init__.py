"""Windsurf (Cascade): ``~/.windsurf/transcripts/<trajectory id>.jsonl``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.transcripts.agent import BY_CONTENT, BY_NAME, Agent, Sniffed
from deja_blame.transcripts.files import Below, Skipped, files_as_sessions
from deja_blame.transcripts.transcript_file import TranscriptFile

if TYPE_CHECKING:
    from deja_blame.models import Session
    from deja_blame.transcripts.first_seen import FirstSeen

AGENT = "windsurf"
ROOT_ENV = "DEJA_WINDSURF_ROOT"
STEP_TYPES = ("user_input", "planner_response", "code_action", "run_command", "view_file")


def default_roots(env: Mapping[str, str], home: Path) -> list[Path]:
    return [home / ".windsurf"]


def find_transcripts(
    root: Path, problems: list[str] | None = None, skipped: Skipped | None = None
) -> Iterator[TranscriptFile]:
    below = Below(root, problems, skipped)
    base = below.base("transcripts")
    paths = below.files(base, lambda n: n.endswith(".jsonl")) if base is not None else []
    return files_as_sessions(iter(paths), root, AGENT, lambda p: p.stem)


def _read(tf: TranscriptFile) -> Session:
    from deja_blame.transcripts.windsurf.reader import parse_transcript

    return parse_transcript(tf.path, tf.session_id)


def _read_seen(tf: TranscriptFile, seen: FirstSeen) -> Session:
    from deja_blame.transcripts.windsurf.reader import parse_transcript

    return parse_transcript(tf.path, tf.session_id, seen)


def _sniff(s: Sniffed) -> int:
    if s.path.parent.name == "transcripts" and s.path.parent.parent.name == ".windsurf":
        return BY_NAME
    for rec in s.records:
        kind = rec.get("type")
        if kind in STEP_TYPES and isinstance(rec.get(kind), dict) and "step_index" not in rec:
            return BY_CONTENT
    return 0


PLUGIN = Agent(
    id=AGENT,
    label="windsurf",
    display_name="Windsurf",
    root_env=ROOT_ENV,
    default_roots=default_roots,
    find=find_transcripts,
    read=_read,
    read_seen=_read_seen,
    # 1: records dated by when the index first saw them; 2: each record's step is the
    # person's request it followed
    # 3: an edit's place among its session's messages (why's words around it)
    reader_version=3,
    sniff=_sniff,
    where="~/.windsurf/transcripts",
    handoff=None,  # an editor: no command line that starts with a prompt
)

__all__ = ["PLUGIN"]
