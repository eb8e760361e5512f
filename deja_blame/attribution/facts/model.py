"""The plain data the two stages pass: git's blame of a line, the index's writes of
a file's texts, one file's facts. No module here runs git or reads the index."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from deja_blame.attribution.model import LineAttribution
from deja_blame.index.fingerprint import fingerprint, fingerprints, is_trivial, normalise_line

CLOCK_SKEW = 120.0  # seconds a transcript clock may run ahead of git's

# (session row id, edit ordinal, index of the line among the edit's added lines)
Key = tuple[int, int, int]
# a row of the lines table: (path_id, fp, sid, edit_ord, idx, at_epoch, by_user)
WriteRow = tuple[int, int, int, int, int, "float | None", int]
# (old_start, new_start, removed, added) of each run of one edit, 1-based; None where
# the edit said no place (a whole-file write, a block without ``@@`` headers)
Hunks = list[tuple[int, int, int, int]] | None


@dataclass
class BlameLine:
    line: int  # 1-based, in the blamed version
    commit: str | None  # None: not committed yet
    commit_time: int | None  # committer time (epoch seconds)
    orig_path: str
    orig_line: int


BLANK_FP = fingerprint("")


@dataclass(frozen=True)
class LineTexts:
    """The lines' texts and what the rules compare of them, made once by the facts
    stage (``of``) and read as data by every rule: each line's fingerprint (white
    space removed, hashed: how writes are found), whether it is trivial (blank, a
    lone bracket: no evidence alone) and its text without white space (``bare``;
    empty: a blank line). The matcher asked the fingerprint module for these line
    by line, rule after rule, a few times each."""

    texts: list[str]
    fps: list[int]
    trivial: list[bool]
    bare: list[str]
    # Where these lines are a window of a longer file (``deja why``, ``blame -L``, the
    # working tree's uncommitted blocks): how often the whole file holds each
    # fingerprint, and the file's line (0-based) the window starts at. A rule that
    # asks how often the file holds a text (a text held once places its edit; of
    # several copies a write goes to the one nearest where it landed, and none far
    # from it) must see the file's count, not the window's: the window held one copy
    # of test scaffolding the file holds 27 times, and gave it a session's far write.
    file_counts: Counter[int] | None = None
    start: int = 0
    # and the texts outside the window the file holds once (not trivial): fingerprint
    # -> the file's line (0-based). A run through such a line places its edit, and
    # a window's rules must see where its edit landed outside it too.
    beyond: dict[int, int] | None = None
    file_fps: list[int] | None = None  # the whole file's fingerprints (a window)

    @classmethod
    def of(cls, texts: list[str], whole: list[str] | None = None, start: int = 0) -> LineTexts:
        """``texts``; where they are lines ``start`` on (0-based) of a longer file,
        ``whole`` is that file's text."""
        fps = fingerprints(texts)
        if whole is None or len(whole) == len(texts):
            return cls(
                texts, fps, [is_trivial(t) for t in texts], [normalise_line(t) for t in texts]
            )
        every = fingerprints(whole)
        counts = Counter(every)
        inside = range(start, start + len(texts))
        beyond = {
            fp: k
            for k, fp in enumerate(every)
            if counts[fp] == 1 and k not in inside and not is_trivial(whole[k])
        }
        return cls(
            texts,
            fps,
            [is_trivial(t) for t in texts],
            [normalise_line(t) for t in texts],
            counts,
            start,
            beyond,
            every,
        )

    def __len__(self) -> int:
        return len(self.texts)

    def text_beyond(self, line: int) -> int | None:
        """The fingerprint of the file's line ``line`` counted from the window's first
        (0-based), where that line is outside the window; else None."""
        if self.file_fps is None or 0 <= line < len(self.fps):
            return None
        at = self.start + line
        return self.file_fps[at] if 0 <= at < len(self.file_fps) else None

    def counts(self) -> Counter[int]:
        """How often the file (the whole file, for a window) holds each fingerprint."""
        return self.file_counts if self.file_counts is not None else Counter(self.fps)


