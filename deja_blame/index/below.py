"""Histories kept in the work tree below the current folder: a monorepo's subprojects,
each opened on its own in the editor, keep their own SpecStory ``.specstory``. The
agents whose plug-in says where theirs lie (``Agent.below``) get the folders holding
one, found by one ``git ls-files`` of what the work tree tracks or would (untracked,
not ignored: no ``node_modules``). Asked by whole runs only (``deja index``, doctor):
git walks the work tree's folders for the untracked ones, a cost the refresh before
each answer must not pay. Each history found passes the trust gate as any other
(``provenance.split_trusted``): one the repository tracks is a stranger's."""

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
    return {agent: list(roots) for agent, roots in found.items()}
