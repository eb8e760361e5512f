"""Sessions from anywhere: a session belongs to the repository by what it wrote.

The sessions here ran on another machine (another user name, Windows) or in a
clone that has since moved: the paths their transcripts name do not exist
here. Each test also changes the session's code after its commit, the case a
check of the working tree (HEAD) judged wrong: the session stays the author
of the commits it wrote, and of what is left of its lines.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import orjson
import pytest
from antigravity_writer import TranscriptWriter
from conftest import commit_env, git
from test_notes_world import S1, S2, T0, World, body, make_world


def remote_session(world: World, sid: str, workspace: str, files: dict[str, str]) -> None:
    """Session ``sid`` ran in ``workspace`` on another machine and wrote ``files``
    (paths relative to it, joined with the workspace's own separator)."""
    sep = "\\" if "\\" in workspace else "/"
    w = TranscriptWriter(world.root, sid, start=world.clock, workspace=None)
    w.user("Please write the code.")
    for rel, content in files.items():
        world.clock += 5
        w.set_time(world.clock)
        w.write_file(workspace + sep + rel.replace("/", sep), content)


def person_commit(world: World, files: dict[str, str], message: str) -> str:
    for rel, content in files.items():
        world.person(rel, content)
    return world.commit(message)


def rewritten(content: str, keep: int) -> str:
    """``content`` with all but its first ``keep`` lines rewritten by a person."""
    lines = content.splitlines(keepends=True)
    return "".join(lines[:keep]) + "".join(
        f"person_line_{i} = rewritten({i})\n" for i in range(len(lines) - keep)
    )


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return make_world(tmp_path, repo, monkeypatch)


def test_a_moved_clone_keeps_a_session_whose_code_changed_since(
    world: World, tmp_path: Path
) -> None:
    """The session ran in the original clone, which has moved away; most of its
    lines were rewritten later. Its commit keeps every line, HEAD what is left."""
    world.write(S1, "src/app.py", body("a", 8))
    first = world.commit("agent work")
    world.person("src/app.py", rewritten(body("a", 8), keep=2))
    world.commit("a person rewrites most of it")
    world.index()
    moved = tmp_path / "elsewhere" / "proj"
    moved.parent.mkdir()
    shutil.move(str(world.repo), moved)  # the session's directory is gone
    assert world.sessions_by_line("src/app.py", cwd=moved) == [S1] * 2 + [None] * 6
    assert world.sessions_by_line("src/app.py", "--rev", first, cwd=moved) == [S1] * 8
    # the commit it wrote is annotated with its lines, from the moved clone
    doc = orjson.loads(world.deja("annotate", first, "--json", cwd=moved).stdout)
    assert [r[:2] for r in doc["files"]["src/app.py"][S1]] == [[1, 8]]


def test_a_session_of_another_user_on_another_machine(world: World) -> None:
    """Alice's session touched only ``src/``: its project is guessed as her
    ``/home/alice/proj/src``, a directory this machine never had."""
    app, util = body("b", 6), body("u", 5)
    remote_session(world, S1, "/home/alice/proj", {"src/app.py": app, "src/util.py": util})
    world.clock += 60
    first = person_commit(world, {"src/app.py": app, "src/util.py": util}, "alice's work")
    person_commit(world, {"src/app.py": rewritten(app, keep=1)}, "later change")
    world.index()
    assert world.sessions_by_line("src/util.py") == [S1] * 5
    assert world.sessions_by_line("src/app.py") == [S1] + [None] * 5
    assert world.sessions_by_line("src/app.py", "--rev", first) == [S1] * 6
    listed = orjson.loads(world.deja("sessions", "--project", ".", "--json").stdout)
    assert [s["session_id"] for s in listed["sessions"]] == [S1]


def test_a_session_recorded_on_windows(world: World) -> None:
    """``C:\\Users\\bob\\proj\\src\\app.py`` is this clone's ``src/app.py``."""
    content = body("w", 7)
    remote_session(world, S1, "C:\\Users\\bob\\proj", {"src/app.py": content})
    world.clock += 60
    first = person_commit(world, {"src/app.py": content}, "bob's work")
    person_commit(world, {"src/app.py": rewritten(content, keep=3)}, "later change")
    world.index()
    assert world.sessions_by_line("src/app.py", "--rev", first) == [S1] * 7
    assert world.sessions_by_line("src/app.py") == [S1] * 3 + [None] * 4
    handed = orjson.loads(world.deja("handoff", "--to", "claude", "--json").stdout)
    assert handed["session_id"] == S1


def test_an_unrelated_project_with_the_same_paths_is_a_stranger(world: World) -> None:
    """Carol's session wrote ``src/app.py`` too, in a project of her own: the two
    files share their boilerplate and nothing else. It gets no line here."""
    shared = "import logging\nlog = logging.getLogger(__name__)\n"
    remote_session(world, S2, "/home/carol/other", {"src/app.py": shared + body("c", 8)})
    world.clock += 60
    mine = shared + body("m", 8)
    person_commit(world, {"src/app.py": mine}, "our own file")
    world.index()
    assert world.sessions_by_line("src/app.py") == [None] * 10
    listed = orjson.loads(world.deja("sessions", "--project", ".", "--json").stdout)
    assert listed["sessions"] == []


def test_identity_reads_the_files_as_the_sessions_commit_left_them(world: World) -> None:
    """Straight from the library: judged at its commit, not at HEAD."""
    from deja_blame.attribution.facts.repository import RepositoryIdentity
    from deja_blame.index.db import connect

    content = body("i", 6)
    remote_session(world, S1, "/Users/dana/code/proj", {"lib/core.py": content})
    world.clock += 60
    person_commit(world, {"lib/core.py": content}, "dana's work")
    person_commit(world, {"lib/core.py": "# gone\n"}, "everything rewritten")
    world.index()
    conn = connect(world.db)
    try:
        (sid,) = conn.execute("SELECT sid FROM sessions WHERE session_id=?", (S1,)).fetchone()
        assert RepositoryIdentity(conn, world.repo).belongs(sid) is True
    finally:
        conn.close()
    # a repository that never held its text: a stranger
    other = world.tmp / "other"
    other.mkdir()
    git(other, "init", "-q")
    (other / "lib").mkdir()
    (other / "lib" / "core.py").write_text(body("z", 6))
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "x", env=commit_env(T0 + 10_000))
    conn = connect(world.db)
    try:
        assert RepositoryIdentity(conn, other).belongs(sid) is False
    finally:
        conn.close()


