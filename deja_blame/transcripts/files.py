"""Finding an agent's files below a root: the one walk every finder and reader uses.

A root may itself be a link: it is the user's own setting, like ``--root`` (a
``~/.claude`` moved to another disk and linked back). Nothing below a root is
followed: a linked folder or file, a FIFO, a socket or a device is passed over
without being opened (a link would copy whatever it points at into the index, a
FIFO's read never returns) and counted in ``Skipped``, which ``deja index``
reports in one line per root.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deja_blame.transcripts.transcript_file import TranscriptFile

LINK = "link"
SPECIAL = "special"  # a FIFO, a socket, a device

Wanted = Callable[[str], bool]


def _everything(_name: str) -> bool:
    return True


@dataclass
class Skipped:
    """What walks below the roots passed over: for each root, each entry's kind."""

    by_root: dict[str, dict[str, str]] = field(default_factory=dict)

    def add(self, root: Path, path: str, kind: str) -> None:
        self.by_root.setdefault(str(root), {})[path] = kind

    def merge(self, other: Skipped) -> None:
        for root, entries in other.by_root.items():
            self.by_root.setdefault(root, {}).update(entries)

    def __bool__(self) -> bool:
        return bool(self.by_root)

    def lines(self) -> list[str]:
        """One line per root: how many entries were passed over there, and why."""
        out = []
        for root, entries in self.by_root.items():
            links = sum(1 for kind in entries.values() if kind == LINK)
            special = len(entries) - links
            what = []
            why = []
            if links:
                what.append(f"{links:,} linked {'entry' if links == 1 else 'entries'}")
                why.append("links are not followed: give a linked store as deja index --root DIR")
            if special:
                what.append(f"{special:,} special file{'' if special == 1 else 's'}")
                why.append("FIFOs, sockets and devices are not read")
            out.append(f"skipped {' and '.join(what)} under {root} ({'; '.join(why)})")
        return out

    def to_json(self) -> list[dict[str, Any]]:
        return [
            {
                "root": root,
                "links": sum(1 for kind in entries.values() if kind == LINK),
                "special": sum(1 for kind in entries.values() if kind != LINK),
                "paths": sorted(entries),
            }
            for root, entries in self.by_root.items()
        ]


