"""An edit whose transcript gives no line numbers (Claude Code's ``Edit`` without its
``structuredPatch``, Codex's ``apply_patch``) is placed by its text in the file as the
edit left it: ``deja why``, the hover and MCP show git's ``@@ -a,b +c,d @@`` and say
how it was found. It showed ``@@ ? @@`` (fixes13's leftover)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import commit_env, deja, deja_json, git
from mcp_client import McpClient, text_of
from test_other_agents import BEFORE, T0, iso

from deja_blame.attribution.edit_place import place_hunks
from deja_blame.output import UNPLACED_HUNK, placed_by_text

SID = "c1a2b3c4-0000-4000-8000-0000000000e1"
NO_AGY = {"DEJA_ANTIGRAVITY_ROOT": ""}


# -- the placing itself, plain data -----------------------------------------------------


def test_the_hunk_that_wrote_the_line_is_found_at_the_line_s_own_place() -> None:
    # the same two lines stand twice: the copy around line 6 is the one asked about
    lines = ["a", "x", "y", "b", "c", "x", "y", "d"]
    assert place_hunks([(["old"], ["x", "y"])], lines, 7, "y") == [(6, 6)]
    assert place_hunks([(["old"], ["x", "y"])], lines, 2, "x") == [(2, 2)]


def test_the_edit_s_other_hunks_follow_in_order_and_the_old_side_counts_them() -> None:
    lines = ["head", "one", "two", "keep", "three", "keep", "four"]
    hunks = [([], ["one", "two"]), (["gone"], []), (["was"], ["three"]), ([], ["four"])]
    # 2 added before the removal; the removal takes one; "three" replaces one line
    assert place_hunks(hunks, lines, 5, "three") == [(2, 2), None, (4, 5), (6, 7)]


def test_a_block_led_by_a_blank_line_and_a_hunk_not_there_any_more() -> None:
    lines = ["", "", "def f():", "", "    return 1", ""]
    assert place_hunks([([], ["", "    return 1"])], lines, 5, "    return 1") == [(4, 4)]
    # the line asked about is not the edit's, and its text stands nowhere whole
    assert place_hunks([([], ["zzz", "    return 1"])], lines, 5, "    return 1") == [None]


def test_a_line_changed_by_a_later_edit_still_places_its_hunk_by_most_of_it() -> None:
    lines = ["a", "b1", "c", "D", "e"]
    assert place_hunks([([], ["b1", "c", "d"])], lines, 3, "c") == [(2, 2)]
    assert place_hunks([([], ["b1", "x", "y"])], lines, 2, "b1") == [None]


# -- end to end ---------------------------------------------------------------------------


def _claude_edits(home: Path, repo: Path, edits: list[tuple[str, str]], name: str) -> None:
    """A Claude Code session that replaces ``old`` by ``new`` in ``name`` once per
    pair, recording no ``structuredPatch`` (as older versions, and some tools, do)."""
    project = home / ".claude" / "projects" / ("-" + str(repo).strip("/").replace("/", "-"))
    project.mkdir(parents=True, exist_ok=True)
    at = T0 + 3600
    records: list[dict[str, Any]] = [
        {"type": "user", "sessionId": SID, "cwd": str(repo), "timestamp": iso(at),
         "message": {"role": "user", "content": "Discount orders over 100."}},
    ]  # fmt: skip
    for k, (old, new) in enumerate(edits):
        records += [
            {"type": "assistant", "sessionId": SID, "cwd": str(repo), "timestamp": iso(at + 5 + k),
             "message": {"role": "assistant", "model": "claude-opus-4-1", "content": [
                 {"type": "tool_use", "id": f"t{k}", "name": "Edit", "input": {
                     "file_path": str(repo / name), "old_string": old, "new_string": new}}]}},
            {"type": "user", "sessionId": SID, "cwd": str(repo), "timestamp": iso(at + 6 + k),
             "message": {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": f"t{k}", "content": "Updated."}]},
             "toolUseResult": {"filePath": str(repo / name)}},
        ]  # fmt: skip
    (project / f"{SID}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


OLD = "def total(items):\n    return sum(price(i) for i in items)\n"
NEW = (
    "def total(items):\n"
    "    subtotal = sum(price(item) for item in items)\n"
    "    if subtotal > 100:\n"
    "        return round(subtotal * 0.9, 2)\n"
    "    return subtotal\n"
)
HEAD_LINES = "import os\n\n\n"  # the file begins 3 lines lower than BEFORE


def _edit_lines(out: str) -> list[str]:
    lines = out.splitlines()
    at = lines.index("+++ b/pricing.py")
    return lines[at + 1 : at + 7]


def test_why_places_a_claude_edit_without_its_patch(repo: Path, tmp_path: Path) -> None:
    (repo / "pricing.py").write_text(HEAD_LINES + BEFORE)
    git(repo, "add", "pricing.py")
    git(repo, "commit", "-qm", "prices", env=commit_env(T0))
    _claude_edits(tmp_path / "home", repo, [(OLD, NEW)], "pricing.py")
    (repo / "pricing.py").write_text(HEAD_LINES + BEFORE.replace(OLD, NEW))
    git(repo, "commit", "-qam", "discount", env=commit_env(T0 + 7200))
    head = git(repo, "rev-parse", "HEAD").strip()
    out = deja("why", "pricing.py:11", cwd=repo, env=NO_AGY).stdout.decode()
    assert _edit_lines(out) == [
        f"@@ -9 +9,4 @@ {placed_by_text(head)}",
        "-    return sum(price(i) for i in items)",
        "+    subtotal = sum(price(item) for item in items)",
        "+    if subtotal > 100:",
        "+        return round(subtotal * 0.9, 2)",
        "+    return subtotal",
    ], out
    assert f"found by its text in commit {head[:12]}:" in out
    doc = deja_json("why", "pricing.py:11", "--json", cwd=repo, env=NO_AGY)
    hunk = doc["edit"]["hunks"][0]
    assert (hunk["old_start"], hunk["new_start"], hunk["placed_by_text"]) == (9, 9, True)

    # a person adds two lines on top later: the edit is placed in its own commit's file
    (repo / "pricing.py").write_text("# top\n# top\n" + HEAD_LINES + BEFORE.replace(OLD, NEW))
    git(repo, "commit", "-qam", "header", env=commit_env(T0 + 9000))
    out = deja("why", "pricing.py:13", cwd=repo, env=NO_AGY).stdout.decode()
    assert _edit_lines(out)[0] == f"@@ -9 +9,4 @@ {placed_by_text(head)}", out


def test_an_edit_in_two_hunks_places_what_it_wrote_and_not_a_removal(
    repo: Path, tmp_path: Path
) -> None:
    a, b, c = "rate = load_rate()", "fee = load_fee(rate)", "total = price * rate"
    d = "total_with_fee = total + fee_for(total)"
    (repo / "calc.py").write_text(f"{a}\n{b}\n{c}\n")
    git(repo, "add", "calc.py")
    git(repo, "commit", "-qm", "calc", env=commit_env(T0))
    _claude_edits(tmp_path / "home", repo, [(f"{a}\n{b}\n{c}\n", f"{a}\n{c}\n{d}\n")], "calc.py")
    (repo / "calc.py").write_text(f"{a}\n{c}\n{d}\n")
    out = deja("why", "calc.py:3", cwd=repo, env=NO_AGY).stdout.decode()
    lines = out.splitlines()
    assert "+++ b/calc.py" in lines, out
    at = lines.index("+++ b/calc.py")
    # the fee's removal wrote nothing to find; d's line is placed: after old line 3
    assert lines[at + 1 : at + 5] == [
        UNPLACED_HUNK,
        f"-{b}",
        f"@@ -3,0 +3 @@ {placed_by_text(None)}",
        f"+{d}",
    ], out
    assert "found by its text in the working tree:" in out


def test_why_and_mcp_place_a_codex_patch(repo: Path, tmp_path: Path) -> None:
    from test_other_agents import AFTER, _codex

    (repo / "pricing.py").write_text(BEFORE)
    git(repo, "add", "pricing.py")
    git(repo, "commit", "-qm", "prices", env=commit_env(T0))
    _codex(tmp_path / "home", repo, T0 + 3600)
    (repo / "pricing.py").write_text(AFTER)
    git(repo, "commit", "-qam", "discount", env=commit_env(T0 + 7200))
    head = git(repo, "rev-parse", "HEAD").strip()
    out = deja("why", "pricing.py:7", cwd=repo, env=NO_AGY).stdout.decode()
    assert _edit_lines(out)[:2] == [
        f"@@ -6 +6,4 @@ {placed_by_text(head)}",
        "-    return sum(price(i) for i in items)",
    ], out

    client = McpClient(repo, NO_AGY)
    try:
        client.initialize()
        result = client.call("why", file="pricing.py", line=7)
        hunk = result["structuredContent"]["runs"][0]["edit"]["hunks"][0]
        assert (hunk["old_start"], hunk["new_start"]) == (6, 6)
        assert (hunk["removed_count"], hunk["added_count"], hunk["placed_by_text"]) == (1, 4, True)
        assert f"    @@ -6 +6,4 @@ {placed_by_text(head)}" in text_of(result).splitlines()
        assert client.close() == 0
    finally:
        client.kill()


def test_mcp_s_header_counts_the_lines_its_budget_left_out(repo: Path, tmp_path: Path) -> None:
    body = "".join(f"value_{i} = compute_value({i}, scale=factor)\n" for i in range(40))
    (repo / "long.py").write_text("start = 0\n")
    git(repo, "add", "long.py")
    git(repo, "commit", "-qm", "start", env=commit_env(T0))
    _claude_edits(tmp_path / "home", repo, [("start = 0\n", "start = 0\n" + body)], "long.py")
    (repo / "long.py").write_text("start = 0\n" + body)
    git(repo, "commit", "-qam", "forty", env=commit_env(T0 + 7200))
    client = McpClient(repo, NO_AGY)
    try:
        client.initialize()
        result = client.call("why", file="long.py", line=20)
        run = result["structuredContent"]["runs"][0]
        assert "edit" in run, run
        edit = run["edit"]
        hunk = edit["hunks"][0]
        assert len(hunk["added"]) == 30 and hunk["added_count"] == 40
        assert edit["lines_left_out"] == 10
        assert any(
            x.startswith("    @@ -1,0 +2,40 @@ (found by") for x in text_of(result).splitlines()
        )
        assert client.close() == 0
    finally:
        client.kill()


def test_the_hover_says_how_a_hunk_was_placed() -> None:
    from test_hover_hunk_header import _hover

    hunk = {"old_start": 7, "new_start": 7, "removed": ["a"], "added": ["b"]}
    hover = _hover({**hunk, "placed_by_text": True})
    assert f"@@ -7 +7 @@ {placed_by_text('a' * 40)}" in hover.splitlines(), hover
    assert "@@ -7 +7 @@" in _hover(hunk).splitlines()


def test_a_file_written_whole_starts_at_line_1_as_git_shows_a_new_file(
    repo: Path, tmp_path: Path
) -> None:
    """NEWCOMER14 #3: a Claude ``Write`` that created the file said ``@@ ? @@``."""
    project = (
        tmp_path / "home" / ".claude" / "projects" / ("-" + str(repo).strip("/").replace("/", "-"))
    )
    project.mkdir(parents=True)
    content = "".join(f"value_{i} = compute_value({i}, scale=factor)\n" for i in range(6))
    at = T0 + 3600
    records = [
        {"type": "user", "sessionId": SID, "cwd": str(repo), "timestamp": iso(at),
         "message": {"role": "user", "content": "Write the values."}},
        {"type": "assistant", "sessionId": SID, "cwd": str(repo), "timestamp": iso(at + 5),
         "message": {"role": "assistant", "model": "claude-opus-4-1", "content": [
             {"type": "tool_use", "id": "w1", "name": "Write", "input": {
                 "file_path": str(repo / "values.py"), "content": content}}]}},
        {"type": "user", "sessionId": SID, "cwd": str(repo), "timestamp": iso(at + 6),
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "w1", "content": "File created."}]},
         "toolUseResult": {"type": "create", "filePath": str(repo / "values.py"), "content": content}},
    ]  # fmt: skip
    (project / f"{SID}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (repo / "values.py").write_text(content)
    lines = deja("why", "values.py:2", cwd=repo, env=NO_AGY).stdout.decode().splitlines()
    assert "+++ b/values.py" in lines, lines
    at_header = lines.index("+++ b/values.py") + 1
    assert lines[at_header] == "@@ -0,0 +1,6 @@", lines
    hunk = deja_json("why", "values.py:2", "--json", cwd=repo, env=NO_AGY)["edit"]["hunks"][0]
    assert (hunk["old_start"], hunk["new_start"], "placed_by_text" in hunk) == (1, 1, False)
