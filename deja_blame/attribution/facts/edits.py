"""The edits behind a file's writes, as plain data the matcher reads.

The rules ask, of the sessions whose writes they weigh: where a write landed and
its exact text (``position``, ``written_text``), what one edit added, how the
session's later edits of the file shifted a line (``file_edits``), what it left
in the file (``final_fingerprints``, ``left_in_file``) and whether it made a timed
edit of the file's own path (``edited_any``). They used to ask the index each
time, thousands of one-row queries for one file. Here a session's edits of the
file's paths are read in one query when a rule first asks about the session, and
a body is decoded only when a rule reads it.

A rule asks about few of the sessions whose writes it is given: on click's
``core.py`` with 10,000 replayed sessions, 1,712 of the 7,794 sessions of the
writes, 13,765 of their 35,631 edits of the file's paths, 6,556 bodies decoded.
Reading every session's edits with their bodies at the first ask (sessions 6 to
11) held all 35,631, one query where there are now 1,712 (each one range of the
edits' key): the answer's peak went from 178 to 156 MB. A body is let go once
decoded, and a decoded edit keeps no witness (no rule reads it).

No SQL here: the facts stage passes ``fetch`` (the rows of some sessions' edits
of some paths), ``fetch_edit`` (one edit, wherever it was) and ``decode`` (a
stored body -> [removed, added, witness, hunks]; None where it is damaged).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from deja_blame.attribution.facts.model import Hunks, Key
from deja_blame.index.fingerprint import fingerprint, fingerprints, is_trivial, normalise_line

# (sid, ord, step, whole_file, by_agent, at_epoch, path_id) of one stored edit:
# whole_file 1 for a write_to_file (its lines start the file afresh), by_agent 1 for
# the agent's edit (0: the person's); path_id None: the edit's path is in no path row
EditRow = tuple[int, int, int, int, int, "float | None", "int | None"]
# an EditRow as read, with its stored body after it
StoredEdit = tuple[int, int, int, int, int, "float | None", "int | None", "bytes | str"]


@dataclass
class SessionEdits:
    """Every edit some sessions made of some paths, read once and decoded on need."""

    path_ids: list[int]
    fetch: Callable[[list[int], list[int]], Iterable[StoredEdit]]
    fetch_edit: Callable[[int, int], StoredEdit | None]
    decode: Callable[[bytes | str], Any]
    # each edit's row, its body until decoded (most never are), its decoded body and
    # where its lines landed, as the rules ask
    _rows: dict[tuple[int, int], EditRow] = field(default_factory=dict)
    _of_path: dict[tuple[int, int | None], list[EditRow]] = field(default_factory=dict)
    _bodies: dict[tuple[int, int], bytes | str] = field(default_factory=dict)
    _docs: dict[tuple[int, int], list[Any]] = field(default_factory=dict)
    _positions: dict[tuple[int, int], list[int | None]] = field(default_factory=dict)
    _added_fps: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    _added_bare: dict[tuple[int, int], list[str]] = field(default_factory=dict)
    _file_edits: dict[tuple[int, int | None], list[tuple[int, float | None, Hunks]]] = field(
        default_factory=dict
    )
    _read: dict[int, frozenset[int]] = field(default_factory=dict)  # sid -> path ids read
    _missing: set[tuple[int, int]] = field(default_factory=set)  # edits no row has

    # -- what the rules ask ---------------------------------------------------------

    def added_lines(self, sid: int, edit_ord: int) -> list[str]:
        """Every line one edit added (to whichever file), in order."""
        edit = self._edit(sid, edit_ord)
        added = None if edit is None else self._doc(edit)[1]
        return added if isinstance(added, list) else []

    def glance_added(self, sid: int, edit_ord: int) -> list[str]:
        """``added_lines``, its decoded body not kept (the stored one is, for a later
        read): for a rule that asks of many edits and reads few of them again
        (``match/lone.py``: whether an edit is a lone bracket's; at 10,000 sessions
        on click's ``core.py`` their decoded bodies held 9.6 MB)."""
        doc = self._docs.get((sid, edit_ord))
        if doc is None:
            if self._edit(sid, edit_ord) is None:
                return []
            body = self._bodies.get((sid, edit_ord))
            doc = None if body is None else self.decode(body)
            if not isinstance(doc, list) or len(doc) != 4:
                return []  # damaged: as ``added_lines`` says
        added = doc[1]
        return added if isinstance(added, list) else []

    def added_fps(self, sid: int, edit_ord: int) -> list[int]:
        """The fingerprints of the lines one edit added, in order (a window's rules
        compare them with the whole file's: ``match/lines._RunsBeyond``)."""
        got = self._added_fps.get((sid, edit_ord))
        if got is None:
            got = self._added_fps[(sid, edit_ord)] = fingerprints(self.added_lines(sid, edit_ord))
        return got

    def added_bare(self, sid: int, edit_ord: int) -> list[str]:
        """The lines one edit added without white space (``index/fingerprint.normalise_line``),
        in order: what ``match/trimmed`` compares with the file's ``LineTexts.bare``."""
        got = self._added_bare.get((sid, edit_ord))
        if got is None:
            got = self._added_bare[(sid, edit_ord)] = [
                normalise_line(t) for t in self.added_lines(sid, edit_ord)
            ]
        return got

    def written_text(self, key: Key) -> str | None:
        """A write's exact text (its indent included)."""
        added = self.added_lines(key[0], key[1])
        return added[key[2]] if 0 <= key[2] < len(added) else None

    def position(self, key: Key) -> int | None:
        """Where a write landed in the session's file (0-based)."""
        got = self._positions.get((key[0], key[1]))
        if got is None:  # asked line after line of one edit: worked out once
            edit = self._edit(key[0], key[1])
            got = [] if edit is None else _positions(edit[3], self._doc(edit))
            self._positions[(key[0], key[1])] = got
        return got[key[2]] if 0 <= key[2] < len(got) else None

    def file_edits(self, sid: int, edit_ord: int) -> list[tuple[int, float | None, Hunks]]:
        """(ord, time, hunks) of each edit the session made of the file edit ``edit_ord``
        changed, in order (hunks: (old_start, new_start, removed, added), or None)."""
        edit = self._edit(sid, edit_ord)
        if edit is None:
            return []
        path_id = edit[6]
        got = self._file_edits.get((sid, path_id))  # asked for each of its lone brackets
        if got is None:
            self._ensure([sid], [path_id] if path_id is not None else [])
            got = self._file_edits[(sid, path_id)] = [
                (e[1], e[5], None if e[3] else _hunk_counts(self._doc(e)[3]))
                for e in sorted(self._of_path.get((sid, path_id), [edit]), key=_by_ord)
            ]
        return got

    def edited_any(self, sid: int, path_ids: list[int]) -> bool:
        """Whether the session made a timed edit of any of these paths."""
        self._ensure([sid], path_ids)
        return any(e[5] is not None for pid in path_ids for e in self._of_path.get((sid, pid), ()))

    def final_fingerprints(self, sid: int, path_ids: list[int]) -> set[int]:
        """Fingerprints of the lines a session left in a file: what it wrote, minus
        what it replaced itself afterwards (a write_to_file starts the file afresh)."""
        return self._left(sid, path_ids, keep_trivial=True)

    def left_in_file(self, sid: int, path_ids: list[int]) -> set[int]:
        """The non-trivial fingerprints a session left in a file (as ``final_fingerprints``,
        blank lines and brackets aside: they say nothing of which file it was)."""
        return self._left(sid, path_ids, keep_trivial=False)

    # -- reading --------------------------------------------------------------------

    def _left(self, sid: int, path_ids: list[int], keep_trivial: bool) -> set[int]:
        self._ensure([sid], path_ids)
        mine = [e for pid in path_ids for e in self._of_path.get((sid, pid), ()) if e[4]]
        current: set[int] = set()
        for e in sorted(mine, key=_by_step):
            removed, added = self._doc(e)[:2]
            leave(current, "write_to_file" if e[3] else "", removed, added, keep_trivial)
        return current

    def _edit(self, sid: int, edit_ord: int) -> EditRow | None:
        key = (sid, edit_ord)
        got = self._rows.get(key)
        if got is None and key not in self._missing:
            self._ensure([sid], self.path_ids)
            got = self._rows.get(key)
            if got is None:  # an edit of another path (a block moved from elsewhere)
                row = self.fetch_edit(sid, edit_ord)
                if row is None:
                    self._missing.add(key)
                else:
                    got = self._add(row)
        return got

    def _ensure(self, sids: list[int], path_ids: list[int]) -> None:
        """Read these sessions' edits of these paths (and of the file's) unless read."""
        read = frozenset(path_ids).union(self.path_ids)
        fresh = [sid for sid in sids if not read <= self._read.get(sid, frozenset())]
        if not fresh:
            return
        for row in self.fetch(fresh, sorted(read)):
            if (row[0], row[1]) not in self._rows:
                self._add(row)
        for sid in fresh:
            self._read[sid] = read | self._read.get(sid, frozenset())

    def _add(self, stored: StoredEdit) -> EditRow:
        row: EditRow = stored[:7]  # type: ignore[assignment]
        self._rows[(row[0], row[1])] = row
        self._of_path.setdefault((row[0], row[6]), []).append(row)
        self._bodies[(row[0], row[1])] = stored[7]
        return row

    def _doc(self, edit: EditRow) -> list[Any]:
        key = (edit[0], edit[1])
        got = self._docs.get(key)
        if got is None:
            body = self._bodies.pop(key, None)
            doc = None if body is None else self.decode(body)  # None: a damaged body
            if isinstance(doc, list) and len(doc) == 4:
                doc[2] = None  # the witness: no rule reads it (it repeats the added lines)
            else:
                doc = [[], [], None, None]
            got = self._docs[key] = doc
        return got


def leave(
    current: set[int], tool: str, removed: list[str], added: list[str], keep_trivial: bool
) -> None:
    """``current`` (the fingerprints a session left in a file) after one more of its
    edits: what it added, less what it removed that it did not add again; a
    ``write_to_file`` starts the file afresh. ``keep_trivial``: blank lines and
    brackets count too (they say nothing of which file it was)."""
    new = {fingerprint(x) for x in added if keep_trivial or not is_trivial(x)}
    if tool == "write_to_file":
        current.clear()
    current -= {fingerprint(x) for x in removed} - new
    current |= new


def _by_ord(e: EditRow) -> int:
    return e[1]


def _by_step(e: EditRow) -> tuple[int, int]:
    return (e[2], e[1])


def _positions(whole_file: int, doc: list[Any]) -> list[int | None]:
    """Where each line an edit added landed in the file it edited (0-based, the file
    as the edit left it), from its hunks' ``@@`` positions; None where not known.
    A whole-file write's lines are where they are written."""
    added, hunks = doc[1], doc[3]
    if not isinstance(added, list):
        return []
    if not hunks:
        return list(range(len(added))) if whole_file else [None] * len(added)
    out: list[int | None] = []
    for h in hunks:
        if not isinstance(h, list) or len(h) != 4:
            return [None] * len(added)  # hunks that are not the edit's own lines
        start = h[1] if isinstance(h[1], int) else None
        out += [None if start is None else start - 1 + k for k in range(h[3])]
    return out if len(out) == len(added) else [None] * len(added)


def _hunk_counts(hunks: Any) -> Hunks:
    """A stored hunk list as counts (``store._hunk_list``: counts, or whole hunks)."""
    if not isinstance(hunks, list) or not hunks:
        return None
    out: list[tuple[int, int, int, int]] = []
    for h in hunks:
        if isinstance(h, dict):
            h = [
                h.get("old_start"),
                h.get("new_start"),
                len(h.get("removed") or []),
                len(h.get("added") or []),
            ]
        if not isinstance(h, list) or len(h) != 4 or not all(isinstance(x, int) for x in h):
            return None
        out.append((h[0], h[1], h[2], h[3]))
    return out
