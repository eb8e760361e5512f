"""deja why in a reviewer's clone (the note alone, no transcript): the session's agent,
model and, where its author opted in, first request, as --json has them, escaped."""

from __future__ import annotations

from pathlib import Path

import orjson
from conftest import commit_env, deja, git

SID = "cccc1111-2222-4333-8444-555566667777"
REQUEST = "Add discounts <script>x</script>\x1b]8;;http://e\x07link\nsecond line"


def _clone_with_note(repo: Path, sessions: dict[str, dict[str, str]]) -> None:
    (repo / "disc.py").write_text("def disc_0(x):\n    return x * 0.9\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Discounts", env=commit_env(1_800_000_000))
    sha = git(repo, "rev-parse", "HEAD").strip()
    note = {
        "schema": 2,
        "tool": "deja-blame 0.1.0",
        "commit": sha,
        "files": {"disc.py": {SID: [[1, 2, 0.97, 1_799_999_000]]}},
        "sessions": sessions,
    }
    git(repo, "notes", "--ref=deja", "add", "-m", orjson.dumps(note).decode(), sha)


def test_why_from_a_note_prints_its_agent_model_and_request(repo: Path) -> None:
    info = {
        "agent": "claude-code",
        "model": "claude-opus-4-1\x1b[2J",
        "project": ".",
        "started_at": "2027-01-15T08:00:00Z",
        "first_prompt": REQUEST,
    }
    _clone_with_note(repo, {SID: info})
    doc = orjson.loads(deja("why", "disc.py:1", "--json", cwd=repo).stdout)
    assert doc["note_only"] and doc["session_info"]["first_prompt"]
    out = deja("why", "disc.py:1", cwd=repo).stdout.decode()
    assert "\x1b" not in out and "\x07" not in out
    assert "agent claude  model claude-opus-4-1" in out
    assert "\nAsked  (its first request, from the note)\n" in out
    # one line: a note is a stranger's text, and prints no line of its own
    assert "\n  Add discounts <script>x</script>link second line\n" in out
    assert out.index("Asked") < out.index("History (oldest first)")


def test_why_from_a_note_without_the_opt_in_prints_no_request(repo: Path) -> None:
    _clone_with_note(repo, {SID: {"agent": "claude-code", "project": "."}})
    out = deja("why", "disc.py:1", cwd=repo).stdout.decode()
    assert "agent claude\n" in out and "model" not in out and "Asked" not in out


def test_a_request_read_from_a_note_is_cleaned_as_one_read_from_its_transcript(
    repo: Path,
) -> None:
    from deja_blame.outputs.escape import inert, terminal

    request = "Make it \x1b[31mRED\x1b[0m, \x1b]8;;http://e\x07here\x1b]8;;\x07 now"
    info = {"agent": "claude-code", "model": "\x1b[1mopus\x1b[0m", "first_prompt": request}
    _clone_with_note(repo, {SID: info})
    doc = orjson.loads(deja("why", "disc.py:1", "--json", cwd=repo).stdout)
    assert doc["session_info"]["first_prompt"] == inert(request) == "Make it RED, here now"
    assert doc["session_info"]["model"] == "opus"
    out = deja("why", "disc.py:1", cwd=repo).stdout.decode()
    assert f"\n  {terminal(request)}\n" in out and "[31m" not in out
