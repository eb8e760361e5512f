"""Cursor, Windsurf and Continue record no times: a record is dated by when the index
first saw it, not by the file's time now. A chat that goes on after the person
committed the agent's edit (one more question) moves the file's time past the
commit; the committed lines stay the session's (newcomer 7, problem 2)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from conftest import commit_env, deja, deja_json, git

EDIT_AT = 1_764_579_600  # 2025-12-01 09:00 UTC: the agent's edit
COMMIT_AT = EDIT_AT + 1800  # the person commits it
LATER = EDIT_AT + 3600  # one more question in the same chat
OLD = "def f():\n    return 1\n"
NEW = "def f():\n    value = compute_the_value()\n    return value * 2\n"
SID = "3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"


def _jsonl(records: list[dict[str, object]]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def _cursor(store: Path, repo: Path, more: bool) -> Path:
    path = store / "projects" / "repo" / "agent-transcripts" / f"{SID}.jsonl"
    records: list[dict[str, object]] = [
        {"role": "user", "message": {"content": [{"type": "text", "text": "make it bigger"}]}},
        {
            "role": "assistant",
            "message": {
                "content": [
                    {
                        "type": "tool_use",
                        "name": "StrReplace",
                        "input": {
                            "path": str(repo / "app.py"),
                            "old_string": OLD,
                            "new_string": NEW,
                        },
                    }
                ]
            },
        },
    ]
    if more:
        records += [
            {"role": "user", "message": {"content": [{"type": "text", "text": "thanks, why?"}]}},
            {"role": "assistant", "message": {"content": [{"type": "text", "text": "Doubled."}]}},
        ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_jsonl(records))  # appended: the same file grows
    return path


def _windsurf(store: Path, repo: Path, more: bool) -> Path:
    path = store / "transcripts" / f"{SID}.jsonl"
    records: list[dict[str, object]] = [
        {"type": "user_input", "user_input": {"user_response": "make it bigger"}},
        {
            "type": "code_action",
            "status": "done",
            "code_action": {
                "path": str(repo / "app.py"),
                "original_content": OLD,
                "new_content": NEW,
                "acknowledgement_type": "ACKNOWLEDGEMENT_TYPE_ACCEPT",
            },
        },
    ]
    if more:
        records += [
            {"type": "user_input", "user_input": {"user_response": "thanks, why?"}},
            {"type": "planner_response", "planner_response": {"response": "Doubled."}},
        ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_jsonl(records))
    return path


def _continue(store: Path, repo: Path, more: bool) -> Path:
    path = store / "sessions" / f"{SID}.json"
    history: list[dict[str, object]] = [
        {"message": {"role": "user", "content": "make it bigger"}},
        {
            "message": {"role": "assistant", "content": ""},
            "toolCallStates": [
                {
                    "toolCallId": "call-1",
                    "status": "done",
                    "toolCall": {"function": {"name": "Edit"}},
                    "parsedArgs": {
                        "filepath": str(repo / "app.py"),
                        "old_string": OLD,
                        "new_string": NEW,
                    },
                }
            ],
        },
    ]
    if more:
        history += [
            {"message": {"role": "user", "content": "thanks, why?"}},
            {"message": {"role": "assistant", "content": "Doubled."}},
        ]
    doc = {"sessionId": SID, "workspaceDirectory": str(repo), "history": history}
    path.parent.mkdir(parents=True, exist_ok=True)
    # Continue writes the whole document again: a new file in its place (another inode)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(orjson.dumps(doc))
    os.replace(tmp, path)
    return path


WRITERS: dict[str, Callable[[Path, Path, bool], Path]] = {
    "cursor": _cursor,
    "windsurf": _windsurf,
    "continue": _continue,
}
ROOT_ENV = {
    "cursor": "DEJA_CURSOR_ROOT",
    "windsurf": "DEJA_WINDSURF_ROOT",
    "continue": "DEJA_CONTINUE_ROOT",
}


def _agents(repo: Path) -> list[str | None]:
    blame = deja_json("blame", "--json", "app.py", cwd=repo)
    return [line.get("agent") for line in blame["lines"]]


def _agent_edit_committed(
    agent: str, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The agent's store with its edit of app.py dated 09:00, the person's commit of it
    at 09:30; returns the store's folder, for the writer to go on with the chat."""
    store = tmp_path / "store"
    monkeypatch.setenv(ROOT_ENV[agent], str(store))
    (repo / "app.py").write_text(OLD)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init", env=commit_env(EDIT_AT - 3600))
    transcript = WRITERS[agent](store, repo, False)
    os.utime(transcript, (EDIT_AT, EDIT_AT))
    (repo / "app.py").write_text(NEW)
    git(repo, "commit", "-qam", "agent", env=commit_env(COMMIT_AT))
    return store


