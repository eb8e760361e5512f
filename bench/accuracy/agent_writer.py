"""What the simulations' writers of other agents' transcripts share: the clock,
what each file holds as the session saw it, replacements applied to it, and a
person's edit (which neither Claude Code nor Codex records)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from antigravity_writer import EditResult


class AgentWriter:
    def __init__(self, start: float, workspace: str | None) -> None:
        self.workspace = (workspace or "/").rstrip("/") or "/"
        self.now = datetime.fromtimestamp(start, tz=timezone.utc)
        self.tick = timedelta(seconds=1)
        self.files: dict[str, str] = {}  # what the session knows each file holds

    def set_time(self, at: float | datetime) -> datetime:
        self.now = at if isinstance(at, datetime) else datetime.fromtimestamp(at, tz=timezone.utc)
        return self.now

    def advance(self, seconds: float) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now

    def stamp(self) -> datetime:
        """The time of the next record (the clock moves on a tick)."""
        at = self.now
        self.now = at + self.tick
        return at

    def _current(self, path: str, current: str | None) -> str:
        if current is not None:
            return current
        if path in self.files:
            return self.files[path]
        try:
            return Path(path).read_text(encoding="utf-8")
        except OSError:
            return ""

    @staticmethod
    def applied(path: str, before: str, chunks: Sequence[tuple[str, str]]) -> str:
        after = before
        for old_text, new_text in chunks:
            if old_text not in after:
                raise ValueError(f"{path}: the text to replace is not there")
            after = after.replace(old_text, new_text, 1)
        return after

    def user_edit(
        self, path: str, old_text: str, new_text: str, *, current: str | None = None, **_: Any
    ) -> EditResult:
        before = self._current(path, current)
        after = before.replace(old_text, new_text, 1)
        self.files[path] = after
        return EditResult(path=path, before=before, after=after, at=self.now)

    def register_workspace(self, workspace: str, kind: str = "cli", title: str = "") -> None:
        return None  # the agent records its working directory itself
