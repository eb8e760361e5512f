"""Stage 1 of the moves rule: where did the lines the rules left unmatched come from?

A block a person moved here from another file keeps the session that wrote it
there (stage 2: ``match/moves.py``). ``git blame`` names the commit that moved a
block, not where it came from. ``git blame -C`` finds blocks moved from a file
the same commit changed; what it cannot see is found here from the index and
git's logs: files a session wrote that were renamed before their first commit,
blocks that left a file in the commit that brought them here (a rename git
missed because the same commit rewrote half the file; a session's new function
moved before its first commit). The answer is plain data (``MovedLines``): the
lines moved, where each came from, and the paths whose writes now stand for them
(read into the file's ``WriteSet``).

The questions are asked in rounds, each on what the last answered: which texts
sessions wrote to other files of the repository (``written_elsewhere``), then
``git blame -C`` of the blocks left, then renames, deletions and the paths git
never had. They are asked only after the other rules matched what they could:
every round costs git work, and most files have no unmatched block at all.
"""

from __future__ import annotations

import sqlite3
import threading
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.attribution.facts import indexread as Q
from deja_blame.attribution.facts import shared
from deja_blame.attribution.facts.copies import copies_answer
from deja_blame.attribution.facts.git_blame import blame_copies
from deja_blame.attribution.facts.gitread import git
from deja_blame.attribution.facts.history import repo_history
from deja_blame.attribution.facts.model import (
    CLOCK_SKEW,
    MOVED_BLOCK,
    BlameLine,
    FileFacts,
    LineTexts,
    MovedLines,
    has_line,
)
from deja_blame.attribution.facts.writes import load_writes
from deja_blame.index.fingerprint import is_trivial, normalise_line
from deja_blame.objectid import LENGTHS

if TYPE_CHECKING:
    from deja_blame.attribution.model import LineAttribution

LEFT_BEHIND_COMMITS = 24  # commits examined for text that left a file unseen, per file

# (commit, time, status of the path) for each commit that touched a path
PathLog = list[tuple[str, int, str]]


