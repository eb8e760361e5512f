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
        sys.exit(code)
    run_here(args)


def run_here(args: list[str]) -> None:
    """The command, in this process (a resident server's fork calls this too)."""
    if args[:1] == ["blame"]:
        from deja_blame.attribution.facts.early import speculate

        speculate(args)  # git blame works while click, the index and pygit2 load
    from deja_blame.cli import main as cli_main

    cli_main(args)
