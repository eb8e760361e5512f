"""The project (workspace) of a session: format section 6.

In order: the IDE's ``cache/conversation_metadata.json``, the CLI's
``cache/last_conversations.json``, the deepest directory shared by the paths
the session touched, the ``Cwd`` of a run_command, else ``-``. A guessed
directory (touched paths, a cwd) inside a git work tree on this machine is
lifted to that work tree's top: a session that only touched ``src/`` worked on
the repository, and ``deja handoff`` starts the agent there.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from deja_blame.transcripts.text import normalise_path

UNKNOWN = "-"


@dataclass
class ProjectHints:
    touched_dir: str | None = None
    first_cwd: str | None = None


def resolve_project(session_id: str, root: Path | None, hints: ProjectHints) -> str:
    if root is not None:
        ide, cli = _caches(str(root), *_mtimes(root))
        if session_id in ide:
            return ide[session_id]
        if session_id in cli:
            return cli[session_id]
    if hints.touched_dir and hints.touched_dir not in ("/", ""):
        return work_tree_of(hints.touched_dir)
    if hints.first_cwd:
        return work_tree_of(hints.first_cwd)
    return UNKNOWN


def work_tree_of(directory: str) -> str:
    """The top of the git work tree holding ``directory`` (a ``.git`` beside it or
    above, at most 32 levels up), or ``directory`` when there is none here."""
    return _work_tree(directory)


@lru_cache(maxsize=4096)
def _work_tree(directory: str) -> str:
    if not directory.startswith("/"):
        return directory
    path = Path(directory)
    try:
        for parent in [path, *path.parents][:32]:
            if (parent / ".git").exists():
                return str(parent)
    except OSError:
        pass
    return directory


def _mtimes(root: Path) -> tuple[int, int]:
    out = []
    for name in ("conversation_metadata.json", "last_conversations.json"):
        try:
            out.append((root / "cache" / name).stat().st_mtime_ns)
        except OSError:
            out.append(0)
    return out[0], out[1]


@lru_cache(maxsize=32)
def _caches(root: str, _ide_mtime: int, _cli_mtime: int) -> tuple[dict[str, str], dict[str, str]]:
    """Both caches of one root as {session id: project}; the mtimes key the memo."""
    cache = Path(root) / "cache"
    return _read_ide(_load(cache / "conversation_metadata.json")), _read_cli(
        _load(cache / "last_conversations.json")
    )


def _load(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


def _first_uri(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return None
    uris = entry.get("WorkspaceURIs")
    if uris is None and isinstance(entry.get("summary"), dict):
        uris = entry["summary"].get("WorkspaceURIs")
    if isinstance(uris, list) and uris and isinstance(uris[0], str) and uris[0]:
        return normalise_path(uris[0])
    return None


def _read_ide(doc: Any) -> dict[str, str]:
    """Real shape ``{"conversations": {id: {"summary": {"WorkspaceURIs": [...]}}}}``, or flat."""
    out: dict[str, str] = {}
    if not isinstance(doc, dict):
        return out
    conversations = doc.get("conversations")
    table = conversations if isinstance(conversations, dict) else doc
    for sid, entry in table.items():
        uri = _first_uri(entry)
        if uri:
            out[str(sid)] = uri
    return out


def _read_cli(doc: Any) -> dict[str, str]:
    """``{"/home/u/shop": "<session id>"}``: workspace -> the session last used there."""
    out: dict[str, str] = {}
    if not isinstance(doc, dict):
        return out
    for workspace, sid in doc.items():
        if isinstance(sid, str) and sid and isinstance(workspace, str):
            out.setdefault(sid, normalise_path(workspace))
    return out
