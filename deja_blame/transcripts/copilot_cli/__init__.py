"""GitHub Copilot CLI: ``~/.copilot/session-state/<id>/events.jsonl`` (older versions:
``~/.copilot/session-state/<id>.jsonl``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.transcripts.agent import BY_CONTENT, BY_NAME, Agent, Handoff, Sniffed
from deja_blame.transcripts.files import Below, Skipped, files_as_sessions
from deja_blame.transcripts.transcript_file import TranscriptFile

if TYPE_CHECKING:
    from deja_blame.models import Session

AGENT = "copilot-cli"
ROOT_ENV = "DEJA_COPILOT_CLI_ROOT"


def default_roots(env: Mapping[str, str], home: Path) -> list[Path]:
    return [home / ".copilot"]


def session_id_of(path: Path) -> str:
    return path.parent.name if path.name == "events.jsonl" else path.stem


def find_transcripts(
    root: Path, problems: list[str] | None = None, skipped: Skipped | None = None
) -> Iterator[TranscriptFile]:
    below = Below(root, problems, skipped)
    base = below.base("session-state")
    if base is None:
        return iter(())
    top = str(base)
    paths = below.walk(
        base, lambda d, n: (n == "events.jsonl" and d != top) or (d == top and n.endswith(".jsonl"))
    )
    return files_as_sessions(paths, root, AGENT, session_id_of)


def _read(tf: TranscriptFile) -> Session:
    from deja_blame.transcripts.copilot.events import read_events

    return read_events(tf.path, tf.session_id or session_id_of(tf.path), AGENT)


def _sniff(s: Sniffed) -> int:
    if "session-state" in s.path.parts and s.path.suffix == ".jsonl":
        return BY_NAME
    for rec in s.records:
        data = rec.get("data")
        if rec.get("type") == "session.start" and isinstance(data, dict):
            return BY_CONTENT if "vscodeVersion" not in data else 0
    return 0


PLUGIN = Agent(
    id=AGENT,
    label="copilot-cli",
    display_name="GitHub Copilot CLI",
    root_env=ROOT_ENV,
    default_roots=default_roots,
    find=find_transcripts,
    read=_read,
    # 1: each record's step is the person's request it followed
    # 2: an edit's place among its session's messages (why's words around it)
    reader_version=2,
    sniff=_sniff,
    where="~/.copilot/session-state/*/events.jsonl",
    handoff=Handoff("copilot", ("-i",), "install Copilot CLI: npm install -g @github/copilot"),
)

__all__ = ["PLUGIN"]
