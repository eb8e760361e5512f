"""The ``deja`` console script: answers ``deja --version`` itself, hands a command to
the resident server where one runs (``resident/``), else to the CLI.

Importing click costs about as much as starting Python; a version check (what
scripts and package managers run to see that deja is there) needs neither.
The line is click's own ``version_option`` output, so both paths print the same.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        from deja_blame import __version__

        sys.stdout.write(f"deja, version {__version__}\n")
        sys.exit(0)
    from deja_blame.resident.client import run

    code = run(args)  # a resident server (``deja server start``) runs it, loaded already
    if code is not None:
        _leave(code)
    run_here(args)


def _leave(code: int) -> None:
    """Exit with the server's code, without the interpreter's teardown (2 ms of a
    15 ms client): this process ran no command, so nothing waits to be finished
    (no atexit work, no open files but the standard streams, flushed here)."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code & 0xFF)


def run_here(args: list[str]) -> None:
    """The command, in this process (a resident server's fork calls this too: its
    modules are loaded already, and a kept answer's look is the server's watch of the
    transcripts, ``index/look.py``, where a process alone stats every session)."""
    if args[:1] in (["stats"], ["report"]):
        from deja_blame.arenas import few_arenas

        few_arenas()  # before any thread (the index refresh's too): their memory in one pool
    if args[:1] == ["blame"]:
        from deja_blame import printed

        if printed.replay(args):  # the answer this question printed, while it holds
            sys.exit(0)
        from deja_blame.attribution.facts.early import speculate

        speculate(args)  # git blame works while click, the index and pygit2 load
        from deja_blame.cli import main as cli_main

        try:
            cli_main(args)
        except SystemExit as done:
            printed.keep(done.code)  # what it printed, for the next time it is asked
            raise
        printed.keep(0)
        return
    from deja_blame.cli import main as cli_main

    cli_main(args)