@pytest.mark.parametrize("agent", sorted(WRITERS))
def test_a_chat_that_goes_on_after_the_commit_keeps_the_committed_lines(
    agent: str, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _agent_edit_committed(agent, repo, tmp_path, monkeypatch)
    assert _agents(repo) == [None, agent, agent]  # indexed while the chat was at 09:00
    # one more question and its answer: the file's time is now past the commit
    transcript = WRITERS[agent](store, repo, True)
    os.utime(transcript, (LATER, LATER))
    assert _agents(repo) == [None, agent, agent]
    # and again (a second re-read keeps the first time, not the one before it)
    os.utime(transcript, (LATER + 60, LATER + 60))
    assert _agents(repo) == [None, agent, agent]
    session = deja_json("show", "--json", SID, cwd=repo)
    assert session["ended_at"] > session["started_at"]  # the new records' time is later


@pytest.mark.parametrize("agent", sorted(WRITERS))
def test_a_rebuild_keeps_when_each_record_was_first_seen(
    agent: str, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``deja index --rebuild`` reads every transcript afresh, but a record's time is
    when the index first saw it: the new index takes the old one's times."""
    store = _agent_edit_committed(agent, repo, tmp_path, monkeypatch)
    assert _agents(repo) == [None, agent, agent]
    transcript = WRITERS[agent](store, repo, True)
    os.utime(transcript, (LATER, LATER))
    for _ in range(2):  # and a rebuild of the rebuilt index
        deja("index", "--rebuild", cwd=repo)
        assert _agents(repo) == [None, agent, agent]


def test_a_session_the_rebuild_could_not_read_keeps_its_times_for_the_next_run(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Continue rewrites its session file while ``deja index --rebuild`` runs: the
    rebuild reads half a document, no session. The times the old index had stay kept
    for the run that reads the file whole (the reviewer of session 8 saw the lines go
    to nobody: the kept times were dropped with the others')."""
    store = _agent_edit_committed("continue", repo, tmp_path, monkeypatch)
    assert _agents(repo) == [None, "continue", "continue"]
    transcript = WRITERS["continue"](store, repo, True)
    whole = transcript.read_bytes()
    transcript.write_bytes(whole[: len(whole) // 2])  # being written out right now
    os.utime(transcript, (LATER, LATER))
    deja("index", "--rebuild", cwd=repo)
    transcript.write_bytes(whole)
    os.utime(transcript, (LATER, LATER))
    assert _agents(repo) == [None, "continue", "continue"]


def test_a_record_seen_before_keeps_its_time_and_a_new_one_takes_the_files() -> None:
    from deja_blame.transcripts.first_seen import FirstSeen

    first = FirstSeen("2026-12-01T09:00:00Z")
    assert first.at({"a": 1}) == "2026-12-01T09:00:00Z"
    assert first.at({"a": 1}) == "2026-12-01T09:00:00Z"  # the same record again
    later = FirstSeen("2026-12-01T10:00:00Z", first.to_state())
    assert later.at({"a": 1}) == "2026-12-01T09:00:00Z"
    assert later.at({"a": 1}) == "2026-12-01T09:00:00Z"  # its second occurrence too
    assert later.at({"a": 1}) == "2026-12-01T10:00:00Z"  # a third is new
    assert later.at({"b": 2}) == "2026-12-01T10:00:00Z"
    # a file whose time went back (copied with an older time): the earlier time wins
    back = FirstSeen("2026-12-01T08:00:00Z", later.to_state())
    assert back.at({"a": 1}) == "2026-12-01T08:00:00Z"
    # a stored map of the wrong shape is no map
    assert FirstSeen("2026-12-01T08:00:00Z", {"x": "y", "t": [True, "k"]}).at({"a": 1})


@pytest.mark.parametrize("agent", sorted(WRITERS))
def test_why_names_the_session_whose_first_reading_came_after_the_commit(
    agent: str, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read for the first time after the chat went on (deja installed later), every
    record takes the file's time, after the commit: the commit cannot hold the
    session's write and its lines are nobody's. ``deja why`` says which session wrote
    the line and why it is not given it (newcomer 9, #2)."""
    monkeypatch.setenv(ROOT_ENV[agent], str(tmp_path / "store"))
    (repo / "app.py").write_text(OLD)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init", env=commit_env(EDIT_AT - 3600))
    (repo / "app.py").write_text(NEW)
    git(repo, "commit", "-qam", "agent", env=commit_env(COMMIT_AT))
    transcript = WRITERS[agent](tmp_path / "store", repo, True)
    os.utime(transcript, (LATER, LATER))
    assert _agents(repo) == [None, None, None]
    doc = deja_json("why", "app.py:2", "--json", cwd=repo)
    assert doc["session"] is None
    assert doc["written_after_commit"] == {
        "session": SID,
        "agent": agent,
        "at": "2025-12-01T10:00:00Z",
        "commit_at": "2025-12-01T09:30:00Z",
        "first_seen": True,
    }
    text = deja("why", "app.py:2", cwd=repo).stdout.decode()
    assert f"session {SID} ({agent}) wrote this line, but its write is dated" in text
    assert "records no times" in text
    # a line the session did not write, or one dated before: nothing said
    assert "written_after_commit" not in deja_json("why", "app.py:1", "--json", cwd=repo)


@pytest.mark.parametrize("agent", sorted(WRITERS))
def test_why_names_no_session_of_another_repository(
    agent: str, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review 9: a session of another repository that later wrote the same line to its
    own app.py is not this line's story: nothing is said of it."""
    monkeypatch.setenv(ROOT_ENV[agent], str(tmp_path / "store"))
    (repo / "app.py").write_text(NEW)  # the person's, years before
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "person", env=commit_env(EDIT_AT - 86_400 * 365))
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    (other / "app.py").write_text(OLD)
    git(other, "add", "-A")
    git(other, "commit", "-qm", "theirs", env=commit_env(EDIT_AT - 3600))
    transcript = WRITERS[agent](tmp_path / "store", other, True)
    os.utime(transcript, (LATER, LATER))
    doc = deja_json("why", "app.py:2", "--json", cwd=repo)
    assert doc["session"] is None and "written_after_commit" not in doc, doc
