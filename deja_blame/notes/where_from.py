"""Where this machine can get attribution from, for the hint when there is none:
the index, where the agents' transcripts are here; else the notes of a remote
(a reviewer's clone has no transcripts, and ``deja index`` would find nothing)."""

from __future__ import annotations

from pathlib import Path

from deja_blame.gitutil import try_git


def transcripts_here() -> bool:
    """Any agent's transcript directory exists on this machine (where it keeps them)."""
    from deja_blame.transcripts.registry import AGENTS

    return any(root.is_dir() for h in AGENTS for root in h.roots())


def remotes(root: str | Path) -> list[str]:
    proc = try_git(root, ["remote"])
    return proc.stdout.decode("utf-8", "replace").split() if proc is not None else []


def notes_here(root: str | Path) -> bool:
    """Whether the repository has deja's notes (``refs/notes/deja``)."""
    proc = try_git(root, ["rev-parse", "-q", "--verify", "refs/notes/deja"])
    return proc is not None and proc.returncode == 0


def unattributed_hint(root: str | Path) -> str:
    """The command that gives this repository's lines their sessions."""
    if transcripts_here():
        return "run: deja index"
    if notes_here(root):
        # fetched already (deja notes fetch, carry): another fetch adds nothing
        return (
            "the repository's notes are here, but these lines' commits have none: made"
            " where no deja hook ran, or by a forge's squash or rebase (deja notes carry)"
        )
    names = remotes(root)
    if names:
        remote = "" if "origin" in names else f" {names[0]}"
        return (
            "no agent transcripts on this machine: fetch the attribution notes"
            f" of the repository, deja notes fetch{remote}"
        )
    return "run deja index where the agents' transcripts are (or deja notes fetch from a clone)"
