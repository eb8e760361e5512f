"""Nothing below a transcript root is followed (transcripts/files.py).

A root may be a link (the user's own setting, like ``--root``); below it a linked
folder or file, a FIFO, a socket or a device is passed over unopened, and
``deja index`` (and ``--json``, and ``deja doctor``) says how many, per root.
Each agent's golden fixture is laid out, and one of its sessions' folder or file
is swapped for a link (or a FIFO); the same content at a real path is the control.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from agent_goldens import GOLDEN_AGENTS, lay_out
from conftest import FIXTURES, deja

from deja_blame.transcripts.files import Skipped
from deja_blame.transcripts.registry import agent_named, discover, read_session
from deja_blame.transcripts.transcript_file import TranscriptFile

# every agent whose store is folders below its root (Aider's root is the folder its
# one history sits in: a link there is the root itself, read; its file is tested below)
WALKING = sorted([*(a for a in GOLDEN_AGENTS if a != "aider"), "antigravity"])


def _laid_out(agent: str, into: Path) -> Path:
    if agent == "antigravity":  # its fixtures are one folder per rule: the demo's sessions
        return Path(shutil.copytree(FIXTURES / "demo", into / "antigravity"))
    return lay_out(agent, into)


def _store(agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    store = _laid_out(agent, tmp_path / "store")
    monkeypatch.setenv(agent_named(agent).root_env, str(store))
    return store


def _victim(agent: str, store: Path) -> TranscriptFile:
    """A session whose transcript sits in a folder below the root (not OpenCode's database)."""
    found = [tf for tf in discover([agent]) if tf.path.parent != store]
    assert found, f"{agent}: no session below a folder of its fixture"
    return found[0]


def _ids(agent: str, skipped: Skipped | None = None) -> set[str]:
    return {tf.session_id for tf in discover([agent], skipped=skipped)}


@pytest.mark.parametrize("agent", WALKING)
def test_a_linked_folder_below_a_root_is_not_followed(
    agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(agent, tmp_path, monkeypatch)
    victim = _victim(agent, store)
    assert victim.session_id in _ids(agent)  # the control: at a real path it is read
    folder = victim.path.parent
    moved = tmp_path / "elsewhere" / folder.name
    shutil.move(str(folder), str(moved))
    folder.symlink_to(moved, target_is_directory=True)
    skipped = Skipped()
    assert victim.session_id not in _ids(agent, skipped)
    assert str(folder) in skipped.to_json()[0]["paths"]
    assert skipped.lines() == [
        f"skipped 1 linked entry under {store} (links are not followed: give a linked store as deja index --root DIR)"
    ]


@pytest.mark.parametrize("agent", [*WALKING, "aider"])
def test_a_linked_transcript_below_a_root_is_not_read(
    agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if agent == "aider":  # its root is the folder of the history file
        store = lay_out(agent, tmp_path / "store")
        monkeypatch.setenv("DEJA_AIDER_ROOT", str(store))
        victim = discover([agent])[0]
    else:
        store = _store(agent, tmp_path, monkeypatch)
        victim = _victim(agent, store)
    before = _ids(agent)
    assert victim.session_id in before
    copy = tmp_path / "elsewhere" / victim.path.name
    copy.parent.mkdir()
    shutil.move(str(victim.path), str(copy))
    victim.path.symlink_to(copy)
    skipped = Skipped()
    assert victim.path not in [tf.path for tf in discover([agent], skipped=skipped)]
    assert skipped.to_json()[0]["links"] == 1


@pytest.mark.parametrize("agent", WALKING)
def test_a_linked_root_is_read(agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _laid_out(agent, tmp_path / "store")
    link = tmp_path / "moved-store"
    link.symlink_to(store, target_is_directory=True)
    monkeypatch.setenv(agent_named(agent).root_env, str(store))
    real = _ids(agent)
    monkeypatch.setenv(agent_named(agent).root_env, str(link))
    skipped = Skipped()
    assert _ids(agent, skipped) == real != set()
    assert not skipped


def test_a_linked_aider_history_file_named_as_its_root_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file root (``AIDER_CHAT_HISTORY_FILE``) is the user's setting: a link there is read."""
    store = lay_out("aider", tmp_path / "store")
    link = tmp_path / "chat.md"
    link.symlink_to(store / ".aider.chat.history.md")
    monkeypatch.setenv("AIDER_CHAT_HISTORY_FILE", str(link))
    (found,) = discover(["aider"])
    assert read_session(found).edits


@pytest.mark.parametrize("agent", WALKING)
def test_a_fifo_below_a_root_does_not_hang_the_index(
    agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(agent, tmp_path, monkeypatch)
    victim = _victim(agent, store)
    others = _ids(agent) - {victim.session_id}
    victim.path.unlink()
    os.mkfifo(victim.path)
    proc = subprocess.run(  # a read of the FIFO would wait for ever: the timeout fails it
        [sys.executable, "-m", "deja_blame", "index", "--agent", agent, "--json"],
        capture_output=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    doc = orjson.loads(proc.stdout)
    assert doc["skipped_entries"] == [
        {"root": str(store), "links": 0, "special": 1, "paths": [str(victim.path)]}
    ]
    # the others are read (OpenCode's session too, from its other message file)
    assert doc["added"] >= len(others)


@pytest.mark.parametrize(
    ("agent", "folder"),
    [("claude-code", "{session}"), ("gemini-cli", "{session}"), ("opencode", "part")],
)
def test_a_linked_folder_of_a_session_s_other_files_is_not_read(
    agent: str, folder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sub-agents' files (Claude Code, Gemini CLI) and OpenCode's parts: read from real
    folders only."""
    store = _store(agent, tmp_path, monkeypatch)
    if agent == "opencode":
        (tf,) = [t for t in discover([agent]) if t.path.suffix == ".json"]
        target = store / "storage" / "part" / "msg_s_a1"
    else:
        (tf,) = [t for t in discover([agent]) if t.parts]
        target = tf.parts[0].parent if agent == "gemini-cli" else tf.path.with_suffix("")
    whole = read_session(tf).to_json()
    moved = tmp_path / "elsewhere" / target.name
    shutil.move(str(target), str(moved))
    target.symlink_to(moved, target_is_directory=True)
    (again,) = [t for t in discover([agent]) if t.session_id == tf.session_id]
    assert again.parts == () or agent == "opencode"
    assert read_session(again).to_json() != whole  # what the linked folder held is not read
    # the control: back at a real path, it is read as before
    target.unlink()
    shutil.move(str(moved), str(target))
    (back,) = [t for t in discover([agent]) if t.session_id == tf.session_id]
    assert read_session(back).to_json() == whole


def test_deja_index_says_what_it_passed_over_once_per_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store("claude-code", tmp_path, monkeypatch)
    projects = sorted((store / "projects").iterdir())
    for project in projects:
        moved = tmp_path / "elsewhere" / project.name
        shutil.move(str(project), str(moved))
        project.symlink_to(moved, target_is_directory=True)
    proc = deja("index", "--agent", "claude-code")
    line = f"deja: skipped 2 linked entries under {store} (links are not followed: give a linked store as deja index --root DIR)"
    assert proc.stderr.decode().splitlines().count(line) == 1
    doc = orjson.loads(deja("index", "--agent", "claude-code", "--json").stdout)
    assert doc["skipped_entries"] == [
        {"root": str(store), "links": 2, "special": 0, "paths": [str(p) for p in projects]}
    ]
    # --root reads the same way; doctor says it too (not a failure)
    proc = deja("index", "--root", str(store), "--json")
    assert orjson.loads(proc.stdout)["skipped_entries"] == []  # nothing of any agent's found
    doctor = orjson.loads(deja("doctor", "--json", check=False).stdout)
    (roots,) = [c for c in doctor["checks"] if c["name"] == "transcript roots"]
    assert "skipped 2 linked entries under" in roots["detail"]


def test_the_refresh_s_quick_look_does_not_follow_a_linked_session_folder(
    tmp_path: Path,
) -> None:
    """``index.changes``: the stat-only look before an answer, at Antigravity's layout."""
    import sqlite3

    from deja_blame.index.changes import changed_transcripts
    from deja_blame.index.db import connect

    root = tmp_path / "agy"
    demo = FIXTURES / "demo" / "brain"
    sessions = sorted(demo.iterdir())[:2]
    (root / "brain").mkdir(parents=True)
    shutil.copytree(sessions[0], root / "brain" / sessions[0].name)
    shutil.copytree(sessions[1], tmp_path / "elsewhere" / sessions[1].name)
    conn: sqlite3.Connection = connect(tmp_path / "index.db")
    try:
        (root / "brain" / sessions[1].name).symlink_to(tmp_path / "elsewhere" / sessions[1].name)
        got = {tf.session_id for tf in changed_transcripts(conn, [root], others=False)}
        assert got == {sessions[0].name}
        # the control, and a linked root: read
        (root / "brain" / sessions[1].name).unlink()
        shutil.copytree(
            tmp_path / "elsewhere" / sessions[1].name, root / "brain" / sessions[1].name
        )
        link = tmp_path / "agy-link"
        link.symlink_to(root, target_is_directory=True)
        got = {tf.session_id for tf in changed_transcripts(conn, [link], others=False)}
        assert got == {s.name for s in sessions}
    finally:
        conn.close()
