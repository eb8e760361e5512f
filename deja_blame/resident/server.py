"""The resident server's loop: deja's modules loaded once, a fork per command.

The loop accepts a connection on the socket (``place.py``), checks who asks (the
same user, the same deja installation, the code on disk unchanged since the
server loaded it: ``LoadedCode``, which stats the code's files only after the
kernel reported a change in their folders) and forks. The fork takes the client's stdin, stdout and stderr
as its own, its folder, environment and umask, and runs the console script's
command exactly as ``entry.py`` would, then sends back the exit code. The server
itself never runs a command: every answer starts from the same freshly loaded
state, and a command's crash is its fork's alone.

It exits after ``idle`` seconds without a command, on ``deja server stop``, when
its socket is removed or replaced, or when deja's code on disk changed (an
upgrade, a checkout): the next command then runs the usual way.
"""

from __future__ import annotations

import atexit
import functools
import importlib
import io
import os
import resource
import select
import signal
import socket
import struct
import sys
import time
import zlib
from typing import Any

from deja_blame import later
from deja_blame.resident import place, watch
from deja_blame.resident.client import (
    ANSWER,
    EXITED,
    GO,
    MAGIC,
    QUIT,
    REFUSED,
    RUN,
    STARTED,
    STARTED_WITHIN,
    STATUS,
    _read,
)

# What a command would import on its way: loaded once, before the socket opens
PRELOAD = (
    "sqlite3",
    "orjson",
    "click",
    "deja_blame.entry",
    "deja_blame.cli",
    "deja_blame.hooks.late",  # every command looks for notes its hooks left late
    "deja_blame.commands.blame",
    "deja_blame.commands.why",
    "deja_blame.attribution.answer",
    "deja_blame.attribution.blame",
    "deja_blame.attribution.facts.gather",
    "deja_blame.attribution.match",
    "deja_blame.index.refresh",
    "deja_blame.index.changes",
    "deja_blame.index.watched",
    "deja_blame.index.ingest",
    "deja_blame.transcripts.registry",
    "deja_blame.outputs.blame_text",
    "deja_blame.notes.lookup",
    "deja_blame.notes.indexed",
    "deja_blame.commands.stats",
    "deja_blame.commands.report",
    "deja_blame.commands.annotate",
    "pygit2",
)
DEFAULT_IDLE = 30 * 60.0  # seconds without a command before the server exits
_TICK = 5.0  # how often an idle server looks at its socket and the clock


# Libraries whose upgrade also makes the loaded code stale (their files' stamps count)
_LIBRARIES = ("click", "orjson", "pygit2", "unidiff")


def code_files() -> list[str]:
    """The files whose change means the loaded code is not the code on disk: every deja
    module, and the libraries' own files."""
    files = []
    for name in _LIBRARIES:
        module = sys.modules.get(name)
        where = getattr(module, "__file__", None)
        if not where:
            continue
        if getattr(module, "__path__", None) is None:
            files.append(where)  # a module of one file (orjson's extension)
            continue
        for folder, dirs, names in os.walk(os.path.dirname(where)):  # every file of it
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            files += [os.path.join(folder, n) for n in sorted(names) if n.endswith((".py", ".so"))]
    for folder, dirs, names in os.walk(place.package_dir()):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".py")]
    return files


def code_stamp(files: list[str] | None = None) -> int:
    """A checksum of ``files``' sizes and times (a stat each: about 0.4 ms for deja's)."""
    seen = []
    for path in code_files() if files is None else files:
        try:
            st = os.stat(path)
        except OSError:
            seen.append(f"{path}\0gone")
            continue
        seen.append(f"{path}\0{st.st_size}\0{st.st_mtime_ns}")
    return zlib.crc32("\n".join(seen).encode("utf-8", "surrogateescape"))


class LoadedCode:
    """The code files the server loaded, and whether they are still what is on disk:
    watched (``watch.FolderWatch``), statted only after a change in their folders."""

    def __init__(self, files: list[str]) -> None:
        self.files = files
        # watched before the stamp is taken: a change made in between is an event
        self.watch = watch.FolderWatch([os.path.dirname(f) for f in files])
        self.stamp = code_stamp(files)
        self.watch.settle()

    def unchanged(self) -> bool:
        if self.watch.quiet():
            return True
        if code_stamp(self.files) != self.stamp:
            return False
        self.watch.settle()  # an event that changed none of them (a new file beside)
        return True


