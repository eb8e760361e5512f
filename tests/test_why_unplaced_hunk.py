"""An edit whose transcript gives no line numbers (Codex's apply_patch, Claude Code's
Edit without its patch) is shown with a hunk line saying so: ``deja why`` printed
``--- a/x`` / ``+++ b/x`` and then bare ``+`` lines, a unified diff that had lost its
``@@`` line (NEWCOMER13 #2). A placed hunk keeps git's header."""

from __future__ import annotations

from pathlib import Path

from conftest import commit_env, deja, git
from test_hover_hunk_header import _hover
from test_other_agents import AFTER, BEFORE, T0, _codex

from deja_blame.output import UNPLACED_HUNK


def test_why_says_a_codex_patch_s_hunk_has_no_line_numbers(repo: Path, tmp_path: Path) -> None:
    (repo / "pricing.py").write_text(BEFORE)
    git(repo, "add", "pricing.py")
    git(repo, "commit", "-qm", "prices", env=commit_env(T0))
    _codex(tmp_path / "home", repo, T0 + 3600)
    (repo / "pricing.py").write_text(AFTER)
    git(repo, "commit", "-qam", "discount", env=commit_env(T0 + 7200))
    out = deja("why", "pricing.py:7", cwd=repo, env={"DEJA_ANTIGRAVITY_ROOT": ""})
    lines = out.stdout.decode().splitlines()
    at = lines.index("+++ b/pricing.py")
    assert lines[at + 1] == UNPLACED_HUNK, lines
    assert lines[at + 1].startswith("@@ ? @@") and "no line numbers" in lines[at + 1]
    assert lines[at + 2] == "-    return sum(price(i) for i in items)", lines


def test_the_hover_says_so_too_and_a_placed_hunk_keeps_its_header() -> None:
    unplaced = _hover({"old_start": None, "new_start": None, "removed": ["a"], "added": ["b"]})
    assert UNPLACED_HUNK in unplaced.splitlines(), unplaced
    placed = _hover({"old_start": 7, "new_start": 7, "removed": ["a"], "added": ["b"]})
    assert "@@ -7 +7 @@" in placed.splitlines() and UNPLACED_HUNK not in placed
