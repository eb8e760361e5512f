"""A repository's whole history from one ``git log``: what a per-path log would show.

Blame's rules ask git about a file's past again and again: the commits that
touched it (``window.FileHistory``), whether a commit deleted a file a session
wrote, which paths no commit ever had (``moves``). Each was a ``git log REV --
PATH``, and ``deja report``, ``stats`` and ``annotate`` ask it for every file at
every commit: on click, 872 of 1,492 git processes for 45 commits were the same
log again at another commit.

Here the history is read once per process and repository, ``git log -m --raw``
(every commit, its parents and its tree, and what changed against each parent),
and ``log(rev, paths)`` walks it as git walks ``git log --parents REV --
PATHS``: the same commits, in the same order, with the same rewritten parents.
The walk copies git's (``revision.c``): commits taken newest first by
committer date (first come first among equals), simplified by the paths (a
commit that changed none of them is left out; a merge that matches one of its
parents on them follows that parent alone), parents rewritten to the nearest
commits shown. Merges show no changes, as in ``git log`` without ``-m``.
"""

from __future__ import annotations

import heapq
import itertools
import re
import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from deja_blame.attribution.facts import shared
from deja_blame.attribution.facts.gitread import git
from deja_blame.gitutil import CatFile
from deja_blame.objectid import ID

_FULL_ID = re.compile(ID)  # SHA-1 or SHA-256

# what changed against one parent: path -> (status letter, blob after; 40 zeros: none)
Changes = dict[str, tuple[str, str]]


@dataclass(frozen=True)
class LogEntry:
    """One commit ``git log --parents REV -- PATHS`` shows."""

    commit: str
    time: int  # committer time
    parents: tuple[str, ...]  # rewritten: the nearest commits shown
    changes: Changes  # of the paths asked about (empty for a merge)


@dataclass
class _Commit:
    time: int
    tree: str
    parents: tuple[str, ...]
    against: list[Changes]  # per parent (the root: against the empty tree)


