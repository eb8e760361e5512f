"""Bring the index up to date with the transcripts before answering."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.index.db import wait_briefly
from deja_blame.index.unread import left_unread
from deja_blame.output import warn
from deja_blame.transcripts.antigravity.discover import discover_roots

if TYPE_CHECKING:
    from deja_blame.index.prescan import Needle
    from deja_blame.transcripts.transcript_file import TranscriptFile


def refresh_index(
    conn: sqlite3.Connection,
    concern: tuple[Needle, ...] | None = None,
    changed: list[TranscriptFile] | None = None,
    say_left: bool = False,
    about: Path | None = None,
) -> int:
    """Read new transcript bytes first: blame right after an agent session just works.

    Only files whose stat changed are opened, so this costs a stat per session
    (the same check the post-commit hook makes); in a fork of the resident server,
    a stat of each session its watch saw written since (``watched.py``). With ``concern`` (``prescan``'s
    needles for one repository), only the new transcripts holding one of them are
    read now: the first answer does not wait for every other project's sessions,
    which ``deja index`` reads. ``changed``: the transcripts a caller found changed
    already (the editor server's timer thread): no second stat of every one.

    Returns how many new transcripts were left for ``deja index`` (none without
    ``concern``); a line says so on a terminal, or always with ``say_left`` (a
    command whose answer sums the whole repository: deja stats).

    ``about``: the file a question asks of, for a caller that gives no ``concern``:
    its repository's needles (``prescan.concern_of``) are worked out only when there
    is a new transcript to sort, so that a warm answer loads no prescan.
    """
    roots = discover_roots()
    # A refresh is a courtesy before the answer: behind another process's long
    # write (a `deja index` of thousands of sessions) it gives up after a few
    # seconds and the answer says it used what the index holds (it waited 30 s).
    later: list[TranscriptFile] = []
    left_unread(conn, roots, [])
    waited = wait_briefly(conn)
    try:
        # trust taken back since the last run: what only it let in leaves first
        from deja_blame.index.provenance import gate_held

        for lo in gate_held(conn):
            warn(f"removed from the index: {lo.line()}")
        record: Callable[[], None] | None = None
        if changed is not None:
            files = list(changed)
        else:
            # in a fork of the resident server, the sessions its watch saw written
            from deja_blame.index.watched import changed as watched_changes

            files, record = watched_changes(conn, roots)
        if files and concern is None and about is not None:
            from deja_blame.index.prescan import concern_of

            concern = concern_of(about)
        if files and concern is not None:
            from deja_blame.index.prescan import Nowhere, split

            nowhere: Nowhere = {}
            files, later = split(conn, files, concern, nowhere)
            if later:
                # a history a repository carries: deja index leaves it out on
                # purpose (and says so), so it is no transcript left for it to read
                from deja_blame.index.provenance import split_trusted

                later = split_trusted(later)[0]
            if later:
                left_unread(conn, roots, later, concern, nowhere)  # a renamed file's old names
            if later and (say_left or sys.stderr.isatty()):
                from deja_blame.output import counted

                print(
                    f"deja: {counted(len(later), 'new transcript')} left unread (none names"
                    " this repository or its remotes): `deja index` reads them",
                    file=sys.stderr,
                )
        if files:
            from deja_blame.index.ingest import index_roots
            from deja_blame.output import CommitProgress

            # a first answer after many new sessions is not silent on a terminal
            bar = CommitProgress("reading new transcripts")
            done: set[str] = set()

            def step(tf: TranscriptFile) -> None:
                if tf.session_id not in done:
                    done.add(tf.session_id)
                    bar(len(done), len(files))

            try:
                # in this process: git blame runs in a thread meanwhile
                index_roots(conn, roots, transcripts=files, jobs=1, progress=step)
            finally:
                bar.close()
        if record is not None and not later:
            record()  # every transcript found was read: the index is up to date
    except sqlite3.OperationalError as exc:
        warn(f"could not refresh the index ({exc}); blaming with what it holds")
    finally:
        conn.execute(f"PRAGMA busy_timeout = {waited}")
    return len(later)
