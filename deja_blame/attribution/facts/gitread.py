"""Stage 1's reader of what git lists of a repository: its HEAD, the files HEAD's
history touched (with the commits that touched them, and when), its tracked files,
a commit's tree. Each is one git process, read once per process (a commit's tree
never changes; HEAD's history is kept under HEAD), and answered as plain data.

``read_repository_files`` reads them on a thread while git blame runs
(``gather._read_ahead``), so what asks next finds them read: which written paths
stand for this repository's files (``repository.paths_of_repository``, the moves
rule) and which sessions worked here (``repository.RepositoryIdentity``).
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from deja_blame.attribution.facts.clone_paths import repository_path
from deja_blame.gitenv import no_git_env


@dataclass
class RepositoryFiles:
    """The repository's files over its history: path -> (commit times ascending, commits)."""

    times: dict[str, list[int]] = field(default_factory=dict)
    commits: dict[str, list[str]] = field(default_factory=dict)
    by_name: dict[str, list[str]] = field(default_factory=dict)

    def add(self, path: str, sha: str, when: int) -> None:
        if path not in self.times:
            self.times[path] = []
            self.commits[path] = []
            self.by_name.setdefault(PurePosixPath(path).name, []).append(path)
        self.times[path].append(when)
        self.commits[path].append(sha)

    def relative(self, written: str, root: str) -> str | None:
        """The repository path a session's absolute path stands for: under ``root``
        itself, else the longest repository path it ends with (``/`` bounded)."""
        if written in self.times:
            return written  # a relative path, as some agents write it
        rel = repository_path(written, root, self.times)
        return rel if rel in self.times else None


def git(
    root: str | Path, args: Sequence[str], timeout: float = 60
) -> subprocess.CompletedProcess[bytes] | None:
    """``git -C root ARGS`` (an argument vector, never a shell string), as stage 1
    asks git: its answers are optional facts, so this never raises. None where git
    cannot run at all (not on PATH, timed out); the caller reads the exit status.
    (``gitutil.try_git``'s contract: the facts stage runs its git from here, so
    what it asks git is read in one place.)"""
    try:
        return subprocess.run(
            ["git", "-C", str(Path(root)), *args],
            capture_output=True,
            env=no_git_env(),
            timeout=timeout,
        )
    except (OSError, subprocess.SubprocessError):
        return None


_LOCK = threading.Lock()
_FILES: dict[tuple[str, str], RepositoryFiles] = {}


def head_of(root: str) -> str:
    from deja_blame.attribution.facts import shared

    return shared.remembered(root, "HEAD", lambda: _head_of(root))


def _head_of(root: str) -> str:
    proc = git(root, ["rev-parse", "-q", "--verify", "HEAD"], timeout=10)
    if proc is None or proc.returncode != 0:
        return ""
    return proc.stdout.decode("ascii", "replace").strip()


def repository_files(root: str, head: str) -> RepositoryFiles:
    """Every file HEAD's history touched (renames as a delete and an add) and the
    working tree's tracked files, read once per (root, HEAD) in this process."""
    key = (root, head)
    with _LOCK:
        got = _FILES.get(key)
    if got is not None:
        return got
    log = (
        git(
            root,
            ["log", "--format=>%H %ct", "--name-only", "--no-renames", "-z", head],
            timeout=120,
        )
        if head
        else None
    )
    tracked = git(root, ["ls-files", "-z"], timeout=60)
    files = RepositoryFiles()
    if log is not None and log.returncode == 0:
        sha, when = "", 0
        for item in log.stdout.decode("utf-8", "surrogateescape").split("\0"):
            for part in item.split("\n"):
                if part.startswith(">"):
                    fields = part[1:].split()
                    if len(fields) == 2 and fields[1].isdigit():
                        sha, when = fields[0], int(fields[1])
                elif part and sha:
                    files.add(part, sha, when)
    for path, times in files.times.items():
        # oldest first, by time: git log's order is not (merged branches interleave)
        pairs = sorted(zip(times, files.commits[path]))
        files.times[path] = [t for t, _ in pairs]
        files.commits[path] = [c for _, c in pairs]
    if tracked is not None and tracked.returncode == 0:
        for path in tracked.stdout.decode("utf-8", "surrogateescape").split("\0"):
            if path and path not in files.times:
                files.times[path], files.commits[path] = [], []
                files.by_name.setdefault(PurePosixPath(path).name, []).append(path)
    with _LOCK:
        if len(_FILES) > 16:
            _FILES.clear()
        _FILES[key] = files
    return files