def test_a_stale_copy_never_hides_the_real_transcript(world: World, tmp_path: Path) -> None:
    """A backup root read first holds the session as it was after its first
    write; the real root has it all. The copy written last is read."""
    world.write(S1, "src/a.py", body("a", 5))
    backup = tmp_path / "backup"
    shutil.copytree(world.root, backup)
    world.write(S1, "src/b.py", body("b", 5))
    world.commit("agent work")
    stale = next(backup.glob("brain/*/.system_generated/logs/*.jsonl"))
    os.utime(stale, (T0 - 86_400, T0 - 86_400))
    roots = f"{backup}{os.pathsep}{world.root}"
    both = {"DEJA_ANTIGRAVITY_ROOT": roots}
    world.deja("index", "-q", env=both)
    assert world.sessions_by_line("src/b.py", env=both) == [S1] * 5


def test_forget_keeps_a_session_out_until_it_is_undone(world: World, tmp_path: Path) -> None:
    """deja forget lasts: through a rebuild, another index and a transcript that goes
    on (deja forget --help's example brought it back: "7 sessions added"), until
    deja forget --undo."""
    world.write(S1, "src/a.py", body("a", 4))
    world.write(S2, "src/b.py", body("b", 4))
    world.commit("agent work")
    world.index()
    other_db = {"DEJA_DB": str(tmp_path / "other.db")}
    world.deja("index", "-q", env=other_db)  # another index, built before
    doc = orjson.loads(world.deja("forget", S1[:8], "--json").stdout)
    assert doc["forgotten"] == S1 and doc["transcript_exists"] is True
    listed = orjson.loads(world.deja("sessions", "--json").stdout)["sessions"]
    assert [s["session_id"] for s in listed] == [S2]
    assert world.sessions_by_line("src/a.py") == [None] * 4
    assert world.sessions_by_line("src/b.py") == [S2] * 4
    unknown = world.deja("forget", "ffffffff", check=False)
    assert unknown.returncode != 0 and b"ffffffff" in unknown.stderr
    kept = tmp_path / "home" / ".config" / "deja" / "forgotten"
    assert kept.read_text() == S1 + "\n" and kept.stat().st_mode & 0o777 == 0o600
    assert orjson.loads(world.deja("forget", "--json").stdout)["forgotten_sessions"] == [S1]
    world.index()  # its transcript did not change: it stays forgotten
    assert world.sessions_by_line("src/a.py") == [None] * 4
    world.write(S1, "src/c.py", body("c", 3))  # the session goes on: still forgotten
    built = orjson.loads(world.deja("index", "--rebuild", "--json").stdout)
    assert built["added"] == 1 and built["forgotten"] == 1
    assert world.sessions_by_line("src/a.py") == [None] * 4
    # the index built before it was forgotten drops it at its next run
    assert orjson.loads(world.deja("index", "--json", env=other_db).stdout)["forgotten"] == 1
    held = orjson.loads(world.deja("sessions", "--json", env=other_db).stdout)["sessions"]
    assert [s["session_id"] for s in held] == [S2]
    assert world.deja("forget", S1, "--json").returncode == 0  # forgotten twice: one line
    assert kept.read_text() == S1 + "\n"
    undone = world.deja("forget", "--undo", S1[:8], "--json").stdout
    assert orjson.loads(undone) == {"undone": S1} and kept.read_text() == ""
    world.index()
    assert world.sessions_by_line("src/a.py") == [S1] * 4
    missing = world.deja("forget", "--undo", S1, check=False)
    assert missing.returncode != 0 and b"no forgotten session" in missing.stderr


