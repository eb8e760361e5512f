"""deja server start|stop|status: the resident server that runs commands loaded (``resident/``)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from deja_blame.errors import DejaError
from deja_blame.jsonout import print_json
from deja_blame.resident import client, place
from deja_blame.statefile import state_dir

START_WAIT = 15.0  # seconds ``start`` waits for the new server to answer


def status() -> dict[str, Any] | None:
    """The running server's pid, start time, commands served and version; None: none."""
    got = client.request(client.STATUS)
    if got is None or got[:1] != client.ANSWER:
        return None
    try:
        doc = orjson.loads(got[1:])
    except orjson.JSONDecodeError:
        return None
    return doc if isinstance(doc, dict) else None


def run_start(idle_minutes: float, as_json: bool) -> int:
    path = place.socket_path(create=True)
    if path is None:
        raise DejaError(
            f"no private folder for the server's socket: {place.problem()}",
            hint="the socket goes in $XDG_RUNTIME_DIR/deja-UID (else $TMPDIR, else /tmp),"
            " a folder of yours that only you can open (mode 0700)",
        )
    with _start_lock(path):  # two starts at once: one server, both say its pid
        running = status()
        if running is None:
            log, err = _log_file()
            try:
                subprocess.Popen(
                    [sys.executable, "-m", "deja_blame.resident.server", "--socket", path,
                     "--idle", str(max(idle_minutes, 0.1) * 60)],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                    start_new_session=True, close_fds=True, cwd="/",
                )  # fmt: skip
            finally:
                os.close(err)
            deadline = time.monotonic() + START_WAIT
            while running is None and time.monotonic() < deadline:
                time.sleep(0.05)
                running = status()
            if running is None:
                raise DejaError(f"the server did not start (its errors: {log})")
            said = "started"
        else:
            said = "already running"
    if as_json:
        print_json({"status": said, "socket": path, **running})
    else:
        print(f"deja: server {said} (pid {running.get('pid')}, socket {path})")
    return 0


def run_stop(as_json: bool) -> int:
    running = status()
    if running is not None:
        client.request(client.QUIT)
    if as_json:
        print_json({"status": "stopped" if running else "not running"})
    else:
        print("deja: server stopped" if running else "deja: no server was running")
    return 0


def run_status(as_json: bool) -> int:
    running = status()
    path = place.socket_path()
    if as_json:
        print_json({"running": running is not None, "socket": path, **(running or {})})
    elif running is None:
        print("deja: no server running (start one: deja server start)")
    else:
        up = int(time.time() - float(running.get("started", time.time())))
        print(
            f"deja: server running (pid {running.get('pid')}, up {up} s,"
            f" {running.get('served', 0)} commands served, socket {path})"
        )
    return 0 if running is not None else 1


def _log_file() -> tuple[Path, int]:
    """The server's error log, opened (0600, never through a link): its path and fd."""
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / "server.log"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise DejaError(f"cannot open the server's log {path}: {exc.strerror}") from exc
    return path, fd


@contextmanager
def _start_lock(path: str) -> Iterator[None]:
    """An exclusive lock beside the socket (its private folder) while a server starts."""
    import fcntl

    fd = os.open(path + ".lock", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
