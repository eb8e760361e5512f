"""What real captures of the agents showed the readers missed (``bench/real_agents.py``
over public captures): each case here is the real shape, written in our own words.
The golden fixtures (``fixtures/<agent>/``) hold the same shapes in a whole session.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from deja_blame.transcripts.registry import parse_any


def _jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return path


def _cursor(role: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "message": {"content": list(parts)}}


def _tool(name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": args}


# -- Cursor -------------------------------------------------------------------------------------


def test_cursor_project_is_the_folder_its_slug_names_dots_and_all(tmp_path: Path) -> None:
    """``projects/srv-apps-ledger-v2`` is /srv/apps/ledger.v2 (a dot is a ``-`` in the
    slug too), though the session edited only below it and read a file Cursor spilled
    into its own store; that file is no file of the project's."""
    slug = tmp_path / "projects" / "srv-apps-ledger-v2" / "agent-transcripts" / "s1" / "s1.jsonl"
    spilled = "/home/ana/.cursor/projects/srv-apps-ledger-v2/agent-tools/out.txt"
    path = _jsonl(
        slug,
        [
            _cursor("user", {"type": "text", "text": "<user_query>\nfix\n</user_query>"}),
            _cursor("assistant", _tool("Read", path=spilled)),
            _cursor(
                "assistant",
                _tool(
                    "StrReplace",
                    path="/srv/apps/ledger.v2/ledger/core.py",
                    old_string="a = 1\n",
                    new_string="a = 2\n",
                ),
            ),
            _cursor(
                "assistant",
                _tool("Shell", command="make test", working_directory="/srv/apps/ledger.v2"),
            ),
        ],
    )
    s = parse_any(path, "cursor")
    assert s.project == "/srv/apps/ledger.v2"
    assert [f.path for f in s.files] == []
    assert [(c.command, c.cwd, c.exit_code) for c in s.commands] == [
        ("make test", "/srv/apps/ledger.v2", None)
    ]


def test_cursor_without_its_layout_guesses_from_the_files_not_its_own_store(
    tmp_path: Path,
) -> None:
    path = _jsonl(
        tmp_path / "loose.jsonl",
        [
            _cursor(
                "assistant", _tool("Read", path="/home/ana/.cursor/projects/x/agent-tools/o.txt")
            ),
            _cursor("assistant", _tool("Write", path="/srv/app/notes.md", contents="hi\n")),
            _cursor("assistant", {"type": "text", "text": "[REDACTED]"}),
        ],
    )
    s = parse_any(path, "cursor")
    assert s.project == "/srv/app"
    assert s.messages == []  # a reasoning Cursor left out is no message


# -- Copilot (VS Code's chat sessions) ----------------------------------------------------------


def _chat_request(
    text: str, calls: list[dict[str, Any]], results: dict[str, Any]
) -> dict[str, Any]:
    return {
        "requestId": "r",
        "timestamp": 1796036460000,
        "message": {"text": text},
        "response": [{"value": "ok"}],
        "modelId": "copilot/gpt-4o",
        "result": {
            "metadata": {"toolCallRounds": [{"toolCalls": calls}], "toolCallResults": results}
        },
    }


