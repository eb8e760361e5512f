"""Continue (its CLI ``cn`` and the IDE extensions): ``${CONTINUE_GLOBAL_DIR:-~/.continue}/sessions/<id>.json``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.transcripts.agent import BY_CONTENT, BY_NAME, Agent, Handoff, Sniffed
from deja_blame.transcripts.files import Skipped, sessions_below
from deja_blame.transcripts.transcript_file import TranscriptFile

if TYPE_CHECKING:
    from deja_blame.models import Session
    from deja_blame.transcripts.first_seen import FirstSeen

AGENT = "continue"
ROOT_ENV = "DEJA_CONTINUE_ROOT"
INDEX_NAME = "sessions.json"  # the list of sessions, not one


def default_roots(env: Mapping[str, str], home: Path) -> list[Path]:
    own = env.get("CONTINUE_GLOBAL_DIR")
    return [Path(own).expanduser() if own else home / ".continue"]


def find_transcripts(
    root: Path, problems: list[str] | None = None, skipped: Skipped | None = None
) -> Iterator[TranscriptFile]:
    def wanted(_directory: str, name: str) -> bool:
        return name.endswith(".json") and name != INDEX_NAME

    return sessions_below(root, "sessions", AGENT, wanted, lambda p: p.stem, problems, skipped)


def _read(tf: TranscriptFile) -> Session:
    from deja_blame.transcripts.continue_dev.reader import parse_transcript

    return parse_transcript(tf.path, tf.session_id)


def _read_seen(tf: TranscriptFile, seen: FirstSeen) -> Session:
    from deja_blame.transcripts.continue_dev.reader import parse_transcript

    return parse_transcript(tf.path, tf.session_id, seen)


def _sniff(s: Sniffed) -> int:
    if ".continue" in s.path.parts and s.path.suffix == ".json":
        return BY_NAME
    if b'"workspaceDirectory"' in s.head and b'"history"' in s.head:
        return BY_CONTENT
    return 0


PLUGIN = Agent(
    id=AGENT,
    label="continue",
    display_name="Continue",
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
    where="${CONTINUE_GLOBAL_DIR:-~/.continue}/sessions",
    location_env=("CONTINUE_GLOBAL_DIR",),
    aliases=("continue-cli", "cn"),
    # ``cn PROMPT``: the Continue CLI's interactive session, begun with the prompt
    # (``cn [prompt]``; ``-p`` would print one answer and exit)
    handoff=Handoff("cn", (), "install the Continue CLI: npm install -g @continuedev/cli"),
    other_names=("continue-cli",),
)

__all__ = ["PLUGIN"]
