"""Agent Trace 0.1.0 records (cursor/agent-trace): one per commit with attributed lines.

Each record says, for one commit, which of the lines it introduced which agent
session wrote: ``files[].conversations[]``, one conversation per session, its
``contributor`` (``ai``, with the model in the models.dev ``provider/model``
form where the session names one) and its ``ranges`` in that commit's version
of the file, each with a ``content_hash`` of its lines. deja's own data (the
session id, the agent) sits under the reverse-domain key ``dev.deja-blame`` in
``metadata``. The attribution is the report's: the commit's note, else the
index. ``id`` is a UUID derived from the commit, so an export run twice gives
the same records.
"""

from __future__ import annotations

import hashlib
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import Any

import pygit2

from deja_blame import __version__
from deja_blame.errors import DejaError
from deja_blame.gitutil import read_file, workdir
from deja_blame.index import queries as Q
from deja_blame.models import UNKNOWN_AGENT
from deja_blame.transcripts.text import format_time

SPEC_VERSION = "0.1.0"
VENDOR_KEY = "dev.deja-blame"
_NAMESPACE = uuid.UUID("5d2c7a8e-3b1f-4e6a-9c0d-8f7e6d5c4b3a")  # deja's: ids from commits
# model name prefixes -> the models.dev provider
_PROVIDERS = (
    ("claude", "anthropic"),
    ("gpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("codex", "openai"),
    ("gemini", "google"),
)


def model_id(model: str | None) -> str | None:
    """A session's model as models.dev names it (``anthropic/claude-...``), when it
    looks like a model id; None for unknown or display names ("Gemini 3 Pro")."""
    if not model or " " in model.strip() or len(model) > 200:
        return None
    model = model.strip()
    if "/" in model:
        return model
    lower = model.lower()
    for prefix, provider in _PROVIDERS:
        if lower.startswith(prefix):
            return f"{provider}/{model}"
    return None


def _ranges(lines: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for n in sorted(lines):
        if out and out[-1][1] == n - 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def _content_hash(texts: list[str] | None, start: int, end: int) -> str | None:
    if texts is None or end > len(texts):
        return None
    data = "\n".join(texts[start - 1 : end]).encode("utf-8", "surrogatepass")
    return "sha256:" + hashlib.sha256(data).hexdigest()[:16]


def trace_records(
    repo: pygit2.Repository,
    spec: str | None,
    conn: sqlite3.Connection | None,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[dict[str, Any]]:
    """The records for the commits of ``spec`` (default: all of HEAD's history), oldest first."""
    from deja_blame.report.collect import (
        NoteStore,
        attribute,
        export_range,
        range_commits,
        written_paths,
    )

    root = workdir(repo)
    rng = export_range(repo, root, spec)
    notes = NoteStore(repo)
    use_index = conn is not None and Q.has_sessions(conn)
    written = written_paths(repo, conn) if use_index else []
    commits = list(reversed(range_commits(repo, rng)))
    for done, commit in enumerate(commits):
        if progress is not None:
            progress(done, len(commits))
        lines = attribute(repo, commit, notes, conn, use_index, written)
        if not any(lines.session_of.values()):
            continue
        yield _record(repo, commit, lines, conn)


def _record(
    repo: pygit2.Repository, commit: pygit2.Commit, lines: Any, conn: sqlite3.Connection | None
) -> dict[str, Any]:
    sha = str(commit.id)
    files: list[dict[str, Any]] = []
    for path in sorted(lines.session_of):
        by_session: dict[str, list[int]] = {}
        for line, sid in lines.session_of[path].items():
            by_session.setdefault(sid, []).append(line)
        try:
            texts: list[str] | None = read_file(repo, path, sha).lines()
        except DejaError:
            texts = None
        conversations = []
        for sid in sorted(by_session):
            agent, model = _session(sid, lines.session_meta.get(sid), conn)
            contributor: dict[str, Any] = {"type": "ai"}
            mid = model_id(model)
            if mid:
                contributor["model_id"] = mid
            ranges = []
            for start, end in _ranges(by_session[sid]):
                r: dict[str, Any] = {"start_line": start, "end_line": end}
                digest = _content_hash(texts, start, end)
                if digest:
                    r["content_hash"] = digest
                ranges.append(r)
            vendor: dict[str, Any] = {"session": sid, "agent": agent}
            if model:
                vendor["model"] = model
            conversations.append(
                {"contributor": contributor, "ranges": ranges, "metadata": {VENDOR_KEY: vendor}}
            )
        files.append({"path": path, "conversations": conversations})
    when = datetime.fromtimestamp(commit.commit_time, tz=timezone.utc)
    return {
        "version": SPEC_VERSION,
        "id": str(uuid.uuid5(_NAMESPACE, sha)),
        "timestamp": format_time(when),
        "vcs": {"type": "git", "revision": sha},
        "tool": {"name": "deja-blame", "version": __version__},
        "files": files,
        "metadata": {VENDOR_KEY: {"attribution": lines.source}},
    }


def _session(sid: str, meta: Any, conn: sqlite3.Connection | None) -> tuple[str, str | None]:
    """(agent, model) of a session: from the note's session entry, else the index."""
    if isinstance(meta, dict) and meta.get("agent"):
        model = meta.get("model")
        return str(meta["agent"]), model if isinstance(model, str) else None
    if conn is not None:
        found = Q.session_agent_model(conn, sid)
        if found is not None:
            return found
    return UNKNOWN_AGENT, None
