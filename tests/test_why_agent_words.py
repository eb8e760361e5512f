"""``deja why``'s "The agent said" is the agent's words around the edit that wrote the
line: its messages just before the edit and the one after, in the order the transcript
has them, within the edit's request. Readers that number the person's requests as the
index's steps (Claude Code, Codex, Gemini CLI and the others built record by record)
give every message of a request one step, and why showed the request's last words,
about its last edit, and the next request's (newcomer 16 #1). An index an older deja
wrote keeps no place for its edits: it still answers, by step."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import commit_env, deja, deja_json, git
from test_index import lines_as_schema_14
from test_other_agents import T0, iso

from deja_blame.index.db import SCHEMA_VERSION

NO_AGY = {"DEJA_ANTIGRAVITY_ROOT": ""}
AT = T0 + 3600

# One session: two requests; the first writes two files, the second a third.
SCRIPT: list[tuple[str, ...]] = [
    ("ask", "Add the alpha and beta helpers."),
    ("say", "I'll add alpha to alpha.py first."),
    ("write", "alpha.py", "def alpha() -> int:\n    return 1\n"),
    ("say", "Now beta, in its own file."),
    ("write", "beta.py", "def beta() -> int:\n    return 2\n"),
    ("say", "Both helpers are in; alpha returns 1 and beta 2."),
    ("ask", "Also gamma, please."),
    ("say", "Adding gamma to gamma.py."),
    ("write", "gamma.py", "def gamma() -> int:\n    return 3\n"),
    ("say", "Gamma is done."),
]

EXPECTED = {
    "alpha.py": ["I'll add alpha to alpha.py first.", "Now beta, in its own file."],
    "beta.py": [
        "I'll add alpha to alpha.py first.",
        "Now beta, in its own file.",
        "Both helpers are in; alpha returns 1 and beta 2.",
    ],
    "gamma.py": ["Adding gamma to gamma.py.", "Gamma is done."],
}


def _claude(home: Path, repo: Path) -> None:
    sid = "c1a2b3c4-0000-4000-8000-00000000a001"
    project = home / ".claude" / "projects" / ("-" + str(repo).strip("/").replace("/", "-"))
    project.mkdir(parents=True)
    base = {"sessionId": sid, "cwd": str(repo)}
    records: list[dict[str, Any]] = []
    for k, (kind, *rest) in enumerate(SCRIPT):
        at = iso(AT + 2 * k)
        if kind == "ask":
            records.append({"type": "user", **base, "timestamp": at,
                            "message": {"role": "user", "content": rest[0]}})  # fmt: skip
        elif kind == "say":
            records.append({"type": "assistant", **base, "timestamp": at, "message": {
                "role": "assistant", "model": "claude-opus-4-1",
                "content": [{"type": "text", "text": rest[0]}]}})  # fmt: skip
        else:
            name, content = rest
            path = str(repo / name)
            records += [
                {"type": "assistant", **base, "timestamp": at, "message": {
                    "role": "assistant", "model": "claude-opus-4-1", "content": [
                        {"type": "tool_use", "id": f"t{k}", "name": "Write",
                         "input": {"file_path": path, "content": content}}]}},
                {"type": "user", **base, "timestamp": iso(AT + 2 * k + 1), "message": {
                    "role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}",
                                                 "content": f"File created at {path}"}]},
                 "toolUseResult": {"type": "create", "filePath": path, "content": content}},
            ]  # fmt: skip
    (project / f"{sid}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def _codex(home: Path, repo: Path) -> None:
    sid = "c0dec0de-0000-4000-8000-00000000a002"
    day = home / ".codex" / "sessions" / "2026" / "11" / "28"
    day.mkdir(parents=True)
    records: list[dict[str, Any]] = [
        {"timestamp": iso(AT), "type": "session_meta", "payload": {"id": sid, "cwd": str(repo)}},
        {"timestamp": iso(AT), "type": "turn_context",
         "payload": {"cwd": str(repo), "model": "gpt-5-codex"}},
    ]  # fmt: skip
    for k, (kind, *rest) in enumerate(SCRIPT):
        at = iso(AT + 2 * k)
        if kind in ("ask", "say"):
            role, part = ("user", "input_text") if kind == "ask" else ("assistant", "output_text")
            records.append({"timestamp": at, "type": "response_item", "payload": {
                "type": "message", "role": role,
                "content": [{"type": part, "text": rest[0]}]}})  # fmt: skip
        else:
            name, content = rest
            patch = (
                f"*** Begin Patch\n*** Add File: {name}\n"
                + "".join("+" + ln for ln in content.splitlines(keepends=True))
                + "*** End Patch\n"
            )
            records += [
                {"timestamp": at, "type": "response_item", "payload": {
                    "type": "custom_tool_call", "call_id": f"c{k}", "name": "apply_patch",
                    "input": patch}},
                {"timestamp": iso(AT + 2 * k + 1), "type": "response_item", "payload": {
                    "type": "custom_tool_call_output", "call_id": f"c{k}",
                    "output": json.dumps({"output": "Success.", "metadata": {"exit_code": 0}})}},
            ]  # fmt: skip
    (day / f"rollout-2026-11-28T09-00-00-{sid}.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records)
    )


def _gemini(home: Path, repo: Path) -> None:
    """Gemini CLI keeps a reply's words and its tool calls in one message: a reply that
    writes a file says so first."""
    sid = "9e0e0e0e-0000-4000-8000-00000000a003"
    chats = home / ".gemini" / "tmp" / "repo" / "chats"
    chats.mkdir(parents=True)
    (chats.parent / ".project_root").write_text(str(repo))
    messages: list[dict[str, Any]] = []
    for k, (kind, *rest) in enumerate(SCRIPT):
        at = iso(AT + 2 * k)
        if kind == "ask":
            messages.append({"id": str(k), "timestamp": at, "type": "user", "content": rest[0]})
        elif kind == "say":
            messages.append({"id": str(k), "timestamp": at, "type": "gemini", "content": rest[0],
                             "model": "gemini-2.5-pro"})  # fmt: skip
        else:
            name, content = rest
            messages.append({"id": str(k), "timestamp": at, "type": "gemini", "content": "",
                "model": "gemini-2.5-pro", "toolCalls": [{
                    "id": f"w{k}", "name": "write_file", "status": "success", "timestamp": at,
                    "args": {"file_path": str(repo / name), "content": content}}]})  # fmt: skip
    doc = {"sessionId": sid, "projectHash": "h", "startTime": iso(AT),
           "lastUpdated": iso(AT + 2 * len(SCRIPT)), "messages": messages}  # fmt: skip
    (chats / "session-2026-11-28T09-00-9e0e0e0e.json").write_text(json.dumps(doc, indent=2))


def _session_written(repo: Path, home: Path, write: Any) -> None:
    (repo / "README").write_text("helpers\n")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "start", env=commit_env(T0))
    write(home, repo)
    for kind, *rest in SCRIPT:
        if kind == "write":
            (repo / rest[0]).write_text(rest[1])
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "helpers", env=commit_env(AT + 600))


def _said(out: str) -> list[str]:
    lines = out.splitlines()
    at = lines.index("The agent said")
    said = []
    for line in lines[at + 1 :]:
        if not line.startswith("  "):
            break
        said.append(line.strip())
    return said


@pytest.mark.parametrize(
    ("agent", "write"), [("claude-code", _claude), ("codex", _codex), ("gemini-cli", _gemini)]
)
def test_the_agent_s_words_are_those_around_the_edit(
    repo: Path, tmp_path: Path, agent: str, write: Any
) -> None:
    _session_written(repo, tmp_path / "home", write)
    for name, words in EXPECTED.items():
        doc = deja_json("why", f"{name}:2", "--json", cwd=repo, env=NO_AGY)
        assert doc["session_info"]["agent"] == agent, doc
        assert [m["text"] for m in doc["assistant"]] == words, (agent, name, doc["assistant"])
        out = deja("why", f"{name}:2", cwd=repo, env=NO_AGY).stdout.decode()
        assert _said(out) == words, out


def test_an_index_an_older_deja_wrote_still_answers_by_step(repo: Path, tmp_path: Path) -> None:
    """Schema 13 kept no place for an edit: upgraded, its rows keep none (NULL) and why
    answers as it did, by step; an edit the reader reads again gets its place."""
    _session_written(repo, tmp_path / "home", _claude)
    db = tmp_path / "old.db"
    env = {**NO_AGY, "DEJA_DB": str(db)}
    deja("index", cwd=repo, env=env)
    conn = sqlite3.connect(str(db), isolation_level=None)
    assert conn.execute("SELECT count(*) FROM edits WHERE after_message IS NULL").fetchone() == (0,)
    conn.execute("ALTER TABLE edits DROP COLUMN after_message")
    lines_as_schema_14(conn)
    conn.execute("UPDATE meta SET value='13' WHERE key='schema_version'")
    conn.close()
    doc = deja_json("why", "alpha.py:2", "--json", "--no-refresh", cwd=repo, env=env)
    # by step: the request's last two messages and the next request's first
    assert [m["text"] for m in doc["assistant"]] == [
        "Now beta, in its own file.",
        "Both helpers are in; alpha returns 1 and beta 2.",
        "Adding gamma to gamma.py.",
    ]
    assert doc["prompt"]["text"] == "Add the alpha and beta helpers."
    conn = sqlite3.connect(str(db))
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() == (
        str(SCHEMA_VERSION),
    )
    assert conn.execute("SELECT count(*) FROM edits WHERE after_message IS NULL").fetchone() == (3,)
    conn.close()
    deja("index", "--rebuild", cwd=repo, env=env)
    doc = deja_json("why", "alpha.py:2", "--json", cwd=repo, env=env)
    assert [m["text"] for m in doc["assistant"]] == EXPECTED["alpha.py"]


def test_an_upgraded_index_gets_the_words_from_the_newer_reader(repo: Path, tmp_path: Path) -> None:
    """An index an older deja wrote: its sessions' reader states carry the reader
    version of then (Claude Code's 2; the readers' versions were raised with the
    edits' place), so
    the next refresh reads them again and why gives the words around the edit, with
    no ``--rebuild``."""
    from deja_blame.index.store import pack, unpack

    _session_written(repo, tmp_path / "home", _claude)
    db = tmp_path / "old.db"
    env = {**NO_AGY, "DEJA_DB": str(db)}
    deja("index", cwd=repo, env=env)
    conn = sqlite3.connect(str(db), isolation_level=None)
    conn.execute("ALTER TABLE edits DROP COLUMN after_message")
    lines_as_schema_14(conn)
    conn.execute("UPDATE meta SET value='13' WHERE key='schema_version'")
    conn.close()
    with sqlite3.connect(str(db)) as conn:  # as Claude Code's reader 2 left them
        for sid, state in conn.execute("SELECT sid, state FROM sessions").fetchall():
            doc = json.loads(unpack(state))
            doc["reader_version"] = 2
            conn.execute(
                "UPDATE sessions SET state=? WHERE sid=?", (pack(json.dumps(doc).encode()), sid)
            )
    conn.close()
    doc = deja_json("why", "alpha.py:2", "--json", cwd=repo, env=env)
    assert [m["text"] for m in doc["assistant"]] == EXPECTED["alpha.py"]
    conn = sqlite3.connect(str(db))
    assert conn.execute("SELECT count(*) FROM edits WHERE after_message IS NULL").fetchone() == (0,)
    conn.close()


def test_a_shell_write_has_the_words_around_its_command(repo: Path, tmp_path: Path) -> None:
    """A file a heredoc wrote (``shell_writes``) is placed among the messages where its
    command is: why shows the words before the command and the one after it, not the
    request's last ones."""
    sid = "c1a2b3c4-0000-4000-8000-00000000a004"
    (repo / "README").write_text("delta\n")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "start", env=commit_env(T0))
    project = (
        tmp_path / "home" / ".claude" / "projects" / ("-" + str(repo).strip("/").replace("/", "-"))
    )
    project.mkdir(parents=True)
    body = "def delta() -> int:\n    return 4\n"
    base = {"sessionId": sid, "cwd": str(repo)}

    def said(k: int, text: str) -> dict[str, Any]:
        return {"type": "assistant", **base, "timestamp": iso(AT + k), "message": {
            "role": "assistant", "model": "claude-opus-4-1",
            "content": [{"type": "text", "text": text}]}}  # fmt: skip

    command = f"cat > delta.py <<'EOF'\n{body}EOF"
    records = [
        {"type": "user", **base, "timestamp": iso(AT), "message": {"role": "user",
                                                                   "content": "Add delta."}},
        said(1, "First a look at the tree."),
        said(2, "I'll write delta with a heredoc."),
        {"type": "assistant", **base, "timestamp": iso(AT + 3), "message": {
            "role": "assistant", "model": "claude-opus-4-1", "content": [
                {"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": command}}]}},
        {"type": "user", **base, "timestamp": iso(AT + 4), "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "b1", "content": ""}]}},
        said(5, "Delta is written."),
        said(6, "Nothing else to do."),
    ]  # fmt: skip
    (project / f"{sid}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (repo / "delta.py").write_text(body)
    git(repo, "add", "delta.py")
    git(repo, "commit", "-qm", "delta", env=commit_env(AT + 600))
    doc = deja_json("why", "delta.py:2", "--json", cwd=repo, env=NO_AGY)
    assert doc["session_info"]["agent"] == "claude-code", doc
    assert [m["text"] for m in doc["assistant"]] == [
        "First a look at the tree.",
        "I'll write delta with a heredoc.",
        "Delta is written.",
    ], doc["assistant"]
