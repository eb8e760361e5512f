"""deja notes push / fetch against a real bare repository on disk, with two clones."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest
from conftest import git
from test_notes_world import S1, S2, S3, T0, World, body, file_claims, make_world

NOTES = "refs/notes/deja"


def rev(repo: Path, ref: str) -> str | None:
    proc = subprocess.run(
        ["git", "rev-parse", "-q", "--verify", ref], cwd=repo, capture_output=True, text=True
    )
    return proc.stdout.strip() or None


@pytest.fixture
def two(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[World, World, Path]:
    """Alice (the original repo) and Bob (a clone) around a bare origin; each has own transcripts."""
    alice = make_world(tmp_path, repo, monkeypatch)
    alice.person("README.md", "# project\n")
    alice.person("other.py", body("o", 3))
    alice.commit("init")
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "-u", "origin", "main")
    bob_repo = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(bare), str(bob_repo))
    bob = World(tmp_path, bob_repo, name="bob-agy")
    bob.clock = alice.clock
    return alice, bob, bare


def publish(world: World, message: str) -> str:
    """Commit what ``world``'s sessions wrote, push it, note it and push the notes:
    a clone's whole round before another clone pulls. The commit's id."""
    sha = world.commit(message)
    git(world.repo, "push", "-q", "origin", "main")
    world.deja("annotate")
    world.deja("notes", "push")
    return sha


def remote_note(bare: Path, commit: str) -> dict | None:
    proc = subprocess.run(
        ["git", "notes", "--ref", NOTES, "show", commit], cwd=bare, capture_output=True
    )
    return orjson.loads(proc.stdout) if proc.returncode == 0 else None


def test_push_then_fetch_in_another_clone(two: tuple[World, World, Path]) -> None:
    alice, bob, bare = two
    alice.write(S1, "app.py", body("a", 4))
    sha = alice.commit("agent work")
    git(alice.repo, "push", "-q", "origin", "main")
    alice.deja("annotate")
    doc = orjson.loads(alice.deja("notes", "push", "--json").stdout)
    assert doc["pushed"] == rev(alice.repo, NOTES) and doc["attempts"] == 1
    assert rev(alice.repo, "refs/notes/deja-remote/origin") == doc["pushed"]
    assert file_claims(remote_note(bare, sha), "app.py") == {i: S1 for i in range(1, 5)}
    git(bob.repo, "pull", "-q")
    out = orjson.loads(bob.deja("notes", "fetch", "--json").stdout)
    assert out["ref"] == "refs/notes/deja-remote/origin"
    assert out["merge"]["kind"] == "created"
    assert bob.sessions_by_line("app.py") == [S1] * 4
    again = orjson.loads(bob.deja("notes", "fetch", "--json").stdout)
    assert again["merge"]["kind"] == "up-to-date"


def test_fetch_when_the_remote_has_no_notes(two: tuple[World, World, Path]) -> None:
    alice, bob, bare = two
    proc = bob.deja("notes", "fetch")
    assert "origin has no deja notes yet" in proc.stderr.decode()
    assert rev(bob.repo, NOTES) is None


def test_push_without_notes_or_to_an_unknown_remote_fails_in_one_line(
    two: tuple[World, World, Path],
) -> None:
    alice, bob, bare = two
    proc = bob.deja("notes", "push", check=False)
    assert proc.returncode == 1
    assert proc.stderr.decode().splitlines()[0] == "deja: error: there are no deja notes to push"
    proc = bob.deja("notes", "fetch", "upstream", check=False)
    assert proc.returncode == 1
    assert proc.stderr.decode().startswith("deja: error: no remote named 'upstream'")


def test_push_after_the_remote_moved_merges_first(two: tuple[World, World, Path]) -> None:
    alice, bob, bare = two
    alice.write(S1, "app.py", body("a", 3))
    a_sha = alice.commit("alice's agent")
    git(alice.repo, "push", "-q", "origin", "main")
    git(bob.repo, "pull", "-q")
    bob.write(S2, "lib.py", body("l", 2))
    b_sha = bob.commit("bob's agent")
    alice.deja("annotate")
    bob.deja("annotate")
    alice.deja("notes", "push")
    local_before = rev(bob.repo, NOTES)
    doc = orjson.loads(bob.deja("notes", "push", "--json").stdout)  # rejected once, then merged
    assert doc["attempts"] == 2 and doc["merges"] == 1
    pushed = rev(bare, NOTES)
    assert pushed == rev(bob.repo, NOTES) != local_before
    parents = git(bare, "log", "-1", "--format=%P", NOTES).split()
    assert set(parents) == {local_before, rev(alice.repo, NOTES)}  # a merge, not a force
    assert file_claims(remote_note(bare, a_sha), "app.py") == {1: S1, 2: S1, 3: S1}
    assert file_claims(remote_note(bare, b_sha), "lib.py") == {1: S2, 2: S2}
    alice.deja("notes", "fetch")
    assert rev(alice.repo, NOTES) == pushed  # a fast-forward for alice


def test_both_sides_noted_the_same_commit_the_json_is_merged(
    two: tuple[World, World, Path],
) -> None:
    """Two machines, two sets of transcripts, one commit: the notes are unioned,
    never one overwriting the other; where both claim a line, the local one stays."""
    alice, bob, bare = two
    alice.write(S1, "app.py", body("a", 4))
    alice.person("extra.py", body("x", 3))  # alice's transcripts do not know who wrote it
    sha = alice.commit("agent work")
    git(alice.repo, "push", "-q", "origin", "main")
    git(bob.repo, "pull", "-q")
    # Bob's machine saw session S2 write extra.py and S3 write app.py's last line, early on
    w = bob.session(S2)
    w.set_time(T0 - 3600)
    w.write_file(str(bob.repo / "extra.py"), body("x", 3))
    w3 = bob.session(S3)
    w3.set_time(T0 - 3000)
    w3.write_file(str(bob.repo / "app.py"), body("a", 4).splitlines(keepends=True)[3])
    alice.deja("annotate")
    bob.deja("annotate", sha)
    bob_note = bob.note(sha)
    assert file_claims(bob_note, "extra.py") == {1: S2, 2: S2, 3: S2}
    bob.deja("notes", "push")
    out = orjson.loads(alice.deja("notes", "fetch", "--json").stdout)
    assert out["merge"] == {
        "kind": "merge",
        "taken": 0,
        "merged": 1,
        "kept": 0,
        "skipped": 0,
        "restored": 0,
    }
    merged = alice.note(sha)
    assert file_claims(merged, "app.py") == {i: S1 for i in range(1, 5)}  # alice's lines stay
    assert file_claims(merged, "extra.py") == {1: S2, 2: S2, 3: S2}  # bob's are added
    assert set(merged["sessions"]) == {S1, S2}
    assert file_claims(bob_note, "app.py") == {4: S3}  # bob's own claim, which alice's beat
    alice.deja("notes", "push")
    out = orjson.loads(bob.deja("notes", "fetch", "--json").stdout)
    assert out["merge"]["kind"] == "fast-forward"  # alice's merge already holds bob's note
    assert bob.note(sha) == merged


def test_fetch_keeps_local_notes_the_remote_never_had(two: tuple[World, World, Path]) -> None:
    alice, bob, bare = two
    alice.write(S1, "app.py", body("a", 2))
    a_sha = publish(alice, "alice")
    git(bob.repo, "pull", "-q")
    bob.write(S2, "lib.py", body("l", 2))
    b_sha = bob.commit("bob")
    bob.deja("annotate")
    out = orjson.loads(bob.deja("notes", "fetch", "--json").stdout)
    assert out["merge"]["kind"] == "merge" and out["merge"]["taken"] == 1
    assert bob.note(a_sha) is not None and bob.note(b_sha) is not None


def test_notes_of_commits_this_clone_lacks_are_skipped_not_fatal(
    two: tuple[World, World, Path],
) -> None:
    # Alice annotates a commit she has not pushed (normal use) and pushes her notes;
    # Bob, with notes of his own, fetches and pushes: both work, nothing crashes
    alice, bob, bare = two
    alice.write(S1, "app.py", body("a", 3))
    unpushed = alice.commit("alice's local work")
    alice.deja("annotate")
    alice.deja("notes", "push")
    bob.write(S2, "lib.py", body("l", 2))
    b_sha = bob.commit("bob's agent")
    bob.deja("annotate")
    out = orjson.loads(bob.deja("notes", "fetch", "--json").stdout)
    assert out["merge"]["kind"] == "merge" and out["merge"]["skipped"] == 1
    said = bob.deja("notes", "fetch").stderr.decode()
    assert "deja:" in said
    bob.deja("notes", "push")
    assert file_claims(remote_note(bare, b_sha), "lib.py") == {1: S2, 2: S2}
    assert not list((bob.repo / ".git").glob("fast_import_crash_*"))
    # once Bob has the commit, its note arrives with the next fetch
    git(alice.repo, "push", "-q", "origin", "main")
    git(bob.repo, "pull", "-q", "--no-rebase")
    assert remote_note(bare, unpushed) is not None


def test_push_names_the_remote_s_url_and_a_dry_run_sends_nothing(
    two: tuple[World, World, Path],
) -> None:
    """In a clone of someone else's project, origin is theirs: the success line names
    where the notes went, and --dry-run says what would go where, sending nothing
    (newcomer 16 #7). A user and password in the URL are never printed."""
    alice, bob, bare = two
    alice.write(S1, "app.py", body("a", 4))
    alice.commit("agent work")
    git(alice.repo, "push", "-q", "origin", "main")
    alice.deja("annotate")
    tip = rev(alice.repo, NOTES)
    assert tip is not None
    dry = alice.deja("notes", "push", "--dry-run")
    assert dry.stderr.decode().splitlines() == [
        f"deja: would push refs/notes/deja (notes commit {tip[:12]}) to origin ({bare});"
        " nothing sent (dry run)"
    ]
    assert rev(bare, NOTES) is None  # nothing sent
    doc = orjson.loads(alice.deja("notes", "push", "--dry-run", "--json").stdout)
    assert doc | {"url": ""} == {
        "remote": "origin", "pushed": None, "attempts": 0, "merges": 0, "url": "",
        "dry_run": True, "would_push": tip, "fast_forward": True,
    }  # fmt: skip
    assert doc["url"] == str(bare)
    assert rev(bare, NOTES) is None
    pushed = alice.deja("notes", "push")
    assert pushed.stderr.decode().splitlines() == [
        f"deja: pushed refs/notes/deja to origin ({bare})"
    ]
    assert rev(bare, NOTES) == tip
    git(
        alice.repo,
        "remote",
        "set-url",
        "--push",
        "origin",
        "https://me:s3cret@example.invalid/p.git",
    )
    from deja_blame.gitutil import open_repository
    from deja_blame.notes.share import push_url

    assert push_url(open_repository(alice.repo), "origin") == "https://example.invalid/p.git"
