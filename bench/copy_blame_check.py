"""Whether ``copy_blame.CopyBlame`` answers as ``git blame --porcelain -C`` does.

Random questions about a repository's files at HEAD (1-3 line ranges each), or the
questions listed in a file (``--asked``: git's argument lists, ``... blame --porcelain
-M|-C -L A,B ... REV -- PATH``, each asked as ``-C``), each answered by git and in process, compared line for line (commit,
path and line there). Questions the module leaves to git (``NotHere``) are
counted apart, by reason. Run by hand:

    python bench/copy_blame_check.py REPO [--questions N] [--seed S] [--asked FILE]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from timed_git_blame import git_blame, sealed_env  # noqa: E402

from deja_blame.attribution.facts import shared  # noqa: E402
from deja_blame.attribution.facts.copy_blame import CopyBlame, NotHere  # noqa: E402
from deja_blame.attribution.facts.history import RepoHistory  # noqa: E402

_SPACE = b" \t\r\x0b\x0c"


def _questions(repo: str, n: int, seed: int, env: dict[str, str]) -> list[tuple[str, str, list]]:
    head = (
        subprocess.run(
            ["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, env=env, check=True
        )
        .stdout.decode()
        .strip()
    )
    files = subprocess.run(
        ["git", "-C", repo, "ls-tree", "-r", "-z", "--format=%(objectmode) %(path)", head],
        capture_output=True,
        env=env,
        check=True,
    ).stdout.split(b"\0")
    paths = [f.split(b" ", 1)[1].decode() for f in files if f.startswith(b"100")]
    rnd = random.Random(seed)
    out = []
    while len(out) < n and paths:
        path = rnd.choice(paths)
        count = subprocess.run(
            ["git", "-C", repo, "cat-file", "-p", f"{head}:{path}"],
            capture_output=True,
            env=env,
        ).stdout.count(b"\n")
        if count < 2:
            continue
        ranges = []
        for _ in range(rnd.randint(1, 3)):
            a = rnd.randint(1, count)
            ranges.append((a, min(count, a + rnd.randint(0, 120))))
        out.append((head, path, ranges))
    return out


def _asked(listing: str) -> list[tuple[str, str, list]]:
    out = []
    for line in Path(listing).read_text().splitlines():
        args = line.split()
        if "blame" not in args or "--" not in args:
            continue
        at = args.index("--")
        ranges = [tuple(map(int, a[2:].split(","))) for a in args if a.startswith("-L")]
        out.append((args[at - 1], " ".join(args[at + 1 :]), ranges))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo")
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--asked")
    args = parser.parse_args()
    env = sealed_env("copy-blame-check-")
    repo = str(Path(args.repo).resolve())
    if args.asked:
        asked = _asked(args.asked)
    else:
        asked = _questions(repo, args.questions, args.seed, env)
    same = differ = 0
    left: Counter[str] = Counter()
    git_cpu = here_cpu = 0.0
    with shared.one_question(repo):
        history = RepoHistory(repo)

        def held(specs: list[str]) -> list[frozenset[bytes]]:
            return [
                frozenset((b or b"").translate(None, _SPACE).split(b"\n"))
                for b in history.read_many(specs)
            ]

        for rev, path, ranges in asked:
            lines = [f"-L{a},{b}" for a, b in ranges]
            want, cpu = git_blame(repo, ["-C", *lines, rev, "--", path], env)
            git_cpu += cpu
            started = time.process_time()
            try:
                history.knows(rev)
                text = history.read(f"{rev}:{path}")
                if text is None:
                    raise NotHere("no such file")
                got = CopyBlame(repo, history, history.read_many, held, rev, path, text).blame(
                    ranges
                )
            except NotHere as exc:
                left[str(exc).split(":")[0][:50]] += 1
                continue
            finally:
                here_cpu += time.process_time() - started
            if got == want:
                same += 1
            else:
                differ += 1
                print(f"  differs: {rev} {path} {ranges}")
        history.close_reader()
    print(
        f"{repo}: {same} questions the same, {differ} differ, {sum(left.values())} left to git"
        f" {dict(left)}; git blame -C CPU {git_cpu:.2f} s, in process {here_cpu:.2f} s"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
