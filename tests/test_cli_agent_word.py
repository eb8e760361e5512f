"""One agent, one name in every text output (NEWCOMER12 #6): blame said ``claude``,
sessions, stats, show, why and report said ``claude-code``. Every text output now
names it by blame's word; every JSON keeps the id, as the contract says. The editor's
outputs too: MCP's text said ``claude-code`` and the hover ``Claude Code`` beside a
lens and a history saying ``claude``."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import commit_env, deja, deja_json, git
from lsp_client import LspClient
from mcp_client import McpClient, text_of
from test_other_agents import AFTER, BEFORE, T0, _claude

ENV = {"DEJA_ANTIGRAVITY_ROOT": ""}


def _world(repo: Path) -> str:
    """A Claude Code session's lines 6-9 of pricing.py, committed and indexed; line 8
    changed since, not committed."""
    (repo / "pricing.py").write_text(BEFORE)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "prices", env=commit_env(T0))
    sid = _claude(Path.home(), repo, T0 + 3600)
    (repo / "pricing.py").write_text(AFTER)
    git(repo, "commit", "-qam", "discount", env=commit_env(T0 + 7200))
    deja("index", "-q", cwd=repo, env=ENV)
    (repo / "pricing.py").write_text(AFTER.replace("subtotal * 0.9", "subtotal * 0.85"))
    return sid


def _says_claude(name: str, out: str) -> None:
    assert re.search(r"\bclaude\b(?!-code)", out), (name, out)
    assert "claude-code" not in out and "Claude Code" not in out, (name, out)


def test_claude_code_is_claude_in_every_text_and_claude_code_in_json(
    repo: Path, tmp_path: Path
) -> None:
    sid = _world(repo)
    env = ENV

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
    page = tmp_path / "share.html"
    deja("stats", "--by", "month", "--html", str(page), cwd=repo, env=env)
    outputs["stats --html"] = page.read_text()  # its legend, table and bars' titles
    for name, out in outputs.items():
        _says_claude(name, out)

    assert deja_json("sessions", "--json", cwd=repo, env=env)["sessions"][0]["source"] == (
        "claude-code"
    )
    assert deja_json("stats", "--json", cwd=repo, env=env)["by_agent"][0]["agent"] == "claude-code"
    why = deja_json("why", "pricing.py:7", "--json", cwd=repo, env=env)
    assert why["session_info"]["agent"] == why["history"][-1]["agent"] == "claude-code"
    report = deja_json("report", "HEAD", "--format", "json", cwd=repo, env=env)
    assert report["sessions"][0]["agent"] == "claude-code"


def test_the_editor_s_texts_say_claude_and_its_json_claude_code(repo: Path) -> None:
    sid = _world(repo)
    mcp = McpClient(repo, ENV)
    try:
        mcp.initialize()
        for line in (7, 8):  # committed; changed since (its history: the session's)
            why = mcp.call("why", file="pricing.py", line=line, history=True)
            _says_claude(f"mcp why {line}", text_of(why))
            run = why["structuredContent"]["runs"][0]
            assert [v["agent"] for v in run["history"] if v["session"]] == ["claude-code"], run
            assert run.get("agent") == ("claude-code" if line == 7 else None), run
        assert run["kind"] == "uncommitted" and "history" in text_of(why)  # line 8's
        for tool, args in (("blame", {"file": "pricing.py"}), ("sessions", {})):
            _says_claude(f"mcp {tool}", text_of(mcp.call(tool, **args)))
        shown = mcp.call("show", session=sid[:8])
        _says_claude("mcp show", text_of(shown))
        assert shown["structuredContent"]["agent"] == "claude-code"
        assert mcp.close() == 0
    finally:
        mcp.kill()

    lsp = LspClient(repo, ENV)
    try:
        lsp.initialize(repo)
        uri = lsp.open(repo / "pricing.py")
        titles = [x["command"]["title"] for x in lsp.lenses(uri)]
        assert any(t.startswith("claude ") for t in titles), titles
        hover = lsp.hover(uri, 6)
        assert hover is not None and sid in hover
        _says_claude("hover", hover)
        why = lsp.request(
            "workspace/executeCommand", {"command": "deja.why", "arguments": [uri, 6]}
        )
        assert why["session_info"]["agent"] == "claude-code"
        _says_claude("deja.why's message", lsp.wait_for("window/showMessage")["params"]["message"])
        assert lsp.close() == 0
    finally:
        lsp.kill()