def serve(path: str, idle: float = DEFAULT_IDLE) -> None:
    """Load deja, listen on ``path`` and run commands until idle, stopped or stale."""
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a module that fails to load fails in the fork too
            pass
    code = LoadedCode(code_files())
    _watch_transcripts()
    signal.signal(signal.SIGTERM, _stop)  # a kill, a logout: the socket goes with it
    listener = _bind(path)
    inode = os.stat(path).st_ino
    signal.signal(signal.SIGCHLD, _reap)  # and their CPU counted (``status``: benchmarks)
    os.chdir("/")
    from deja_blame import __version__

    status = {"pid": os.getpid(), "started": time.time(), "served": 0, "version": __version__}
    last = time.time()
    try:
        while True:
            try:
                ready, _, _ = select.select([listener], [], [], min(_TICK, idle / 2))
            except _Stopped:
                return
            if not ready:
                if time.time() - last > idle or not _still_ours(path, inode):
                    return
                watch.drain()  # the kernel's queue kept short
                continue
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            last = time.time()
            # (getrusage: microseconds; os.times counts in the clock's ticks, 10 ms)
            spent = resource.getrusage(resource.RUSAGE_CHILDREN)
            status["children_cpu"] = round(spent.ru_utime + spent.ru_stime, 6)
            try:
                if _answer(listener, conn, code, status) == "stop":
                    return
            except _Stopped:
                return
    finally:
        listener.close()
        if _still_ours(path, inode):
            try:
                os.unlink(path)
            except OSError:
                pass


class _Stopped(Exception):
    """The server was sent SIGTERM: the loop ends (and the socket is removed)."""


def _stop(signum: int, frame: object) -> None:
    raise _Stopped


def _reap(signum: int, frame: object) -> None:
    """Collect every fork that ended (its CPU then counts in ``children_cpu``)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _bind(path: str) -> socket.socket:
    try:
        os.unlink(path)  # a dead server's socket (``deja server start`` asked first)
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(path)
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    listener.listen(16)
    return listener


def _watch_transcripts() -> None:
    """Watch the transcript roots of the server's environment (``watch.py``): its forks'
    refreshes then stat what was written, not every transcript. Never the server's end:
    without a watch every fork looks at everything, as a command alone does."""
    try:
        from deja_blame.transcripts.antigravity.discover import discover_roots

        watch.start(discover_roots())
    except Exception:  # noqa: BLE001, S110 - see above
        pass


def _still_ours(path: str, inode: int) -> bool:
    try:
        return os.lstat(path).st_ino == inode
    except OSError:
        return False


def _answer(
    listener: socket.socket,
    conn: socket.socket,
    code: LoadedCode,
    status: dict[str, Any],
) -> str:
    fds: list[int] = []
    try:
        conn.settimeout(10)
        kind, payload, fds = _receive(conn)
        if not place.peer_is_us(conn):
            return "go on"
        if kind == STATUS:
            import orjson

            _reply(conn, ANSWER, orjson.dumps(status))
        elif kind == QUIT:
            _reply(conn, ANSWER, b"stopping")
            return "stop"
        elif kind == RUN:
            return _fork(listener, conn, payload, fds, code, status)
        return "go on"
    except (OSError, EOFError, ValueError):
        return "go on"
    finally:
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass
        conn.close()


def _fork(
    listener: socket.socket,
    conn: socket.socket,
    payload: bytes,
    fds: list[int],
    code: LoadedCode,
    status: dict[str, Any],
) -> str:
    from deja_blame import __version__

    fields = payload.split(b"\0")
    if len(fds) != 3 or len(fields) < 8:
        _reply(conn, REFUSED, b"a request without its streams")
        return "go on"
    if os.fsdecode(fields[0]) != __version__ or os.fsdecode(fields[1]) != place.package_dir():
        _reply(conn, REFUSED, b"another installation of deja")
        return "go on"
    if not code.unchanged():  # an upgrade, a checkout: the next command runs alone
        _reply(conn, REFUSED, b"deja's code changed since the server started")
        return "stop"
    watch.drain()  # the fork's copy knows of every transcript written before now
    pid = os.fork()
    if pid == 0:
        _run_in_fork(listener, conn, fields, fds)  # never returns
    status["served"] += 1
    return "go on"


def _run_in_fork(
    listener: socket.socket,
    conn: socket.socket,
    fields: list[bytes],
    fds: list[int],
) -> None:
    code = 1
    answered: list[int] = []
    try:
        listener.close()
        for name in ("SIGCHLD", "SIGTERM", "SIGHUP", "SIGQUIT"):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        text = [os.fsdecode(f) for f in fields]
        cwd, mask, encodings, n = text[2], int(text[3]), text[4:7], int(text[7])
        args, env = text[8 : 8 + n], text[8 + n :]
        os.environ.clear()
        for item in env:
            key, sep, value = item.partition("=")
            if sep and key:
                os.environ[key] = value
        time.tzset()  # the caller's TZ: local dates as it would print them
        os.umask(mask)
        sys.stdin = _stream(0, encodings[0], read=True)
        sys.stdout = _stream(1, encodings[1])
        sys.stderr = _stream(2, encodings[2], line=True)
        sys.argv = ["deja", *args]
        conn.sendall(STARTED + struct.pack(">i", os.getpid()))
        conn.settimeout(STARTED_WITHIN + 3)
        if _read(conn, 1) != GO:
            os._exit(0)  # the caller gave up waiting and runs the command itself
        conn.settimeout(None)
        _watch(conn, answered)
        later.on_answer = functools.partial(_hand_back, conn, answered)
        code = _command(cwd, args)
    except BaseException as exc:  # noqa: BLE001 - the fork must answer and exit, whatever happened
        code = 130 if isinstance(exc, KeyboardInterrupt) else 1
        if not isinstance(exc, (KeyboardInterrupt, EOFError, OSError)):
            try:
                from deja_blame.output import terminal  # inert, as cli.main prints errors

                sys.stderr.write(
                    f"deja: unexpected error: {type(exc).__name__}: {terminal(str(exc))}\n"
                )
            except Exception:  # noqa: BLE001, S110 - no stderr left to say it on
                pass
    finally:
        _flush()
        try:
            atexit._run_exitfuncs()  # what the console script runs at exit (facts/early.py)
            if not answered:
                _send_exit(conn, answered, code)
        finally:
            os._exit(code & 0xFF)


def _watch(conn: socket.socket, answered: list[int]) -> None:
    """End the command when its caller goes away before the answer (killed, even with
    SIGKILL, which it cannot pass on): nobody reads it, and it holds their pipes."""
    import threading

    def watch() -> None:
        try:
            gone = conn.recv(1) == b""
        except OSError:
            gone = True
        if gone and not answered:
            os.kill(os.getpid(), signal.SIGINT)  # as Ctrl-C: finally blocks run
            time.sleep(3)
            os._exit(130)

    threading.Thread(target=watch, name="deja-caller-watch", daemon=True).start()


def _hand_back(conn: socket.socket, answered: list[int], code: int) -> None:
    """The command answered: the client gets its exit code and its streams back now,
    before the work the command left for after (``later.py``)."""
    _flush()
    _send_exit(conn, answered, code)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)  # the client's pipe ends here: its reader sees the end
    os.close(null)


def _flush() -> None:
    """What the command printed, out to the caller's streams (a closed pipe: dropped)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001, S110 - a closed pipe: nothing more to say
            pass