_TREES: dict[tuple[str, str], frozenset[str]] = {}


def tree_files(root: str, rev: str) -> frozenset[str]:
    """The files of ``rev``'s tree (``HEAD`` also the index's), read once per process."""
    key = (root, rev)
    with _LOCK:
        got = _TREES.get(key)
    if got is not None:
        return got
    args = ["ls-files", "-z"] if rev == "HEAD" else ["ls-tree", "-r", "-z", "--name-only", rev]
    proc = git(root, args, timeout=60)
    names = (
        proc.stdout.decode("utf-8", "surrogateescape").split("\0")
        if proc is not None and proc.returncode == 0
        else []
    )
    got = frozenset(n for n in names if n)
    with _LOCK:
        if len(_TREES) > 64:
            _TREES.clear()
        if rev != "HEAD":  # a commit's tree never changes; the index does
            _TREES[key] = got
    return got


def read_repository_files(root: str | Path, revs: list[str]) -> None:
    """Read what ``paths_of_repository`` asks git (HEAD's history, the trees of
    ``revs``) into this process's caches: a blame does it on a thread while git
    blame runs, so the move rules find the answers read."""
    root = str(root).rstrip("/") or "/"
    repository_files(root, head_of(root))
    for rev in revs:
        tree_files(root, rev)


_PLAIN_DIFF: dict[str, bool] = {}  # root -> git's diff is the one blame uses


def plain_diff(root: str) -> bool:
    """No configuration that makes git's diff differ from blame's, or blame's from
    the default: a diff algorithm (newer gits' blame honours diff.algorithm, older
    ones do not, plumbing diff never does), the indent heuristic, a textconv driver."""
    got = _PLAIN_DIFF.get(root)
    if got is None:
        proc = git(root, ["config", "--get-regexp", r"^diff\."])
        if proc is None or proc.returncode not in (0, 1):
            got = False
        else:
            names = [
                line.split(" ", 1)[0].lower()
                for line in proc.stdout.decode("utf-8", "replace").splitlines()
            ]
            got = not any(
                n == "diff.indentheuristic" or n.endswith((".algorithm", ".textconv"))
                for n in names
            )
        _PLAIN_DIFF[root] = got
    return got


def earlier_names(root: str | Path, rev: str | None, path: str) -> set[str]:
    """The names ``path`` had before ``rev`` (HEAD where None): the renames git's log
    follows back from it. A window of a file (``deja why``, ``blame -L``) is blamed
    only at its lines, whose blame may name none of them; the whole file's blame
    names those its older lines came from, whose writes it reads. Empty where git
    cannot say (no commit yet, an unknown revision)."""
    proc = git(
        root,
        ["--literal-pathspecs", "log", "--follow", "-z", "--name-status", "--diff-filter=R"]
        + ["--format=", rev or "HEAD", "--", path],  # a name like ':(top)y.py' is a name
    )
    if proc is None or proc.returncode != 0:
        return set()
    tokens = [t.lstrip(b"\n") for t in proc.stdout.split(b"\0")]
    names: set[str] = set()
    for k, tok in enumerate(tokens):
        if tok[:1] == b"R" and tok[1:].isdigit() and k + 2 < len(tokens):
            names.add(tokens[k + 1].decode("utf-8", "surrogateescape"))
    names.discard(path)
    return names
