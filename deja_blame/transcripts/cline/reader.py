"""A Cline, Roo Code or Kilo Code task: ``api_conversation_history.json`` read with
the task's ``ui_messages.json``.

The conversation is a JSON array of Anthropic messages (``role``, ``content``
blocks). The assistant calls a tool in one of two ways, by version: a ``tool_use``
block (``name``, ``id``, ``input``), or, before native tool calls, XML in its text
(``<write_to_file><path>a.py</path><content>...</content></write_to_file>``, one
call a message). The result comes in the next user message: a ``tool_result``
block answering the call's id, or a text block ``[write_to_file for 'a.py']
Result:`` (Cline writes those even for ``tool_use`` calls). A call counts once a
result says it ran: the person can deny it ("The user denied this operation"), a
diff can fail to apply (an error result), a call after a denied one is skipped
and gets no result. When the person changed the proposed content before it was
saved ("The user made the following updates to your content"), the proposal is
what is recorded: the lines the person changed then do not match it, and stay
the person's.

Tools: ``write_to_file`` (``path`` or ``absolutePath``, ``content``),
``replace_in_file`` (Cline) and ``apply_diff`` (Roo) with SEARCH/REPLACE blocks
(``diffblocks``), Roo's ``insert_content``, ``search_and_replace``, ``edit``,
``edit_file``, ``search_replace`` and ``apply_patch``, ``execute_command``
(``command``, ``cwd``); reads and listings are files viewed. Roo's calls on several
files at once (``<args><file>...``) are read file by file (``fileargs``).

The person's words are the ``<task>``, ``<feedback>``, ``<answer>`` and
``<user_message>`` in user messages (never the ``<environment_details>`` the
extension adds, nor a file's or a command's text a result carries). The project
is the environment's ``# Current Working Directory (PATH) Files`` (Roo: ``#
Current Workspace Directory``), else the first folder of ``# Workspace
Configuration``.

Times: Roo's messages carry ``ts`` (ms). Cline's do not: a UI message made while
the conversation held k+1 messages has ``conversationHistoryIndex`` k, so the UI
messages of index k are the making of message k+1 (the last of them, for an
assistant message: its tool's approval, before the tool ran). Without them, the
environment's ``# Current Time`` in the person's locale (``clock``: one it cannot
settle is counted in ``skipped_lines``, not guessed); a message with none takes
the time before it, the first the task id's (Cline's task id is the ms it began).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from deja_blame.models import Session
from deja_blame.transcripts.builder import SessionBuilder
from deja_blame.transcripts.cline import clock
from deja_blame.transcripts.cline.diffblocks import search_replace_pairs
from deja_blame.transcripts.cline.fileargs import call_files, saved_paths
from deja_blame.transcripts.reading import load_document
from deja_blame.transcripts.text import normalise_path
from deja_blame.transcripts.tool_edits import (
    add_patch,
    add_replacements,
    add_write,
    array,
    epoch_ms_time,
    first_str,
    json_args,
    obj,
)

WRITE_TOOLS = frozenset({"write_to_file", "new_rule"})  # a path and the whole content
DIFF_TOOLS = frozenset({"replace_in_file", "apply_diff"})  # SEARCH/REPLACE blocks
PAIR_TOOLS = frozenset({"edit", "edit_file", "search_replace"})  # old_string, new_string
VIEW_TOOLS = {
    "read_file": "view",
    "list_files": "list",
    "search_files": "list",
    "list_code_definition_names": "list",
}
# tools whose result carries text from elsewhere (a file, a command, a page): a
# ``<feedback>`` there is that text's, not the person's
OUTSIDE_TEXT = frozenset(
    {
        *VIEW_TOOLS,
        "execute_command",
        "browser_action",
        "use_mcp_tool",
        "access_mcp_resource",
        "web_fetch",
        "codebase_search",
        "fetch_instructions",
        "read_command_output",
    }
)
# every tool whose XML call older versions wrote in the assistant's text
XML_TOOLS = frozenset(
    {
        *WRITE_TOOLS,
        *DIFF_TOOLS,
        *PAIR_TOOLS,
        *OUTSIDE_TEXT,
        "insert_content",
        "search_and_replace",
        "apply_patch",
        "ask_followup_question",
        "attempt_completion",
        "plan_mode_respond",
        "new_task",
        "switch_mode",
        "update_todo_list",
        "load_mcp_documentation",
        "condense",
        "summarize_task",
        "report_bug",
    }
)
# XML parameters that hold text of their own (a file, a diff): from the first
# opening tag to the last closing one, since the text may itself hold the tag
LONG_PARAMS = ("content", "diff", "patch", "result", "response", "question")
SHORT_PARAMS = (
    "path",
    "absolutePath",
    "file_path",
    "command",
    "cwd",
    "line",
    "search",
    "replace",
    "old_string",
    "new_string",
    "requires_approval",
)
_XML_OPEN = re.compile("<(" + "|".join(sorted(XML_TOOLS, key=len, reverse=True)) + ")>")
_RESULT_HEADER = re.compile(r"\[([A-Za-z_]+)(?: for [^\n]*)?\] Result:")
# the person's words; found by _tagged's scan, not a lazy regex (quadratic in text
# that opens many of them and closes none)
WORD_TAGS = ("task", "feedback", "answer", "user_message")
_WORD_OPEN = re.compile("<(" + "|".join(WORD_TAGS) + ")>")
_ENVIRONMENT = re.compile(r"<environment_details>.*?(?:</environment_details>|\Z)", re.DOTALL)
_FILE_CONTENT = re.compile(r"<final_file_content\b.*?(?:</final_file_content>|\Z)", re.DOTALL)
_THINKING = re.compile(r"<thinking>.*?(?:</thinking>|\Z)", re.DOTALL)
_CWD = re.compile(r"# Current (?:Working|Workspace) Directory \(")
_WORKSPACES = re.compile(r"# Workspace Configuration[ \t]*\n[ \t]*(?=\{)")
_EXIT = re.compile(r"Exit code: (-?\d{1,9})")
_DENIED_FILE = "were not approved by user"
# what a result that did not run begins with, after its header
_NOT_RUN = (
    "The user denied this operation",
    "The tool execution failed",
    "Unable to apply diff",
    "Missing value for required parameter",
    "Skipping tool",
    "Tool [",
    "Error",
    "[ERROR]",
    "<error",
)


@dataclass
class Call:
    name: str
    id: str | None
    args: dict[str, Any]
    at: str | None


@dataclass
class Result:
    name: str | None  # the header's tool (text results); None for a tool_result block
    id: str | None
    text: str
    is_error: bool


def parse_task(
    conversation: Path | str, session_id: str, agent: str, ui_messages: Path | None = None
) -> Session:
    conversation = Path(conversation)
    doc = load_document(conversation)
    if not isinstance(doc, list):
        raise ValueError("the conversation is not a JSON array of messages")
    b = SessionBuilder(session_id, str(conversation.resolve()), agent)
    ui, unreadable = _ui_messages(ui_messages)
    times, unread_times = message_times(doc, ui, session_id)
    models = _ui_models(ui)
    pending: list[Call] = []
    for j, message in enumerate(doc):
        if not isinstance(message, dict):
            continue
        at = times[j]
        b.seen_time(at)
        if message.get("role") == "assistant":
            model = obj(message.get("modelInfo")).get("modelId") or models.get(j - 1)
            if isinstance(model, str) and model:
                b.session.model = model
            pending = _assistant(b, message.get("content"), at)
        elif message.get("role") == "user":
            if b.cwd is None:
                read_environment(b, _texts(message.get("content")))
            _user(b, message.get("content"), pending, at)
            pending = []
    session = b.finish()
    session.skipped_lines = unreadable + unread_times
    return session


# -- times ---------------------------------------------------------------------------------


def _ui_messages(path: Path | None) -> tuple[list[Any], int]:
    """The UI messages, and 1 when they could not be read (their times are then lost,
    nothing else: the conversation is read all the same, and again once they change)."""
    if path is None:
        return [], 0
    try:
        doc = load_document(path)
    except OSError:
        return [], 1
    return (doc, 0) if isinstance(doc, list) else ([], 1)


def _ui_index(entry: object) -> tuple[int, int] | None:
    """(conversationHistoryIndex, ts) of a UI message that has both."""
    if not isinstance(entry, dict):
        return None
    k, ts = entry.get("conversationHistoryIndex"), entry.get("ts")
    if type(k) is int and type(ts) is int:
        return k, ts
    return None


def message_times(doc: list[Any], ui: list[Any], session_id: str) -> tuple[list[str | None], int]:
    """Each message's time (see the module's docstring), never None once one is known;
    and how many environments' ``# Current Time`` were needed but could not be read
    (``clock``: another locale's date nothing in the task settles)."""
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    earliest: int | None = None
    for entry in ui:
        got = _ui_index(entry)
        ts = obj(entry).get("ts")
        if type(ts) is int and 0 < ts < 2**53:
            earliest = ts if earliest is None else min(earliest, ts)
        if got is not None and 0 < got[1] < 2**53:
            k, ts = got
            first[k] = min(first.get(k, ts), ts)
            last[k] = max(last.get(k, ts), ts)
    began = (
        epoch_ms_time(int(session_id)) if session_id.isdigit() and len(session_id) == 13 else None
    )
    own: list[str | None] = []
    clocks: dict[int, str | clock.Stamp | None] = {}  # the environment's, where needed
    for j, message in enumerate(doc):
        m = obj(message)
        at = epoch_ms_time(m.get("ts"))
        if at is None:
            made = (last if m.get("role") == "assistant" else first).get(j - 1)
            at = epoch_ms_time(made) if made is not None else None
        if at is None and m.get("role") == "user":
            found = next(
                (s for t in _texts(m.get("content")) if (s := clock.section(t)) is not None), None
            )
            if found is not None:
                clocks[j] = clock.read(found)
        own.append(at)
    stamps = [c for c in clocks.values() if isinstance(c, clock.Stamp)]
    day_first = clock.slash_order(stamps, began or epoch_ms_time(earliest))
    unread = 0
    for j, read in clocks.items():
        if isinstance(read, clock.Stamp):
            settled = read.settled()
            order = settled if settled is not None else day_first
            read = read.at(order) if order is not None else None
        if read is None:
            unread += 1
        own[j] = read
    out: list[str | None] = []
    before = began
    for at in own:
        at = at or before
        out.append(at)
        before = at
    return out, unread


def current_time(texts: list[str]) -> str | None:
    """The first environment's ``# Current Time`` that its text alone settles."""
    for text in texts:
        found = clock.section(text)
        if found is None:
            continue
        read = clock.read(found)
        if isinstance(read, clock.Stamp):
            settled = read.settled()
            return read.at(settled) if settled is not None else None
        return read
    return None


def _ui_models(ui: list[Any]) -> dict[int, str]:
    out: dict[int, str] = {}
    for entry in ui:
        got = _ui_index(entry)
        model = obj(obj(entry).get("modelInfo")).get("modelId")
        if got is not None and isinstance(model, str) and model:
            out[got[0]] = model
    return out


# -- the assistant's calls ---------------------------------------------------------------


def _texts(content: object) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [
        block["text"]
        for block in array(content)
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]


def _assistant(b: SessionBuilder, content: object, at: str | None) -> list[Call]:
    calls: list[Call] = []
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else array(content)
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            text = block["text"]
            call = xml_call(text)
            if call is not None:
                name, args, start = call
                text = text[:start]
                calls.append(Call(name, None, args, at))
            b.message("assistant", _THINKING.sub("", text).strip(), at)
        elif kind == "tool_use" and isinstance(block.get("name"), str):
            ident = block.get("id") if isinstance(block.get("id"), str) else None
            calls.append(Call(block["name"], ident, json_args(block.get("input")), at))
    for done in calls:  # the words it ends the task with, or asks
        said = first_str(done.args, "result", "question", "response")
        if (
            done.name in ("attempt_completion", "ask_followup_question", "plan_mode_respond")
            and said
        ):
            b.message("assistant", said.strip(), at)
    return calls


def xml_call(text: str) -> tuple[str, dict[str, Any], int] | None:
    """The tool call written as XML in ``text``: (its name, its parameters, where it starts)."""
    opening = _XML_OPEN.search(text)
    if opening is None:
        return None
    name = opening.group(1)
    # the call ends at its first closing tag, as Cline's parser ends it: a second call
    # in the same message (which Cline does not run) is no part of the first one's text
    end = text.find(f"</{name}>", opening.end())
    body = text[opening.end() : end if end >= 0 else len(text)]
    args: dict[str, Any] = {}
    # Roo's several files in one call (``fileargs``): the ``args`` value ends at its first
    # closing tag, as Roo's parser ends it, and nothing in it is a parameter of the call.
    # Only as the call's first tag: ``<args>`` in a file's text or a diff is that text's
    inner = len(body) - len(body.lstrip())
    if body.startswith("<args>", inner):
        stop = body.find("</args>", inner)
        args["args"] = body[inner + 6 : stop if stop >= 0 else len(body)]
        body = body[:inner] + (body[stop + 7 :] if stop >= 0 else "")
    rest = body
    for param in LONG_PARAMS:
        start = body.find(f"<{param}>")
        stop = body.rfind(f"</{param}>")
        if start < 0 or stop < start:
            continue
        value = body[start + len(param) + 2 : stop]
        # the model writes the tag on its own line: that newline is no line of the text
        args[param] = value[1:] if value.startswith("\n") else value
        rest = rest.replace(body[start : stop + len(param) + 3], "")
    for param in SHORT_PARAMS:
        start = rest.find(f"<{param}>")
        stop = rest.find(f"</{param}>", start) if start >= 0 else -1
        if stop >= 0:
            args[param] = rest[start + len(param) + 2 : stop].strip()
    return name, args, opening.start()


# -- results and the person's words ------------------------------------------------------------


def _results(content: object) -> Iterator[Result | str]:
    """A user message's parts: tool results, and the other texts (the person's, the
    extension's notes)."""
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else array(content)
    waiting: str | None = None  # a header whose result is the next block
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            ident = block.get("tool_use_id")
            text = "\n".join(_texts(block.get("content")))
            yield Result(
                None, ident if isinstance(ident, str) else None, text, block.get("is_error") is True
            )
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            text = block["text"]
            header = _RESULT_HEADER.match(text)
            if header is not None:
                body = text[header.end() :]
                if body.strip():
                    yield Result(header.group(1), None, body, False)
                else:
                    waiting = header.group(1)
                continue
            if waiting is not None and not text.startswith("<environment_details>"):
                # older versions: the header alone, the result in the next block
                yield Result(waiting, None, text, False)
            else:
                yield text
            waiting = None


def _user(b: SessionBuilder, content: object, pending: list[Call], at: str | None) -> None:
    parts = list(_results(content))
    results = [p for p in parts if isinstance(p, Result)]
    for call in pending:
        result = _answer(call, results)
        if result is not None and (ran(result) or _per_file(call, result)):
            _tool(b, call, result, at)
    said: list[str] = []
    for part in parts:  # what the person typed, after what their tools did
        if isinstance(part, str):
            said += _words(_ENVIRONMENT.sub("", part))
        else:
            said += _result_words(part, pending)
    for text in said:
        b.message("user", text, at)


def _answer(call: Call, results: list[Result]) -> Result | None:
    """The result of ``call``: the tool_result of its id, else the first text result
    of its tool not yet taken."""
    for i, result in enumerate(results):
        if call.id is not None and result.id == call.id:
            return results.pop(i)
    for i, result in enumerate(results):
        if result.id is None and result.name == call.name:
            return results.pop(i)
    return None


def _status(text: str) -> dict[str, Any]:
    """Roo's newer results are JSON: ``{"status": "denied" | "error" | "approved", ...}``."""
    if not text.lstrip().startswith("{"):
        return {}
    try:
        return obj(orjson.loads(text))
    except orjson.JSONDecodeError:
        return {}


def ran(result: Result) -> bool:
    """Whether the call ran, by its result."""
    if result.is_error:
        return False
    if _status(result.text).get("status") in ("denied", "error"):
        return False
    text = result.text.lstrip()
    if text.startswith("Changes to ") and _DENIED_FILE in text.partition("\n")[0]:
        return False  # Roo's apply_diff, one file denied: "Changes to a.py were not approved..."
    return not text.startswith(_NOT_RUN)


def _per_file(call: Call, result: Result) -> bool:
    """A call on several files whose result is judged file by file (``fileargs``): its
    result may begin with one file's error and still hold another's saved result."""
    return not result.is_error and call.name in DIFF_TOOLS and call_files(call.args) is not None


def _result_words(result: Result, calls: list[Call]) -> list[str]:
    """The person's words in a result: their feedback on a denied call or a completion,
    their answer to a question; never text a file or a command brought in."""
    feedback = _status(result.text).get("feedback")
    if isinstance(feedback, str) and feedback.strip():
        return [feedback.strip()]
    name = result.name or next((c.name for c in calls if c.id == result.id), None)
    denied = result.text.lstrip().startswith("The user denied this operation")
    if name in OUTSIDE_TEXT and not denied:
        return []
    return _words(_FILE_CONTENT.sub("", result.text))


def _words(text: str) -> list[str]:
    return [said.strip() for said in _tagged(text, _WORD_OPEN, len(WORD_TAGS)) if said.strip()]


def _tagged(text: str, opening: re.Pattern[str], names: int) -> list[str]:
    """The text of each ``<name>...</name>`` that ``opening`` finds, in order, not
    nested. Linear: once a name's closing tag is missing past a point, no later
    opening of that name looks for it again (a lazy ``<(name)>(.*?)</\\1>`` scans to
    the end of the text from every opening tag: 13 s for 120 KB of ``<task>``).
    ``names``: how many names ``opening`` finds (once none can close, it stops)."""
    out: list[str] = []
    unclosed: set[str] = set()
    at = 0
    while (found := opening.search(text, at)) is not None:
        name = found.group(1)
        at = found.end()
        if name in unclosed:
            continue
        stop = text.find(f"</{name}>", at)
        if stop < 0:
            unclosed.add(name)
            if len(unclosed) == names:
                break  # no name left that can still close
            continue
        out.append(text[at:stop])
        at = stop + len(name) + 3
    return out


# -- what a call did -----------------------------------------------------------------------------


def _tool(b: SessionBuilder, call: Call, result: Result, at: str | None) -> None:
    name, args = call.name, call.args
    target = first_str(args, "absolutePath", "path", "file_path")
    if name in WRITE_TOOLS:
        content = args.get("content")
        if isinstance(content, str):
            content = as_saved(b.session.source, b.session.model, target, content)
        add_write(b, target, name, content, at)
    elif name in DIFF_TOOLS and (files := call_files(args)) is not None:
        saved = saved_paths(result.text)
        for one in files:
            if one.path and one.path in saved:
                blocks = [
                    pair
                    for diff in one.diffs
                    for pair in search_replace_pairs(
                        as_saved(b.session.source, b.session.model, one.path, diff)
                    )
                ]
                add_replacements(b, one.path, name, blocks, at)
    elif name in DIFF_TOOLS:
        diff = args.get("diff")
        if isinstance(diff, str):
            diff = as_saved(b.session.source, b.session.model, target, diff)
            add_replacements(b, target, name, search_replace_pairs(diff), at)
    elif name in PAIR_TOOLS:
        add_replacements(b, target, name, [(args.get("old_string"), args.get("new_string"))], at)
    elif name == "search_and_replace":
        pairs: list[tuple[object, object]] = [
            (op.get("search"), op.get("replace"))
            for op in array(args.get("operations"))
            if isinstance(op, dict)
        ]
        add_replacements(b, target, name, pairs or [(args.get("search"), args.get("replace"))], at)
    elif name == "insert_content":
        add_replacements(b, target, name, [("", args.get("content"))], at)
    elif name == "apply_patch":
        add_patch(b, first_str(args, "patch", "input"), name, at)
    elif name == "execute_command" and isinstance(args.get("command"), str):
        cwd = b.absolute(args.get("cwd")) or b.cwd
        text = args["command"]
        if b.session.source in ROO_LIKE:  # Roo runs every model's command unescaped
            text = _unescape(text, ROO_ENTITIES)
        command = b.command(text, cwd, at)
        code = _EXIT.search(result.text[:4096])
        if code is not None:
            b.set_exit(command.seq, int(code.group(1)))
    elif name in VIEW_TOOLS and (files := call_files(args)) is not None:
        for one in files:
            full = b.absolute(one.path) if one.path else None
            if full is not None:
                b.file(full, VIEW_TOOLS[name], at)
    elif name in VIEW_TOOLS:
        full = b.absolute(target or ".")
        if full is not None:
            b.file(full, VIEW_TOOLS[name], at)


# What the extension does to a non-Claude model's text before it saves a file (the
# model's own text, entities and all, is what the conversation keeps): Roo Code and
# Kilo Code (``unescapeHtmlEntities``, for write_to_file's content and apply_diff's
# diffs, when the model's id does not contain "claude"; every command), Cline
# (``fixModelHtmlEscaping`` and U+FFFD dropped, for write_to_file and replace_in_file,
# not in an ``.xml`` file, whose entities are its syntax). Replaced in this order, as
# each does (``&amp;`` late: ``&amp;lt;`` is ``&lt;``).
ROO_LIKE = ("roo-code", "kilo-code")
ROO_ENTITIES = (
    ("&lt;", "<"),
    ("&gt;", ">"),
    ("&quot;", '"'),
    ("&#39;", "'"),
    ("&apos;", "'"),
    ("&#91;", "["),
    ("&#93;", "]"),
    ("&lsqb;", "["),
    ("&rsqb;", "]"),
    ("&amp;", "&"),
)
CLINE_ENTITIES = (
    ("&gt;", ">"),
    ("&lt;", "<"),
    ("&quot;", '"'),
    ("&amp;", "&"),
    ("&apos;", "'"),
)


def as_saved(agent: str, model: str | None, path: str | None, text: str) -> str:
    """``text`` as the extension saved it from the model's ``model`` (unknown: as
    written: nothing says it was changed)."""
    if not model or "claude" in model:
        return text
    if agent in ROO_LIKE:
        return _unescape(text, ROO_ENTITIES)
    if agent == "cline" and not (path or "").lower().endswith(".xml"):
        return _unescape(text, CLINE_ENTITIES).replace("\ufffd", "")
    return text


def _unescape(text: str, entities: tuple[tuple[str, str], ...]) -> str:
    if "&" not in text:
        return text
    for entity, char in entities:
        text = text.replace(entity, char)
    return text


def read_environment(b: SessionBuilder, texts: list[str]) -> None:
    """The task's folder, from the first environment that names it."""
    for text in texts:
        folder = _folder_named(text)
        if folder is not None:
            b.cwd = normalise_path(folder)
            return
        config = _WORKSPACES.search(text)
        if config is not None:
            # the object JSON decodes from its first brace, in one pass (a lazy match up to
            # a line that follows it rescanned the rest of the text at every brace)
            try:
                doc, _end = json.JSONDecoder().raw_decode(text, config.end())
            except ValueError:
                continue
            folders = obj(doc).get("workspaces")
            for folder in obj(folders):
                if isinstance(folder, str) and folder.strip():
                    b.cwd = normalise_path(folder)
                    return


def _folder_named(text: str) -> str | None:
    """``# Current Working Directory (/path) Files``: the path, up to the first ``) Files``
    on its line. Linear: a line that holds no ``) Files`` after one heading is not
    searched again for the next (a lazy regex did, from every heading on the line)."""
    at = 0
    while (found := _CWD.search(text, at)) is not None:
        eol = text.find("\n", found.end())
        eol = len(text) if eol < 0 else eol
        stop = text.find(") Files", found.end() + 1, eol)
        if stop >= 0:
            return text[found.end() : stop]
        at = eol
    return None
