"""pi (pi-coding-agent): ``~/.pi/agent/sessions/--<cwd slug>--/<time>_<uuid>.jsonl``
(``PI_CODING_AGENT_DIR`` moves ``~/.pi/agent``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.transcripts.agent import BY_CONTENT, BY_NAME, Agent, Handoff, Sniffed
from deja_blame.transcripts.files import Skipped, sessions_below
from deja_blame.transcripts.transcript_file import TranscriptFile

if TYPE_CHECKING:
    from deja_blame.models import Session

AGENT = "pi"
ROOT_ENV = "DEJA_PI_ROOT"
LOCATION_ENV = "PI_CODING_AGENT_DIR"


def default_roots(env: Mapping[str, str], home: Path) -> list[Path]:
    moved = env.get(LOCATION_ENV)
    return [Path(moved)] if moved else [home / ".pi" / "agent"]


def session_id_of(path: Path) -> str:
    """``2026-02-20T20-17-15-095Z_<uuid>.jsonl`` -> the uuid (the header's ``id``)."""
    return path.stem.rpartition("_")[2] or path.stem


def find_transcripts(
    root: Path, problems: list[str] | None = None, skipped: Skipped | None = None
) -> Iterator[TranscriptFile]:
    return sessions_below(
        root, "sessions", AGENT, lambda d, n: n.endswith(".jsonl"), session_id_of, problems, skipped
    )


def _read(tf: TranscriptFile) -> Session:
    from deja_blame.transcripts.pi.reader import parse_transcript

    return parse_transcript(tf.path, tf.session_id)


def _sniff(s: Sniffed) -> int:
    if ".pi" in s.path.parts and "sessions" in s.path.parts and s.path.suffix == ".jsonl":
        return BY_NAME
    for rec in s.records[:1]:
        # the header: a version, a cwd and no payload (Codex) nor session_start (Droid)
        if rec.get("type") == "session" and "cwd" in rec and "version" in rec:
            return BY_CONTENT
    return 0


PLUGIN = Agent(
    id=AGENT,
    label="pi",
    display_name="pi",
    root_env=ROOT_ENV,
    default_roots=default_roots,
    find=find_transcripts,
    read=_read,
    sniff=_sniff,
    where="~/.pi/agent/sessions",
    location_env=(LOCATION_ENV,),
    aliases=("pi-coding-agent",),
    # 1: an edit's place among its session's messages (why's words around it)
    reader_version=1,
    # ``pi "prompt"``: the interactive session begun with the prompt (``-p`` prints and exits)
    handoff=Handoff("pi", (), "install pi: npm install -g @mariozechner/pi-coding-agent"),
)

__all__ = ["PLUGIN"]
