"""An edit whose transcript gives no line numbers (Codex's apply_patch, Claude Code's
Edit without its patch) is shown with a hunk line saying so: ``deja why`` printed
``--- a/x`` / ``+++ b/x`` and then bare ``+`` lines, a unified diff that had lost its
``@@`` line (NEWCOMER13 #2). A placed hunk keeps git's header. ``deja why`` of such a
hunk, placed by its text since or not: test_why_edit_placed.py."""

from __future__ import annotations

from test_hover_hunk_header import _hover

from deja_blame.output import UNPLACED_HUNK


def test_the_hover_says_so_too_and_a_placed_hunk_keeps_its_header() -> None:
    unplaced = _hover({"old_start": None, "new_start": None, "removed": ["a"], "added": ["b"]})
    assert UNPLACED_HUNK in unplaced.splitlines(), unplaced
    placed = _hover({"old_start": 7, "new_start": 7, "removed": ["a"], "added": ["b"]})
    assert "@@ -7 +7 @@" in placed.splitlines() and UNPLACED_HUNK not in placed