def moved_lines(conn: sqlite3.Connection, facts: FileFacts) -> MovedLines | None:
    """Where the lines the rules left unmatched came from, when another file: None
    where no block of them did. The writes to those files are added to
    ``ask.writes``.

    git blame names the commit that moved them; ``git blame -C`` (lines moved
    from a file changed in the same commit) names where they came from. It costs
    several times a plain blame, so it runs only on blocks of unmatched lines
    whose text some session wrote to another file of this repository.
    """
    lines, texts, by_line = facts.lines, facts.texts, facts.blamed
    paths, relpath, skip = facts.paths, facts.path, facts.settled or None
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
    whole = _whole_file_sources(lines, texts, todo, elsewhere)
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
    found = ask.blame_copies(relpath, [(a, b) for a, b in ranges], plain)
    moved = [False] * len(lines)
    # lines whose text left the file it came from in the commit that brought it here
    # (a move, not a copy): they need no distinctive text (``match.moves.keep_blocks``)
    left_file = [False] * len(lines)
    evidence = list(by_line)
    holds = _Holds(ask)
    for b in found:
        k = b.line - first
        if (
            0 <= k < len(lines)
            and lines[k].session is None
            and b.orig_path
            and (b.orig_path != lines[k].orig_path)
        ):
            evidence[k] = b
            moved[k] = True
            brought = by_line[k]
            if brought is not None and brought.commit is not None:
                # still in the file it came from after the commit that brought it
                # here: a copy (the scaffolding a person types into a new test
                # file), which must be distinctive to keep its session
                left_file[k] = not holds(brought.commit, b.orig_path, lines[k].text)
    # -C names the file the lines came from as it was then; where the commit that
    # brought them there renamed it, the sessions of that commit wrote the old name
    sources = {b.orig_path for b in found if b.orig_path}
    for commit, source in {
        (b.commit, b.orig_path)
        for b in found
        if b.commit and b.orig_path and 0 <= b.line - first < len(moved) and moved[b.line - first]
    }:
        sources |= ask.renamed_to(commit, source)
    more = {pid: exact for pid, exact in ask.candidate_paths(sources).items() if pid not in paths}

    # Work that left a file in the commit that brought it here, never committed
    # where the session wrote it: a rename git did not see as one (the person
    # moved the file and the release changed half of it), or a session's new
    # function the person moved before committing. Neither blame nor -C can
    # point at it; that the commit deleted the file, or that a session wrote the
    # text there after the file's last commit, can.
    left = _left_behind(
        ask,
        lines,
        texts,
        evidence,
        ranges,
        first,
        elsewhere,
        names,
        ask.write_times,
        holds,
        whole,
    )
    renamed: dict[str, set[int]] = {}  # commit -> files it deleted that moved here
    texts_here = {ln.text.strip() for ln, trivial in zip(lines, texts.trivial) if not trivial}
    for k, pids in left.items():
        moved[k] = True
        brought = evidence[k]
        left_file[k] = left_a_file_git_had(
            pids,
            whole,
            lambda pid: bool(ask.path_log(names[pid])),
            partial(_taken_out, ask, holds, brought, lines[k].text, texts.trivial[k]),
        )
        more.update(dict.fromkeys((pid for pid in pids if pid not in paths), True))
        if brought is None or brought.commit is None:
            continue
        for pid in pids:
            if brought.commit in renamed and pid in renamed[brought.commit]:
                continue
            log = ask.path_log(names[pid])
            if _deleted_in(log, brought.commit) and _mostly_here(
                ask, brought.commit, names[pid], texts_here
            ):
                renamed.setdefault(brought.commit, set()).add(pid)
    # A file that left whole and is mostly here (a rename git missed: the same
    # commit rewrote much of it): every line that commit brought here may be its,
    # not only the blocks found (a lone docstring line, a blank). A new module
    # that took some blocks of a deleted one is not that module: only the blocks.
    for k, ln in enumerate(lines):
        brought = evidence[k]
        if not moved[k] and ln.session is None and brought is not None:
            moved[k] = left_file[k] = brought.commit in renamed
    # A file a session wrote that the person renamed before the first commit: git
    # never had the session's path, so neither blame nor -C can point at it.
    # "Had" is: some commit the revision reaches changed the path (paths_had), a
    # merged side branch's included, each path on its own. git's log of the paths
    # asked together counted a side branch's path as had or not by which other
    # paths were asked beside it; a path git held anywhere in the history is no
    # file only the session knew, so its texts are left to blame and -C.
    wrote = {pid for pids in elsewhere.values() for pid in pids} - set(more)
    gone = ask.paths_git_lacks({pid: names[pid] for pid in wrote})
    for start, end in ranges if gone else ():
        block = range(start - first, end - first + 1)
        for k in block:
            if not moved[k] and lines[k].session is None and lines[k].commit is not None:
                moved[k] = left_file[k] = True
        from_gone = _written_for_commit(ask, lines, texts, evidence, block, gone, elsewhere, whole)
        more.update(dict.fromkeys(from_gone, True))
    if skip:
        moved = [m and not done for m, done in zip(moved, skip)]
    if not any(moved):
        return None
    solid = {fp for fp, trivial in zip(texts.fps, texts.trivial) if not trivial}
    load_writes(conn, more, set(texts.fps), into=facts.writes, solid=solid)
    return MovedLines(evidence, moved, left_file, {**paths, **more})


def left_a_file_git_had(
    pids: set[int], whole: set[int], had: Callable[[int], bool], taken_out: Callable[[], bool]
) -> bool:
    """Whether a text that left the files ``pids`` (``_left_behind``) moved: it left
    one git had by this revision (``had``: its log is not empty), or one this file
    mostly is (``whole``: renamed before its first commit), or git's own diff of the
    line's commit took the text out of another file (``taken_out``: the same file
    under the name git had, the session's path being older).

    A file git never had "loses" every text it held (nothing of it is there after
    the commit), so what left only such files, with nothing taken out of a file in
    git, is judged as a copy is (``match.moves.keep_blocks``: two distinctive
    lines): a person's new test in ``common_test.go`` (entireio eac9e693) gave its
    ``tmpDir := t.TempDir()``, ``if err != nil {`` and ``}`` to a session that wrote
    a test file in a worktree a day before, never committed there by then. A
    session's ``class Token:`` block, written to ``packaging/_tokenizer.py`` before
    the person moved the package to ``src/`` (git never had the session's path),
    moved from ``src/packaging/_tokenizer_impl.py`` into ``_musllinux.py`` in one
    commit: a move, as that commit's diff shows."""
    return any(pid in whole or had(pid) for pid in pids) or taken_out()


def _taken_out(
    ask: WhereFrom, holds: _Holds, brought: BlameLine | None, text: str, trivial: bool
) -> bool:
    """Whether the commit that brought a line here (``brought``) took its ``text``
    out of another file it changed or deleted: in that file at the commit's parent,
    not in it (under its new name, if renamed) after. A blank line or bracket says
    nothing; a commit git cannot read says no."""
    if trivial or brought is None or brought.commit is None:
        return False
    commit, here = brought.commit, brought.orig_path
    for path, (status, now) in ask.touched(commit).items():
        if status == "A" or path == here or now == here:
            continue
        if holds(commit + "^", path, text) and (now is None or not holds(commit, now, text)):
            return True
    return False


