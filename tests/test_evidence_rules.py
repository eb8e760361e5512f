"""The evidence rules a real history needs, each on its own small case.

The matcher's ordering (a later re-write beats an older longer run; among equal
evidence the copy nearest where the write landed), the formatter's trailing
comma, and the commit-window checks that tell a re-indent or a move from a
person typing a second copy. Whole histories are in ``bench/accuracy``
(``realhist.py``); the moves git cannot see (a rename it missed, a function moved
before its first commit) are scenarios there, run by ``test_accuracy_scenarios``.
"""

from __future__ import annotations

from pathlib import Path

from conftest import git
from plain_writes import write_set as _writes

from deja_blame.attribution.facts.model import BlameLine, LineTexts
from deja_blame.attribution.facts.versions import FileHistory
from deja_blame.attribution.match import lines as matcher
from deja_blame.attribution.match.reflow import _MAGIC_COMMA
from deja_blame.attribution.match.window import CommitWindow
from deja_blame.index.fingerprint import is_trivial


def _blamed(n: int, at: int = 10_000) -> list[BlameLine | None]:
    return [BlameLine(i + 1, "c" * 40, at, "a.py", i + 1) for i in range(n)]


BLOCK = [
    "def total(order):",
    "    subtotal = sum(i.price for i in order.items)",
    "    tax = subtotal * TAX_RATE",
    "    return round(subtotal + tax, 2)",
]


def test_a_later_session_that_rewrote_part_of_a_block_beats_the_older_whole_write() -> None:
    # session 1 wrote the whole function (a run of 6); session 2 later re-wrote its
    # last three lines (a run of 3): those three are session 2's
    file = ["import os", "", *BLOCK]
    ws = _writes([(1, 0, 100.0, file), (2, 0, 200.0, BLOCK[1:])])
    out = matcher.match_lines(LineTexts.of(file), _blamed(len(file)), ws, now=20_000.0)
    assert [m.sid if m else None for m in out] == [1, 1, 1, 2, 2, 2]


def test_a_short_later_run_does_not_beat_a_long_one() -> None:
    # one line a later session also wrote (a run of 1) is weaker than the block
    file = ["import os", "", *BLOCK]
    ws = _writes([(1, 0, 100.0, file), (2, 0, 200.0, [BLOCK[2]])])
    out = matcher.match_lines(LineTexts.of(file), _blamed(len(file)), ws, now=20_000.0)
    assert [m.sid if m else None for m in out] == [1] * len(file)


def test_of_two_copies_of_a_line_a_write_goes_to_the_one_where_it_landed() -> None:
    # "major = 10" twice; the session wrote the second copy (line 6 of its file,
    # between two lines only it wrote): the first copy is the person's
    file = ["a = 1", "major = 10", "b = 2", "c = 3", "unique_one()", "major = 10", "unique_two()"]
    ws = _writes([(1, 0, 100.0, ["unique_one()"]), (1, 1, 110.0, ["major = 10"]),
                  (1, 2, 120.0, ["unique_two()"])])  # fmt: skip
    places = {(1, 0, 0): 4, (1, 1, 0): 5, (1, 2, 0): 6}
    out = matcher.match_lines(
        LineTexts.of(file),
        _blamed(len(file)),
        ws,
        now=20_000.0,
        position=lambda key: places.get(key),
    )
    assert out[1] is None
    assert out[5] is not None and out[5].sid == 1
    # without places the first copy takes it: the old order, for transcripts without @@
    out = matcher.match_lines(LineTexts.of(file), _blamed(len(file)), ws, now=20_000.0)
    assert out[1] is not None and out[5] is None


def test_of_a_text_at_two_indents_a_write_goes_first_to_the_copy_it_matches_exactly() -> None:
    # one text at two indents: the later write is the deeper one's, the older the other's;
    # by time alone the later write would go to the first copy
    file = ["    return value", "        return value"]
    written = {(1, 0, 0): file[1], (2, 0, 0): file[0]}
    ws = _writes([(1, 0, 200.0, [file[1]]), (2, 0, 100.0, [file[0]])])
    out = matcher.match_lines(
        LineTexts.of(file), _blamed(len(file)), ws, now=20_000.0, written_text=written.get
    )
    assert [m.sid if m else None for m in out] == [2, 1]
    out = matcher.match_lines(LineTexts.of(file), _blamed(len(file)), ws, now=20_000.0)
    assert [m.sid if m else None for m in out] == [1, 2]


