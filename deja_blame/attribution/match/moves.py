"""Lines that moved: a block a person moved here from another file keeps its session.

``git blame`` names the commit that moved a block, not where it came from.
``git blame -C`` finds blocks moved from a file the same commit changed; what it
cannot see is found here from the index and git's logs: files a session wrote
that were renamed before their first commit, blocks that left a file in the
commit that brought them here (a rename git missed because the same commit
rewrote half the file; a session's new function moved before its first
commit). Moved lines are then matched against the writes to where they came
from, and are less certain than lines matched in place.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from deja_blame.attribution.facts.model import CLOCK_SKEW, BlameLine, LineTexts, WriteSet, has_line
from deja_blame.attribution.match.scaffolding import is_comment, is_distinctive
from deja_blame.index.fingerprint import is_trivial, normalise_line

if TYPE_CHECKING:
    from deja_blame.attribution.facts.source import FactSource
    from deja_blame.attribution.model import LineAttribution

# match.attribute_lines: (facts, lines, texts, evidence, writes, paths, rev_time, only=...)
# -> None, matching ``lines`` against ``writes``
Attribute = Callable[..., None]

MOVED_BLOCK = 2  # lines: a block moved between files, not a line that happens to recur
LEFT_BEHIND_COMMITS = 24  # commits examined for text that left a file unseen, per file


def follow_moves(
    facts: FactSource,
    relpath: str,
    lines: list[LineAttribution],
    texts: LineTexts,
    by_line: list[BlameLine | None],
    writes: WriteSet,
    paths: dict[int, bool],
    rev_time: float | None,
    attribute: Attribute,
    skip: list[bool] | None = None,
) -> None:
    """Lines a person moved here from another file keep their session.

    git blame names the commit that moved them; ``git blame -C`` (lines moved
    from a file changed in the same commit) names where they came from. It costs
    several times a plain blame, so it runs only on blocks of unmatched lines
    whose text some session wrote to another file of this repository.
    """
    todo = [
        k
        for k, ln in enumerate(lines)
        if ln.session is None
        and ln.commit is not None
        and not texts.trivial[k]
        and not (skip and skip[k])
    ]
    if not todo:
        return
    elsewhere, names = facts.written_elsewhere(set(paths), {texts.fps[k] for k in todo})
    todo = [k for k in todo if texts.fps[k] in elsewhere]
    if not todo:
        return
    ranges: list[list[int]] = []
    for k in todo:
        n = lines[k].line
        if ranges and n - ranges[-1][1] <= 3:
            ranges[-1][1] = n
        else:
            ranges.append([n, n])
    ranges = [r for r in ranges if r[1] - r[0] + 1 >= MOVED_BLOCK]
    if not ranges:
        return
    first = lines[0].line
    last = lines[-1].line
    # the blank lines and brackets at a moved block's edges moved with it
    ranges = [[max(first, a - 2), min(last, b + 2)] for a, b in ranges]
    plain = {n: by_line[n - first] for a, b in ranges for n in range(a, b + 1)}
    found = facts.blame_copies(relpath, [(a, b) for a, b in ranges], plain)
    moved = [False] * len(lines)
    # lines whose text left the file it came from in the commit that brought it here
    # (a move, not a copy): they need no distinctive text (``_keep_blocks``)
    left_file = [False] * len(lines)
    evidence = list(by_line)
    holds = _Holds(facts)
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
        sources |= facts.renamed_to(commit, source)
    more = {pid: exact for pid, exact in facts.candidate_paths(sources).items() if pid not in paths}

    # Work that left a file in the commit that brought it here, never committed
    # where the session wrote it: a rename git did not see as one (the person
    # moved the file and the release changed half of it), or a session's new
    # function the person moved before committing. Neither blame nor -C can
    # point at it; that the commit deleted the file, or that a session wrote the
    # text there after the file's last commit, can.
    try:  # the files at commits these questions read are kept until the end
        left = _left_behind(
            facts,
            lines,
            texts,
            evidence,
            ranges,
            first,
            elsewhere,
            names,
            facts.write_times,
            holds,
        )
        renamed: dict[str, set[int]] = {}  # commit -> files it deleted that moved here
        texts_here = {ln.text.strip() for ln, trivial in zip(lines, texts.trivial) if not trivial}
        for k, pids in left.items():
            moved[k] = left_file[k] = True
            more.update(dict.fromkeys((pid for pid in pids if pid not in paths), True))
            brought = evidence[k]
            if brought is None or brought.commit is None:
                continue
            for pid in pids:
                if brought.commit in renamed and pid in renamed[brought.commit]:
                    continue
                log = facts.path_log(names[pid])
                if _deleted_in(log, brought.commit) and _mostly_here(
                    facts, brought.commit, names[pid], texts_here
                ):
                    renamed.setdefault(brought.commit, set()).add(pid)
    finally:
        facts.close()
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
    wrote = {pid for pids in elsewhere.values() for pid in pids} - set(more)
    gone = facts.paths_git_lacks({pid: names[pid] for pid in wrote})
    if gone:
        for start, end in ranges:
            for k in range(start - first, end - first + 1):
                if not moved[k] and lines[k].session is None and lines[k].commit is not None:
                    moved[k] = left_file[k] = True
        more.update(dict.fromkeys(gone, True))
    if skip:
        moved = [m and not done for m, done in zip(moved, skip)]
    if not any(moved):
        return
    solid = {fp for fp, trivial in zip(texts.fps, texts.trivial) if not trivial}
    facts.load_writes(more, set(texts.fps), into=writes, solid=solid)
    attribute(facts, lines, texts, evidence, writes, {**paths, **more}, rev_time, only=moved)
    _keep_blocks(lines, texts.trivial, moved, left_file)
    for k, ln in enumerate(lines):
        if moved[k] and ln.session is not None and ln.confidence is not None:
            ln.confidence = round(ln.confidence * 0.9, 2)  # moved: less certain than in place


def _keep_blocks(
    lines: list[LineAttribution], trivial: list[bool], moved: list[bool], left_file: list[bool]
) -> None:
    """A session keeps the lines it was given as moved here only where at least
    ``MOVED_BLOCK`` different lines of its own moved here that say who wrote them:
    lines whose text left the file the session wrote them in (a move), or
    distinctive lines (``scaffolding.py``). One ``import re`` that arrived with a
    person's new code is a line that happens to recur; so are the imports, the
    fixture and the short asserts a person types into a new test file that a
    session once wrote into another (git blame -C finds them all the same)."""
    texts: dict[str, set[str]] = {}
    for k, ln in enumerate(lines):
        if moved[k] and ln.session is not None and ln.via == "index" and not trivial[k]:
            if left_file[k] or (is_distinctive(ln.text) and not is_comment(ln.text)):
                texts.setdefault(ln.session, set()).add(ln.text.strip())
    for k, ln in enumerate(lines):
        if moved[k] and ln.via == "index" and len(texts.get(ln.session or "", ())) < MOVED_BLOCK:
            ln.session = ln.source = ln.written_at = None
            ln.confidence = None
            ln.edit_ord = None
            ln.via = None


def _left_behind(
    facts: FactSource,
    lines: list[LineAttribution],
    texts: LineTexts,
    evidence: list[BlameLine | None],
    ranges: list[list[int]],
    first: int,
    elsewhere: dict[int, set[int]],
    names: dict[int, str],
    written_at: Callable[[int, int], list[float]],
    holds: _Holds,
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
        written: dict[int, set[str]] = {}
        for k in range(start - first, end - first + 1):
            b = evidence[k]
            ln = lines[k]
            if ln.session is not None or b is None or b.commit is None:
                continue
            block.append(k)
            if not texts.trivial[k]:
                for pid in elsewhere.get(texts.fps[k], ()):
                    written.setdefault(pid, set()).add(ln.text.strip())
        asked = {pid for pid, texts in written.items() if len(texts) >= MOVED_BLOCK}
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
                if _text_left(facts, b, names[pid], stripped, partial(written_at, pid, fp), holds):
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
    facts: FactSource,
    b: BlameLine,
    path: str,
    stripped: str,
    written_at: Callable[[], list[float]],
    holds: _Holds,
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
    log = facts.path_log(path)
    deleted = _deleted_in(log, commit)
    if not (deleted and has_line(facts.text_at(commit + "^", path), stripped, exact=False)):
        until = (b.commit_time or 0) + CLOCK_SKEW
        since = max(
            (t for sha, t, _ in log if t <= (b.commit_time or 0) and sha != commit), default=0
        )
        if not any(since < at <= until for at in written_at()):
            return False
    if path in facts.renamed_to(commit, here):
        return False
    status, now = facts.touched(commit).get(path, (None, path))
    if now is None and facts.renamed_to(commit, here):
        return False  # deleted, but git saw another file renamed to this one: not its source
    # still there (or there under its new name): a copy, not a move
    return now is None or not holds(commit, now, stripped)


class _Holds:
    """``holds(rev, path, text)``: whether the file at ``rev`` has the line ``text``,
    white space aside, as writes are matched (commander's JSDoc has
    `` *     writeOut(str)`` in ``lib/command.js`` and `` *  writeOut(str)`` in
    ``typings/index.d.ts``: a copy). Each version's lines are normalised once."""

    def __init__(self, facts: FactSource) -> None:
        self.facts = facts
        self.held: dict[tuple[str, str], set[str]] = {}

    def __call__(self, rev: str, path: str, text: str) -> bool:
        key = (rev, path)
        held = self.held.get(key)
        if held is None:
            content = self.facts.text_at(rev, path)
            held = self.held[key] = {normalise_line(t) for t in content.splitlines()}
        return normalise_line(text) in held


RENAMED_SHARE = 0.5  # of a deleted file's lines found here: this file is that one


def _mostly_here(facts: FactSource, commit: str, path: str, texts_here: set[str]) -> bool:
    """Whether most different lines ``path`` had before ``commit`` are in this file."""
    before = {
        t.strip() for t in facts.text_at(commit + "^", path).splitlines() if not is_trivial(t)
    }
    return bool(before) and len(before & texts_here) >= RENAMED_SHARE * len(before)


def _deleted_in(log: list[tuple[str, int, str]], commit: str) -> bool:
    """Whether ``commit`` deleted the path of ``log`` (``_path_log``)."""
    return any(sha == commit and status == "D" for sha, _, status in log)
