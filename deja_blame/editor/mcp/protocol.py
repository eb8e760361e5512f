"""JSON-RPC 2.0 as MCP's stdio transport frames it: one message per line, UTF-8,
no embedded newlines (``orjson`` never writes one).

A small loop of our own rather than the ``mcp`` SDK: the SDK brings 27 packages
(45 MB) and takes 1.9 s to answer its first ``tools/list`` here; deja needs seven
methods (docs/mcp.md has the measurement).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import IO, Any

import orjson

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

MAX_LINE = 4 * 1024 * 1024  # a request larger than this is a broken client, not a question


@dataclass
class BadMessage:
    """A line that is not a JSON-RPC message: answered with ``code``, id null."""

    code: int
    message: str


def read_message(stream: IO[bytes]) -> Any:
    """The next message (a dict, or a list for a batch), a ``BadMessage``, or None at
    the end of the stream. Blank lines are skipped."""
    while True:
        line = stream.readline(MAX_LINE + 1)
        if not line:
            return None
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while True:  # drop the rest of the oversized line
                more = stream.readline(MAX_LINE)
                if not more or more.endswith(b"\n"):
                    break
            return BadMessage(INVALID_REQUEST, f"a message over {MAX_LINE} bytes")
        if line.strip():
            break
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError:
        return BadMessage(PARSE_ERROR, "the line is not JSON")
    if isinstance(message, (dict, list)):
        return message
    return BadMessage(INVALID_REQUEST, "a message is a JSON object")


def _printable(value: Any) -> Any:
    """``value`` with every string made encodable (a file name that is not UTF-8
    reaches here as lone surrogates, which JSON cannot carry)."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {_printable(k): _printable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_printable(v) for v in value]
    return value


class Writer:
    """Writes whole lines; a lock keeps two writers' lines apart."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, message: Any) -> None:
        try:
            body = orjson.dumps(message)
        except TypeError:  # orjson's JSONEncodeError: a lone surrogate somewhere
            body = orjson.dumps(_printable(message))
        with self._lock:
            self._stream.write(body + b"\n")
            self._stream.flush()


def response(msg_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
