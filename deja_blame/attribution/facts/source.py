"""What stage 1 gives the matcher's rules, and what they still ask while they decide.

The rules (``attribution/match/``) never run git nor read SQLite. Before they run,
a ``FactSource`` (one per answer) makes their ``RuleFacts`` (``for_rules``): the
edits behind the writes as plain data (``edits.py``: one query, not one per
write), the file's versions (``versions.py``, through the repository's one
``cat-file --batch``: its log read, each version within the budget) and when the
repository began. While they decide they ask it only what depends on what they
matched (``rule_facts.StillAsked``): whether a session matched by path suffix
belongs here (once per session), the writes of the texts a formatter split, the
winners' names; the texts written to the paths (``written_texts``, what the reflow
rule's candidates are grown by) it gives them before they run. It keeps what it was told (a commit's changes never change). A
test gives the rules facts made of plain dicts instead (``tests/test_engine_stages.py``).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.attribution.facts import indexread as Q
from deja_blame.attribution.facts import shared
from deja_blame.attribution.facts.checkouts import same_clock_sessions
from deja_blame.attribution.facts.clone_paths import in_no_checkout, in_this_checkout
from deja_blame.attribution.facts.history import repo_history
from deja_blame.attribution.facts.model import FileFacts, MovedLines, WriteSet, WrittenTexts
from deja_blame.attribution.facts.rule_facts import RuleFacts
from deja_blame.attribution.facts.versions import FileHistory
from deja_blame.attribution.facts.writes import load_writes, session_edits, texts_written
from deja_blame.index.queries import paths_touched

if TYPE_CHECKING:
    from deja_blame.attribution.model import LineAttribution


class FactSource:
    """One answer's window on git and the index: the repository at ``root``, the
    file's revision ``rev`` (None: the working tree)."""

    def __init__(self, conn: sqlite3.Connection, root: str | Path, rev: str | None) -> None:
        self.conn = conn
        self.root = str(root)
        self.rev = rev
        self._identity: object | None = None
        self._outside: dict[tuple[int, tuple[int, ...]], bool] = {}
        self._histories: dict[frozenset[str], FileHistory] = {}

    # -- the index ------------------------------------------------------------------

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
        mine = {path for path, action in paths_touched(self.conn, sid) if action == "edit"}
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

    # -- the facts the rules are given ---------------------------------------------------

    def for_file(self, facts: FileFacts) -> RuleFacts | None:
        """``for_rules`` of a file's facts (or a window's), None where no rule has a line
        to match (``FileFacts.rules_run``): a whole file's answer and the working
        tree's windows are given their facts the same way."""
        if not facts.rules_run():
            return None
        return self.for_rules(facts.lines, facts.writes, facts.paths)

    def for_moved(self, facts: FileFacts, moved: MovedLines) -> RuleFacts:
        """``for_rules`` of the lines that moved here from other files (``moved``, as
        the moves rule judged them): the writes to those files (``moved.paths``
        beyond the file's own) read into the file's ``WriteSet`` first, those of
        trivial lines only where their edit also wrote a non-trivial line of it."""
        texts = facts.texts
        more = {pid: exact for pid, exact in moved.paths.items() if pid not in facts.paths}
        solid = {fp for fp, trivial in zip(texts.fps, texts.trivial) if not trivial}
        load_writes(self.conn, more, set(texts.fps), into=facts.writes, solid=solid)
        return self.for_rules(facts.lines, facts.writes, moved.paths)

    def for_rules(
        self, lines: list[LineAttribution], writes: WriteSet, paths: dict[int, bool]
    ) -> RuleFacts:
        """What the rules read of these lines against ``writes`` (to ``paths``), made
        before they run: the edits behind the writes (``writes.session_edits``), the
        file's versions under the names blame gave its lines (``versions.py``), and,
        where the rules will read them (some write), its log, the repository's start and
        the texts written to ``paths`` (``written_texts``).
        Made again for the same lines (the moves rule's second pass), the versions are
        the ones read before, counted as a new history would (``FileHistory.again``)."""
        # the texts written to the paths (a question about many files): the reflow
        # rule's candidates are grown by them
        written = self.written_texts(paths) if writes else None
        names = frozenset(ln.orig_path or "" for ln in lines)
        history = FileHistory(self.root, set(names), self.rev)
        start = None
        if writes:
            last = self._histories.get(names)
            if last is not None:
                history = last.again()
            self._histories[names] = history
            history.load()
            if history.times:
                got = repo_history(self.root).first_time(self.rev or "HEAD")
                start = None if got is None else float(got)
        # the sessions on git's clock, allowed no skew against its commits
        same_clock = same_clock_sessions(self.conn, self.root) if writes else frozenset()
        edits = session_edits(self.conn, paths)
        return RuleFacts(edits, history, start, self, same_clock, written)


_WRITTEN_LOCK = threading.Lock()  # stats' threads fill one question's paths
