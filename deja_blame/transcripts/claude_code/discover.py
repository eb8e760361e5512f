"""Where Claude Code keeps its sessions.

``<config>/projects/<dir>/<session uuid>.jsonl``, ``<config>`` being
``$CLAUDE_CONFIG_DIR`` or ``~/.claude`` (``$DEJA_CLAUDE_ROOT`` replaces both).
Sub-agents (the Task tool) write their own files, which belong to the session
that started them: ``<dir>/<session uuid>/subagents/agent-*.jsonl`` in current
versions, ``<dir>/agent-*.jsonl`` naming their session in each record in older ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from deja_blame.transcripts.files import Below, Skipped
from deja_blame.transcripts.jsonl import decode_line
from deja_blame.transcripts.reading import open_regular
from deja_blame.transcripts.transcript_file import TranscriptFile

ROOT_ENV = "DEJA_CLAUDE_ROOT"
AGENT = "claude-code"
_SESSION_FILE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._-]*\.jsonl$")
_PEEK_BYTES = 256 * 1024  # at most this much of a line is read to find its session
_PEEK_LINES = 5  # an old sub-agent file names its session in its first records


def default_roots(env: Mapping[str, str], home: Path) -> list[Path]:
    config = env.get("CLAUDE_CONFIG_DIR")
    return [Path(config).expanduser() if config else home / ".claude"]


def find_transcripts(
    root: Path, problems: list[str] | None = None, skipped: Skipped | None = None
) -> Iterator[TranscriptFile]:
    below = Below(root, problems, skipped)
    base = below.base("projects")
    if base is None:
        return
    for d in below.folders(base):
        sessions: dict[str, Path] = {}
        parts: dict[str, list[Path]] = {}
        for path in below.files(d, lambda n: _SESSION_FILE.match(n) is not None):
            if path.name.startswith("agent-"):
                parent = _session_named_in(path)
                if parent:
                    parts.setdefault(parent, []).append(path)
                continue
            sessions[path.name[: -len(".jsonl")]] = path
        for sid, path in sessions.items():
            found = parts.get(sid, []) + subagent_files(path, below)
            yield TranscriptFile(
                session_id=sid, path=path, root=root, agent=AGENT, parts=tuple(found)
            )


def subagent_files(path: Path, below: Below | None = None) -> list[Path]:
    """The sub-agent files current versions keep beside a session: ``<id>/subagents/``
    (either folder a link: none)."""
    below = below if below is not None else Below(path.parent)
    folder = path.with_suffix("")
    if not below.folder(folder):  # usually not there: one lstat
        return []
    return below.files(folder / "subagents", lambda n: n.endswith(".jsonl"))


def _session_named_in(path: Path) -> str | None:
    """The session an old sub-agent file names: its first records say (a few lines
    read, not the file: discovery runs before every blame)."""
    try:
        with open_regular(path) as fh:
            for _ in range(_PEEK_LINES):
                raw = fh.readline(_PEEK_BYTES)
                if not raw:
                    return None
                record = decode_line(raw)
                if record is not None and isinstance(record.get("sessionId"), str):
                    return str(record["sessionId"])
    except OSError:
        return None
    return None
