"""Whether a path a session wrote stands for a file of the repository at hand.

A session's transcript names absolute paths. ``ROOT/src/app.py`` is the file
``src/app.py`` of the repository at ``ROOT``; ``/elsewhere/clone/src/app.py`` may be
the same file in another clone (another machine, a moved folder): a match by suffix.
A suffix match implies the other clone's folder, the path with the file's
repository path taken off. That folder cannot be:

- the file system's top (``/`` or a drive, ``C:``): a session that wrote
  ``/etc/outside.py`` wrote outside any project, not ``etc/outside.py`` of this one;
- a folder holding this repository (``ROOT/../dotdot.py`` implies ``ROOT/..``): a
  clone of this repository does not hold it, unless it is a checkout of its own
  (a worktree made inside the main checkout, ``.claude/worktrees/NAME``: the main
  checkout has its ``.git``).

``..`` and ``.`` in a written path are resolved first, as the file system did when
the agent wrote it.
"""

from __future__ import annotations

import os
import posixpath
import re

_DRIVE = re.compile(r"[A-Za-z]:")


def stands_for(written: str, rel: str, root: str) -> bool | None:
    """Whether the written path ``written`` is the repository file ``rel`` of the
    repository at ``root``: True when under ``root`` itself, False when in another
    clone (a suffix match), None when it is not that file."""
    path = posixpath.normpath(written) if "/." in written else written
    root = root.rstrip("/")
    if path == f"{root}/{rel}":
        return True
    if not path.endswith("/" + rel):
        return None
    return False if could_be_a_clone(path[: -len(rel) - 1], root) else None


def could_be_a_clone(folder: str, root: str) -> bool:
    """Whether ``folder`` (a suffix match's implied clone) can be another clone of the
    repository at ``root`` (see the module)."""
    if not folder or _DRIVE.fullmatch(folder):
        return False
    if root.startswith(folder + "/"):
        return os.path.lexists(folder + "/.git")
    return True
