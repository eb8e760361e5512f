"""deja annotate --all: the history's notes, root commit included, resumable, idempotent,
re-derived when a transcript that concerns a commit arrives later; and blame of a
commit with a note is the same answer in the author's clone and a reviewer's."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest
from conftest import git, run_deja
from test_notes_world import S1, S2, S3, World, body, file_claims, make_world

from deja_blame.gitutil import open_repository
from deja_blame.index.db import connect
from deja_blame.notes import annotate_all
from deja_blame.notes.annotate_all import HistoryState, annotate_history
from deja_blame.notes.derived_from import session_key

NOTES = "refs/notes/deja"


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return make_world(tmp_path, repo, monkeypatch)


def notes_tip(repo: Path) -> str | None:
    proc = subprocess.run(
        ["git", "rev-parse", "-q", "--verify", NOTES], cwd=repo, capture_output=True, text=True
    )
    return proc.stdout.strip() or None


def noted(repo: Path) -> set[str]:
    """The commits that have a note."""
    proc = subprocess.run(["git", "notes", "--ref", NOTES, "list"], cwd=repo, capture_output=True)
    return {line.split()[1] for line in proc.stdout.decode().splitlines()}


def history(world: World) -> list[str]:
    """An agent scaffolds the project in the root commit, then five commits: three of
    sessions, two of a person. Returns the commits, oldest first."""
    world.write(S1, "src/app.py", body("a", 6))
    world.person("README.md", "# project\n")
    shas = [world.commit("scaffold")]
    world.write(S1, "src/app.py", (world.repo / "src/app.py").read_text() + body("b", 3))
    shas.append(world.commit("more app"))
    world.person("docs.txt", "by hand\n")
    shas.append(world.commit("docs"))
    world.write(S2, "lib/util.py", body("u", 4))
    shas.append(world.commit("util"))
    world.person("README.md", "# project\n\nmore words\n")
    shas.append(world.commit("readme"))
    world.write(S2, "lib/util.py", (world.repo / "lib/util.py").read_text() + body("v", 2))
    shas.append(world.commit("more util"))
    return shas


def run_all(world: World, *args: str, cwd: Path | None = None, **kw: object) -> dict:
    return orjson.loads(world.deja("annotate", "--all", "--json", *args, cwd=cwd, **kw).stdout)


def test_all_annotates_every_touched_commit_root_included(world: World) -> None:
    shas = history(world)
    root = shas[0]
    # a range never includes its first commit: the root's lines stayed people's
    world.deja("annotate", f"{root}..HEAD")
    assert world.note(root) is None
    out = run_all(world)
    assert file_claims(world.note(root), "src/app.py") == {i: S1 for i in range(1, 7)}
    assert file_claims(world.note(shas[1]), "src/app.py") == {i: S1 for i in range(7, 10)}
    assert file_claims(world.note(shas[3]), "lib/util.py") == {i: S2 for i in range(1, 5)}
    assert file_claims(world.note(shas[5]), "lib/util.py") == {5: S2, 6: S2}
    # the person's commits touch no file a session wrote: skipped, no note
    assert noted(world.repo) == {shas[0], shas[1], shas[3], shas[5]}
    assert out["commits"] == 6 and out["touched"] == 4 and out["left"] == 0
    # the root's note was written now; the others were the range's and are up to date
    assert out["written"] == [root] and out["fresh"] == 3
    # each note says what it was computed from
    assert world.note(root)["derived_from"] == {session_key(S1): 6}
    assert world.note(shas[5])["derived_from"] == {session_key(S2): 6}


def test_all_is_idempotent(world: World) -> None:
    history(world)
    first = run_all(world)
    assert len(first["written"]) == 4
    tip = notes_tip(world.repo)
    again = run_all(world)
    assert again["written"] == [] and again["derived"] == 0 and again["fresh"] == 4
    assert notes_tip(world.repo) == tip


def test_a_commit_with_no_attributed_line_is_not_derived_again(world: World) -> None:
    world.write(S1, "app.py", body("a", 3))
    world.commit("agent")
    # a person rewrites the session's file: it concerns the session, but no line is its
    world.person("app.py", "print('by hand')\n")
    person = world.commit("by hand")
    out = run_all(world)
    assert out["touched"] == 2 and out["derived"] == 2 and world.note(person) is None
    again = run_all(world)
    assert again["derived"] == 0 and again["fresh"] == 2 and again["fresh_none"] == 1
    # and the summary says so, not "2 up to date" beside one note
    said = world.deja("annotate", "--all").stderr.decode()
    assert "1 up to date, 1 with no attributed lines" in said, said
    # the commits counted are those since the first session (newcomer 8: "5 commits" of 6)
    assert "commits since the first indexed session, 2 touched by sessions" in said, said


def test_all_is_resumable_after_an_interrupt(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    shas = history(world)
    world.index()
    monkeypatch.setattr(annotate_all, "FLUSH_COMMITS", 1)  # a notes commit per commit
    repo = open_repository(world.repo)
    conn = connect(world.db)

    def stop_after_two(done: int, todo: int, written: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        annotate_history(repo, conn, on_progress=stop_after_two)
    kept = noted(world.repo)
    assert kept == {shas[0], shas[1]}  # what was done before Ctrl-C is kept
    assert HistoryState(repo).done is None  # not a complete pass
    rest = annotate_history(repo, conn)
    assert (
        rest.fresh == 2 and rest.derived == 2 and sorted(rest.written) == sorted([shas[3], shas[5]])
    )
    assert noted(world.repo) == {shas[0], shas[1], shas[3], shas[5]}
    assert annotate_history(repo, conn).derived == 0


def test_interrupt_on_the_command_line_says_how_to_finish(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    history(world)
    real = annotate_all.derive_commit
    calls: list[str] = []

    def ctrl_c_at_the_second(*args: object, **kw: object) -> object:
        calls.append("x")
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(annotate_all, "derive_commit", ctrl_c_at_the_second)
    monkeypatch.chdir(world.repo)
    result = run_deja("annotate", "--all")
    assert result.exit_code == 130
    assert "run deja annotate --all again to finish" in result.output
    assert len(noted(world.repo)) == 1  # the first commit's note, written on the way out
    monkeypatch.setattr(annotate_all, "derive_commit", real)
    out = run_all(world)
    assert out["fresh"] == 1 and out["derived"] == 3


def test_a_stale_note_is_re_derived_when_a_later_transcript_arrives(
    world: World, tmp_path: Path
) -> None:
    world.person("README.md", "# project\n")
    world.commit("init")
    world.write(S1, "app.py", body("a", 3))
    # S3 writes to the same file before the commit, but its transcript is elsewhere
    # (another machine's copy, synced later)
    world.write(S3, "app.py", body("a", 3) + body("c", 2))
    sha = world.commit("two sessions")
    later = tmp_path / "later"
    world.hold_back(S3, later)
    run_all(world)
    assert file_claims(world.note(sha), "app.py") == {1: S1, 2: S1, 3: S1}
    assert set(world.note(sha)["derived_from"]) == {session_key(S1)}
    assert run_all(world)["derived"] == 0
    # the transcript arrives: the note no longer says all the index knows
    world.sync(later)
    out = run_all(world)
    assert out["derived"] == 1 and out["written"] == [sha]
    assert file_claims(world.note(sha), "app.py") == {1: S1, 2: S1, 3: S1, 4: S3, 5: S3}
    assert set(world.note(sha)["derived_from"]) == {session_key(S1), session_key(S3)}
    assert run_all(world)["derived"] == 0


def test_a_note_without_derived_from_is_re_derived_once(world: World) -> None:
    world.write(S1, "app.py", body("a", 3))
    sha = world.commit("agent")
    old = {
        "schema": 2,
        "commit": sha,
        "files": {"app.py": {S2: [[1, 1, 0.9]]}},
        "sessions": {S2: {"agent": "antigravity"}},
    }
    git(world.repo, "notes", "--ref", NOTES, "add", "-m", orjson.dumps(old).decode(), sha)
    out = run_all(world)
    assert out["written"] == [sha]
    # re-derived lines win; what the old note said elsewhere is kept
    assert file_claims(world.note(sha), "app.py") == {1: S1, 2: S1, 3: S1}
    assert world.note(sha)["derived_from"] == {session_key(S1): 3}
    assert run_all(world)["derived"] == 0


def test_sessions_from_another_path_annotate_a_clone_elsewhere(
    world: World, tmp_path: Path
) -> None:
    shas = history(world)
    clone = tmp_path / "elsewhere" / "checkout"
    git(tmp_path, "clone", "-q", str(world.repo), str(clone))
    # the sessions wrote under world.repo: another machine's path, for this clone
    out = run_all(world, cwd=clone)
    assert out["touched"] == 4 and len(out["written"]) == 4
    assert noted(clone) == {shas[0], shas[1], shas[3], shas[5]}
    assert file_claims(world.note(shas[0], cwd=clone), "src/app.py") == {i: S1 for i in range(1, 7)}
    assert noted(world.repo) == set()  # the other clone is left alone


def test_a_reviewers_clone_with_only_notes_blames_as_the_author(
    world: World, tmp_path: Path
) -> None:
    history(world)
    # a person moves code around after the agents: blame crosses several commits
    text = (world.repo / "src/app.py").read_text().splitlines(keepends=True)
    world.person("src/app.py", "".join(text[6:] + ["# by hand\n"] + text[:6]))
    world.commit("reorder")
    run_all(world)
    reviewer = tmp_path / "reviewer"
    git(tmp_path, "clone", "-q", str(world.repo), str(reviewer))
    git(reviewer, "fetch", "-q", "origin", f"{NOTES}:{NOTES}")
    empty = {
        "DEJA_DB": str(tmp_path / "reviewer.db"),
        "DEJA_ANTIGRAVITY_ROOT": str(tmp_path / "no-transcripts"),
    }
    for rel in ("src/app.py", "lib/util.py", "README.md", "docs.txt"):
        author = world.blame(rel)
        theirs = world.blame(rel, cwd=reviewer, env=empty)
        fields = ("line", "commit", "session", "source", "confidence", "written_at")
        assert [{k: ln.get(k) for k in fields} for ln in theirs["lines"]] == [
            {k: ln.get(k) for k in fields} for ln in author["lines"]
        ], rel
        assert {ln["via"] for ln in theirs["lines"] if ln["session"]} <= {"note"}
    sessions = [ln["session"] for ln in world.blame("src/app.py", cwd=reviewer, env=empty)["lines"]]
    assert sessions == [S1] * 3 + [None] + [S1] * 6


def test_all_needs_no_rev(world: World) -> None:
    history(world)
    proc = world.deja("annotate", "--all", "HEAD", check=False)
    assert proc.returncode == 2 and b"--all takes no REV" in proc.stderr


def test_the_hooks_annotate_the_history_in_the_background_and_re_derive_later(
    world: World, tmp_path: Path
) -> None:
    from test_hooks_faults import commit

    from deja_blame.hooks.pending import wait_for_hook_jobs

    # made before the hooks: no notes. S3's transcript of "util" arrives later.
    world.write(S1, "app.py", body("a", 4))
    root = world.commit("scaffold")
    world.write(S2, "util.py", body("u", 3))
    world.write(S3, "util.py", body("u", 3) + body("w", 2))
    util = world.commit("util")
    later = tmp_path / "later"
    world.hold_back(S3, later)
    world.deja("hooks", "install")
    git(world.repo, "config", "deja.hook.timeout", "60")  # python's start on a loaded machine
    jobs = world.repo / ".git" / "deja"
    world.write(S1, "new.py", body("n", 2))
    commit(world, "first hooked commit")
    assert wait_for_hook_jobs(jobs, limit=90)
    assert noted(world.repo) == {root, util, world.head()}
    assert file_claims(world.note(root), "app.py") == {i: S1 for i in range(1, 5)}
    assert file_claims(world.note(util), "util.py") == {1: S2, 2: S2, 3: S2}
    # the transcript arrives; the next commit's hook re-derives the note it concerns
    world.sync(later)
    world.person("other.txt", "by hand\n")
    commit(world, "second hooked commit")
    assert wait_for_hook_jobs(jobs, limit=90)
    assert file_claims(world.note(util), "util.py") == {1: S2, 2: S2, 3: S2, 4: S3, 5: S3}
    assert set(world.note(util)["derived_from"]) == {session_key(S2), session_key(S3)}


def test_doctor_says_when_a_late_transcript_left_a_commit_without_its_note(
    world: World, tmp_path: Path
) -> None:
    """Newcomer 15 #4: a commit made while its session's transcript was elsewhere gets
    no note; once the transcript is indexed, doctor (not only annotate --all) says so,
    as a warning (exit 0), and says nothing once the notes are written."""

    def history_check() -> tuple[int, dict | None]:
        proc = world.deja("doctor", "--json", check=False)
        doc = orjson.loads(proc.stdout)
        found = [c for c in doc["checks"] if c["name"] == "history notes"]
        return proc.returncode, found[0] if found else None

    world.write(S1, "app.py", body("a", 3))
    world.commit("agent")
    world.write(S2, "lib/late.py", body("l", 4))
    late = world.commit("late session")
    held = tmp_path / "later"
    world.hold_back(S2, held)
    world.index()
    # no notes here, ever (no pass, no hooks): notes are optional, no warning
    assert history_check()[1] is None
    run_all(world)
    assert world.note(late) is None
    assert history_check()[1] is None  # the last pass is current: nothing read
    world.sync(held)
    world.index()
    code, check = history_check()
    assert code == 0 and check is not None, check
    assert check["ok"] and check["fix"] == "deja annotate --all"
    assert check["detail"].startswith("1 commit of the branch that sessions wrote"), check
    assert "up to 1 note to write, as a commit whose lines all turn out" in check["detail"]
    text = world.deja("doctor", check=False).stdout.decode()
    assert "warn  history notes" in text and "deja annotate --all" in text, text
    # --pending writes only the notes a hook left late, and says what it does not
    pending = world.deja("annotate", "--pending").stderr.decode()
    assert pending == (
        "deja: no late notes; but 1 commit of the branch that sessions wrote to the files"
        " of has no up-to-date note (a transcript indexed after the commit): deja annotate"
        " --all writes them\n"
    ), pending
    assert run_all(world)["written"] == [late]
    assert history_check() == (0, None)
    assert world.deja("annotate", "--pending").stderr.decode() == "deja: no late notes\n"
