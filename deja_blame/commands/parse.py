"""deja parse PATH: one transcript file, no index."""

from __future__ import annotations

from pathlib import Path

from deja_blame.errors import DejaError
from deja_blame.jsonout import print_json
from deja_blame.outputs.session_text import print_session
from deja_blame.transcripts.reading import IncompleteTranscript
from deja_blame.transcripts.registry import AGENTS, parse_any, sniffed_agent


def run_parse(path: Path, as_json: bool, agent: str | None = None) -> int:
    if path.is_dir():
        candidates = [path / n for n in ("transcript_full.jsonl", "transcript.jsonl")]
        candidates += [
            path / ".system_generated" / "logs" / n
            for n in ("transcript_full.jsonl", "transcript.jsonl")
        ]
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            raise DejaError(f"{path} is a directory with no transcript.jsonl in it")
        path = found
    if not path.exists():
        raise DejaError(f"no such transcript: {path}")
    if not path.is_file():
        # a FIFO would block, /dev/zero never ends: transcripts are regular files
        raise DejaError(f"{path} is not a regular file (a transcript is a .jsonl file)")
    # no agent knows its records: read as the first agent's, the oldest guess
    unknown = agent is None and sniffed_agent(path) is None
    try:
        session = parse_any(path, agent)
    except IncompleteTranscript as exc:  # its message names the file
        raise DejaError(str(exc), hint="parse it again once its agent has written it") from exc
    except OSError as exc:
        raise DejaError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if session.skipped_lines and not (
        session.messages or session.commands or session.files or session.edits
    ):
        raise DejaError(
            f"{path} is not an agent transcript: none of its"
            f" {session.skipped_lines:,} lines is a transcript record"
        )
    if unknown and not (session.messages or session.commands or session.files or session.edits):
        raise DejaError(
            f"{path}: no agent deja reads writes records like these (read as"
            f" {AGENTS[0].display_name}'s, it holds nothing)",
            hint="name the agent that wrote it: deja parse --agent NAME PATH"
            " (deja parse --help lists them)",
        )
    if as_json:
        print_json(session.to_json())
    else:
        print_session(session)
    return 0