class RepoHistory:
    """Every commit reachable from the revisions asked about, read as needed."""

    def __init__(self, root: str | Path) -> None:
        self.root = str(root)
        self.commits: dict[str, _Commit] = {}
        self._tips: list[str] = []
        # per path set: commit -> (treesame, the parents the walk follows)
        self._simplified: dict[frozenset[str], dict[str, tuple[bool, tuple[str, ...]]]] = {}
        self._failed: set[str] = set()
        self._batch: CatFile | None = None
        self._touching: dict[str, set[str]] = {}  # path -> commits that changed it
        self._logs: dict[tuple[str, frozenset[str]], list[LogEntry]] = {}
        self._unordered: dict[tuple[str, frozenset[str]], list[LogEntry]] = {}
        self._lines: _Lines | None = None  # the first-parent lines, made when first asked
        self._reached: dict[str, frozenset[str]] = {}  # rev -> the commits it reaches
        self._direct = 0
        self._first_times: dict[str, int | None] = {}
        self._roots_time: tuple[int | None] | None = None  # (the oldest root's time,)
        # (commit, path) changed against a parent in its mode alone, the blob the same
        self.mode_only: set[tuple[str, str]] = set()
        # one reader at a time: the blame's read-ahead thread, stats' pool and the
        # editor server's threads share the process's history (reentrant: ``log``
        # may read a blob)
        self._lock = threading.RLock()

    def read(self, spec: str) -> bytes | None:
        """A blob (``rev:path``) through the repository's one ``git cat-file --batch``."""
        return self.read_many([spec])[0]

    def read_many(self, specs: list[str]) -> list[bytes | None]:
        """``read`` of several blobs in one round trip to git."""
        with self._lock:
            if self._batch is None:
                self._batch = CatFile(self.root)
            _reading(self)
            return self._batch.read_many(specs)

    def close_reader(self) -> bool:
        """Close this history's ``git cat-file --batch`` (the next read opens another);
        False when another thread is reading through it now (it stays open)."""
        if not self._lock.acquire(blocking=False):
            return False
        try:
            if self._batch is not None:
                self._batch.close()
                self._batch = None
            with _OPEN_LOCK:
                _OPEN.pop(id(self), None)
            return True
        finally:
            self._lock.release()

    def changing(self, path: str) -> frozenset[str]:
        """The commits read that changed ``path`` against a parent."""
        with self._lock:
            return frozenset(self._touching.get(path, ()))

    def resolve(self, rev: str) -> str | None:
        """The commit ``rev`` names: a full id as it is, anything else (HEAD moves)
        asked of git each time."""
        if _FULL_ID.fullmatch(rev):
            return rev
        proc = git(self.root, ["rev-parse", "--verify", "-q", f"{rev}^{{commit}}"])
        if proc is None or proc.returncode != 0:
            return None
        got = proc.stdout.decode("ascii", "replace").strip()
        return got if _FULL_ID.fullmatch(got) else None

    def knows(self, rev: str) -> bool:
        """Whether ``rev`` (a full commit id) is read, reading its history if not."""
        with self._lock:
            return self._knows(rev)

    def _knows(self, rev: str) -> bool:
        if rev in self.commits:
            return True
        if rev in self._failed or not _FULL_ID.fullmatch(rev):
            return False
        self._load(rev)
        if rev not in self.commits:
            self._failed.add(rev)
            return False
        return True

    def _load(self, rev: str) -> None:
        args = [
            "log",
            "-m",
            "--raw",
            "--no-abbrev",
            "--no-renames",
            "-z",
            "--format=>%H %ct %T %P",
            rev,
            *(f"^{t}" for t in self._tips),
        ]
        proc = git(self.root, args, timeout=600)
        if proc is None or proc.returncode != 0:
            return
        read: dict[str, tuple[int, str, tuple[str, ...], list[Changes]]] = {}
        blocks: list[Changes] | None = None
        tokens = proc.stdout.split(b"\0")
        k = 0
        while k < len(tokens):
            tok = tokens[k].lstrip(b"\n")
            k += 1
            if tok.startswith(b">"):
                fields = tok[1:].decode("ascii", "replace").split()
                if len(fields) < 3:
                    blocks = None
                    continue
                sha = fields[0]
                got = read.get(sha)
                if got is None:
                    got = read[sha] = (int(fields[1]), fields[2], tuple(fields[3:]), [])
                blocks = got[3]
                blocks.append({})  # -m: the commit again for each parent it differs from
            elif tok.startswith(b":") and blocks is not None and k < len(tokens):
                meta = tok.decode("ascii", "replace").split()
                path = tokens[k].decode("utf-8", "surrogateescape")
                k += 1
                if len(meta) >= 5:
                    blocks[-1][path] = (meta[4][:1], meta[3])
                    if meta[2] == meta[3]:
                        self.mode_only.add((sha, path))
        trees = {sha: got[1] for sha, got in read.items()}
        trees.update((sha, c.tree) for sha, c in self.commits.items())
        for sha, (when, tree, parents, found) in read.items():
            self.commits[sha] = _Commit(
                when, tree, parents, _per_parent(tree, parents, found, trees)
            )
            for block in found:
                for path in block:
                    self._touching.setdefault(path, set()).add(sha)
        self._tips.append(rev)
        self._simplified.clear()
        self._logs.clear()
        self._unordered.clear()
        self._reached.clear()
        self._lines = None
        self._roots_time = None

    def first_time(self, rev: str) -> int | None:
        """When the history up to ``rev`` began: the oldest root commit's committer time."""
        sha = self.resolve(rev)
        if sha is None:
            return None
        with self._lock:
            if sha not in self.commits:
                # the root commits alone: git finds them without the diffs the whole
                # history's read computes (0.43 s on click's 422 commits, against 5 ms)
                return self._first_time_of(sha)
            if self._roots_time is None:  # once per history read (stats asks per file)
                roots = [c.time for c in self.commits.values() if not c.parents]
                self._roots_time = (min(roots) if roots else None,)
            return self._roots_time[0]

    def _first_time_of(self, sha: str) -> int | None:
        if sha in self._first_times:
            return self._first_times[sha]  # a commit's roots never change
        proc = git(self.root, ["log", "--max-parents=0", "--format=%ct", sha])
        if proc is None or proc.returncode != 0:
            return None
        times = [int(t) for t in proc.stdout.split() if t.isdigit()]
        got = self._first_times[sha] = min(times) if times else None
        return got

    def parent_time(self, sha: str) -> int | None:
        """The committer time of ``sha``'s first parent (None: a root, or unknown)."""
        with self._lock:
            if not self._knows(sha):
                return None
            parents = self.commits[sha].parents
            if not parents or not self._knows(parents[0]):
                return None
            return self.commits[parents[0]].time

    def log(self, rev: str, paths: set[str] | frozenset[str]) -> list[LogEntry] | None:
        """What ``git log --parents REV -- PATHS`` shows (None: ``rev`` unknown to git)."""
        with self._lock:
            return self._log(rev, paths)

    def _log(self, rev: str, paths: set[str] | frozenset[str]) -> list[LogEntry] | None:
        found = self.resolve(rev)
        if found is None:
            return None
        wanted = frozenset(paths)
        key = (found, wanted)
        got = self._logs.get(key)
        if got is None:
            if not self.commits and self._direct < DIRECT_ASKS and not shared.active(self.root):
                # one file's blame asks a few logs: git's own are cheaper than the
                # whole history; a report or stats asks hundreds (``shared.py``)
                self._direct += 1
                got = self._git_log(found, wanted)
                if got is None:
                    return None
            elif not self._knows(found):
                return None
            else:
                got = self._walk(found, wanted)
            if len(self._logs) >= LOGS_KEPT:
                self._logs.pop(next(iter(self._logs)))
            self._logs[key] = got
        return got

    def entries(self, rev: str, paths: set[str] | frozenset[str]) -> list[LogEntry] | None:
        """The entries ``log(rev, paths)`` gives, in no set order (None: ``rev`` unknown).

        For the questions that need only which commits changed the paths, and how
        (did a commit delete it, did git ever have it): the commits git's walk shows
        are found from those that changed the paths, leaping over every other along
        its first-parent line (``_Lines``), where ``_walk`` takes every commit in
        turn: on express's 6,158 commits a walk was 27 ms, and ``deja stats`` asked
        one a file for the moves rule (127 walks, a fifth of its CPU)."""
        with self._lock:
            found = self.resolve(rev)
            if found is None:
                return None
            wanted = frozenset(paths)
            key = (found, wanted)
            got = self._logs.get(key) or self._unordered.get(key)
            if got is not None:
                return got
            if not self.commits and self._direct < DIRECT_ASKS and not shared.active(self.root):
                return self._log(found, wanted)  # git's own: as ``log`` would ask
            if not self._knows(found):
                return None
            got = list(self._leap(found, wanted))
            if len(self._unordered) >= LOGS_KEPT:
                self._unordered.pop(next(iter(self._unordered)))
            self._unordered[key] = got
            return got

    def paths_had(self, rev: str, paths: set[str] | frozenset[str]) -> set[str] | None:
        """Of ``paths``, those some commit reachable from ``rev`` changed against one
        of its parents (a tree of the history had the path; None: ``rev`` unknown).

        Not what ``log(rev, paths)`` shows: git's walk simplifies merges by the whole
        set of paths asked, so a path added and dropped on a merged branch counted as
        had or not by which other paths were asked beside it. Which paths a history
        had is each path's own fact, found from the commits that changed it and the
        commits ``rev`` reaches (one set per revision, the last ``REACHED_KEPT``
        kept), where the walk, stopping once
        it had found every path it could, took 0.7 s of entireio's ``deja stats`` (181
        asks, the same answer in every one)."""
        with self._lock:
            found = self.resolve(rev)
            if found is None:
                return None
            wanted = frozenset(paths)
            if not self.commits and self._direct < DIRECT_ASKS and not shared.active(self.root):
                self._direct += 1  # git's own, as a one-file question asks a few logs
                return self._git_paths_had(found, wanted)
            if not self._knows(found):
                return None
            can = [p for p in wanted if p in self._touching]  # the others no commit changed
            if not can:
                return set()
            reached = self._reached_from(found)
            return {p for p in can if not self._touching[p].isdisjoint(reached)}

    def _reached_from(self, rev: str) -> frozenset[str]:
        """The commits read that ``rev`` (read) reaches, itself included."""
        got = self._reached.get(rev)
        if got is None:
            seen: set[str] = set()
            todo = [rev]
            commits = self.commits
            while todo:
                sha = todo.pop()
                if sha in seen or sha not in commits:
                    continue
                seen.add(sha)
                todo.extend(commits[sha].parents)
            if len(self._reached) >= REACHED_KEPT:
                self._reached.pop(next(iter(self._reached)))
            got = self._reached[rev] = frozenset(seen)
        return got

    def _git_paths_had(self, rev: str, wanted: frozenset[str]) -> set[str] | None:
        """``paths_had`` asked of git: the paths any commit reachable from ``rev``
        changed against any parent (``--full-history -m``: no merge simplification)."""
        args = [
            "--literal-pathspecs",
            "log",
            "--full-history",
            "-m",
            "--no-renames",
            "--format=",
            "--name-only",
        ]
        proc = git(self.root, [*args, "-z", rev, "--", *sorted(wanted)])
        if proc is None or proc.returncode != 0:
            return None
        named = {
            t.strip(b"\n").decode("utf-8", "surrogateescape") for t in proc.stdout.split(b"\0")
        }
        return {p for p in wanted if p in named}

    def _leap(self, rev: str, wanted: frozenset[str]) -> Iterator[LogEntry]:
        """``_walk``'s entries, unordered, as they are found."""
        for sha, parents in self._shown(rev, wanted):
            c = self.commits[sha]
            rewritten = parents()
            yield LogEntry(sha, c.time, rewritten, _changes(c, rewritten, wanted))

    def _shown(
        self, rev: str, wanted: frozenset[str]
    ) -> Iterator[tuple[str, Callable[[], tuple[str, ...]]]]:
        """The commits ``_walk`` shows, unordered, as they are found, each with what
        gives its parents rewritten (asked only where needed). A commit that changed none of the paths
        against any parent is treesame and followed to its first parent alone, so
        from any commit the walk goes down its first-parent line to the first commit
        that changed one of them (or off the history): only those are simplified."""
        if self._lines is None:
            self._lines = _Lines(self.commits)
        lines = self._lines
        commits = self.commits
        touching: set[str] = set()
        for path in wanted:
            touching |= self._touching.get(path, set())
        marks = lines.marks(touching)
        memo: dict[str, tuple[bool, tuple[str, ...]]] = {}

        def simplify(sha: str) -> tuple[bool, tuple[str, ...]]:  # sha: in touching
            got = memo.get(sha)
            if got is None:
                got = memo[sha] = _simplify(commits[sha], wanted)
            return got

        def rewrite(sha: str) -> str | None:
            """The parent a shown commit's ``sha`` is rewritten to (``_walk``)."""
            while True:
                got = lines.nearest(sha, marks)
                if got is None or got not in commits:
                    return got  # a root's line ended; a commit not read is kept as it is
                same, further = simplify(got)
                if not same:
                    return got
                if not further:
                    return None
                sha = further[0]  # a merge treesame to one parent follows that one

        done: set[str] = set()
        todo = [rev]
        while todo:
            got = lines.nearest(todo.pop(), marks)
            if got is None or got not in commits or got in done:
                continue
            done.add(got)
            same, kept = simplify(got)
            todo.extend(kept)
            if not same:  # shown
                yield got, partial(_parents, commits[got].parents, rewrite)

    def _git_log(self, rev: str, wanted: frozenset[str]) -> list[LogEntry] | None:
        """``git log --parents REV -- PATHS`` itself."""
        args = [
            "--literal-pathspecs",
            "log",
            "--parents",
            "--format=>%H %ct %P",
            "--raw",
            "--no-abbrev",
        ]
        proc = git(self.root, [*args, "--no-renames", "-z", rev, "--", *sorted(wanted)])
        if proc is None or proc.returncode != 0:
            return None
        out: list[LogEntry] = []
        tokens = proc.stdout.split(b"\0")
        k = 0
        while k < len(tokens):
            tok = tokens[k].lstrip(b"\n")
            k += 1
            if tok.startswith(b">"):
                fields = tok[1:].decode("ascii", "replace").split()
                if len(fields) >= 2:
                    out.append(LogEntry(fields[0], int(fields[1]), tuple(fields[2:]), {}))
            elif tok.startswith(b":") and out and k < len(tokens):
                meta = tok.decode("ascii", "replace").split()
                path = tokens[k].decode("utf-8", "surrogateescape")
                k += 1
                if len(meta) >= 5:
                    out[-1].changes[path] = (meta[4][:1], meta[3])
        return out

    def _walk(self, rev: str, wanted: frozenset[str]) -> list[LogEntry]:
        """git's walk (``get_revision_1``): newest committer date first, first come
        first among equals; each commit simplified as it is taken, a commit shown
        has its parents rewritten past the commits left out."""
        memo = self._simplified.get(wanted)
        if memo is None:
            # a memo per path set, of every commit walked: a server opening file
            # after file keeps only the newest sets
            while len(self._simplified) >= MEMOS_KEPT:
                self._simplified.pop(next(iter(self._simplified)))
            memo = self._simplified[wanted] = {}
        commits = self.commits
        touching: set[str] = set()
        for path in wanted:
            touching |= self._touching.get(path, set())

        def simplify(sha: str) -> tuple[bool, tuple[str, ...]]:
            got = memo.get(sha)
            if got is None:
                c = commits.get(sha)
                if c is not None and sha not in touching:
                    got = (True, c.parents[:1])  # none of the paths changed, against any parent
                else:
                    got = _simplify(c, wanted)
                memo[sha] = got
            return got

        counter = itertools.count()
        heappush, heappop = heapq.heappush, heapq.heappop
        queue: list[tuple[int, int, str]] = []
        seen = {rev}
        added: set[str] = set()

        def process_parents(sha: str) -> None:
            if sha in added:
                return
            added.add(sha)
            for p in simplify(sha)[1]:
                if p not in seen:
                    seen.add(p)
                    c = commits.get(p)
                    heappush(queue, (-(c.time if c else 0), next(counter), p))

        c0 = commits.get(rev)
        heappush(queue, (-(c0.time if c0 else 0), next(counter), rev))
        out: list[LogEntry] = []
        while queue:
            sha = heappop(queue)[2]
            process_parents(sha)
            treesame, kept = simplify(sha)
            if treesame:
                continue
            c = commits.get(sha)
            if c is None:
                continue
            rewritten: list[str] = []
            for p in kept:
                while True:
                    process_parents(p)
                    same, further = simplify(p)
                    if not same or p not in commits:
                        rewritten.append(p)
                        break
                    if not further:
                        break  # a root with none of the paths: no parent
                    p = further[0]
            parents = tuple(dict.fromkeys(rewritten))
            out.append(LogEntry(sha, c.time, parents, _changes(c, parents, wanted)))
        return out


