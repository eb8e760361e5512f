"""How a Claude Code ``Bash`` call ended. A failed command's tool result holds
``Exit code N`` and the record's ``toolUseResult`` ``Error: Exit code N`` (the
recorded sessions we read have both, always). ``Error: Exit code N`` in the content
was read as "no exit code", so a failed test run made no ``tests_failed`` and a CI
gate on it passed. An error with no code (the person refused the command, a sibling
call failed first) did not run it: no exit code, as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import commit_env, deja, git

from deja_blame.transcripts.claude_code.reader import parse_transcript

SID = "6e6e6e6e-aaaa-4bbb-8ccc-000000000066"
CWD = "/home/pat/proj"


def _transcript(path: Path, results: list[tuple[str, bool, Any, Any]]) -> Path:
    """One Bash call per (command, is_error, content, toolUseResult)."""
    records: list[dict[str, Any]] = [
        {"type": "user", "sessionId": SID, "cwd": CWD, "timestamp": "2026-03-01T10:00:00Z",
         "uuid": "u0", "message": {"role": "user", "content": "Run the tests."}},
    ]  # fmt: skip
    for k, (command, error, content, tool_result) in enumerate(results, 1):
        base = {"sessionId": SID, "cwd": CWD, "timestamp": f"2026-03-01T10:00:{k:02d}Z"}
        call = {
            "type": "tool_use",
            "id": f"toolu_{k}",
            "name": "Bash",
            "input": {"command": command},
        }
        answer = {
            "type": "tool_result",
            "tool_use_id": f"toolu_{k}",
            "is_error": error,
            "content": content,
        }
        records += [
            {**base, "type": "assistant", "uuid": f"a{k}", "message": {"role": "assistant", "content": [call]}},
            {**base, "type": "user", "uuid": f"u{k}", "message": {"role": "user", "content": [answer]},
             "toolUseResult": tool_result},
        ]  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


CASES = [
    # as Claude Code writes a failed command
    ("pytest -q", True, "Exit code 2\n2 failed", "Error: Exit code 2\n2 failed", 2),
    # "Error: " in the content too
    ("pytest -q", True, "Error: Exit code 1\n1 failed", "Error: Exit code 1\n1 failed", 1),
    # the content's text parts say nothing of it; the record's result does
    ("go test ./...", True, [{"type": "text", "text": "FAIL"}], "Error: Exit code 3\nFAIL", 3),
    # refused by the person, or never run: no exit code
    ("pytest -q", True, "The user doesn't want to proceed with this tool use.",
     "Error: The user doesn't want to proceed with this tool use.", None),
    ("pytest -q", True, "<tool_use_error>Sibling tool call errored</tool_use_error>",
     "Sibling tool call errored", None),
    ("pytest -q", False, "5 passed", {"stdout": "5 passed", "stderr": "", "interrupted": False}, 0),
]  # fmt: skip


@pytest.mark.parametrize(("command", "error", "content", "tool_result", "code"), CASES)
def test_the_exit_code_of_a_bash_call(
    tmp_path: Path, command: str, error: bool, content: Any, tool_result: Any, code: int | None
) -> None:
    path = _transcript(tmp_path / f"{SID}.jsonl", [(command, error, content, tool_result)])
    (run,) = parse_transcript(path).commands
    assert run.command == command and run.exit_code == code


def test_deja_show_reads_the_failed_test_run_s_exit_code(tmp_path: Path, repo: Path) -> None:
    root = tmp_path / "claude"
    _transcript(
        root / "projects" / "-home-pat-proj" / f"{SID}.jsonl",
        [("python -m pytest -q tests", True, "Error: Exit code 1\n1 failed", "Error: Exit code 1\n1 failed")],
    )  # fmt: skip
    (repo / "a.py").write_text("A = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a", env=commit_env(1772359300))
    env = {"DEJA_CLAUDE_ROOT": str(root), "DEJA_DB": str(tmp_path / "index.db")}
    deja("index", "-q", cwd=repo, env=env)
    show = deja("show", SID[:8], cwd=repo, env=env).stdout.decode()
    assert "no exit code recorded" not in show
    (command,) = orjson.loads(deja("show", SID[:8], "--json", cwd=repo, env=env).stdout)["commands"]
    assert command["exit_code"] == 1
