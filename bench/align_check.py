"""Whether ``alignment.blame_hunks`` aligns as git does on a real history.

Every file a non-merge commit modified (``git log -p -U0``, the same ``xdi_diff``
as git blame), old blob against new, compared hunk for hunk. Binary files and
blobs the clone lacks (a partial clone) are counted apart. Run by hand:

    python bench/align_check.py REPO [REPO ...]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pygit2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from deja_blame.attribution.facts.alignment import Hunk, blame_hunks  # noqa: E402

_HEADER = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _pairs(repo: str) -> list[tuple[str, str, list[Hunk] | None]]:
    home = tempfile.mkdtemp(prefix="align-check-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=home, GIT_CONFIG_NOSYSTEM="1")
    out = subprocess.run(
        [
            "git",
            "-C",
            repo,
            "log",
            "-p",
            "-U0",
            "--no-merges",
            "--no-renames",
            "--full-index",
            "--no-color",
            "--no-textconv",
            "--no-ext-diff",
            "--format=commit %H",
            "HEAD",
        ],
        capture_output=True,
        env=env,
        check=True,
    ).stdout
    pairs: list[tuple[str, str, list[Hunk] | None]] = []
    hunks: list[Hunk] | None = None
    for line in out.split(b"\n"):
        if line.startswith((b"diff --git", b"commit ")):
            hunks = None
        elif line.startswith(b"index ") and b".." in line:
            old, new = line.split()[1].decode().split("..")
            hunks = []
            pairs.append((old, new, hunks))
        elif line.startswith(b"Binary files") and pairs:
            pairs[-1] = (pairs[-1][0], pairs[-1][1], None)
        elif hunks is not None and (m := _HEADER.match(line)):
            a, ac, b, bc = m.groups()
            na = 1 if ac is None else int(ac)
            nb = 1 if bc is None else int(bc)
            hunks.append((int(a) - 1 if na else int(a), na, int(b) - 1 if nb else int(b), nb))
    return [p for p in pairs if set(p[0]) != {"0"} and set(p[1]) != {"0"}]


def check(repo: str) -> int:
    r = pygit2.Repository(repo)
    same = differ = binary = missing = hunks = 0
    for old, new, want in _pairs(repo):
        if want is None:
            binary += 1
            continue
        try:
            a, b = r[old].data, r[new].data
        except KeyError:
            missing += 1
            continue
        hunks += len(want)
        if blame_hunks(a, b) == want:
            same += 1
        else:
            differ += 1
            print(f"  differs: {old} -> {new}")
    print(
        f"{repo}: {same} pairs the same ({hunks} hunks), {differ} differ, "
        f"{binary} binary, {missing} blobs missing"
    )
    return differ


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repos", nargs="+")
    args = parser.parse_args()
    return 1 if sum(check(repo) for repo in args.repos) else 0


if __name__ == "__main__":
    sys.exit(main())
