"""A window of a file (``deja why``, ``deja blame -L``: the lines asked and 40 on each
side, ``facts/gather.py``) is matched as the whole file is: the rules that count
something over the file (how often it holds a text, which copy of a text a write
landed at, which line took a write) see the whole file's counts and places
(``LineTexts.of(part, whole, start)``), not the window's. Plain data, no git."""

from __future__ import annotations

from plain_writes import write_set as _writes

from deja_blame.attribution.facts import model as writes_mod
from deja_blame.attribution.facts.model import BlameLine, LineTexts
from deja_blame.attribution.match import lines as matcher
from deja_blame.index.fingerprint import fingerprint, fingerprints

SCAFFOLD = ["  dir := tempDir()", "  if err != nil {", "    fail(err)", "  }"]


def _file() -> tuple[list[str], writes_mod.WriteSet, dict[tuple[int, int, int], int]]:
    # the session wrote "setupUnique()" and its scaffolding at lines 20-24, where it
    # still is; the person typed the same scaffolding into a new test at 151-154
    file = [f"step_{k}({k});" for k in range(200)]
    file[19] = "  setupUnique()"
    file[20:24] = SCAFFOLD
    file[150] = "func TestPersonsOwn() {"
    file[151:155] = SCAFFOLD
    added = ["  setupUnique()", *SCAFFOLD]
    ws = _writes([(1, 0, 100.0, added)])
    places = {(1, 0, k): 19 + k for k in range(len(added))}
    return file, ws, places


def _match(texts: LineTexts, n: int, start: int, ws: writes_mod.WriteSet, places: dict) -> list:
    blamed: list[BlameLine | None] = [
        BlameLine(start + k + 1, "c" * 40, 10_000, "a.go", start + k + 1) for k in range(n)
    ]
    added = {(1, 0): ["  setupUnique()", *SCAFFOLD]}
    return matcher.match_lines(
        texts,
        blamed,
        ws,
        now=20_000.0,
        position=lambda key: places.get(key),
        added_lines=lambda sid, edit: added.get((sid, edit), []),
        added_fps=lambda sid, edit: fingerprints(added.get((sid, edit), [])),
    )


def test_a_window_gives_a_far_copy_of_a_sessions_scaffolding_to_nobody_as_the_file_does() -> None:
    file, ws, places = _file()
    whole = _match(LineTexts.of(file), len(file), 0, ws, places)
    # the whole file: the session's own lines are its, the person's copy nobody's
    assert [k for k, m in enumerate(whole) if m is not None] == [19, 20, 21, 22, 23]
    # a window around the person's copy only (deja why of line 153): the same answer
    lo, hi = 110, 196
    part = LineTexts.of(file[lo:hi], file, lo)
    window = _match(part, hi - lo, lo, ws, places)
    assert [m is not None for m in window] == [m is not None for m in whole[lo:hi]]
    assert not any(window)
    # the window without the whole file's facts saw one copy of each text and gave it
    # the session: what this guards against
    alone = _match(LineTexts.of(file[lo:hi]), hi - lo, lo, ws, places)
    assert [k + lo for k, m in enumerate(alone) if m is not None] == [151, 152, 153, 154]


def test_a_window_around_the_sessions_own_lines_still_gives_them() -> None:
    file, ws, places = _file()
    whole = _match(LineTexts.of(file), len(file), 0, ws, places)
    lo, hi = 0, 60
    window = _match(LineTexts.of(file[lo:hi], file, lo), hi - lo, lo, ws, places)
    assert [m.sid if m else None for m in window] == [m.sid if m else None for m in whole[:hi]]
    assert [k for k, m in enumerate(window) if m is not None] == [19, 20, 21, 22, 23]


def test_line_texts_of_a_window_count_the_whole_file() -> None:
    file, _, _ = _file()
    part = LineTexts.of(file[140:170], file, 140)
    assert part.counts()[fingerprint("    fail(err)")] == 2
    assert part.text_beyond(-140 + 22) == fingerprint("    fail(err)")
    assert part.text_beyond(5) is None  # inside the window
    assert part.beyond is not None and part.beyond[fingerprint("  setupUnique()")] == 19
    whole = LineTexts.of(file)
    assert whole.file_counts is None and whole.beyond is None and whole.start == 0


