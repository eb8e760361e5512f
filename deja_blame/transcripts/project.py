"""The project (workspace) of a session: format section 6.

In order: the IDE's ``cache/conversation_metadata.json``, the CLI's
``cache/last_conversations.json``, the directory the session's edits share
(the ``Cwd`` its commands ran in most when that holds it), that ``Cwd``, the
directory the files it looked at
share, its first ``Cwd``, else ``-``. The agent's own places never count:
its artifacts under any ``.gemini/*/brain/<id>/`` (plans, task lists,
walkthroughs, its ``scratch/``), its config, plugins and skills under
``.gemini/``, editor extension folders, temporary scratch; a file of a
repository that lives inside ``brain/<id>/`` does (people work there). When
the shared directory is a home, ``Users`` or a ``.gemini`` folder, the one
part below it that holds most of the edits is taken (a stray write elsewhere
does not pull the guess up to the home). A guessed directory inside a git
work tree on this machine is lifted to that work tree's top: a session that
only touched ``src/`` worked on the repository, and ``deja handoff`` starts
the agent there. Paths arrive normalised (``C:/Users/u/x``, ``file://``
decoded) by ``text.normalise_path``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from deja_blame.transcripts.reading import ReaderState
from deja_blame.transcripts.text import common_directory, normalise_path

UNKNOWN = "-"


@dataclass
class ProjectHints:
    touched_dir: str | None = None  # the deepest directory every touched path shares
    first_cwd: str | None = None
    # directory -> how many of the session's edits went there (agent places left out)
    edit_dirs: dict[str, int] = field(default_factory=dict)
    # directory -> how many commands ran there (agent places left out)
    cwds: dict[str, int] = field(default_factory=dict)
    # directory -> how many files it viewed or listed there (agent places left out)
    file_dirs: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_state(cls, state: ReaderState) -> ProjectHints:
        return cls(
            touched_dir=state.touched_dir,
            first_cwd=state.first_cwd,
            edit_dirs=state.edit_dirs,
            cwds=state.cwds,
            file_dirs=state.file_dirs,
        )


def resolve_project(session_id: str, root: Path | None, hints: ProjectHints) -> str:
    if root is not None:
        ide, cli = _caches(str(root), *_mtimes(root))
        if session_id in ide:
            return ide[session_id]
        if session_id in cli:
            return cli[session_id]
    guess = shared_directory(hints.edit_dirs)
    cwd = _usual_cwd(hints.cwds)
    if cwd is not None and (guess is None or guess.startswith(cwd.rstrip("/") + "/")):
        # the edits all went below where its commands ran (docs/ of the project)
        guess = cwd
    if guess is None:
        guess = shared_directory(hints.file_dirs)
    if guess is None and not (hints.edit_dirs or hints.file_dirs or hints.cwds):
        # what an older reader's state holds
        guess = hints.touched_dir if hints.touched_dir not in (None, "/", "") else None
    if guess is None:
        guess = hints.first_cwd
    return work_tree_of(guess) if guess else UNKNOWN


def _usual_cwd(cwds: Mapping[str, int]) -> str | None:
    """Where most of the session's commands ran, unless that is a home or a root."""
    if not cwds:
        return None
    cwd, _ = max(cwds.items(), key=lambda kv: (kv[1], -len(kv[0])))
    return None if is_shallow(cwd) else cwd


# -- the agent's own places -------------------------------------------------------------

# inside brain/<id>/: the agent's scratch, logs and recordings
_BRAIN_OWN_DIRS = frozenset({"scratch", ".system_generated", ".tempmediastorage"})
# a file right in brain/<id>/ with one of these endings is an artifact (a plan, a
# task list, a walkthrough, a generated picture, a link to a document)
_ARTIFACT_ENDINGS = (".md", ".url.json", ".png", ".jpg", ".jpeg", ".webp", ".gif", ".webm")
_EXTENSION_DIRS = (
    "/.vscode/extensions/",
    "/.vscode-server/",
    "/.cursor/extensions/",
    "/.antigravity/extensions/",
    "/appdata/local/temp/",
)
_HOME_PARENTS = frozenset({"users", "home"})
_HOME_FOLDERS = frozenset({"desktop", "downloads", "documents", "onedrive"})


