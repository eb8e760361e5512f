"""Cursor's agent: ``${CURSOR_CONFIG_DIR:-~/.cursor}/projects/<slug>/agent-transcripts/…/<id>.jsonl``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.transcripts.agent import BY_CONTENT, BY_NAME, Agent, Handoff, Sniffed
from deja_blame.transcripts.files import Below, Skipped, files_as_sessions
from deja_blame.transcripts.transcript_file import TranscriptFile

if TYPE_CHECKING:
    from deja_blame.models import Session
    from deja_blame.transcripts.first_seen import FirstSeen

AGENT = "cursor"
ROOT_ENV = "DEJA_CURSOR_ROOT"


def default_roots(env: Mapping[str, str], home: Path) -> list[Path]:
    config = env.get("CURSOR_CONFIG_DIR")
    return [Path(config).expanduser() if config else home / ".cursor"]


def find_transcripts(
    root: Path, problems: list[str] | None = None, skipped: Skipped | None = None
) -> Iterator[TranscriptFile]:
    """Only each project's ``agent-transcripts`` folder is walked: the rest of
    ``projects/<slug>/`` (tool output, terminals) can be large, and a warm blame
    stats this on every run."""
    below = Below(root, problems, skipped)
    base = below.base("projects")
    if base is None:
        return
    for slug in below.folders(base):
        transcripts = slug / "agent-transcripts"
        if below.folder(transcripts):
            paths = below.walk(transcripts, lambda d, n: n.endswith(".jsonl"))
            yield from files_as_sessions(paths, root, AGENT, lambda p: p.stem)


def _read(tf: TranscriptFile) -> Session:
    from deja_blame.transcripts.cursor.reader import parse_transcript

    return parse_transcript(tf.path, tf.session_id)


def _read_seen(tf: TranscriptFile, seen: FirstSeen) -> Session:
    from deja_blame.transcripts.cursor.reader import parse_transcript

    return parse_transcript(tf.path, tf.session_id, seen)


def _sniff(s: Sniffed) -> int:
    if "agent-transcripts" in s.path.parts and s.path.suffix == ".jsonl":
        return BY_NAME
    for rec in s.records:
        if (
            set(rec) <= {"role", "message"}
            and "role" in rec
            and isinstance(rec.get("message"), dict)
        ):
            return BY_CONTENT
    return 0


PLUGIN = Agent(
    id=AGENT,
    label="cursor",
    display_name="Cursor",
    root_env=ROOT_ENV,
    default_roots=default_roots,
    find=find_transcripts,
    read=_read,
    read_seen=_read_seen,
    # 1: records dated by when the index first saw them; 2: Shell commands, the
    # project from the transcript's projects/<slug>, Cursor's own files left out;
    # 3: a turn dated from the <timestamp> its request opens with
    # 4: each record's step is the person's request it followed; 5: <timestamp>s
    # written in other languages than English
    # 6: an edit's place among its session's messages (why's words around it)
    reader_version=6,
    sniff=_sniff,
    where="${CURSOR_CONFIG_DIR:-~/.cursor}/projects/*/agent-transcripts",
    location_env=("CURSOR_CONFIG_DIR",),
    # Cursor's CLI: ``cursor-agent "prompt"`` starts its interactive agent on the prompt
    # (``-p`` would print one answer and exit)
    handoff=Handoff(
        "cursor-agent", (), "install the Cursor CLI: curl https://cursor.com/install -fsS | bash"
    ),
)

__all__ = ["PLUGIN"]
