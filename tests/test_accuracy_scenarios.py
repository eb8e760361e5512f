"""Attribution accuracy: the bench/accuracy scenarios, small versions, against `deja blame`.

Two layers. The simulator's own truth is checked without blame (the files on
disk and in git are the ones it tracks; every line it gives a session is a line
that session's transcript wrote). Then each scenario runs `deja index` and
`deja blame --json` and must reach precision >= 0.99 and recall >= 0.95.
"""

from __future__ import annotations

import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "accuracy"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import run as accuracy  # noqa: E402
from scenarios import SCENARIOS  # noqa: E402
from sim import PERSON, Line, Score, Sim, Target, normalise, retrack, score_target  # noqa: E402

from deja_blame.transcripts.registry import parse_any  # noqa: E402
from deja_blame.transcripts.shell_writes import command_edits  # noqa: E402

NAMES = list(SCENARIOS)


@lru_cache(maxsize=1)
def blame_available() -> bool:
    proc = subprocess.run(
        [sys.executable, "-m", "deja_blame", "blame", "--help"], capture_output=True
    )
    return proc.returncode == 0


# -- the simulator's truth --------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_truth_matches_files_and_transcripts(name: str, tmp_path: Path) -> None:
    sim = accuracy.build(name, tmp_path, small=True)
    assert sim.targets, "a scenario must ask for at least one blame"
    for t in sim.targets:
        text = "".join(x.text + "\n" for x in t.truth)
        if t.rev is None:
            assert (sim.repo / t.path).read_text() == text
        else:
            assert sim.git("show", f"{t.rev}:{t.path}") == text
    # every line the truth gives a session was written by that session's transcript
    written: dict[str, set[str]] = {}
    for sid, session in sim.sessions.items():
        parsed = parse_any(session.writer.path, session.agent)
        assert parsed.session_id == sid
        # what its shell wrote too (here documents: read from its commands at indexing)
        shell = [e for _, e in command_edits(list(enumerate(parsed.commands)))]
        written[sid] = {
            normalise(line)
            for e in [*parsed.edits, *shell]
            if e.source == "agent"
            for line in e.added
        }
    for t in sim.targets:
        for line in t.truth:
            if line.owner != PERSON:
                text = normalise(line.text)
                # a formatter's split keeps the writer: a piece of a line it wrote
                assert text in written[line.owner] or any(text in w for w in written[line.owner]), (
                    t.path,
                    line.text,
                )


def test_every_scenario_has_agent_lines_and_a_description(tmp_path: Path) -> None:
    for name, sc in SCENARIOS.items():
        assert sc.about
        score = accuracy.truth_only(name, tmp_path / name, small=True)
        assert score.lines > 0
        # in these the person has the last word on every line the sessions wrote
        assert score.agent_lines > 0 or name in (
            "agent_edit_reverted",
            "person_retypes_deleted_code",
        )


def test_retrack_agent_context_keeps_owner_and_written_side_is_the_sessions() -> None:
    old = [Line("def f():", PERSON), Line("    return None", PERSON), Line("", PERSON)]
    new = retrack(old, ["def f():", "    x = 1", "    return x", ""], "S", by_person=False)
    assert [(x.text, x.owner) for x in new] == [
        ("def f():", PERSON),
        ("    x = 1", "S"),
        ("    return x", "S"),
        ("", PERSON),
    ]


def test_retrack_person_reindent_keeps_owner_and_revert_is_the_persons() -> None:
    old = [Line("if (a) {", "S"), Line("  go(1);", "S"), Line("}", "S")]
    reindented = retrack(old, ["if (a) {", "    go(1);", "}"], PERSON, by_person=True)
    assert [x.owner for x in reindented] == ["S", "S", "S"]
    reverted = retrack(reindented, ["if (a) {", "    go(0);", "}"], PERSON, by_person=True)
    assert [x.owner for x in reverted] == ["S", PERSON, "S"]


