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
  checkout has its ``.git``);
- a folder inside this checkout that is here and no checkout (``ROOT/build/lib``
  for ``app.py``: a build's copy). A folder inside it that is gone (a worktree
  removed after its merge) may have been one.

A session that worked in this checkout (wrote a file of it: ``in_this_checkout``)
ran on this machine, so a folder outside this checkout that it wrote in is that
folder of this machine. Where that folder is here and in no checkout
(``in_no_checkout``: ``/etc`` for ``/etc/settings.py``), it is not another clone and
what the session wrote there is not this repository's (``attribution/facts/source.py``).
A sibling worktree (``git worktree add ../wt``) or another clone on this machine is
a checkout: the session's writes there still match by suffix, as any clone's.

The last two look at this machine's disk for a folder a session named, maybe on
another machine: a session whose clone was ``/workspace`` (a container) is not
matched by suffix in a checkout at ``/workspace/shop`` here, which is the folder
that holds it. ``..`` and ``.`` are resolved in the path's text (``posixpath``),
not through the file system: through a linked folder the agent's file system
may have landed elsewhere.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Container
from functools import lru_cache

_DRIVE = re.compile(r"[A-Za-z]:")
_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def stands_for(written: str, rel: str, root: str) -> bool | None:
    """Whether the written path ``written`` is the repository file ``rel`` of the
    repository at ``root``: True when under ``root`` itself, False when in another
    clone (a suffix match), None when it is not that file."""
    path = resolved(written)
    root = root.rstrip("/")
    if path == f"{root}/{rel}":
        return True
    if not path.endswith("/" + rel):
        return None
    return False if could_be_a_clone(path[: -len(rel) - 1], root) else None


def repository_path(
    written: str, root: str, files: Container[str], worktrees: bool = False
) -> str | None:
    """The repository path the written path ``written`` stands for: its path under
    ``root`` when it is there, else the longest of ``files`` it ends with whose
    implied folder could be another clone (see the module); None: neither.

    With ``worktrees``, a path under ``root`` that is no file of ``files`` and lies
    in a folder of it that is a checkout of this repository (a worktree made inside
    the main checkout, ``.worktrees/NAME``: ``checkout_of_this``) stands for the longest of ``files`` it
    ends with there: that checkout's file, not a file under ``root`` git never had
    (which every text "left" when the moves rule asks: ``facts/moved.py``)."""
    path = resolved(written)
    root = root.rstrip("/")
    if path.startswith(root + "/"):
        rel = path[len(root) + 1 :]
        if worktrees and rel not in files:
            skip = root.count("/") + 1
            return _suffix_in(path, root, files, skip, checkout_of_this) or rel
        return rel
    return _suffix_in(path, root, files)


def _suffix_in(
    path: str,
    root: str,
    files: Container[str],
    skip: int = 0,
    could_be: Callable[[str, str], bool] | None = None,
) -> str | None:
    """The longest of ``files`` that ``path`` ends with (``/`` bounded), its first
    ``skip`` parts kept, whose implied folder ``could_be`` (``could_be_a_clone``)
    another clone."""
    could_be = could_be or could_be_a_clone
    parts = path.split("/")
    for k in range(max(1, skip), len(parts)):
        rel = "/".join(parts[k:])
        if rel in files and could_be("/".join(parts[:k]), root):
            return rel
    return None


def checkout_of_this(folder: str, root: str) -> bool:
    """Whether ``folder``, inside the checkout at ``root``, is a checkout of this
    repository: a worktree of it (its ``.git`` a file whose ``gitdir:`` lies in this
    repository's ``worktrees/``), or a clone of it (its ``.git`` a folder whose
    ``HEAD`` commit this repository has). A nested clone of another repository or a
    submodule (``gitdir:`` in ``modules/``) is not; a linked ``.git`` is not followed.

    A folder that is gone counts: a worktree removed after its merge leaves nothing
    to ask (``git worktree remove`` deletes its ``worktrees/NAME``, and a clone made
    elsewhere never had it), and the moves rule needs those (entireio's sessions
    wrote tests in ``.worktrees/ent-95-test/`` a day before its removal: as files
    git never had, every text "left" them). Only a path that is no file of this
    repository is asked, and only a file of it is answered."""
    if not folder.startswith(root + "/"):
        return False
    if not os.path.lexists(folder):
        return True
    dotgit = folder + "/.git"
    if os.path.islink(dotgit):
        return False
    if os.path.isfile(dotgit):
        common = _git_dir(root + "/.git", common=True)
        mine = _git_dir(dotgit)
        return bool(common and mine) and mine.startswith(f"{common}/worktrees/")
    if os.path.isdir(dotgit):
        head = _head_commit(dotgit)
        return head is not None and _has_commit(root, head)
    return False


