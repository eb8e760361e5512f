"""Which indexed sessions ran in a checkout of this repository on this machine.

Such a session's transcript and git's commits share one clock: the matcher allows
it no clock skew (``match/clock.py``). A session ran here when its project (the
folder it worked in: Claude Code's ``cwd``, Antigravity's inferred workspace) is
this repository's root, one of its worktrees (``git worktree add``: read from the
files under the repository's common git folder, no git run), or a folder inside
one of them. A session of another machine (``C:/Users/x/proj``, ``/home/alice/proj``
where this clone is elsewhere), or of another clone on this machine, is not: what
its path shares with this one (a suffix) says nothing of its clock.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

from deja_blame import statefile
from deja_blame.attribution.facts import indexread
from deja_blame.attribution.facts.clone_paths import resolved
from deja_blame.index import queries as Q

_LOCK = threading.Lock()
# (database, root, the sessions table's size) -> the sessions that ran in a checkout
_KNOWN: dict[tuple[str, str, tuple[int, int]], frozenset[int]] = {}


def checkouts(root: str | Path) -> list[str]:
    """The folders of this repository's checkouts: ``root``, the main checkout and
    every linked worktree git lists (each as written, and its real path)."""
    root = str(root).rstrip("/") or "/"
    found = [root]
    common = _common_git_dir(Path(root))
    if common is not None:
        if common.name == ".git":
            found.append(str(common.parent))
        try:
            with os.scandir(common / "worktrees") as entries:
                for entry in entries:
                    pointer = statefile.read_text(Path(entry.path) / "gitdir", 4096)
                    if pointer and pointer.strip().endswith("/.git"):
                        found.append(pointer.strip()[: -len("/.git")])
        except OSError:
            pass  # no linked worktree
    out: list[str] = []
    for folder in found:
        for name in (folder, os.path.realpath(folder)):
            if name not in out:
                out.append(name)
    return out


def _common_git_dir(root: Path) -> Path | None:
    """The repository's common git folder (where ``worktrees/`` is), from ``root/.git``:
    that folder, or the file naming a linked worktree's folder and its ``commondir``."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    text = statefile.read_text(dot_git, 4096) or ""
    if not text.startswith("gitdir:"):
        return None
    gitdir = (root / text[len("gitdir:") :].strip()).resolve()
    pointer = statefile.read_text(gitdir / "commondir", 4096)
    return (gitdir / pointer.strip()).resolve() if pointer else gitdir


def ran_in(project: str, folders: list[str]) -> bool:
    """Whether a session whose project is ``project`` worked in one of ``folders``
    (the folder itself or one inside it)."""
    path = resolved(project.replace("\\", "/")).rstrip("/")
    return bool(path) and any(path == f or path.startswith(f + "/") for f in folders)


def same_clock_sessions(conn: sqlite3.Connection, root: str | Path) -> frozenset[int]:
    """The row ids of the indexed sessions that ran in a checkout of the repository at
    ``root`` on this machine (see the module)."""
    root = str(root).rstrip("/") or "/"
    key = (Q.database_path(conn), root, indexread.sessions_size(conn))
    with _LOCK:
        got = _KNOWN.get(key)
    if got is not None:
        return got
    folders = checkouts(root)
    got = frozenset(
        sid for sid, project in indexread.session_projects(conn) if ran_in(project, folders)
    )
    with _LOCK:
        if len(_KNOWN) > 64:
            _KNOWN.clear()
        _KNOWN[key] = got
    return got