def test_retrack_a_line_an_edit_removed_and_added_again_is_either_writers() -> None:
    # the session reorders an export list: difflib's hunks remove "MAX_LENGTH," and
    # add it back; git's diff may keep it. Either writer is right for it
    old = [Line("module.exports = {", "A"), Line("  SPEC,", "A"), Line("  MAX_LENGTH,", "A"),
           Line("}", "A")]  # fmt: skip
    new = retrack(old, ["module.exports = {", "  MAX_LENGTH,", "  FLAGS,", "  SPEC,", "}"], "S",
                  by_person=False)  # fmt: skip
    got = {x.text.strip(): (x.owner, x.alt) for x in new}
    assert got["FLAGS,"] == ("S", ())
    assert "A" in (got["MAX_LENGTH,"][0], *got["MAX_LENGTH,"][1])
    assert "S" in (got["MAX_LENGTH,"][0], *got["MAX_LENGTH,"][1])


def test_realhist_text_moved_within_a_file_is_either_writers(tmp_path: Path) -> None:
    # the person moves a session's comment above its function in one release: a
    # retyping or a cut and paste, git cannot tell; the scripted moved_block keeps
    # the writer, the replay's truth says the person: either is right
    from realhist import Replay

    sim = Sim(tmp_path, "moved-within")
    sim.person_write("a.js", "const f = () => {\n  // explains the helper at length\n  go()\n}\n")
    sim.files["a.js"][1].owner = "S"
    before = {p: [(x.text, x.owner) for x in ls] for p, ls in sim.files.items()}
    sim._set(
        "a.js", "// explains the helper at length\nconst f = () => {\n  go()\n}\n", PERSON, True
    )
    assert sim.files["a.js"][0].owner == PERSON
    replay = Replay(sim, "plain", 1)
    replay._keep_moved(before)
    assert sim.files["a.js"][0].owner == PERSON and "S" in sim.files["a.js"][0].alt
    assert replay.restored == 1


# The shape of a real Go test file (214 lines, three table tests of which two are
# copies but for their names): each number is one distinct line text.
GO_TABLE_TESTS = [0, 1, 2, 3, 4, 3, 5, 6, 7, 8, 9, 3, 10, 11, 12, 3, 13, 14, 15, 16, 17, 18, 19, 3, 20, 21, 22, 23, 24, 25, 19, 3, 26, 27, 28, 29, 30, 19, 19, 3, 31, 11, 12, 3, 32, 33, 34, 19, 35, 36, 19, 3, 37, 38, 39, 40, 19, 3, 41, 42, 43, 44, 19, 33, 34, 19, 45, 46, 19, 19, 3, 47, 48, 49, 50, 51, 52, 53, 51, 54, 39, 40, 53, 53, 19, 55, 56, 57, 58, 59, 60, 61, 62, 19, 63, 64, 19, 65, 66, 19, 19, 19, 3, 67, 48, 49, 50, 51, 52, 53, 51, 54, 39, 40, 53, 53, 19, 55, 56, 57, 58, 59, 60, 61, 62, 19, 63, 64, 19, 65, 66, 19, 19, 19, 3, 68, 48, 49, 50, 51, 52, 53, 51, 54, 39, 40, 53, 53, 19, 55, 69, 57, 70, 59, 71, 61, 72, 19, 63, 64, 19, 73, 74, 19, 19, 19, 3, 75, 76, 77, 48, 49, 78, 79, 50, 51, 52, 80, 81, 53, 51, 54, 82, 40, 53, 83, 81, 53, 19, 55, 84, 85, 86, 19, 87, 88, 19, 19, 19, 3, 89, 76, 77, 3, 12, 90, 91, 92, 19, 93, 94, 92, 19, 19]  # fmt: skip


def test_person_edit_in_one_of_two_copied_blocks_keeps_the_others_owners() -> None:
    # difflib's "popular line" junk (a file of 200+ lines) aligned a one-line change
    # inside the first of two copied table tests as the first copy typed again and
    # the second deleted: the person's 32 lines; git's diff changes one line
    texts = [f"\tstep{k}()" for k in GO_TABLE_TESTS]
    old = [Line(t, "S") for t in texts]
    new_texts = list(texts)
    new_texts[85] += "  // reviewed"
    new = retrack(old, new_texts, PERSON, by_person=True)
    assert [i for i, x in enumerate(new) if x.owner == PERSON] == [85]


