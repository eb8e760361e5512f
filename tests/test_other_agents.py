"""Claude Code, Codex CLI and Gemini CLI: their transcripts read, indexed and blamed.

Golden files: ``fixtures/<agent>/expected.json`` beside each agent's transcripts,
laid out on disk as the agent keeps them. End to end: a real repository, a
transcript in the agent's own layout under the fake HOME, ``deja index`` with
no flags, ``deja blame``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import REPO_ROOT, commit_env, deja, deja_json, git

from deja_blame.index.store import load_json
from deja_blame.models import Hunk
from deja_blame.transcripts.codex.patch import find_patches, parse_patch
from deja_blame.transcripts.edits import hunks_between, split_by_proposal, unified_hunks
from deja_blame.transcripts.registry import discover, guess_agent, read_session
from deja_blame.transcripts.transcript_file import TranscriptFile

AGENT_FIXTURES = REPO_ROOT / "fixtures"
CASES = [
    ("claude-code", "DEJA_CLAUDE_ROOT"),
    ("codex", "DEJA_CODEX_ROOT"),
    ("gemini-cli", "DEJA_GEMINI_ROOT"),
]
T0 = 1_795_852_800  # 2026-11-28T08:00:00Z


def iso(epoch: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(epoch, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


# -- golden files -----------------------------------------------------------------------------


@pytest.mark.parametrize(("agent", "var"), CASES)
def test_golden_sessions(agent: str, var: str) -> None:
    root = AGENT_FIXTURES / agent
    want = orjson.loads((root / "expected.json").read_bytes())
    found = discover([agent], env={var: str(root)})
    assert sorted(tf.session_id for tf in found) == sorted(want)
    for tf in found:
        got = read_session(tf).to_json()
        got["transcript"] = str(Path(got["transcript"]).relative_to(root.resolve()))
        assert got == want[tf.session_id], f"{agent}/{tf.session_id}"


@pytest.mark.parametrize(("agent", "var"), CASES)
def test_parse_tells_the_agent_from_the_file(agent: str, var: str) -> None:
    root = AGENT_FIXTURES / agent
    want = orjson.loads((root / "expected.json").read_bytes())
    for tf in discover([agent], env={var: str(root)}):
        assert guess_agent(tf.path) == agent
        doc = deja_json("parse", str(tf.path), "--json")
        assert doc["source"] == agent
        assert doc["edits"] == want[tf.session_id]["edits"]
        assert doc["commands"] == want[tf.session_id]["commands"]


def test_claude_rules_in_the_golden_file() -> None:
    """What the Claude Code fixture pins, said in words (the golden file is the detail)."""
    want = orjson.loads((AGENT_FIXTURES / "claude-code" / "expected.json").read_bytes())
    s = want["0b7c6a52-3f1e-4d8a-9c2b-5e6f7a8b9c0d"]
    users = [m["text"] for m in s["messages"] if m["role"] == "user"]
    # meta records, local command output and the interruption notice are not requests
    assert users == [
        "Add a 10% discount for orders over 100 to pricing.py, with a test.",
        "Leave the README. Rename total's loop variable and ask a helper to add docstrings.",
    ]
    assert [c["exit_code"] for c in s["commands"]] == [1, 0]
    paths = [(e["path"], e["source"]) for e in s["edits"]]
    # the rejected README edit is not there; the sub-agent's docstring edit is
    assert "/work/shop/README.md" not in {p for p, _ in paths}
    assert ("/work/shop/tests/conftest.py", "user") in paths  # userModified: the person's line
    assert s["edits"][0]["added"] == [
        "    subtotal = sum(price(i) for i in items)",
        "    if subtotal > 100:",
        "        return round(subtotal * 0.9, 2)",
        "    return subtotal",
    ]  # context lines of the patch are not the session's
    assert s["edits"][-1]["added"] == ['    """The price of one item, before discounts."""']
    assert s["model"] == "claude-sonnet-4-5-20250929"  # the sub-agent's model is not the session's
    assert s["skipped_lines"] == 1


def test_windows_paths_in_a_claude_session() -> None:
    want = orjson.loads((AGENT_FIXTURES / "claude-code" / "expected.json").read_bytes())
    s = want["cb566e5d-73ec-40eb-a92e-2b4b8f3c7581"]
    assert s["project"] == "C:/coding/demo-app"
    assert [e["path"] for e in s["edits"]] == ["C:/coding/demo-app/src/components/List.jsx"]
    assert s["commands"][0]["cwd"] == "C:/coding/demo-app"
    assert s["edits"][0]["hunks"][0]["new_start"] == 5


def test_codex_rules_in_the_golden_file() -> None:
    want = orjson.loads((AGENT_FIXTURES / "codex" / "expected.json").read_bytes())
    s = want["5f0e2d1c-8a7b-4c3d-9e1f-2a3b4c5d6e7f"]
    assert [m["text"] for m in s["messages"] if m["role"] == "user"] == [
        "Fix the rounding in pricing.py: totals must round half up to cents."
    ]  # the environment block is Codex's, and the event repeats the message
    assert [(c["command"], c["exit_code"]) for c in s["commands"]] == [
        ("rg -n round pricing.py", 0),
        ("python -m pytest -q", 1),
        ("python -m pytest -q", 0),
    ]
    assert [e["path"] for e in s["edits"]] == [
        "/work/shop/pricing.py",  # custom_tool_call, relative to the cwd
        "/work/shop/pricing.py",  # function_call with an absolute path
        "/work/shop/tests/test_rounding.py",  # Add File inside a shell apply_patch
        "/work/shop/docs/NOTES.md",  # Update with Move to
    ]  # the heredoc patch that failed verification is not an edit
    assert s["model"] == "gpt-5-codex"
    old = want["1d2c3b4a-5e6f-4a7b-8c9d-0e1f2a3b4c5d"]
    assert old["edits"][0]["added"] == ["# Changelog", "", "- Orders over 100 get 10% off."]


def test_gemini_rules_in_the_golden_file() -> None:
    want = orjson.loads((AGENT_FIXTURES / "gemini-cli" / "expected.json").read_bytes())
    jsonl = want["7d6e5f4a-1b2c-4d3e-8f9a-0b1c2d3e4f5a"]
    texts = [m["text"] for m in jsonl["messages"]]
    assert "Let me try an approach." not in texts  # rewound
    assert "Switching tax.py to Decimal." in texts  # the message written again by its id
    assert jsonl["project"] == "/work/shop"  # from .project_root
    by_source = {(e["source"], tuple(e["added"])) for e in jsonl["edits"]}
    assert ("user", ("    # rounded to cents by the caller",)) in by_source
    assert all("0.25" not in line for e in jsonl["edits"] for line in e["added"])
    resumed = want["9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a"]
    assert resumed["transcript"].endswith(".jsonl")  # the copy, which has the later message
    assert len(resumed["messages"]) == 2
    hashed = want["3c2b1a09-8f7e-4d6c-b5a4-9382716f5e4d"]
    assert hashed["project"] == "/work/shop"  # from the paths it touched
    assert [c["exit_code"] for c in hashed["commands"]] == [1]
    assert [e["tool"] for e in hashed["edits"]] == ["replace", "write_file"]  # the error is not


# -- the small parsers ------------------------------------------------------------------------


def test_patch_grammar() -> None:
    text = (
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n"
        "*** Update File: b.py\n*** Move to: c.py\n@@ def f():\n x = 1\n-y = 2\n+y = 3\n"
        "*** End of File\n*** Delete File: d.py\n*** End Patch\nEOF"
    )
    (body,) = find_patches(text)
    ops = parse_patch(body)
    assert [(o.kind, o.path, o.move_to) for o in ops] == [
        ("add", "a.txt", None),
        ("update", "b.py", "c.py"),
        ("delete", "d.py", None),
    ]
    assert ops[0].hunks == [["+one", "+two"]]
    assert ops[1].hunks == [[" x = 1", "-y = 2", "+y = 3"]]
    # cut off before its end marker: what there is is read
    assert parse_patch(find_patches("*** Begin Patch\n*** Add File: z\n+z\n")[0])[0].hunks == [
        ["+z"]
    ]
    assert find_patches("no patch here") == []


def test_replacement_keeps_only_the_changed_lines() -> None:
    hunks = hunks_between(["a", "b", "c", "d"], ["a", "B", "c", "d", "e"])
    assert [(h.removed, h.added) for h in hunks] == [(["b"], ["B"]), ([], ["e"])]


def test_unified_diff_cut_at_context_lines() -> None:
    diff = "--- x\tCurrent\n+++ x\tProposed\n@@ -10,4 +10,5 @@\n a\n-b\n+B\n c\n+d\n e\n"
    hunks = unified_hunks(diff)
    assert [(h.old_start, h.new_start, h.removed, h.added) for h in hunks] == [
        (11, 11, ["b"], ["B"]),
        (13, 13, [], ["d"]),
    ]


def test_a_person_changed_proposal_splits_by_line() -> None:
    from deja_blame.models import Edit

    edit = Edit(
        path="/p/x.py",
        tool="Edit",
        removed=[],
        added=["x = 1", "y = 2", "x = 1"],
        at=None,
        hunks=[Hunk(removed=[], added=["x = 1", "y = 2", "x = 1"], new_start=1)],
    )
    agent, person = split_by_proposal(edit, ["x = 1", "z = 3"])
    assert (agent.source, agent.added) == ("agent", ["x = 1"])
    assert (person.source, person.added) == ("user", ["y = 2", "x = 1"])  # counted, not just seen


def test_gemini_rewind_to_an_unknown_id_drops_everything(tmp_path: Path) -> None:
    chats = tmp_path / ".gemini" / "tmp" / "p" / "chats"
    chats.mkdir(parents=True)
    records = [
        {"sessionId": "s-1", "projectHash": "h", "startTime": "2026-12-01T08:00:00.000Z"},
        {"id": "a", "timestamp": "2026-12-01T08:00:01.000Z", "type": "user", "content": "one"},
        {"$rewindTo": "nowhere"},
        {"id": "b", "timestamp": "2026-12-01T08:00:02.000Z", "type": "user", "content": "two"},
    ]
    (chats / "session-2026-12-01T08-00-s1.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records)
    )
    (tf,) = discover(["gemini-cli"], env={"DEJA_GEMINI_ROOT": str(tmp_path / ".gemini")})
    assert tf.session_id == "s-1"
    assert [m.text for m in read_session(tf).messages] == ["two"]


# -- discovery with no flags ------------------------------------------------------------------


def _homes(home: Path) -> None:
    """The three fixtures where each agent keeps its transcripts, under ``home``."""
    shutil.copytree(AGENT_FIXTURES / "claude-code" / "projects", home / ".claude" / "projects")
    shutil.copytree(AGENT_FIXTURES / "codex" / "sessions", home / ".codex" / "sessions")
    shutil.copytree(AGENT_FIXTURES / "gemini-cli" / "tmp", home / ".gemini" / "tmp")


def test_index_finds_every_agent_in_its_default_place(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _homes(home)
    env = {"DEJA_ANTIGRAVITY_ROOT": ""}
    report = deja_json("index", "--json", env=env)
    assert report["added"] == 7 and report["problems"] == []
    listed = deja_json("sessions", "--json")["sessions"]
    assert sorted({s["agent"] for s in listed}) == ["claude-code", "codex", "gemini-cli"]
    only = deja_json("sessions", "--agent", "claude", "--json")["sessions"]
    assert {s["session_id"] for s in only} == {
        "0b7c6a52-3f1e-4d8a-9c2b-5e6f7a8b9c0d",
        "cb566e5d-73ec-40eb-a92e-2b4b8f3c7581",
    }
    again = deja_json("index", "--json", env=env)
    assert (again["added"], again["updated"], again["unchanged"]) == (0, 0, 7)
    shown = deja_json("show", "0b7c6a52", "--json")
    want = orjson.loads((AGENT_FIXTURES / "claude-code" / "expected.json").read_bytes())
    assert shown["edits"] == want[shown["session_id"]]["edits"]
    assert shown["model"] == "claude-sonnet-4-5-20250929"


def test_each_agent_home_variable_and_agent_filter(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    _homes(elsewhere)
    env = {
        "DEJA_ANTIGRAVITY_ROOT": "",
        "CLAUDE_CONFIG_DIR": str(elsewhere / ".claude"),
        "CODEX_HOME": str(elsewhere / ".codex"),
        "GEMINI_CLI_HOME": str(elsewhere),
    }
    report = deja_json("index", "--agent", "codex", "--json", env=env)
    assert report["added"] == 2
    report = deja_json("index", "--json", env=env)
    assert (report["added"], report["unchanged"]) == (5, 2)


def test_a_named_root_that_is_missing_is_a_problem(tmp_path: Path) -> None:
    proc = deja("index", "--json", env={"DEJA_CLAUDE_ROOT": str(tmp_path / "nope")}, check=False)
    report = json.loads(proc.stdout)
    assert any("nope" in p and "DEJA_CLAUDE_ROOT" in p for p in report["problems"])


def test_a_growing_transcript_is_read_again_whole(tmp_path: Path) -> None:
    """A half-written last line is neither a record nor malformed; once complete it counts."""
    root = tmp_path / "claude"
    project = root / "projects" / "-w"
    project.mkdir(parents=True)
    path = project / "s-1.jsonl"
    first = {
        "type": "user",
        "sessionId": "s-1",
        "cwd": "/w",
        "timestamp": "2026-12-01T08:00:00.000Z",
        "message": {"role": "user", "content": "first"},
    }
    second = dict(
        first, timestamp="2026-12-01T08:00:05.000Z", message={"role": "user", "content": "second"}
    )
    line2 = json.dumps(second)
    path.write_text(json.dumps(first) + "\n" + line2[:30])
    env = {"DEJA_CLAUDE_ROOT": str(root)}
    assert deja_json("index", "--json", env=env)["skipped_lines"] == 0
    assert [m["text"] for m in deja_json("show", "s-1", "--json")["messages"]] == ["first"]
    path.write_text(json.dumps(first) + "\n" + line2 + "\n")
    report = deja_json("index", "--json", env=env)
    assert (report["updated"], report["skipped_lines"]) == (1, 0)
    assert [m["text"] for m in deja_json("show", "s-1", "--json")["messages"]] == [
        "first",
        "second",
    ]


# -- attribution end to end -------------------------------------------------------------------

BEFORE = "def price(item):\n    return item.base\n\n\ndef total(items):\n    return sum(price(i) for i in items)\n"
AFTER = (
    "def price(item):\n    return item.base\n\n\ndef total(items):\n"
    "    subtotal = sum(price(item) for item in items)\n"
    "    if subtotal > 100:\n"
    "        return round(subtotal * 0.9, 2)\n"
    "    return subtotal\n"
    "\n\n# typed by the person\nCURRENCY = 'EUR'\n"
)
NEW_LINES = [6, 7, 8, 9]


def _claude(home: Path, repo: Path, at: float, name: str = "pricing.py") -> str:
    sid = "c1a2b3c4-0000-4000-8000-000000000001"
    project = home / ".claude" / "projects" / ("-" + str(repo).strip("/").replace("/", "-"))
    project.mkdir(parents=True)
    new = "".join(AFTER.splitlines(keepends=True)[5:9])
    records: list[dict[str, Any]] = [
        {"type": "user", "sessionId": sid, "cwd": str(repo), "timestamp": iso(at),
         "message": {"role": "user", "content": "Discount orders over 100."}},
        {"type": "assistant", "sessionId": sid, "cwd": str(repo), "timestamp": iso(at + 5),
         "message": {"role": "assistant", "model": "claude-opus-4-1", "content": [
             {"type": "tool_use", "id": "t1", "name": "Edit", "input": {
                 "file_path": str(repo / name),
                 "old_string": "    return sum(price(i) for i in items)\n", "new_string": new}}]}},
        {"type": "user", "sessionId": sid, "cwd": str(repo), "timestamp": iso(at + 6),
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "t1", "content": "The file has been updated."}]},
         "toolUseResult": {"filePath": str(repo / name), "structuredPatch": [
             {"oldStart": 3, "oldLines": 4, "newStart": 3, "newLines": 7, "lines": [
                 " ", " ", " def total(items):", "-    return sum(price(i) for i in items)",
                 *["+" + ln for ln in new.splitlines()]]}], "userModified": False}},
    ]  # fmt: skip
    (project / f"{sid}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return sid


def _codex(home: Path, repo: Path, at: float, target: str = "pricing.py") -> str:
    """A Codex session patching ``target`` (as the patch names it: relative or absolute)."""
    sid = "c0dec0de-0000-4000-8000-000000000002"
    day = home / ".codex" / "sessions" / "2026" / "11" / "28"
    day.mkdir(parents=True)
    patch = (
        f"*** Begin Patch\n*** Update File: {target}\n@@ def total(items):\n"
        "-    return sum(price(i) for i in items)\n"
        + "".join("+" + ln for ln in AFTER.splitlines(keepends=True)[5:9])
        + "*** End Patch\n"
    )
    records = [
        {"timestamp": iso(at), "type": "session_meta", "payload": {"id": sid, "cwd": str(repo)}},
        {"timestamp": iso(at), "type": "turn_context", "payload": {"cwd": str(repo), "model": "gpt-5-codex"}},
        {"timestamp": iso(at + 1), "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "Discount."}]}},
        {"timestamp": iso(at + 5), "type": "response_item", "payload": {
            "type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": patch}},
        {"timestamp": iso(at + 6), "type": "response_item", "payload": {
            "type": "custom_tool_call_output", "call_id": "c1",
            "output": json.dumps({"output": "Success.", "metadata": {"exit_code": 0}})}},
    ]  # fmt: skip
    (day / f"rollout-2026-11-28T09-00-00-{sid}.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records)
    )
    return sid


def _gemini(home: Path, repo: Path, at: float) -> str:
    sid = "9e0e0e0e-0000-4000-8000-000000000003"
    chats = home / ".gemini" / "tmp" / "repo" / "chats"
    chats.mkdir(parents=True)
    (chats.parent / ".project_root").write_text(str(repo))
    new_lines = AFTER.splitlines()[5:9]
    diff = (
        "Index: pricing.py\n===\n--- pricing.py\tCurrent\n+++ pricing.py\tProposed\n"
        "@@ -3,4 +3,7 @@\n \n \n def total(items):\n-    return sum(price(i) for i in items)\n"
        + "".join("+" + ln + "\n" for ln in new_lines)
    )
    doc = {
        "sessionId": sid, "projectHash": "h", "startTime": iso(at), "lastUpdated": iso(at + 6),
        "messages": [
            {"id": "1", "timestamp": iso(at), "type": "user", "content": "Discount."},
            {"id": "2", "timestamp": iso(at + 5), "type": "gemini", "content": "", "model": "gemini-2.5-pro",
             "toolCalls": [{"id": "r", "name": "replace", "status": "success", "timestamp": iso(at + 6),
                            "args": {"file_path": "pricing.py", "old_string": "x", "new_string": "y"},
                            "resultDisplay": {"fileDiff": diff, "fileName": "pricing.py",
                                              "filePath": str(repo / "pricing.py")}}]},
        ],
    }  # fmt: skip
    (chats / "session-2026-11-28T09-00-9e0e0e0e.json").write_text(json.dumps(doc, indent=2))
    return sid


@pytest.mark.parametrize(
    ("agent", "write"), [("claude-code", _claude), ("codex", _codex), ("gemini-cli", _gemini)]
)
def test_blame_names_the_agent_session(repo: Path, tmp_path: Path, agent: str, write: Any) -> None:
    (repo / "pricing.py").write_text(BEFORE)
    git(repo, "add", "pricing.py")
    git(repo, "commit", "-qm", "prices", env=commit_env(T0))
    sid = write(tmp_path / "home", repo, T0 + 3600)
    (repo / "pricing.py").write_text(AFTER)
    git(repo, "commit", "-qam", "discount", env=commit_env(T0 + 7200))
    doc = deja_json("blame", str(repo / "pricing.py"), "--json", env={"DEJA_ANTIGRAVITY_ROOT": ""})
    by_line = {ln["line"]: ln for ln in doc["lines"]}
    for n in NEW_LINES:
        assert by_line[n]["session"] == sid, by_line[n]
        assert by_line[n]["source"] == agent
    others = [ln for n, ln in by_line.items() if n not in NEW_LINES]
    assert all(ln["session"] is None for ln in others), [ln for ln in others if ln["session"]]
    assert doc["sessions"][sid]["project"] == str(repo)
    human = deja("blame", str(repo / "pricing.py"), env={"DEJA_ANTIGRAVITY_ROOT": ""})
    label = {"claude-code": "claude", "codex": "codex", "gemini-cli": "gemini"}[agent]
    line7 = human.stdout.decode().splitlines()[6]
    assert f"{sid[:8]} {label}" in line7
    why = deja_json("why", f"{repo / 'pricing.py'}:7", "--json")
    assert why["session"] == sid
    assert why["session_info"]["source"] == agent


@pytest.mark.parametrize(("target", "program", "options"), [
    ("claude", "claude", []), ("codex", "codex", []), ("gemini", "gemini", ["-i"]),
])  # fmt: skip
def test_handoff_to_each_agent(
    repo: Path, tmp_path: Path, target: str, program: str, options: list[str]
) -> None:
    (repo / "pricing.py").write_text(BEFORE)
    git(repo, "add", "pricing.py")
    git(repo, "commit", "-qm", "prices", env=commit_env(T0))
    sid = _codex(tmp_path / "home", repo, T0 + 3600)
    deja("index", env={"DEJA_ANTIGRAVITY_ROOT": ""})
    out = deja_json("handoff", "--to", target, "--json", cwd=repo)
    assert out["session_id"] == sid and out["target"] == program
    assert out["argv"][:-1] == [program, *options]
    assert "earlier Codex CLI agent session" in out["argv"][-1]


def test_hook_note_carries_the_agent(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """hooks install, a commit after a Claude Code session: the note names the agent,
    and a clone with no transcripts and no index blames from the note alone."""
    monkeypatch.setenv("DEJA_HOOK_SYNC", "1")  # the hook in the foreground: its note is there
    (repo / "pricing.py").write_text(BEFORE)
    git(repo, "add", "pricing.py")
    git(repo, "commit", "-qm", "prices", env=commit_env(T0))
    deja("hooks", "install", cwd=repo)
    git(repo, "config", "deja.hook.timeout", "60")  # a loaded machine: no note left late
    sid = _claude(tmp_path / "home", repo, T0 + 3600)
    (repo / "pricing.py").write_text(AFTER)
    git(repo, "commit", "-qam", "discount", env=commit_env(T0 + 7200))
    note = json.loads(git(repo, "notes", "--ref", "deja", "show", "HEAD"))
    assert note["sessions"][sid]["agent"] == "claude-code"
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "fetch", "-q", "origin", "refs/notes/deja:refs/notes/deja")
    env = {
        "HOME": str(tmp_path / "reviewer"),
        "DEJA_DB": str(tmp_path / "reviewer.db"),
        "DEJA_ANTIGRAVITY_ROOT": "",
    }
    doc = deja_json("blame", str(clone / "pricing.py"), "--json", env=env)
    got = {ln["line"]: (ln["session"], ln["source"]) for ln in doc["lines"] if ln["session"]}
    assert got == dict.fromkeys(NEW_LINES, (sid, "claude-code"))


def test_stats_sums_blame(repo: Path, tmp_path: Path) -> None:
    (repo / "pricing.py").write_text(BEFORE)
    (repo / "README.md").write_text("# Shop\n\nPrices.\n")
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "prices", env=commit_env(T0))
    sid = _claude(tmp_path / "home", repo, T0 + 3600)
    (repo / "pricing.py").write_text(AFTER)
    git(repo, "commit", "-qam", "discount", env=commit_env(T0 + 7200))
    env = {"DEJA_ANTIGRAVITY_ROOT": ""}
    doc = deja_json("stats", "--json", cwd=repo, env=env)
    blamed = [
        deja_json("blame", str(repo / name), "--json", env=env)["lines"]
        for name in ("README.md", "pricing.py")
    ]
    assert doc["rev"] is None and doc["files"] == 2
    assert doc["lines"] == sum(len(b) for b in blamed)
    assert doc["attributed_lines"] == sum(1 for b in blamed for ln in b if ln["session"]) == 4
    assert doc["by_agent"] == [{"agent": "claude-code", "lines": 4}]
    assert doc["by_session"] == [
        {"session": sid, "agent": "claude-code", "model": "claude-opus-4-1", "lines": 4}
    ]
    assert doc["by_person"] == [{"author": "Test Person", "lines": doc["lines"] - 4}]
    assert doc["skipped"] == [{"path": "logo.png", "reason": "binary"}]
    assert doc["share"] == round(4 / doc["lines"], 4)
    # at a revision the same sums, of that commit's tree (not "every file unknown")
    head = git(repo, "rev-parse", "HEAD").strip()
    for rev in (head, head[:7], "HEAD", "main"):
        at = deja_json("stats", "--rev", rev, "--json", cwd=repo, env=env)
        assert at == {**doc, "rev": head}, rev
    old = deja_json("stats", "--rev", "HEAD~1", "--json", cwd=repo, env=env)
    assert old["rev"] == git(repo, "rev-parse", "HEAD~1").strip()
    assert (old["files"], old["attributed_lines"]) == (2, 0)
    assert old["lines"] == len(BEFORE.splitlines()) + 3
    assert old["by_person"] == [{"author": "Test Person", "lines": old["lines"]}]
    assert old["skipped"] == [{"path": "logo.png", "reason": "binary"}]
    only = deja_json("stats", "README.md", "--json", cwd=repo, env=env)
    assert (only["files"], only["attributed_lines"]) == (1, 0)
    human = deja("stats", cwd=repo, env=env).stdout.decode()
    assert "4 of" in human and "\n  claude " in human  # blame's word, as every text says


def test_share_history_by_week_and_the_report_chart(repo: Path, tmp_path: Path) -> None:
    (repo / "pricing.py").write_text(BEFORE)
    git(repo, "add", "pricing.py")
    git(repo, "commit", "-qm", "prices", env=commit_env(T0 - 14 * 86400))  # two weeks before
    sid = _claude(tmp_path / "home", repo, T0 + 3600)
    (repo / "pricing.py").write_text(AFTER)
    git(repo, "commit", "-qam", "discount", env=commit_env(T0 + 7200))
    env = {"DEJA_ANTIGRAVITY_ROOT": ""}
    doc = deja_json("stats", "--by", "week", "--json", cwd=repo, env=env)
    assert doc["by"] == "week"
    first, second = doc["periods"]
    assert (first["period"], first["lines_added"], first["by_agents"]) == ("2026-W46", 6, 0)
    assert second["period"] == "2026-W48" and second["start"] == "2026-11-23"
    assert second["by_agents"] == 4 and second["by_agent"] == [{"agent": "claude-code", "lines": 4}]
    assert second["by_people"] == second["lines_added"] - 4
    months = deja_json("stats", "--by", "month", "HEAD~1..HEAD", "--json", cwd=repo, env=env)
    assert [p["period"] for p in months["periods"]] == ["2026-11"]
    html = deja("report", "HEAD~1..HEAD", "--format", "html", cwd=repo, env=env).stdout.decode()
    assert '<section id="history">' in html and "<svg" in html
    assert "2026-W48: " in html and "4 by agents" in html
    assert "<script" not in html.lower()
    assert sid[:8] in html


def test_agent_trace_export_validates_against_the_spec(repo: Path, tmp_path: Path) -> None:
    import datetime as dt
    import hashlib

    import jsonschema

    (repo / "pricing.py").write_text(BEFORE)
    git(repo, "add", "pricing.py")
    git(repo, "commit", "-qm", "prices", env=commit_env(T0))
    sid = _claude(tmp_path / "home", repo, T0 + 3600)
    (repo / "pricing.py").write_text(AFTER)
    git(repo, "commit", "-qam", "discount", env=commit_env(T0 + 7200))
    env = {"DEJA_ANTIGRAVITY_ROOT": ""}
    out = deja("export", "--format", "agent-trace", cwd=repo, env=env).stdout.decode()
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) == 1  # the first commit has no attributed line: no record
    (record,) = records
    schema = json.loads(
        (REPO_ROOT / "tests" / "data" / "agent-trace-0.1.0.schema.json").read_text()
    )
    jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    ).validate(record)
    assert record["version"] == "0.1.0"
    dt.datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00"))
    head = git(repo, "rev-parse", "HEAD").strip()
    assert record["vcs"] == {"type": "git", "revision": head}
    assert record["tool"]["name"] == "deja-blame"
    (file,) = record["files"]
    assert file["path"] == "pricing.py"
    (conv,) = file["conversations"]
    assert conv["contributor"] == {"type": "ai", "model_id": "anthropic/claude-opus-4-1"}
    assert conv["ranges"][0]["start_line"] == 6 and conv["ranges"][0]["end_line"] == 9
    lines = AFTER.splitlines()[5:9]
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]
    assert conv["ranges"][0]["content_hash"] == f"sha256:{digest}"
    assert conv["metadata"]["dev.deja-blame"]["session"] == sid
    assert conv["metadata"]["dev.deja-blame"]["agent"] == "claude-code"
    again = deja("export", "--format", "agent-trace", "HEAD~1..HEAD", cwd=repo, env=env)
    assert json.loads(again.stdout)["id"] == record["id"]  # the same commit, the same id
    # a record that breaks the schema is refused by the same validator
    bad = dict(record, version="0.1")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(bad)


def test_why_tells_the_line_s_history(repo: Path, tmp_path: Path) -> None:
    """An agent's line a person later changed: why names the session that wrote it
    first, and the history lists each version, oldest first."""
    (repo / "pricing.py").write_text(BEFORE)
    git(repo, "add", "pricing.py")
    git(repo, "commit", "-qm", "prices", env=commit_env(T0))
    sid = _claude(tmp_path / "home", repo, T0 + 3600)
    (repo / "pricing.py").write_text(AFTER)
    git(repo, "commit", "-qam", "discount", env=commit_env(T0 + 7200))
    agent_commit = git(repo, "rev-parse", "HEAD").strip()
    (repo / "pricing.py").write_text(AFTER.replace("subtotal > 100", "subtotal > 200"))
    git(repo, "commit", "-qam", "threshold", env=commit_env(T0 + 9000))
    person_commit = git(repo, "rev-parse", "HEAD").strip()
    env = {"DEJA_ANTIGRAVITY_ROOT": ""}
    doc = deja_json("why", f"{repo / 'pricing.py'}:7", "--json", env=env)
    assert doc["session"] is None and doc["commit"] == person_commit
    first, second = doc["history"]
    assert (first["commit"], first["session"], first["agent"]) == (agent_commit, sid, "claude-code")
    assert first["text"] == "    if subtotal > 100:" and first["line"] == 7
    assert (second["commit"], second["session"], second["author"]) == (
        person_commit,
        None,
        "Test Person",
    )
    assert second["text"] == "    if subtotal > 200:" and second["at"] == "2026-11-28T10:30:00Z"
    out = deja("why", f"{repo / 'pricing.py'}:7", env=env).stdout.decode()
    assert f"an earlier version was written by session {sid}" in out
    assert "History (oldest first, by commit time)" in out
    # the agent as blame's column names it (newcomer 9: claude in blame, claude-code here)
    (older,) = [ln for ln in out.splitlines() if ln.startswith(f"  {agent_commit[:8]} ")]
    assert f"{sid[:8]} claude " in older and "claude-code" not in older
    # the session rewrote the person's return line: two versions, the person's first
    rewritten = deja_json("why", f"{repo / 'pricing.py'}:6", "--json", env=env)
    assert [(v["session"], v["text"]) for v in rewritten["history"]] == [
        (None, "    return sum(price(i) for i in items)"),
        (sid, "    subtotal = sum(price(item) for item in items)"),
    ]
    # a line that was new in its commit: git's range goes back through the block it
    # replaced, the history does not
    new = deja_json("why", f"{repo / 'pricing.py'}:8", "--json", env=env)
    assert [v["commit"] for v in new["history"]] == [agent_commit]


def test_codex_archived_sessions_and_claude_slash_commands(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    archived = home / "archived_sessions"
    archived.mkdir(parents=True)
    sid = "a1a1a1a1-0000-4000-8000-000000000001"
    (archived / f"rollout-2026-10-01T08-00-00-{sid}.jsonl").write_text(
        json.dumps({"timestamp": "2026-10-01T08:00:00Z", "type": "session_meta",
                    "payload": {"id": sid, "cwd": "/w"}}) + "\n"
    )  # fmt: skip
    assert [tf.session_id for tf in discover(["codex"], env={"DEJA_CODEX_ROOT": str(home)})] == [
        sid
    ]
    project = tmp_path / "claude" / "projects" / "-w"
    project.mkdir(parents=True)
    records = [
        {"type": "user", "sessionId": "s", "cwd": "/w", "timestamp": "2026-10-01T08:00:00Z",
         "message": {"role": "user", "content": "<command-name>/compact</command-name>"}},
        {"type": "user", "sessionId": "s", "cwd": "/w", "timestamp": "2026-10-01T08:00:01Z",
         "message": {"role": "user", "content": "Real request."}},
    ]  # fmt: skip
    (project / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (tf,) = discover(["claude-code"], env={"DEJA_CLAUDE_ROOT": str(tmp_path / "claude")})
    assert [m.text for m in read_session(tf).messages if m.role == "user"] == ["Real request."]


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_a_growing_transcript_is_read_on_from_where_it_stopped(tmp_path: Path, agent: str) -> None:
    """Claude Code and Codex transcripts are appended to: cut the fixture anywhere,
    index, append the rest, index again: the same session as one parse of the whole
    (a tool's call in one run and its result in the next included)."""
    var = {"claude-code": "DEJA_CLAUDE_ROOT", "codex": "DEJA_CODEX_ROOT"}[agent]
    src_root = AGENT_FIXTURES / agent
    found = discover([agent], env={var: str(src_root)})
    tf = max(found, key=lambda t: t.path.stat().st_size)
    tf = TranscriptFile(tf.session_id, tf.path, tf.root, tf.agent)  # its own file only
    whole = tf.path.read_bytes()
    lines = whole.splitlines(keepends=True)
    rel = tf.path.relative_to(src_root)
    want = read_session(tf).to_json()
    for cut in sorted({3, len(lines) // 2, len(lines) - 2}):
        root = tmp_path / f"cut{cut}"
        target = root / rel
        target.parent.mkdir(parents=True)
        target.write_bytes(b"".join(lines[:cut]) + lines[cut][:20])  # and half a line
        env = {var: str(root), "DEJA_DB": str(tmp_path / f"cut{cut}.db")}
        deja("index", "-q", env=env)
        import sqlite3

        with sqlite3.connect(env["DEJA_DB"]) as conn:
            (state,) = conn.execute("SELECT state FROM sessions").fetchone()
        assert load_json(state)["other"]["builder"]["session_id"] == tf.session_id
        target.write_bytes(whole)
        report = deja_json("index", "--json", env=env)
        assert report["updated"] == 1
        got = deja_json("show", tf.session_id, "--json", env=env)
        for key in ("messages", "commands", "files", "edits", "model", "project", "started_at"):
            assert got[key] == want[key], (cut, key)
        assert got["skipped_lines"] == want["skipped_lines"]


def test_a_gemini_json_caught_half_written_keeps_what_the_index_has(tmp_path: Path) -> None:
    chats = tmp_path / ".gemini" / "tmp" / "p" / "chats"
    chats.mkdir(parents=True)
    path = chats / "session-2026-11-29T09-00-abcd1234.json"
    doc = {
        "sessionId": "abcd1234-0000-4000-8000-000000000000",
        "projectHash": "h",
        "startTime": "2026-11-29T09:00:00.000Z",
        "lastUpdated": "2026-11-29T09:00:00.000Z",
        "messages": [
            {"id": "1", "timestamp": "2026-11-29T09:00:00.000Z", "type": "user", "content": "Hi."}
        ],
    }
    path.write_text(json.dumps(doc, indent=2))
    env = {"DEJA_GEMINI_ROOT": str(tmp_path / ".gemini"), "DEJA_ANTIGRAVITY_ROOT": ""}
    deja("index", "-q", env=env)
    text = json.dumps(doc, indent=2)
    path.write_text(text[: len(text) // 2])  # the CLI rewriting it
    run = deja("index", "--json", env=env)
    report = json.loads(run.stdout)
    assert (report["incomplete"], report["problems"]) == (1, [])  # not a problem: it waits
    assert "not a complete JSON document" in run.stderr.decode()
    shown = deja_json("show", "abcd1234", "--json", env=env)
    assert [m["text"] for m in shown["messages"]] == ["Hi."]  # kept meanwhile
    path.write_text(text)
    assert deja_json("index", "--json", env=env)["problems"] == []


@pytest.mark.parametrize(
    "cwd, path, expected",
    [
        ("C:/Users/alex/proj", "src\\report.py", "C:/Users/alex/proj/src/report.py"),
        # a reader that keeps the working folder as the transcript gives it
        ("C:\\Users\\alex\\proj", "src\\report.py", "C:/Users/alex/proj/src/report.py"),
        ("C:\\Users\\alex\\proj", "..\\lib\\x.py", "C:/Users/alex/lib/x.py"),
        ("C:\\Users\\alex\\proj", "\\src\\app.py", "C:/src/app.py"),  # the drive's root
        ("/home/alex/proj", "src\\odd.py", "/home/alex/proj/src\\odd.py"),  # a POSIX name
    ],
)
def test_a_relative_path_of_a_session_on_windows(cwd: str, path: str, expected: str) -> None:
    from deja_blame.transcripts.builder import SessionBuilder

    b = SessionBuilder("s", "t.jsonl", "codex")
    b.cwd = cwd
    assert b.absolute(path) == expected


def test_codex_sessions_an_older_reader_indexed_are_read_again(tmp_path: Path) -> None:
    """Codex's reader splits a Windows session's relative patch paths since version 1:
    a session the older reader indexed (its state without the version) is read again
    by the next ``deja index``, then left alone."""
    import os

    from agent_goldens import lay_out
    from conftest import as_an_older_reader_left_it, deja

    root = lay_out("codex", tmp_path / "store")
    env = {"DEJA_CODEX_ROOT": str(root), "DEJA_ANTIGRAVITY_ROOT": ""}
    first = orjson.loads(deja("index", "--json", "--agent", "codex", env=env).stdout)
    assert first["transcripts"] == 2
    from deja_blame.transcripts.registry import agent_named

    as_an_older_reader_left_it(
        Path(os.environ["DEJA_DB"]), "codex", agent_named("codex").reader_version
    )
    again = orjson.loads(deja("index", "--json", "--agent", "codex", env=env).stdout)
    assert again["unchanged"] == 0, again
    third = orjson.loads(deja("index", "--json", "--agent", "codex", env=env).stdout)
    assert third["unchanged"] == third["transcripts"] == 2


def test_gemini_session_in_a_hashed_folder_names_its_project_by_the_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Older Gemini CLI versions keep a project's chats under the SHA-256 of its folder
    and write no ``.project_root``: a session that touched no file was indexed with no
    project (``-``, issue 40 item 5). Read from that folder or below it, the hash
    names it."""
    import hashlib

    project = tmp_path / "shop"
    (project / "src").mkdir(parents=True)
    digest = hashlib.sha256(str(project).encode()).hexdigest()
    chats = tmp_path / ".gemini" / "tmp" / digest / "chats"
    chats.mkdir(parents=True)
    doc = {
        "sessionId": "s-2",
        "projectHash": digest,
        "startTime": "2026-12-01T08:00:00.000Z",
        "messages": [
            {"id": "a", "timestamp": "2026-12-01T08:00:01.000Z", "type": "user",
             "content": "what does this project do?"},
            {"id": "b", "timestamp": "2026-12-01T08:00:05.000Z", "type": "gemini",
             "content": "It is a shop.", "model": "gemini-2.5-pro"},
        ],
    }  # fmt: skip
    (chats / "session-2026-12-01T08-00-s2.json").write_text(json.dumps(doc))
    (tf,) = discover(["gemini-cli"], env={"DEJA_GEMINI_ROOT": str(tmp_path / ".gemini")})
    monkeypatch.chdir(project / "src")
    assert read_session(tf).project == str(project)
    monkeypatch.chdir(tmp_path)
    assert read_session(tf).project == "-"  # nothing names it: the folder is not one asked
