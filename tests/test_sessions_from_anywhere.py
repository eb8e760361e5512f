"""Sessions from anywhere, end to end: each agent, each place a session can have run.

A fresh HOME holds one session's transcript where its agent keeps it
(Antigravity ``~/.gemini/antigravity/brain``, Claude Code ``~/.claude/projects``,
Codex ``~/.codex/sessions``). The session ran somewhere this repository is not:

- ``moved``: in this very clone, which has since moved to another folder;
- ``other-user``: on another machine, as ``/home/alice/work/shop``;
- ``windows``: on Windows, as ``C:\\Users\\bob\\shop`` (backslashes);
- ``unrelated``: in Carol's own project, which has the same relative paths and
  the same two lines of boilerplate, and nothing else in common.

Then a person commits the session's files and later rewrites most of one.
``deja stats``, ``blame`` (HEAD and the session's commit), ``sessions --project .``
and ``handoff --print`` must all name the session (none of them, for the
unrelated project). The transcripts follow each agent's real record shapes;
the text is ours.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from antigravity_writer import TranscriptWriter
from conftest import commit_env, deja, git

T0 = 1_784_278_800  # 2026-07-17T09:00:00Z
SID = {
    "antigravity": "a9a9a9a9-1111-4000-8000-000000000028",
    "claude-code": "c1c1c1c1-2222-4000-8000-000000000028",
    "codex": "c0dec0de-3333-4000-8000-000000000028",
}
PROMPT = "Write the shop's pricing and its helpers."
SHARED = "import logging\nlog = logging.getLogger(__name__)\n"


def lines(tag: str, n: int) -> str:
    return "".join(f"price_{tag}_{i} = compute_{tag}({i}, rate={i * 3})\n" for i in range(1, n + 1))


APP = SHARED + lines("app", 8)  # 10 lines
UTIL = lines("util", 5)
CAROL_APP = SHARED + lines("carol", 8)  # her own project: the boilerplate and nothing else
FILES = {"src/app.py": APP, "src/util.py": UTIL}


def iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def joined(workspace: str, rel: str) -> str:
    """``rel`` in ``workspace``, in its separators; an absolute ``rel`` as it is."""
    if rel.startswith("/"):
        return rel
    sep = "\\" if "\\" in workspace else "/"
    return workspace + sep + rel.replace("/", sep)


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))


def antigravity(home: Path, workspace: str, files: dict[str, str]) -> None:
    root = home / ".gemini" / "antigravity"
    (root / "brain").mkdir(parents=True, exist_ok=True)
    w = TranscriptWriter(root, SID["antigravity"], start=T0, workspace=None)
    w.user(PROMPT)
    for k, (rel, content) in enumerate(files.items()):
        w.set_time(T0 + 10 * (k + 1))
        w.write_file(joined(workspace, rel), content)


def claude_code(home: Path, workspace: str, files: dict[str, str]) -> None:
    sid = SID["claude-code"]
    folder = "-" + workspace.replace("\\", "-").replace("/", "-").replace(":", "-").strip("-")
    base = {"sessionId": sid, "cwd": workspace, "isSidechain": False}
    records: list[dict[str, Any]] = [
        {**base, "type": "user", "uuid": "u0", "timestamp": iso(T0),
         "message": {"role": "user", "content": PROMPT}},
    ]  # fmt: skip
    for k, (rel, content) in enumerate(files.items()):
        at = T0 + 10 * (k + 1)
        path = joined(workspace, rel)
        records += [
            {**base, "type": "assistant", "uuid": f"a{k}", "timestamp": iso(at),
             "message": {"role": "assistant", "model": "claude-opus-4-5", "content": [
                 {"type": "tool_use", "id": f"t{k}", "name": "Write",
                  "input": {"file_path": path, "content": content}}]}},
            {**base, "type": "user", "uuid": f"r{k}", "timestamp": iso(at + 1),
             "message": {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": f"t{k}",
                  "content": f"File created successfully at: {path}"}]},
             "toolUseResult": {"type": "create", "filePath": path, "content": content,
                               "structuredPatch": []}},
        ]  # fmt: skip
    write_jsonl(home / ".claude" / "projects" / folder / f"{sid}.jsonl", records)


def codex(home: Path, workspace: str, files: dict[str, str]) -> None:
    sid = SID["codex"]
    records: list[dict[str, Any]] = [
        {"timestamp": iso(T0), "type": "session_meta", "payload": {"id": sid, "cwd": workspace}},
        {"timestamp": iso(T0), "type": "turn_context",
         "payload": {"cwd": workspace, "model": "gpt-5-codex"}},
        {"timestamp": iso(T0 + 1), "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": PROMPT}]}},
    ]  # fmt: skip
    for k, (rel, content) in enumerate(files.items()):
        at = T0 + 10 * (k + 1)
        # relative, as the model wrote it there (on Windows with backslashes)
        name = rel.replace("/", "\\") if "\\" in workspace else rel
        patch = (
            f"*** Begin Patch\n*** Add File: {name}\n"
            + "".join("+" + ln for ln in content.splitlines(keepends=True))
            + "*** End Patch\n"
        )
        records += [
            {"timestamp": iso(at), "type": "response_item", "payload": {
                "type": "custom_tool_call", "call_id": f"c{k}", "name": "apply_patch",
                "input": patch}},
            {"timestamp": iso(at + 1), "type": "response_item", "payload": {
                "type": "custom_tool_call_output", "call_id": f"c{k}",
                "output": json.dumps({"output": "Success.", "metadata": {"exit_code": 0}})}},
        ]  # fmt: skip
    day = home / ".codex" / "sessions" / "2026" / "07" / "17"
    write_jsonl(day / f"rollout-2026-07-17T09-00-00-{sid}.jsonl", records)


WRITERS = {"antigravity": antigravity, "claude-code": claude_code, "codex": codex}
AGENT_IN_HANDOFF = {
    "antigravity": "Antigravity",
    "claude-code": "Claude Code",
    "codex": "Codex CLI",
}


def commit_all(repo: Path, files: dict[str, str], message: str, at: int) -> str:
    for rel, content in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(content)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, env=commit_env(at))
    return git(repo, "rev-parse", "HEAD").strip()


def rewritten(content: str, keep: int) -> str:
    kept = content.splitlines(keepends=True)[:keep]
    gone = len(content.splitlines()) - keep
    return "".join(kept) + "".join(f"person_{i} = typed_by_hand({i})\n" for i in range(gone))


def run(*args: str, cwd: Path) -> Any:
    # the agents' default places under the fresh HOME, none named by a variable
    return deja(*args, cwd=cwd, env={"DEJA_ANTIGRAVITY_ROOT": ""})


@pytest.mark.parametrize("agent", sorted(WRITERS))
@pytest.mark.parametrize("place", ["moved", "other-user", "windows", "unrelated"])
def test_a_session_recorded_elsewhere(tmp_path: Path, repo: Path, agent: str, place: str) -> None:
    home = tmp_path / "home"  # the fresh HOME conftest gives every test
    workspace = {
        "moved": str(repo),
        "other-user": "/home/alice/work/shop",
        "windows": "C:\\Users\\bob\\shop",
        "unrelated": "/home/carol/other",
    }[place]
    WRITERS[agent](home, workspace, {"src/app.py": CAROL_APP} if place == "unrelated" else FILES)
    first = commit_all(repo, FILES, "the session's work", T0 + 120)
    commit_all(repo, {"src/app.py": rewritten(APP, keep=4)}, "a person rewrites most", T0 + 7200)
    here = repo
    if place == "moved":
        here = tmp_path / "elsewhere" / "shop"
        here.parent.mkdir()
        shutil.move(str(repo), here)  # the folder the session ran in is gone
    run("index", "-q", cwd=here)
    sid = SID[agent]

    stats = orjson.loads(run("stats", "--json", cwd=here).stdout)
    util = orjson.loads(run("blame", "src/util.py", "--json", cwd=here).stdout)
    then = orjson.loads(run("blame", "src/app.py", "--rev", first, "--json", cwd=here).stdout)
    now = orjson.loads(run("blame", "src/app.py", "--json", cwd=here).stdout)
    listed = orjson.loads(run("sessions", "--project", ".", "--json", cwd=here).stdout)
    handoff = deja(
        "handoff", "--to", "claude", "--print", cwd=here, env={"DEJA_ANTIGRAVITY_ROOT": ""},
        check=False,
    )  # fmt: skip

    if place == "unrelated":
        assert stats["attributed_lines"] == 0
        assert {ln["session"] for ln in [*util["lines"], *then["lines"], *now["lines"]]} == {None}
        assert listed["sessions"] == []
        assert handoff.returncode != 0 and b"no" in handoff.stderr.lower()
        return
    assert [ln["session"] for ln in util["lines"]] == [sid] * 5
    assert [ln["session"] for ln in then["lines"]] == [sid] * 10
    # HEAD keeps what is left of its lines: the boilerplate and two of its own
    assert [ln["session"] for ln in now["lines"]] == [sid] * 4 + [None] * 6
    assert stats["attributed_lines"] == 5 + 4
    assert [s["session_id"] for s in listed["sessions"]] == [sid]
    assert handoff.returncode == 0, handoff.stderr
    text = handoff.stdout.decode()
    assert f"earlier {AGENT_IN_HANDOFF[agent]} agent session" in text
    assert f"Previous session: {sid}" in text and PROMPT in text