def _left_behind(
    ask: WhereFrom,
    lines: list[LineAttribution],
    texts: LineTexts,
    evidence: list[BlameLine | None],
    ranges: list[list[int]],
    first: int,
    elsewhere: dict[int, set[int]],
    names: dict[int, str],
    written_at: Callable[[int, int], list[float]],
    holds: _Holds,
    whole: set[int],
) -> dict[int, set[int]]:
    """Line index -> paths (ids) its text left in the commit that brought it here.

    A line qualifies when it is unmatched, inside a block of such lines, and its
    text left a file a session wrote it to in the commit that brought it
    (``evidence``: git blame's, or -C's): the file had it before that commit, or a
    session wrote it there after the file's last commit (work git never saw
    there), and the file no longer has it after the commit. At least
    ``MOVED_BLOCK`` different lines of the block must have left the same file:
    one ``return NotImplemented`` leaving a file proves nothing. The rest of the
    block that sessions wrote there, and its blank lines and brackets, go with it.
    Files are asked of git only where sessions wrote that many different lines
    of the block there (one ``cat-file --batch`` for every read).
    """
    out: dict[int, set[int]] = {}
    commits: set[str] = set()  # each costs a diff-tree and file reads: a bounded few
    for start, end in ranges:
        block: list[int] = []
        for k in range(start - first, end - first + 1):
            b = evidence[k]
            if lines[k].session is not None or b is None or b.commit is None:
                continue
            block.append(k)
        solid = [k for k in block if not texts.trivial[k]]
        written = _different_texts(lines, texts, solid, elsewhere)
        asked = {pid for pid, n in written.items() if n >= MOVED_BLOCK}
        left: dict[int, set[int]] = {}
        for k in block if asked else ():
            b = evidence[k]
            assert b is not None and b.commit is not None
            if texts.trivial[k]:
                continue
            if b.commit not in commits:
                if len(commits) >= LEFT_BEHIND_COMMITS:
                    continue
                commits.add(b.commit)
            fp = texts.fps[k]
            for pid in asked & elsewhere.get(fp, set()):
                stripped = lines[k].text.strip()
                if _text_left(
                    ask, b, names[pid], stripped, partial(written_at, pid, fp), holds,
                    pid in whole,
                ):  # fmt: skip
                    left.setdefault(pid, set()).add(k)
        sources = {
            pid
            for pid, ks in left.items()
            if len({lines[k].text.strip() for k in ks}) >= MOVED_BLOCK
        }
        if not sources:
            continue
        for k in block:
            if texts.trivial[k]:
                out[k] = sources
                continue
            # a line of the block also found elsewhere in the file it left
            # (``return None``) went with the block
            got = sources & elsewhere.get(texts.fps[k], set())
            if got:
                out[k] = got
    return out


def _text_left(
    ask: WhereFrom,
    b: BlameLine,
    path: str,
    stripped: str,
    written_at: Callable[[], list[float]],
    holds: _Holds,
    whole: bool = False,
) -> bool:
    """Whether the text ``stripped`` (at any indent) left ``path`` in commit ``b.commit``
    (which brought it to ``b.orig_path``): not in the file after the commit, and in it
    before, or written there by a session since the file's last commit.

    A file git saw renamed to this one is not a source: blame followed that
    rename, and the lines it gives this commit are the ones it rewrote. Nor is a
    file the commit deleted, then: what git missed is a rename, and it saw one.
    """
    commit = b.commit
    here = b.orig_path or ""
    if commit is None or path == here:
        return False
    # The cheap questions first, from one log of the path: did the commit delete
    # it (with the text in it), or did a session write the text there since the
    # path's last commit (work git never saw there)? A text that left a file the
    # commit only changed is git blame -C's to find (reading that file before
    # every such commit cost deja stats on click 7 % for 12 more lines of 5,653
    # and 5 more wrong on packaging's history).
    log = ask.log_index(path)
    deleted = commit in log.deleted
    if not (deleted and has_line(ask.text_at(commit + "^", path), stripped, exact=False)):
        until = (b.commit_time or 0) + CLOCK_SKEW
        since: float = log.last_before(b.commit_time or 0, commit)
        if not log.times and not whole:  # a file git never had
            since = _floor_for_unseen(ask, b)
        if not written_between(written_at(), since, until):
            return False
    if path in ask.renamed_to(commit, here):
        return False
    status, now = ask.touched(commit).get(path, (None, path))
    if now is None and ask.renamed_to(commit, here):
        return False  # deleted, but git saw another file renamed to this one: not its source
    # still there (or there under its new name): a copy, not a move
    return now is None or not holds(commit, now, stripped)


