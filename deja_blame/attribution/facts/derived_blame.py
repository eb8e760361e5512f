"""A file's blame at a commit, derived from its blame at an older commit: what git
blame would print, without git walking the file's whole history again.

``deja report`` blames each file a commit changed, at that commit, for every
commit of its range, and then the files at the range's tip: werkzeug's 209
commits asked git for 506 blames of the same few files, each walking back to
the lines' first commits. git's blame (no ``-M``/``-C``, no ``-w``, no ignored
revisions) passes a commit's lines to its parents one parent at a time
(``blame.c``, ``pass_blame``):

- the first parent, in order, that has the file under the same path with the same
  blob takes every line as it is (``pass_whole_blame``);
- otherwise a commit with one parent that has the file under the same path gives
  the parent the lines that the diff of the two versions leaves unchanged, and
  keeps the added ones (``pass_blame_to_parent``: the same xdiff with the same
  options as ``git diff-tree -p``).

So a blame remembered at commit A (``remember``) answers for a later commit B
of the same file: walk from B through identical parents down to A, or through
commits of one parent that changed the file, each step one ``git diff-tree -p
-U0`` (a few ms, against 40 ms for a blame of a werkzeug file). Anything else
(a merge that changed the file, a rename, a root commit, options or diff
configuration that change git's diff) is not derived: git blames it, and that
blame is remembered in turn. Only commands that blame many files at many commits
turn it on (``share_blames``): a one-file question never reads the whole history.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from deja_blame.attribution import blame_options
from deja_blame.attribution.facts import shared
from deja_blame.attribution.facts.gitread import git, plain_diff
from deja_blame.attribution.facts.history import Changes, RepoHistory, repo_history
from deja_blame.attribution.facts.model import BlameLine

PER_PATH = 2  # blames remembered per path
LINES = 250_000  # lines of blames remembered per repository (~100 bytes each)
DIFF_STEPS = 16  # commits that changed the file, walked through, before git blames it
WALK_STEPS = 20_000  # commits walked through (identical parents) before giving up

_LOCK = threading.Lock()
_BLAMES = "derived_blame.kept"  # the question's key of the blames it remembers


@contextmanager
def share_blames(root: str | Path) -> Iterator[None]:
    """Within this block (one question, ``shared.py``), blames at commits of ``root``
    are remembered and derived."""
    with shared.one_question(root), shared.counted(_ON, str(root)):
        yield


_ON: dict[str, int] = {}  # root -> blocks sharing blames there


def _sharing(root: str) -> bool:
    return root in _ON and blame_options.current().default


def remember(root: str | Path, commit: str, path: str, lines: list[BlameLine]) -> None:
    """git's blame of ``path`` at ``commit`` (default options), for later derivations."""
    key = str(root)
    if not _sharing(key):
        return
    kept = shared.kept(key, _BLAMES, _Kept)
    if kept is not None:
        with _LOCK:
            kept.add(commit, path, lines)


@dataclass
class Known:
    """What a question about many files knows of git's blame at a commit (``known``):
    its lines (None: git must blame it), whether they were computed in process
    (``plain_blame``: no early ``git blame`` will be taken), and ``keep``, which
    remembers git's blame of the same file at the same commit once git gives it
    (``remember``, for later derivations)."""

    lines: list[BlameLine] | None
    computed: bool = False
    keep: Callable[[list[BlameLine]], None] = lambda lines: None


def known(root: str | Path, commit: str, path: str, cached: list[BlameLine] | None) -> Known:
    """git's blame of ``path`` at ``commit`` as far as it is known without git: the
    blame cache's (``cached``), else derived from a remembered one (``derive``), else
    computed from the history the question has read (``plain_blame``); the cache's and
    the computed one remembered for later derivations."""
    keep = functools.partial(remember, root, commit, path)
    if cached is not None:
        keep(cached)
        return Known(cached, keep=keep)
    derived = derive(root, commit, path)
    if derived is not None:
        return Known(derived, keep=keep)
    # a question about many files that has read the history: git's plain blame,
    # computed in process from it, not a git process per file (its modules loaded
    # at the first cache miss, as before: an answer the caches give loads none)
    from deja_blame.attribution.facts.plain_blame import plain_blame

    computed = plain_blame(str(root), commit, path)
    if computed is None:
        return Known(None, keep=keep)
    keep(computed)
    return Known(computed, computed=True, keep=keep)


class _Kept:
    """The blames remembered in one repository: the newest ``PER_PATH`` of each path
    (a range is blamed oldest first: the next commit derives from the last), at most
    ``LINES`` lines in all, the least recently added forgotten first."""

    def __init__(self) -> None:
        self.blames: OrderedDict[tuple[str, str], list[BlameLine]] = OrderedDict()
        self.commits: dict[str, list[str]] = {}  # path -> its commits kept, oldest first
        self.lines = 0

    def add(self, commit: str, path: str, lines: list[BlameLine]) -> None:
        key = (commit, path)
        if key in self.blames:
            self.blames.move_to_end(key)
            return
        self.blames[key] = lines
        self.lines += len(lines)
        mine = self.commits.setdefault(path, [])
        mine.append(commit)
        if len(mine) > PER_PATH:
            self._drop((mine[0], path))
        while self.lines > LINES and len(self.blames) > 1:
            self._drop(next(iter(self.blames)))

    def _drop(self, key: tuple[str, str]) -> None:
        self.lines -= len(self.blames.pop(key))
        mine = self.commits[key[1]]
        mine.remove(key[0])
        if not mine:
            del self.commits[key[1]]


