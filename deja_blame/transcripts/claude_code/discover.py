"""Where Claude Code keeps its sessions.

``<config>/projects/<dir>/<session uuid>.jsonl``, ``<config>`` being
``$CLAUDE_CONFIG_DIR`` or ``~/.claude`` (``$DEJA_CLAUDE_ROOT`` replaces both).
Sub-agents (the Task tool) write their own files, which belong to the session
that started them: ``<dir>/<session uuid>/subagents/agent-*.jsonl`` in current
versions, ``<dir>/agent-*.jsonl`` naming their session in each record in older ones.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from deja_blame.transcripts.files import is_regular
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


def _projects_dir(root: Path) -> Path:
    projects = root / "projects"
    return projects if projects.is_dir() else root


def find_transcripts(root: Path, problems: list[str] | None = None) -> Iterator[TranscriptFile]:
    base = _projects_dir(root)
    try:
        dirs = sorted((e for e in os.scandir(base) if e.is_dir()), key=lambda e: e.name)
    except OSError:
        return
    for d in dirs:
        try:
            entries = sorted(os.scandir(d.path), key=lambda e: e.name)
        except OSError as exc:
            if problems is not None:
                problems.append(f"cannot read {d.path}: {exc.strerror or exc}")
            continue
        sessions: dict[str, Path] = {}
        parts: dict[str, list[Path]] = {}
        for e in entries:
            if not _SESSION_FILE.match(e.name) or not e.is_file(follow_symlinks=False):
                continue
            if e.name.startswith("agent-"):
                parent = _session_named_in(Path(e.path))
                if parent:
                    parts.setdefault(parent, []).append(Path(e.path))
                continue
            sessions[e.name[: -len(".jsonl")]] = Path(e.path)
        for sid, path in sessions.items():
            found = parts.get(sid, []) + subagent_files(path)
            yield TranscriptFile(
                session_id=sid, path=path, root=root, agent=AGENT, parts=tuple(found)
            )


def subagent_files(path: Path) -> list[Path]:
    """The sub-agent files current versions keep beside a session: ``<id>/subagents/``."""
    sub = path.with_suffix("") / "subagents"
    try:
        return sorted(p for p in sub.glob("*.jsonl") if is_regular(p)) if sub.is_dir() else []
    except OSError:
        return []


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