def _git_dir(dotgit: str, common: bool = False) -> str:
    """The real git folder a ``.git`` stands for ('' when unreadable): itself when a
    folder, else its ``gitdir:`` line's (the first 512 bytes read); ``common``: that
    git folder's ``commondir`` (a linked worktree's main ``.git``)."""
    if os.path.islink(dotgit):
        return ""
    if os.path.isdir(dotgit):
        return os.path.realpath(dotgit)
    text = _head_of_file(dotgit)
    if not text.startswith("gitdir: "):
        return ""
    found = os.path.join(os.path.dirname(dotgit), text[len("gitdir: ") :].strip())
    if common:
        up = _head_of_file(found + "/commondir").strip()
        if up:
            found = os.path.join(found, up)
    return os.path.realpath(found)


def _head_commit(git_dir: str) -> str | None:
    """The commit id a git folder's ``HEAD`` names, through one branch (loose or
    packed), read from its files; None: unreadable."""
    head = _head_of_file(git_dir + "/HEAD").strip()
    if head.startswith("ref: refs/") and ".." not in head:
        ref = head[len("ref: ") :]
        head = _head_of_file(f"{git_dir}/{ref}").strip()
        if not head:
            try:
                with open(git_dir + "/packed-refs", encoding="utf-8", errors="replace") as f:
                    head = next((ln[:40] for ln in f if ln.rstrip("\n").endswith(" " + ref)), "")
            except OSError:
                return None
    return head if _OID.fullmatch(head) else None


@lru_cache(maxsize=256)
def _has_commit(root: str, oid: str) -> bool:
    from deja_blame.gitutil import try_git  # (a kept answer's check loads this module)

    proc = try_git(root, ["cat-file", "-e", f"{oid}^{{commit}}"])
    return proc is not None and proc.returncode == 0


def _head_of_file(path: str, size: int = 512) -> str:
    """The first ``size`` bytes of a file as text ('' when unreadable)."""
    try:
        with open(path, "rb") as f:
            return f.read(size).decode("utf-8", "replace")
    except OSError:
        return ""


def could_be_a_clone(folder: str, root: str) -> bool:
    """Whether ``folder`` (a suffix match's implied clone) can be another clone of the
    repository at ``root`` (see the module)."""
    if not folder or _DRIVE.fullmatch(folder):
        return False
    if root.startswith(folder + "/"):  # it holds this repository
        return os.path.lexists(folder + "/.git")
    if folder.startswith(root + "/"):  # inside this checkout
        return os.path.lexists(folder + "/.git") or not os.path.lexists(folder)
    return True


def in_this_checkout(written: str, root: str) -> bool:
    """Whether the written path is a file of the checkout at ``root`` itself: under
    it, and in no folder of it that could be a checkout of its own (a worktree
    made inside it, or a folder gone since: ``could_be_a_clone``)."""
    path = resolved(written)
    root = root.rstrip("/")
    if not path.startswith(root + "/"):
        return False
    folder = root
    for part in path[len(root) + 1 :].split("/")[:-1]:
        folder += "/" + part
        if could_be_a_clone(folder, root):
            return False
    return True


def in_no_checkout(written: str) -> bool:
    """Whether the written path lies in a folder of this machine that is there and in
    no checkout: no folder from its own up to the top holds a ``.git``. A folder that
    is gone may have been one (a worktree removed after its merge)."""
    folder = posixpath.dirname(resolved(written))
    if not os.path.isdir(folder):
        return False
    while folder not in ("", "/"):
        if os.path.lexists(folder + "/.git"):
            return False
        folder = posixpath.dirname(folder)
    return True


def resolved(written: str) -> str:
    """``written`` with ``.`` and ``..`` resolved in its text."""
    return posixpath.normpath(written) if "/." in written else written
