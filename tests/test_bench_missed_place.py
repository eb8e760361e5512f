"""bench/moved_machine.py's place of a missed line (``placed_lines``, ``missed_place``):
a line the session's edits hold the text of counts as missed only where one of those
edits, placed by its own lines the file holds once, lands on it; a copy of the text in
a function no edit wrote is not the session's line. Plain data: fingerprints of lines."""

from __future__ import annotations

from typing import Any

from conftest import bench_module

from deja_blame.index.fingerprint import fingerprint, is_trivial

MM = bench_module("moved_machine")


def _edit(lines: list[str]) -> Any:
    fps = [fingerprint(x) for x in lines]
    plain = [not is_trivial(x) for x in lines]
    return MM.OwnEdit("/u/cli/a.go", "Edit", 0.0, fps, plain, frozenset(fps))


def _place(file: list[str], line: int, *edits: list[str], given: set[int] | None = None) -> str:
    fps = [fingerprint(x) for x in file]
    return str(MM.missed_place(fps, line, [_edit(e) for e in edits], given=given))


SESSION = [
    "func load() error {",
    "\tdata, err := read(path)",
    "\tif err != nil {",
    "\t\treturn err",
    "\t}",
    "\treturn parse(data)",
    "}",
]
PERSON = [
    "func save() error {",
    "\tout, err := encode(value)",
    "\tif err != nil {",
    "\t\treturn err",
    "\t}",
    "\treturn write(out)",
    "}",
]


def test_a_copy_in_a_function_the_edit_did_not_write_is_elsewhere() -> None:
    file = ["package a", "", *SESSION, "", *PERSON]
    assert file[2 + 2] == file[10 + 2] == "\tif err != nil {"
    assert _place(file, 5, SESSION) == "placed"  # the session's own `if err != nil {`
    assert _place(file, 13, SESSION) == "elsewhere"  # the person's copy in save()


def test_lines_a_person_put_on_both_sides_do_not_move_the_edit_off_its_line() -> None:
    # the person added a line above and below the session's check: neither of the
    # edit's unique lines is at its own distance from it any more
    file = [
        "package a",
        *SESSION[:2],
        "\tlog(path)",
        *SESSION[2:4],
        "\tmetric(err)",
        *SESSION[4:],
        "",
        *PERSON,
    ]
    check = file.index("\tif err != nil {") + 1
    assert _place(file, check, SESSION) == "placed"
    assert _place(file, len(file) - 4, SESSION) == "elsewhere"  # save()'s copy


def test_an_edit_placed_at_its_own_distance_from_a_unique_line() -> None:
    # the edit's lines between its two unique lines are in the file twice; matching
    # takes the first copy, the distance from the second unique line the other
    edit = ["begin()", "\tstep()", "\tstep2()", "finish()"]
    file = ["begin()", "\tstep()", "\tstep2()", "\tstep()", "\tstep2()", "finish()", "", *PERSON]
    assert _place(file, 2, edit) == "placed"
    assert _place(file, 4, edit) == "placed"


def test_an_edit_with_no_line_the_file_holds_once_cannot_be_placed() -> None:
    file = ["package a", "", *SESSION, "", *PERSON]
    edit = ["\tif err != nil {", "\t\treturn err", "\t}"]  # every line of it twice in the file
    assert _place(file, 5, edit) == "no_unique_line"
    # one edit placed elsewhere, one that cannot be placed: it may be here, so counted
    assert _place(file, 13, SESSION, edit) == "no_unique_line"


def test_a_line_the_file_holds_once_is_placed() -> None:
    file = ["package a", "", *SESSION]
    assert _place(file, 4, ["\tdata, err := read(path)"]) == "placed"


def test_a_unique_line_the_edit_holds_twice_places_nothing() -> None:
    # ``load()`` twice in the edit (a rename's old and new line, say): no anchor
    edit = ["func load() error {", "\tif err != nil {", "func load() error {"]
    file = ["package a", "", *SESSION, "", *PERSON]
    assert _place(file, 13, edit) == "no_unique_line"


def test_lines_before_the_first_unique_line_and_after_the_last_are_matched() -> None:
    # a person put a line between the edit's only unique line and the rest of it
    top = ["func load() error {", "\tif err != nil {", "\t\treturn err", "\t}"]
    file = [top[0], "\tlog()", *top[1:], "}", "", *PERSON]
    assert _place(file, 3, top) == "placed"
    assert _place(file, len(file) - 4, top) == "elsewhere"
    bottom = ["\tif err != nil {", "\t\treturn err", "\t}", "\treturn parse(data)"]
    file = ["func load() error {", *bottom[:3], "\tlog()", bottom[3], "}", "", *PERSON]
    assert _place(file, 2, bottom) == "placed"
    assert _place(file, len(file) - 4, bottom) == "elsewhere"


def test_an_edit_line_read_at_two_places_is_the_one_given() -> None:
    # a person put a guard block between two of the edit's anchors, ending as the
    # edit's own guard above it does (``return ""`` / ``}`` / blank): the edit's
    # ``return ""`` reads at its distance from the upper anchor (5) and, matched up
    # from the lower one, at the block's (10). One write: where line 5 is given
    # to the session, line 10 is not its (entireio state.go, 845ffb86)
    edit = [
        "func find(id string) string {",
        '\tif id == "" {',
        '\t\treturn ""',
        "\t}",
        "",
        "\tdir, err := gitDir()",
        "\tif err != nil {",
        '\t\treturn ""',
        "\t}",
        "\treturn dir",
        "}",
    ]
    guard = [
        "\t// validate the id",
        "\tif err := validate(id); err != nil {",
        '\t\treturn ""',
        "\t}",
        "",
    ]
    file = ["package a", "", *edit[:5], *guard, *edit[5:]]
    assert file[4] == file[9] == file[14] == '\t\treturn ""'
    assert _place(file, 10, edit) == "placed"  # either reading may be the edit's
    assert _place(file, 10, edit, given={5, 15}) == "elsewhere"
    assert _place(file, 5, edit, given={10, 15}) == "elsewhere"  # deja gave the other
    # the edit's second ``return ""`` has one reading: given elsewhere or not, placed
    assert _place(file, 15, edit, given={5, 10}) == "placed"
    # nothing given: each reading may be the session's line
    assert _place(file, 5, edit, given=set()) == _place(file, 10, edit, given=set()) == "placed"


MIGRATED = [
    "\tsummary := &Summary{",
    '\t\tID: id.Must("abc"),',
    "\t}",
]


def test_copies_past_the_writes_of_a_text_are_used_up() -> None:
    # three edits migrating three tests alike; the commit holds a fourth copy (a test a
    # rebase brought, migrated by hand): three given copies are all the edits wrote
    edits = [_edit(MIGRATED) for _ in range(3)]
    fp = fingerprint(MIGRATED[0])
    assert MM.used_up(fp, edits, 3)
    assert not MM.used_up(fp, edits, 2)  # one write may still be on the missed line
    # an edit holding the text twice wrote it twice
    twice = [_edit([*MIGRATED, *MIGRATED]), _edit(MIGRATED)]
    assert not MM.used_up(fp, twice, 2)
    assert MM.used_up(fp, twice, 3)
