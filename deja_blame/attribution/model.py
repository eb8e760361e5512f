"""The plain data of attribution: a file's blame, line by line, and its sessions.

``blame_file`` returns these; the cache, the move detector, the notes, the
outputs and the editor server read them. They live apart from the orchestrator
so that every stage can import them without importing the others.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

# (commit sha, original path, original line) -> (session id, confidence, written
# at in epoch seconds or None) or None
NoteLookup = Callable[[str, str, int], "tuple[str, float, int | None] | None"]


@dataclass
class LineAttribution:
    line: int
    text: str
    commit: str | None
    session: str | None = None
    source: str | None = None
    confidence: float | None = None
    written_at: str | None = None
    commit_time: int | None = None
    orig_path: str | None = None
    orig_line: int | None = None
    edit_ord: int | None = None  # which edit of the session (index evidence only)
    via: str | None = None  # "index" | "note"

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "line": self.line,
            "text": self.text,
            "commit": self.commit,
            "session": self.session,
            "source": self.source,
            "confidence": self.confidence,
        }
        if self.session is not None:
            doc["agent"] = self.source
            doc["written_at"] = self.written_at
            doc["via"] = self.via
        return doc


@dataclass
class SessionInfo:
    session_id: str
    source: str
    project: str
    started_at: str | None
    first_prompt: str | None
    model: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "agent": self.source,
            "model": self.model,
            "project": self.project,
            "started_at": self.started_at,
            "first_prompt": self.first_prompt,
        }


@dataclass
class FileBlame:
    path: str  # repository-relative
    rev: str | None  # the commit blamed, or None for the working tree
    root: str
    lines: list[LineAttribution]
    sessions: dict[str, SessionInfo] = field(default_factory=dict)
    indexed_sessions: int = 0
    # what the notes say of sessions the index does not know (a reviewer's clone)
    note_sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    total_lines: int | None = None  # the file's length, where ``lines`` is a window of it
    # each commit's author as (name, mail, epoch), where the cache kept them (a warm
    # answer then asks git for none); None: ask git (``gitutil.commit_authors``)
    authors: dict[str, tuple[str, str, int]] | None = None
    cache_key: str | None = None  # the attribution cache entry this answer came from
    # the commits' authors as git blame showed them (its mailmap applied): the
    # command takes them for ``authors`` where no mailmap makes them differ from
    # git log's (``commands/blame.py``); None: the blame did not say
    blame_authors: dict[str, tuple[str, str, int]] | None = None
    # True: the answer's cache entry is written after the output (``later``) and
    # takes the ``authors`` the output filled in then (no second write)
    keeps_authors: bool = False

    def to_json(self, include_prompts: bool = True) -> dict[str, Any]:
        sessions = {}
        for sid, info in self.sessions.items():
            doc = info.to_json()
            if not include_prompts:
                doc["first_prompt"] = None
            sessions[sid] = doc
        return {
            "path": self.path,
            "rev": self.rev,
            "lines": [ln.to_json() for ln in self.lines],
            "sessions": sessions,
        }


def format_time_epoch(epoch: float) -> str:
    """An epoch second as the answers spell times (``transcripts.text.format_time``)."""
    from deja_blame.transcripts.text import format_time

    return format_time(datetime.fromtimestamp(epoch, tz=timezone.utc))
