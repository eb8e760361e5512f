"""A write of text the file holds many times (Go's ``if err != nil {`` / ``return err``
/ ``}``), where nothing of the session's says how far it moved since it landed: the
person typed a function above it before committing. Its place is then read off the
lines git kept from older commits (``lines._distances``, issue 40's repeated text
placed by the nearest write, not given to the person's copy)."""

from __future__ import annotations

from deja_blame.attribution.facts import model as model_mod
from deja_blame.attribution.facts.model import BlameLine, Key, LineTexts
from deja_blame.attribution.match import lines as matcher
from deja_blame.attribution.match import lone
from deja_blame.index.fingerprint import fingerprint

C = "c" * 40  # the commit: the person's a() and the session's check in b()
OLD = "b" * 40

FILE = [
    "func a() error {",  # 0: the person's, typed above before committing
    "\tif err != nil {",
    "\t\treturn err",
    "\t}",
    "\treturn nil",
    "}",
    "func b() error {",  # 6: older
    "\terr = w.Flush()",
    "\tif err != nil {",  # 8: the session's
    "\t\treturn err",
    "\t}",
    "\treturn nil",  # 11: older
    "}",
]
OURS = [8, 9, 10]
CHECK = FILE[8:11]


def _match(file_edits: lone.FileEdits | None) -> list[int | None]:
    blamed = [
        BlameLine(i + 1, C if i <= 5 or i in OURS else OLD, 10_000 if i <= 5 or i in OURS else 1,
                  "store.go", i + 1)
        for i in range(len(FILE))
    ]  # fmt: skip
    writes = model_mod.WriteSet()
    rows = [(1, fingerprint(t), 1, 0, k, 8_000.0, 0) for k, t in enumerate(CHECK)]
    writes.add_rows(sorted(rows, key=lambda r: r[:5]), {1: True})

    def position(key: Key) -> int | None:
        return 2 + key[2]  # func b, its Flush line, then the check, as the session's file was

    out = matcher.match_lines(
        LineTexts.of(FILE),
        blamed,
        writes,
        now=20_000.0,
        position=position,
        added_lines=lambda sid, edit: CHECK,
        file_edits=file_edits,
    )
    return [m.sid if m else None for m in out]


def test_a_repeated_check_goes_where_git_kept_the_lines_around_it() -> None:
    # the edit inserted three lines after the file's first two (its hunk: @@ -3,0 +3,3 @@)
    got = _match(lambda sid, edit: [(0, 8_000.0, [(3, 3, 0, 3)])])
    assert [got[i] for i in OURS] == [1, 1, 1]
    assert got[1:4] == [None, None, None]  # the person's copy, typed above


def test_old_lines_above_reads_the_hunk_the_write_is_in() -> None:
    edits = [(0, 1.0, [(3, 3, 0, 2), (10, 12, 1, 4)]), (1, 2.0, None)]
    assert lone.old_lines_above((1, 0, 0), lambda sid, edit: edits) == 2
    assert lone.old_lines_above((1, 0, 2), lambda sid, edit: edits) == 9
    assert lone.old_lines_above((1, 0, 6), lambda sid, edit: edits) is None  # no such line
    assert lone.old_lines_above((1, 1, 0), lambda sid, edit: edits) is None  # no place known
    # the lines above each line that are not of its commit
    by = [BlameLine(1, c, 1, "store.go", 1) for c in (C, OLD, C, OLD, C)]
    assert matcher._kept_above(list(by)) == [0, 1, 1, 2, 2]
