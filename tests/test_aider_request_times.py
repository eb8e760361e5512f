"""Aider's edits are timed by the request that made them, from aider's input history,
not by the chat's start: a chat lasts hours, and an edit stamped with its start looked
older than a person's commit made before it. The person's own line of the same text
(``return round(result, 2)``, issue 40) then went to the session, and the session's
own copy, a commit later, to nobody."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import as_an_older_reader_left_it, commit_env, deja, deja_json, git

from deja_blame.transcripts.text import format_time

T0 = 1_790_000_000  # the chat starts
BEFORE = '"""Small statistics."""\n\n\ndef average(values):\n    result = sum(values) / len(values)\n    return result\n'
MEDIAN = (
    "def median(values):\n"
    "    ordered = sorted(values)\n"
    "    middle = len(ordered) // 2\n"
    "    result = ordered[middle] if len(ordered) % 2 else sum(ordered[middle - 1 : middle + 1]) / 2\n"
    "    return round(result, 2)\n"
    "\n"
    "\n"
)


def _local(epoch: int) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _chat() -> str:
    """Aider's chat history of one chat: a file added, then a request that adds median()."""
    return (
        f"\n# aider chat started at {_local(T0)}\n\n"
        "> aider --model gpt-4o  \n\n"
        "#### /add stats.py  \n\n"
        "> Added stats.py to the chat  \n\n"
        "#### add a median function, rounded as average is  \n\n"
        "Here is `median`, rounded the same way:\n\n"
        "stats.py\n```python\n<<<<<<< SEARCH\ndef average(values):\n=======\n"
        + MEDIAN
        + "def average(values):\n>>>>>>> REPLACE\n```\n\n"
        "> Applied edit to stats.py  \n"
    )


def _inputs() -> str:
    """Aider's input history: each input after its local time (microseconds and all)."""
    return (
        f"\n# {_local(T0 + 40)}.250117\n+/add stats.py\n"
        f"\n# {_local(T0 + 1_800)}.731904\n+add a median function, rounded as average is\n"
    )


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Aider writes local times without an offset: read them in UTC."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _history(repo: Path, with_inputs: bool) -> dict[str, str | None]:
    """The repository's story, then every line of stats.py -> its session (None: nobody)."""
    (repo / ".git" / "info" / "exclude").write_text(".aider*\n")
    stats = repo / "stats.py"
    stats.write_text(BEFORE)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "average", env=commit_env(T0 - 3_600))
    # 20 minutes into the chat, the person rounds average() and commits
    stats.write_text(BEFORE.replace("    return result\n", "    return round(result, 2)\n"))
    git(repo, "commit", "-qam", "round the average", env=commit_env(T0 + 1_200))
    # 30 minutes in, aider adds median(), rounded the same way; committed at 40
    text = stats.read_text()
    stats.write_text(text.replace("def average(values):\n", MEDIAN + "def average(values):\n"))
    git(repo, "commit", "-qam", "median", env=commit_env(T0 + 2_400))
    (repo / ".aider.chat.history.md").write_text(_chat())
    if with_inputs:
        (repo / ".aider.input.history").write_text(_inputs())
    deja("index", cwd=repo, env={"DEJA_ANTIGRAVITY_ROOT": ""})
    doc = deja_json("blame", "stats.py", "--json", cwd=repo)
    return {f"{ln['line']}:{ln['text']}": ln["session"] for ln in doc["lines"]}


def test_an_aider_edit_is_timed_by_its_request(repo: Path, utc: None) -> None:
    got = _history(repo, with_inputs=True)
    session = got["4:def median(values):"]
    assert session is not None and session.startswith("aider-")
    assert got["8:    return round(result, 2)"] == session  # median's, written at 30 minutes
    assert got["13:    return round(result, 2)"] is None  # average's: the person's, at 20


def test_the_reader_times_each_request_by_its_input(tmp_path: Path, utc: None) -> None:
    from deja_blame.transcripts.aider.reader import parse_transcript

    def edit_times() -> list[str | None]:
        return [e["at"] for e in parse_transcript(path).to_json()["edits"]]

    path = tmp_path / ".aider.chat.history.md"
    path.write_text(_chat())
    inputs = tmp_path / ".aider.input.history"
    # the chat history alone: the chat's start
    assert edit_times() == [format_time(dt.datetime.fromtimestamp(T0, dt.timezone.utc))]
    # a link is never followed (the input history of another place, or ~/.netrc)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text(_inputs())
    inputs.symlink_to(elsewhere)
    assert edit_times() == [format_time(dt.datetime.fromtimestamp(T0, dt.timezone.utc))]
    inputs.unlink()
    # the input history: when the request was typed (to the second)
    inputs.write_text(_inputs())
    assert edit_times() == [format_time(dt.datetime.fromtimestamp(T0 + 1_800, dt.timezone.utc))]
    # inputs typed before the chat started are an earlier chat's, whatever their text
    inputs.write_text(
        f"\n# {_local(T0 - 600)}\n+add a median function, rounded as average is\n" + _inputs()
    )
    assert edit_times() == [format_time(dt.datetime.fromtimestamp(T0 + 1_800, dt.timezone.utc))]


def test_a_chat_an_older_reader_indexed_is_read_again(repo: Path, utc: None) -> None:
    """The chat indexed when its edits were stamped with the chat's start (here: no input
    history then), by a reader from before request times; the chat has not changed since,
    so its stat alone would keep the old times (the edit at the chat's start) until the
    chat grew. The reader's version, stored with the session,
    says it was read by an older reader: it is read again, once."""
    import os

    got = _history(repo, with_inputs=False)
    session = got["4:def median(values):"]
    assert session is not None and session.startswith("aider-")

    def edit_times() -> list[str | None]:
        return [e["at"] for e in deja_json("show", session, "--json", cwd=repo)["edits"]]

    # the old times: the chat's start (what the index keeps until the chat is read again)
    assert edit_times() == [format_time(dt.datetime.fromtimestamp(T0, dt.timezone.utc))]
    from deja_blame.transcripts.registry import agent_named

    as_an_older_reader_left_it(
        Path(os.environ["DEJA_DB"]), "aider", agent_named("aider").reader_version
    )
    (repo / ".aider.input.history").write_text(_inputs())  # the chat file is unchanged
    doc = deja_json("blame", "stats.py", "--json", cwd=repo)  # refreshes the index first
    got = {f"{ln['line']}:{ln['text']}": ln["session"] for ln in doc["lines"]}
    assert edit_times() == [format_time(dt.datetime.fromtimestamp(T0 + 1_800, dt.timezone.utc))]
    assert got["4:def median(values):"] == session
    assert got["8:    return round(result, 2)"] == session
    assert got["13:    return round(result, 2)"] is None
    # read again once: the state now says this reader's version
    report = deja_json("index", "--json", cwd=repo, env={"DEJA_ANTIGRAVITY_ROOT": ""})
    assert report["unchanged"] == report["transcripts"] == 1
