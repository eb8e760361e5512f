"""The editor's hover shows an edit's hunks with git's headers, as ``deja why`` does:
``@@ -4,0 +5,3 @@`` for three lines inserted after line 4. It showed ``@@ -5 +5 @@``
(one line replaced by one) for every hunk, whatever its counts (newcomer 10, #2)."""

from __future__ import annotations

from typing import Any

import pytest

from deja_blame.attribution.model import FileBlame, LineAttribution, SessionInfo
from deja_blame.editor.lsp.render import agent_hover


def _hover(hunk: dict[str, Any]) -> str:
    ln = LineAttribution(
        line=5,
        text="    def is_empty(self):",
        commit="a" * 40,
        session="s1",
        source="claude-code",
        confidence=0.97,
        written_at="2026-07-17T09:30:00Z",
        via="edit",
    )
    info = SessionInfo("s1", "claude-code", "/work/shop", None, None, model="m")
    story = {"edit": {"tool": "Edit", "at": "2026-07-17T09:30:00Z", "hunks": [hunk]}}
    blame = FileBlame("inv.py", None, "/r", [ln], sessions={"s1": info})
    return agent_hover(blame, ln, story, None)


@pytest.mark.parametrize(
    ("hunk", "header"),
    [
        # three lines inserted after line 4
        (
            {"old_start": 5, "new_start": 5, "removed": [], "added": ["", "    def a():", "  1"]},
            "@@ -4,0 +5,3 @@",
        ),
        # one line replaced by one: counts of 1 left out, as git does
        ({"old_start": 7, "new_start": 7, "removed": ["x = 1"], "added": ["x = 2"]}, "@@ -7 +7 @@"),
        # two lines replaced by three
        (
            {"old_start": 3, "new_start": 3, "removed": ["a", "b"], "added": ["c", "d", "e"]},
            "@@ -3,2 +3,3 @@",
        ),
        # two lines deleted after line 8
        ({"old_start": 9, "new_start": 9, "removed": ["a", "b"], "added": []}, "@@ -9,2 +8,0 @@"),
    ],
)
def test_the_hover_s_hunk_header_counts_the_hunk_s_lines(hunk: dict[str, Any], header: str) -> None:
    hover = _hover(hunk)
    assert header in hover.splitlines(), hover
