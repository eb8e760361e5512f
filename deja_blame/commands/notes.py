"""deja notes push | fetch [REMOTE]: share refs/notes/deja without overwriting anyone's."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from deja_blame.errors import DejaError
from deja_blame.gitutil import open_repository
from deja_blame.hooks.pending import wait_for_hooks
from deja_blame.jsonout import print_json
from deja_blame.notes import share
from deja_blame.outputs.escape import terminal

if TYPE_CHECKING:
    import pygit2


def run_fetch(remote: str, as_json: bool, cwd: Path | None = None, git_ai: bool = False) -> int:
    repo = open_repository(cwd or Path.cwd())
    result = share.fetch(repo, remote)
    ai = share.fetch_git_ai(repo, remote) if git_ai else None
    if ai is not None and not as_json:
        click.echo(f"deja: git-ai notes (refs/notes/ai) of {remote}: {ai}", err=True)
    if as_json:
        doc = result.to_json()
        if ai is not None:
            doc["git_ai"] = ai
        print_json(doc)
    elif result.fetched is None:
        click.echo(f"deja: {remote} has no deja notes yet", err=True)
    else:
        m = result.merge
        what = {
            "up-to-date": "already up to date",
            "created": "local notes created from them",
            "fast-forward": "local notes fast-forwarded",
            "merge": f"merged: {m.taken} taken, {m.merged} merged note by note",
        }[m.kind]
        if m.restored:
            what += (
                f", {m.restored} damaged deja note{'s' if m.restored != 1 else ''} here"
                f" restored from {remote}'s"
            )
        if m.kept:
            what += f", {m.kept} unreadable kept as they were here"
        if m.skipped:
            what += (
                f", {m.skipped} skipped: notes of commits this clone does not have"
                " (fetch those commits, then deja notes fetch again)"
            )
        click.echo(f"deja: fetched the notes of {remote} ({result.ref}): {what}", err=True)
    return 0


def run_push(remote: str, as_json: bool, cwd: Path | None = None, dry_run: bool = False) -> int:
    repo = open_repository(cwd or Path.cwd())
    wait_for_hooks(repo)  # `git commit && deja notes push` pushes that commit's note
    if dry_run:
        result = share.push_dry_run(repo, remote)
        if as_json:
            print_json(result.to_json())
            return 0
        where = f"{terminal(remote)} ({terminal(result.url)})"
        tip = (result.would_push or "")[:12]
        if result.fast_forward:
            said = f"would push refs/notes/deja (notes commit {tip}) to {where}"
        else:
            said = (
                f"would push refs/notes/deja (notes commit {tip}) to {where}, after"
                " merging the notes it has that this clone lacks"
            )
        click.echo(f"deja: {said}; nothing sent (dry run)", err=True)
        return 0
    _complete_late_notes(repo)
    result = share.push(repo, remote)
    if as_json:
        print_json(result.to_json())
    elif result.up_to_date:
        click.echo(
            f"deja: refs/notes/deja on {terminal(remote)} ({terminal(result.url)}) was up to"
            " date: nothing new pushed",
            err=True,
        )
    else:
        extra = f" after merging theirs {result.merges}x" if result.merges else ""
        click.echo(
            f"deja: pushed refs/notes/deja to {terminal(remote)} ({terminal(result.url)}){extra}",
            err=True,
        )
    return 0


def _complete_late_notes(repo: pygit2.Repository) -> None:
    """Notes the hooks left late are written before a push (``hooks/late.py``)."""
    from deja_blame.hooks.late import complete_for_command, late_records
    from deja_blame.index.db import connect, default_db_path
    from deja_blame.notes.store import deja_dir
    from deja_blame.output import warn

    if not late_records(deja_dir(repo)):
        return
    path = default_db_path()
    if not path.exists():
        return
    try:
        conn = connect(path)
    except DejaError:
        return
    try:
        complete_for_command(repo, conn, warn)
    finally:
        conn.close()


def run_carry(
    spec: str,
    remote: str | None,
    pulls: list[str],
    sources: list[str],
    forge: str,
    fetch_notes: bool,
    push: bool,
    as_json: bool,
    cwd: Path | None = None,
) -> int:
    """Fetch the notes, carry them onto the new commits of ``spec``, push them."""
    from deja_blame.notes.carry import carry_notes

    repo = open_repository(cwd or Path.cwd())
    fetched = share.fetch(repo, remote) if remote and fetch_notes else None
    result = carry_notes(repo, spec, remote=remote, pulls=pulls, sources=sources, forge=forge)
    pushed = None
    if push and remote:
        from deja_blame.notes.store import ref_target

        if ref_target(repo) is not None:
            pushed = share.push(repo, remote)
    if as_json:
        doc = result.to_json()
        doc["fetched"] = fetched.to_json() if fetched is not None else None
        doc["pushed"] = pushed.to_json() if pushed is not None else None
        print_json(doc)
        return 0
    for c in result.commits:
        if c.pull is not None:
            squashed = f"pull request #{c.pull}"
        elif c.branch is not None:
            squashed = f"{terminal(c.branch)} (its change, by patch id)"
        else:
            squashed = c.sources[0][:12] if len(c.sources) == 1 else "?"
        what = {
            "squash": f"squash of {squashed}: {len(c.sources)} commit(s) carried",
            "rebase": f"rebase of {c.sources[0][:12] if c.sources else '?'}",
            "text": f"carried by text from {len(c.sources)} candidate commit(s)",
            "merge": "a merge: its parents' notes apply",
            "already": "a pull request's own commit: its note applies",
            "none": "no pull request commit found",
        }[c.how]
        # a run repeated (or a note carried before): it says that it changed nothing
        same = " (already noted: unchanged)" if c.unchanged and c.how != "already" else ""
        click.echo(f"{c.commit[:12]} {what}; {c.lines} attributed line(s){same}", err=True)
    left = any(c.how == "none" for c in result.commits)
    for number, head in result.pulls.items():
        if head is None and left and remote:
            # only where a commit is left without a note: a plain remote keeps no pull
            # request heads, and a squash found by its branch needs none (newcomer 11)
            click.echo(f"deja: pull request #{number}: no head on {remote}", err=True)
    if left and not sources:
        # a plain git remote (a bare repository, Gitea without pull refs, a mirror)
        # keeps no pull request heads, and no remote branch held the change: most
        # often the branch was deleted on merging (the trial's CI carried 0 lines)
        where = terminal(remote or "origin")
        none = sum(c.how == "none" for c in result.commits)
        click.echo(
            f"deja: {none} commit(s) left without a note: no pull request head, and no"
            f" branch of {where} (as last fetched) holds their change; a branch deleted"
            " after its merge holds nothing",
            err=True,
        )
        click.echo(
            f"hint: name the old commits: deja notes carry {terminal(spec)}"
            " --from <the branch's old tip commit id> (its pull request, the pusher's"
            f" git reflog or CI's log show it), or --from {where}/BRANCH while it exists",
            err=True,
        )
    if pushed is not None and pushed.up_to_date:
        click.echo(
            f"deja: refs/notes/deja on {remote} was up to date: nothing new pushed", err=True
        )
    elif pushed is not None:
        extra = f" after merging theirs {pushed.merges}x" if pushed.merges else ""
        click.echo(f"deja: pushed refs/notes/deja to {remote}{extra}", err=True)
    # exit 0 with commits left without a note: a CI job on every push to the default
    # branch must not fail over a merge it cannot carry; the lines above say so, and
    # the JSON's commits with "how": "none" (docs/contract.md)
    return 0