class _Lines:
    """The history cut into first-parent lines: each commit is on one line, at a
    place counted from the line's newest commit; a line ends where its oldest
    commit's first parent is on another line, is not read, or does not exist."""

    def __init__(self, commits: dict[str, _Commit]) -> None:
        self.where: dict[str, tuple[int, int]] = {}  # commit -> (line, place)
        self.lines: list[list[str]] = []
        self.after: list[str | None] = []  # past each line's end: a commit, or None
        where = self.where
        # newest first: a line starts at a tip and runs down the branch it made
        for start in sorted(commits, key=lambda sha: -commits[sha].time):
            if start in where:
                continue
            n = len(self.lines)
            line: list[str] = []
            sha: str | None = start
            while sha is not None and sha in commits and sha not in where:
                where[sha] = (n, len(line))
                line.append(sha)
                parents = commits[sha].parents
                sha = parents[0] if parents else None
            self.lines.append(line)
            self.after.append(sha)

    def marks(self, commits: set[str]) -> dict[int, list[int]]:
        """Line -> the places of ``commits`` on it, in order."""
        out: dict[int, list[int]] = {}
        for sha in commits:
            n, k = self.where[sha]
            out.setdefault(n, []).append(k)
        for places in out.values():
            places.sort()
        return out

    def nearest(self, sha: str | None, marks: dict[int, list[int]]) -> str | None:
        """The first marked commit down the first-parent line from ``sha`` (itself
        included); else the commit not read where the line leaves the history, or
        None past a root."""
        while sha is not None:
            at = self.where.get(sha)
            if at is None:
                return sha
            n, k = at
            places = marks.get(n)
            if places:
                i = bisect_left(places, k)
                if i < len(places):
                    return self.lines[n][places[i]]
            sha = self.after[n]
        return None


