"""Claude Code sub-agents: their edits reach the main transcript as ``progress``
records (``agent_progress``), and sometimes a file of their own as well.

The records follow the shape Claude Code writes (``data.message`` holds the
sub-agent's ``assistant``/``user`` record; most results carry no
``toolUseResult``); the text is ours.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from deja_blame.transcripts.claude_code.reader import parse_transcript

SID = "5e0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b"
CWD = "/home/erin/shop"


def rec(kind: str, at: str, uuid: str, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "sessionId": SID,
        "cwd": CWD,
        "timestamp": at,
        "uuid": uuid,
        "isSidechain": False,
        "message": message,
        **extra,
    }


def sub_agent_records() -> list[dict[str, Any]]:
    """The sub-agent's own records: it writes a file, then edits it."""
    write = {
        "file_path": f"{CWD}/tax.py",
        "content": "RATE = 0.2\n\ndef tax(x):\n    return x * RATE\n",
    }
    edit = {"file_path": f"{CWD}/tax.py", "old_string": "RATE = 0.2", "new_string": "RATE = 0.25"}
    tool = "tool_use"
    return [
        {"type": "user", "timestamp": "2026-03-01T10:00:02Z", "uuid": "s-1",
         "message": {"role": "user", "content": [{"type": "text", "text": "Add a tax module."}]}},
        {"type": "assistant", "timestamp": "2026-03-01T10:00:03Z", "uuid": "s-2",
         "message": {"role": "assistant", "model": "claude-haiku-4-5", "content": [
             {"type": tool, "id": "toolu_w1", "name": "Write", "input": write}]}},
        {"type": "user", "timestamp": "2026-03-01T10:00:04Z", "uuid": "s-3",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_w1", "content": "File created"}]}},
        {"type": "assistant", "timestamp": "2026-03-01T10:00:05Z", "uuid": "s-4",
         "message": {"role": "assistant", "content": [
             {"type": tool, "id": "toolu_e1", "name": "Edit", "input": edit}]}},
        {"type": "user", "timestamp": "2026-03-01T10:00:06Z", "uuid": "s-5",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_e1", "content": "Edited",
              "is_error": False}]}},
    ]  # fmt: skip


def main_records() -> list[dict[str, Any]]:
    """The main transcript: the request, the Task call, the sub-agent's progress."""
    out = [
        rec("user", "2026-03-01T10:00:00Z", "m-1", {"role": "user", "content": "Add taxes."}),
        rec(
            "assistant",
            "2026-03-01T10:00:01Z",
            "m-2",
            {
                "role": "assistant",
                "model": "claude-opus-4-5",
                "content": [
                    {"type": "tool_use", "id": "toolu_task", "name": "Task", "input": {}},
                ],
            },
        ),
    ]
    for k, inner in enumerate(sub_agent_records()):
        out.append(
            {
                "type": "progress",
                "sessionId": SID,
                "cwd": CWD,
                "timestamp": inner["timestamp"],
                "uuid": f"p-{k}",
                "isSidechain": False,
                "data": {
                    "type": "agent_progress",
                    "message": inner,
                    "normalizedMessages": [],
                    "prompt": "Add a tax module.",
                    "agentId": "b7c8d9e",
                },
                "toolUseID": f"agent_msg_{k}",
                "parentToolUseID": "toolu_task",
            }
        )
    out.append(
        {
            "type": "progress",
            "timestamp": "2026-03-01T10:00:06Z",
            "uuid": "p-hook",
            "data": {"type": "hook_progress", "hookEvent": "Stop", "command": "true"},
        }
    )
    return out


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def edits_of(session: Any) -> list[tuple[str, list[str]]]:
    return [(e.path, e.added) for e in session.edits]


WANT = [
    (f"{CWD}/tax.py", ["RATE = 0.2", "", "def tax(x):", "    return x * RATE"]),
    (f"{CWD}/tax.py", ["RATE = 0.25"]),
]


def test_progress_records_are_the_sub_agents_edits(tmp_path: Path) -> None:
    main = write_jsonl(tmp_path / f"{SID}.jsonl", main_records())
    session = parse_transcript(main, SID)
    assert edits_of(session) == WANT
    assert session.model == "claude-opus-4-5"  # the sub-agent's model is not the session's


def test_a_sub_agent_file_beside_its_progress_gives_each_edit_once(tmp_path: Path) -> None:
    main = write_jsonl(tmp_path / f"{SID}.jsonl", main_records())
    side = [
        # other uuids than in the progress records: the tool use ids tell them apart
        {**r, "uuid": r["uuid"] + "f", "isSidechain": True, "sessionId": SID, "cwd": CWD}
        for r in sub_agent_records()
    ]
    part = write_jsonl(tmp_path / SID / "subagents" / "agent-b7c8d9e.jsonl", side)
    session = parse_transcript(main, SID, parts=(part,))
    assert edits_of(session) == WANT
    # and with only the sub-agent's file (older Claude Code), the same edits
    alone = write_jsonl(tmp_path / "alone.jsonl", main_records()[:2])
    assert edits_of(parse_transcript(alone, SID, parts=(part,))) == WANT