def test_an_added_block_that_slides_is_either_writers() -> None:
    # a session adds a documented method after another: difflib keeps the old "  }"
    # and calls the last "  }" new; a diff that slides the block up calls the first
    # "  }" new and keeps the last: either writer is right for the traded lines
    old_texts = ["class A {", "  /**", "   * One.", "   */", "  one() {", "    return 1;",
                 "  }", "}"]  # fmt: skip
    old = [Line(t, "P") for t in old_texts]
    new_texts = old_texts[:6] + ["  }", "", "  /**", "   * Two.", "   */", "  two() {",
                                 "    return 2;"] + old_texts[6:]  # fmt: skip
    new = retrack(old, new_texts, "S", by_person=False)
    got = {i: (x.owner, x.alt) for i, x in enumerate(new)}
    assert got[6] == ("P", ("S",))  # the old "  }": or the session's
    assert got[13] == ("S", ("P",))  # the "  }" difflib calls new: or the old one
    assert got[9] == ("S", ())  # the method's own lines are the session's alone


def test_realhist_repeated_blocks_are_either_writers() -> None:
    # two copies of one block by different writers: which copy the diff calls new
    # is difflib's choice for the truth and git's for blame; either is right
    from realhist import mark_ambiguous

    block = ["if ready {", "\tbuild()", "\tcheck()", "}", "done()"]
    lines = [Line(t, "S") for t in block]
    lines += [Line("other()", "S"), Line("more()", "S")]
    lines += [Line(t, PERSON) for t in block]

    class One:
        truth = lines

    sim = type("S", (), {"targets": [One()]})()
    assert mark_ambiguous(sim) > 0  # type: ignore[arg-type]
    assert PERSON in lines[1].alt and "S" in lines[8].alt
    assert lines[5].alt == ()  # a line outside the copies stays as it was


def test_realhist_reads_go_releases_from_git_tags(tmp_path: Path) -> None:
    from realhist import load_git_tag_releases

    repo = tmp_path / "lib"
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    git("init", "-q")
    for version, body in (("v1.0.0", "1"), ("v1.1.0", "2")):
        (repo / "vendor").mkdir(exist_ok=True)
        (repo / "lib.go").write_text(f"package lib\n\nconst V = {body}\n")
        (repo / "vendor" / "dep.go").write_text("package dep\n")
        (repo / "README.md").write_text(body)
        git("add", "-A")
        git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", version)
        git("tag", version)
    git("tag", "not-a-release")
    got = load_git_tag_releases(repo)
    assert [(v, sorted(f)) for v, f in got] == [("1.0.0", ["lib.go"]), ("1.1.0", ["lib.go"])]
    assert got[1][1]["lib.go"].endswith("const V = 2\n")


def test_realhist_squash_drops_a_file_no_commit_held(tmp_path: Path) -> None:
    # a release adds a file and the next one removes it again, both before the
    # person's squashed commit (logrus's terminal_check_aix.go): the file was never
    # in git's index, so it goes from the working tree alone
    from realhist import Replay

    releases = [
        ("1.0.0", {"a.go": "package a\n\nfunc A() {}\n"}),
        ("1.1.0", {"a.go": "package a\n\nfunc A() { B() }\n", "b.go": "package a\n"}),
        ("1.2.0", {"a.go": "package a\n\nfunc A() { C() }\n"}),
        ("1.3.0", {"a.go": "package a\n\nfunc A() { D() }\n"}),
    ]
    sim = Sim(tmp_path, "squash-gone")
    Replay(sim, "squash", 1, lang="go").run(releases, "a")
    assert sorted(sim.files) == ["a.go"] and not (sim.repo / "b.go").exists()
    assert sim.git("ls-files").split() == ["a.go"]
    assert sim.read("a.go") == "package a\n\nfunc A() { D() }\n"


