"""The travel capability as a person meets it, from nothing: a fresh HOME, no
index, ``deja hooks install`` (the hook in the background, as installed), an
agent session, ``git commit && deja notes push``, an amend right after, and a
reviewer's clone with the notes and no transcripts."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from conftest import deja, git
from test_notes_world import S1, World, body, make_world


@pytest.fixture
def author(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    w = make_world(tmp_path, repo, monkeypatch)
    monkeypatch.delenv("DEJA_HOOK_SYNC", raising=False)
    # no index yet, where a new user's would be
    w.db = tmp_path / "home" / ".local" / "share" / "deja" / "index.db"
    w.env["DEJA_DB"] = str(w.db)
    monkeypatch.setenv("DEJA_DB", str(w.db))
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    w.person("README.md", "# shop\n")
    w.commit("init")
    git(repo, "push", "-q", "origin", "main")
    assert not w.db.exists()
    return w


def remote_note(world: World, sha: str) -> dict[str, object] | None:
    bare = world.tmp / "origin.git"
    proc = git(bare, "for-each-ref", "refs/notes/deja")
    if not proc.strip():
        return None
    try:
        return orjson.loads(git(bare, "notes", "--ref", "refs/notes/deja", "show", sha))
    except AssertionError:
        return None


def test_first_commit_after_install_gets_its_note_and_travels(author: World) -> None:
    w = author
    out = w.deja("hooks", "install").stdout.decode() + w.deja("hooks", "status").stdout.decode()
    assert "time budget: 30 s" in out
    w.write(S1, "src/cart.py", body("cart", 6))
    sha = w.commit("agent work")  # the hook goes to the background, git returns
    # right away, as a person types it: the note of that very commit is pushed
    push = w.deja("notes", "push")
    assert push.returncode == 0
    note = remote_note(w, sha)
    assert note is not None, push.stderr.decode()
    assert S1 in note["files"]["src/cart.py"]  # type: ignore[index]
    assert w.db.exists()  # the hook built the index itself

    # an amend right after keeps the attribution (post-rewrite, also in the background)
    w.git("commit", "-q", "--amend", "-m", "agent work, reworded")
    amended = w.head()
    git(w.repo, "push", "-q", "origin", "main")
    w.deja("notes", "push")
    assert amended != sha
    assert remote_note(w, amended) is not None
    author_blame = w.blame("src/cart.py")

    # a reviewer: a clone, the notes, no transcripts, no index, no hooks
    clone = w.tmp / "review"
    git(w.tmp, "clone", "-q", str(w.tmp / "origin.git"), str(clone))
    empty = w.tmp / "reviewer-home-transcripts"
    empty.mkdir()
    env = {
        "DEJA_DB": str(w.tmp / "reviewer-index.db"),
        "DEJA_ANTIGRAVITY_ROOT": str(empty),
    }
    deja("notes", "fetch", cwd=clone, env=env)
    seen = orjson.loads(deja("blame", "src/cart.py", "--json", cwd=clone, env=env).stdout)
    assert [ln["session"] for ln in seen["lines"]] == [S1] * 6
    # the same fields as the author's blame from the index: time written, confidence
    for mine, theirs in zip(author_blame["lines"], seen["lines"]):
        assert theirs["via"] == "note"
        assert theirs["written_at"] == mine["written_at"] and theirs["written_at"]
        assert theirs["confidence"] == mine["confidence"]
    info = seen["sessions"][S1]
    # the repository-relative fact, not the author's disk
    assert info["project"] == "." and info["started_at"]
    why = deja("why", "src/cart.py:2", cwd=clone, env=env).stdout.decode()
    assert S1[:8] in why and str(w.repo) not in why and "started ?" not in why
    show = deja("show", S1[:8], cwd=clone, env=env).stdout.decode()
    assert "from this repository's notes" in show and "src/cart.py  6 lines (1-6)" in show
    shown = orjson.loads(deja("show", S1[:8], "--json", cwd=clone, env=env).stdout)
    assert shown["from_notes"] and shown["session_id"] == S1 and shown["started_at"]
    assert shown["commits"][0]["files"]["src/cart.py"]["lines"] == 6
    doctor = deja("doctor", cwd=clone, env=env, check=False)
    assert doctor.returncode == 0, doctor.stdout.decode()
    assert "reviewer's clone" in doctor.stdout.decode()
    report = orjson.loads(
        deja("report", "HEAD~1..HEAD", "--format", "json", cwd=clone, env=env).stdout
    )
    assert report["totals"]["by_sessions"] == 6, report["totals"]


def test_a_busy_index_at_commit_time_is_waited_for(author: World) -> None:
    import sqlite3
    import threading
    import time

    w = author
    w.deja("hooks", "install")
    w.deja("index", "-q")  # the index exists; another deja will hold it
    w.write(S1, "src/cart.py", body("cart", 4))
    holder = sqlite3.connect(w.db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # a long write by another process

    def release() -> None:
        time.sleep(3)
        holder.execute("ROLLBACK")
        holder.close()

    threading.Thread(target=release).start()
    started = time.monotonic()
    sha = w.commit("agent work")
    assert time.monotonic() - started < 3  # git did not wait
    w.deja("notes", "push")  # waits for the background job
    note = remote_note(w, sha)
    assert note is not None and S1 in note["files"]["src/cart.py"]  # type: ignore[index]
