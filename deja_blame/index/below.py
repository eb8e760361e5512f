"""Histories kept in the work tree below the current folder: a monorepo's subprojects,
each opened on its own in the editor, keep their own SpecStory ``.specstory``. The
agents whose plug-in says where theirs lie (``Agent.below``) get the folders holding
one, found by one ``git ls-files`` of what the work tree tracks or would (untracked,
not ignored: no ``node_modules``). Asked by whole runs only (``deja index``, doctor):
git walks the work tree's folders for the untracked ones, a cost the refresh before
each answer must not pay. Each history found passes the trust gate as any other
(``provenance.split_trusted``): one the repository tracks is a stranger's; only
below a folder HEAD holds (a subproject, not a project unpacked into the tree); and
one read untracked is never remembered as the user's own (``found_below``): a
vendored project HEAD holds can gain a ``.specstory`` its next version brought."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from pathlib import Path

from deja_blame.index.provenance import work_tree_of


def roots_below(
    agents: list[str] | None = None, env: Mapping[str, str] | None = None
) -> dict[str, list[Path]]:
    """Agent id -> the folders strictly below the current one holding its histories
    (``registry.discover``'s ``below``). Nothing outside a work tree, nor in one that
    holds the home folder (a home kept in git: a walk of all of it), nor where git
    cannot answer."""
    from deja_blame.gitutil import try_git
    from deja_blame.transcripts.registry import AGENTS, agent_named

    env = os.environ if env is None else env
    chosen = [a for a in ([agent_named(n) for n in agents] if agents else AGENTS) if a.below]
    if not chosen:
        return {}
    try:
        here = Path(os.getcwd())
    except OSError:
        return {}
    top = work_tree_of(here)
    home = Path(os.path.realpath(env.get("HOME") or Path.home()))
    if top is None or top == home or top in home.parents:
        return {}
    specs = [f":(glob,icase)**/{a.below}" for a in chosen]
    proc = try_git(here, ["ls-files", "-z", "--cached", "--others", "--exclude-standard", *specs])
    if proc is None or proc.returncode != 0:
        return {}
    found: dict[str, dict[Path, None]] = {}
    for name in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        parts = name.split("/")
        for a in chosen:
            depth = a.below.count("/") + 1
            tail = "/".join(parts[-depth:])
            if len(parts) > depth and fnmatch.fnmatchcase(tail.casefold(), a.below.casefold()):
                found.setdefault(a.id, {})[here.joinpath(*parts[:-depth])] = None
    held = _in_head(here, [root for roots in found.values() for root in roots])
    kept = {agent: [root for root in roots if root in held] for agent, roots in found.items()}
    return {agent: roots for agent, roots in kept.items() if roots}


def _in_head(here: Path, roots: list[Path]) -> set[Path]:
    """The ``roots`` whose folder HEAD holds something beside the history: a
    subproject of the user's repository. A folder untracked as a whole is a project
    unpacked or copied in (a download, a tarball), whose committed ``.specstory`` holds
    its authors' chats: untracked here only because it was not cloned (review 14 F3).
    None when HEAD is unborn or git cannot answer: nothing below is read."""
    from deja_blame.gitutil import try_git

    rels = {os.path.relpath(root, here).replace(os.sep, "/"): root for root in roots}
    proc = try_git(here, ["ls-tree", "-z", "--name-only", "HEAD", "--", *(f"{r}/" for r in rels)])
    if proc is None or proc.returncode != 0:
        return set()
    held: set[Path] = set()
    for name in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        folder, _, entry = name.rpartition("/")
        if folder in rels and entry.casefold() != ".specstory":
            held.add(rels[folder])
    return held
