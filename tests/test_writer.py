"""The transcript writer: what it writes reads back, field by field, through the real reader."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from antigravity_writer import TranscriptWriter, WriterError, unified_diff_text

from deja_blame.transcripts import parse_transcript

T0 = 1784278800  # 2026-07-17T09:00:00Z
WS = "/work/api"
APP = f"{WS}/src/app.py"

BEFORE = """\
import json


def handler(event):
    body = json.loads(event)
    return None


def health():
    return {"ok": True}
"""


def records(w: TranscriptWriter) -> list[dict]:
    return [json.loads(line) for line in w.path.read_text().splitlines()]


@pytest.fixture
def writer(tmp_path: Path) -> TranscriptWriter:
    return TranscriptWriter(tmp_path / "root", "4b1c-session", start=T0, workspace=WS)


def test_location_and_record_shape(writer: TranscriptWriter, tmp_path: Path) -> None:
    writer.user("Check the build.")
    writer.run_command("npm test", exit_code=1, output="FAIL src/app.test.js")
    expected = tmp_path / "root/brain/4b1c-session/.system_generated/logs/transcript.jsonl"
    assert writer.path == expected
    recs = records(writer)
    assert [r["step_index"] for r in recs] == [0, 1, 2]
    for r in recs:
        assert {"step_index", "source", "type", "status", "created_at"} <= r.keys()
        assert r["created_at"].endswith("Z")
    assert [(r["source"], r["type"]) for r in recs] == [
        ("USER_EXPLICIT", "USER_INPUT"),
        ("MODEL", "PLANNER_RESPONSE"),
        ("MODEL", "RUN_COMMAND"),
    ]
    # compact: every argument value is JSON text, quotes included
    args = recs[1]["tool_calls"][0]["args"]
    assert recs[1]["tool_calls"][0]["name"] == "run_command"
    assert args["CommandLine"] == '"npm test"'
    assert args["Cwd"] == f'"{WS}"'
    assert args["WaitMsBeforeAsync"] == "5000"
    # tool step header in the machine's local offset, then the body
    content = recs[2]["content"].split("\n")
    assert content[0] == "Created At: 2026-07-17T12:00:02+03:00"
    assert content[1] == "Completed At: 2026-07-17T12:00:03+03:00"
    assert content[2] == "Task Description: npm test"
    assert content[3] == "\tThe command exited with code 1."


def test_messages_and_commands_read_back(writer: TranscriptWriter) -> None:
    writer.user("Check the build.")
    writer.assistant("Running the tests.")
    writer.run_command("npm test", exit_code=1, cwd="/work/api/web")
    writer.run_command("npm run lint", exit_code=0)
    s = parse_transcript(writer.path)
    assert s.session_id == "4b1c-session"
    assert [(m.role, m.text, m.at) for m in s.messages[:2]] == [
        ("user", "Check the build.", "2026-07-17T09:00:00Z"),
        ("assistant", "Running the tests.", "2026-07-17T09:00:01Z"),
    ]
    assert s.messages[2].role == "tool"
    assert s.messages[2].text.startswith("Task Description: npm test\n")
    assert [(c.command, c.cwd, c.exit_code, c.at) for c in s.commands] == [
        ("npm test", "/work/api/web", 1, "2026-07-17T09:00:02Z"),
        ("npm run lint", WS, 0, "2026-07-17T09:00:04Z"),
    ]
    assert s.first_prompt == "Check the build."
    assert s.skipped_lines == 0


def test_replace_edit_lines_and_hunks(writer: TranscriptWriter) -> None:
    writer.view(APP, content=BEFORE)
    result = writer.replace(
        APP, "    return None", "    if not body:\n        return None\n    return respond(body)"
    )
    assert result.before == BEFORE
    assert "    return respond(body)\n" in result.after
    s = parse_transcript(writer.path)
    assert [(f.path, f.action) for f in s.files] == [(APP, "view"), (APP, "edit")]
    (edit,) = s.edits
    assert edit.path == APP
    assert edit.tool == "replace_file_content"
    assert edit.source == "agent"
    assert edit.removed == ["    return None"]
    assert edit.added == ["    if not body:", "        return None", "    return respond(body)"]
    # the first changed line (the diff's header counts three context lines before it)
    assert [(h.old_start, h.new_start) for h in edit.hunks] == [(6, 6)]
    assert edit.witness == [
        "    if not body:",
        "        return None",
        "    return respond(body)",
    ]
    assert edit.at == result.at.strftime("%Y-%m-%dT%H:%M:%SZ")
    rec = records(writer)[-2]
    assert rec["tool_calls"][0]["args"]["StartLine"] == "6"
    assert rec["tool_calls"][0]["args"]["TargetContent"] == '"    return None"'


def test_diff_block_has_headers_context_and_path_sentence(writer: TranscriptWriter) -> None:
    writer.replace(APP, "return None", "return body", current=BEFORE)
    content = records(writer)[-1]["content"]
    assert (
        f"The following changes were made by the replace_file_content tool to: {APP}. "
        "If relevant, proactively run terminal commands to verify"
    ) in content
    block = content.split("[diff_block_start]\n", 1)[1].split("\n[diff_block_end]", 1)[0]
    lines = block.split("\n")
    assert lines[:3] == ["--- a/src/app.py", "+++ b/src/app.py", "@@ -3,7 +3,7 @@"]
    assert " def handler(event):" in lines  # context lines, n=3
    assert "-    return None" in lines and "+    return body" in lines
    assert block == unified_diff_text("src/app.py", BEFORE, BEFORE.replace("None", "body", 1))


def test_several_hunks_read_as_one_edit(writer: TranscriptWriter) -> None:
    text = "\n".join(f"line {i}" for i in range(1, 31)) + "\n"
    writer.multi_replace(
        APP, [("line 2\n", "line two\n"), ("line 25\n", "line 25\nline 25b\n")], current=text
    )
    s = parse_transcript(writer.path)
    (edit,) = s.edits
    assert edit.tool == "multi_replace_file_content"
    assert edit.removed == ["line 2"]
    assert edit.added == ["line two", "line 25b"]
    assert [(h.old_start, h.new_start, h.added) for h in edit.hunks] == [
        (2, 2, ["line two"]),
        (26, 26, ["line 25b"]),
    ]
    assert edit.witness == ["line two", "", "line 25", "line 25b", ""]


def test_write_file_reads_back_as_written_side(writer: TranscriptWriter) -> None:
    code = "export function add(a, b) {\n  return a + b;\n}\n\nexport const ZERO = 0;\n"
    writer.write_file(f"{WS}/src/math.js", code)
    recs = records(writer)
    assert recs[-1]["type"] == "CODE_ACTION" and recs[-1]["status"] == "DONE"
    assert recs[-1]["content"].endswith(
        f"Created file file://{WS}/src/math.js with requested content."
    )
    assert recs[-2]["tool_calls"][0]["args"]["CodeContent"] == json.dumps(code)
    s = parse_transcript(writer.path)
    (edit,) = s.edits
    assert (edit.path, edit.tool, edit.source) == (f"{WS}/src/math.js", "write_to_file", "agent")
    assert edit.removed == []
    assert edit.added == [
        "export function add(a, b) {",
        "  return a + b;",
        "}",
        "",
        "export const ZERO = 0;",
    ]
    assert [(f.path, f.action) for f in s.files] == [(f"{WS}/src/math.js", "write")]


def test_user_edit_is_the_persons(writer: TranscriptWriter) -> None:
    writer.write_file(APP, BEFORE)
    writer.user_edit(APP, "    return None", "    return body")
    s = parse_transcript(writer.path)
    assert [e.source for e in s.edits] == ["agent", "user"]
    user = s.edits[1]
    assert (user.removed, user.added) == (["    return None"], ["    return body"])
    assert (
        "The following changes were made by the USER to: " + APP in records(writer)[-1]["content"]
    )


def test_writer_remembers_file_content_between_edits(writer: TranscriptWriter) -> None:
    writer.write_file(APP, BEFORE)
    writer.replace(APP, "    return None", "    return body")
    writer.replace(APP, "    return body", "    return respond(body)")
    s = parse_transcript(writer.path)
    assert [(e.removed, e.added) for e in s.edits[1:]] == [
        (["    return None"], ["    return body"]),
        (["    return body"], ["    return respond(body)"]),
    ]
    assert writer.files[APP] == BEFORE.replace("return None", "return respond(body)")


def test_replace_reads_disk_when_content_unknown(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "a.py").write_text("x = 1\ny = 2\n")
    w = TranscriptWriter(tmp_path / "root", "s", start=T0, workspace=str(proj))
    w.replace(str(proj / "a.py"), "y = 2", "y = 3")
    (edit,) = parse_transcript(w.path).edits
    assert (edit.removed, edit.added) == (["y = 2"], ["y = 3"])
    with pytest.raises(WriterError):
        w.replace(str(proj / "a.py"), "not there", "z")
    with pytest.raises(WriterError):
        w.replace(str(proj / "missing.py"), "a", "b")


def test_clock_is_explicit(writer: TranscriptWriter) -> None:
    writer.user("first", at=datetime(2026, 7, 17, 10, 0, tzinfo=timezone.utc))
    writer.advance(3600)
    writer.assistant("an hour later")
    writer.run_command("make", exit_code=0, at=T0 + 7200)
    s = parse_transcript(writer.path)
    # the planner row of run_command is at 11:00:00, its step one tick later
    assert [(m.role, m.at) for m in s.messages] == [
        ("user", "2026-07-17T10:00:00Z"),
        ("assistant", "2026-07-17T11:00:01Z"),
        ("tool", "2026-07-17T11:00:01Z"),
    ]
    assert s.commands[0].at == "2026-07-17T11:00:00Z"
    assert s.started_at == "2026-07-17T10:00:00Z"
    assert s.ended_at == "2026-07-17T11:00:01Z"


def test_project_from_cli_and_ide_caches(tmp_path: Path) -> None:
    root = tmp_path / "root"
    a = TranscriptWriter(root, "sess-a", start=T0)
    b = TranscriptWriter(root, "sess-b", start=T0)
    c = TranscriptWriter(root, "sess-c", start=T0)
    for w in (a, b, c):
        w.write_file("/elsewhere/x/y.py", "pass\n")
    a.register_workspace("/home/u/shop", kind="cli")
    b.register_workspace("/home/u/cart", kind="cli")
    c.register_workspace("/home/u/ide-shop", kind="ide", title="Shop")
    last = json.loads((root / "cache/last_conversations.json").read_text())
    assert last == {"/home/u/shop": "sess-a", "/home/u/cart": "sess-b"}
    meta = json.loads((root / "cache/conversation_metadata.json").read_text())
    assert meta["conversations"]["sess-c"]["summary"]["WorkspaceURIs"] == [
        "file:///home/u/ide-shop"
    ]
    assert parse_transcript(a.path).project == "/home/u/shop"
    assert parse_transcript(b.path).project == "/home/u/cart"
    assert parse_transcript(c.path).project == "/home/u/ide-shop"
    with pytest.raises(WriterError):
        a.register_workspace("/x", kind="nope")


def test_project_from_touched_paths_without_cache(writer: TranscriptWriter) -> None:
    writer.write_file(f"{WS}/src/a.py", "a = 1\n")
    writer.write_file(f"{WS}/tests/test_a.py", "def test(): pass\n")
    assert parse_transcript(writer.path).project == WS


def test_exit_code_field_and_system_rows_are_read_or_ignored(tmp_path: Path) -> None:
    w = TranscriptWriter(tmp_path / "root", "s", start=T0, exit_code_field=True)
    w.system("CONVERSATION_HISTORY")
    w.run_command("false", exit_code=2, cwd="/w")
    recs = records(w)
    assert recs[0]["source"] == "SYSTEM" and "content" not in recs[0]
    assert recs[-1]["exit_code"] == 2
    s = parse_transcript(w.path)
    assert [(c.command, c.exit_code) for c in s.commands] == [("false", 2)]
    assert s.messages[0].role == "tool"


def test_paths_with_spaces_are_percent_encoded_in_uris_and_read_back(
    writer: TranscriptWriter,
) -> None:
    path = f"{WS}/docs/user guide/example.py"
    writer.write_file(path, "print('héllo')\n")
    writer.replace(path, "print('héllo')", "print('héllo, wörld')")
    writer.view(path)
    recs = records(writer)
    assert "file:///work/api/docs/user%20guide/example.py" in recs[1]["content"]
    s = parse_transcript(writer.path)
    assert [(e.path, e.added) for e in s.edits] == [
        (path, ["print('héllo')"]),
        (path, ["print('héllo, wörld')"]),
    ]
    assert [(f.path, f.action) for f in s.files] == [
        (path, "write"),
        (path, "edit"),
        (path, "view"),
    ]
