"""JSON-RPC 2.0 over a byte stream, framed as LSP frames it: ``Content-Length``
headers, a blank line, then the JSON body.

A small loop of our own rather than pygls: the server needs a dozen methods,
and this keeps deja's dependencies at pygit2, orjson, unidiff and click.
"""

from __future__ import annotations

import threading
from typing import IO, Any

import orjson

# JSON-RPC and LSP error codes
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002
REQUEST_CANCELLED = -32800

MAX_BODY = 64 * 1024 * 1024  # a frame larger than this is a broken client, not a file


class ProtocolError(Exception):
    """The stream is not LSP framing: the connection cannot go on."""


def read_message(stream: IO[bytes]) -> dict[str, Any] | None:
    """The next message, or None at the end of the stream."""
    length: int | None = None
    while True:
        header = stream.readline()
        if not header:
            return None
        if header in (b"\r\n", b"\n"):
            break
        name, _, value = header.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            try:
                length = int(value.strip())
            except ValueError as exc:
                raise ProtocolError(f"bad Content-Length: {value.strip()!r}") from exc
    if length is None or not 0 <= length <= MAX_BODY:
        raise ProtocolError("a message without a valid Content-Length")
    body = stream.read(length)
    if len(body) < length:
        return None
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return {"jsonrpc": "2.0", "_parse_error": True}
    return message if isinstance(message, dict) else {"jsonrpc": "2.0", "_parse_error": True}


class Writer:
    """Writes whole frames; the reader, the worker and the poller share it."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        body = orjson.dumps({"jsonrpc": "2.0", **message})
        with self._lock:
            self._stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self._stream.flush()

    def reply(self, msg_id: Any, result: Any) -> None:
        self.send({"id": msg_id, "result": result})

    def error(self, msg_id: Any, code: int, message: str) -> None:
        self.send({"id": msg_id, "error": {"code": code, "message": message}})

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})