def test_copilot_chat_session_log_with_bad_lines_reads_the_rest(tmp_path: Path) -> None:
    """A cut line, bad UTF-8, a change whose path is not there, values of the wrong
    type: each skipped and counted, every other change applied."""
    write = {
        "name": "create_file",
        "arguments": json.dumps({"filePath": "/w/a.py", "content": "A = 1\n"}),
        "id": "c1",
    }
    good = [
        {"kind": 0, "v": {"sessionId": "s", "requests": [], "creationDate": 1796036400000}},
        {"kind": 2, "k": ["requests"], "v": [_chat_request("add A", [write], {"c1": {}})]},
        {"kind": 2, "k": ["requests", 0, "nowhere", 3], "v": [1]},
        {"kind": 1, "k": "requests", "v": 5},
        {
            "kind": 2,
            "k": ["requests"],
            "v": [
                {
                    "message": {"text": 7},
                    "response": "x",
                    "result": {"metadata": {"toolCallRounds": 3}},
                }
            ],
        },
    ]
    path = tmp_path / "chatSessions" / "s.jsonl"
    path.parent.mkdir()
    body = b"".join(json.dumps(r).encode() + b"\n" for r in good)
    path.write_bytes(body + b'{"kind":1,"k":["x"],"v":"\xff\xfe"}\n{"kind":2,"k":["req\n')
    s = parse_any(path)
    assert s.source == "copilot"
    assert [m.text for m in s.messages if m.role == "user"] == ["add A"]
    assert [(e.path, e.added) for e in s.edits] == [("/w/a.py", ["A = 1"])]
    # the path not there, the key path not a list, bad UTF-8, the cut line
    assert s.skipped_lines == 4
    assert s.model == "gpt-4o"


def test_cursor_request_time_is_the_timestamp_it_opens_with(tmp_path: Path) -> None:
    """Current Cursor opens each request with ``<timestamp>`` (local time and its
    offset): the turn's records are dated from it, not from when deja first saw the
    file (later); another locale's words too (``cursor/asked.py``), and a stamp
    that cannot be read keeps the turn before's time."""

    def asked(stamp: str, words: str) -> dict[str, Any]:
        text = f"<timestamp>{stamp}</timestamp>\n<user_query>\n{words}\n</user_query>"
        return _cursor("user", {"type": "text", "text": text})

    path = _jsonl(
        tmp_path / "t.jsonl",
        [
            asked("Tuesday, Sep 15, 2026, 8:53 PM (UTC-5)", "one"),
            _cursor("assistant", _tool("Write", path="/srv/a.py", contents="A = 1\n")),
            asked("Wednesday, Sep 16, 2026, 7:35 AM (UTC+5:30)", "two"),
            _cursor("assistant", {"type": "text", "text": "done"}),
            asked("mercredi 16 sept. 2026, 10:00 (UTC+2)", "three"),
            asked("16/09/2026 11:00 MESZ", "four"),
        ],
    )
    s = parse_any(path, "cursor")
    assert [(m.text, m.at) for m in s.messages] == [
        ("one", "2026-09-16T01:53:00Z"),
        ("two", "2026-09-16T02:05:00Z"),
        ("done", "2026-09-16T02:05:00Z"),
        ("three", "2026-09-16T08:00:00Z"),
        ("four", "2026-09-16T08:00:00Z"),  # a zone by name: the turn before's time
    ]
    assert s.edits[0].at == "2026-09-16T01:53:00Z"
    assert s.started_at == "2026-09-16T01:53:00Z"


# -- Gemini CLI ---------------------------------------------------------------------------------


def test_gemini_session_lines_with_no_metadata_record_are_a_session(tmp_path: Path) -> None:
    """A JSON Lines session that starts with a message, no metadata record (such files
    are in the wild), is found under its file name; one whose first line is still
    being written waits, as one whose metadata may yet come."""
    from deja_blame.transcripts.registry import discover, read_session

    chats = tmp_path / "tmp" / "proj" / "chats"
    _jsonl(
        chats / "session-2026-11-30T10-00-aaaa.jsonl",
        [
            {"id": "u1", "timestamp": "2026-11-30T10:00:00Z", "type": "user", "content": "hi"},
            {
                "id": "g1",
                "timestamp": "2026-11-30T10:00:05Z",
                "type": "gemini",
                "content": "hello",
                "model": "gemini-2.5-pro",
            },
        ],
    )
    (chats / "session-2026-11-30T11-00-bbbb.jsonl").write_text('{"id": "u1", "type": "us')
    found = discover(["gemini-cli"], env={"DEJA_GEMINI_ROOT": str(tmp_path)})
    assert [tf.session_id for tf in found] == ["session-2026-11-30T10-00-aaaa"]
    s = read_session(found[0])
    assert [m.text for m in s.messages] == ["hi", "hello"] and s.model == "gemini-2.5-pro"