def test_person_move_keeps_owners(tmp_path: Path) -> None:
    sim = Sim(tmp_path, "move")
    sim.person_write("a.py", "a = 1\nb = 2\nc = 3\n")
    sim.files["a.py"][1].owner = "S"
    sim.person_move("a.py", "b = 2", after=None)
    assert [(x.text, x.owner) for x in sim.files["a.py"]] == [
        ("a = 1", PERSON),
        ("c = 3", PERSON),
        ("b = 2", "S"),
    ]
    assert (sim.repo / "a.py").read_text() == "a = 1\nc = 3\nb = 2\n"


def test_identical_trivial_lines_git_reads_otherwise_are_either_writers(tmp_path: Path) -> None:
    # the truth says the session wrote the first "}" and the person's stays below;
    # git's diff of the commit keeps the first and calls the second new: blame
    # follows git, and either reading is right for both lines
    sim = Sim(tmp_path, "git-reading")
    sim.person_write("a.js", "a {\n}\n")
    sim.commit("a")
    sim.person_write("a.js", "a {\n}\n}\n")
    sim.files["a.js"] = [Line("a {", PERSON), Line("}", "S"), Line("}", PERSON)]
    sim.commit("b")
    got = [(x.owner, x.alt) for x in sim.files["a.js"]]
    assert got == [(PERSON, ()), ("S", (PERSON,)), (PERSON, ("S",))]
    assert [(x.owner, x.alt) for x in sim.head["a.js"]] == got  # the commit's truth


def _doc(texts: list[str], sessions: list[str | None]) -> dict:
    return {
        "lines": [
            {"line": i, "text": t, "session": s} for i, (t, s) in enumerate(zip(texts, sessions), 1)
        ]
    }


def test_scoring_counts_precision_recall_and_deals_blank_lines(tmp_path: Path) -> None:
    sim = Sim(tmp_path, "score")
    truth = [
        Line("x = 1", "S"),
        Line("", "S"),
        Line("y = 2", PERSON),
        Line("", PERSON),
        Line("z = 3", "S"),
    ]
    # the blank lines are swapped: still right; z is missed; y is wrongly given
    score = Score("t")
    score.agent_lines = 3
    score_target(
        sim,
        Target("f", None, truth),
        _doc([x.text for x in truth], ["S", None, "S", "S", None]),
        score,
    )
    assert (score.attributed, score.correct, score.found) == (3, 2, 2)
    assert score.precision == pytest.approx(2 / 3)
    assert score.recall == pytest.approx(2 / 3)
    assert [(m.line, m.expected, m.got) for m in score.mismatches] == [
        (3, None, "S"),
        (5, "S", None),
    ]


def test_scoring_accepts_either_writer_of_an_overwritten_line(tmp_path: Path) -> None:
    sim = Sim(tmp_path, "score")
    truth = [Line("a", "B", ("A",)), Line("b", "B"), Line("c", "B", (PERSON,))]
    score = Score("t")
    score_target(sim, Target("f", None, truth), _doc(["a", "b", "c"], ["A", "B", None]), score)
    assert (score.attributed, score.correct, score.found, score.mismatches) == (2, 2, 2, [])


# -- deja blame against the truth -------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_blame_accuracy(name: str, tmp_path: Path) -> None:
    assert blame_available(), "deja blame is not in this build"
    score = accuracy.run_scenario(name, tmp_path, small=True)
    assert score.error is None, score.error
    wrong = "\n".join(
        f"{m.path}@{m.rev or 'worktree'}:{m.line} expected {m.expected} got {m.got} | {m.text}"
        for m in score.mismatches
    )
    assert score.precision >= accuracy.PRECISION_GOAL, wrong
    assert score.recall >= accuracy.RECALL_GOAL, wrong


def test_the_notes_mode_blames_an_annotated_history(tmp_path: Path) -> None:
    """``--notes``: the history is annotated before blame (the hooks' steady state), so
    the answers come from the commits' notes: the scenario still meets the goal."""
    sim = accuracy.build("agent_writes_person_commits", tmp_path, small=True)
    score = sim.run_deja(notes=True)
    assert score.error is None, score.error
    assert sim.git("notes", "--ref=deja", "list").strip(), "no note was written"
    assert score.precision >= accuracy.PRECISION_GOAL
    assert score.recall >= accuracy.RECALL_GOAL
