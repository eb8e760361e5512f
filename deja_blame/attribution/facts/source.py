"""The questions the matcher's rules ask, answered from git and the index.

The rules (``attribution/match/``) never run git nor read SQLite: what they need
beyond a file's ``FileFacts`` they ask of a ``FactSource``, one per answer. It
keeps what it was told (a commit's changes never change), reads a file's
versions through the repository's one ``cat-file --batch`` (``history.py``),
gives the edits behind a set of writes as plain data (``edits.py``: one query,
not one per write) and asks the index once per session whether it belongs. A test
gives the rules a source of plain dicts instead (``tests/test_engine_stages.py``).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

from deja_blame.attribution.facts import shared
from deja_blame.attribution.facts.copies import copies_answer
from deja_blame.attribution.facts.edits import SessionEdits
from deja_blame.attribution.facts.git_blame import blame_copies
from deja_blame.attribution.facts.history import repo_history
from deja_blame.attribution.facts.model import BlameLine, WriteSet, WrittenTexts
from deja_blame.attribution.facts.versions import FileHistory
from deja_blame.attribution.facts.writes import load_writes, session_edits, texts_written
from deja_blame.gitutil import try_git
from deja_blame.index import queries as Q
from deja_blame.index.clone_paths import in_no_checkout, in_this_checkout
from deja_blame.index.fingerprint import fingerprint, is_trivial
from deja_blame.objectid import LENGTHS

# (commit, time, status of the path) for each commit that touched a path
PathLog = list[tuple[str, int, str]]


class FactSource:
    """One answer's window on git and the index: the repository at ``root``, the
    file's revision ``rev`` (None: the working tree)."""

    def __init__(self, conn: sqlite3.Connection, root: str | Path, rev: str | None) -> None:
        self.conn = conn
        self.root = str(root)
        self.rev = rev
        self._identity: object | None = None
        self._texts: dict[tuple[str, str], str] = {}
        self._path_logs: dict[str, PathLog] = {}
        self._outside: dict[tuple[int, tuple[int, ...]], bool] = {}

    # -- the index ------------------------------------------------------------------

    def session_edits(self, writes: WriteSet, paths: dict[int, bool]) -> SessionEdits:
        """The edits behind these writes, as plain data (``writes.session_edits``)."""
        return session_edits(self.conn, writes, paths)

    def belongs(self, sid: int) -> bool | None:
        """Whether a session matched by path suffix worked on this repository
        (``repository.RepositoryIdentity``); None: nothing says."""
        if self._identity is None:
            from deja_blame.attribution.facts.repository import RepositoryIdentity

            self._identity = RepositoryIdentity(self.conn, self.root)
        return self._identity.belongs(sid)  # type: ignore[attr-defined, no-any-return]

    def wrote_outside_from_here(self, sid: int, path_ids: list[int]) -> bool:
        """Whether the session worked in this checkout (wrote a file of it) and wrote
        these paths (suffix matches) only in folders of this machine that are in no
        checkout (``clone_paths.in_no_checkout``: ``/etc``, not a sibling worktree):
        it ran on this machine, so such a folder is not another clone of this
        repository, and what it wrote there is not this file."""
        key = (sid, tuple(path_ids))
        got = self._outside.get(key)
        if got is None:
            got = self._outside[key] = self._judge_outside(sid, path_ids)
        return got

    def _judge_outside(self, sid: int, path_ids: list[int]) -> bool:
        root = self.root.rstrip("/")
        mine = {path for path, action in Q.paths_touched(self.conn, sid) if action == "edit"}
        if not any(in_this_checkout(p, root) for p in mine):
            return False
        here = [p for p in Q.path_texts(self.conn, path_ids).values() if p in mine]
        return bool(here) and all(in_no_checkout(p) for p in here)

    def session_names(self, sids: set[int]) -> dict[int, tuple[str, str]]:
        """Row id -> (session id, agent) of these sessions."""
        return Q.session_names(self.conn, sids)

    def candidate_paths(self, relpaths: set[str]) -> dict[int, bool]:
        """The index's path ids that are these repository paths (exactly, or by suffix)."""
        return Q.candidate_paths(self.conn, self.root, relpaths)

    def load_writes(
        self,
        paths: dict[int, bool],
        fps: Iterable[int],
        into: WriteSet | None = None,
        solid: Iterable[int] | None = None,
    ) -> WriteSet:
        """The writes of these fingerprints to these paths (``writes.load_writes``)."""
        return load_writes(self.conn, paths, fps, into=into, solid=solid)

    def written_texts(self, paths: dict[int, bool]) -> WrittenTexts | None:
        """Every text written as a line to these paths, for a question about many files
        (each path's edits decoded once for all its files and commits: the reflow rule
        then hashes only candidates some write has the text of, not all 220,000 of
        entireio's). None outside one, or where a path's texts are not all at hand."""
        of_paths: dict[tuple[int, ...], WrittenTexts | None] | None = shared.kept(
            self.root, "texts written", dict
        )
        of_path: dict[int, set[str] | None] | None = shared.kept(
            self.root, "texts written to a path", dict
        )
        if of_paths is None or of_path is None or not paths:
            return None
        key = tuple(sorted(paths))
        with _WRITTEN_LOCK:
            if key not in of_paths:
                every: set[str] = set()
                for pid in key:
                    if pid not in of_path:
                        of_path[pid] = texts_written(self.conn, pid)
                    mine = of_path[pid]
                    if mine is None:
                        break
                    every |= mine
                else:
                    of_paths[key] = WrittenTexts.of(every)
                of_paths.setdefault(key, None)
            return of_paths[key]

    def write_times(self, pid: int, fp: int) -> list[float]:
        """When sessions (not the person) wrote text of ``fp`` to path ``pid`` (kept
        for a question about many files: the moves rule asks it again file after file)."""
        kept: dict[tuple[int, int], list[float]] | None = shared.kept(
            self.root, "write times", dict
        )
        got = None if kept is None else kept.get((pid, fp))
        if got is None:
            rows = Q.line_writes(self.conn, pid, [fp])
            got = [r[5] for r in rows if r[5] is not None and not r[6]]
            if kept is not None:
                kept[(pid, fp)] = got
        return got

    def written_elsewhere(
        self, skip: set[int], fps: set[int]
    ) -> tuple[dict[int, set[int]], dict[int, str]]:
        """Which of ``fps`` some session wrote to another file of this repository (the
        files of the revision and its parent; another clone's by path suffix):
        fp -> path ids, and those paths relative to the repository."""
        from deja_blame.attribution.facts.repository import paths_of_repository

        found: dict[int, set[int]] = {}
        names: dict[int, str] = {}
        paths = paths_of_repository(self.conn, self.root, revisions_asked(self.rev))
        every = self._written([pid for pid in paths if pid not in skip])
        for pid, rel in paths.items():
            if pid in skip:
                continue
            names[pid] = rel
            mine = every[pid] & fps if every is not None else None
            for fp in Q.fingerprints_written(self.conn, pid, fps) if mine is None else mine:
                found.setdefault(fp, set()).add(pid)
        return found, names

    def _written(self, pids: list[int]) -> dict[int, set[int]] | None:
        """Every fingerprint sessions wrote to each of these paths, read once per path
        in a question about many files (``shared.py``: stats asked each path again
        for each file, 31,000 queries on werkzeug); None outside one (then asked
        path by path, for the fingerprints of the one file)."""
        kept: dict[int, set[int]] | None = shared.kept(self.root, "fingerprints written", dict)
        if kept is None:
            return None
        with _WRITTEN_LOCK:
            missing = [pid for pid in pids if pid not in kept]
            if missing:
                kept.update(Q.fingerprints_of_paths(self.conn, missing))
            return {pid: kept[pid] for pid in pids}

    # -- git --------------------------------------------------------------------------

    def file_history(self, paths: set[str]) -> FileHistory:
        """The file's versions under these names, up to the revision (``versions.py``)."""
        return FileHistory(self.root, paths, self.rev)

    def repository_start(self) -> float | None:
        """When this repository's history began (its oldest root commit), up to the revision."""
        got = repo_history(self.root).first_time(self.rev or "HEAD")
        return None if got is None else float(got)

    def blame_copies(
        self,
        relpath: str,
        ranges: list[tuple[int, int]],
        plain: dict[int, BlameLine | None] | None = None,
    ) -> list[BlameLine]:
        """``git blame -C`` of these line ranges: where moved lines came from. With
        ``plain`` (line -> the plain blame's line, for every line of the ranges), git
        is not asked for ``-C`` where its answer can only be that, or ``-M``'s
        (``copies.py``)."""
        if plain is not None:
            got = copies_answer(self.root, self.rev, relpath, ranges, plain)
            if got is not None:
                return got
        return blame_copies(Path(self.root), relpath, self.rev, ranges)

    def text_at(self, rev: str, path: str) -> str:
        """A file's text at ``rev`` (``X^`` too); empty where it has no such file. Kept
        until ``close`` (one file's answer)."""
        got = self._texts.get((rev, path))
        if got is None:
            data = repo_history(self.root).read(f"{rev}:{path}") or b""
            got = self._texts[(rev, path)] = data.decode("utf-8", "replace")
        return got

    def path_log(self, path: str) -> PathLog:
        """(commit, time, status of the path) for every commit up to the revision
        that touched the path, renames as a deletion and an addition (in no set order)."""
        got = self._path_logs.get(path)  # the moves rule asks it line after line
        if got is None:
            entries = repo_history(self.root).entries(self.rev or "HEAD", {path})
            got = [(e.commit, e.time, st) for e in entries or () for st, _ in e.changes.values()]
            self._path_logs[path] = got
        return got

    def touched(self, commit: str) -> dict[str, tuple[str, str | None]]:
        """Path before ``commit`` -> (status letter, its path after: None when
        deleted), renames as git's rename detection sees them."""
        return touched(self.root, commit)

    def renamed_to(self, commit: str, path: str) -> set[str]:
        """The paths ``commit`` renamed to ``path``."""
        return {
            before
            for before, (status, after) in self.touched(commit).items()
            if status == "R" and after == path
        }

    def paths_git_lacks(self, names: dict[int, str]) -> set[int]:
        """Of these paths, those no commit up to the revision ever had."""
        rel = {path: pid for pid, path in names.items()}
        if not rel:
            return set()
        had = repo_history(self.root).paths_had(self.rev or "HEAD", set(rel))
        if had is None:
            return set()
        return {pid for path, pid in rel.items() if path not in had}

    def close(self) -> None:
        """Forget the files' texts read for this answer (``deja stats`` asks for every
        file, and each would keep versions of the others)."""
        self._texts.clear()


