"""The MCP server's text and the editor's hover show a file's line as the terminal
does: an escape sequence's ESC as ``<U+001B>``, not removed (a line that hides code
shows that something is there; removed, the line shown is not the file's)."""

from __future__ import annotations

from deja_blame.attribution.model import FileBlame, LineAttribution, SessionInfo
from deja_blame.editor.lsp.render import agent_hover
from deja_blame.editor.mcp.render import why_run

LINE = 'BANNER = "\x1b[31mRED\x1b[0m"'
SHOWN = 'BANNER = "<U+001B>[31mRED<U+001B>[0m"'
HUNK = {"old_start": 9, "new_start": 9, "removed": ["old = \x1b[8mhidden"], "added": [LINE]}
HISTORY = [{"commit": "a" * 40, "at": "2026-12-07T19:31:00Z", "session": "s1", "text": LINE}]


def test_the_mcp_why_text_shows_a_line_s_control_characters() -> None:
    run = {
        "kind": "agent",
        "start": 9,
        "end": 9,
        "text": LINE,
        "session": "s1",
        "agent": "claude-code",
        "commit": "a" * 40,
        "edit": {"tool": "Write", "at": "2026-12-07T19:31:00Z", "hunks": [HUNK]},
        "history": HISTORY,
    }
    out = why_run("cart.py", run)
    assert "\x1b" not in out
    assert f"cart.py line 9: {SHOWN}" in out
    assert f"    +{SHOWN}" in out and "    -old = <U+001B>[8mhidden" in out
    assert out.rstrip().endswith(f": {SHOWN}")  # the history's line


def test_the_hover_s_edit_and_history_show_a_line_s_control_characters() -> None:
    ln = LineAttribution(
        line=9,
        text=LINE,
        commit="a" * 40,
        session="s1",
        source="claude-code",
        confidence=0.97,
        written_at="2026-12-07T19:31:00Z",
        via="edit",
    )
    info = SessionInfo("s1", "claude-code", "/work/shop", None, None, model="m")
    story = {
        "edit": {"tool": "Write", "at": "2026-12-07T19:31:00Z", "hunks": [HUNK]},
        "history": HISTORY + [{**HISTORY[0], "commit": "b" * 40}],
    }
    hover = agent_hover(
        FileBlame("cart.py", None, "/r", [ln], sessions={"s1": info}), ln, story, None
    )
    assert "\x1b" not in hover
    assert f"+{SHOWN}" in hover.splitlines() and "-old = <U+001B>[8mhidden" in hover.splitlines()
    assert "<U+001B>[31mRED" in hover.split("+" + SHOWN, 1)[1], hover  # the history too