def _written_for_commit(
    ask: WhereFrom,
    lines: list[LineAttribution],
    texts: LineTexts,
    evidence: list[BlameLine | None],
    block: range,
    gone: set[int],
    elsewhere: dict[int, set[int]],
    whole: set[int],
) -> set[int]:
    """Of the files git never had (``gone``), those a session wrote at least
    ``MOVED_BLOCK`` different lines of the block to for the commit that brought
    them into the repository (``evidence``: git blame -C's where it found where
    they came from, else git blame's), by its time (``_floor_for_unseen``)."""
    got: dict[int, set[str]] = {}
    for k in block:
        ln, b = lines[k], evidence[k]
        if ln.session is not None or texts.trivial[k] or b is None or b.commit is None:
            continue
        fp = texts.fps[k]
        pids = gone & elsewhere.get(fp, set())
        if not pids:
            continue
        floor = _floor_for_unseen(ask, b)
        until = (b.commit_time or 0) + CLOCK_SKEW
        for pid in pids:
            since = 0.0 if pid in whole else floor
            if written_between(ask.write_times(pid, fp), since, until):
                got.setdefault(pid, set()).add(ln.text.strip())
    return {pid for pid, done in got.items() if len(done) >= MOVED_BLOCK}


WHOLE_FILE_SHARE = 0.8  # of a file's different lines written to one other file: renamed


def _whole_file_sources(
    lines: list[LineAttribution], texts: LineTexts, todo: list[int],
    elsewhere: dict[int, set[int]],
) -> set[int]:  # fmt: skip
    """The other files (ids) sessions wrote ``WHOLE_FILE_SHARE`` of this file's
    different lines to, not blank nor a bracket: this file is one of them renamed
    (a plan a session wrote to ``docs/x.md``, committed as ``docs/architecture/x.md``
    after a rebase), not a file that took some common lines from them."""
    solid = {ln.text.strip() for k, ln in enumerate(lines) if not texts.trivial[k]}
    got = _different_texts(lines, texts, todo, elsewhere)
    return {pid for pid, n in got.items() if n >= WHOLE_FILE_SHARE * len(solid)}


def _different_texts(
    lines: list[LineAttribution], texts: LineTexts, ks: list[int],
    elsewhere: dict[int, set[int]],
) -> Counter[int]:  # fmt: skip
    """Path id -> how many different texts (stripped) of the lines ``ks`` sessions
    wrote to it (``elsewhere``: fingerprint -> paths). A text has one fingerprint
    (its white space removed, hashed), so each fingerprint's different texts are
    counted once for each of its paths, not line after line (entireio's stats met
    403,235 (line, path) pairs so)."""
    by_fp: dict[int, set[str]] = {}
    for k in ks:
        by_fp.setdefault(texts.fps[k], set()).add(lines[k].text.strip())
    got: Counter[int] = Counter()
    for fp, different in by_fp.items():
        for pid in elsewhere.get(fp, ()):
            got[pid] += len(different)
    return got


def _floor_for_unseen(ask: WhereFrom, b: BlameLine) -> float:
    """Since when a write to a file git never had may be the source of a line ``b``
    names the commit of. Into a file that commit created, only work done for it,
    after its parent: the test scaffolding a session wrote to a scratch file weeks
    earlier is not what a person's new test file took (entireio/cli: imports and
    ``if err != nil {`` of new test files). Into a file git had, any earlier write:
    a session's new module, moved to ``src/`` with the layout before its first
    commit and later moved on into this file (packaging's ``class Token``). A file
    git never had that this file mostly is (``_whole_file_sources``) counts from any
    time too: it is this file, renamed before its first commit (and a rebase made
    its commit seconds younger than its parent)."""
    here, commit = b.orig_path, b.commit
    if commit is None or not here:
        return 0.0
    if not any(sha == commit and status == "A" for sha, _, status in ask.path_log(here)):
        return 0.0
    return float(ask.parent_time(commit) or 0)


