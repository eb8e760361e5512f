"""The hooks' one-line warnings: on stderr and in ``.git/deja/hook.log`` (bounded)."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from deja_blame import statefile
from deja_blame.notes.store import deja_dir

if TYPE_CHECKING:
    import pygit2

LOG_MAX_BYTES = 256 * 1024


class HookLog:
    """One-line warnings: stderr and ``.git/deja/hook.log``."""

    def __init__(self, hook: str, repo: pygit2.Repository | None) -> None:
        self.hook = hook
        self.path = deja_dir(repo) / "hook.log" if repo is not None else None
        self.warnings: list[str] = []
        # while a commit's note is being written, what any warning means for it
        self.late_suffix = ""

    def warn(self, message: str, details: str | None = None) -> None:
        line = f"deja: {self.hook} hook: {message}{self.late_suffix}"
        self.warnings.append(line)
        try:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        except OSError:
            pass
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            size = statefile.size_of(self.path)  # never through a link or a special file
            if size is not None and size > LOG_MAX_BYTES:
                data = statefile.read_bytes(self.path, 4 * LOG_MAX_BYTES) or b""
                keep = data[-LOG_MAX_BYTES // 2 :]
                statefile.write_bytes(self.path, keep[keep.find(b"\n") + 1 :])
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            text = f"{stamp} {line}\n"
            if details:
                text += details if details.endswith("\n") else details + "\n"
            statefile.append_bytes(self.path, text.encode("utf-8", "replace"))
        except OSError:
            pass
