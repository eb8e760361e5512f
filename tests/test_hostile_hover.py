"""The editor's hover renders no field of a note or a transcript as live Markdown
(issue 39 item 3): a note's agent ``![x](https://...)`` would make the editor fetch
an image on every hover (the reviewer's address to whoever wrote the note), and a
link would look like deja's own. One field at a time, each through ``md_text``
or inside code."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from deja_blame.attribution.model import FileBlame, LineAttribution, SessionInfo
from deja_blame.editor.lsp.render import agent_hover, person_hover

EVIL = "![x](https://evil.example/p.png) [deja](https://evil.example/) <img src=x onerror=alert(1)> **b** `c"


def _live(markdown: str) -> str:
    """What a renderer reads as Markdown: code fences and code spans taken out."""
    text = re.sub(r"(?ms)^(`{3,}).*?^\1", "", markdown)
    text = re.sub(r"\\.", "", text)  # an escaped character is text, never markup
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", text)


def _hover(field: str) -> str:
    ln = LineAttribution(
        line=1,
        text="x = 1",
        commit="a" * 40,
        session="s1",
        source="claude-code",
        confidence=0.9,
        written_at="2026-07-17T09:30:00Z",
        via="note",
    )
    info = SessionInfo("s1", "claude-code", "/work/shop", None, None, model="m")
    story: dict[str, Any] = {"edit": {"tool": "Edit", "at": "2026-07-17T09:30:00Z", "hunks": []}}
    if field == "agent":
        ln.source = EVIL
    elif field == "written_at":
        ln.written_at = EVIL
    elif field == "via":
        ln.via = EVIL
    elif field == "edit_at":
        story["edit"]["at"] = EVIL
    elif field == "edit_tool":
        story["edit"]["tool"] = EVIL
    elif field == "model":
        info.model = EVIL
    elif field == "project":
        info.project = EVIL
    elif field == "session":
        ln.session = EVIL
    elif field == "commit":
        ln.commit = EVIL
    blame = FileBlame("a.py", None, "/r", [ln], sessions={ln.session or "": info})
    return agent_hover(blame, ln, story, EVIL if field == "request" else None)


FIELDS = [
    "agent",
    "written_at",
    "via",
    "edit_at",
    "edit_tool",
    "model",
    "project",
    "session",
    "commit",
    "request",
]


@pytest.mark.parametrize("field", FIELDS)
def test_a_hostile_field_is_never_live_markdown(field: str) -> None:
    live = _live(_hover(field))
    assert "](" not in live and "<img" not in live and "**b**" not in live, live
    assert "evil" in _hover(field) or field in ("commit", "written_at")  # shown as text


def test_a_hostile_author_is_never_live_markdown() -> None:
    live = _live(person_hover("a" * 40, EVIL, "e@x", 0, EVIL))
    assert "](" not in live and "<img" not in live, live


def test_the_server_answers_a_mistyped_notification_with_a_log_line(tmp_path: Path) -> None:
    """``deja lsp`` died on a notification with parameters of the wrong type."""
    from lsp_client import LspClient

    repo = tmp_path / "r"
    repo.mkdir()
    client = LspClient(repo)
    try:
        client.initialize(repo)
        client.notify("textDocument/didOpen", {"textDocument": 5})
        client.notify("textDocument/didChange", {"textDocument": {"uri": 7}, "contentChanges": [5]})
        client.notify("textDocument/didSave", [1, 2])
        client.notify("textDocument/didClose", {"textDocument": "x"})
        client.notify("$/cancelRequest", "x")
        reply = client.wait(client.start("textDocument/hover", {"textDocument": 3, "position": []}))
        assert "error" in reply or reply.get("result") is None
    finally:
        code = client.close()
    assert code == 0  # still serving: close() shut it down cleanly
    assert "ignored a bad 'textDocument/didOpen' message" in client.stderr()
