"""The first answer's search against real captures: is every file a session wrote found?

Before an answer, the refresh reads only the new transcripts that hold the asked
file's needles (``index/prescan.py``: its name after its folders, or bare, ...);
the complete index keeps a written path for the file wherever it ends with the
file's repository path. So for every capture under a directory (any agent's,
known by ``real_agents_raw.classify``'s shapes), every path its session wrote or
touched, taken as each repository path it could stand for (its last 1 to 5
parts), must be found in the capture's bytes (its parts' too) by that path's
needles. A miss is printed with whether the bare file name is there: a miss by
the bare name too is a limit of the search by names as such.

    python bench/needles_check.py /tmp/captures

Exits 1 when anything is missed. Real transcripts carry no licence and personal
text: keep them outside the repository, never as fixtures.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from real_agents_raw import classify  # noqa: E402

from deja_blame.index import prescan  # noqa: E402
from deja_blame.transcripts.registry import discover_in, parse_any, read_session  # noqa: E402

DEJA_AGENT = {"copilot-chat": "copilot"}  # as real_agents.py reads them
DEPTH = 5  # repository paths of up to this many parts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("top", help="directory holding real captures")
    args = ap.parse_args()
    top = Path(args.top).resolve()
    found = {tf.path.resolve(): tf for tf in discover_in([top])}
    captures = asked = missed = 0
    for path in sorted(p for p in top.rglob("*") if p.is_file()):
        agent = classify(path)
        if agent is None:
            continue
        tf = found.get(path.resolve())
        try:
            s = (
                read_session(tf)
                if tf is not None
                else parse_any(path, DEJA_AGENT.get(agent, agent))
            )
        except Exception as exc:  # a reader's refusal: real_agents.py reports it
            print(f"skipped {path.relative_to(top)}: {exc}"[:160])
            continue
        captures += 1
        parts = [path, *(tf.parts if tf is not None else ())]
        data = b"\n".join(p.read_bytes() for p in parts if p.is_file())
        for written in sorted({e.path for e in s.edits} | {f.path for f in s.files}):
            names = written.strip("/").split("/")
            for k in range(1, min(DEPTH, len(names)) + 1):
                rel = "/".join(names[-k:])
                asked += 1
                if prescan._found(data, prescan.search_plan(prescan.name_needles([rel]))):
                    continue
                missed += 1
                bare = (names[-1].encode("utf-8", "surrogateescape"),)
                also = "" if prescan._found(data, prescan.search_plan(bare)) else ", bare name too"
                print(f"missed {path.relative_to(top)} ({agent}): {written} as {rel}{also}")
    print(f"{captures} captures, {asked} (path, repository path) pairs, {missed} missed")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
