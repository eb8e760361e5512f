"""Which sessions worked on this repository: by what they wrote, not where they ran.

A session's transcript names absolute paths of the machine it ran on
(``/home/a/x/proj/src/f.py``, ``C:/Users/b/proj/src/f.py``); the repository
may now live anywhere. A session belongs to the repository at ``root`` when:

- it wrote files under ``root`` itself (the same clone, where it ran); or
- its project directory is a git repository on this machine: whether that is
  a clone of this one (a root commit in common) decides, provided what the
  session wrote lies in that directory (a project guessed wrong says nothing);
- otherwise, by the text it left: each file it wrote is mapped to the
  repository's file with the longest common relative-path suffix, and the
  distinct lines it left there (what it wrote, minus what it replaced itself)
  are looked for in that file as the commits made while it worked, and the
  next ``AFTER`` ones, left it (and the working tree where fewer came since). At least ``MIN_LINES`` such lines, and ``COVERAGE`` of them found;
  a session of fewer lines belongs only when each is its own (no other
  session wrote it), absent before its time and there in a version of it.
  Where that is not enough, the next ``LATER`` commits of each file count too,
  for the lines no other indexed session wrote there: work done on a branch
  lands after other commits of the file (a merge, a squash); text another
  session also wrote is no evidence (a later session's code never vouches for
  an unrelated one).

Checking the commits of its time, not HEAD, keeps a session whose code was
later rewritten: it belongs for every commit it wrote, whatever became of its
lines since. An unrelated project with the same relative paths shares a few
lines of boilerplate with this one, not most of what its session wrote.

One identity serves every command that asks which sessions worked here: blame
(and so annotate and stats), ``deja sessions --project`` and ``deja handoff``.
"""

from __future__ import annotations

import sqlite3
import threading
from bisect import bisect_left, bisect_right
from pathlib import Path, PurePosixPath

from deja_blame.attribution.facts import indexread
from deja_blame.attribution.facts.clone_paths import repository_path
from deja_blame.attribution.facts.edits import leave
from deja_blame.attribution.facts.gitread import (
    RepositoryFiles,
    head_of,
    repository_files,
    tree_files,
)
from deja_blame.attribution.rule_versions import IDENTITY_VERSION as IDENTITY_VERSION
from deja_blame.errors import DejaError
from deja_blame.gitutil import CatFile, read_worktree_bytes, same_repository
from deja_blame.index import queries as Q
from deja_blame.index.fingerprint import fingerprint

COVERAGE = 0.5  # of a session's distinct lines, found where it wrote them
MIN_LINES = 3  # distinct non-trivial lines a session must have left to be judged
SKEW = 600.0  # seconds: a transcript's clock against the commits' (another machine)
MAX_VERSIONS = 16  # of one file, read per session
AFTER = 1  # commits of a file after a session's last edit of it that may hold its work (more let a
# later session's text count for an unrelated one: bench/accuracy unrelated_project_same_path)
LATER = 16  # commits after those whose lines count only where no other session wrote them


_LOCK = threading.Lock()
# (database, root, HEAD, session id, transcript size, mtime) -> belongs
_JUDGED: dict[tuple[str, str, str, str, int, int], bool | None] = {}


