"""``git blame -C``'s answer, where git need not compute it.

The moves rule asks ``git blame -C`` where a file's unmatched lines came from
(``moved.WhereFrom.blame_copies``). It costs several times the file's plain blame: on
express ``deja stats`` ran it on 114 of 213 files, 88 of which it found nothing
moved in. Git moves a line only where the blame would stop: at the commit ``C``
that brought it (the diff passed it no further), ``-C`` looks for it before
``C`` in the same file (``-M``: ``find_move_in_parent``), then in the other
files ``C`` changed (``find_copy_in_parent``), as they were before ``C``. What
it finds is a block its diff of ``C``'s lines against that file leaves
unchanged (lines consecutive in both files), and it takes the block only when
it holds at least 20 letters and digits within the file (``blame_move_score``),
40 from another file (``blame_copy_score``), so a block of brackets never moves.
Each commit's own lines are the same with and without ``-C`` until something
moves (git takes commits newest first; a commit's lines are what the newer ones
passed it), so:

- where no run of lines (consecutive in the file and brought by one commit) is
  a run of consecutive lines of one of those files before the commit, with that
  many letters and digits (white space aside: more found than git, never
  fewer), ``-C``'s answer is the plain blame's, and git is not asked;
- else ``-C``'s answer is computed here, as git computes it, from the blobs of
  the history (``copy_blame.py``: the files' lines this module keeps for the
  question tell which files a block could come from, and only those are diffed);
- where that leaves the question to git (a rename it cannot follow as git does),
  where ``git blame -M`` (within the file only: on entireio's history a quarter
  of ``-C``'s CPU for the same lines) leaves no run that another file the run's
  commit changed holds so, ``-C``'s answer is ``-M``'s.

Git runs ``-C`` itself for the rest, blame options, a configured
``blame.ignoreRevsFile`` (``blame_copies`` runs git without clearing it) and a
diff configuration (a textconv driver, another diff algorithm or indent heuristic:
git compares or aligns otherwise).
"""

from __future__ import annotations

import heapq
import re
import sys
import threading
from collections import Counter
from pathlib import Path

from deja_blame.attribution.facts import shared
from deja_blame.attribution.facts.copy_blame import CopyBlame, NotHere
from deja_blame.attribution.facts.git_blame import blame_moves
from deja_blame.attribution.facts.history import RepoHistory
from deja_blame.attribution.facts.model import BlameLine
from deja_blame.attribution.facts.plain_blame import engine_history

MAX_FILES = 256  # files read before one commit; a commit changing more goes to git
MEMORY_KEPT = 6 << 20  # bytes of memory the blobs' lines kept for one question take

# (commit, path) -> runs of lines (bare) the blame gives it, consecutive in the file
Runs = dict[tuple[str, str], list[list[bytes]]]


def copies_answer(
    root: str | Path,
    rev: str | None,
    relpath: str,
    ranges: list[tuple[int, int]],
    plain: dict[int, BlameLine | None],
) -> list[BlameLine] | None:
    """``git blame -C``'s answer for ``ranges`` (``plain``: line -> the plain blame's
    line, for every line of the ranges) where it is the plain blame's or ``-M``'s
    (see above); None: ask git for ``-C``."""
    where = str(root)
    if rev is None or not plain:
        return None
    history = engine_history(where, rev)
    if history is None:
        return None
    text = history.read(f"{rev}:{relpath}")
    if text is None:
        return None
    lines = _bare_lines(text)
    runs = _runs(plain, lines)
    if runs is None:
        return None
    could = _could_take(where, history, runs, within=True)
    if could == NOTHING:
        return [b for _, b in sorted(plain.items()) if b is not None]
    computed = _computed(where, history, rev, relpath, text, ranges)
    if computed is not None:
        return computed
    if could is None or could == COPY:
        return None  # git's -C then, not -M before it (where -C finds more, -M was lost)
    found = blame_moves(Path(where), relpath, rev, ranges)
    if found is None:
        return None
    moved: dict[int, BlameLine | None] = {b.line: b for b in found}
    if moved.keys() != plain.keys():
        return None
    runs = _runs(moved, lines)
    if runs is None or _could_take(where, history, runs, within=False) != NOTHING:
        return None
    return [b for _, b in sorted(moved.items()) if b is not None]


