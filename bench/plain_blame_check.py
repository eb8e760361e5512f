"""Whether ``plain_blame.plain_blame`` answers as ``git blame --porcelain`` does.

Every file of a repository at each revision asked (``--at``, HEAD when none), blamed
by git and in process, compared line for line (commit, path and line there).
Files the module leaves to git (None) are counted apart. Also prints the CPU of
git's blames (its processes) and of the module (this process; the ``git cat-file``
it reads blobs through is not counted). Run by hand:

    python bench/plain_blame_check.py REPO [--at REV ...]
    python bench/plain_blame_check.py REPO --at "$(git -C REPO rev-list --skip 700 -n1 HEAD)"
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from timed_git_blame import git_blame, sealed_env  # noqa: E402

from deja_blame.attribution.facts import shared  # noqa: E402
from deja_blame.attribution.facts.history import forget_histories, repo_history  # noqa: E402
from deja_blame.attribution.facts.plain_blame import plain_blame  # noqa: E402


def _run(repo: str, args: list[str], env: dict[str, str]) -> bytes:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, env=env).stdout


def check(repo: str, rev: str, env: dict[str, str]) -> int:
    """Compares every file at ``rev``; the number that differ."""
    head = _run(repo, ["rev-parse", "--verify", f"{rev}^{{commit}}"], env).decode().strip()
    listing = _run(repo, ["ls-tree", "-r", "-z", "--format=%(objectmode) %(path)", head], env)
    paths = [
        f.split(b" ", 1)[1].decode("utf-8", "surrogateescape")
        for f in listing.split(b"\0")
        if f.startswith(b"100") or f.startswith(b"120")
    ]
    same = differ = left = 0
    git_cpu = here_cpu = 0.0
    with shared.one_question(repo):
        repo_history(repo).knows(head)  # what the moves rule reads in a stats run
        for path in paths:
            want, cpu = git_blame(repo, [head, "--", path], env)
            git_cpu += cpu
            started = time.process_time()
            got = plain_blame(repo, head, path)
            here_cpu += time.process_time() - started
            if got is None:
                left += 1
            elif got == want:
                same += 1
            else:
                differ += 1
                print(f"  differs: {head} {path}")
    forget_histories()
    print(
        f"{repo} at {head[:12]}: {len(paths)} files, {same} the same, {differ} differ,"
        f" {left} left to git; git blame CPU {git_cpu:.2f} s, in process {here_cpu:.2f} s"
    )
    return differ


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo")
    parser.add_argument("--at", action="append", default=[])
    args = parser.parse_args()
    env = sealed_env("plain-blame-check-")
    repo = str(Path(args.repo).resolve())
    differ = sum(check(repo, rev, env) for rev in args.at or ["HEAD"])
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
