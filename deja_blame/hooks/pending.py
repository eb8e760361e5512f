"""Hook jobs still at work: readers of notes wait for them instead of reading a note
that is still being written.

The shell hook writes ``.git/deja/jobs/<hook>-<pid>`` before it starts deja in
the background ("<deadline epoch> <hook> <commit>") and removes it when the job
ends, whether deja finished, failed or was killed at its budget. So
``git commit && deja notes push`` finds the marker even though the job has not
started Python yet, and waits for the note it is about to push.

A marker past its deadline is stale (a machine that went down mid-job) and is
ignored; nothing waits longer than the hook's own budget.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame import statefile

if TYPE_CHECKING:
    import pygit2

JOBS_DIR = "jobs"
MARKER_BYTES = 512
POLL_SECONDS = 0.05


@dataclass(frozen=True)
class PendingJob:
    path: Path
    deadline: float
    hook: str
    commit: str


def pending_jobs(deja_dir: Path, now: float | None = None) -> list[PendingJob]:
    """The hook jobs of this repository still within their budget."""
    now = time.time() if now is None else now
    out: list[PendingJob] = []
    try:
        names = os.listdir(deja_dir / JOBS_DIR)
    except OSError:
        return out
    for name in sorted(names):
        path = deja_dir / JOBS_DIR / name
        try:
            # a regular file of one short line: a FIFO or a link (to /dev/zero) is not a job
            text = statefile.read_text(path, MARKER_BYTES)
            fields = (text or "").split()
            deadline = float(fields[0])
        except (ValueError, IndexError):
            continue  # half written, or gone already
        if deadline < now:
            continue  # stale
        hook = fields[1] if len(fields) > 1 else "?"
        commit = fields[2] if len(fields) > 2 else ""
        out.append(PendingJob(path, deadline, hook, commit))
    return out


def wait_for_hook_jobs(
    deja_dir: Path,
    say: Callable[[str], None] | None = None,
    limit: float | None = None,
) -> bool:
    """Wait until no hook job of this repository is at work (each at most until its
    deadline, all at most ``limit`` seconds). True when none is left running."""
    jobs = pending_jobs(deja_dir)
    if not jobs:
        return True
    if say is not None:
        first = jobs[0]
        what = (
            f"the {first.hook} hook's note of {first.commit[:12]}"
            if first.commit
            else (f"the {first.hook} hook")
        )
        more = f" and {len(jobs) - 1} more" if len(jobs) > 1 else ""
        budget = max(j.deadline for j in jobs) - time.time()
        if limit is not None:
            budget = min(budget, limit)
        say(f"waiting for {what}{more} (up to {budget:.0f} s)")
    give_up = time.monotonic() + (limit if limit is not None else 3600)
    while jobs and time.monotonic() < give_up:
        time.sleep(POLL_SECONDS)
        jobs = [j for j in jobs if os.path.lexists(j.path) and j.deadline >= time.time()]
    return not jobs


def wait_for_hooks(repo: pygit2.Repository) -> None:
    """Wait (within the hooks' budget) for hook jobs still writing notes here."""
    import click

    from deja_blame.notes.store import deja_dir

    wait_for_hook_jobs(deja_dir(repo), say=lambda text: click.echo(f"deja: {text}", err=True))
