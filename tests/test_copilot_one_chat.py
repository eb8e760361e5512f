"""Copilot in VS Code writes one chat twice: its event stream
(``GitHub.copilot-chat/transcripts/<id>.jsonl``) and VS Code's own record of it
(``chatSessions/<id>.jsonl``, the same ``<id>``). One chat is one session: the
stream's requests and edits, the model of the chat record. Edit mode's edits
(``textEditGroup`` parts, no tool call) are the session's too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import deja, deja_json

from deja_blame.transcripts.registry import parse_any

CHAT_ID = "5c0ffee0-1111-4222-8333-944445555666"


def _jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return path


def _event(kind: str, at: str, **data: Any) -> dict[str, Any]:
    return {"type": kind, "data": data, "timestamp": f"2026-11-30T{at}.000Z"}


def _stream(workspace: Path) -> Path:
    """Two requests, each creating a file."""
    return _jsonl(
        workspace / "GitHub.copilot-chat" / "transcripts" / f"{CHAT_ID}.jsonl",
        [
            _event("session.start", "09:00:00", sessionId=CHAT_ID, vscodeVersion="1.119.0"),
            _event("user.message", "09:00:01", content="Write the greeting"),
            _event(
                "tool.execution_start",
                "09:00:02",
                toolCallId="a",
                toolName="create_file",
                arguments={"filePath": "/srv/hello/greet.py", "content": "WORD = 'hi'\n"},
            ),
            _event("tool.execution_complete", "09:00:03", toolCallId="a", success=True),
            _event("user.message", "09:10:01", content="And the farewell"),
            _event(
                "tool.execution_start",
                "09:10:02",
                toolCallId="b",
                toolName="create_file",
                arguments={"filePath": "/srv/hello/bye.py", "content": "WORD = 'bye'\n"},
            ),
            _event("tool.execution_complete", "09:10:03", toolCallId="b", success=True),
        ],
    )


def _ms(hms: str) -> int:
    from datetime import datetime, timezone

    return (
        int(datetime.fromisoformat(f"2026-11-30T{hms}").replace(tzinfo=timezone.utc).timestamp())
        * 1000
    )


def _chat(workspace: Path) -> Path:
    """VS Code's record of the same chat: its requests name the stream, and the model."""
    tied = {"metadata": {"sessionId": CHAT_ID}}
    return _jsonl(
        workspace / "chatSessions" / f"{CHAT_ID}.jsonl",
        [
            {
                "kind": 0,
                "v": {
                    "sessionId": CHAT_ID,
                    "creationDate": _ms("09:00:00"),
                    "requests": [],
                    "inputState": {"selectedModel": {"identifier": "copilot/auto"}},
                },
            },
            {
                "kind": 2,
                "k": ["requests"],
                "v": [
                    {
                        "timestamp": _ms("09:00:01"),
                        "message": {"text": "Write the greeting"},
                        "modelId": "copilot/gpt-4.1",
                        "result": tied,
                    },
                    {
                        "timestamp": _ms("09:10:01"),
                        "message": {"text": "And the farewell"},
                        "modelId": "copilot/auto",
                        "result": {**tied, "details": "Claude Sonnet 4.5 • 1x"},
                    },
                ],
            },
        ],
    )


def _workspace(root: Path) -> Path:
    workspace = root / "0123abcd"
    workspace.mkdir(parents=True)
    (workspace / "workspace.json").write_text(json.dumps({"folder": "file:///srv/hello"}))
    return workspace


@pytest.mark.parametrize("written_last", ["chat", "stream"])
def test_a_chat_and_its_stream_are_one_session(tmp_path: Path, written_last: str) -> None:
    root = tmp_path / "workspaceStorage"
    workspace = _workspace(root)
    stream, chat = _stream(workspace), _chat(workspace)
    # whichever VS Code wrote last, the stream's edits stay (a copy of one session
    # in two files once kept only the file written last: the chat, with no edits)
    later = chat if written_last == "chat" else stream
    os.utime(later, (2_000_000_000, 2_000_000_000))
    env = {"DEJA_COPILOT_ROOT": str(root)}
    out = deja("index", env=env)
    assert b"more than one root" not in out.stdout + out.stderr
    sessions = deja_json("sessions", "--json", env=env)["sessions"]
    assert [(s["session_id"], s["edits"], s["messages"]) for s in sessions] == [(CHAT_ID, 2, 2)]
    assert sessions[0]["model"] == "Claude Sonnet 4.5"  # the chat's last request's
    assert sessions[0]["transcript"] == str(stream)


def test_each_edit_of_the_stream_has_its_requests_model(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    stream = _stream(workspace)
    _chat(workspace)
    s = parse_any(stream)  # deja parse reads the chat beside it, as the index does
    assert [(e.path, e.model) for e in s.edits] == [
        ("/srv/hello/greet.py", "gpt-4.1"),
        ("/srv/hello/bye.py", "Claude Sonnet 4.5"),
    ]
    assert [m.text for m in s.messages if m.role == "user"] == [
        "Write the greeting",
        "And the farewell",
    ]


def _edit_group(path: str, *texts: str) -> dict[str, Any]:
    return {
        "kind": "textEditGroup",
        "uri": {"$mid": 1, "fsPath": path, "path": path, "scheme": "file"},
        "edits": [
            [],
            *[
                [{"text": t, "range": {"startLineNumber": i + 1, "startColumn": 1}}]
                for i, t in enumerate(texts)
            ],
        ],
        "done": True,
    }


def test_edit_mode_text_edits_are_the_sessions_lines(tmp_path: Path) -> None:
    """A request with no tool call (edit mode): its text edits' new lines are the
    session's. A request whose tool made the edit leaves the same part, not counted
    again."""
    tool_call = {
        "name": "create_file",
        "arguments": json.dumps({"filePath": "/srv/hello/b.py", "content": "B = 2\n"}),
        "id": "c1",
    }
    chat = {
        "sessionId": "edits",
        "creationDate": _ms("09:00:00"),
        "requests": [
            {
                "timestamp": _ms("09:00:01"),
                "message": {"text": "Tidy a.py"},
                "modelId": "copilot/gpt-4o",
                "response": [
                    {"kind": "codeblockUri", "uri": {"path": "/srv/hello/a.py"}},
                    _edit_group("/srv/hello/a.py", "def total(xs):", "    return sum(xs)"),
                    _edit_group("/srv/hello/empty.py", ""),
                    {"value": "Tidied."},
                ],
                "result": {"metadata": {"toolCallRounds": [], "toolCallResults": {}}},
            },
            {
                "timestamp": _ms("09:01:01"),
                "message": {"text": "Add b.py"},
                "modelId": "copilot/gpt-4o",
                "response": [_edit_group("/srv/hello/b.py", "B = 2")],
                "result": {
                    "metadata": {
                        "toolCallRounds": [{"toolCalls": [tool_call]}],
                        "toolCallResults": {"c1": {"content": []}},
                    }
                },
            },
        ],
    }
    path = tmp_path / "chatSessions" / "edits.json"
    path.parent.mkdir()
    path.write_text(json.dumps(chat))
    s = parse_any(path)
    assert [(e.path, e.tool, e.removed, e.added) for e in s.edits] == [
        ("/srv/hello/a.py", "textEditGroup", [], ["def total(xs):", "    return sum(xs)"]),
        ("/srv/hello/b.py", "create_file", [], ["B = 2"]),
    ]