def _send_exit(conn: socket.socket, answered: list[int], code: int) -> None:
    """The caller's exit code, once. Marked before it is sent: the caller then exits, and
    its going must not read to the watcher (``_watch``) as a caller killed mid-command."""
    answered.append(code)
    conn.sendall(EXITED + struct.pack(">i", code))


def _command(cwd: str, args: list[str]) -> int:
    try:
        os.chdir(cwd)
    except OSError as exc:
        sys.stderr.write(f"deja: error: cannot enter the current folder ({exc.strerror})\n")
        return 1
    from deja_blame.entry import run_here

    try:
        run_here(args)
    except SystemExit as exc:
        if exc.code is None:
            return 0
        if isinstance(exc.code, int):
            return exc.code
        sys.stderr.write(f"{exc.code}\n")
        return 1
    return 0


def _stream(fd: int, spec: str, read: bool = False, line: bool = False) -> io.TextIOWrapper:
    encoding, _, errors = spec.rpartition(":")
    raw = io.FileIO(fd, "r" if read else "w", closefd=False)
    buffered = io.BufferedReader(raw) if read else io.BufferedWriter(raw)
    return io.TextIOWrapper(
        buffered, encoding=encoding or "utf-8", errors=errors or "strict", line_buffering=line
    )


def _receive(conn: socket.socket) -> tuple[bytes, bytes, list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
    try:
        if len(data) < 10:
            data += _read(conn, 10 - len(data))
        if data[:5] != MAGIC:
            raise ValueError("not a deja client")
        size = struct.unpack(">I", data[6:10])[0]
        if len(data) < 10 + size:
            data += _read(conn, 10 + size - len(data))
    except BaseException:
        for fd in fds:  # a request cut short: its descriptors are closed, not leaked
            os.close(fd)
        raise
    return data[5:6], data[10 : 10 + size], list(fds)


def _reply(conn: socket.socket, kind: bytes, text: bytes) -> None:
    conn.sendall(kind + struct.pack(">I", len(text)) + text)


def main(argv: list[str] | None = None) -> None:
    """``python -m deja_blame.resident.server --socket PATH [--idle SECONDS]``."""
    args = sys.argv[1:] if argv is None else argv
    path, idle = None, DEFAULT_IDLE
    while args:
        flag = args.pop(0)
        if flag == "--socket" and args:
            path = args.pop(0)
        elif flag == "--idle" and args:
            idle = float(args.pop(0))
    if path is None:
        sys.exit("usage: python -m deja_blame.resident.server --socket PATH [--idle SECONDS]")
    serve(path, idle)


if __name__ == "__main__":
    main()