DIRECT_ASKS = 24  # logs asked of git one by one before the whole history is read
LOGS_KEPT = 4096  # walks remembered (rev, paths): moves asks the same path's log again
# revisions' reachable commits remembered: each is a set of every commit a revision
# reaches (40 of express's took 10 MB: ~12 MB each for 300,000 commits, by that rate).
# A report asks its commits in order and a blame one revision, so a few suffice.
REACHED_KEPT = 4
MEMOS_KEPT = 64  # path sets whose simplification is remembered (each: every commit walked)


def _parents(parents: tuple[str, ...], rewrite: Callable[[str], str | None]) -> tuple[str, ...]:
    """A shown commit's parents rewritten to the nearest commits shown (once each)."""
    return tuple(dict.fromkeys(got for p in parents if (got := rewrite(p)) is not None))


def _changes(c: _Commit, parents: tuple[str, ...], wanted: frozenset[str]) -> Changes:
    """What the log prints for a commit: nothing for a merge; a commit whose
    parents were rewritten to one (or none) is diffed against that one, and a
    merge left with one parent that way shows the paths it differs in from its
    parents, as they are after it."""
    if len(c.parents) <= 1:
        return {p: v for p, v in c.against[0].items() if p in wanted} if c.against else {}
    if len(parents) > 1:
        return {}
    out: Changes = {}
    for block in c.against:
        for p, (_, blob) in block.items():
            if p in wanted and p not in out:
                status = "D" if not blob.strip("0") else ("M" if parents else "A")
                out[p] = (status, blob)
    return out


