"""Factory's Droid: ``~/.factory/sessions/<cwd slug>/<session uuid>.jsonl`` (the
model in ``<uuid>.settings.json`` beside it)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.transcripts.agent import BY_CONTENT, BY_NAME, Agent, Handoff, Sniffed
from deja_blame.transcripts.files import Skipped, sessions_below
from deja_blame.transcripts.transcript_file import TranscriptFile

if TYPE_CHECKING:
    from deja_blame.models import Session

AGENT = "droid"
ROOT_ENV = "DEJA_DROID_ROOT"


def default_roots(env: Mapping[str, str], home: Path) -> list[Path]:
    return [home / ".factory"]


def find_transcripts(
    root: Path, problems: list[str] | None = None, skipped: Skipped | None = None
) -> Iterator[TranscriptFile]:
    return sessions_below(
        root,
        "sessions",
        AGENT,
        lambda d, n: n.endswith(".jsonl"),
        lambda p: p.stem,
        problems,
        skipped,
    )


def _read(tf: TranscriptFile) -> Session:
    from deja_blame.transcripts.droid.reader import parse_transcript

    return parse_transcript(tf.path, tf.session_id)


def _sniff(s: Sniffed) -> int:
    if ".factory" in s.path.parts and s.path.suffix == ".jsonl":
        return BY_NAME
    for rec in s.records:
        if rec.get("type") == "session_start" and "cwd" in rec and "payload" not in rec:
            return BY_CONTENT
    return 0


PLUGIN = Agent(
    id=AGENT,
    label="droid",
    display_name="Droid",
    root_env=ROOT_ENV,
    default_roots=default_roots,
    find=find_transcripts,
    read=_read,
    # 1: a file named with @ is viewed, not the person's words; 2: each record's step
    # is the person's request it followed
    # 3: an edit's place among its session's messages (why's words around it)
    reader_version=3,
    sniff=_sniff,
    where="~/.factory/sessions",
    aliases=("factory",),
    # ``droid "query"``: the interactive REPL begun with the prompt (``droid exec`` exits)
    handoff=Handoff("droid", (), "install Droid: curl -fsSL https://app.factory.ai/cli | sh"),
)

__all__ = ["PLUGIN"]
