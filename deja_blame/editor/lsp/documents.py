"""An open file: the blame of its saved version, mapped onto the unsaved buffer.

The blame comes from the same API as ``deja blame FILE`` (the working tree's
file, uncommitted writes matched to sessions as blame matches them). Lines the
buffer has and the saved file does not were typed and not saved: they belong
to nobody until the file is saved and blamed again.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from deja_blame.attribution.api import compute
from deja_blame.attribution.model import FileBlame, LineAttribution
from deja_blame.errors import DejaError
from deja_blame.linediff import aligned

_DRIVE = re.compile(r"^/[A-Za-z]:")  # file:///C:/src/x.py on Windows


def uri_to_path(uri: str) -> Path | None:
    """The local path of a ``file:`` URI (None for any other scheme: untitled, git:, ...)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if _DRIVE.match(path):
        path = path[1:]
    return Path(path)


def split_lines(text: str) -> list[str]:
    """The buffer's lines as blame sees a file's (no line ends, no empty last line)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln.removesuffix("\r") for ln in lines]


@dataclass
class Document:
    uri: str
    path: Path | None
    text: str | None = None  # the buffer as the client last sent it
    blame: FileBlame | None = None  # of the file as saved; None outside a repository
    problem: str | None = None  # why there is no blame (logged, never shown as an error)
    lines: list[LineAttribution | None] = field(default_factory=list)  # per buffer line

    def load(self, conn: sqlite3.Connection | None) -> None:
        """Blame the saved file (the attribution API, as ``deja blame`` does)."""
        self.blame, self.problem = None, None
        if self.path is None:
            self.problem = "not a file on disk"
        elif not self.path.is_file():
            self.problem = "no such file"
        else:
            try:
                self.blame = compute(conn, self.path, None, None, refresh=False)
            except DejaError as exc:
                self.problem = str(exc)  # outside a repository, binary, ...: no annotations
        self.remap()

    def remap(self) -> None:
        """Line up the blame with the buffer: unchanged lines keep their attribution."""
        saved = self.blame.lines if self.blame is not None else []
        if self.text is None:
            self.lines = list(saved)
            return
        buffer = split_lines(self.text)
        old = [ln.text.removesuffix("\r") for ln in saved]
        if old == buffer:
            self.lines = list(saved)
            return
        self.lines = [saved[i] if i is not None else None for i in aligned(old, buffer)]

    def changed_on_disk(self) -> bool:
        """Whether the buffer no longer lines up with the blame because the file on disk
        changed since it was blamed, and the buffer is that new file (an editor
        reloading it after a commit, a checkout, a formatter): then it is blamed again.
        Typing alone never reads the disk more than once per change."""
        if self.blame is None or self.path is None or self.text is None or None not in self.lines:
            return False
        try:
            disk = split_lines(self.path.read_bytes().decode("utf-8", "surrogateescape"))
        except OSError:
            return False
        blamed = [ln.text.removesuffix("\r") for ln in self.blame.lines]
        return disk != blamed and disk == split_lines(self.text)

    def line(self, n: int) -> LineAttribution | None:
        """The attribution of buffer line ``n`` (0-based), None if typed and not saved."""
        return self.lines[n] if 0 <= n < len(self.lines) else None
