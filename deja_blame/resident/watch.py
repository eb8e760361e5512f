"""The resident server's watch of the Antigravity transcript roots (Linux inotify).

A refresh must see every transcript appended to or added since the index read it.
Asking the files means a stat of each: at 10,000 sessions 120 ms of CPU before every
answer, whatever changed. The resident server outlives its answers, so it asks the
kernel instead: each root's ``brain/`` and each session's deepest folder of the
layout (``logs/``, where the transcripts are; its session folder or
``.system_generated/`` until that exists) are watched, and what the kernel reports
is kept as the sessions written since (``dirty``: session -> the event's number).
The server reads the events before each fork (``drain``), so a fork's copy knows of
every write made before its command came, and stats those sessions only
(``index/watched.py``).

Whatever the watch cannot vouch for makes the fork look at everything, as without a
server (``broken``): the kernel's queue overflowed, a watch could not be added, more
sessions than a quarter of the user's watches (an editor needs the rest), ``brain/``
went away; and a root whose ``brain/`` is not the folder watched (moved, replaced)
or another root than the server's is looked at in full by the fork. No thread: the
events wait in the kernel between commands, and an idle server reads them on its tick.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import secrets
import struct
import sys
from pathlib import Path

from deja_blame.index import look, watched

# <sys/inotify.h>
IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_ISDIR = 0x40000000
# (IN_DONT_FOLLOW: a linked folder below a root is never followed, as the readers do)
_MASK = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
    | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW
)  # fmt: skip
_GONE = IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (then the name, NUL padded)
# where a session's transcripts are, below its folder (``antigravity/discover``)
LAYOUT = (".system_generated", "logs")
_ENOENT, _ENOTDIR = 2, 20


class TranscriptWatch:
    """What changed below ``roots`` (their real paths) since the watch began."""

    def __init__(self, roots: list[Path]) -> None:
        self.roots = tuple(os.path.realpath(r) for r in roots)
        self.token = secrets.token_hex(8)  # this watch, as an index's record names it
        self.seq = 0  # events read so far
        self.dirty: dict[str, int] = {}  # session -> the number of its last event
        self.broken = False  # the watch cannot vouch: every fork looks at everything
        self.brains: list[tuple[int, int]] = []  # each root's brain/: (device, inode)
        self._fd = -1
        self._dirs: dict[int, tuple[int, str | None, int]] = {}  # wd -> (root, session, depth)
        self._libc = _libc()
        if self._libc is None:
            self.broken = True
            return
        listed = []
        for root in self.roots:
            brain = os.path.join(root, "brain")
            try:
                st = os.stat(brain)
                listed.append(os.listdir(brain))
            except OSError:
                self.broken = True
                return
            self.brains.append((st.st_dev, st.st_ino))
        if sum(map(len, listed)) + len(self.roots) > _watch_budget():
            self.broken = True
            return
        fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            self.broken = True
            return
        self._fd = fd
        for i, root in enumerate(self.roots):
            # brain/ first: a session made while the others are added is an event
            if self._add(os.path.join(root, "brain"), i, None, 0) != 0:
                self.broken = True
                return
            for name in listed[i]:
                self._session(i, name)

    def _add(self, path: str, root: int, session: str | None, depth: int) -> int:
        """0 once ``path`` is watched; else the error (ENOENT, ENOTDIR: nothing there)."""
        if self.broken:
            return -1
        assert self._libc is not None
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), _MASK)
        if wd < 0:
            err = ctypes.get_errno()
            if err not in (_ENOENT, _ENOTDIR):
                self.broken = True  # the user's limit, no permission: cannot vouch
            return err or -1
        self._dirs[wd] = (root, session, depth)
        return 0

    def _session(self, root: int, name: str) -> None:
        """Watch the session's deepest folder of the layout there is (depth 1: its own,
        3: ``logs/``). A shallower one is watched until the next is made, and looked at
        again once watched: one made in between is then found, not missed."""
        folders = [os.path.join(self.roots[root], "brain", name)]
        folders += [os.path.join(folders[0], *LAYOUT[:k]) for k in (1, 2)]
        depth = 3
        while depth >= 1 and self._add(folders[depth - 1], root, name, depth) != 0:
            if self.broken:
                return
            depth -= 1
        while 1 <= depth < 3 and os.path.isdir(folders[depth]):
            depth += 1
            if self._add(folders[depth - 1], root, name, depth) != 0:
                return

    def drain(self) -> None:
        """Read every event the kernel holds."""
        if self.broken or self._fd < 0:
            return
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return
            except OSError:
                self.broken = True
                return
            if not data:
                return
            self._events(data)
            if self.broken:
                return

    def _events(self, data: bytes) -> None:
        at = 0
        while at + _EVENT.size <= len(data):
            wd, mask, _, size = _EVENT.unpack_from(data, at)
            name = os.fsdecode(data[at + _EVENT.size : at + _EVENT.size + size].rstrip(b"\0"))
            at += _EVENT.size + size
            self.seq += 1
            if mask & IN_Q_OVERFLOW:
                self.broken = True  # events lost
                return
            where = self._dirs.get(wd)
            if where is None:
                continue  # a watch ended already
            root, session, depth = where
            if session is None:  # brain/ itself
                if mask & _GONE:
                    self.broken = True  # gone or moved: cannot vouch
                    return
                if mask & (IN_CREATE | IN_MOVED_TO):
                    self._session(root, name)  # a new session (or one moved here)
                self.dirty[name] = self.seq
                continue
            if mask & _GONE:
                del self._dirs[wd]
                self._session(root, session)  # whatever of it is left, watched again
            elif mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO) and depth < 3:
                self._session(root, session)  # the layout's next folder, made now
            self.dirty[session] = self.seq

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class FolderWatch:
    """Whether anything changed in ``folders`` (not below them) since it was last
    ``settle``d: the resident server's check that deja's code on disk is still the
    code it loaded, without a stat of each of its 250 files (1.3 ms) before every
    command. Any event is a change (the caller then stats, and settles where the
    files are the same); no inotify, a folder it could not watch, a full queue,
    a broken descriptor: never quiet."""

    _MASK = (
        IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
        | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
    )  # fmt: skip

    def __init__(self, folders: list[str]) -> None:
        self._fd = -1
        self.changed = True
        libc = _libc()
        if libc is None:
            return
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            return
        for folder in sorted(set(folders)):
            if libc.inotify_add_watch(fd, os.fsencode(folder), self._MASK) < 0:
                os.close(fd)
                return
        self._fd = fd

    def quiet(self) -> bool:
        """No event since ``settle`` (the kernel's queue is read now)."""
        if self._fd < 0:
            return False
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError:
                self.close()
                return False
            if not data:
                break
            self.changed = True  # whatever it was (an overflow too)
        return not self.changed

    def settle(self) -> None:
        """The caller looked and the files are as they were: quiet until the next event."""
        if self._fd >= 0:
            self.changed = False

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        self.changed = True


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1  # noqa: B018 - present on glibc and musl
    except (OSError, AttributeError):
        return None
    return libc


def _watch_budget() -> int:
    """How many folders the watch may take: a quarter of the user's inotify watches
    (editors and other tools watch with the same allowance)."""
    try:
        with open("/proc/sys/fs/inotify/max_user_watches") as f:
            return int(f.read().strip()) // 4
    except (OSError, ValueError):
        return 2048


# The server's watch, made before it forks: a fork reads its copy (``index/watched.py``).
current: TranscriptWatch | None = None


def start(roots: list[Path]) -> None:
    """Watch ``roots`` for the forks to come (the server, before its socket opens)."""
    global current
    stop()
    current = TranscriptWatch(roots) if roots else None
    watched.current = current
    # a kept answer's look in the forks: the watch's word where it vouches
    look.by_watch = watched.look_text if current is not None else None


def stop() -> None:
    global current
    if current is not None:
        current.close()
    current = watched.current = None
    look.by_watch = None


def drain() -> None:
    """The server, before a fork and on its idle tick: the events read."""
    if current is not None:
        current.drain()
