"""A plain MCP client for the tests, written from the protocol (JSON-RPC 2.0, one
message per line over a subprocess's stdio) and importing nothing of deja's."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

WAIT = 60.0
VERSION = "2025-11-25"


class McpClient:
    def __init__(
        self, cwd: Path, env: dict[str, str] | None = None, args: tuple[str, ...] = ()
    ) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "deja_blame", "mcp", *args],
            cwd=cwd,
            env={**os.environ, **(env or {})},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.next_id = 0
        self.inbox: queue.Queue[Any] = queue.Queue()
        self.requests: list[dict[str, Any]] = []  # the server's requests to us
        self.roots: list[Path] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        for line in out:
            message = json.loads(line)  # a line that is not JSON fails the test here
            if isinstance(message, dict) and message.get("method") == "roots/list":
                self.send_json(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "result": {"roots": [{"uri": r.as_uri()} for r in self.roots]},
                    }
                )
                self.requests.append(message)
                continue
            self.inbox.put(message)
        self.inbox.put(None)

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send_json(self, message: Any) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send_json(message)

    def start(self, method: str, params: Any = None) -> int:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send_json(message)
        return self.next_id

    def receive(self) -> Any:
        message = self.inbox.get(timeout=WAIT)
        assert message is not None, "the server ended: " + self.stderr()
        return message

    def wait(self, msg_id: int) -> dict[str, Any]:
        while True:
            message = self.receive()
            if isinstance(message, dict) and message.get("id") == msg_id:
                return message

    def request(self, method: str, params: Any = None) -> Any:
        answer = self.wait(self.start(method, params))
        assert "error" not in answer, answer
        return answer["result"]

    def initialize(self, version: str = VERSION, roots: bool = False) -> dict[str, Any]:
        result = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {"roots": {"listChanged": True}} if roots else {},
                "clientInfo": {"name": "test-client", "version": "1"},
            },
        )
        self.notify("notifications/initialized")
        return result

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """The tool's whole result: content, structuredContent, isError."""
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def close(self) -> int:
        """Close stdin (how stdio clients stop a server): its exit code."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=WAIT)

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(c["text"] for c in result["content"] if c["type"] == "text")
