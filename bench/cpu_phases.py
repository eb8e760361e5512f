"""Where a deja command's CPU goes: named functions timed with a CPU clock, in process.

    python bench/cpu_phases.py [--phase MODULE:FUNCTION[:CLASS]]... -- blame FILE --json

Runs ``deja ARGS`` in this process (never through a resident server:
``DEJA_SERVER=0`` is set) with each named function wrapped: the CPU
seconds spent inside it (its callees included; a generator counts only its
creation) are printed to stderr at exit, beside the process's own total. Git's
processes are not counted: ``/usr/bin/time`` or ``first_answer.py`` give those.
The process clock counts every thread's CPU: where the command blames on threads
(``stats``, ``report``) a phase then takes in what the other threads spent meanwhile;
``--per-thread`` times each call with its own thread's CPU clock instead.
The default phases are a first answer's: the prescan, the indexing of what it
found, the blame.
"""

from __future__ import annotations

import argparse
import atexit
import functools
import importlib
import os
import runpy
import sys
import time
from collections.abc import Callable
from typing import Any

FIRST_ANSWER = (
    "deja_blame.index.prescan:split",
    "deja_blame.index.ingest:index_roots",
    "deja_blame.transcripts.antigravity.reader:feed:SessionReader",
    "deja_blame.index.ingest:chunk_rows",
    "deja_blame.index.ingest:_commit",
    "deja_blame.attribution.blame:blame_versions",
    "deja_blame.later:finish",
)


def wrap(
    spec: str, spent: dict[str, float], clock: Callable[[], float] = time.process_time
) -> None:
    """Time ``module:function`` (or ``module:method:Class``) where it is looked up."""
    module_name, name, *owner_name = spec.split(":")
    module = importlib.import_module(module_name)
    owner: Any = getattr(module, owner_name[0]) if owner_name else module
    inner: Callable[..., Any] = getattr(owner, name)
    key = f"{owner_name[0] if owner_name else module_name.rsplit('.', 1)[-1]}.{name}"

    @functools.wraps(inner)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = clock()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[key] = spent.get(key, 0.0) + clock() - start

    setattr(owner, name, timed)


def main() -> None:
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--phase", action="append", help="MODULE:FUNCTION[:CLASS] (repeatable)")
    ap.add_argument(
        "--per-thread", action="store_true", help="each call's own thread's CPU (stats, report)"
    )
    args = ap.parse_args(argv[:cut])
    spent: dict[str, float] = {}
    clock = time.thread_time if args.per_thread else time.process_time
    for spec in args.phase or FIRST_ANSWER:
        wrap(
            spec, spent, clock
        )  # a function imported by name elsewhere is wrapped only if not yet bound

    def report() -> None:
        rows = [*spent.items(), ("process total", time.process_time())]
        print("\n".join(f"{k:48}{v:8.3f} s CPU" for k, v in rows), file=sys.stderr)

    atexit.register(report)
    os.environ["DEJA_SERVER"] = "0"  # the work must happen here, where it is timed
    sys.argv = ["deja", *argv[cut + 1 :]]
    runpy.run_module("deja_blame", run_name="__main__")


if __name__ == "__main__":
    main()
