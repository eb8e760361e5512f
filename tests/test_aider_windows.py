"""An Aider chat recorded on Windows, read on Linux (a clone elsewhere, another machine):
aider names a file ``src\\app.py``, from the folder the history sits in, and its
backslashes are folder separators there. On the chat's own evidence (CRLF line ends,
a drive in the banner aider writes as a chat starts) they are read as ``/``; a Linux
chat's backslash is part of a name, and stays."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import commit_env, deja, deja_json, git

from deja_blame.transcripts.aider.reader import parse_transcript, recorded_on_windows

T0 = 1_790_000_000
BEFORE = "def total(items):\n    return sum(items)\n"
ADDED = "def mean(items):\n    return total(items) / len(items)\n\n\n"
WINDOWS_BANNER = "> C:\\Users\\dev\\AppData\\Roaming\\Python\\Scripts\\aider --model gpt-4o  \n"
LINUX_BANNER = "> /home/dev/.local/bin/aider --model gpt-4o  \n"


def _chat(name: str, banner: str, started: str = "2026-09-21 14:30:00") -> str:
    """One chat: aider's banner, a request, a SEARCH/REPLACE block of ``name``, applied
    (``started``: local time; between the two commits below, read in UTC)."""
    return (
        f"\n# aider chat started at {started}\n\n"
        f"{banner}"
        "> Aider v0.86.1  \n\n"
        "#### add a mean next to total  \n\n"
        "Adding `mean` above `total`:\n\n"
        f"{name}\n```python\n<<<<<<< SEARCH\ndef total(items):\n=======\n"
        + ADDED
        + "def total(items):\n>>>>>>> REPLACE\n```\n\n"
        f"> Applied edit to {name}  \n"
    )


def _edited(tmp_path: Path, text: str | bytes) -> list[str]:
    path = tmp_path / ".aider.chat.history.md"
    if isinstance(text, str):
        path.write_text(text)
    else:
        path.write_bytes(text)
    return [e["path"] for e in parse_transcript(path).to_json()["edits"]]


def test_a_windows_chat_s_backslashes_are_folders(tmp_path: Path) -> None:
    here = str(tmp_path.resolve())
    assert _edited(tmp_path, _chat("src\\app.py", WINDOWS_BANNER)) == [f"{here}/src/app.py"]


def test_crlf_line_ends_say_windows_too(tmp_path: Path) -> None:
    """Aider appends to its history in text mode: on Windows every line ends in CRLF."""
    text = _chat("src\\app.py", "> aider --model gpt-4o  \n").replace("\n", "\r\n")
    here = str(tmp_path.resolve())
    assert _edited(tmp_path, text.encode()) == [f"{here}/src/app.py"]


def test_a_linux_chat_keeps_a_backslash_in_a_name(tmp_path: Path) -> None:
    here = str(tmp_path.resolve())
    assert _edited(tmp_path, _chat("odd\\name.py", LINUX_BANNER)) == [f"{here}/odd\\name.py"]
    # a drive named later in the chat (a reply, a request) is not aider's banner
    text = _chat("odd\\name.py", LINUX_BANNER).replace(
        "Adding `mean`", "Like C:\\Users on Windows, adding `mean`"
    )
    assert not recorded_on_windows(text)
    assert _edited(tmp_path, text) == [f"{here}/odd\\name.py"]


def _repository(repo: Path, chat: str) -> dict[str, str | None]:
    """src/app.py committed by a person, then aider's edit of it committed; the chat
    (recorded on Windows) sits in this Linux clone. Every line -> its session."""
    (repo / ".git" / "info" / "exclude").write_text(".aider*\n")
    (repo / "src").mkdir()
    app = repo / "src" / "app.py"
    app.write_text(BEFORE)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "total", env=commit_env(T0 - 3_600))
    app.write_text(ADDED + BEFORE)
    git(repo, "commit", "-qam", "mean", env=commit_env(T0 + 3_600))
    (repo / ".aider.chat.history.md").write_text(chat)
    deja("index", cwd=repo, env={"DEJA_ANTIGRAVITY_ROOT": ""})
    doc = deja_json("blame", "src/app.py", "--json", cwd=repo)
    return {f"{ln['line']}:{ln['text']}": ln["session"] for ln in doc["lines"]}


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")  # aider's local times, read by deja's processes


def test_a_windows_chat_read_on_linux_attributes_its_lines(repo: Path, utc: None) -> None:
    got = _repository(repo, _chat("src\\app.py", WINDOWS_BANNER))
    session = got["1:def mean(items):"]
    assert session is not None and session.startswith("aider-")
    assert got["2:    return total(items) / len(items)"] == session
    assert got["5:def total(items):"] is None  # the person's
    # as an edit of src/app.py itself (not of a file named ``src\\app.py`` whose text
    # happens to match: a weaker answer)
    why = deja_json("why", "src/app.py:1", "--json", cwd=repo)
    assert why["edit"]["path"] == f"{repo.resolve()}/src/app.py"
    # the agent's words beside the edit: its SEARCH/REPLACE block is the edit shown
    # below them, not a line of flattened markers (newcomer 11)
    said = deja("why", "src/app.py:1", cwd=repo).stdout.decode()
    said = said.split("The agent said")[1].split("\n\n")[0]
    assert "Adding `mean` above `total`:" in said and "[code]" in said, said
    assert "<<<<<<<" not in said and "REPLACE" not in said, said


def test_a_chat_an_older_reader_indexed_is_read_again(repo: Path, utc: None) -> None:
    """Reader 1 kept ``src\\app.py`` as one name: what it indexed is read again."""
    import sqlite3

    import orjson

    from deja_blame.index.store import pack, unpack
    from deja_blame.transcripts.registry import agent_named

    _repository(repo, _chat("src\\app.py", WINDOWS_BANNER))
    conn = sqlite3.connect(os.environ["DEJA_DB"])
    with conn:
        for sid, state in conn.execute("SELECT sid, state FROM sessions WHERE source='aider'"):
            doc = orjson.loads(unpack(state))
            assert doc["reader_version"] == agent_named("aider").reader_version
            doc["reader_version"] = 1
            conn.execute("UPDATE sessions SET state=? WHERE sid=?", (pack(orjson.dumps(doc)), sid))
    conn.close()
    report = deja_json("index", "--json", cwd=repo, env={"DEJA_ANTIGRAVITY_ROOT": ""})
    assert report["updated"] == 1
    report = deja_json("index", "--json", cwd=repo, env={"DEJA_ANTIGRAVITY_ROOT": ""})
    assert report["unchanged"] == report["transcripts"] == 1
