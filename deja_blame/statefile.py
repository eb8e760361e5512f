"""deja's own state files (``.git/deja``: jobs, logs, the install record, locks; the
hook scripts' temporary files): never followed through a link, never a special file.

Anyone who can write into ``.git`` or a hooks directory can plant a symlink where
deja is about to write (``.post-commit.deja-tmp -> ~/.bashrc``) or a FIFO where it
reads (``.git/deja/jobs/x``: a read that never returns), or a link to
``/dev/zero`` (a read that never ends). So: ``O_NOFOLLOW`` on every open, regular
files only (checked on the open descriptor), ``O_NONBLOCK`` so that opening a
FIFO does not wait, and reads bounded in size. What deja creates is the user's
alone (0600: logs and records name files and sessions), but for hooks (0755).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def state_dir() -> Path:
    """deja's own state folder: ``$XDG_STATE_HOME/deja`` (``~/.local/state/deja``)."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "deja"


def _open(path: Path, flags: int, mode: int = 0o600) -> int | None:
    """A descriptor of ``path`` as a regular file, or None (a link, a FIFO, a device,
    a directory, absent)."""
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | _CLOEXEC, mode)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            return None
        os.set_blocking(fd, True)
        if flags & os.O_CREAT and stat.S_IMODE(st.st_mode) & ~mode & 0o077:
            _tighten(fd, st, mode)
    except OSError:
        os.close(fd)
        return None
    return fd


def open_regular(path: Path) -> int | None:
    """A descriptor of ``path`` open for reading, a regular file reached through no
    link, or None; the caller closes it."""
    return _open(path, os.O_RDONLY)


def _tighten(fd: int, st: os.stat_result, mode: int) -> None:
    """A log or record an older deja created by the umask (0644) is made the user's
    alone the next time deja writes it (the user's own file only)."""
    if hasattr(os, "fchmod") and st.st_uid == getattr(os, "geteuid", lambda: st.st_uid)():
        try:
            os.fchmod(fd, stat.S_IMODE(st.st_mode) & mode)
        except OSError:
            pass


def read_bytes(path: Path, limit: int) -> bytes | None:
    """At most ``limit`` bytes of the regular file ``path``, or None."""
    fd = _open(path, os.O_RDONLY)
    if fd is None:
        return None
    try:
        chunks: list[bytes] = []
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_text(path: Path, limit: int) -> str | None:
    data = read_bytes(path, limit)
    return data.decode("utf-8", "replace") if data is not None else None


def write_bytes(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Replace ``path`` with ``data``: written to a new file beside it (created, never
    opened through whatever is there), then renamed over it. OSError on failure."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.deja-tmp")
    remove_entry(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, mode)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)  # a link at ``path`` is replaced, not followed


def append_bytes(path: Path, data: bytes) -> bool:
    """Append to the regular file ``path`` (created if absent); False if it is not one."""
    fd = _open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    if fd is None:
        return False
    try:
        os.write(fd, data)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def open_lock(path: Path) -> int | None:
    """A descriptor for a lock file (created if absent), or None where it is not a regular file."""
    return _open(path, os.O_RDWR | os.O_CREAT)


def remove_entry(path: Path) -> None:
    """Remove ``path`` itself if it is a file or a link (the link, not its target)."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
    except OSError:
        pass


def size_of(path: Path) -> int | None:
    """The size of ``path`` when it is a regular file (not followed), else None."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def ensure_dir(path: Path) -> bool:
    """``path`` as a directory of its own, created if absent: False when something else
    is there (a link to a directory elsewhere is not used)."""
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False
