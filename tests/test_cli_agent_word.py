"""One agent, one name in every text output (NEWCOMER12 #6): blame said ``claude``,
sessions, stats, show, why and report said ``claude-code``. Every text output now
names it by blame's word; every JSON keeps the id, as the contract says."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import commit_env, deja, deja_json, git
from test_other_agents import AFTER, BEFORE, T0, _claude


def test_claude_code_is_claude_in_every_text_and_claude_code_in_json(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "pricing.py").write_text(BEFORE)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "prices", env=commit_env(T0))
    sid = _claude(Path.home(), repo, T0 + 3600)
    (repo / "pricing.py").write_text(AFTER)
    git(repo, "commit", "-qam", "discount", env=commit_env(T0 + 7200))
    env = {"DEJA_ANTIGRAVITY_ROOT": ""}
    deja("index", "-q", cwd=repo, env=env)
    (repo / "pricing.py").write_text(AFTER.replace("subtotal * 0.9", "subtotal * 0.85"))

    def text(*args: str) -> str:
        return deja(*args, cwd=repo, env=env).stdout.decode()

    outputs = {
        "blame": text("blame", "pricing.py"),
        "sessions": text("sessions"),
        "stats": text("stats"),
        "show": text("show", sid[:8]),
        "why": text("why", "pricing.py:7"),
        "why (not committed)": text("why", "pricing.py:8"),
        "report markdown": text("report", "HEAD", "--format", "markdown"),
        "report text": text("report", "HEAD", "--format", "text"),
        "report html": text("report", "HEAD", "--format", "html"),
    }
    for name, out in outputs.items():
        assert re.search(r"\bclaude\b(?!-code)", out), (name, out)
        assert "claude-code" not in out, (name, out)

    assert deja_json("sessions", "--json", cwd=repo, env=env)["sessions"][0]["source"] == (
        "claude-code"
    )
    assert deja_json("stats", "--json", cwd=repo, env=env)["by_agent"][0]["agent"] == "claude-code"
    why = deja_json("why", "pricing.py:7", "--json", cwd=repo, env=env)
    assert why["session_info"]["agent"] == why["history"][-1]["agent"] == "claude-code"
    report = deja_json("report", "HEAD", "--format", "json", cwd=repo, env=env)
    assert report["sessions"][0]["agent"] == "claude-code"
