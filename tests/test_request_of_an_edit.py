"""``deja why``'s "Asked" is the request the line's edit followed, for every agent.

Only Antigravity numbers its steps; every other agent's records were all step 0 in
the index, so the request shown was the session's last, whichever the line's edit
followed (newcomer 9: a Cursor chat read after its commit showed the second request
for the first request's file). Each record's step is now the person's request it
followed, counted as the transcript is read."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import commit_env, deja_json, git

T0 = 1_796_000_000  # 2026-11-30T21:33:20Z: the session
T_COMMIT = T0 + 600
FIRST, SECOND = "FIRST: add halve in a.py", "SECOND: add twice in b.py"
A = "def halve(x):\n    return x / 2\n"
B = "def twice(x):\n    return x * 2\n"


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))


def _time(epoch: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(epoch, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _claude_code(home: Path, repo: Path) -> None:
    base = {"sessionId": "c1a0de00-0000-4000-8000-000000000001", "cwd": str(repo)}
    recs: list[dict[str, Any]] = []
    for k, (said, name, content) in enumerate(((FIRST, "a.py", A), (SECOND, "b.py", B))):
        at = T0 + 100 * k
        path = str(repo / name)
        recs += [
            {**base, "type": "user", "uuid": f"u{k}", "timestamp": _time(at),
             "message": {"role": "user", "content": said}},
            {**base, "type": "assistant", "uuid": f"a{k}", "timestamp": _time(at + 10),
             "message": {"role": "assistant", "model": "m", "content": [
                 {"type": "tool_use", "id": f"t{k}", "name": "Write",
                  "input": {"file_path": path, "content": content}}]}},
            {**base, "type": "user", "uuid": f"r{k}", "timestamp": _time(at + 11),
             "message": {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": f"t{k}", "content": "ok"}]},
             "toolUseResult": {"type": "create", "filePath": path, "content": content}},
        ]  # fmt: skip
    folder = str(repo).replace("/", "-")
    _write(home / ".claude" / "projects" / folder / f"{base['sessionId']}.jsonl", recs)


def _cursor(home: Path, repo: Path) -> None:
    """Cursor records no times: every record is dated by the file's time when first read."""
    recs: list[dict[str, Any]] = []
    for said, name, content in ((FIRST, "a.py", A), (SECOND, "b.py", B)):
        recs += [
            {"role": "user", "message": {"content": [
                {"type": "text", "text": f"<user_query>\n{said}\n</user_query>"}]}},
            {"role": "assistant", "message": {"content": [
                {"type": "tool_use", "name": "Write",
                 "input": {"path": str(repo / name), "contents": content}}]}},
        ]  # fmt: skip
    path = home / ".cursor" / "projects" / "p" / "agent-transcripts" / "c0c0c0c0-0000.jsonl"
    _write(path, recs)
    os.utime(path, (T0, T0))


@pytest.mark.parametrize("agent", ["claude-code", "cursor"])
def test_why_asks_the_request_the_lines_edit_followed(agent: str, repo: Path) -> None:
    home = Path(os.environ["HOME"])
    {"claude-code": _claude_code, "cursor": _cursor}[agent](home, repo)
    (repo / "a.py").write_text(A)
    (repo / "b.py").write_text(B)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "both", env=commit_env(T_COMMIT))
    asked = {}
    for name in ("a.py", "b.py"):
        doc = deja_json("why", f"{name}:1", "--json", cwd=repo)
        assert doc["session_info"]["agent"] == agent, doc
        asked[name] = doc["prompt"]["text"]
    assert asked == {"a.py": FIRST, "b.py": SECOND}
