"""pi's reader, rule by rule (the golden session is fixtures/pi/, read by
test_more_agents.py): every branch of the session tree is read, a failed call is no
edit, the person's ``!`` commands are theirs, both shapes of the ``edit`` tool, and a
session recorded on Windows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from conftest import deja_json

from deja_blame.transcripts.pi import session_id_of
from deja_blame.transcripts.pi.reader import parse_transcript

SID = "0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e"


def _write(path: Path, recs: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    return path


def _at(s: int) -> str:
    return f"2026-12-02T08:00:{s:02d}.000Z"


def _entry(n: int, parent: int | None, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"e{n:07d}",
        "parentId": None if parent is None else f"e{parent:07d}",
        "timestamp": _at(n),
        "message": message,
    }


def _call(cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "model": "m-1",
        "content": [{"type": "toolCall", "id": cid, "name": name, "arguments": args}],
    }


def _result(cid: str, error: bool = False) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": cid, "content": [], "isError": error}


def _session(tmp_path: Path, cwd: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    header = {"type": "session", "version": 3, "id": SID, "timestamp": _at(0), "cwd": cwd}
    path = tmp_path / "sessions" / "--p--" / f"2026-12-02T08-00-00-000Z_{SID}.jsonl"
    return parse_transcript(_write(path, [header, *entries]), SID).to_json()


def test_a_branch_the_person_left_still_wrote_its_edits(tmp_path: Path) -> None:
    """/tree moved the leaf back to entry 1: entries 2-3 are an abandoned branch whose
    edit ran (it is on disk), entries 4-5 the branch kept."""
    doc = _session(
        tmp_path,
        "/work/p",
        [
            _entry(1, None, {"role": "user", "content": "add a limit"}),
            _entry(2, 1, _call("a", "write", {"path": "a.py", "content": "LIMIT = 1\n"})),
            _entry(3, 2, _result("a")),
            _entry(4, 1, _call("b", "write", {"path": "b.py", "content": "LIMIT = 2\n"})),
            _entry(5, 4, _result("b")),
        ],
    )
    assert [(e["path"], e["added"]) for e in doc["edits"]] == [
        ("/work/p/a.py", ["LIMIT = 1"]),
        ("/work/p/b.py", ["LIMIT = 2"]),
    ]


def test_a_failed_or_unanswered_call_is_no_edit(tmp_path: Path) -> None:
    doc = _session(
        tmp_path,
        "/work/p",
        [
            _entry(1, None, _call("a", "write", {"path": "a.py", "content": "x = 1\n"})),
            _entry(2, 1, _result("a", error=True)),
            _entry(3, 2, _call("b", "write", {"path": "b.py", "content": "y = 1\n"})),
        ],
    )
    assert doc["edits"] == []


def test_both_shapes_of_the_edit_tool(tmp_path: Path) -> None:
    """The older tool takes one ``oldText``/``newText``; the newer a list in ``edits``."""
    doc = _session(
        tmp_path,
        "/work/p",
        [
            _entry(
                1,
                None,
                _call("a", "edit", {"path": "a.py", "oldText": "x = 1", "newText": "x = 2"}),
            ),
            _entry(2, 1, _result("a")),
            _entry(
                3,
                2,
                _call(
                    "b",
                    "edit",
                    {
                        "path": "b.py",
                        "edits": [
                            {"oldText": "y = 1", "newText": "y = 3"},
                            {"oldText": "z = 1", "newText": "z = 4"},
                        ],
                    },
                ),
            ),
            _entry(4, 3, _result("b")),
        ],
    )
    assert [(e["path"], e["removed"], e["added"]) for e in doc["edits"]] == [
        ("/work/p/a.py", ["x = 1"], ["x = 2"]),
        ("/work/p/b.py", ["y = 1", "z = 1"], ["y = 3", "z = 4"]),
    ]
    assert {e.get("model", doc["model"]) for e in doc["edits"]} == {"m-1"}


def test_the_persons_bang_command_is_not_the_sessions(tmp_path: Path) -> None:
    doc = _session(
        tmp_path,
        "/work/p",
        [
            _entry(1, None, {"role": "bashExecution", "command": "rm -rf build", "exitCode": 0}),
            _entry(2, 1, _call("a", "bash", {"command": "make test"})),
            _entry(3, 2, _result("a")),
        ],
    )
    assert [c["command"] for c in doc["commands"]] == ["make test"]


def test_a_session_recorded_on_windows(tmp_path: Path) -> None:
    doc = _session(
        tmp_path,
        "C:\\Users\\ana\\shop",
        [
            _entry(1, None, _call("a", "write", {"path": "src\\app.py", "content": "A = 1\n"})),
            _entry(2, 1, _result("a")),
        ],
    )
    assert [e["path"] for e in doc["edits"]] == ["C:/Users/ana/shop/src/app.py"]
    assert doc["project"] == "C:/Users/ana/shop"


def test_the_session_id_is_the_files_uuid() -> None:
    assert session_id_of(Path(f"2026-02-20T20-17-15-095Z_{SID}.jsonl")) == SID


def test_parse_tells_a_pi_session_by_its_header_anywhere(tmp_path: Path) -> None:
    """Copied out of ~/.pi (say, attached to a bug report): the header says whose it is."""
    path = _write(
        tmp_path / "somewhere" / "session.jsonl",
        [
            {"type": "session", "version": 3, "id": SID, "timestamp": _at(0), "cwd": "/w"},
            _entry(1, None, {"role": "user", "content": "hello"}),
        ],
    )
    assert deja_json("parse", str(path), "--json")["agent"] == "pi"


def test_a_malformed_record_loses_nothing_else(tmp_path: Path) -> None:
    """Review 9: ``"edits": 5`` (or a content that is a number) raised, and the index
    skipped the whole session; the record is passed over, the rest kept."""
    doc = _session(
        tmp_path,
        "/work/p",
        [
            _entry(1, None, _call("a", "write", {"path": "b.py", "content": "B = 1\n"})),
            _entry(2, 1, _result("a")),
            _entry(3, 2, _call("b", "edit", {"path": "a.py", "edits": 5})),
            _entry(4, 3, _result("b")),
            _entry(5, 4, {"role": "assistant", "content": 7}),
        ],
    )
    assert [e["path"] for e in doc["edits"]] == ["/work/p/b.py"]