def test_a_write_whose_edit_runs_longer_outside_the_window_is_that_copys() -> None:
    # the session wrote "openRepo()" / "check(err)" between two lines of its own at
    # 20-23; the person's test at 150 holds "check(err)" once more, alone. The
    # whole file gives the write to line 21 (the longer run); a window around 150
    # must not give it to the person's copy, whatever the places say
    file = [f"step_{k}({k});" for k in range(200)]
    mine = ["  setupUnique()", "  openRepo()", "  check(err)", "  teardownUnique()"]
    file[19:23] = mine
    file[150] = "  check(err)"
    ws = _writes([(1, 0, 100.0, mine)])
    added = {(1, 0): mine}
    lo, hi = 110, 196
    part = LineTexts.of(file[lo:hi], file, lo)
    runs = matcher._RunsBeyond(part, lambda sid, edit: fingerprints(added.get((sid, edit), [])))
    assert runs.taken((1, 0, 2), 150 - lo)  # a run of 4 at 19-22 against 1 here
    near = LineTexts.of(file[0:60], file, 0)  # a window holding the session's own run
    assert not matcher._RunsBeyond(near, lambda sid, edit: fingerprints(mine)).taken((1, 0, 2), 21)
    blamed: list[BlameLine | None] = [
        BlameLine(lo + k + 1, "c" * 40, 10_000, "a.go", lo + k + 1) for k in range(hi - lo)
    ]
    window = matcher.match_lines(
        part,
        blamed,
        ws,
        now=20_000.0,
        added_lines=lambda s, e: added.get((s, e), []),
        added_fps=lambda s, e: fingerprints(added.get((s, e), [])),
    )
    assert not any(window)
    # the whole file agrees: line 21 (0-based) has it, the copy at 150 nothing
    whole = matcher.match_lines(
        LineTexts.of(file),
        [BlameLine(k + 1, "c" * 40, 10_000, "a.go", k + 1) for k in range(len(file))],
        ws,
        now=20_000.0,
    )
    assert [k for k, m in enumerate(whole) if m is not None] == [19, 20, 21, 22]


def test_the_matcher_is_given_the_edits_fingerprints_for_a_window() -> None:
    # through match_file, as deja why runs it: the rules that see past a window read
    # the fingerprints of the edit's added lines stage 1 gives (``SessionEdits.added_fps``)
    from test_engine_stages import PlainSource

    from deja_blame.attribution.facts.model import FileFacts
    from deja_blame.attribution.match import match_file
    from deja_blame.attribution.model import LineAttribution

    file, ws, _ = _file()
    lo, hi = 110, 196
    source = PlainSource({1: ("s-1", "claude-code")}, {(1, 0): ["  setupUnique()", *SCAFFOLD]})
    part = LineTexts.of(file[lo:hi], file, lo)
    lines = [
        LineAttribution(line=lo + k + 1, text=t, commit="c" * 40, commit_time=10_000)
        for k, t in enumerate(file[lo:hi])
    ]
    blamed: list[BlameLine | None] = [
        BlameLine(lo + k + 1, "c" * 40, 10_000, "a.go", lo + k + 1) for k in range(hi - lo)
    ]
    facts = FileFacts("a.go", "/nowhere", "c" * 40, len(file), lines, blamed, part, writes=ws)
    facts.paths, facts.rev_time = {1: True}, 20_000.0
    given = source.for_rules(facts.lines, facts.writes, facts.paths)
    assert given.edits.added_fps(1, 0) == [fingerprint(t) for t in ["  setupUnique()", *SCAFFOLD]]
    match_file(facts, given)
    # the person's copy of the scaffolding at 151-154 is nobody's, as the whole file says
    assert not any(ln.session for ln in facts.lines)