class _Holds:
    """``holds(rev, path, text)``: whether the file at ``rev`` has the line ``text``,
    white space aside, as writes are matched (commander's JSDoc has
    `` *     writeOut(str)`` in ``lib/command.js`` and `` *  writeOut(str)`` in
    ``typings/index.d.ts``: a copy). Each version's lines are normalised once."""

    def __init__(self, ask: WhereFrom) -> None:
        self.ask = ask
        self.held: dict[tuple[str, str], set[str]] = {}

    def __call__(self, rev: str, path: str, text: str) -> bool:
        key = (rev, path)
        held = self.held.get(key)
        if held is None:
            content = self.ask.text_at(rev, path)
            held = self.held[key] = {normalise_line(t) for t in content.splitlines()}
        return normalise_line(text) in held


RENAMED_SHARE = 0.5  # of a deleted file's lines found here: this file is that one


def _mostly_here(ask: WhereFrom, commit: str, path: str, texts_here: set[str]) -> bool:
    """Whether most different lines ``path`` had before ``commit`` are in this file."""
    before = {t.strip() for t in ask.text_at(commit + "^", path).splitlines() if not is_trivial(t)}
    return bool(before) and len(before & texts_here) >= RENAMED_SHARE * len(before)


def written_between(times: list[float], since: float, until: float) -> bool:
    """Whether a time of ``times`` (in order: ``WhereFrom.write_times``) is after
    ``since`` and not after ``until``."""
    k = bisect_right(times, since)
    return k < len(times) and times[k] <= until


def _deleted_in(log: list[tuple[str, int, str]], commit: str) -> bool:
    """Whether ``commit`` deleted the path of ``log`` (``_path_log``)."""
    return any(sha == commit and status == "D" for sha, _, status in log)


class PathLogIndex:
    """A path's log (``PathLog``) as the moves rule asks it for each line of a block
    (62,000 asks on entireio's ``deja stats``, each a pass over the log before)."""

    def __init__(self, log: PathLog) -> None:
        self.deleted = frozenset(sha for sha, _, status in log if status == "D")
        entries = sorted((t, sha) for sha, t, _ in log)
        self.times = [t for t, _ in entries]
        self.shas = [sha for _, sha in entries]

    def last_before(self, when: float, commit: str) -> float:
        """The time of the latest commit of the log at or before ``when`` that is not
        ``commit`` (0: none)."""
        k = bisect_right(self.times, when)
        while k > 0:
            k -= 1
            if self.shas[k] != commit:
                return self.times[k]
        return 0


class _KeptLogs:
    """A question's path logs (``WhereFrom.path_log``) and their indexes, for the
    last ``KEPT_REVISIONS`` revisions asked: ``deja report`` asks revision after
    revision, and each revision's logs are its own."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_rev: dict[str | None, tuple[dict[str, PathLog], dict[str, PathLogIndex]]] = {}

    def of(self, rev: str | None) -> tuple[dict[str, PathLog], dict[str, PathLogIndex]]:
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
        # a path's log, kept for the question where there is one (the moves rule of
        # each file asks the same paths: entireio's stats built 7,651 logs of 537)
        kept = shared.kept(self.root, "path logs", _KeptLogs)
        self._path_logs, self._log_indexes = ({}, {}) if kept is None else kept.of(rev)
        self._write_times: dict[tuple[int, int], list[float]] | None = shared.kept(
            self.root, "write times", dict
        )

    def candidate_paths(self, relpaths: set[str]) -> dict[int, bool]:
        """The index's path ids that are these repository paths (exactly, or by suffix)."""
        return Q.candidate_paths(self.conn, self.root, relpaths)

    def write_times(self, pid: int, fp: int) -> list[float]:
        """When sessions (not the person) wrote text of ``fp`` to path ``pid``, in
        order (``written_between``; kept for a question about many files: the moves
        rule asks it again file after file)."""
        kept = self._write_times
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
        kept: dict[int, set[int]] | None = shared.kept(self.root, "fingerprints written", dict)
        if kept is None:
            return None
        with _WRITTEN_LOCK:
            missing = [pid for pid in pids if pid not in kept]
            if missing:
                kept.update(Q.fingerprints_of_paths(self.conn, missing))
            return {pid: kept[pid] for pid in pids}

    def _writers(self, paths: dict[int, str]) -> dict[int, tuple[int, ...]] | None:
        """Each fingerprint sessions wrote to these paths -> the paths (ids) it was
        written to, made once per question and set of paths (None outside a question:
        ``_written``)."""
        kept: dict[frozenset[int], dict[int, tuple[int, ...]]] | None = shared.kept(
            self.root, "paths by fingerprint written", dict
        )
        if kept is None:
            return None
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
