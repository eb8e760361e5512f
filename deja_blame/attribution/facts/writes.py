"""The writes of a file's texts, read from the index: the matcher's main input.

One B-tree range of the lines table per (path, fingerprint): the cost follows the
file and the writes of its own lines, not everything ever written to the path.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

from deja_blame.index import queries as Q
from deja_blame.index.fingerprint import fingerprint

BLANK_FP = fingerprint("")

# (session row id, edit ordinal, index of the line among the edit's added lines)
Key = tuple[int, int, int]


@dataclass
class Twins:
    """Identical edits, latest first, and their times negated (ascending, for bisect)."""

    members: list[tuple[int, int]]
    neg_at: list[float]


@dataclass
class WriteSet:
    """The writes that can matter for one file: those of the fingerprints it holds.

    ``info[key]`` is (fingerprint, time, by the person, exact path, seq) for each
    write; ``seq`` numbers the writes in the lines table's order (path rank, path,
    fingerprint, session, edit, index), which breaks ties the same way every time.
    ``by_fp[fp]`` lists the writes of one fingerprint in that order,
    ``by_edit[(sid, edit)]`` the (index, fingerprint) pairs of each edit, and
    ``blank_by_edit[(sid, edit)]`` the blank lines each edit wrote.
    """

    info: dict[Key, tuple[int, float, bool, bool, int]] = field(default_factory=dict)
    by_fp: dict[int, list[Key]] = field(default_factory=dict)
    by_edit: dict[tuple[int, int], list[tuple[int, int]]] = field(default_factory=dict)
    blank_by_edit: dict[tuple[int, int], list[Key]] = field(default_factory=dict)
    any_suffix: bool = False  # some write was matched by path suffix only
    # Writes ``load_writes`` left in the index (``solid``): where to read a session's
    # (its path ids and exactness, the trivial fingerprints), and whether any exist.
    left_out: list[tuple[dict[int, bool], list[int]]] = field(default_factory=list)
    any_left_out: bool = False
    _conn: sqlite3.Connection | None = None
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
            if self._conn is not None:
                for paths, trivial in self.left_out:
                    for pid in sorted(paths):
                        rows = Q.line_writes_of_sessions(self._conn, pid, trivial, todo)
                        for _, fp, sid, edit_ord, idx, at, _ in rows:
                            key = (sid, edit_ord, idx)
                            if at is not None and key not in self.info:
                                self._of_sessions[sid].append((key, fp, paths[pid]))
        return {sid: self._of_sessions[sid] for sid in sids}

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
            else:
                pairs.append((idx, fp))
            if fp == BLANK_FP:
                blank_by_edit.setdefault(edit, []).append(key)

    def twins(self) -> dict[tuple[int, int], Twins]:
        """Each edit -> the edits identical to it here (itself included), latest first.

        Edits that wrote the same lines of the file at the same places (a retried
        edit, a replayed hunk) have the same runs at every line: the matcher walks
        the runs of the first of them only and offers the others in its place.
        """
        groups: dict[tuple[object, ...], list[tuple[int, int]]] = {}
        info = self.info
        for edit, pairs in self.by_edit.items():
            first = info[(edit[0], edit[1], pairs[0][0])]
            groups.setdefault((first[2], first[3], tuple(pairs)), []).append(edit)
        out: dict[tuple[int, int], Twins] = {}
        for members in groups.values():
            idx0 = self.by_edit[members[0]][0][0]
            if len(members) > 1:
                members.sort(
                    key=lambda e: (-info[(e[0], e[1], idx0)][1], info[(e[0], e[1], idx0)][4])
                )
            twins = Twins(members, [-info[(e[0], e[1], idx0)][1] for e in members])
            for e in members:
                out[e] = twins
        return out


def load_writes(
    conn: sqlite3.Connection,
    paths: dict[int, bool],
    fps: Iterable[int],
    into: WriteSet | None = None,
    solid: Iterable[int] | None = None,
) -> WriteSet:
    """The writes of these fingerprints to these paths: one B-tree range per (path, fp).

    Only fingerprints the file holds are read, so the cost follows the file and
    the writes of its own lines, not everything ever written to the path.

    ``solid``: the fingerprints of the lines ``match_lines`` will be given that are
    not trivial. Then a write of a trivial line (blank, ``)``, ``return``: written by
    thousands of sessions) is read only where its edit also wrote one of them:
    ``match_lines`` gives a trivial line only a write of an edit that matched a
    non-trivial line (a run through one, or ``_fill_gaps`` beside one), and edits
    identical to such an edit wrote that line too. The writes left in the index
    count only for sessions a line goes to (``WriteSet.left_out_of``). Lines all
    trivial (``_whole_file``): every write is read.
    """
    out = into if into is not None else WriteSet()
    out._of_sessions.clear()
    wanted = sorted(set(fps))
    if not paths or not wanted:
        return out
    rows: list[tuple[int, int, int, int, int, float | None, int]] = []
    solid_fps = sorted(set(solid).intersection(wanted)) if solid is not None else []
    if not solid_fps:
        for pid in sorted(paths):
            rows += Q.line_writes(conn, pid, wanted)
        out.add_rows(rows, paths)
        return out
    trivial = sorted(set(wanted).difference(solid_fps))
    narrowed: dict[int, bool] = {}
    for pid in sorted(paths):
        if trivial and Q.count_line_writes(conn, pid, trivial) > NARROW_FROM:
            rows += Q.line_writes_narrowed(conn, pid, solid_fps, trivial)
            narrowed[pid] = paths[pid]
        else:  # few: reading them all costs less than leaving them out
            rows += Q.line_writes(conn, pid, wanted)
    out.add_rows(rows, paths)
    if narrowed:
        out._conn = conn
        out.left_out.append((narrowed, trivial))
        if not out.any_left_out and not out.info:
            # nothing read: whether anything was left (callers stop on an empty set)
            out.any_left_out = any(Q.has_timed_write(conn, pid, trivial) for pid in narrowed)
    return out


# Writes of a path's trivial lines from which load_writes narrows them in SQLite:
# below, reading them all costs less than the query that leaves some out.
NARROW_FROM = 10_000