def revisions_asked(commit: str | None) -> list[str]:
    """The trees whose files ``written_elsewhere`` takes for the repository's."""
    return [commit, commit + "^"] if commit else ["HEAD"]


def touched(root: str, commit: str) -> dict[str, tuple[str, str | None]]:
    key = (root, commit)
    got = _TOUCHED.get(key)
    if got is None:
        got = {}
        proc = try_git(root, ["diff-tree", "-r", "--root", "-M", "--name-status", "-z", commit])
        if proc is not None and proc.returncode == 0:
            fields = [f.decode("utf-8", "surrogateescape") for f in proc.stdout.split(b"\0")]
            # the commit's id comes first
            k = 1 if fields and len(fields[0]) in LENGTHS and "\t" not in fields[0] else 0
            while k + 1 < len(fields):
                status = fields[k][:1]
                if status in ("R", "C") and k + 2 < len(fields):
                    got[fields[k + 1]] = (status, fields[k + 2])
                    k += 3
                    continue
                got[fields[k + 1]] = (status, None if status == "D" else fields[k + 1])
                k += 2
        _TOUCHED[key] = got
    return got


_WRITTEN_LOCK = threading.Lock()  # stats' threads fill one question's paths

# commits never change: what each touched
_TOUCHED: dict[tuple[str, str], dict[str, tuple[str, str | None]]] = {}


def solid_fingerprints(texts: Iterable[str]) -> set[int]:
    """The fingerprints of the texts that are not trivial (what narrows writes)."""
    return {fingerprint(t) for t in texts if not is_trivial(t)}