def _per_parent(
    tree: str, parents: tuple[str, ...], found: list[Changes], trees: dict[str, str]
) -> list[Changes]:
    """``git log -m`` leaves out a parent the commit does not differ from: put the
    blocks it printed against the parents they belong to (those whose tree differs)."""
    if len(found) >= max(1, len(parents)):
        return found[: max(1, len(parents))]
    out: list[Changes] = []
    rest = iter(found)
    for p in parents:
        if trees.get(p) == tree:
            out.append({})
        else:
            out.append(next(rest, {}))
    if not parents:
        out.append(next(rest, {}))
    return out


def _simplify(c: _Commit | None, paths: frozenset[str]) -> tuple[bool, tuple[str, ...]]:
    """git's ``try_to_simplify_commit``: (treesame, the parents followed). A commit
    is treesame to a parent when none of ``paths`` changed against it; the first
    such parent is the only one followed."""
    if c is None:
        return True, ()
    # (a dict's keys against a set: C walks the smaller of the two)
    if not c.parents:
        return c.against[0].keys().isdisjoint(paths) if c.against else True, ()
    for n, parent in enumerate(c.parents):
        against = c.against[n] if n < len(c.against) else {}
        if against.keys().isdisjoint(paths):
            return True, (parent,)
    return False, c.parents