@dataclass
class Twins:
    """Identical edits, latest first, and their times negated (ascending, for bisect)."""

    members: list[tuple[int, int]]
    neg_at: list[float]


def _timed(
    timed: dict[int, list[tuple[int, int, tuple[int, int], float, bool]]],
    edits: dict[int, list[tuple[int, int, float | None, int]]],
    shape: int,
) -> list[tuple[int, int, tuple[int, int], float, bool]]:
    """The shape's edits with a time, (sid, edit_ord, (sid, edit_ord), at, by the
    person), made once a shape (``timed``)."""
    got = timed.get(shape)
    if got is None:
        got = timed[shape] = [
            (sid, edit_ord, (sid, edit_ord), at, by_user != 0)
            for sid, edit_ord, at, by_user in edits.get(shape, ())
            if at is not None
        ]
    return got


def _copy_order(
    copy: tuple[int, int, tuple[int, int], object, object, object],
) -> tuple[int, int, int]:
    return copy[0], copy[1], copy[2][0]


@dataclass
class WriteSet:
    """The writes that can matter for one file: those of the fingerprints it holds.

    ``info[key]`` is (fingerprint, time, by the person, exact path, seq) for each
    write; ``seq`` numbers the writes in the lines table's order (path rank, path,
    fingerprint, session, edit, index), which breaks ties the same way every time.
    ``by_fp[fp]`` lists the writes of one fingerprint in that order,
    ``by_edit[(sid, edit)]`` the (index, fingerprint) pairs of each edit, and
    ``blank_by_edit[(sid, edit)]`` the blank lines each edit wrote.
    ``edit_info[(sid, edit)]`` is (time, by the person, exact path) of each edit here:
    every write of one edit has the same (an edit has one time and one path), so a
    rule that weighs edits or sessions reads an entry an edit, not one a write.
    """

    info: dict[Key, tuple[int, float, bool, bool, int]] = field(default_factory=dict)
    by_fp: dict[int, list[Key]] = field(default_factory=dict)
    by_edit: dict[tuple[int, int], list[tuple[int, int]]] = field(default_factory=dict)
    blank_by_edit: dict[tuple[int, int], list[Key]] = field(default_factory=dict)
    edit_info: dict[tuple[int, int], tuple[float, bool, bool]] = field(default_factory=dict)
    any_suffix: bool = False  # some write was matched by path suffix only
    # Writes ``load_writes`` left in the index (``solid``): where to read a session's
    # (its path ids and exactness, the trivial fingerprints), and whether any exist.
    left_out: list[tuple[dict[int, bool], list[int]]] = field(default_factory=list)
    any_left_out: bool = False
    # reads a session's left-out writes: (path id, trivial fingerprints, sids) -> rows
    # of the lines table (set by ``load_writes``: the facts stage)
    fetch_left_out: Callable[[int, list[int], list[int]], Iterable[WriteRow]] | None = None
    # reads the left-out writes made in time windows: (path id, trivial fingerprints,
    # [(from, to)]) -> rows of the lines table (``read_window_writes``)
    fetch_between: (
        Callable[[int, list[int], list[tuple[float, float]]], Iterable[WriteRow]] | None
    ) = None
    _windows_read: set[tuple[float, float]] = field(default_factory=set)
    _of_sessions: dict[int, list[tuple[Key, int, bool]]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.info)

    def __bool__(self) -> bool:
        return bool(self.info) or self.any_left_out

    def left_out_of(self, sids: Iterable[int]) -> dict[int, list[tuple[Key, int, bool]]]:
        """sid -> (key, fingerprint, exact path) of each timed write of the session that
        ``load_writes`` left in the index: with ``info``, every write of the session here."""
        todo = sorted({sid for sid in sids if sid not in self._of_sessions})
        if todo:
            for sid in todo:
                self._of_sessions[sid] = []
            if self.fetch_left_out is not None:
                for paths, trivial in self.left_out:
                    for pid in sorted(paths):
                        rows = self.fetch_left_out(pid, trivial, todo)
                        for _, fp, sid, edit_ord, idx, at, _ in rows:
                            key = (sid, edit_ord, idx)
                            if at is not None and key not in self.info:
                                self._of_sessions[sid].append((key, fp, paths[pid]))
        return {sid: self._of_sessions[sid] for sid in sids}

    def read_window_writes(self, fps: set[int], windows: set[tuple[float, float]]) -> None:
        """Add the writes of these (trivial) fingerprints that ``load_writes`` left in
        the index and that were made in one of these (from, to) time windows: a lone
        bracket edit is evidence only inside its line's commit window
        (``match/lone.py``), so only those are read."""
        todo = sorted(windows - self._windows_read)
        if not todo or self.fetch_between is None:
            return
        self._windows_read.update(todo)
        for paths, trivial in self.left_out:
            wanted = sorted(fps.intersection(trivial))
            if not wanted:
                continue
            rows: list[WriteRow] = []
            for pid in sorted(paths):
                rows += self.fetch_between(pid, wanted, todo)
            self.add_rows(rows, paths)

    def add_rows(
        self,
        rows: Iterable[tuple[int, int, int, int, int, float | None, int]],
        exact: dict[int, bool],
    ) -> None:
        """Rows of the lines table, (path_id, fp, sid, edit_ord, idx, at_epoch, by_user),
        in its order (path, fp, sid, edit_ord, idx); a later call's rows come after."""
        info, by_fp, by_edit = self.info, self.by_fp, self.by_edit
        blank_by_edit = self.blank_by_edit
        seq = len(info)
        if not all(exact.values()):
            self.any_suffix = True
        for pid, fp, sid, edit_ord, idx, at, by_user in rows:
            if at is None:
                continue  # a write with no time cannot be placed before a commit
            key = (sid, edit_ord, idx)
            if key in info:
                continue  # one edit has one path: only a path listed twice repeats a key
            info[key] = (fp, at, by_user != 0, exact[pid], seq)
            seq += 1
            keys = by_fp.get(fp)
            if keys is None:
                by_fp[fp] = [key]
            else:
                keys.append(key)
            edit = (sid, edit_ord)
            pairs = by_edit.get(edit)
            if pairs is None:
                by_edit[edit] = [(idx, fp)]
                self.edit_info[edit] = (at, by_user != 0, exact[pid])
            else:
                pairs.append((idx, fp))
            if fp == BLANK_FP:
                blank_by_edit.setdefault(edit, []).append(key)

    def add_shapes(
        self,
        read: list[tuple[int, list[tuple[int, int, int]]]],
        edits: dict[int, list[tuple[int, int, float | None, int]]],
        exact: dict[int, bool],
    ) -> None:
        """The writes read as edit shapes (``index/shapes.py``): for each path id, its
        shapes' lines (fp, shape, idx) in that order, and ``edits[shape]``, the
        (sid, edit_ord, at_epoch, by_user) of the shape's edits by (sid, edit_ord).
        Each edit of a shape wrote each of its lines: the same writes, in the same
        order, as ``add_rows`` of the lines table's rows (a row per edit and line)."""
        info, by_fp, by_edit = self.info, self.by_fp, self.by_edit
        blank_by_edit, edit_info = self.blank_by_edit, self.edit_info
        seq = len(info)
        if not all(exact.values()):
            self.any_suffix = True
        # each shape's edits with a time (one without cannot be placed before a commit)
        timed: dict[int, list[tuple[int, int, tuple[int, int], float, bool]]] = {}
        # A shape is one path's (``index/shapes.py``) and an edit has one shape: the
        # writes of one call repeat no key. Only a call after another (a path read
        # again) can meet one already here.
        again = bool(info)
        for pid, lines in read:
            is_exact = exact[pid]
            n, i = len(lines), 0
            while i < n:
                fp, shape = lines[i][0], lines[i][1]
                j, one_shape = i + 1, True
                while j < n and lines[j][0] == fp:
                    one_shape = one_shape and lines[j][1] == shape
                    j += 1
                # the copies of this text's lines (an edit and a line each), in the
                # lines table's order: (sid, edit_ord, idx)
                if one_shape:  # by edit, then index: in order as they come
                    pairs = [(row[2], fp) for row in lines[i:j]]
                    copies = [
                        (sid, edit_ord, pair, edit, at, user)
                        for sid, edit_ord, edit, at, user in _timed(timed, edits, shape)
                        for pair in pairs
                    ]
                else:  # (sid, edit_ord, idx) is unique: the sort compares no more
                    shaped = [((row[2], fp), row[1]) for row in lines[i:j]]
                    copies = [
                        (sid, edit_ord, pair, edit, at, user)
                        for pair, of in shaped
                        for sid, edit_ord, edit, at, user in _timed(timed, edits, of)
                    ]
                    copies.sort(key=_copy_order)
                i = j
                keys = by_fp.get(fp)
                if keys is None:
                    keys = by_fp[fp] = []
                blank = fp == BLANK_FP
                for sid, edit_ord, pair, edit, at, user in copies:
                    key = (sid, edit_ord, pair[0])
                    if again and key in info:
                        continue  # one edit has one path: only a path read twice repeats a key
                    info[key] = (fp, at, user, is_exact, seq)
                    seq += 1
                    keys.append(key)
                    written = by_edit.get(edit)
                    if written is None:
                        by_edit[edit] = [pair]
                        edit_info[edit] = (at, user, is_exact)
                    else:
                        written.append(pair)
                    if blank:
                        blank_by_edit.setdefault(edit, []).append(key)
                if not keys:
                    del by_fp[fp]

    def twins(self) -> dict[tuple[int, int], Twins]:
        """Each edit -> the edits identical to it here (itself included), latest first.

        Edits that wrote the same lines of the file at the same places (a retried
        edit, a replayed hunk) have the same runs at every line: the matcher walks
        the runs of the first of them only and offers the others in its place.
        """
        groups: dict[tuple[bool, bool, int], list[tuple[int, int]]] = {}
        info = self.info
        # what each edit wrote here, as a number (equal lines, equal numbers): edits of
        # one shape share their (idx, fp) pairs' objects (``add_shapes``), so an edit
        # is compared with the last one whose first pair was the same object, and only
        # the lines of a shape's first edit are hashed, not each copy's
        bodies: dict[tuple[tuple[int, int], ...], int] = {}
        last: dict[int, tuple[list[tuple[int, int]], int]] = {}
        edit_info = self.edit_info
        for edit, pairs in self.by_edit.items():
            _, user, exact = edit_info[edit]
            like = last.get(id(pairs[0]))
            if like is not None and like[0] == pairs:
                body = like[1]
            else:
                body = bodies.setdefault(tuple(pairs), len(bodies))
                last[id(pairs[0])] = (pairs, body)
            groups.setdefault((user, exact, body), []).append(edit)
        out: dict[tuple[int, int], Twins] = {}
        for members in groups.values():
            idx0 = self.by_edit[members[0]][0][0]
            if len(members) > 1:
                members.sort(key=lambda e: (-edit_info[e][0], info[(e[0], e[1], idx0)][4]))
            twins = Twins(members, [-edit_info[e][0] for e in members])
            for e in members:
                out[e] = twins
        return out


