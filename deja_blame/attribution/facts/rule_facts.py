"""What the matcher's rules read beyond a file's ``FileFacts``, handed to them by stage 1.

Stage 1 (``source.FactSource.for_rules``) makes it before the rules run, from the
file's lines, its writes and the paths that stand for it: the edits behind the
writes (plain data, ``edits.py``), the file's versions (``versions.py``: its log
read, each version read within the budget in the order the commit-window rule
reads them), when the repository's history began, and which sessions ran in a
checkout of it on this machine (on git's clock: ``checkouts.py``), and in a question
about many files every text written to the file's paths (what the reflow rule grows
its candidates by). What the rules still ask while they decide (whether a session
matched by path suffix belongs here, the writes of texts a formatter split, the names
of the sessions that won) depends on what they matched so far; they ask it of ``asks``
(``StillAsked``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from deja_blame.attribution.facts.edits import SessionEdits
    from deja_blame.attribution.facts.model import BlameLine, PathLogIndex, WriteSet, WrittenTexts
    from deja_blame.attribution.facts.versions import FileHistory


class StillAsked(Protocol):
    """The questions the rules ask while they decide (``source.FactSource``)."""

    def belongs(self, sid: int) -> bool | None: ...

    def wrote_outside_from_here(self, sid: int, path_ids: list[int]) -> bool: ...

    def load_writes(self, paths: dict[int, bool], fps: Iterable[int]) -> WriteSet: ...

    def session_names(self, sids: set[int]) -> dict[int, tuple[str, str]]: ...


class MoveAsks(Protocol):
    """What the moves rule's judgement (``match/moves.py``) needs of git's history and
    the index, once it knows which lines came from another file and which files
    sessions wrote their texts to (``moved.WhereFrom``: each answer kept for the
    answer, a path's log and the write times for a question about many files). Which
    of them it needs depends on what it found so far: a file's text is read only for a
    line a commit may have taken out of it, the files' logs only where enough of a
    block's lines were written there (each costs git work). So the judgement is made
    in rounds: it reads the answers stage 1 gave (``MoveFacts.answers``), says which
    questions it lacks, stage 1 answers them (``moved.answer_asked``, by these
    methods), and it judges again, until it lacks none."""

    def text_at(self, rev: str, path: str) -> str: ...

    def holds(self, rev: str, path: str, text: str) -> bool: ...

    def solid_lines_at(self, rev: str, path: str) -> set[str]: ...

    def touched(self, commit: str) -> dict[str, tuple[str, str | None]]: ...

    def renamed_to(self, commit: str, path: str) -> set[str]: ...

    def path_log(self, path: str) -> list[tuple[str, int, str]]: ...

    def log_index(self, path: str) -> PathLogIndex: ...

    def parent_time(self, commit: str) -> int | None: ...

    def write_times(self, pid: int, fp: int) -> list[float]: ...

    def paths_git_lacks(self, names: dict[int, str]) -> set[int]: ...


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
    # every text written as a line to the paths, in a question about many files
    # (``FactSource.written_texts``); None: a one-file question, every run is a candidate
    written: WrittenTexts | None = None


@dataclass
class MoveFacts:
    """What stage 1 found of where the lines the rules left unmatched came from
    (``facts/moved.py``: ``where_from``), for the moves rule's judgement
    (``match/moves.py``: ``moved_here``): the lines asked about (``todo``: unmatched,
    not trivial, their text written to another file), which files sessions wrote
    each text to (``elsewhere``: fingerprint -> path ids; ``names``: those paths,
    relative to the repository), the blocks ``git blame -C`` was asked about
    (``ranges``: first and last line), the lines it says came from another file
    than the plain blame names, in its order (``copied``: line index, its blame
    there), the index's paths of the files it named (``named``, not the file's own),
    stage 1's reader of git's history and the index for the judgement's questions
    (``asks``: only stage 1 asks it), and their answers so far (``answers``: a
    question, ``MoveAsks``' method name and its arguments -> its answer; plain data,
    all the judgement reads)."""

    todo: list[int]
    elsewhere: dict[int, set[int]]
    names: dict[int, str]
    ranges: list[list[int]]
    copied: list[tuple[int, BlameLine]]
    named: dict[int, bool]
    asks: MoveAsks
    answers: dict[tuple[Any, ...], Any] = field(default_factory=dict)
