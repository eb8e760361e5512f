"""The console script's side of the resident server: hand a command over, wait, exit.

``run(args)`` connects to the server's socket (``place.py``) and sends the
command line, the current folder, the environment, the umask and the standard
streams' encodings, with the process's stdin, stdout and stderr themselves (file
descriptors passed over the socket): the fork that runs the command reads and
writes them directly, so pipes, files and exit codes are the command's own. While
it runs, the signals a person or a parent sends (Ctrl-C, a kill) are passed to it.

It returns None (run the command here, as always) where there is no server, the
server refuses (another installation's, or its code changed on disk since it
started) or does not take the command within two seconds, the server is not this
user's in this sandbox, the user turned it off (``DEJA_SERVER=0``), on Windows,
where an argument names one of the caller's own descriptors beyond the three
(``<(...)``), and where stdout is a terminal: the pager and the terminal's own
signals belong to a process of the terminal's (``docs/server.md``).

The standard library only, and little of it: this runs before deja loads (its C
modules ``_socket`` and ``_signal``, not ``socket`` and ``signal``: with the enums
those build, they were half the client's imports).
"""

from __future__ import annotations

import os
import sys

from deja_blame.resident import place

# The C modules beneath ``signal`` and ``socket``: those two build enums of their
# constants, and with ``enum`` itself that was 9 ms of every command's start.
try:
    import _signal as signal
except ImportError:  # not CPython
    import signal

TYPE_CHECKING = False  # typing's own costs 3 ms of every command's start
if TYPE_CHECKING:  # names for annotations only: this runs before deja loads
    import _socket  # (loaded where a server is tried)
    from collections.abc import Mapping
    from types import FrameType
    from typing import Any

# Commands never handed over: the server's own, and the long-lived stdio servers
LOCAL_COMMANDS = frozenset({"server", "lsp", "mcp", "handoff"})  # handoff: the agent needs a tty
# Arguments naming one of the caller's own descriptors (``--contents <(...)``): only
# stdin, stdout and stderr are passed, so such a command runs here
_OWN_FILES = ("/dev/fd/", "/proc/self/", "/proc/thread-self/", "/dev/stdin")
STARTED_WITHIN = 2.0  # seconds: a server that has not taken the command by then is not used
GO = b"G"

MAGIC = b"DEJA1"
RUN, STATUS, QUIT = b"C", b"S", b"Q"
REFUSED, STARTED, EXITED, ANSWER = b"R", b"P", b"X", b"A"


# deja's own options before the command (``cli.cli``), those that take a value, and
# the same with the value in the argument itself (``--db=X``, ``-CDIR``, ``-C=DIR``)
_GLOBAL_WITH_VALUE = ("-C", "--db", "--color")
_GLOBAL_ATTACHED = ("-C", "--db=", "--color=")
_GLOBAL_FLAGS = ("--no-pager",)


def command_of(args: list[str]) -> str | None:
    """The command named after deja's global options (``deja --db X -C DIR blame``);
    None: none, or an option this does not know (``--help``, ``--version``)."""
    k = 0
    while k < len(args) and args[k].startswith("-"):
        arg = args[k]
        if arg in _GLOBAL_WITH_VALUE:
            k += 2
        elif arg in _GLOBAL_FLAGS or arg.startswith(_GLOBAL_ATTACHED):
            k += 1
        else:
            return None
    return args[k] if k < len(args) else None


def wanted(args: list[str]) -> bool:
    """Whether this command may go to a server at all (before any socket is tried)."""
    if os.name != "posix" or place.off():
        return False
    command = command_of(args)
    if command is None or command in LOCAL_COMMANDS:
        return False
    # anywhere in an argument: ``-C/dev/fd/7``, ``--db=/proc/self/fd/7``
    if any(own in a for a in args for own in _OWN_FILES):
        return False
    try:
        return not os.isatty(1)
    except OSError:
        return False


def run(args: list[str]) -> int | None:
    """The command's exit code, run by the server; None: run it here."""
    if not wanted(args):
        return None
    # a server that does not take the command soon is not used: run it here
    sock = _connect(STARTED_WITHIN)
    if sock is None:
        return None
    try:
        return _hand_over(sock, args)
    finally:
        sock.close()