class RepositoryIdentity:
    """Which indexed sessions worked on the repository at ``root`` (see the module)."""

    def __init__(self, conn: sqlite3.Connection, root: str | Path) -> None:
        self.conn = conn
        self.root = str(root).rstrip("/") or "/"
        self._head: str | None = None  # read on first need: most blames never judge
        self._database: str | None = None
        self._files: RepositoryFiles | None = None

    @property
    def head(self) -> str:
        if self._head is None:
            self._head = head_of(self.root)
        return self._head

    @property
    def files(self) -> RepositoryFiles:
        if self._files is None:
            self._files = repository_files(self.root, self.head)
        return self._files

    def belongs(self, sid: int) -> bool | None:
        """Whether session ``sid`` worked on this repository (None: no such session).
        One that left fewer than ``MIN_LINES`` distinct lines in its files is not
        judged ours: a two-line helper is anyone's."""
        row = indexread.session_identity_row(self.conn, sid)
        if row is None:
            return None
        session_id, project, size, mtime = row
        if self._database is None:
            self._database = Q.database_path(self.conn)
        key = (self._database, self.root, self.head, session_id, size, mtime)
        with _LOCK:
            if key in _JUDGED:
                return _JUDGED[key]
        answer = self._judge(sid, project)
        with _LOCK:
            if len(_JUDGED) > 100_000:
                _JUDGED.clear()
            _JUDGED[key] = answer
        return answer

    def _judge(self, sid: int, project: str) -> bool | None:
        edits = list(indexread.agent_edits_timed(self.conn, sid))
        if any(path.startswith(self.root + "/") for path, *_ in edits):
            return True  # it wrote this clone's own files
        project = project.rstrip("/")
        if project.startswith("/") and any(p.startswith(project + "/") for p, *_ in edits):
            known = same_repository(self.root, project)
            if known is not None:
                return known
        return self._by_content(sid, edits)

    def _by_content(self, sid: int, edits: list[EditRow]) -> bool:
        """What the session left in each file it wrote, found in that file as the
        commits of its time left it; then, where that is not enough, as later
        commits left it (its own lines only: what no other session wrote)."""
        left: dict[str, set[int]] = {}
        span: dict[str, tuple[float, float]] = {}
        for path, tool, at, removed, added in edits:
            leave(left.setdefault(path, set()), tool, removed, added, keep_trivial=False)
            if at is not None:
                lo, hi = span.get(path, (at, at))
                span[path] = (min(lo, at), max(hi, at))
        files = self.files
        wanted: list[tuple[str, str, set[int]]] = []  # (path, repository path, lines left)
        for path, fps in left.items():
            rel = files.relative(path, self.root) if fps else None
            if rel is not None:  # else nothing of this repository: a scratch file, another project
                wanted.append((path, rel, fps))
        total = sum(len(fps) for _, _, fps in wanted)
        if total < MIN_LINES:
            # too little to tell by coverage: a two-line helper is anyone's, unless
            # the lines appeared here just as it wrote them (see _arrived)
            return total > 0 and self._arrived(sid, wanted, span)
        enough = COVERAGE * total
        present = 0
        missing: list[tuple[str, str, set[int]]] = []  # as wanted: the lines not found yet
        with _Blobs(self.root) as blobs:
            for path, rel, fps in wanted:
                found = blobs.found(rel, self._versions(rel, span.get(path)), fps)
                present += len(found)
                if len(found) < len(fps):
                    missing.append((path, rel, fps - found))
            if present >= enough:
                return True
            # work that landed later (a branch merged after other commits of the
            # file, a squash): counted only where the text is this session's alone,
            # so a later session's code never vouches for an unrelated one
            for path, rel, fps in missing:
                later = self._later(rel, span.get(path))
                if not later:
                    continue
                fps -= _written_by_others(self.conn, self.root, rel, sid, fps)
                present += len(blobs.found(rel, later, fps))
                if present >= enough:
                    return True
        return False

    def _arrived(
        self,
        sid: int,
        wanted: list[tuple[str, str, set[int]]],
        span: dict[str, tuple[float, float]],
    ) -> bool:
        """A session of one or two lines belongs when each of them is its own (no other
        indexed session wrote it there), absent from the file before it worked, and
        present in a version of its time: the text arrived here with its edit."""
        with _Blobs(self.root) as blobs:
            for path, rel, fps in wanted:
                when = span.get(path)
                if when is None:
                    return False
                if _written_by_others(self.conn, self.root, rel, sid, fps):
                    return False
                lo, _ = self._bounds(rel, when)
                before = self.files.commits.get(rel, [])[lo - 1 : lo] if lo > 0 else []
                if blobs.found(rel, list(before), fps):
                    return False  # already there: nothing says it came from this session
                if blobs.found(rel, self._versions(rel, when), fps) != fps:
                    return False
        return True

    def _bounds(self, rel: str, span: tuple[float, float]) -> tuple[int, int]:
        """The indexes of the file's commits made while the session worked (plus skew)."""
        times = self.files.times.get(rel, [])
        return bisect_left(times, int(span[0] - SKEW)), bisect_right(times, int(span[1] + SKEW))

    def _versions(self, rel: str, span: tuple[float, float] | None) -> list[str | None]:
        """The commits whose version of ``rel`` shows the session's work: those made
        while it worked and the first one after (None: the working tree, when no
        commit came after, or the session's times are not known)."""
        commits = self.files.commits.get(rel, [])
        if span is None:
            return [None, *reversed(commits[-MAX_VERSIONS:])]
        lo, hi = self._bounds(rel, span)
        out: list[str | None] = []
        # the commits after its last edit, nearest first: work done on a branch
        # lands later (a merge, a squash), other commits of the file in between
        out += commits[hi : hi + AFTER]
        if hi + AFTER >= len(commits):
            out.append(None)  # not (all) committed since: the working tree
        out += list(reversed(commits[lo:hi]))[: MAX_VERSIONS - len(out)]
        return out

    def _later(self, rel: str, span: tuple[float, float] | None) -> list[str | None]:
        """The ``LATER`` commits of ``rel`` after those ``_versions`` reads, nearest first."""
        if span is None:
            return []
        _, hi = self._bounds(rel, span)
        return list(self.files.commits.get(rel, [])[hi + AFTER : hi + AFTER + LATER])


