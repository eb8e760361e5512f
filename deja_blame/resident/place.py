"""Where the resident server listens: a Unix socket in a folder only its user can enter.

One socket per user and deja installation (the package's folder and Python's
version name it), in ``$XDG_RUNTIME_DIR`` (else ``$TMPDIR``, else ``/tmp``) under
``deja-UID``, the folder mode 0700, as tmux keeps its sockets. A folder that is a
link, is another user's, or is open to others is not used: whoever could put a
socket there could answer deja's commands.

The standard library only: the console script reads this before anything else.
"""

from __future__ import annotations

import os
import stat
import sys
import zlib

__all__ = ["socket_path", "private_dir", "problem", "SERVER_ENV", "off", "peer_is_us"]

SERVER_ENV = "DEJA_SERVER"  # "0", "off", "no" or "false": never hand a command to a server
_MAX_PATH = 100  # a Unix socket's path is at most 104 bytes on macOS, 108 on Linux


def off(env: dict[str, str] | os._Environ[str] | None = None) -> bool:
    """Whether the user turned the server off for this command."""
    value = (os.environ if env is None else env).get(SERVER_ENV, "")
    return value.strip().lower() in ("0", "off", "no", "false")


def package_dir() -> str:
    """The folder of the deja package this process runs (an install's own server)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def folder() -> str:
    """The private folder the socket goes in."""
    base = os.environ.get("XDG_RUNTIME_DIR") or os.environ.get("TMPDIR") or "/tmp"
    return os.path.join(base, f"deja-{os.getuid()}")


def problem() -> str:
    """Why ``socket_path(create=True)`` finds no place, in words (for the error)."""
    if os.name != "posix":
        return "the server needs Unix sockets: not on this system"
    where = folder()
    try:
        st = os.lstat(where)
    except FileNotFoundError:
        return f"{where} cannot be made (is {os.path.dirname(where)} there and yours?)"
    except OSError as exc:
        return f"{where}: {exc.strerror}"
    if stat.S_ISLNK(st.st_mode):
        return f"{where} is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return f"{where} is not a folder"
    if st.st_uid != os.getuid():
        return f"{where} is another user's"
    if st.st_mode & 0o077:
        return f"{where} is open to others (mode {st.st_mode & 0o777:o}, not 700)"
    return f"the socket's path under {where} is too long for a Unix socket"


def socket_path(create: bool = False) -> str | None:
    """The server's socket for this user and installation; None where there is no
    private folder for it (``create``: make the folder if it is missing)."""
    if os.name != "posix":
        return None
    where = folder()
    if not private_dir(where, create):
        return None
    key = f"{package_dir()}\0{sys.version_info[0]}.{sys.version_info[1]}".encode(
        "utf-8", "surrogateescape"
    )
    path = os.path.join(where, f"s-{zlib.crc32(key):08x}")
    return path if len(path.encode("utf-8", "surrogateescape")) <= _MAX_PATH else None


def private_dir(folder: str, create: bool = False) -> bool:
    """Whether ``folder`` is a real folder of this user's that nobody else can open."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        if not create:
            return False
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass  # another deja made it at the same moment: judged below like any folder
        except OSError:
            return False
        try:
            st = os.lstat(folder)
        except OSError:
            return False
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def peer_is_us(sock: object) -> bool:
    """Whether the process at the other end of a connected Unix socket is this user's,
    and (on Linux) in this process's sandbox: the same mount, user, pid and network
    namespaces, the same root, and no more confined (seccomp, no_new_privs). A
    sandboxed program of the same user must not get a command run outside its
    sandbox, nor a client hand its environment and streams to a stranger."""
    import _socket  # (not ``socket``: the client calls this before deja loads)

    assert isinstance(sock, _socket.socket)
    try:
        if hasattr(_socket, "SO_PEERCRED"):
            creds = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)  # 3 C ints
            pid, uid = (_c_int(creds[k : k + 4]) for k in (0, 4))  # pid, uid, gid
            return uid == os.getuid() and _same_confinement(pid)
        if sys.platform == "darwin":
            creds = sock.getsockopt(0, 0x001, 76)  # SOL_LOCAL, LOCAL_PEERCRED: struct xucred
            return int.from_bytes(creds[4:8], "little", signed=True) == os.getuid()
    except OSError:
        return False
    return False  # no way to ask who it is: never trusted


def _c_int(data: bytes) -> int:
    return int.from_bytes(data, sys.byteorder, signed=True)


def _same_confinement(pid: int) -> bool:
    """Linux: ``pid`` sees the system as this process does (``/proc``; unreadable: no)."""
    try:
        for ns in ("mnt", "user", "pid", "net"):
            if os.readlink(f"/proc/{pid}/ns/{ns}") != os.readlink(f"/proc/self/ns/{ns}"):
                return False
        theirs, ours = os.stat(f"/proc/{pid}/root"), os.stat("/proc/self/root")
        if (theirs.st_dev, theirs.st_ino) != (ours.st_dev, ours.st_ino):
            return False
        return _confinement(f"/proc/{pid}/status") == _confinement("/proc/self/status")
    except OSError:
        return False


def _confinement(status: str) -> tuple[str, ...]:
    with open(status, encoding="ascii", errors="replace") as f:
        return tuple(line.strip() for line in f if line.startswith(("Seccomp:", "NoNewPrivs:")))
