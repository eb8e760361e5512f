"""What the matcher's rules read beyond a file's ``FileFacts``, handed to them by stage 1.

Stage 1 (``source.FactSource.for_rules``) makes it before the rules run, from the
file's lines, its writes and the paths that stand for it: the edits behind the
writes (plain data, ``edits.py``), the file's versions (``versions.py``: its log
read, each version read within the budget in the order the commit-window rule
reads them), when the repository's history began, and which sessions ran in a
checkout of it on this machine (on git's clock: ``checkouts.py``). What the rules still ask
while they decide (whether a session matched by path suffix belongs here, the
writes of texts a formatter split, the names of the sessions that won) depends on
what they matched so far; they ask it of ``asks`` (``StillAsked``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from deja_blame.attribution.facts.edits import SessionEdits
    from deja_blame.attribution.facts.model import WriteSet, WrittenTexts
    from deja_blame.attribution.facts.versions import FileHistory


class StillAsked(Protocol):
    """The questions the rules ask while they decide (``source.FactSource``)."""

    def belongs(self, sid: int) -> bool | None: ...

    def wrote_outside_from_here(self, sid: int, path_ids: list[int]) -> bool: ...

    def written_texts(self, paths: dict[int, bool]) -> WrittenTexts | None: ...

    def load_writes(self, paths: dict[int, bool], fps: Iterable[int]) -> WriteSet: ...

    def session_names(self, sids: set[int]) -> dict[int, tuple[str, str]]: ...


@dataclass
class RuleFacts:
    """One pass of the rules' facts (a file's lines against the writes of ``paths``)."""

    edits: SessionEdits  # the edits behind the writes, read at the rules' first ask
    history: FileHistory  # the file's log, read; its versions within the budget
    repository_start: float | None  # the repository's oldest root commit's time, if read
    asks: StillAsked  # the questions whose asking depends on what the rules matched
    # the sessions that ran in a checkout of this repository on this machine: on git's
    # clock, so their writes dated after a commit are not in it (``checkouts.py``,
    # ``match/clock.py``)
    same_clock: frozenset[int] = frozenset()