def test_forget_says_which_notes_still_name_the_session(world: World) -> None:
    """Newcomer 10 #5: the commit's note still names a forgotten session, and blame
    reads notes first: forget says so, and how such a note can be edited."""
    world.write(S1, "src/a.py", body("a", 4))
    sha = world.commit("agent work")
    world.index()
    world.deja("annotate")
    doc = orjson.loads(world.deja("forget", S1[:8], "--json").stdout)
    assert doc["forgotten"] == S1 and doc["noted_commits"] == [sha]
    assert world.sessions_by_line("src/a.py") == [S1] * 4  # from the note, as it says
    world.deja("forget", "--undo", S1, "--json")
    world.index()
    out = world.deja("forget", S1[:8]).stderr.decode()
    assert "1 commit note of this repository (refs/notes/deja) still names it" in out, out
    assert f"git notes --ref=deja edit COMMIT (first: {sha[:12]})" in out, out


def test_the_attribution_cache_is_not_read_across_identity_rules(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An answer cached under one identity rule is not the answer of another: the
    rule's version is part of the cache key."""
    import pygit2

    from deja_blame.attribution import cache
    from deja_blame.attribution.blame import blame_file
    from deja_blame.attribution.facts import repository as identity
    from deja_blame.index.db import connect
    from deja_blame.notes.store import read_tips

    remote_session(world, S1, "/home/erin/proj", {"src/app.py": body("e", 6)})
    world.clock += 60
    first = person_commit(world, {"src/app.py": body("e", 6)}, "erin's work")
    world.index()
    repo = pygit2.Repository(str(world.repo))
    conn = connect(world.db)
    tips = read_tips(repo)
    try:
        blamed = blame_file(repo, "src/app.py", first, conn, tips=tips)
        sessions = [ln.session for ln in blamed.lines]
        assert sessions == [S1] * 6  # judged hers, and cached
        # new rules that judge her a stranger, under a new version
        monkeypatch.setattr(identity.RepositoryIdentity, "_judge", lambda *a: False)
        monkeypatch.setattr(cache, "IDENTITY_VERSION", identity.IDENTITY_VERSION + 1)
        identity._JUDGED.clear()
        blamed = blame_file(repo, "src/app.py", first, conn, tips=tips)
        sessions = [ln.session for ln in blamed.lines]
        assert sessions == [None] * 6
    finally:
        conn.close()


def test_work_that_lands_after_other_commits_of_the_file(world: World) -> None:
    """Alice's branch is merged after two other commits of the file: the first
    commit after her session is not hers. Her own text, found later, says she
    worked here; text another session wrote there would not."""
    work = body("a", 8)
    remote_session(world, S1, "/home/alice/proj", {"src/app.py": work})
    person_commit(world, {"src/app.py": body("p", 3)}, "main moves on")
    person_commit(world, {"src/app.py": body("q", 3)}, "and again")
    merged = person_commit(world, {"src/app.py": work}, "merge alice's branch")
    world.index()
    assert world.sessions_by_line("src/app.py", "--rev", merged) == [S1] * 8


def test_later_text_another_session_wrote_is_no_evidence(world: World) -> None:
    """Carol's session (another project) wrote the lines a session of this clone
    wrote later: found in a later commit, they are not Carol's evidence."""
    work = body("c", 8)
    remote_session(world, S2, "/home/carol/other", {"src/app.py": work})
    person_commit(world, {"src/app.py": body("p", 3)}, "ours")
    person_commit(world, {"src/app.py": body("q", 3)}, "ours again")
    world.clock += 3600
    world.write(S1, "src/app.py", work)  # this clone's own session
    world.commit("the session here")
    world.index()
    assert world.sessions_by_line("src/app.py") == [S1] * 8
    listed = orjson.loads(world.deja("sessions", "--project", ".", "--json").stdout)
    assert [s["session_id"] for s in listed["sessions"]] == [S1]


def test_a_block_moved_to_another_file_keeps_its_session_in_a_moved_clone(
    world: World, tmp_path: Path
) -> None:
    """The session wrote ``src/old.py``; a person moved its block to ``src/new.py``.
    From a clone elsewhere the moved lines are still the session's (the writes
    of the repository's other files are found by path suffix, not only under
    the clone's own root)."""
    block = body("m", 6)
    world.write(S1, "src/old.py", block)
    world.commit("agent work")
    world.person("src/old.py", "")
    world.person("src/new.py", "# the new home\n" + block)
    moved_at = world.commit("a person moves the block")
    world.index()
    moved = tmp_path / "elsewhere" / "proj"
    moved.parent.mkdir()
    shutil.move(str(world.repo), moved)
    got = world.sessions_by_line("src/new.py", "--rev", moved_at, cwd=moved)
    assert got == [None] + [S1] * 6
    # and the commit's note, built from the moved clone (annotate: deja's hook)
    doc = orjson.loads(world.deja("annotate", moved_at, "--json", cwd=moved).stdout)
    assert [r[:2] for r in doc["files"]["src/new.py"][S1]] == [[2, 7]]


def test_a_two_line_session_belongs_when_its_lines_arrive_with_it(world: World) -> None:
    """Eve's session on another machine wrote a file of two lines; they appear with
    the next commit and were not there before: hers. Dan's one line was in the
    file before his session ran: nothing says it came from him."""
    base = body("base", 6)
    person_commit(world, {"src/util.py": base}, "before")
    world.clock += 3600
    w = TranscriptWriter(world.root, S1, start=world.clock, workspace=None)
    w.user("Add the limits.")
    limits = "limit_high = clamp(LIMITS, 9000)\nlimit_low = clamp(LIMITS, 10)\n"
    world.clock += 5
    w.set_time(world.clock)
    w.write_file("/home/eve/proj/src/limits.py", limits)
    d = TranscriptWriter(world.root, S2, start=world.clock, workspace=None)
    d.user("Look at util.")
    d.set_time(world.clock)
    d.write_file("/home/dan/proj/src/util.py", "value_base_1 = compute_base(1, scale=7)\n")
    first = person_commit(world, {"src/limits.py": limits}, "eve's limits")
    world.index()
    assert world.sessions_by_line("src/limits.py", "--rev", first) == [S1] * 2
    listed = orjson.loads(world.deja("sessions", "--project", ".", "--json").stdout)
    assert [s["session_id"] for s in listed["sessions"]] == [S1]
