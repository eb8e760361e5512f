"""The MCP server: the lifecycle, one handler per method, tool calls to ``tools``.

One thread reads a line, answers it and reads the next: an agent asks one
question at a time, and SQLite connections stay on their thread. Methods:
``initialize`` (version negotiation), ``ping``, ``tools/list``, ``tools/call``,
``resources/list``, ``resources/templates/list``, ``resources/read``; the
notifications ``initialized``, ``cancelled`` and ``roots/list_changed``; and
the client's answer to our ``roots/list``.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import traceback
from pathlib import Path
from typing import IO, Any
from urllib.parse import unquote, urlparse

import orjson

from deja_blame.editor.mcp.paging import CURSOR
from deja_blame.editor.mcp.protocol import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    BadMessage,
    Writer,
    error,
    read_message,
    response,
)
from deja_blame.editor.mcp.scope import Repository, repository_at
from deja_blame.editor.mcp.tools import TOOL_NAMES, TOOLS, Tools
from deja_blame.errors import DejaError

# The revisions with the initialize handshake, newest first. A client asking for
# another (a newer one, 2026-07-28's era has no handshake) is answered with the
# newest: the client then decides whether it can go on.
VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
STRUCTURED_SINCE = "2025-06-18"  # structuredContent, outputSchema and titles came then

METHODS = frozenset(
    ("tools/list", "tools/call", "resources/list", "resources/templates/list", "resources/read")
)
RESOURCE_NOT_FOUND = -32002
STATS_URI = "deja://stats"
MAX_LISTED = 50  # entries of each list of the stats resource
ROOTS_REQUEST = "deja-roots"

INSTRUCTIONS = (
    "deja knows which agent session wrote each line of this repository and why."
    " Before changing code you did not write, call why(file, line) for the request,"
    " the reasoning, the edit and the tests behind it; blame(file) for who wrote"
    " what; sessions(path) for the sessions that worked on a file; show(session)"
    " for one session. Answers are bounded: pass next_cursor back as cursor for more."
)


def log(text: str) -> None:
    print(f"deja mcp: {text}", file=sys.stderr, flush=True)


class Server:
    def __init__(
        self,
        reader: IO[bytes],
        writer: IO[bytes],
        conn: sqlite3.Connection,
        repo: Path | None = None,
        prompts: bool = False,
        start: Path | None = None,
    ) -> None:
        self.reader = reader
        self.out = Writer(writer)
        self.tools = Tools(conn)
        self.repo = repo
        self.prompts = prompts
        self.start = start or Path.cwd()
        self.version: str | None = None
        self.client_roots = False
        self.roots: list[Path] = []
        self.roots_asked = 0

    def run(self) -> int:
        """Serve until the end of input (the client closes our stdin to stop us)."""
        while True:
            msg = read_message(self.reader)
            if msg is None:
                return 0
            if isinstance(msg, BadMessage):
                self.out.send(error(None, msg.code, msg.message))
                continue
            if isinstance(msg, list):
                if not msg:
                    self.out.send(error(None, INVALID_REQUEST, "an empty batch"))
                    continue
                replies = [r for r in (self._one(m) for m in msg) if r is not None]
                if replies:
                    self.out.send(replies)
                continue
            reply = self._one(msg)
            if reply is not None:
                self.out.send(reply)

    # --- one message -------------------------------------------------------------

    def _one(self, msg: Any) -> dict[str, Any] | None:
        """The reply to one message (None for a notification or a client's answer)."""
        if not isinstance(msg, dict):
            return error(None, INVALID_REQUEST, "a message is a JSON object")
        msg_id = msg.get("id")
        method = msg.get("method")
        if method is None and ("result" in msg or "error" in msg):
            self._client_answer(msg)
            return None
        has_id = "id" in msg
        if msg.get("jsonrpc") != "2.0" or not isinstance(method, str):
            answer_to = msg_id if _valid_id(msg_id) else None
            return error(answer_to, INVALID_REQUEST, 'not JSON-RPC 2.0 (jsonrpc "2.0", a method)')
        if has_id and not _valid_id(msg_id):
            return error(None, INVALID_REQUEST, "a request's id is a string or an integer")
        params = msg.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return error(msg_id, INVALID_PARAMS, "params is an object") if has_id else None
        if not has_id:
            self._notification(method, params)
            return None
        try:
            return self._request(msg_id, method, params)
        except Exception:  # one bad request must not end the server
            log("unexpected error:\n" + traceback.format_exc())
            return error(msg_id, INTERNAL_ERROR, "deja mcp: unexpected error (see its log)")

    def _notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/initialized":
            self._ask_roots()
        elif method == "notifications/roots/list_changed":
            self._ask_roots()
        # notifications/cancelled: each request is answered before the next is read

    def _request(self, msg_id: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            if not isinstance(params.get("protocolVersion"), str):
                return error(msg_id, INVALID_PARAMS, "initialize needs params.protocolVersion")
            return response(msg_id, self._initialize(params))
        if method == "ping":
            return response(msg_id, {})
        if method not in METHODS:
            return error(msg_id, METHOD_NOT_FOUND, f"deja mcp does not serve {method}")
        if self.version is None:
            return error(msg_id, INVALID_REQUEST, "initialize first")
        cursor = params.get(CURSOR)
        if method in ("tools/list", "resources/list", "resources/templates/list") and (
            cursor is not None
        ):
            # everything fits one page: no cursor of ours exists to be given back
            return error(msg_id, INVALID_PARAMS, "no such cursor: this list has one page")
        if method == "tools/list":
            return response(msg_id, {"tools": self._tool_list()})
        if method == "tools/call":
            return self._call(msg_id, params)
        if method == "resources/list":
            return response(msg_id, {"resources": [self._stats_resource()]})
        if method == "resources/templates/list":
            return response(msg_id, {"resourceTemplates": []})
        return self._read(msg_id, params)

    # --- the lifecycle --------------------------------------------------------------

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        from deja_blame import __version__

        asked = params["protocolVersion"]
        self.version = asked if asked in VERSIONS else VERSIONS[0]
        caps = params.get("capabilities")
        self.client_roots = isinstance(caps, dict) and isinstance(caps.get("roots"), dict)
        info: dict[str, Any] = {"name": "deja", "version": __version__}
        if self._structured():
            info["title"] = "deja: why is this line here?"
        return {
            "protocolVersion": self.version,
            "capabilities": {
                "tools": {"listChanged": False},
                "resources": {"subscribe": False, "listChanged": False},
            },
            "serverInfo": info,
            "instructions": INSTRUCTIONS,
        }

    def _structured(self) -> bool:
        return self.version is not None and self.version >= STRUCTURED_SINCE

    def _ask_roots(self) -> None:
        """Ask the client which directories it works in (when it can say)."""
        if not self.client_roots:
            return
        self.roots_asked += 1
        self.out.send(
            {"jsonrpc": "2.0", "id": f"{ROOTS_REQUEST}-{self.roots_asked}", "method": "roots/list"}
        )

    def _client_answer(self, msg: dict[str, Any]) -> None:
        if msg.get("id") != f"{ROOTS_REQUEST}-{self.roots_asked}":
            return  # an answer to an older question: a newer one is on its way
        result = msg.get("result")
        roots = result.get("roots") if isinstance(result, dict) else None
        if not isinstance(roots, list):
            return
        found: list[Path] = []
        for root in roots:
            uri = root.get("uri") if isinstance(root, dict) else None
            if isinstance(uri, str) and uri.startswith("file://"):
                found.append(Path(unquote(urlparse(uri).path)))
        self.roots = found

    # --- the repository a question is about ------------------------------------------

    def _repository(self, args: dict[str, Any]) -> Repository:
        given = args.get("repo")
        if given is not None:
            if not isinstance(given, str) or not given.strip() or "\0" in given:
                raise DejaError("'repo' is the path of a repository")
            path = Path(given)
            return repository_at(path if path.is_absolute() else self.start / path, self.prompts)
        if self.repo is not None:
            return repository_at(self.repo, self.prompts)
        for root in self.roots:
            try:
                return repository_at(root, self.prompts)
            except DejaError:
                continue
        try:
            return repository_at(self.start, self.prompts)
        except DejaError as exc:
            raise DejaError(
                f"{exc}; start deja mcp in a repository, or give 'repo' (or deja mcp --repo)"
            ) from None

    # --- tools ------------------------------------------------------------------------

    def _tool_list(self) -> list[dict[str, Any]]:
        if self._structured():
            return TOOLS
        return [{k: v for k, v in t.items() if k != "title"} for t in TOOLS]

    def _call(self, msg_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        args = params.get("arguments")
        if not isinstance(name, str) or name not in TOOL_NAMES:
            return error(
                msg_id, INVALID_PARAMS, f"no tool {name!r}: {', '.join(sorted(TOOL_NAMES))}"
            )
        if args is None:
            args = {}
        if not isinstance(args, dict):
            return error(msg_id, INVALID_PARAMS, "arguments is an object")
        try:
            repository = self._repository(args)
            answer = self.tools.call(name, args, repository)
        except DejaError as exc:
            return response(msg_id, self._tool_error(str(exc)))
        except sqlite3.Error as exc:
            log(f"the index could not be read: {exc}")
            return response(msg_id, self._tool_error(f"deja's index could not be read ({exc})"))
        except Exception:
            log(f"unexpected error in {name}:\n" + traceback.format_exc())
            return response(
                msg_id, self._tool_error("deja: unexpected error (see the server's log)")
            )
        result: dict[str, Any] = {
            "content": [{"type": "text", "text": answer.text}],
            "isError": False,
        }
        if self._structured():
            result["structuredContent"] = answer.data
        return response(msg_id, result)

    @staticmethod
    def _tool_error(text: str) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": text}], "isError": True}

    # --- resources -------------------------------------------------------------------

    def _stats_resource(self) -> dict[str, Any]:
        doc = {
            "uri": STATS_URI,
            "name": "stats",
            "description": "How much of this repository agents wrote: lines and share, by"
            " agent, model, session and person (deja stats --json).",
            "mimeType": "application/json",
        }
        if self._structured():
            doc["title"] = "Agent share of this repository"
        return doc

    def _read(self, msg_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        if uri != STATS_URI:
            return error(msg_id, RESOURCE_NOT_FOUND, f"no resource {uri!r}: {STATS_URI}")
        from deja_blame.commands.stats import files_of, stats_of

        try:
            repository = self._repository({})
            conn = self.tools.conn
            stats = stats_of(conn, repository.root, None, files_of(repository.root, None, []))
        except DejaError as exc:
            return error(msg_id, RESOURCE_NOT_FOUND, str(exc))
        doc = stats.to_json()
        for key in ("by_agent", "by_model", "by_session", "by_person", "skipped"):
            if len(doc[key]) > MAX_LISTED:
                doc[f"{key}_left_out"] = len(doc[key]) - MAX_LISTED
                doc[key] = doc[key][:MAX_LISTED]
        doc["repository"] = str(repository.root)
        text = orjson.dumps(doc).decode()
        return response(
            msg_id, {"contents": [{"uri": STATS_URI, "mimeType": "application/json", "text": text}]}
        )


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def serve(db: Path | None = None, repo: Path | None = None, prompts: bool = False) -> int:
    """Serve MCP on stdin/stdout until the client closes stdin; the log is stderr."""
    from deja_blame.index.db import connect, default_db_path, empty_stand_in

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the protocol stream
    path = db or default_db_path()
    try:
        conn = connect(path, notice=log)
    except (sqlite3.Error, DejaError, OSError) as exc:
        # a reviewer's clone still has its notes: answer from them
        log(f"no index ({exc}); answers come from the repository's notes only")
        conn = empty_stand_in(path)
    try:
        return Server(stdin, stdout, conn, repo, prompts, Path(os.getcwd())).run()
    finally:
        conn.close()