@dataclass(frozen=True)
class WrittenTexts:
    """Every text sessions (and people, in transcripts) wrote as a line to some paths,
    white space removed (``normalise_line``): a line's write has one of these texts,
    or it has no write. ``starts`` asks whether one begins with a given text: from
    ``heads``, their first ``HEAD`` characters (most texts asked about begin with none
    of them), then ``ordered``, the same texts sorted."""

    texts: frozenset[str]
    ordered: tuple[str, ...]
    heads: frozenset[str]
    # what a rule found of a text asked about (``reflow._may_begin``): a report asks of
    # the same lines at every commit, and a dict costs a tenth of asking again
    seen: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    HEAD = 8

    @classmethod
    def of(cls, texts: Iterable[str]) -> WrittenTexts:
        every = frozenset(texts)
        return cls(every, tuple(sorted(every)), frozenset(t[: cls.HEAD] for t in every))

    def starts(self, head: str) -> bool:
        """Whether some written text begins with ``head``."""
        if len(head) >= self.HEAD and head[: self.HEAD] not in self.heads:
            return False
        at = bisect_left(self.ordered, head)  # the texts that begin so sort from here
        return at < len(self.ordered) and self.ordered[at].startswith(head)


@dataclass
class FileFacts:
    """What the matcher is given about one file (or a window of it).

    ``lines`` carry git's blame (commit, time, where each line was then) and the
    commits' notes (``via: "note"``); ``blamed[i]`` is line i's blame as git gave
    it; ``texts`` their texts' fingerprints and triviality; ``writes`` are the index's writes of the lines' texts to ``paths`` (index
    path ids -> matched exactly, not by suffix); ``rev_time`` is the blamed
    commit's time (None: the working tree). ``gitai`` answers for git-ai's notes,
    its lines given ``gitai_confidence``. ``settled[i]``: line i's commit has a
    current note, which answers for it.
    """

    path: str
    root: str
    commit: str | None
    total_lines: int
    lines: list[LineAttribution]
    blamed: list[BlameLine | None]
    texts: LineTexts
    writes: WriteSet = field(default_factory=lambda: WriteSet())
    paths: dict[int, bool] = field(default_factory=dict)
    rev_time: float | None = None
    note_sessions: dict[str, Any] = field(default_factory=dict)
    gitai: Callable[[str, str, int], Any] | None = None
    gitai_confidence: float = 0.0
    # lines a current note of their commit answers for (``settled.py``): the
    # rules leave them as the note says (its session, or the person's)
    settled: list[bool] = field(default_factory=list)
    # each commit's author as git blame showed it (name, mail, epoch: mailmap
    # applied); None where the blame did not say (``PendingBlame.authors``)
    blame_authors: dict[str, tuple[str, str, int]] | None = None

    def rules_run(self) -> bool:
        """Whether the rules have a line to match: one no current note settled."""
        return not (any(self.settled) and all(self.settled))


