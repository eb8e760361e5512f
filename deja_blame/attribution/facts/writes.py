"""The writes of a file's texts, read from the index: the matcher's main input.

One B-tree range of the lines table per (path, fingerprint): the cost follows the
file and the writes of its own lines, not everything ever written to the path.
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Iterable
from functools import partial
from typing import Any

import orjson

from deja_blame.attribution.facts import indexread as Q
from deja_blame.attribution.facts.edits import SessionEdits
from deja_blame.attribution.facts.model import WriteSet
from deja_blame.index.fingerprint import normalise_line
from deja_blame.index.store import load_json


def load_writes(
    conn: sqlite3.Connection,
    paths: dict[int, bool],
    fps: Iterable[int],
    into: WriteSet | None = None,
    solid: Iterable[int] | None = None,
) -> WriteSet:
    """The writes of these fingerprints to these paths: one B-tree range of the edit
    shapes' lines per path, then one of the shapes' edits.

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
    # Each shape's lines once and each shape's edits once (``index/shapes.py``): the
    # copies (an edit and a line each) are made here, not read row by row.
    read = [(pid, Q.shape_lines_of(conn, pid, wanted)) for pid in sorted(paths)]
    edits = Q.edits_of_shapes(conn, sorted({row[1] for _, lines in read for row in lines}))
    solid_fps = set(solid).intersection(wanted) if solid is not None else set()
    trivial = sorted(set(wanted).difference(solid_fps)) if solid_fps else []
    narrowed: dict[int, bool] = {}
    if trivial:
        for k, (pid, lines) in enumerate(read):
            # a trivial line's copies: the edits of each shape that wrote it
            copies = sum(len(edits.get(shape, ())) for fp, shape, _ in lines if fp not in solid_fps)
            if copies > NARROW_FROM:
                # its writes only where the edit (its shape) also wrote a solid line
                with_solid = {shape for fp, shape, _ in lines if fp in solid_fps}
                read[k] = (pid, [r for r in lines if r[0] in solid_fps or r[1] in with_solid])
                narrowed[pid] = paths[pid]
            # else few: reading them all costs less than leaving them out
    out.add_shapes(read, edits, paths)
    if narrowed:
        out.fetch_left_out = partial(Q.line_writes_of_sessions, conn)
        # a lone bracket edit's write, read only in its line's commit window (``match/lone.py``)
        out.fetch_between = partial(Q.line_writes_between, conn)
        out.left_out.append((narrowed, trivial))
        if not out.any_left_out and not out.info:
            # nothing read: whether anything was left (callers stop on an empty set)
            out.any_left_out = any(Q.has_timed_write(conn, pid, trivial) for pid in narrowed)
    return out


# Writes (copies) of a path's trivial lines from which load_writes narrows them: below,
# reading them all costs less than asking the index for the rest later.
NARROW_FROM = 10_000


def texts_written(conn: sqlite3.Connection, path_id: int) -> set[str] | None:
    """The text of every line written to the path, white space removed: the texts
    whose fingerprints are the path's rows of ``lines`` (each edit's added lines).
    None where that is more than ``TEXTS_UP_TO`` edits to decode, or a body is
    damaged (its rows have no text to stand for them)."""
    bodies = Q.edit_bodies_of_path(conn, path_id, TEXTS_UP_TO)
    if bodies is None:
        return None
    texts: set[str] = set()
    for body in bodies:
        doc = _decoded(body)
        if doc is None:
            return None
        texts.update(map(normalise_line, doc[1]))
    return texts


# Edits of one path whose texts ``texts_written`` decodes for a question about many
# files; past that, hashing the rules' candidates costs less than reading them all.
TEXTS_UP_TO = 20_000


def session_edits(conn: sqlite3.Connection, paths: dict[int, bool]) -> SessionEdits:
    """The edits behind the writes, for the matcher to read as plain data: a
    session's edits of ``paths``, read in one query when a rule first asks about
    the session (``edits.py``)."""
    return SessionEdits(
        path_ids=sorted(paths),
        fetch=partial(Q.edits_of_sessions, conn),
        fetch_edit=partial(Q.edit_row, conn),
        decode=_decoded,
    )


def _decoded(body: bytes | str) -> Any:
    """A stored edit body, or None where it is damaged (one bad row loses one edit)."""
    try:
        return load_json(body)
    except (orjson.JSONDecodeError, zlib.error):
        return None
