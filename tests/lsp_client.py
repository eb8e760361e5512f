"""A plain LSP client for the tests: JSON-RPC with Content-Length framing over a
subprocess's pipes, and nothing of deja's own code (it speaks only the protocol)."""

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


class LspClient:
    def __init__(self, cwd: Path, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "deja_blame", "lsp"],
            cwd=cwd,
            env={**os.environ, "DEJA_LSP_POLL": "0", **(env or {})},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.next_id = 0
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.notifications: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.inbox.put(None)
                    return
                if line == b"\r\n":
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None, "a frame without Content-Length"
            self.inbox.put(json.loads(out.read(length)))

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def start(self, method: str, params: Any) -> int:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.next_id

    def wait(self, msg_id: int) -> dict[str, Any]:
        """The whole response to ``msg_id`` (result or error); notifications are kept."""
        while True:
            msg = self.inbox.get(timeout=WAIT)
            assert msg is not None, "the server ended: " + self.stderr()
            if "method" in msg:
                self.notifications.append(msg)
            elif msg.get("id") == msg_id:
                if "error" in msg:
                    self.errors.append(msg)
                return msg

    def request(self, method: str, params: Any) -> Any:
        response = self.wait(self.start(method, params))
        assert "error" not in response, response
        return response["result"]

    def initialize(self, root: Path) -> dict[str, Any]:
        result = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": {"workspace": {"codeLens": {"refreshSupport": True}}},
            },
        )
        self.notify("initialized", {})
        return result

    def open(self, path: Path, text: str | None = None) -> str:
        uri = path.as_uri()
        self.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": "python",
                    "version": 1,
                    "text": path.read_text() if text is None else text,
                }
            },
        )
        return uri

    def lenses(self, uri: str) -> list[dict[str, Any]]:
        return self.request("textDocument/codeLens", {"textDocument": {"uri": uri}}) or []

    def hover(self, uri: str, line: int) -> str | None:
        result = self.request(
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": line, "character": 0}},
        )
        return None if result is None else result["contents"]["value"]

    def wait_for(self, method: str) -> dict[str, Any]:
        """The next notification or server request named ``method``."""
        for msg in self.notifications:
            if msg.get("method") == method:
                self.notifications.remove(msg)
                return msg
        while True:
            msg = self.inbox.get(timeout=WAIT)
            assert msg is not None, "the server ended: " + self.stderr()
            if msg.get("method") == method:
                return msg
            self.notifications.append(msg)

    def close(self) -> int:
        """shutdown, then exit: the server's exit code."""
        self.request("shutdown", None)
        self.notify("exit", None)
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