@lru_cache(maxsize=4096)  # a session names the same few paths again and again
def agent_place(path: str) -> bool:
    """Is ``path`` (a normalised file path, or a listed directory) one of the agent's
    own places rather than the person's work? Whoever's home it is under."""
    low = path.lower()
    if any(marker in low + "/" for marker in _EXTENSION_DIRS):
        return True
    parts = low.split("/")
    if ".gemini" not in parts:
        return False
    rest = parts[parts.index(".gemini") + 1 :]
    if len(rest) >= 2 and rest[1] == "brain":
        inner = rest[3:]  # below brain/<id>/
        if not inner or inner[0] in _BRAIN_OWN_DIRS:
            return True
        return len(inner) == 1 and inner[0].endswith(_ARTIFACT_ENDINGS)
    if len(rest) >= 2 and rest[1] == "scratch":
        return len(rest) <= 3  # the scratch folder itself, a file loose in it
    return True  # settings, plugins, skills, knowledge, GEMINI.md


def is_shallow(directory: str) -> bool:
    """A directory too general to be anyone's project: a root, ``Users``, a home, its
    desktop or downloads, ``.gemini`` and the folders right below it."""
    parts = [p for p in directory.lower().rstrip("/").split("/")]
    if not parts or parts == [""] or (len(parts) == 1 and parts[0].endswith(":")):
        return True
    name = parts[-1]
    parent = parts[-2] if len(parts) > 1 else ""
    grand = parts[-3] if len(parts) > 2 else ""
    if name in _HOME_PARENTS or parent in _HOME_PARENTS or directory in ("/root",):
        return True
    if name in _HOME_FOLDERS and grand in _HOME_PARENTS:
        return True
    if name == ".gemini" or parent == ".gemini":
        return True
    return grand == ".gemini" and name in ("brain", "scratch")


def shared_directory(counts: Mapping[str, int]) -> str | None:
    """The directory ``counts``' directories share; where that is too general
    (``is_shallow``), the part below it holding more than half of the count,
    as long as there is one."""
    dirs = {d: n for d, n in counts.items() if n > 0 and d}
    if not dirs:
        return None
    candidate: str | None = None
    for d in dirs:
        candidate = common_directory(candidate, d)
    assert candidate is not None
    while is_shallow(candidate):
        total = sum(dirs.values())
        prefix = candidate.rstrip("/") + "/"
        below: dict[str, int] = {}
        for d, n in dirs.items():
            name = d[len(prefix) :].split("/", 1)[0] if d.startswith(prefix) else ""
            if name:  # "/home/" or "/home//x" names no folder below "/home"
                below[prefix + name] = below.get(prefix + name, 0) + n
        if not below:
            break
        child, n = max(below.items(), key=lambda kv: kv[1])
        if n * 2 <= total:
            break
        dirs = {d: m for d, m in dirs.items() if d == child or d.startswith(child + "/")}
        deeper: str | None = None
        for d in dirs:
            deeper = common_directory(deeper, d)
        assert deeper is not None
        if len(deeper) <= len(candidate):
            break  # no step down: stop rather than loop (fuzzed or odd paths)
        candidate = deeper
    return candidate if candidate not in ("/", "") else None


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
    # asked at each batch the index writes: plain strings, no Path objects made
    cache = os.path.join(root, "cache")
    out = []
    for name in ("conversation_metadata.json", "last_conversations.json"):
        try:
            out.append(os.stat(os.path.join(cache, name)).st_mtime_ns)
        except OSError:
            out.append(0)
    return out[0], out[1]


@lru_cache(maxsize=32)
def _caches(root: str, _ide_mtime: int, _cli_mtime: int) -> tuple[dict[str, str], dict[str, str]]:
    """Both caches of one root as {session id: project}; the mtimes key the memo."""
    from deja_blame.transcripts.files import lkind

    cache = Path(root) / "cache"
    if lkind(cache) != "dir":  # a linked cache folder below the root: never followed
        return {}, {}
    return _read_ide(_load(cache / "conversation_metadata.json")), _read_cli(
        _load(cache / "last_conversations.json")
    )


def _load(path: Path) -> Any:
    try:
        from deja_blame.transcripts.reading import read_whole

        return orjson.loads(read_whole(path))
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
