"""Identical trivial lines git's diff slid: blame, why and the notes agree.

A person commits ``a()`` and ``z()`` with two blank lines between them. A session
later inserts two blank lines and ``b()`` below ``a()``. git's diff says the new
blank lines are the pair below ``b()`` and keeps the person's pair above it. The
session's blank lines go to the pair git says its commit brought: a session that
ran at 14:00 never gets lines of a 13:00 commit, and the answer is the same before
and after ``deja annotate`` (the note can only hold git's reading).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import orjson
from conftest import commit_env, deja, deja_json, git

T0 = 1_764_594_000  # 2025-12-01 13:00 UTC
SID = "5eed5eed-0000-4000-8000-00000000b10c"
BEFORE = "def a():\n    return 1\n\n\ndef z():\n    return 26\n"
AFTER = "def a():\n    return 1\n\n\ndef b():\n    return 2\n\n\ndef z():\n    return 26\n"


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _codex_inserting_b(home: Path, repo: Path, at: float) -> None:
    """A Codex session whose patch adds two blank lines and ``b()`` below ``a()``."""
    day = home / ".codex" / "sessions" / "2025" / "12" / "01"
    day.mkdir(parents=True)
    patch = (
        "*** Begin Patch\n*** Update File: m.py\n@@\n     return 1\n"
        "+\n+\n+def b():\n+    return 2\n*** End Patch\n"
    )
    records = [
        {"timestamp": _iso(at), "type": "session_meta", "payload": {"id": SID, "cwd": str(repo)}},
        {"timestamp": _iso(at), "type": "turn_context", "payload": {"cwd": str(repo), "model": "gpt-5-codex"}},
        {"timestamp": _iso(at + 1), "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "Add b."}]}},
        {"timestamp": _iso(at + 5), "type": "response_item", "payload": {
            "type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": patch}},
        {"timestamp": _iso(at + 6), "type": "response_item", "payload": {
            "type": "custom_tool_call_output", "call_id": "c1",
            "output": json.dumps({"output": "Success.", "metadata": {"exit_code": 0}})}},
    ]  # fmt: skip
    (day / f"rollout-2025-12-01T14-00-00-{SID}.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records)
    )


def _session_lines(repo: Path) -> list[int]:
    doc = deja_json("blame", "--json", "m.py", cwd=repo, env={"DEJA_NO_CACHE": "1"})
    return [ln["line"] for ln in doc["lines"] if ln["session"] == SID]


def test_blank_lines_git_slid_stay_with_the_commit_git_names(repo: Path, tmp_path: Path) -> None:
    (repo / "m.py").write_text(BEFORE)
    git(repo, "add", "m.py")
    git(repo, "commit", "-qm", "person", env=commit_env(T0))
    _codex_inserting_b(tmp_path / "home", repo, T0 + 3600)
    (repo / "m.py").write_text(AFTER)
    git(repo, "commit", "-qam", "b", env=commit_env(T0 + 3900))
    # git: lines 5-8 are the second commit's (b() and the pair below it)
    porcelain = git(repo, "blame", "--line-porcelain", "m.py")
    times = [int(x.split()[1]) for x in porcelain.splitlines() if x.startswith("committer-time ")]
    assert [t == T0 for t in times] == [True] * 4 + [False] * 4 + [True] * 2

    before = _session_lines(repo)
    assert before == [5, 6, 7, 8]
    why = orjson.loads(deja("why", "--json", "m.py:3", cwd=repo).stdout)
    assert why["session"] is None  # the person's 13:00 pair, not the 14:00 session's
    deja("annotate", cwd=repo)
    assert _session_lines(repo) == before  # the note says what blame said