def derive(root: str | Path, commit: str, path: str) -> list[BlameLine] | None:
    """git blame's lines of ``path`` at ``commit``, from a remembered blame; None when
    none can be derived exactly (then git blames it)."""
    key = str(root)
    if not _sharing(key):
        return None
    kept = shared.kept(key, _BLAMES, _Kept)
    if kept is None:
        return None
    with _LOCK:
        if path not in kept.commits:
            return None
        known = {c: kept.blames[(c, path)] for c in kept.commits[path]}
    if not plain_diff(key):
        return None
    history = repo_history(key)
    if not history.knows(commit):
        return None
    # walk down to a remembered blame, noting each commit that changed the file
    steps: list[tuple[str, str]] = []  # (commit, its parent), newest first
    at = commit
    base: list[BlameLine] | None = None
    for _ in range(WALK_STEPS):
        base = known.get(at)
        if base is not None:
            break
        c = history.commits.get(at)
        if c is None or not c.parents or len(c.against) < len(c.parents):
            return None
        same = _identical_parent(history, at, c.parents, c.against, path)
        if same == -1:
            return None
        if same is not None:
            at = c.parents[same]
            continue
        if len(c.parents) > 1 or c.against[0][path][0] != "M" or len(steps) >= DIFF_STEPS:
            return None  # a merge that changed it, a rename or an added file: git's own
        steps.append((at, c.parents[0]))
        at = c.parents[0]
    if base is None:
        return None
    lines = base
    for child, parent in reversed(steps):
        got = _pass_through(key, parent, child, path, lines, history.commits[child].time)
        if got is None:
            return None
        lines = got
        remember(key, child, path, lines)
    return lines


def _identical_parent(
    history: RepoHistory, commit: str, parents: tuple[str, ...], against: list[Changes], path: str
) -> int | None:
    """The first parent with the same blob under ``path`` (git's first pass over the
    parents: the same path only), or None; -1 when git's choice is not known here
    (a merge that changed the file's mode alone against some parent)."""
    if len(parents) > 1 and (commit, path) in history.mode_only:
        return -1
    for n in range(len(parents)):
        if path not in against[n]:
            return n  # nothing changed against it
    return None  # (one parent whose mode alone changed: the diff step says the same)


def _pass_through(
    root: str, parent: str, child: str, path: str, before: list[BlameLine], when: int
) -> list[BlameLine] | None:
    """The blame at ``child`` from the blame at its parent: lines the diff leaves are
    the parent's, lines it adds are the child's."""
    proc = git(
        root,
        ["--literal-pathspecs", "diff-tree", "-p", "-U0", "--no-renames", "--no-ext-diff"]
        + ["--no-textconv", "--no-color", parent, child, "--", path],
    )
    if proc is None or proc.returncode != 0:
        return None
    origin = _new_to_old(proc.stdout, len(before))
    if origin is None:
        return None
    out: list[BlameLine] = []
    for k, old in enumerate(origin, start=1):
        if old is None:
            out.append(BlameLine(k, child, when, path, k))
        else:
            b = before[old - 1]
            out.append(BlameLine(k, b.commit, b.commit_time, b.orig_path, b.orig_line))
    return out


def _new_to_old(patch: bytes, old_count: int) -> list[int | None] | None:
    """For each line of the new version, its line in the old one (None: added),
    from a ``diff -U0`` of one file; None when the patch is not one text diff."""
    origin: list[int | None] = []
    old = 1  # the next line of each version
    files = 0
    in_hunk = False
    for raw in patch.split(b"\n"):
        if raw.startswith(b"diff --git "):
            files += 1
            in_hunk = False
            continue
        if raw.startswith(b"@@ "):
            got = _hunk_start(raw)
            if got is None:
                return None
            start = got
            if start < old:
                return None
            while old < start:  # the unchanged lines before the hunk
                origin.append(old)
                old += 1
            in_hunk = True
            continue
        if not in_hunk:
            if raw.startswith(b"Binary files ") or raw.startswith(b"GIT binary patch"):
                return None
            continue
        tag = raw[:1]
        if tag == b"-":
            old += 1
        elif tag == b"+":
            origin.append(None)
        elif tag == b" ":
            origin.append(old)
            old += 1
        elif tag == b"\\" or not raw:
            continue  # "\ No newline at end of file", the patch's last newline
        else:
            return None
    if files > 1 or old > old_count + 1:
        return None
    while old <= old_count:
        origin.append(old)
        old += 1
    return origin


def _hunk_start(header: bytes) -> int | None:
    """The first old line a hunk ``@@ -a,b +c,d @@`` removes or keeps, or after
    which it adds (``b`` = 0: after line ``a``)."""
    try:
        old = header.split(b" ", 2)[1]
        if not old.startswith(b"-"):
            return None
        first, _, count = old[1:].partition(b",")
        a = int(first)
        n = int(count) if count else 1
    except (IndexError, ValueError):
        return None
    return a if n > 0 else a + 1