def _computed(
    root: str,
    history: RepoHistory,
    rev: str,
    relpath: str,
    text: bytes,
    ranges: list[tuple[int, int]],
) -> list[BlameLine] | None:
    """``git blame -C``'s answer computed here (``copy_blame.py``) from the blobs
    read for the question; None where git must say."""

    def held(specs: list[str]) -> list[frozenset[bytes]]:
        return [h[0] for h in _lines_of(root, history, specs)]

    try:
        return CopyBlame(root, history, history.read_many, held, rev, relpath, text).blame(ranges)
    except NotHere:
        return None


def _runs(blamed: dict[int, BlameLine | None], lines: list[bytes]) -> Runs | None:
    """The lines of each (commit, path), in runs of lines consecutive in the file
    (git moves a block of one commit's consecutive lines); None: a line without one."""
    brought: Runs = {}
    last: dict[tuple[str, str], int] = {}
    for n, b in sorted(blamed.items()):
        if b is None or b.commit is None or not 0 < n <= len(lines) or b.line != n:
            return None
        key = (b.commit, b.orig_path)
        runs = brought.setdefault(key, [])
        if last.get(key) != n - 1:
            runs.append([])
        runs[-1].append(lines[n - 1])
        last[key] = n
    return brought


NOTHING, MOVE, COPY = "", "move", "copy"  # what a block of lines could do


def _could_take(root: str, history: RepoHistory, runs: Runs, within: bool) -> str | None:
    """What a block of ``runs`` could do where git looks before each run's commit:
    ``COPY`` where another file the commit changed holds it, else ``MOVE`` where the
    file itself does (``within``: ``-M`` not run yet), else ``NOTHING``. None: git
    must say (a merge, a commit not read, too many files)."""
    could = NOTHING
    for (commit, path), blocks in runs.items():
        c = history.commits.get(commit)
        if c is None or len(c.parents) > 1:
            return None
        if not c.parents:
            continue  # a root commit: nothing before it to come from
        parent = c.parents[0]
        if parent not in history.commits:
            return None
        changed = c.against[0] if c.against else {}
        # the files the commit changed that were there before it (a file it
        # renamed is a deletion here)
        files = {f for f, (status, _) in changed.items() if status != "A"}
        if len(files) > MAX_FILES:
            return None
        # git's -M reads the file as the parent had it, and -C skips it; a file the
        # commit added (or retyped) git looks for under another name (its rename
        # detection): then -M may read any of them, with the lower bar
        kept = changed.get(path, ("", ""))[0] == "M"
        others = _lines_of(root, history, [f"{parent}:{f}" for f in sorted(files - {path})])
        if not kept and path in files:
            others += _lines_of(root, history, [f"{parent}:{path}"])
        if any(_could_move(run, held, COPY_SCORE) for held in others for run in blocks):
            return COPY
        if not within or could == MOVE:
            continue
        moves = _lines_of(root, history, [f"{parent}:{path}"]) if kept else others
        if any(_could_move(run, held, MOVE_SCORE) for held in moves for run in blocks):
            could = MOVE
    return could


# a blob's bare lines, and its bare text between newlines ("\n" + lines + "\n")
Held = tuple[frozenset[bytes], bytes]


class _Kept:
    """Blobs' lines read for one question, up to ``MEMORY_KEPT`` bytes of the memory
    they take (``held_size``: about three times the text). Past it the blob asked
    least often goes (the oldest of those): each file a big commit brought lines to
    asks for all of that commit's files in turn, a sweep that drove out the least
    recently asked of files asked again and again (entireio's ``deja stats``: 15,321
    asks of 1,160 blobs, 73 MB of them; kept the least recently asked out, 13 MB
    missed 3,329 and 4 MB 14,787, kept the least asked out, 6 MB missed 4,490).

    The blob to drop is found in a heap of (asks, when kept, blob): an entry's asks
    only grow, so one counted too few is pushed again with its count until the top
    is right (a scan of every kept blob at each drop took 0.5 s of entireio's stats)."""

    def __init__(self) -> None:
        self.held: dict[str, tuple[Held, int, int]] = {}  # blob -> (lines, size, when kept)
        self.asked: Counter[str] = Counter()
        self.size = 0
        self.order: list[tuple[int, int, str]] = []  # (asks then, when kept, blob)
        self.puts = 0

    def get(self, spec: str) -> Held | None:
        self.asked[spec] += 1
        got = self.held.get(spec)
        return None if got is None else got[0]

    def put(self, spec: str, held: Held) -> None:
        if spec in self.held:
            return
        size = held_size(held)
        self.puts += 1
        self.held[spec] = (held, size, self.puts)
        heapq.heappush(self.order, (self.asked[spec], self.puts, spec))
        self.size += size
        while self.size > MEMORY_KEPT and len(self.held) > 1:
            asked, when, gone = heapq.heappop(self.order)
            got = self.held.get(gone)
            if got is None or got[2] != when:
                continue  # dropped already (kept again later: another entry)
            if self.asked[gone] != asked:
                heapq.heappush(self.order, (self.asked[gone], when, gone))
                continue
            del self.held[gone]
            self.size -= got[1]