MOVED_BLOCK = 2  # lines: a block moved between files, not a line that happens to recur


@dataclass
class MovedLines:
    """The lines of a file that moved here from another file (``moved[i]``), each
    one's blame where it came from (``evidence[i]``: git blame -C's, else git's),
    whether its text left that file (``left_file[i]``: a move, not a copy), and the
    index's paths whose writes stand for the file now, the old files' added."""

    evidence: list[BlameLine | None]
    moved: list[bool]
    left_file: list[bool]
    paths: dict[int, bool]


def has_line(content: str, text: str, exact: bool) -> bool:
    """Whether ``content`` (a file's text) has a line of ``text``: exactly, or at
    any indent (``exact=False``: ``text`` stripped). A search of the text, not a
    set of its lines: most versions of a file are asked about a few lines, and
    building sets of every line of hundreds of versions cost more than the rest
    of a blame."""
    if not text.strip():
        return any((t if exact else t.strip()) == text for t in content.split("\n"))
    size = len(text)
    at = content.find(text)
    while at >= 0:
        start = content.rfind("\n", 0, at) + 1
        end = content.find("\n", at + size)
        end = len(content) if end < 0 else end
        before, after = content[start:at], content[at + size : end]
        if exact:
            if not before and after in ("", "\r"):
                return True
        elif not before.strip() and not after.strip():
            return True
        at = content.find(text, at + 1)
    return False


# (commit, time, status of the path) for each commit that touched a path
PathLog = list[tuple[str, int, str]]


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