_HISTORIES: dict[str, RepoHistory] = {}

# A long-lived process (``deja lsp``, ``deja mcp``, the resident server) answers about
# many repositories: it keeps a ``git cat-file --batch`` open for the few it read
# from last, and closes the least recently read one's beyond them (its history, the
# commits read, stays: a new read opens a new process).
MAX_OPEN_READERS = 4
_OPEN: OrderedDict[int, RepoHistory] = OrderedDict()  # open readers, least recently read first
_OPEN_LOCK = threading.Lock()


def _reading(history: RepoHistory) -> None:
    """``history`` reads now (its lock held): the least recently read beyond
    ``MAX_OPEN_READERS`` close theirs (one being read by another thread stays open)."""
    with _OPEN_LOCK:
        _OPEN[id(history)] = history
        _OPEN.move_to_end(id(history))
        over = list(_OPEN.values())[: max(0, len(_OPEN) - MAX_OPEN_READERS)]
    for old in over:
        old.close_reader()


def forget_histories() -> None:
    """Close every history's ``git cat-file --batch`` and forget the histories: for a
    process done with the repositories it asked about (a test, after it ran)."""
    for history in list(_HISTORIES.values()):
        if history._batch is not None:
            history._batch.close()
            history._batch = None
    _HISTORIES.clear()
    with _OPEN_LOCK:
        _OPEN.clear()


def repo_history(root: str | Path) -> RepoHistory:
    """The process's history of the repository at ``root``: commits never change,
    so what is read once serves every file and commit asked about afterwards."""
    key = str(root)
    got = _HISTORIES.get(key)
    if got is None:
        got = _HISTORIES[key] = RepoHistory(key)
    return got