def test_the_formatters_trailing_comma_is_taken_off_to_find_the_written_line() -> None:
    joined = "f(alpha,beta,)"
    assert _MAGIC_COMMA.sub(r"\1", joined) == "f(alpha,beta)"
    assert _MAGIC_COMMA.sub(r"\1", "x=[1,2,]") == "x=[1,2]"
    assert _MAGIC_COMMA.sub(r"\1", "t=(a,)") == "t=(a)"  # hence the exact text is tried first


def _commit(repo: Path, text: str, when: int) -> str:
    (repo / "a.py").write_text(text)
    git(repo, "add", "a.py")
    env = {"GIT_AUTHOR_DATE": f"@{when} +0000", "GIT_COMMITTER_DATE": f"@{when} +0000"}
    git(repo, "commit", "-q", "-m", f"at {when}", env=env)
    return git(repo, "rev-parse", "HEAD").strip()


def _window(repo: Path, sha: str, texts: list[str]) -> CommitWindow:
    history = FileHistory(repo, {"a.py"}, None)
    blamed: list[BlameLine | None] = [
        BlameLine(i + 1, sha, 0, "a.py", i + 1) for i in range(len(texts))
    ]
    return CommitWindow(history, blamed, LineTexts.of(texts))


def test_a_person_typing_a_second_copy_is_not_a_move_of_the_first(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    block = "    pre = (\n        compute_the_prefix(value)\n    )\n"
    _commit(repo, "def a(value):\n" + block, 1_000)  # a session wrote this at 500
    second = _commit(repo, "def a(value):\n" + block + "\ndef b(value):\n" + block, 5_000)
    texts = (repo / "a.py").read_text().split("\n")[:-1]
    window = _window(repo, second, texts)
    # "    )" of the second copy (line 9), brought by `second`: the session's write
    # of ")" at 500 is stale there, its neighbour was typed anew, not moved
    assert window.stale(8, 500.0)
    window.history.close()


def test_a_block_moved_inside_the_file_keeps_its_brackets(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    block = "    pre = (\n        compute_the_prefix(value)\n    )\n"
    _commit(repo, "def a(value):\n" + block + "\n\ndef b():\n    return 1\n", 1_000)
    moved = _commit(repo, "def b():\n    return 1\n\n\ndef a(value):\n" + block, 5_000)
    texts = (repo / "a.py").read_text().split("\n")[:-1]
    window = _window(repo, moved, texts)
    assert texts[7] == "    )"
    assert not window.stale(7, 500.0)
    window.history.close()


def test_a_blank_line_of_an_earlier_commit_is_not_given_to_a_later_write() -> None:
    # the person's commit at 15:00 brought the blank lines above b(); a session wrote
    # at 15:22 two blank lines and a helper below b() (the person dropped the
    # blank lines). Across the person's b() a write must come before the line's
    # commit (120 s of skew).
    file = ["def a():", "    return 1", "", "", "def b():", "    return 2"]
    file += ["def helper(x):", "    return compute_the_total(x)"]
    at_1500, at_1522 = 54_000, 55_320
    blamed = _blamed(6, at_1500) + [
        BlameLine(i + 1, "d" * 40, at_1522 + 300, "a.py", i + 1) for i in (6, 7)
    ]
    ws = _writes([(1, 0, float(at_1522), ["", "", *file[6:]])])
    out = matcher.match_lines(LineTexts.of(file), blamed, ws, now=60_000.0)
    assert [m.sid if m else None for m in out] == [None] * 6 + [1, 1]


def test_a_brace_git_slid_to_an_older_commit_still_goes_to_the_later_session() -> None:
    # git's diff kept the old "}" at the end and called the session's "}" (before
    # its new function) new: the brace the old commit is blamed for is the session's
    file = ["function a() {", "  return 1", "}", "function b() {", "  return 2", "}"]
    old, new = 54_000, 55_320
    blamed = [BlameLine(1, "c" * 40, old, "a.js", 1), BlameLine(2, "c" * 40, old, "a.js", 2)]
    blamed += [BlameLine(i + 1, "d" * 40, new + 60, "a.js", i + 1) for i in (2, 3, 4)]
    blamed += [BlameLine(6, "c" * 40, old, "a.js", 3)]
    ws = _writes([(1, 0, float(new), ["}", "function b() {", "  return 2", "}"])])
    out = matcher.match_lines(LineTexts.of(file), blamed, ws, now=60_000.0)
    assert [m.sid if m else None for m in out][3:] == [1, 1, 1]


def test_blank_lines_git_slid_go_to_those_of_the_session_s_own_commit() -> None:
    # the person's a() and z() with two blank lines between (13:00); a session at 14:00
    # inserted two blank lines and b() below a(). git's diff says the new blank lines
    # are the pair below b() (its commit's, as the commit's note says), and keeps the
    # person's pair above it: the session's two blank writes go to the pair below,
    # not to the person's older pair beside its edit (a write after a line's commit)
    file = ["def a():", "    return 1", "", "", "def b():", "    return 2", "", ""]
    file += ["def z():", "    return 26"]
    person, session = 46_800, 50_400
    blamed = [BlameLine(i + 1, "c" * 40, person, "m.py", i + 1) for i in range(4)]
    blamed += [BlameLine(i + 1, "d" * 40, session + 300, "m.py", i - 1) for i in range(4, 8)]
    blamed += [BlameLine(i + 1, "c" * 40, person, "m.py", i - 3) for i in (8, 9)]
    ws = _writes([(1, 0, float(session), ["", "", "def b():", "    return 2"])])
    out = matcher.match_lines(LineTexts.of(file), blamed, ws, now=60_000.0)
    assert [m.sid if m else None for m in out] == [None] * 4 + [1] * 4 + [None] * 2


def test_a_one_line_file_is_the_session_whose_edit_wrote_all_of_it() -> None:
    # .python-version, 3.12 -> 3.13 by a session: too short to count alone, but the
    # file's whole text is what the edit wrote there, before the commit
    ws = _writes([(1, 0, 100.0, ["3.13"])])
    out = matcher.match_lines(LineTexts.of(["3.13"]), _blamed(1), ws, now=20_000.0)
    assert out[0] is not None and out[0].sid == 1
    # written after the commit (beyond the skew): not the session's
    out = matcher.match_lines(LineTexts.of(["3.13"]), _blamed(1, at=-1_000), ws, now=20_000.0)
    assert out[0] is None
    # the edit wrote the text below another line: no evidence it wrote this file whole
    ws = _writes([(1, 0, 100.0, ["# pinned", "3.13"])])
    out = matcher.match_lines(LineTexts.of(["3.13"]), _blamed(1), ws, now=20_000.0)
    assert out[0] is None


def test_a_short_run_of_a_repeated_text_is_not_given_to_a_copy_far_from_its_place() -> None:
    # the session wrote ".trim(value)" / ".split(sep)" at lines 20-21, beside its
    # "anchor_one()" (still at line 19); a later change took that chain away. The
    # file holds the same two lines at 70-71 and 90-91, typed by the person: the
    # write is no evidence for copies 40+ lines from where it landed
    file = [f"line_{k} = {k}" for k in range(100)]
    file[19] = "anchor_one()"
    for at in (70, 90):
        file[at], file[at + 1] = "    .trim(value)", "    .split(sep)"
    ws = _writes([(1, 0, 100.0, ["    .trim(value)", "    .split(sep)"]),
                  (1, 1, 110.0, ["anchor_one()"])])  # fmt: skip
    places = {(1, 0, 0): 20, (1, 0, 1): 21, (1, 1, 0): 19}
    out = matcher.match_lines(
        LineTexts.of(file),
        _blamed(len(file)),
        ws,
        now=20_000.0,
        position=lambda key: places.get(key),
    )
    assert out[19] is not None and out[19].sid == 1
    assert [k for k, m in enumerate(out) if m is not None] == [19]
    # where the copy is near the place (the edit's lines shifted with its session's
    # anchor), it is the session's
    file2 = list(file)
    file2[18], file2[19] = "anchor_one()", "line_19 = 19"
    file2[25], file2[26] = "    .trim(value)", "    .split(sep)"
    out = matcher.match_lines(
        LineTexts.of(file2),
        _blamed(len(file2)),
        ws,
        now=20_000.0,
        position=lambda key: places.get(key),
    )
    assert [k for k, m in enumerate(out) if m is not None] == [18, 25, 26]


def test_a_brace_far_from_its_edit_now_is_placed_where_its_commit_put_it() -> None:
    # session 1 wrote a three-line function (commit A); session 2 later inserted
    # twenty lines between its body and its "}" (commit B): git keeps the "}" in
    # commit A, twenty lines below the lines it closed. In commit A's version it is
    # right after them: session 1's
    body = [f"  total_{k} = compute({k})" for k in range(20)]
    file = ["function a() {", "  return compute(1)", *body, "}"]
    ws = _writes([(1, 0, 100.0, ["function a() {", "  return compute(1)", "}"]),
                  (2, 0, 2_000.0, body)])  # fmt: skip
    blamed: list[BlameLine | None] = [
        BlameLine(1, "a" * 40, 1_000, "a.js", 1),
        BlameLine(2, "a" * 40, 1_000, "a.js", 2),
        *(BlameLine(3 + k, "b" * 40, 3_000, "a.js", 3 + k) for k in range(20)),
        BlameLine(23, "a" * 40, 1_000, "a.js", 3),
    ]
    out = matcher.match_lines(LineTexts.of(file), blamed, ws, now=20_000.0)
    assert [m.sid if m else None for m in out] == [1, 1, *[2] * 20, 1]
    # a "}" commit B brought is not given by commit A's lines
    blamed[-1] = BlameLine(23, "b" * 40, 3_000, "a.js", 23)
    out = matcher.match_lines(LineTexts.of(file), blamed, ws, now=20_000.0)
    assert out[-1] is None


def test_a_long_run_of_repeated_texts_is_not_given_to_a_copy_far_from_its_place() -> None:
    # the session wrote a four-line block at lines 20-23, beside its "anchor_one()"
    # (still at line 19); a later change took that copy away. The file holds the
    # same block at 70-73 and 90-93, typed by the person: every text of the run is
    # repeated, so its length says nothing of which copy the write made, and the
    # copies are 40+ lines from where it landed: none of their lines of text is the
    # session's (their trivial "}" still rides the run: left, see bench/accuracy)
    block = ["  markDone(task);", "  if (keepGoing === true) {", "    continue;", "  }"]
    file = [f"step_{k}({k});" for k in range(100)]
    file[19] = "anchor_one()"
    for at in (70, 90):
        file[at : at + 4] = block
    ws = _writes([(1, 0, 100.0, block), (1, 1, 110.0, ["anchor_one()"])])
    places = {(1, 0, k): 20 + k for k in range(4)} | {(1, 1, 0): 19}
    out = matcher.match_lines(
        LineTexts.of(file),
        _blamed(len(file)),
        ws,
        now=20_000.0,
        position=lambda key: places.get(key),
    )
    assert is_trivial("  }") and not is_trivial("  markDone(task);")
    assert [k for k, m in enumerate(out) if m is not None and not is_trivial(file[k])] == [19]
    # the copy near the place (shifted with its session's anchor) is the session's
    file2 = list(file)
    file2[18], file2[19] = "anchor_one()", "step_19(19);"
    file2[25:29] = block
    out = matcher.match_lines(
        LineTexts.of(file2),
        _blamed(len(file2)),
        ws,
        now=20_000.0,
        position=lambda key: places.get(key),
    )
    assert [k for k, m in enumerate(out) if m is not None] == [18, 25, 26, 27, 28]
    # a run holding a line the file has once says where it is: taken at any distance
    file3 = list(file)
    file3[70] = "  markDone(task, now);"
    ws3 = _writes([(1, 0, 100.0, ["  markDone(task, now);", *block[1:]]),
                   (1, 1, 110.0, ["anchor_one()"])])  # fmt: skip
    out = matcher.match_lines(
        LineTexts.of(file3),
        _blamed(len(file3)),
        ws3,
        now=20_000.0,
        position=lambda key: places.get(key),
    )
    assert [k for k, m in enumerate(out) if m is not None] == [19, 70, 71, 72, 73]


def test_a_series_committed_in_one_second_is_one_window(tmp_path: Path) -> None:
    # a session wrote a guard into a() at 2,000 and the same guard into b() at 3,000;
    # both commits were made again at once (a rebase: one committer time, 9,000).
    # Which of them holds the second write cannot be told by time: b()'s guard is in
    # the window of b()'s commit, not stale as committed in a()'s
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    guard = "    if settings.enabled:\n        show(w)\n"
    _commit(repo, "def a():\n    return 1\n", 1_000)
    _commit(repo, "def a():\n" + guard + "    return 1\n", 9_000)
    both = "def a():\n" + guard + "    return 1\n\n\ndef b():\n" + guard + "    return 2\n"
    second = _commit(repo, both, 9_000)
    texts = (repo / "a.py").read_text().split("\n")[:-1]
    assert texts[7] == "    if settings.enabled:"
    window = _window(repo, second, texts)
    assert not window.stale(7, 3_000.0)
    assert window.fresh(7, 3_000.0)
    window.history.close()
    # the series a second apart: the older commit's time says when it was made
    repo2 = tmp_path / "r2"
    repo2.mkdir()
    git(repo2, "init", "-q")
    _commit(repo2, "def a():\n    return 1\n", 1_000)
    _commit(repo2, "def a():\n" + guard + "    return 1\n", 8_999)
    later = _commit(repo2, both, 9_000)
    window = _window(repo2, later, texts)
    assert window.stale(7, 3_000.0)
    assert not window.fresh(7, 3_000.0)
    window.history.close()
