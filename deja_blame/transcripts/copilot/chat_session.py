"""VS Code's own record of a Copilot chat:
``workspaceStorage/<hash>/chatSessions/<id>.json`` (older: the whole session, rewritten)
or ``<id>.jsonl`` (current: a log of changes to it).

The session: ``{sessionId, creationDate, requests: [...], inputState}``. The log's
records are changes to it: ``{"kind": 0, "v": session}`` the whole of it,
``{"kind": 1, "k": [key, ...], "v": value}`` a value set at that key path,
``{"kind": 2, "k": [...], "v": [items], "i": n}`` items added to the list there
(from index ``n`` when given, the rest dropped), ``{"kind": 3, "k": [...]}`` a key
deleted. A change deja cannot apply (its path is not there) is skipped and counted.

Each request: ``message.text`` (the person's words), ``timestamp`` (ms), ``modelId``
(``copilot/auto``: the model that answered is at the start of ``result.details``,
``Claude Sonnet 4.5 • 0.9x``), ``response`` parts (``value``: the agent's words),
``result.metadata.toolCallRounds[].toolCalls[]`` (``name``, ``arguments`` as JSON
text, ``id``) and ``toolCallResults`` by call id. A call is the session's once a
result answers it that is no error or refusal; its tools are those of the event
stream (``copilot/events.py``). A request that ``result.metadata.sessionId`` ties to
an event stream in ``GitHub.copilot-chat/transcripts/`` beside it is read there (its
tool calls have their own times), so nothing is counted twice: only its model is
taken here. The stream of the same name as the chat (``transcripts/<id>.jsonl``,
the chat's ``<id>``) is the same chat: the two are read as one session, the stream's
records each with the model of the request they answer.

Edits made without a tool (edit mode: a request with no tool call, whose response
holds ``textEditGroup`` parts, ``{"uri": ..., "edits": [[{"text", "range"}, ...],
...]}``) carry the new text of each range but not the old: the new lines are the
session's, matched by content, as a file written whole. In agent mode every tool
edit also leaves such a part, which the tool call already counts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deja_blame.models import Session
from deja_blame.transcripts.builder import SessionBuilder
from deja_blame.transcripts.copilot.events import add_events, add_tool
from deja_blame.transcripts.files import is_regular
from deja_blame.transcripts.jsonl import WholeFile
from deja_blame.transcripts.reading import load_document
from deja_blame.transcripts.text import epoch_of
from deja_blame.transcripts.tool_edits import add_replacements, array, epoch_ms_time, json_args, obj

AGENT = "copilot"
# words a tool's result starts with when it did nothing
REFUSED = ("error", "the user cancelled", "the user canceled", "user denied", "cancelled")


def read_chat_session(
    path: Path, session_id: str, project: str | None = None, stream: Path | None = None
) -> Session:
    """``session_id``: the file's (its name); empty, the session's own ``sessionId``.
    ``stream``: the chat's own event stream, read into the same session (and named
    as its transcript)."""
    state, skipped = _state(path)
    sid = state.get("sessionId") if isinstance(state.get("sessionId"), str) else None
    b = SessionBuilder(session_id or sid or path.stem, str((stream or path).resolve()), AGENT)
    b.seen_time(epoch_ms_time(state.get("creationDate")))
    streams = path.parent.parent / "GitHub.copilot-chat" / "transcripts"
    selected = obj(obj(state.get("inputState")).get("selectedModel")).get("identifier")
    b.session.model = _model(selected, None)
    models: list[tuple[float, str]] = []  # (when, model) of each request naming one
    requests = state.get("requests")
    for req in requests if isinstance(requests, list) else []:
        if isinstance(req, dict):
            _request(b, req, streams, models)
    if stream is not None:
        last = b.session.model
        skipped += add_events(b, stream, lambda at: _model_at(models, at))
        b.session.model = last
    session = b.finish(project)
    session.skipped_lines = skipped
    return session


def _model_at(models: list[tuple[float, str]], at: str | None) -> str | None:
    """The model of the last request sent by ``at`` (the first request's before it)."""
    when = epoch_of(at)
    if not models or when is None:
        return None
    chosen = models[0][1]
    for sent, model in models:
        if sent <= when:
            chosen = model
    return chosen


def _state(path: Path) -> tuple[dict[str, Any], int]:
    """The session the file holds (its log's changes applied), and the changes skipped."""
    if path.suffix == ".json":
        # rewritten whole: caught half written, it waits for the next run
        doc = load_document(path)
        return (doc if isinstance(doc, dict) else {}), 0
    state: dict[str, Any] = {}
    lines = WholeFile(path)
    skipped = 0
    for rec in lines:
        kind = rec.get("kind")
        if kind == 0:
            state = rec["v"] if isinstance(rec.get("v"), dict) else {}
        elif not _apply(state, kind, rec.get("k"), rec.get("v"), rec.get("i")):
            skipped += 1
    return state, lines.skipped + skipped


def _apply(state: dict[str, Any], kind: object, keys: object, value: object, at: object) -> bool:
    """One change of the log applied to ``state``; False when it cannot be."""
    if not isinstance(keys, list) or not keys:
        return False
    parent: Any = state
    for key in keys[:-1]:
        parent = _child(parent, key)
        if parent is None:
            return False
    last = keys[-1]
    if kind == 1:
        return _set(parent, last, value)
    if kind == 2:
        items = _child(parent, last)
        if items is None and _set(parent, last, []):
            items = _child(parent, last)
        if not isinstance(items, list) or not isinstance(value, list):
            return False
        if isinstance(at, int) and not isinstance(at, bool) and at >= 0:
            del items[at:]
        items.extend(value)
        return True
    if kind == 3:
        if isinstance(parent, dict) and isinstance(last, str):
            parent.pop(last, None)
            return True
        return False
    return False


def _child(parent: Any, key: object) -> Any:
    if isinstance(parent, dict) and isinstance(key, str):
        return parent.get(key)
    if isinstance(parent, list) and isinstance(key, int) and 0 <= key < len(parent):
        return parent[key]
    return None


def _set(parent: Any, key: object, value: object) -> bool:
    if isinstance(parent, dict) and isinstance(key, str):
        parent[key] = value
        return True
    if isinstance(parent, list) and isinstance(key, int) and 0 <= key <= len(parent):
        if key == len(parent):
            parent.append(value)
        else:
            parent[key] = value
        return True
    return False


def _model(model_id: object, details: object) -> str | None:
    """``copilot/claude-sonnet-4`` is claude-sonnet-4; ``copilot/auto`` is the model
    ``details`` names (``Claude Sonnet 4.5 • 0.9x``), else none."""
    if not isinstance(model_id, str) or not model_id.strip():
        model_id = None
    name = model_id.split("/", 1)[-1] if model_id else None
    if name in (None, "auto") and isinstance(details, str) and details.strip():
        return details.split("•", 1)[0].strip() or None
    return None if name == "auto" else name


def _request(
    b: SessionBuilder, req: dict[str, Any], streams: Path, models: list[tuple[float, str]]
) -> None:
    at = epoch_ms_time(req.get("timestamp"))
    b.seen_time(at)
    result = obj(req.get("result"))
    meta = obj(result.get("metadata"))
    model = _model(req.get("modelId"), result.get("details"))
    if model:
        b.session.model = model
        sent = epoch_of(at)
        if sent is not None:
            models.append((sent, model))
    stream = meta.get("sessionId")
    if isinstance(stream, str) and stream and _has_stream(streams, stream):
        return  # read from its event stream
    text = obj(req.get("message")).get("text")
    if isinstance(text, str) and text.strip():
        b.message("user", text.strip(), at)
    said = "".join(
        p["value"]
        for p in array(req.get("response"))
        if isinstance(p, dict)
        and p.get("kind") in (None, "markdownContent")
        and isinstance(p.get("value"), str)
    )
    if said.strip():
        b.message("assistant", said.strip(), at)
    results = obj(meta.get("toolCallResults"))
    calls = [
        c for rnd in array(meta.get("toolCallRounds")) for c in array(obj(rnd).get("toolCalls"))
    ]
    for call in calls:
        call_id = obj(call).get("id")
        answer = results.get(call_id) if isinstance(call_id, str) else None
        if answer is not None and not _refused(answer):
            name, args = obj(call).get("name"), json_args(obj(call).get("arguments"))
            add_tool(b, name if isinstance(name, str) else "", args, at)
    if not calls:
        _text_edits(b, array(req.get("response")), at)


def _text_edits(b: SessionBuilder, response: list[Any], at: str | None) -> None:
    """Edit mode's ``textEditGroup`` parts: each file's new text, one edit per part."""
    for part in response:
        if obj(part).get("kind") != "textEditGroup" or part.get("done") is False:
            continue
        uri = obj(part.get("uri"))
        target = uri.get("fsPath") or uri.get("external") or uri.get("path")
        texts = [
            edit["text"]
            for group in array(part.get("edits"))
            for edit in array(group)
            if isinstance(edit, dict) and isinstance(edit.get("text"), str) and edit["text"]
        ]
        if texts:
            add_replacements(b, target, "textEditGroup", [("", t) for t in texts], at)


def _has_stream(streams: Path, session_id: str) -> bool:
    if "/" in session_id or "\\" in session_id or session_id.startswith("."):
        return False  # not a name of a file there
    return is_regular(streams / f"{session_id}.jsonl")


def _refused(answer: object) -> bool:
    """A tool result whose first text says it failed or was refused."""
    text = _first_text(answer, 0)
    return text is not None and text.lstrip().lower().startswith(REFUSED)


def _first_text(value: object, depth: int) -> str | None:
    if depth > 12:
        return None
    if isinstance(value, dict):
        for key in ("text", "value"):
            if isinstance(value.get(key), str) and value[key].strip():
                return str(value[key])
        for child in value.values():
            if isinstance(child, (dict, list)):
                found = _first_text(child, depth + 1)
                if found is not None:
                    return found
    elif isinstance(value, list):
        for child in value:
            found = _first_text(child, depth + 1)
            if found is not None:
                return found
    return None