def request(kind: bytes, payload: bytes = b"", fds: list[int] | None = None) -> bytes | None:
    """One request of ``kind`` to the server, its reply's first record (None: no server)."""
    sock = _connect(10)
    if sock is None:
        return None
    try:
        _send(sock, kind, payload, fds)
        head = _read(sock, 5)
        size = int.from_bytes(head[1:], "big")
        return head[:1] + _read(sock, size) if head[:1] in (ANSWER, REFUSED) else head
    except (OSError, EOFError):
        return None
    finally:
        sock.close()


def _connect(timeout: float) -> _socket.socket | None:
    """A connection to this user's server in this sandbox, or None (no server, a dead
    one's socket, or a peer that is not us: never handed anything)."""
    path = place.socket_path()
    if path is None:
        return None
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    if not place.peer_is_us(sock):
        sock.close()
        return None
    return sock


def _hand_over(sock: _socket.socket, args: list[str]) -> int | None:
    from deja_blame import __version__

    try:
        cwd = os.getcwd()
    except OSError:
        return None  # a folder removed under the caller: the command says what it can
    mask = os.umask(0o077)
    os.umask(mask)
    fields = [
        __version__,
        place.package_dir(),
        cwd,
        str(mask),
        *(_encoding(s) for s in (sys.stdin, sys.stdout, sys.stderr)),
        str(len(args)),
        *args,
        *(f"{k}={v}" for k, v in os.environ.items()),
    ]
    payload = b"\0".join(os.fsencode(f) for f in fields)
    # signals are caught from here on: one that comes before the fork has the command
    # stops it from running; after, it is passed on to the fork
    pid = 0
    caught: list[int] = []

    def forward(signum: int, frame: FrameType | None) -> None:
        caught.append(signum)
        if pid:
            try:
                os.kill(pid, signum)
            except OSError:
                pass

    names = [n for n in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT") if hasattr(signal, n)]
    before = {n: signal.signal(getattr(signal, n), forward) for n in names}
    try:
        _send(sock, RUN, payload, [0, 1, 2])
        head = _read(sock, 5)
        if head[:1] != STARTED:
            _here(before)  # refused (another installation, changed code)
            return None
        if caught:
            return _interrupted(caught)  # no go: the fork runs nothing
        # the fork runs nothing until it hears this: a caller that gave up (the
        # timeout above) and runs the command itself never has it run twice
        pid = int.from_bytes(head[1:], "big", signed=True)
        sock.sendall(GO)
    except (OSError, EOFError):
        if caught:
            return _interrupted(caught)
        _here(before)  # the server did not take the command in time
        return None
    sock.settimeout(None)  # the command itself takes as long as it takes
    try:
        head = _read(sock, 5)
    except (OSError, EOFError):
        if caught:
            return 128 + caught[-1]  # the fork ended on the signal passed on (130: Ctrl-C)
        sys.stderr.write("deja: error: the resident server's worker stopped without an answer\n")
        return 1
    if head[:1] != EXITED:
        return 1
    return int.from_bytes(head[1:], "big", signed=True)


def _here(before: Mapping[str, Any]) -> None:
    """The command runs in this process after all: its signals are its own again (the
    caller's None: run it here)."""
    for name, handler in before.items():
        signal.signal(getattr(signal, name), handler)


def _interrupted(caught: list[int]) -> int:
    """A signal before the command started: it never runs; the exit a command gives."""
    if caught[-1] == signal.SIGINT:
        sys.stderr.write("deja: interrupted\n")
        return 130
    return 128 + caught[-1]


def _encoding(stream: object) -> str:
    enc = getattr(stream, "encoding", None) or "utf-8"
    errors = getattr(stream, "errors", None) or "strict"
    return f"{enc}:{errors}"


def _send(sock: _socket.socket, kind: bytes, payload: bytes, fds: list[int] | None) -> None:
    data = MAGIC + kind + len(payload).to_bytes(4, "big") + payload
    if fds:
        import _socket

        # (``socket.send_fds``: the descriptors as an array of C ints, SCM_RIGHTS)
        rights = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds)
        sent = sock.sendmsg([data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
        if sent < len(data):
            sock.sendall(data[sent:])
    else:
        sock.sendall(data)


def _read(sock: _socket.socket, size: int) -> bytes:
    got = b""
    while len(got) < size:
        part = sock.recv(size - len(got))
        if not part:
            raise EOFError
        got += part
    return got
