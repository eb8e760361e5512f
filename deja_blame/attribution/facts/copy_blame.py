"""``git blame -C`` of some line ranges, computed in process as git's ``blame.c``
computes it (git 2.39, one ``-C``, default scores and diff options).

Git gives each range one entry and walks commits newest first. At each (commit,
path) that holds entries (``pass_blame``):

- the first parent, in order, whose file has the same blob takes every entry
  whole (``pass_whole_blame``);
- else each parent whose file differs (one per distinct blob) takes the parts of
  each entry its diff leaves unchanged, the entry cut at each changed stretch
  (``pass_blame_to_parent``, ``blame_chunk``);
- of the parts left, those scoring more than 20 are diffed against each parent's
  file, and the best unchanged stretch scoring more than 20 moves there; the
  parts around it are looked at again (``find_move_in_parent``);
- of the parts left, those scoring more than 40 are diffed against every other
  file each parent had that the commit changed (a tree diff with no rename
  detection, in path order), the best stretch of all files (a tie: the later
  file) moving there if it scores more than 40 (``find_copy_in_parent``,
  ``copy_split_if_better``);
- what is left is the commit's.

A part's score is 1 + the letters and digits of its lines in the blamed file
(``blame_entry_score``); each entry's fate depends on its own lines only, so the
order entries are taken in does not change the answer. The diffs are
``alignment.blame_hunks``: git's own alignment.

Where a parent lacks the file, git looks for it under another name (its rename
detection for that one path, ``find_rename``): ``git diff-tree -M`` answers the same
where the commit deleted at most one file, and that file went to the asked path or
to none. ``NotHere`` is raised where this module does not follow git (a commit
that deleted several files, or one it gave another new file; a file that changed
type; a range past the file's lines; an object the repository lacks): the caller
then asks git.
"""

from __future__ import annotations

import heapq
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from deja_blame.attribution.facts import shared
from deja_blame.attribution.facts.alignment import Hunk, aligns_as_git, blame_hunks
from deja_blame.attribution.facts.gitread import git
from deja_blame.attribution.facts.history import Changes, RepoHistory
from deja_blame.attribution.facts.model import BlameLine

MOVE_SCORE = 20  # git's BLAME_DEFAULT_MOVE_SCORE
COPY_SCORE = 40  # git's BLAME_DEFAULT_COPY_SCORE
_ALNUM = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_SPACE = b" \t\r\x0b\x0c"  # bytes.split()'s white space, the newline aside

# (line in the blamed file, line in the suspect's blob, lines), 0-based
Entry = tuple[int, int, int]
Origin = tuple[str, str]  # (commit, path)
# a split of an entry: the part before, the part found elsewhere, the part after
Split = tuple["Entry | None", Entry, "Entry | None"]


class NotHere(Exception):
    """git must answer this question (a rename to follow, an object missing)."""


class _Hunks:
    """Diffs of one question's walks by (old origin, new origin), up to ``HUNKS_KEPT``
    hunks; the least recently asked go first. An origin names one blob, so a diff
    kept is the diff of the same two texts."""

    def __init__(self) -> None:
        self.held: OrderedDict[tuple[Origin, Origin], list[Hunk]] = OrderedDict()
        self.size = 0
        self.lock = threading.Lock()

    def get(self, key: tuple[Origin, Origin]) -> list[Hunk] | None:
        with self.lock:
            got = self.held.get(key)
            if got is not None:
                self.held.move_to_end(key)
            return got

    def put(self, key: tuple[Origin, Origin], hunks: list[Hunk]) -> None:
        with self.lock:
            if key in self.held:
                return
            self.held[key] = hunks
            self.size += 1 + len(hunks)
            while self.size > HUNKS_KEPT:
                _, gone = self.held.popitem(last=False)
                self.size -= 1 + len(gone)


HUNKS_KEPT = 50_000


@dataclass
class _Found:
    entries: dict[Origin, list[Entry]] = field(default_factory=dict)

    def add(self, origin: Origin, got: list[Entry]) -> None:
        if got:
            self.entries.setdefault(origin, []).extend(got)