EditRow = tuple[str, str, float | None, list[str], list[str]]


def _written_by_others(
    conn: sqlite3.Connection, root: str, rel: str, sid: int, fps: set[int]
) -> set[int]:
    """Which of ``fps`` another indexed session wrote to this file (at any path
    that stands for it: another clone, another machine)."""

    out: set[int] = set()
    wanted = sorted(fps)
    for pid in indexread.candidate_paths(conn, root, {rel}):
        for _, fp, other, *_ in indexread.line_writes(conn, pid, wanted):
            if other != sid:
                out.add(fp)
    return out


class _Blobs:
    """A file's versions read through one ``git cat-file --batch``, opened on first need."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.batch: CatFile | None = None

    def __enter__(self) -> _Blobs:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.batch is not None:
            self.batch.close()

    def found(self, rel: str, versions: list[str | None], fps: set[int]) -> set[int]:
        """Which of ``fps`` a line of one of these versions of ``rel`` holds."""
        found: set[int] = set()
        for sha in versions:
            if sha is None:
                data = _worktree(self.root, rel)
            else:
                if self.batch is None:
                    self.batch = CatFile(self.root)
                data = self.batch.read(f"{sha}:{rel}")
            if data is not None:
                found |= fps & {fingerprint(t) for t in data.decode("utf-8", "replace").split("\n")}
            if found == fps:
                break
        return found


def _worktree(root: str, rel: str) -> bytes | None:
    try:
        return read_worktree_bytes(Path(root), rel)
    except (DejaError, OSError):  # gone, unreadable, a link: no evidence
        return None


def sessions_of_repository(conn: sqlite3.Connection, root: str | Path) -> set[str]:
    """The ids of the indexed sessions that worked on the repository at ``root``:
    those that wrote one of its files (by path, or by path suffix and then judged
    by ``RepositoryIdentity.belongs``)."""
    identity = RepositoryIdentity(conn, root)
    files = identity.files
    wanted = [pid for pid, path in indexread.all_paths(conn) if files.relative(path, identity.root)]
    out: set[str] = set()
    for sid in sorted(indexread.sessions_writing(conn, wanted)):
        if identity.belongs(sid):
            row = indexread.session_identity_row(conn, sid)
            if row is not None:
                out.add(row[0])
    return out


_WRITTEN: dict[tuple[str, str, tuple[str, ...], int], dict[int, str]] = {}


def paths_of_repository(
    conn: sqlite3.Connection, root: str | Path, revs: list[str]
) -> dict[int, str]:
    """path id -> repository path, for every written path that stands for a file of
    the repository at ``root``: under ``root`` itself, or (the session ran in
    another clone, on another machine) ending with a path HEAD's history or one
    of ``revs`` holds (its longest such); a file of a worktree made inside this
    checkout stands for that worktree's file (``repository_path``'s ``worktrees``).
    Whether that session worked here is ``belongs``'s to say; this only finds the
    writes worth asking about."""
    root = str(root).rstrip("/") or "/"
    top = conn.execute("SELECT max(path_id), count(*) FROM paths").fetchone()
    head = head_of(root)
    key = (Q.database_path(conn), root, (head, *revs), hash(top))
    with _LOCK:
        got = _WRITTEN.get(key)
    if got is not None:
        return got
    files: set[str] = set(repository_files(root, head).times)  # HEAD's history
    for rev in revs:
        files |= tree_files(root, rev)
    names = {PurePosixPath(f).name for f in files}
    out: dict[int, str] = {}
    for pid, path in indexread.all_paths(conn):
        if path.startswith(root + "/") or path.rsplit("/", 1)[-1] in names:
            rel = repository_path(path, root, files, worktrees=True)
            if rel is not None:
                out[pid] = rel
    with _LOCK:
        if len(_WRITTEN) > 64:
            _WRITTEN.clear()
        _WRITTEN[key] = out
    return out
