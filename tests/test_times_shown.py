"""Text output shows every agent's times in one form, to the second in UTC.

Claude Code and Codex write milliseconds (``04:26:05.852Z``), Aider and Antigravity
none: ``deja why``, ``show`` and ``handoff`` printed each as written (newcomer 11).
JSON keeps the transcript's own text."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
from conftest import commit_env, deja, deja_json, git

from deja_blame.output import utc_second

SID = "c1a0de00-0000-4000-8000-0000000000e1"
BODY = "def halve(x):\n    return x / 2\n"


def _claude_code_with_milliseconds(home: Path, repo: Path) -> None:
    base = {"sessionId": SID, "cwd": str(repo)}
    path = str(repo / "a.py")
    recs: list[dict[str, Any]] = [
        {**base, "type": "user", "uuid": "u0", "timestamp": "2026-11-30T21:33:20.852Z",
         "message": {"role": "user", "content": "add halve"}},
        {**base, "type": "assistant", "uuid": "a0", "timestamp": "2026-11-30T21:33:30.123Z",
         "message": {"role": "assistant", "model": "m", "content": [
             {"type": "tool_use", "id": "t0", "name": "Write",
              "input": {"file_path": path, "content": BODY}}]}},
        {**base, "type": "user", "uuid": "r0", "timestamp": "2026-11-30T21:33:31.999Z",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "t0", "content": "ok"}]},
         "toolUseResult": {"type": "create", "filePath": path, "content": BODY}},
    ]  # fmt: skip
    out = home / ".claude" / "projects" / str(repo).replace("/", "-") / f"{SID}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))


def test_times_are_shown_to_the_second_and_kept_whole_in_json(repo: Path) -> None:
    _claude_code_with_milliseconds(Path(os.environ["HOME"]), repo)
    (repo / "a.py").write_text(BODY)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "halve", env=commit_env(1_796_000_000 + 76_000))
    why = deja("why", "a.py:1", cwd=repo).stdout.decode()
    assert "started 2026-11-30T21:33:20Z" in why, why
    assert "(2026-11-30T21:33:20Z)" in why and "2026-11-30T21:33:31Z)" in why, why
    show = deja("show", SID[:8], cwd=repo).stdout.decode()
    assert "2026-11-30T21:33:20Z" in show, show
    for text in (why, show):
        assert ".852Z" not in text and ".999Z" not in text
    assert deja_json("why", "a.py:1", "--json", cwd=repo)["session_info"]["started_at"] == (
        "2026-11-30T21:33:20.852Z"
    )


def test_utc_second_reads_any_zone_and_keeps_what_it_cannot_read() -> None:
    assert utc_second("2026-07-17T18:01:02.5+09:00") == "2026-07-17T09:01:02Z"
    assert utc_second("2026-07-17T09:01:02Z") == "2026-07-17T09:01:02Z"
    assert utc_second("yesterday") == "yesterday" and utc_second(None) == ""


def test_the_agent_s_words_keep_their_text_and_lose_their_code() -> None:
    from deja_blame.outputs.escape import without_code

    assert without_code("Done:\n```py\nx = 1\n```\nsee above") == "Done:\n [code] \nsee above"
    assert without_code("Writing it:\n```py\nx = 1\n") == "Writing it:"  # a fence left open
    assert without_code("no code here") == "no code here" and without_code(None) == ""


def test_why_says_which_time_is_the_write_and_which_the_commit(repo: Path) -> None:
    """Blame's column is when the session wrote the line (its Write's result, 21:33:31);
    why's History gives each version its commit's time (22:13): neither was labelled,
    and the two looked like a contradiction (trial 16 #7)."""
    _claude_code_with_milliseconds(Path(os.environ["HOME"]), repo)
    (repo / "a.py").write_text(BODY)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "halve", env=commit_env(1_796_000_000 + 76_800))
    (repo / "a.py").write_text(BODY + "# more\n")
    git(repo, "commit", "-qam", "more", env=commit_env(1_796_000_000 + 90_000))
    blame = deja("blame", "-L", "1,1", "a.py", cwd=repo).stdout.decode()
    assert "2026-11-30 21:33 UTC" in blame, blame
    why = deja("why", "a.py:1", cwd=repo).stdout.decode()
    assert "The edit (Write, m, written 2026-11-30T21:33:31Z)" in why, why
    history = why.split("History (oldest first, by commit time)\n", 1)[1]
    assert "2026-11-30 22:13 UTC" in history and "21:33" not in history, why