def lkind(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` itself is (its last name not followed): ``"dir"``, ``"file"``
    (regular), ``LINK``, ``SPECIAL``; None when it is not there."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return LINK if stat.S_ISLNK(mode) else SPECIAL


class Below:
    """The walk below one root: folders listed without following anything in them.

    ``problems`` (None: not reported) gets a line for a folder that cannot be read;
    ``skipped`` (None: not counted) each link and special file passed over that the
    finder would have looked at (a name it wants)."""

    def __init__(
        self, root: Path, problems: list[str] | None = None, skipped: Skipped | None = None
    ) -> None:
        self.root = root
        self.problems = problems
        self.skipped = skipped

    def skip(self, path: str | os.PathLike[str], kind: str) -> None:
        if self.skipped is not None:
            self.skipped.add(self.root, os.fspath(path), kind)

    def folder(self, path: Path) -> bool:
        """``path`` is a folder to walk: the root itself (which may be a link), or a
        real folder below it (a link or a special file there is skipped)."""
        if path == self.root:
            return path.is_dir()
        kind = lkind(path)
        if kind in (LINK, SPECIAL):
            self.skip(path, kind)
        return kind == "dir"

    def base(self, name: str) -> Path | None:
        """Where an agent's store keeps its sessions: ``root/name`` when it is a real
        folder, the root itself when there is no such folder (a root that names the
        store's folder directly), None when ``root/name`` is a link (skipped: its
        sessions are not looked for in the root instead)."""
        sub = self.root / name
        kind = lkind(sub)
        if kind == "dir":
            return sub
        if kind in (LINK, SPECIAL):
            self.skip(sub, kind)
            return None
        return self.root

    def regular(self, path: Path) -> bool:
        """``path`` below the root is a regular file (a link or special file is skipped)."""
        kind = lkind(path)
        if kind in (LINK, SPECIAL):
            self.skip(path, kind)
        return kind == "file"

    def listing(
        self, folder: Path | str, dirs: Wanted | None = None, files: Wanted | None = None
    ) -> tuple[list[Path], list[Path]]:
        """(the real folders ``dirs`` wants, the regular files ``files`` wants) in
        ``folder``, sorted by name. A link or special file whose name one of them
        wants is skipped and counted. A folder that is not there is empty; one
        that cannot be read is a problem; ``folder`` itself a link: skipped."""
        if not self.folder(Path(folder)):
            return [], []
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except (FileNotFoundError, NotADirectoryError):
            return [], []
        except OSError as exc:
            if self.problems is not None:
                self.problems.append(f"cannot read {folder}: {exc.strerror or exc}")
            return [], []
        found_dirs: list[Path] = []
        found_files: list[Path] = []
        for e in entries:
            name = e.name
            wanted = (dirs is not None and dirs(name)) or (files is not None and files(name))
            if not wanted:
                continue
            try:
                if e.is_symlink():
                    self.skip(e.path, LINK)
                elif e.is_dir(follow_symlinks=False):
                    if dirs is not None and dirs(name):
                        found_dirs.append(Path(e.path))
                elif e.is_file(follow_symlinks=False):
                    if files is not None and files(name):
                        found_files.append(Path(e.path))
                elif files is not None and files(name):
                    self.skip(e.path, SPECIAL)
            except OSError:
                continue  # gone meanwhile
        return found_dirs, found_files

    def files(self, folder: Path | str, wanted: Wanted = _everything) -> list[Path]:
        """The regular files ``wanted`` names in ``folder`` (not below it)."""
        return self.listing(folder, files=wanted)[1]

    def folders(self, folder: Path | str, wanted: Wanted = _everything) -> list[Path]:
        """The real folders ``wanted`` names in ``folder``."""
        return self.listing(folder, dirs=wanted)[0]

    def walk(self, base: Path, wanted: Callable[[str, str], bool]) -> Iterator[Path]:
        """The regular files at any depth below ``base`` (folders first-to-last by
        name, each folder's files before its sub-folders) for which
        ``wanted(folder, name)`` holds."""
        stack = [base]
        while stack:
            folder = stack.pop()
            where = str(folder)

            def here(name: str, where: str = where) -> bool:
                return wanted(where, name)

            subdirs, found = self.listing(folder, dirs=_everything, files=here)
            yield from found
            stack.extend(reversed(subdirs))


def walk_files(
    root: Path,
    wanted: Callable[[str, str], bool],
    problems: list[str] | None = None,
    skipped: Skipped | None = None,
) -> Iterator[Path]:
    """Regular files under ``root`` for which ``wanted(directory, name)`` holds
    (``Below.walk``: nothing below ``root`` followed)."""
    return Below(root, problems, skipped).walk(root, wanted)


def one_name(name: str) -> bool:
    """``name`` (read from a transcript) names one entry of a folder: no separator,
    not ``.`` or ``..`` (joined to a folder, it cannot lead out of it)."""
    return bool(name) and "/" not in name and "\\" not in name and name not in (".", "..")


def is_regular(path: Path) -> bool:
    """``path`` itself is a regular file (a link to one is not: never followed)."""
    return lkind(path) == "file"


def real_below(root: Path, path: Path) -> bool:
    """Every name from below ``root`` down to ``path`` is a real folder and ``path``
    a regular file: no link on the way (``root`` itself may be one). For a path
    found without the walk (a fast stat of a known layout)."""
    try:
        names = path.relative_to(root).parts
    except ValueError:
        return False
    # joined as text: a Path a name (pathlib's parsing) was most of a changed
    # session's check, once for every new transcript before a first answer
    here = os.fspath(root)
    last = len(names) - 1
    for i, name in enumerate(names):
        here = os.path.join(here, name)
        if lkind(here) != ("file" if i == last else "dir"):
            return False
    return bool(names)


def files_as_sessions(
    paths: Iterator[Path], root: Path, agent: str, session_id: Callable[[Path], str]
) -> Iterator[TranscriptFile]:
    for path in paths:
        yield TranscriptFile(session_id=session_id(path), path=path, root=root, agent=agent)


def sessions_below(
    root: Path,
    folder: str,
    agent: str,
    wanted: Callable[[str, str], bool],
    session_id: Callable[[Path], str],
    problems: list[str] | None = None,
    skipped: Skipped | None = None,
) -> Iterator[TranscriptFile]:
    """Each file below ``root/folder`` that ``wanted(directory, name)`` keeps, one
    session each (nothing followed: ``Below``); none when the folder is not there."""
    below = Below(root, problems, skipped)
    base = below.base(folder)
    if base is None:
        return iter(())
    return files_as_sessions(below.walk(base, wanted), root, agent, session_id)
