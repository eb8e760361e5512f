"""An independent count of what real agent transcripts hold, for ``real_agents.py``.

Nothing of deja is imported: each agent's raw records are read here with the
standard library, by the shape the agent writes, so a reader's mistake is not
repeated by the count. Per transcript: the file edits the agent made (applied
ones: a result that is no error, where the transcript records results) by file,
the shell commands, the person's requests and the last model named.

``classify(path)`` tells the agent from the file's own shape (None: not a
transcript this knows); ``count(path, agent)`` counts.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for raw in path.read_bytes().splitlines():
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def _doc(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except ValueError:
        return None


def _args(raw: Any) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {"input": raw}
    return raw if isinstance(raw, dict) else {}


def _patch_files(text: Any) -> list[str]:
    return [m.strip() for m in PATCH_FILE.findall(text)] if isinstance(text, str) else []


def classify(path: Path) -> str | None:
    """The agent whose shape the file has, by the file alone."""
    name = path.name
    if name.endswith(".aider.chat.history.md"):
        return "aider"
    if (
        name.endswith(".md")
        and path.parent.name == "history"
        and path.parent.parent.name == ".specstory"
    ):
        return "specstory"
    if name == "opencode.db":
        return "opencode"
    if name.endswith(".settings.json"):
        return None
    if name == "api_conversation_history.json":  # a Cline, Roo Code or Kilo Code task
        if "rooveterinaryinc.roo-cline" in path.parts:
            return "roo-code"
        return "kilo-code" if "kilocode.kilo-code" in path.parts else "cline"
    if name.endswith(".json"):
        doc = _doc(path)
        if not isinstance(doc, dict):
            return None
        if "requests" in doc and ("version" in doc or "sessionId" in doc):
            return "copilot-chat"
        if "history" in doc and "workspaceDirectory" in doc:
            return "continue"
        if isinstance(doc.get("messages"), list) and str(doc.get("id", "")).startswith("T-"):
            return "amp"
        if isinstance(doc.get("messages"), list) and "sessionId" in doc:
            return "gemini-cli"
        return None
    if not name.endswith(".jsonl"):
        return None
    recs = _lines(path)[:20]
    for r in recs:
        if r.get("kind") == 0 and isinstance(r.get("v"), dict):
            return "copilot-chat"
        t = r.get("type")
        if t in ("session_meta", "turn_context", "response_item"):
            return "codex"
        if t in ("session_start",) and "cwd" in r:
            return "droid"
        if t == "session" and "cwd" in r and "version" in r:
            return "pi"
        if isinstance(t, str) and t.startswith(("session.", "user.message", "assistant.")):
            vs = isinstance(r.get("data"), dict) and "vscodeVersion" in r["data"]
            return "copilot" if vs or "GitHub.copilot-chat" in path.parts else "copilot-cli"
        if t in ("user_input", "planner_response", "code_action", "run_command"):
            return "windsurf"
        if t in ("user", "assistant", "summary", "file-history-snapshot") and "uuid" in r:
            return "claude-code"
        if t in ("user", "gemini") and "id" in r:
            return "gemini-cli"
        if set(r) <= {"role", "message"} and "role" in r:
            return "cursor"
        if "step_index" in r or "source" in r and "content" in r:
            return "antigravity"
    return None


def _blank() -> dict[str, Any]:
    return {"edits": Counter(), "calls": 0, "commands": 0, "requests": 0, "model": None}


def count(path: Path, agent: str) -> dict[str, Any]:
    """``edits``: a Counter of applied edits by file path as the transcript spells it;
    ``calls``: edit calls whatever their result; ``commands``; ``requests``; ``model``."""
    fn = COUNTERS.get(agent)
    out = _blank()
    if fn is not None:
        fn(path, out)
    return out


def _claude_records(path: Path) -> list[dict[str, Any]]:
    """The records, with the sub-agent records ``progress`` ones carry
    (``data.type == "agent_progress"``, ``data.message``) in their place."""
    out = []
    for r in _lines(path):
        data = r.get("data") if isinstance(r.get("data"), dict) else {}
        if r.get("type") == "progress" and data.get("type") == "agent_progress":
            inner = data.get("message")
            if isinstance(inner, dict):
                out.append({**inner, "isSidechain": True})
        else:
            out.append(r)
    return out


def _claude(path: Path, out: dict[str, Any]) -> None:
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    answered: set[str] = set()  # a sub-agent's call is met in progress and its file
    for r in _claude_records(path):
        msg = r.get("message") if isinstance(r.get("message"), dict) else {}
        content = msg.get("content")
        if r.get("type") == "assistant":
            model = msg.get("model")
            if isinstance(model, str) and model != "<synthetic>" and not r.get("isSidechain"):
                out["model"] = model
            for p in content if isinstance(content, list) else []:
                if p.get("type") == "tool_use" and p.get("id") not in answered:
                    if p.get("name") == "Bash" and p.get("id") not in calls:
                        out["commands"] += 1  # a command is one as it is asked for
                    calls[p.get("id")] = (p.get("name"), p.get("input") or {})
        elif r.get("type") == "user":
            if isinstance(content, str):
                texts = [content]
            else:
                texts = [p.get("text", "") for p in content or [] if p.get("type") == "text"]
            for p in content if isinstance(content, list) else []:
                if p.get("type") != "tool_result" or p.get("tool_use_id") not in calls:
                    continue
                name, args = calls.pop(p["tool_use_id"])
                answered.add(p["tool_use_id"])
                text = json.dumps(p.get("content"))
                if name in ("Edit", "MultiEdit", "Write", "NotebookEdit"):
                    out["calls"] += 1
                    rejected = "rejected" in text and "user" in text
                    if not p.get("is_error") and not rejected:
                        out["edits"][args.get("file_path") or args.get("notebook_path")] += 1
            text = "\n".join(t for t in texts if isinstance(t, str)).strip()
            if (
                text
                and not r.get("isMeta")
                and not r.get("isSidechain")
                and not r.get("isCompactSummary")
                and not text.startswith(
                    ("<command-", "<local-command", "Caveat:", "[Request interrupted")
                )
            ):
                out["requests"] += 1


CODEX_SHELLS = {"shell", "shell_command", "exec_command", "local_shell", "container.exec"}
CODEX_NOT_REQUESTS = ("<environment_context", "<user_instructions", "# AGENTS.md", "<turn_aborted")


def _codex(path: Path, out: dict[str, Any]) -> None:
    calls: dict[str, list[str]] = {}
    for r in _lines(path):
        p = r.get("payload") if isinstance(r.get("payload"), dict) else r
        t = p.get("type")
        if r.get("type") == "turn_context" and isinstance(p.get("model"), str):
            out["model"] = p["model"]
        if t == "message" and p.get("role") == "user":
            text = "".join(
                c.get("text", "") for c in p.get("content") or [] if isinstance(c, dict)
            ).strip()
            if text and not text.startswith(CODEX_NOT_REQUESTS):
                out["requests"] += 1
        elif t in ("function_call", "custom_tool_call", "local_shell_call"):
            name = p.get("name") or "local_shell"
            raw = p.get("input") if t == "custom_tool_call" else p.get("arguments")
            args = _args(raw) if t != "local_shell_call" else p.get("action") or {}
            text = raw if isinstance(raw, str) else json.dumps(args)
            cid = p.get("call_id") or p.get("id") or ""
            if name == "apply_patch" or "*** Begin Patch" in text:
                patch = args.get("input") or args.get("patch") or raw
                cmd = args.get("command")
                if isinstance(cmd, list):
                    patch = next((c for c in cmd if "*** Begin Patch" in c), patch)
                elif isinstance(cmd, str) and "*** Begin Patch" in cmd:
                    patch = cmd
                calls[cid] = _patch_files(patch)
                out["calls"] += len(calls[cid])
            elif name in CODEX_SHELLS:
                out["commands"] += 1
        elif t in ("function_call_output", "custom_tool_call_output"):
            files = calls.pop(p.get("call_id"), None)
            output = json.dumps(p.get("output"))
            failed = re.search(
                r"exit_code\\?\"?: ?[1-9]|Exit code: [1-9]|verification failed", output
            )
            if files and not failed:
                for f in files:
                    out["edits"][f] += 1


def _gemini(path: Path, out: dict[str, Any]) -> None:
    if path.suffix == ".json":
        doc = _doc(path) or {}
        msgs = doc.get("messages") or []
    else:
        by_id: dict[str, Any] = {}
        for r in _lines(path):
            if "$rewindTo" in r:
                keys = list(by_id)
                if r["$rewindTo"] in by_id:
                    for k in keys[keys.index(r["$rewindTo"]) :]:
                        del by_id[k]
                else:
                    by_id.clear()
            elif "id" in r and "type" in r:
                by_id[r["id"]] = r
        msgs = list(by_id.values())
    for m in msgs:
        if m.get("type") == "user":
            out["requests"] += 1
        if m.get("type") == "gemini":
            out["model"] = m.get("model") or out["model"]
            for tc in m.get("toolCalls") or []:
                args = tc.get("args") or {}
                if tc.get("name") in ("replace", "write_file"):
                    out["calls"] += 1
                    if tc.get("status") == "success":
                        out["edits"][args.get("file_path")] += 1
                elif tc.get("name") == "run_shell_command" and tc.get("status") == "success":
                    out["commands"] += 1


def _cursor(path: Path, out: dict[str, Any]) -> None:
    for r in _lines(path):
        content = (r.get("message") or {}).get("content")
        for p in content if isinstance(content, list) else []:
            if r.get("role") == "user" and p.get("type") == "text":
                out["requests"] += 1
            if r.get("role") == "assistant" and p.get("type") == "tool_use":
                args = p.get("input") or {}
                if p.get("name") in ("StrReplace", "Write", "Edit", "MultiEdit"):
                    out["calls"] += 1
                    out["edits"][args.get("path") or args.get("file_path")] += 1
                elif p.get("name") == "Shell":
                    out["commands"] += 1


COPILOT_EDITS = {
    "replace_string_in_file",
    "multi_replace_string_in_file",
    "create_file",
    "apply_patch",
    "edit",
    "create",
    "str_replace",
    "str_replace_editor",
    "insert_edit_into_file",
}
COPILOT_SHELLS = {"run_in_terminal", "bash", "shell", "powershell"}


def _copilot_edit_files(name: str, args: dict[str, Any]) -> list[str]:
    if name == "multi_replace_string_in_file":
        return [r.get("filePath") for r in args.get("replacements") or [] if isinstance(r, dict)]
    if name == "apply_patch":
        return _patch_files(args.get("input") or args.get("patch"))
    if name == "str_replace_editor" and args.get("command") not in ("create", "str_replace"):
        return []
    return [args.get("filePath") or args.get("path") or args.get("file_path")]


def _copilot_events(path: Path, out: dict[str, Any]) -> None:
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for r in _lines(path):
        d = r.get("data") if isinstance(r.get("data"), dict) else {}
        t = r.get("type")
        if t == "user.message":
            out["requests"] += 1
        elif t == "session.model_change":
            out["model"] = d.get("newModel")
        elif t == "tool.execution_start":
            calls[d.get("toolCallId")] = (d.get("toolName"), _args(d.get("arguments")))
        elif t == "tool.execution_complete" and d.get("toolCallId") in calls:
            name, args = calls.pop(d["toolCallId"])
            result = d.get("result") if isinstance(d.get("result"), dict) else {}
            ok = d.get("success") is True or result.get("result_type") == "success"
            if name in COPILOT_EDITS:
                out["calls"] += 1
                if ok:
                    for f in _copilot_edit_files(name, args):
                        out["edits"][f] += 1
            elif name in COPILOT_SHELLS:
                out["commands"] += 1


def _chat_state(path: Path) -> dict[str, Any]:
    """A VS Code chat session: the JSON document, or the JSON Lines log of changes
    (kind 0 the whole state, 1 a value set at key path ``k``, 2 items pushed onto the
    list at ``k`` (from index ``i`` when given), 3 a key deleted)."""
    if path.suffix == ".json":
        doc = _doc(path)
        return doc if isinstance(doc, dict) else {}
    state: dict[str, Any] = {}
    for r in _lines(path):
        kind, keys, v = r.get("kind"), r.get("k") or [], r.get("v")
        if kind == 0:
            state = v
            continue
        parent: Any = state
        for k in keys[:-1]:
            parent = parent[k]
        last = keys[-1]
        if kind == 1:
            parent[last] = v
        elif kind == 2:
            items = parent.setdefault(last, [])
            if r.get("i") is not None:
                del items[r["i"] :]
            items.extend(v or [])
        elif kind == 3:
            parent.pop(last, None)
    return state


def _copilot_model(model_id: Any, details: Any) -> str | None:
    """``copilot/gpt-4o`` is gpt-4o; ``copilot/auto`` is what ``result.details`` names
    before its ``•`` (the model that answered)."""
    name = model_id.rsplit("/", 1)[-1] if isinstance(model_id, str) and model_id else None
    if name in (None, "auto") and isinstance(details, str) and "•" in details:
        return details.split("•")[0].strip()
    return None if name == "auto" else name


def _copilot_chat(path: Path, out: dict[str, Any]) -> None:
    state = _chat_state(path)
    picked = ((state.get("inputState") or {}).get("selectedModel") or {}).get("identifier")
    out["model"] = _copilot_model(picked, None)
    for req in state.get("requests") or []:
        text = (req.get("message") or {}).get("text")
        if isinstance(text, str) and text.strip():
            out["requests"] += 1
        model = _copilot_model(req.get("modelId"), (req.get("result") or {}).get("details"))
        out["model"] = model or out["model"]
        meta = (req.get("result") or {}).get("metadata") or {}
        results = meta.get("toolCallResults") or {}
        for rnd in meta.get("toolCallRounds") or []:
            for tc in rnd.get("toolCalls") or []:
                name, args = tc.get("name"), _args(tc.get("arguments"))
                if name in COPILOT_EDITS:
                    out["calls"] += 1
                    if tc.get("id") in results:
                        for f in _copilot_edit_files(name, args):
                            out["edits"][f] += 1
                elif name in COPILOT_SHELLS and tc.get("id") in results:
                    out["commands"] += 1


def _windsurf(path: Path, out: dict[str, Any]) -> None:
    for r in _lines(path):
        t = r.get("type")
        body = r.get(t) if isinstance(r.get(t), dict) else {}
        if t == "user_input":
            out["requests"] += 1
        elif t == "code_action":
            out["calls"] += 1
            if "REJECT" not in str(body.get("acknowledgement_type")):
                out["edits"][body.get("path")] += 1
        elif t == "run_command" and not body.get("user_rejected"):
            out["commands"] += 1


def _opencode(path: Path, out: dict[str, Any]) -> None:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        roles = {
            mid: json.loads(d).get("role")
            for mid, d in conn.execute("SELECT id, data FROM message")
        }
        for (d,) in conn.execute("SELECT data FROM message ORDER BY time_created"):
            m = json.loads(d)
            out["model"] = m.get("modelID") or (m.get("model") or {}).get("modelID") or out["model"]
        for mid, d in conn.execute("SELECT message_id, data FROM part ORDER BY time_created"):
            p = json.loads(d)
            if p.get("type") == "text" and roles.get(mid) == "user" and not p.get("synthetic"):
                out["requests"] += 1
            if p.get("type") != "tool":
                continue
            state = p.get("state") or {}
            args = state.get("input") or {}
            if p.get("tool") in ("edit", "write", "patch", "multiedit"):
                out["calls"] += 1
                if state.get("status") == "completed":
                    out["edits"][args.get("filePath")] += 1
            elif p.get("tool") == "bash" and state.get("status") == "completed":
                out["commands"] += 1
    finally:
        conn.close()


def _amp(path: Path, out: dict[str, Any]) -> None:
    doc = _doc(path) or {}
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in doc.get("messages") or []:
        for p in m.get("content") or []:
            if m.get("role") == "user" and p.get("type") == "text":
                out["requests"] += 1
            elif p.get("type") == "tool_use":
                calls[p.get("id")] = (p.get("name"), p.get("input") or {})
            elif p.get("type") == "tool_result" and p.get("toolUseID") in calls:
                name, args = calls.pop(p["toolUseID"])
                done = (p.get("run") or {}).get("status") == "done"
                if name in ("edit_file", "create_file"):
                    out["calls"] += 1
                    if done:
                        out["edits"][args.get("path")] += 1
                elif name == "Bash" and done:
                    out["commands"] += 1
        usage = m.get("usage") or {}
        out["model"] = usage.get("model") or out["model"]


def _droid(path: Path, out: dict[str, Any]) -> None:
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    settings = path.with_name(path.stem + ".settings.json")
    if settings.is_file():
        out["model"] = (_doc(settings) or {}).get("model")
    for r in _lines(path):
        msg = r.get("message") or {}
        content = msg.get("content")
        if r.get("type") != "message" or not isinstance(content, list):
            continue
        texts = [p for p in content if p.get("type") == "text"]
        if msg.get("role") == "user" and texts:
            out["requests"] += 1  # one request, whatever parts it holds
        for p in content:
            if p.get("type") == "tool_use":
                calls[p.get("id")] = (p.get("name"), p.get("input") or {})
            elif p.get("type") == "tool_result" and p.get("tool_use_id") in calls:
                name, args = calls.pop(p["tool_use_id"])
                bad = p.get("is_error") or '"success":false' in str(p.get("content"))
                if name in ("Create", "Edit", "MultiEdit", "ApplyPatch"):
                    out["calls"] += 1
                    files = _patch_files(args.get("input")) if name == "ApplyPatch" else []
                    for f in files or [args.get("file_path")]:
                        out["edits"][f] += 0 if bad else 1
                elif name == "Execute" and not bad:
                    out["commands"] += 1


def _pi(path: Path, out: dict[str, Any]) -> None:
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for r in _lines(path):
        if r.get("type") == "model_change":
            out["model"] = r.get("modelId") or out["model"]
        msg = r.get("message") or {}
        if r.get("type") != "message" or not isinstance(msg, dict):
            continue
        role, content = msg.get("role"), msg.get("content")
        if role == "user" and content:
            out["requests"] += 1
        elif role == "assistant":
            out["model"] = msg.get("model") or out["model"]
            for p in content if isinstance(content, list) else []:
                if isinstance(p, dict) and p.get("type") == "toolCall":
                    calls[p.get("id")] = (p.get("name"), p.get("arguments") or {})
        elif role == "toolResult" and msg.get("toolCallId") in calls:
            name, args = calls.pop(msg["toolCallId"])
            bad = msg.get("isError") is True
            if name in ("edit", "write"):
                out["calls"] += 1
                out["edits"][args.get("path")] += 0 if bad else 1
            elif name == "bash" and not bad:
                out["commands"] += 1


CLINE_EDITS = (
    "write_to_file",
    "replace_in_file",
    "apply_diff",
    "insert_content",
    "search_and_replace",
)
CLINE_XML = re.compile(r"<(" + "|".join(CLINE_EDITS) + r"|execute_command)>\s*<path>([^<]*)</path>")
CLINE_XML_COMMAND = re.compile(r"<execute_command>")
# Roo's calls on several files: <apply_diff><args><file><path>P</path>...; a file saved
# is named by its own <file_write_result> in the joined result
CLINE_ARGS = re.compile(r"<apply_diff>\s*<args>(.*?)(?:</args>|$)", re.S)
CLINE_ARGS_FILE = re.compile(r"<file>\s*<path>([^<]*)</path>")
CLINE_SAVED = re.compile(r"<file_write_result>\s*<path>([^<]*)</path>")
CLINE_RESULT = re.compile(r"^\[(\w+)(?: for [^\n]*)?\] Result:")
CLINE_WORDS = re.compile(r"<(?:task|feedback|answer|user_message)>")
CLINE_BAD = (
    "The user denied",
    "The tool execution failed",
    "Unable to apply",
    "Error",
    '{"status":"denied"',
    '{"status":"error"',
)


def _cline(path: Path, out: dict[str, Any]) -> None:
    """Each assistant message's calls (tool_use blocks, or the XML call in its text),
    answered by the next user message's tool_result of the same id or its
    ``[tool for '...'] Result:`` text (the result alone, or in the next block)."""
    msgs = [m for m in _doc(path) or [] if isinstance(m, dict)]
    calls: list[tuple[str, str | None, dict[str, Any]]] = []
    for m in msgs:
        blocks = m.get("content") if isinstance(m.get("content"), list) else []
        texts = [
            b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"
        ]
        if m.get("role") == "assistant":
            calls = []
            for b in blocks:
                if isinstance(b, dict) and b.get("type") == "tool_use":
                    calls.append((b.get("name"), b.get("id"), b.get("input") or {}))
            for t in texts:
                x = CLINE_XML.search(t)
                many = CLINE_ARGS.search(t)
                if many:
                    names = [p.strip() for p in CLINE_ARGS_FILE.findall(many.group(1))]
                    calls.append(("apply_diff", None, {"many_files": names}))
                elif x:
                    calls.append((x.group(1), None, {"path": x.group(2).strip()}))
                elif CLINE_XML_COMMAND.search(t):
                    calls.append(("execute_command", None, {}))
            continue
        results: list[tuple[str | None, str | None, str]] = []
        for i, b in enumerate(blocks):
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_result":
                c = b.get("content")
                body = (
                    c
                    if isinstance(c, str)
                    else " ".join(str(p.get("text", "")) for p in c or [] if isinstance(p, dict))
                )
                results.append((None, b.get("tool_use_id"), "Error" if b.get("is_error") else body))
            elif b.get("type") == "text":
                h = CLINE_RESULT.match(b.get("text", ""))
                if h:
                    body = b["text"][h.end() :].strip()
                    if not body and i + 1 < len(blocks) and isinstance(blocks[i + 1], dict):
                        body = str(blocks[i + 1].get("text", ""))
                    results.append((h.group(1), None, body))
        for t in texts:
            if not CLINE_RESULT.match(t) and not t.startswith("<environment_details>"):
                out["requests"] += len(CLINE_WORDS.findall(t))
        for name, ident, args in calls:
            got = next(
                (
                    r
                    for r in results
                    if (ident and r[1] == ident) or (r[1] is None and r[0] == name)
                ),
                None,
            )
            if got is None:
                continue
            results.remove(got)
            bad = (
                got[2]
                .lstrip()
                .replace(" ", "")
                .startswith(tuple(b.replace(" ", "") for b in CLINE_BAD))
            )
            if "many_files" in args:
                saved = {p.strip() for p in CLINE_SAVED.findall(got[2])}
                for p in args["many_files"]:
                    out["calls"] += 1
                    out["edits"][p] += 1 if p in saved else 0
            elif name in CLINE_EDITS and "were not approved by user" in got[2][:200]:
                out["calls"] += 1
                out["edits"][args.get("absolutePath") or args.get("path")] += 0
            elif name in CLINE_EDITS:
                out["calls"] += 1
                out["edits"][args.get("absolutePath") or args.get("path")] += 0 if bad else 1
            elif name == "execute_command" and not bad:
                out["commands"] += 1
        calls = []
        model = (
            (m.get("modelInfo") or {}).get("modelId")
            if isinstance(m.get("modelInfo"), dict)
            else None
        )
        out["model"] = model or out["model"]
    for m in msgs:
        if m.get("role") == "assistant" and isinstance(m.get("modelInfo"), dict):
            out["model"] = m["modelInfo"].get("modelId") or out["model"]


def _continue(path: Path, out: dict[str, Any]) -> None:
    doc = _doc(path) or {}
    for item in doc.get("history") or []:
        msg = item.get("message") or {}
        if msg.get("role") == "user":
            out["requests"] += 1
        for st in item.get("toolCallStates") or []:
            fn = (st.get("toolCall") or {}).get("function") or {}
            name, args = fn.get("name"), st.get("parsedArgs") or _args(fn.get("arguments"))
            if name in (
                "Edit",
                "MultiEdit",
                "Write",
                "single_find_and_replace",
                "multi_edit",
                "create_new_file",
                "edit_existing_file",
            ):
                out["calls"] += 1
                if st.get("status") == "done":
                    out["edits"][args.get("file_path") or args.get("filepath")] += 1
            elif name in ("Bash", "run_terminal_command") and st.get("status") == "done":
                out["commands"] += 1


AIDER_SENDS = ("/ask ", "/code ", "/architect ")  # commands whose text is a request


def _aider(path: Path, out: dict[str, Any]) -> None:
    typed: list[str] = []

    def request() -> None:
        text = "\n".join(typed).strip()
        if text and (not text.startswith(("/", "!")) or text.startswith(AIDER_SENDS)):
            out["requests"] += 1
        elif text.startswith(("/run ", "!", "/test ")):
            out["commands"] += 1
        typed.clear()

    for raw in path.read_text("utf-8", "replace").split("\n"):
        line = raw.rstrip("\r")
        if line.startswith("#### ") or line == "####":
            typed.append(line[5:])
            continue
        request()
        said = line[2:].strip() if line.startswith("> ") else ""
        if said.startswith("Applied edit to "):
            name = said[len("Applied edit to ") :].strip("` ")
            out["edits"][name] += 1
            out["calls"] += 1
        for key in ("Main model: ", "Model: "):
            if said.startswith(key) and " with " in said:
                out["model"] = said[len(key) :].split(" with ")[0]
    request()


_SS_BLOCK = re.compile(
    r'^<tool-use data-tool-type="\w+" data-tool-name="(\w+)">.*?^</(?:details></)?tool-use>[ \t]*$|'
    r"^Tool use: \*\*(\w+)\*\*.*?(?=^_\*\*|^Tool use: |\Z)|"
    r"^<details><summary>(?:Tool use: \*\*\w+\*\* • )?Edit file: (.+?)</summary>.*?^</details>",
    re.S | re.M,
)
_SS_WRITTEN = re.compile(
    r"^```(?:text)?\n(?:File created successfully at: (.+?)|"
    r"The file (.+?) has been (?:updated|overwritten)\b.*)$",
    re.M,
)
_SS_EDIT_FILE = re.compile(
    r"^(?:<details>)?\s*<summary>(?:Tool use: \*\*\w+\*\* • )?Edit file: (.+?)</summary>", re.M
)
_SS_USER = re.compile(r"^_\*\*User(?: \([^)]*\))?\*\*_[ \t]*\n\s*(?!---|_\*\*)\S", re.M)
_SS_MODEL = re.compile(r"^_\*\*Agent(?: - sidechain)? \((?:model )?([^ ,)]+)[ ,)]", re.M)


def _specstory(path: Path, out: dict[str, Any]) -> None:
    """Whole-file patterns (the reader walks lines): a Write's last fenced result
    naming the file written, an ``Edit file:`` summary with an ``@@`` chunk that did
    not stop (``Status:``, ``**Apply failed**``), Bash calls, User turns with words."""
    text = path.read_text("utf-8", "replace").replace("\r\n", "\n")
    for m in _SS_BLOCK.finditer(text):
        name = m.group(1) or m.group(2)
        block = m.group(0)
        edited = m.group(3) or next((e.group(1) for e in _SS_EDIT_FILE.finditer(block)), None)
        if name == "Write":
            out["calls"] += 1
            hits = list(_SS_WRITTEN.finditer(block))
            if hits:
                out["edits"][(hits[-1].group(1) or hits[-1].group(2)).strip()] += 1
        elif name in ("Bash", "run_terminal_cmd"):
            out["commands"] += 1
        elif edited is not None:
            out["calls"] += 1
            stopped = "**Apply failed**" in block or re.search(
                r"^Status: \*\*(?!completed)", block, re.M
            )
            if "\n@@ -" in block and not stopped:
                out["edits"][edited.strip()] += 1
    out["requests"] = len(_SS_USER.findall(text))
    models = _SS_MODEL.findall(text)
    out["model"] = next((m for m in reversed(models) if not m[:1].isdigit()), None)


COUNTERS = {
    "specstory": _specstory,
    "aider": _aider,
    "claude-code": _claude,
    "codex": _codex,
    "gemini-cli": _gemini,
    "cursor": _cursor,
    "copilot": _copilot_events,
    "copilot-cli": _copilot_events,
    "copilot-chat": _copilot_chat,
    "windsurf": _windsurf,
    "opencode": _opencode,
    "amp": _amp,
    "droid": _droid,
    "pi": _pi,
    "cline": _cline,
    "roo-code": _cline,
    "kilo-code": _cline,
    "continue": _continue,
}
