"""deja annotate on real repositories, and blame reading the notes it writes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest
from conftest import commit_env, git
from test_notes_world import S1, S2, S3, World, body, file_claims, make_world

NOTES = "refs/notes/deja"


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return make_world(tmp_path, repo, monkeypatch)


def notes_tip(repo: Path) -> str | None:
    proc = subprocess.run(
        ["git", "rev-parse", "-q", "--verify", NOTES], cwd=repo, capture_output=True, text=True
    )
    return proc.stdout.strip() or None


def add_note(repo: Path, rev: str, doc: dict | str) -> None:
    text = doc if isinstance(doc, str) else orjson.dumps(doc).decode()
    git(repo, "notes", "--ref", NOTES, "add", "-f", "-m", text, rev)


def agent_commit(world: World) -> str:
    world.person("README.md", "# project\n")
    world.commit("init")
    world.write(S1, "src/app.py", body("a", 6))
    world.write(S2, "lib/util.py", body("u", 3))
    world.person("notes.txt", "written by a person\n")
    return world.commit("agent work")


def test_annotate_writes_the_note(world: World) -> None:
    sha = agent_commit(world)
    out = orjson.loads(world.deja("annotate", "--json").stdout)
    stored = world.note()
    assert stored == out
    assert stored["schema"] == 2 and stored["commit"] == sha
    assert stored["tool"].startswith("deja-blame ")
    # [start, end, confidence, written at (epoch seconds)]
    [[a1, b1, c1, w1]] = stored["files"]["src/app.py"][S1]
    [[a2, b2, c2, w2]] = stored["files"]["lib/util.py"][S2]
    assert (a1, b1, c1, a2, b2, c2) == (1, 6, 0.97, 1, 3, 0.97)
    assert set(stored["files"]) == {"src/app.py", "lib/util.py"}
    assert 0 < w1 < w2 < world.clock  # S1 wrote first
    assert set(stored["sessions"]) == {S1, S2}
    info = stored["sessions"][S1]
    assert info["agent"] == "antigravity" and info["started_at"].endswith("Z")
    # no prompt text unless opted in
    assert "first_prompt" not in info
    assert "Please write" not in world.deja("annotate", "HEAD", "--json").stdout.decode()


def test_prompts_only_when_opted_in(world: World) -> None:
    agent_commit(world)
    git(world.repo, "config", "deja.notes.prompts", "true")
    world.deja("annotate")
    assert world.note()["sessions"][S1]["first_prompt"] == "Please write the code."


def test_annotate_is_idempotent(world: World) -> None:
    agent_commit(world)
    world.deja("annotate")
    tip = notes_tip(world.repo)
    proc = world.deja("annotate")
    assert "note unchanged" in proc.stderr.decode()
    assert notes_tip(world.repo) == tip


def test_no_attributed_lines_writes_nothing(world: World) -> None:
    world.person("README.md", "# project\n")
    sha = world.commit("init")
    proc = world.deja("annotate", "--json")
    doc = orjson.loads(proc.stdout)
    assert doc["commit"] == sha and doc["files"] == {}
    assert notes_tip(world.repo) is None
    assert "no note written" in world.deja("annotate").stderr.decode()


def test_annotate_merges_with_the_note_already_there(world: World) -> None:
    sha = agent_commit(world)
    # An earlier note (another machine, other transcripts): S3 claims lines the
    # index gives to S1, and lines of a file this index knows nothing about.
    add_note(
        world.repo,
        sha,
        {
            "schema": 1,
            "tool": "deja-blame 0.0.9",
            "commit": sha,
            "files": {"src/app.py": {S3: [[5, 6, 0.9]]}, "notes.txt": {S3: [[1, 1, 0.8]]}},
            "sessions": {
                S3: {
                    "agent": "antigravity",
                    "project": "/elsewhere",
                    "started_at": "2026-07-16T08:00:00Z",
                }
            },
        },
    )
    world.deja("annotate")
    note = world.note()
    # re-derived from the index: S1's lines; the rest of the old note stays
    assert file_claims(note, "src/app.py") == {i: S1 for i in range(1, 7)}
    assert file_claims(note, "notes.txt") == {1: S3}
    assert file_claims(note, "lib/util.py") == {1: S2, 2: S2, 3: S2}
    # a directory elsewhere on the author's disk does not travel in a note
    assert note["sessions"][S3]["project"] == "-"
    # where the index has nothing to say, the stored note keeps its lines
    world.db.unlink()
    world.deja("annotate", "--no-refresh", env={"DEJA_ANTIGRAVITY_ROOT": str(world.tmp / "none")})
    assert world.note() == note


def test_annotate_a_range(world: World) -> None:
    world.person("README.md", "# project\n")
    base = world.commit("init")
    world.write(S1, "a.py", body("a", 3))
    c1 = world.commit("one")
    world.write(S2, "b.py", body("b", 2))
    c2 = world.commit("two")
    docs = orjson.loads(world.deja("annotate", f"{base}..HEAD", "--json").stdout)
    assert [d["commit"] for d in docs] == [c1, c2]
    assert file_claims(world.note(c1), "a.py") == {1: S1, 2: S1, 3: S1}
    assert file_claims(world.note(c2), "b.py") == {1: S2, 2: S2}


def test_blame_from_notes_alone_in_a_fresh_clone(world: World, tmp_path: Path) -> None:
    agent_commit(world)
    world.write(S3, "src/app.py", (world.repo / "src/app.py").read_text() + body("z", 2))
    world.commit("more")
    world.deja("annotate", "HEAD~2..HEAD")
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(world.repo, "remote", "add", "origin", str(bare))
    git(world.repo, "push", "-q", "origin", "main")
    world.deja("notes", "push")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(bare), str(clone))
    empty = {
        "DEJA_DB": str(tmp_path / "fresh.db"),
        "DEJA_ANTIGRAVITY_ROOT": str(tmp_path / "nothing"),
    }
    world.deja("notes", "fetch", cwd=clone, env=empty)
    assert not (tmp_path / "nothing").exists()
    doc = world.blame("src/app.py", cwd=clone, env=empty)
    assert [ln["session"] for ln in doc["lines"]] == [S1] * 6 + [S3] * 2
    assert {ln["via"] for ln in doc["lines"]} == {"note"}
    assert world.sessions_by_line("lib/util.py", cwd=clone, env=empty) == [S2] * 3
    assert world.sessions_by_line("notes.txt", cwd=clone, env=empty) == [None]
    # deja sessions lists the sessions the notes name, as deja show finds them
    # (newcomer 10 #4: it said none were indexed and to run deja index)
    doc = orjson.loads(world.deja("sessions", "--json", cwd=clone, env=empty).stdout)
    assert doc["sessions"] == []
    noted = {d["session_id"]: d for d in doc["from_notes"]}
    assert set(noted) == {S1, S2, S3} and noted[S3]["lines"] == 2
    out = world.deja("sessions", cwd=clone, env=empty)
    assert "3 sessions known from this repository's notes" in out.stderr.decode()
    assert S1[:8] in out.stdout.decode() and "deja index" not in out.stderr.decode()


def test_plain_git_fetch_of_the_notes_is_enough(world: World, tmp_path: Path) -> None:
    agent_commit(world)
    world.deja("annotate")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(world.repo), str(clone))
    git(clone, "fetch", "-q", "origin", f"{NOTES}:{NOTES}")
    empty = {
        "DEJA_DB": str(tmp_path / "fresh.db"),
        "DEJA_ANTIGRAVITY_ROOT": str(tmp_path / "nothing"),
    }
    assert world.sessions_by_line("src/app.py", cwd=clone, env=empty) == [S1] * 6


def test_where_note_and_index_disagree_the_note_wins(world: World) -> None:
    sha = agent_commit(world)
    world.deja("annotate")
    assert world.sessions_by_line("src/app.py") == [S1] * 6
    note = world.note()
    note["files"]["src/app.py"] = {S1: [[1, 4, 0.97]], S3: [[5, 6, 0.9]]}
    note["sessions"][S3] = {"agent": "antigravity", "project": "-", "started_at": None}
    add_note(world.repo, sha, note)
    lines = world.blame("src/app.py")["lines"]
    assert [ln["session"] for ln in lines] == [S1] * 4 + [S3] * 2
    assert {ln["via"] for ln in lines} == {"note"}


def test_blame_reads_a_concatenated_note(world: World) -> None:
    sha = agent_commit(world)
    a = {"schema": 1, "commit": sha, "files": {"src/app.py": {S1: [[1, 3, 0.97]]}}, "sessions": {}}
    b = {"schema": 1, "commit": sha, "files": {"src/app.py": {S3: [[3, 6, 0.9]]}}, "sessions": {}}
    add_note(world.repo, sha, orjson.dumps(a).decode() + "\n\n" + orjson.dumps(b).decode())
    empty = {
        "DEJA_DB": str(world.tmp / "fresh.db"),
        "DEJA_ANTIGRAVITY_ROOT": str(world.tmp / "nothing"),
    }
    assert world.sessions_by_line("src/app.py", env=empty) == [S1] * 3 + [S3] * 3


def test_annotate_blames_only_the_files_a_session_could_have_written(world: World) -> None:
    """A person's commit of many files: only a file that took a block of a session's
    lines is blamed (and keeps them, moved); one sharing a single line with the
    session's file, and the person's own files, are not looked at."""
    import pygit2

    from deja_blame.attribution.commit import (
        files_worth_blaming,
        introduced_lines,
        written_paths,
    )
    from deja_blame.index.db import connect

    world.person("README.md", "# project\n")
    world.commit("init")
    world.write(S1, "src/app.py", body("a", 6))
    world.commit("agent work")
    app = (world.repo / "src" / "app.py").read_text().splitlines(keepends=True)
    world.person("src/app.py", "".join(app[:3]))  # three lines left app.py ...
    world.person("src/moved.py", "".join(app[3:]))  # ... for moved.py
    world.person("src/one.py", app[0] + "other = compute_other(1)\n")
    for k in range(4):
        world.person(f"src/p{k}.py", body(f"p{k}", 4))
    sha = world.commit("the person moves a block and writes")
    world.index()

    repo = pygit2.Repository(str(world.repo))
    commit = repo[sha]
    conn = connect(world.db)
    try:
        introduced = introduced_lines(repo, commit)
        assert set(introduced) == {"src/moved.py", "src/one.py"} | {
            f"src/p{k}.py" for k in range(4)
        }
        worth = files_worth_blaming(repo, commit, conn, introduced, written_paths(repo, conn))
    finally:
        conn.close()
    assert worth == {"src/moved.py"}
    note = orjson.loads(world.deja("annotate", sha, "--json").stdout)
    assert set(note["files"]) == {"src/moved.py"}
    assert file_claims(note, "src/moved.py") == {1: S1, 2: S1, 3: S1}


def test_a_shallow_clone_is_the_same_repository(world: World, tmp_path: Path) -> None:
    """CI checks out with depth 1: the clone's root commit is where its history was
    cut, not the repository's. The sessions that worked in the full clone still
    count for it (their clone has that commit), as they do for a full clone."""
    world.person("README.md", "# project\n")
    world.commit("init")
    world.write(S1, "src/app.py", body("a", 6))
    world.commit("agent work")
    world.person("notes.txt", "a person's later commit\n")
    world.commit("person")
    world.index()
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{world.repo}", str(shallow)], check=True
    )
    assert git(shallow, "rev-parse", "--is-shallow-repository").strip() == "true"
    assert world.sessions_by_line("src/app.py", cwd=shallow) == [S1] * 6
    # said, since those lines are matched without their history
    said = world.deja("blame", "src/app.py", cwd=shallow).stderr.decode()
    assert "this clone is shallow" in said and "git fetch --unshallow" in said
    assert "shallow" not in world.deja("blame", "src/app.py").stderr.decode()
    # an unrelated repository with the same file is still not the sessions' project
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    (other / "src").mkdir()
    (other / "src" / "app.py").write_text(body("a", 6))
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "unrelated", env=commit_env(world.clock))
    assert world.sessions_by_line("src/app.py", cwd=other) == [None] * 6
