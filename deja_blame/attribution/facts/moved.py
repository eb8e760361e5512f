"""Stage 1 of the moves rule: where could the lines the rules left unmatched have
come from, when another file?

A block a person moved here from another file keeps the session that wrote it
there. ``git blame`` names the commit that moved a block, not where it came from.
Here, after the other rules matched what they could (most files have no
unmatched block at all, and every question costs git work), stage 1 asks, in
rounds: which texts of the lines left sessions wrote to other files of the
repository (``written_elsewhere``), then ``git blame -C`` of the blocks of such
lines, then the index's paths of the files ``-C`` named (``where_from``:
``MoveFacts``, plain data). Stage 2 judges which of those lines moved here
(``match/moves.py``: ``moved_here``) from those facts and the answers given it so
far; what its judgement lacked of git's history (a file's text at a commit, a
path's log, what a commit renamed or deleted, when sessions wrote a text to a path:
``rule_facts.MoveAsks``) is read here between its rounds (``answer_asked``, by
``WhereFrom``, which keeps what it read); then the writes to the files the moved
lines came from are read into the file's ``WriteSet`` (``FactSource.for_moved``).
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from deja_blame.attribution.facts import indexread as Q
from deja_blame.attribution.facts import shared
from deja_blame.attribution.facts.copies import copies_answer
from deja_blame.attribution.facts.git_blame import blame_copies
from deja_blame.attribution.facts.gitread import git
from deja_blame.attribution.facts.history import repo_history
from deja_blame.attribution.facts.model import (
    MOVED_BLOCK,
    BlameLine,
    FileFacts,
    PathLog,
    PathLogIndex,
)
from deja_blame.attribution.facts.rule_facts import MoveFacts
from deja_blame.index.fingerprint import is_trivial, normalise_line
from deja_blame.objectid import LENGTHS


def where_from(conn: sqlite3.Connection, facts: FileFacts) -> MoveFacts | None:
    """Where the lines the rules left unmatched may have come from (``MoveFacts``):
    None where no block of them has text some session wrote to another file of this
    repository.

    git blame names the commit that moved them; ``git blame -C`` (lines moved
    from a file changed in the same commit) names where they came from. It costs
    several times a plain blame, so it runs only on blocks of unmatched lines
    whose text some session wrote to another file of this repository.
    """
    lines, texts, by_line = facts.lines, facts.texts, facts.blamed
    paths, skip = facts.paths, facts.settled or None
    ask = WhereFrom(conn, facts.root, facts.commit)
    todo = [
        k
        for k, ln in enumerate(lines)
        if ln.session is None
        and ln.commit is not None
        and not texts.trivial[k]
        and not (skip and skip[k])
    ]
    if not todo:
        return None
    elsewhere, names = ask.written_elsewhere(set(paths), {texts.fps[k] for k in todo})
    todo = [k for k in todo if texts.fps[k] in elsewhere]
    if not todo:
        return None
    ranges: list[list[int]] = []
    for k in todo:
        n = lines[k].line
        if ranges and n - ranges[-1][1] <= 3:
            ranges[-1][1] = n
        else:
            ranges.append([n, n])
    ranges = [r for r in ranges if r[1] - r[0] + 1 >= MOVED_BLOCK]
    if not ranges:
        return None
    first = lines[0].line
    last = lines[-1].line
    # the blank lines and brackets at a moved block's edges moved with it
    ranges = [[max(first, a - 2), min(last, b + 2)] for a, b in ranges]
    plain = {n: by_line[n - first] for a, b in ranges for n in range(a, b + 1)}
    found = ask.blame_copies(facts.path, [(a, b) for a, b in ranges], plain)
    # the unmatched lines -C says came from another file than blame names, in -C's
    # order: (line index, its blame there)
    copied: list[tuple[int, BlameLine]] = []
    for b in found:
        k = b.line - first
        if (
            0 <= k < len(lines)
            and lines[k].session is None
            and b.orig_path
            and (b.orig_path != lines[k].orig_path)
        ):
            copied.append((k, b))
    # -C names the file the lines came from as it was then; where the commit that
    # brought them there renamed it, the sessions of that commit wrote the old name
    sources = {b.orig_path for b in found if b.orig_path}
    moved = {k for k, _ in copied}
    for commit, source in {
        (b.commit, b.orig_path)
        for b in found
        if b.commit and b.orig_path and b.line - first in moved
    }:
        sources |= ask.renamed_to(commit, source)
    named = {pid: exact for pid, exact in ask.candidate_paths(sources).items() if pid not in paths}
    return MoveFacts(todo, elsewhere, names, ranges, copied, named, ask)


def answer_asked(found: MoveFacts, asked: list[tuple[Any, ...]]) -> None:
    """Answer the questions the moves rule's judgement lacked (``match.moves.Judgement``:
    ``MoveAsks``' method name and its arguments; a dict of paths as its items) by
    ``found``'s reader, into ``found.answers``: the judgement's next round reads them."""
    for question in asked:
        name, *args = question
        if name == "paths_git_lacks":
            args = [dict(args[0])]
        found.answers[question] = getattr(found.asks, name)(*args)


class _Kept:
    """What the moves rule of each file of a question about many files asks again,
    kept for the question (``shared.kept``): the paths' logs and their indexes, for
    the last ``KEPT_REVISIONS`` revisions asked (``deja report`` asks revision after
    revision, and each revision's logs are its own; the moves rule of each file asks
    the same paths: entireio's stats built 7,651 logs of 537), the sessions' write
    times of a text to a path, the fingerprints written to each path, and each
    fingerprint's paths for a set of paths."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_rev: dict[str | None, tuple[dict[str, PathLog], dict[str, PathLogIndex]]] = {}
        self.write_times: dict[tuple[int, int], list[float]] = {}
        self.written: dict[int, set[int]] = {}
        self.writers: dict[frozenset[int], dict[int, tuple[int, ...]]] = {}

    def logs(self, rev: str | None) -> tuple[dict[str, PathLog], dict[str, PathLogIndex]]:
        with self.lock:
            got = self.by_rev.pop(rev, None) or ({}, {})
            self.by_rev[rev] = got  # the latest asked last
            while len(self.by_rev) > KEPT_REVISIONS:
                del self.by_rev[next(iter(self.by_rev))]
            return got


KEPT_REVISIONS = 4


class WhereFrom:
    """The moves rule's questions of git and the index for one file's answer: the
    repository at ``root``, the file's revision ``rev`` (None: the working tree).
    What it reads is kept for the answer (a commit's changes never change)."""

    def __init__(self, conn: sqlite3.Connection, root: str | Path, rev: str | None) -> None:
        self.conn = conn
        self.root = str(root)
        self.rev = rev
        self._texts: dict[tuple[str, str], str] = {}
        self._held: dict[tuple[str, str], set[str]] = {}  # ``holds``' normalised lines
        # what the moves rule asks again file after file, kept for the question where
        # there is one (``_Kept``)
        self._kept = shared.kept(self.root, "moves rule", _Kept)
        self._path_logs, self._log_indexes = (
            ({}, {}) if self._kept is None else self._kept.logs(rev)
        )

    def candidate_paths(self, relpaths: set[str]) -> dict[int, bool]:
        """The index's path ids that are these repository paths (exactly, or by suffix)."""
        return Q.candidate_paths(self.conn, self.root, relpaths)

    def write_times(self, pid: int, fp: int) -> list[float]:
        """When sessions (not the person) wrote text of ``fp`` to path ``pid``, in
        order (``written_between``; kept for a question about many files: the moves
        rule asks it again file after file)."""
        kept = None if self._kept is None else self._kept.write_times
        got = None if kept is None else kept.get((pid, fp))
        if got is None:
            rows = Q.line_writes(self.conn, pid, [fp])
            got = sorted(r[5] for r in rows if r[5] is not None and not r[6])
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
        by_text = self._writers(paths)
        if by_text is not None:
            # a question about many files: each text's paths looked up, where every
            # path's texts were met with the file's (entireio's stats: 249 files
            # times 537 paths)
            names = {pid: rel for pid, rel in paths.items() if pid not in skip}
            for fp in fps:
                got = {pid for pid in by_text.get(fp, ()) if pid not in skip}
                if got:
                    found[fp] = got
            return found, names
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
        if self._kept is None:
            return None
        kept = self._kept.written
        with _WRITTEN_LOCK:
            missing = [pid for pid in pids if pid not in kept]
            if missing:
                kept.update(Q.fingerprints_of_paths(self.conn, missing))
            return {pid: kept[pid] for pid in pids}

    def _writers(self, paths: dict[int, str]) -> dict[int, tuple[int, ...]] | None:
        """Each fingerprint sessions wrote to these paths -> the paths (ids) it was
        written to, made once per question and set of paths (None outside a question:
        ``_written``)."""
        if self._kept is None:
            return None
        kept = self._kept.writers
        key = frozenset(paths)
        with _WRITTEN_LOCK:
            got = kept.get(key)
        if got is None:
            every = self._written(sorted(paths))
            assert every is not None  # in a question, as ``kept`` above
            got = {}
            for pid in sorted(every):
                for fp in every[pid]:
                    got[fp] = (*got.get(fp, ()), pid)
            with _WRITTEN_LOCK:
                got = kept.setdefault(key, got)
        return got

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

    def holds(self, rev: str, path: str, text: str) -> bool:
        """Whether the file at ``rev`` has the line ``text``, white space aside, as
        writes are matched (commander's JSDoc has `` *     writeOut(str)`` in
        ``lib/command.js`` and `` *  writeOut(str)`` in ``typings/index.d.ts``: a
        copy). Each version's lines are normalised once, kept with its text."""
        key = (rev, path)
        held = self._held.get(key)
        if held is None:
            held = self._held[key] = {
                normalise_line(t) for t in self.text_at(rev, path).splitlines()
            }
        return normalise_line(text) in held

    def solid_lines_at(self, rev: str, path: str) -> set[str]:
        """The different lines of a file at ``rev`` that are not blank nor a lone
        bracket, stripped (``text_at``'s)."""
        return {t.strip() for t in self.text_at(rev, path).splitlines() if not is_trivial(t)}

    def parent_time(self, commit: str) -> int | None:
        """When ``commit``'s first parent was committed (None: a root commit)."""
        return repo_history(self.root).parent_time(commit)

    def path_log(self, path: str) -> PathLog:
        """(commit, time, status of the path) for every commit up to the revision
        that touched the path, renames as a deletion and an addition (in no set order)."""
        got = self._path_logs.get(path)  # the moves rule asks it line after line
        if got is None:
            entries = repo_history(self.root).entries(self.rev or "HEAD", {path})
            got = [(e.commit, e.time, st) for e in entries or () for st, _ in e.changes.values()]
            got = self._path_logs.setdefault(path, got)
        return got

    def log_index(self, path: str) -> PathLogIndex:
        """``path_log(path)`` as ``_text_left`` asks it, line after line of every block:
        which commits deleted the path, and the last commit before a time."""
        got = self._log_indexes.get(path)
        if got is None:
            got = self._log_indexes.setdefault(path, PathLogIndex(self.path_log(path)))
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


def revisions_asked(commit: str | None) -> list[str]:
    """The trees whose files ``written_elsewhere`` takes for the repository's."""
    return [commit, commit + "^"] if commit else ["HEAD"]


def touched(root: str, commit: str) -> dict[str, tuple[str, str | None]]:
    key = (root, commit)
    got = _TOUCHED.get(key)
    if got is None:
        got = {}
        proc = git(root, ["diff-tree", "-r", "--root", "-M", "--name-status", "-z", commit])
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