def held_size(held: Held) -> int:
    """About the bytes a blob's ``Held`` takes: its set's table, each line a bytes
    object (its header and text), and the text between newlines."""
    lines, text = held
    return sys.getsizeof(lines) + _BYTES_HEADER * len(lines) + 2 * len(text)


_BYTES_HEADER = sys.getsizeof(b"")  # 33 bytes on CPython 3.11 (64-bit)


def _lines_of(root: str, history: RepoHistory, specs: list[str]) -> list[Held]:
    """Each blob's lines, bare: kept for the question (files' lines come from the
    same big commits again and again: on entireio, 16,000 reads of 1,306 blobs)."""
    kept = shared.kept(root, "bare lines", _Kept)
    if kept is None:
        kept = _Kept()
    got: dict[str, Held] = {}
    with _LOCK:  # stats' threads share the question's
        for spec in specs:
            held = kept.get(spec)
            if held is not None:
                got[spec] = held
    missing = [spec for spec in specs if spec not in got]
    if missing:
        for spec, blob in zip(missing, history.read_many(missing)):
            bare = (blob or b"").translate(None, _SPACE)
            got[spec] = (frozenset(bare.split(b"\n")), b"\n" + bare + b"\n")
        with _LOCK:
            for spec in missing:
                kept.put(spec, got[spec])
    return [got[spec] for spec in specs]


_LOCK = threading.Lock()


def _could_move(run: list[bytes], held: Held, bar: int) -> bool:
    """Whether lines of ``run``, consecutive there and in the file ``held``, could
    make a block git moves: one of at least ``bar`` letters and digits."""
    lines, text = held
    start = 0
    while start < len(run):
        # a stretch of lines the file has, each somewhere: only there can a block be
        end = start
        score = 0
        while end < len(run) and run[end] in lines:
            score += _score(run[end])
            end += 1
        if score >= bar and _consecutive(run[start:end], text, bar):
            return True
        start = end + 1
    return False


def _consecutive(stretch: list[bytes], text: bytes, bar: int) -> bool:
    """Whether lines of ``stretch`` scoring ``bar`` are consecutive lines of ``text``."""
    scores = [_score(line) for line in stretch]
    left = sum(scores)
    for a in range(len(stretch)):
        if left < bar:
            return False
        score = 0
        needle = b"\n"
        for b in range(a, len(stretch)):
            needle += stretch[b] + b"\n"
            if needle not in text:
                break
            score += scores[b]
            if score >= bar:
                return True
        left -= scores[a]
    return False


def _score(line: bytes) -> int:
    got = _SCORES.get(line)
    if got is None:
        if len(_SCORES) >= SCORES_KEPT:
            _SCORES.clear()
        got = _SCORES[line] = len(_SCORED.findall(line))
    return got


_SCORES: dict[bytes, int] = {}  # the same lines are scored file after file
SCORES_KEPT = 65_536


def _bare_lines(text: bytes) -> list[bytes]:
    """The text's lines without white space (lines equal here may differ for git:
    more found, never fewer)."""
    return text.translate(None, _SPACE).split(b"\n")


_SPACE = b" \t\r\x0b\x0c"  # bytes.split()'s white space, the newline aside


# git's bars for a moved block: a block's score is 1 + its letters and digits, and
# must pass ``blame_move_score`` within the file, ``blame_copy_score`` from another
MOVE_SCORE = 20
COPY_SCORE = 40
# a letter or a digit to git; any byte past ASCII too (more counted, never fewer)
_SCORED = re.compile(rb"[0-9A-Za-z\x80-\xff]")
