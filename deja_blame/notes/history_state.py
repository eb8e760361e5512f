"""``.git/deja/history``: what the last ``deja annotate --all`` pass saw.

Commits it derived with no attributed line get no note; that they were looked at,
and from what, is kept here (``none <sha> <digest>`` lines), with ``done
<generation> <notes tip>`` for each complete pass (``index.queries.writes_generation``
when it began, and the commit ``refs/notes/deja`` pointed at when it ended, ``-``
for none: a note that came later, fetched from elsewhere, is not one the pass wrote
or checked). Blame reads it to know which commits' lines a pass has settled
(``attribution/facts/settled.py``); the pass reads it to skip what is up to date.
Its own module so that blame reads it without importing the annotator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deja_blame import statefile
from deja_blame.notes.store import deja_dir
from deja_blame.objectid import is_object_id

if TYPE_CHECKING:
    import pygit2

STATE_FILE = "history"
STATE_BYTES = 4 * 1024 * 1024  # a longer record is started afresh (costs a re-derive)


class HistoryState:
    """``.git/deja/history``: commits derived with no line (and from what), and the
    index's generation at the last complete pass. Never read or written through a link."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self.path = deja_dir(repo) / STATE_FILE
        self.none: dict[str, str] = {}
        self.done: str | None = None
        # the notes commit the last pass ended at ("" when there were no notes;
        # None: the record does not say, an older deja's)
        self.done_notes: str | None = None
        data = statefile.read_bytes(self.path, STATE_BYTES + 1)
        if data is None or len(data) > STATE_BYTES:
            return
        for line in data.decode("ascii", "replace").splitlines():
            fields = line.split()
            if len(fields) == 3 and fields[0] == "none":
                self.none[fields[1]] = fields[2]
            elif len(fields) in (2, 3) and fields[0] == "done":
                self.done = fields[1]
                tip = fields[2] if len(fields) == 3 else None
                # a commit's name or "-" (a file carried in a tarball is input: no
                # option reaches git from it)
                self.done_notes = "" if tip == "-" else tip if tip and is_object_id(tip) else None

    def _append(self, text: str) -> None:
        try:
            if not statefile.ensure_dir(self.path.parent):
                return
            size = statefile.size_of(self.path)
            if size is None or size + len(text) > STATE_BYTES:
                kept = "".join(f"none {sha} {d}\n" for sha, d in self.none.items())
                if len(kept) + len(text) > STATE_BYTES:
                    kept = ""
                statefile.write_bytes(self.path, (kept + text).encode(), mode=0o600)
            else:
                statefile.append_bytes(self.path, text.encode())
        except OSError:
            pass  # costs a re-derive next time, nothing else

    def record_none(self, sha: str, value: str) -> None:
        self.none[sha] = value
        self._append(f"none {sha} {value}\n")

    def record_done(self, generation: str, notes_tip: str | None) -> None:
        self.done, self.done_notes = generation, notes_tip or ""
        self._append(f"done {generation} {notes_tip or '-'}\n")
