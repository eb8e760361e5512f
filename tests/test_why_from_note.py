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
    assert out.index("Asked") < out.index("History (oldest first, by commit time)")


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


def test_a_reviewer_s_report_shows_the_request_a_note_carries_as_why_does(repo: Path) -> None:
    """One rule for every reader (trial 16 #6): a first request a note carries was
    published by its author, so the report shows it as why, the hover and MCP do;
    ``--no-prompts`` leaves it out. A session whose note carries none is left out
    with a hint that names the author's setting, not a command that shows nothing."""
    other = "dddd1111-2222-4333-8444-555566667777"
    info = {"agent": "claude-code", "project": ".", "first_prompt": "Add discounts, please"}
    (repo / "base.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base", env=commit_env(1_799_000_000))
    _clone_with_note(repo, {SID: info})
    # a second session on the same commit, whose author did not opt in
    sha = git(repo, "rev-parse", "HEAD").strip()
    note = orjson.loads(git(repo, "notes", "--ref=deja", "show", sha))
    note["files"]["disc.py"] = {SID: [[1, 1, 0.97, 1_799_999_000]],
                                other: [[2, 2, 0.97, 1_799_999_100]]}  # fmt: skip
    note["sessions"][other] = {"agent": "claude-code", "project": "."}
    git(repo, "notes", "--ref=deja", "add", "-f", "-m", orjson.dumps(note).decode(), sha)

    md = deja("report", "HEAD~1..HEAD", "--format", "markdown", cwd=repo).stdout.decode()
    assert "| Add discounts, please |" in md, md
    assert "| *(prompts left out)* |" in md  # the other session's
    assert "- **First prompt:** Add discounts, please" in md  # its session's block too
    assert (
        "*Prompts left out: a note carries its session's first request only where its"
        " author set `git config deja.notes.prompts true`.*"
    ) in md
    assert "deja report --prompts" not in md  # it would show nothing more here
    text = deja("report", "HEAD~1..HEAD", "--format", "text", cwd=repo).stdout.decode()
    assert "  first prompt: Add discounts, please" in text
    assert (
        "(prompts left out: a note carries its session's first request only where its"
        " author set git config deja.notes.prompts true)"
    ) in text
    doc = orjson.loads(deja("report", "HEAD~1..HEAD", "--format", "json", cwd=repo).stdout)
    by_id = {s["session_id"]: s["first_prompt"] for s in doc["sessions"]}
    assert by_id == {SID: "Add discounts, please", other: None}
    html = deja("report", "HEAD~1..HEAD", "--format", "html", cwd=repo).stdout.decode()
    assert "Add discounts, please" in html

    for fmt in ("markdown", "text", "json", "html"):
        hidden = deja("report", "HEAD~1..HEAD", "--format", fmt, "--no-prompts", cwd=repo)
        assert b"Add discounts" not in hidden.stdout, fmt
    md = deja("report", "HEAD~1..HEAD", "--no-prompts", "--format", "markdown", cwd=repo)
    assert b"Prompts left out:" not in md.stdout  # the person chose: no hint