class CopyBlame:
    """One file at one revision; ``blame`` answers line ranges.

    ``history``: the repository's history, read (each commit's parents, and what it
    changed against each: the walk passes a commit that did not change the file
    without reading anything); ``read``: blobs by ``REV:PATH`` (None: none);
    ``held``: the lines without white space of the files ``REV:PATH`` (the blobs
    ``copies`` read for the question; an empty set where there is no such blob);
    ``copies`` False: no moves nor copies are looked for (git's plain blame)."""

    def __init__(
        self,
        root: str,
        history: RepoHistory,
        read: Callable[[list[str]], list[bytes | None]],
        held: Callable[[list[str]], list[frozenset[bytes]]],
        rev: str,
        path: str,
        text: bytes,
        copies: bool = True,
    ) -> None:
        self.root = root
        self.copies = copies
        self.history = history
        self.read = read
        self.held = held
        if rev not in history.commits:
            raise NotHere(f"{rev} not read")
        self.head = rev
        self.path = path
        starts = [0]
        at = text.find(b"\n")
        while at >= 0:
            starts.append(at + 1)
            at = text.find(b"\n", at + 1)
        if starts[-1] != len(text):
            starts.append(len(text))  # a last line without a newline
        self.final = text
        self.starts = starts
        lines = [text[a:b].rstrip(b"\n") for a, b in zip(starts, starts[1:], strict=False)]
        self.bare = [line.translate(None, _SPACE) for line in lines]
        # 1 + the letters and digits of lines [0, k): a part's score is a difference
        self._alnum = [1]
        for line in lines:
            self._alnum.append(self._alnum[-1] + len(line) - len(line.translate(None, _ALNUM)))

    def line_count(self) -> int:
        return len(self.starts) - 1

    # -- objects --------------------------------------------------------------

    def _read(self, spec: str) -> bytes:
        got = self.read([spec])[0]
        if got is None:
            raise NotHere(f"no blob {spec}")
        return got

    def _parents(self, cid: str) -> tuple[str, ...]:
        c = self.history.commits.get(cid)
        if c is None:
            raise NotHere(f"{cid} not read")
        return c.parents

    def _time(self, cid: str) -> int:
        c = self.history.commits.get(cid)
        if c is None:
            raise NotHere(f"{cid} not read")
        return c.time

    def _against(self, cid: str, i: int) -> Changes:
        c = self.history.commits[cid]
        return c.against[i] if i < len(c.against) else {}

    def _hunks(self, was: Origin, now: Origin, old: bytes, new: bytes) -> list[Hunk]:
        """``blame_hunks(old, new)``, ``old`` and ``new`` being the blobs of ``was`` and
        ``now``: within a question about many files, kept (``_Hunks``): the moves rule's
        ``-C`` walk of a file diffs again the versions its plain blame diffed."""
        memo = shared.kept(self.root, "blame hunks", _Hunks)
        if memo is None:
            return blame_hunks(old, new)
        key = (was, now)
        got = memo.get(key)
        if got is None:
            got = blame_hunks(old, new)
            memo.put(key, got)
        return got

    def _text(self, lno: int, n: int) -> bytes:
        return self.final[self.starts[lno] : self.starts[lno + n]]

    def _score(self, e: Entry) -> int:
        return self._alnum[e[0] + e[2]] - self._alnum[e[0]] + 1

    def _could_pass(self, e: Entry, held: frozenset[bytes], bar: int) -> bool:
        """Whether a diff of ``e`` against a file holding ``held`` could leave a
        stretch scoring more than ``bar`` unchanged: one of lines all in the file (a
        file that cannot is never the best split, nor ties it, past the bar)."""
        alnum = self._alnum
        bare = self.bare
        run = 1
        for k in range(e[0], e[0] + e[2]):
            if bare[k] in held:  # white space aside: more found, never fewer
                run += alnum[k + 1] - alnum[k]
                if run > bar:
                    return True
            else:
                run = 1
        return False

    # -- the walk -------------------------------------------------------------

    def blame(self, ranges: list[tuple[int, int]]) -> list[BlameLine]:
        """``git blame --porcelain -C -L A,B ... REV -- PATH``'s lines (``ranges``:
        1-based, inclusive), in file order."""
        if not aligns_as_git():
            raise NotHere("this libgit2 aligns lines otherwise than git")
        count = self.line_count()
        if any(not 1 <= a <= b <= count for a, b in ranges):
            raise NotHere("a range past the file's lines")  # git's own error, or its reading
        merged: list[list[int]] = []  # git merges overlapping and adjacent ranges
        for a, b in sorted((a - 1, b) for a, b in ranges):
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        start: Origin = (self.head, self.path)
        waiting: dict[Origin, list[Entry]] = {start: [(a, a, b - a) for a, b in merged]}
        texts: dict[Origin, bytes] = {start: self.final}  # each origin's blob, till taken
        queue = [(-self._time(self.head), 0, start)]
        order = 1
        lines: list[BlameLine] = []
        while queue:
            _, _, origin = heapq.heappop(queue)
            entries = waiting.pop(origin, None)
            if not entries:
                continue
            text = texts.pop(origin, None)
            if text is None:  # an origin given entries again after it was taken
                text = self._read(f"{origin[0]}:{origin[1]}")
            if not queue:
                origin = self._same_blob_down(origin)
            found, kept = self._pass(origin, text, entries, texts)
            when = self._time(origin[0])
            for lno, s, n in kept:
                lines.extend(
                    BlameLine(lno + k + 1, origin[0], when, origin[1], s + k + 1) for k in range(n)
                )
            for parent, got in found.entries.items():
                if parent not in waiting:
                    waiting[parent] = []
                    heapq.heappush(queue, (-self._time(parent[0]), order, parent))
                    order += 1
                waiting[parent].extend(got)
        lines.sort(key=lambda b: b.line)
        return lines

    def _same_blob_down(self, origin: Origin) -> Origin:
        """The origin a lone origin's entries reach through first parents with the same
        blob: each would pass them whole (``pass_whole_blame``) to the next, the only
        one in the queue (most of a walk: entireio's 263 files, 44,000 of 46,500
        passes), so the queue is skipped, not the order."""
        commits = self.history.commits
        cid, path = origin
        while True:
            c = commits.get(cid)
            if c is None or not c.parents or c.parents[0] not in commits:
                break  # (the pass says what git does there)
            if (c.against[0] if c.against else {}).get(path) is not None:
                break  # changed against the first parent
            cid = c.parents[0]
        return (cid, path)

    def _pass(
        self, origin: Origin, text: bytes, entries: list[Entry], texts: dict[Origin, bytes]
    ) -> tuple[_Found, list[Entry]]:
        """``pass_blame``: the entries given to parents' files, and those kept."""
        cid, path = origin
        parents = self._parents(cid)
        found = _Found()
        if not parents:
            return found, entries
        scapegoats: list[tuple[Origin, bytes] | None] = []
        lacking: list[int] = []
        for i, p in enumerate(parents):
            change = self._against(cid, i).get(path)
            if change is None:  # the same blob: the first such parent takes all
                texts.setdefault((p, path), text)
                found.add((p, path), entries)
                return found, []
            if change[0] == "T":
                raise NotHere("a type change: git looks for a rename")
            if change[0] == "A":
                scapegoats.append(None)
                lacking.append(i)
                continue
            got = self._read(f"{p}:{path}")
            if got == text:  # a mode changed alone
                texts.setdefault((p, path), got)
                found.add((p, path), entries)
                return found, []
            same = any(s is not None and s[1] == got for s in scapegoats)
            scapegoats.append(None if same else ((p, path), got))
        for i in lacking:  # git's second pass: the file under another name
            if not any(status == "D" for status, _ in self._against(cid, i).values()):
                continue  # nothing deleted, nothing renamed (git's answer with no process)
            source = self._renamed_from(parents[i], cid, path)
            if source is None:
                continue
            got = self._read(f"{parents[i]}:{source}")
            if got == text:
                texts.setdefault((parents[i], source), got)
                found.add((parents[i], source), entries)
                return found, []
            same = any(s is not None and s[1] == got for s in scapegoats[:i])
            scapegoats[i] = None if same else ((parents[i], source), got)
        left = entries
        for sg in scapegoats:
            if sg is not None:
                passed, left = _pass_to_parent(left, self._hunks(sg[0], origin, sg[1], text))
                found.add(sg[0], passed)
                if not self.copies and passed:  # the parent's version, for the walk on
                    texts.setdefault(sg[0], sg[1])
        if not self.copies:
            return found, left
        small = [e for e in left if self._score(e) <= MOVE_SCORE]
        left = [e for e in left if self._score(e) > MOVE_SCORE]
        for sg in scapegoats:
            if not left:
                break
            if sg is not None:
                left = self._find_copies(left, [sg[0]], {sg[0]: sg[1]}, MOVE_SCORE, found, small)
        small += [e for e in left if self._score(e) <= COPY_SCORE]
        left = [e for e in left if self._score(e) > COPY_SCORE]
        for i, p in enumerate(parents):
            if not left:
                break
            sg = scapegoats[i]
            files = self._changed(cid, i, p, None if sg is None else sg[0][1])
            left = self._find_copies(left, files, {}, COPY_SCORE, found, small)
        for sg in scapegoats:  # the parents' versions, for the walk on
            if sg is not None and sg[0] in found.entries:
                texts.setdefault(sg[0], sg[1])
        return found, small + left

    def _renamed_from(self, parent: str, cid: str, path: str) -> str | None:
        """``find_rename``: the file of ``parent`` that ``cid`` renamed to ``path``
        (git's rename detection for that one path), None: none. Blame's detection
        has ``path`` as its only destination (``single_follow``); git's full
        detection (``diff-tree -M``) answers the same where the commit deleted at
        most one file and that file went to ``path`` or to no file at all. Where it
        went to another new file (an exact copy added beside ``path`` takes it
        first), blame may still pair it with ``path``: NotHere, as for several."""
        # -l1000: git's default rename limit, which blame keeps whatever the user's
        # diff.renameLimit says (diff-tree would honour it)
        proc = git(
            self.root, ["diff-tree", "-r", "-M", "-l1000", "-z", "--no-commit-id", parent, cid]
        )
        if proc is None or proc.returncode != 0:
            raise NotHere("git diff-tree failed")
        fields = proc.stdout.split(b"\0")
        sources: list[str] = []
        renamed: str | None = None
        elsewhere = False  # a deleted file full detection gave another new file
        added = 0
        at = 0
        while at + 1 < len(fields):
            status = fields[at].rsplit(b" ", 1)[-1][:1]
            if status in (b"R", b"C"):
                old, new = fields[at + 1], fields[at + 2]
                at += 3
                if status == b"R":
                    sources.append(old.decode("utf-8", "surrogateescape"))
                if new.decode("utf-8", "surrogateescape") == path:
                    renamed = old.decode("utf-8", "surrogateescape")
                elif status == b"R":
                    elsewhere = True
                added += 1
                continue
            if status == b"D":
                sources.append(fields[at + 1].decode("utf-8", "surrogateescape"))
            elif status == b"A":
                added += 1
            at += 2
        if not sources:
            return None
        if len(sources) > 1 or added > 100:
            raise NotHere("several files the commit deleted: rename detection could differ")
        if renamed is None and elsewhere:
            raise NotHere("the deleted file went to another new file: blame may follow it")
        return renamed

    def _changed(self, cid: str, i: int, parent: str, skip: str | None) -> list[Origin]:
        """The files the ``i``th parent had that ``cid`` changed, but ``skip``
        (``-M``'s), in git's path order (a path's bytes): where ``-C`` looks."""
        got = [
            (path.encode("utf-8", "surrogateescape"), path)
            for path, (status, _) in self._against(cid, i).items()
            if status != "A" and path != skip
        ]
        got.sort()
        return [(parent, path) for _, path in got]

    def _find_copies(
        self,
        entries: list[Entry],
        files: list[Origin],
        texts: dict[Origin, bytes],
        bar: int,
        found: _Found,
        small: list[Entry],
    ) -> list[Entry]:
        """``find_move_in_parent`` (one file, ``bar`` 20) and ``find_copy_in_parent``
        (``bar`` 40): each entry's best stretch over the files moves if it scores
        more than ``bar``, the parts around it are looked at again (those scoring
        ``bar`` or less go to ``small``). Returns the entries nothing moved from.
        A file is diffed only where its lines could give a stretch past the bar
        (``texts``: the files read; others are read when one could)."""
        specs = [f"{c}:{p}" for c, p in files]
        held = dict(zip(files, self.held(specs), strict=True))
        for origin, lines in held.items():
            if lines <= _NO_LINES and origin not in texts:
                # an empty file, or none: git fails where no blob can be read
                texts[origin] = self._read(f"{origin[0]}:{origin[1]}")
        leftover: list[Entry] = []
        while entries:
            again: list[Entry] = []
            for e in entries:
                best: tuple[Origin, Split] | None = None
                for origin in files:
                    if not self._could_pass(e, held[origin], bar):
                        continue
                    data = texts.get(origin)
                    if data is None:
                        data = texts[origin] = self._read(f"{origin[0]}:{origin[1]}")
                    split = self._copy_in_blob(e, data)
                    if split is not None and (
                        best is None or self._score(split[1]) >= self._score(best[1][1])
                    ):
                        best = (origin, split)
                if best is not None and self._score(best[1][1]) > bar:
                    before, moved, after = best[1]
                    found.add(best[0], [moved])
                    again += [p for p in (before, after) if p is not None]
                else:
                    leftover.append(e)
            entries = []
            for e in again:
                (entries if self._score(e) > bar else small).append(e)
        return leftover

    def _copy_in_blob(self, e: Entry, data: bytes) -> Split | None:
        """``find_copy_in_blob``: the best split of ``e`` by a stretch its diff
        against ``data`` leaves unchanged (a tie: the later stretch)."""
        best: Split | None = None
        tlno = plno = 0
        for a, ca, b, cb in blame_hunks(data, self._text(e[0], e[2])):
            best = self._better(e, tlno, plno, b, best)
            plno, tlno = a + ca, b + cb
        return self._better(e, tlno, plno, e[2], best)

    def _better(
        self, e: Entry, tlno: int, plno: int, same: int, best: Split | None
    ) -> Split | None:
        """``handle_split`` + ``split_overlap`` + ``copy_split_if_better``."""
        lno, s, n = e
        if n <= tlno or tlno >= same:
            return best
        tlno += s
        same += s
        before = after = None
        if s < tlno:
            before = (lno, s, tlno - s)
            l1, s1 = lno + tlno - s, plno
        else:
            l1, s1 = lno, plno + (s - tlno)
        if same < s + n:
            end = lno + (same - s)
            after = (end, same, s + n - same)
        else:
            end = lno + n
        if end - l1 < 1:
            return best
        moved = (l1, s1, end - l1)
        if best is not None and self._score(moved) < self._score(best[1]):
            return best
        return (before, moved, after)


_NO_LINES = frozenset([b""])  # an empty file's lines (or no file's)


def _pass_to_parent(
    entries: list[Entry], hunks: list[tuple[int, int, int, int]]
) -> tuple[list[Entry], list[Entry]]:
    """``pass_blame_to_parent``: each entry cut where the diff changed lines (a
    stretch the parent lacks stays; the lines around it pass, each side with its
    own offset, so a stretch the parent had and the file lost cuts an entry too)."""
    passed: list[Entry] = []
    kept: list[Entry] = []
    for lno, s, n in entries:
        end = s + n
        prev = offset = 0
        for a, ca, b, cb in hunks:
            if prev >= end:
                break
            lo, hi = max(s, prev), min(end, b)
            if lo < hi:
                passed.append((lno + lo - s, lo + a - b, hi - lo))
            lo, hi = max(s, b), min(end, b + cb)
            if lo < hi:
                kept.append((lno + lo - s, lo, hi - lo))
            prev, offset = b + cb, a + ca - (b + cb)
        else:
            lo = max(s, prev)
            if lo < end:
                passed.append((lno + lo - s, lo + offset, end - lo))
    return passed, kept
