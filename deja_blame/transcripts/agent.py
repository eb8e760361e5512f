"""The protocol every agent plug-in meets (after pre-commit's ``languages/``).

Each agent deja reads is one package, ``transcripts/<agent>/``, whose
``__init__`` exposes one ``Agent``: what it is called, where it keeps its
transcripts, how to find and read them, how to tell its files from the others'
and how to hand a session over to it. ``transcripts.registry`` lists them; every
command asks the registry, so nothing outside ``transcripts/`` spells an
agent's name. Adding an agent is one package and one registry line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from deja_blame.transcripts.transcript_file import TranscriptFile, roots_named

if TYPE_CHECKING:
    from deja_blame.models import Session
    from deja_blame.transcripts.files import Skipped
    from deja_blame.transcripts.first_seen import FirstSeen
    from deja_blame.transcripts.reading import Chunk, ReaderState


class Reader(Protocol):
    """A transcript read on from where the last run stopped: ``feed`` a batch of
    records (with their byte spans), then ``state`` is where the next run goes on."""

    def feed(
        self,
        records: list[dict[str, Any] | None],
        spans: list[tuple[int, int] | None] | None = None,
    ) -> Chunk: ...

    @property
    def state(self) -> ReaderState: ...


class Finder(Protocol):
    """An agent's sessions under one root: a folder it cannot read is a line in
    ``problems``, a link or special file below the root it passed over one in
    ``skipped`` (``transcripts.files``: nothing below a root is followed)."""

    def __call__(
        self, root: Path, problems: list[str] | None = None, skipped: Skipped | None = None
    ) -> Iterator[TranscriptFile]: ...


@dataclass(frozen=True)
class Handoff:
    """How ``deja handoff --to`` starts the agent: ``program *options PROMPT``."""

    program: str
    options: tuple[str, ...]  # before the prompt: an interactive session that begins with it
    install: str  # what to do when ``program`` is not on PATH


@dataclass(frozen=True)
class Sniffed:
    """The start of a file whose agent is asked for (``deja parse``): its path, its
    first bytes and the JSON records among them (none for one JSON document)."""

    path: Path
    head: bytes
    records: list[dict[str, Any]]


# how sure a sniff is: a name only this agent writes beats a record that looks like
# its own, which beats a shape several agents share
BY_NAME = 3
BY_CONTENT = 2
PLAUSIBLE = 1


@dataclass(frozen=True)
class Agent:
    """One agent deja reads: everything the rest of deja needs to know about it."""

    id: str  # the sessions' agent everywhere: the index, notes, --agent, JSON
    label: str  # blame's agent column: a whole word everyone knows the agent by
    display_name: str  # in prose: reports, handoff prompts, docs
    root_env: str  # DEJA_<AGENT>_ROOT: replaces the default roots (``:``-separated)
    default_roots: Callable[[Mapping[str, str], Path], list[Path]]  # (env, home)
    find: Finder  # (root, problems, skipped)
    read: Callable[[TranscriptFile], Session]  # one transcript, whole
    sniff: Callable[[Sniffed], int]  # BY_NAME, BY_CONTENT, PLAUSIBLE or 0: not its
    where: str  # where it looks by default, for messages and docs
    location_env: tuple[str, ...] = ()  # the agent's own variables that move its store
    aliases: tuple[str, ...] = ()  # what --agent and --to also accept
    # for transcripts that record no times: read whole, each record dated by when the
    # index first saw it (``transcripts/first_seen.py``), not by the file's time now
    read_seen: Callable[[TranscriptFile, FirstSeen], Session] | None = None
    # read on from a stored state (None: from the start); None when always read whole
    resume: Callable[[TranscriptFile, ReaderState | None], Reader | None] | None = None
    # True: the index's ReaderState is this reader's own (offsets and byte spans);
    # otherwise a reader keeps its state in ReaderState.other
    native_state: bool = False
    # records of other files of the session merged in when it is read from the start
    # (Antigravity's compact file beside the full one)
    extra_records: Callable[[TranscriptFile], list[dict[str, Any]]] | None = None
    # the files read with a transcript given alone (``deja parse``): its sub-agents'
    parts: Callable[[Path], tuple[Path, ...]] | None = None
    handoff: Handoff | None = None  # None: it has no command line to start
    other_names: tuple[str, ...] = ()  # what other tools (git-ai's notes) call it
    # its finder reports trouble even when no variable named its root
    always_report: bool = False
    # a root may be a file (Aider's history file, named by its own variable)
    file_roots: bool = False
    # in a history kept in the work tree: the bytes that open a request the user typed
    # (index/provenance.py remembers such a history as theirs once it holds one)
    request_marker: bytes = b""
    # where its histories lie below a folder that holds them (SpecStory's
    # ``.specstory/history/*.md``, a git pathspec glob): whole runs (``deja index``,
    # doctor) look for them below the current folder too (``index/below.py``), not the
    # refresh before each answer, whose cost must not grow with the work tree
    below: str = ""
    # the id of the session whose chat a transcript copies, where it names one (SpecStory's
    # header names the agent's own session): the index keeps the agent's own store's
    # session and leaves the copy out (``index/ingest.py``), so a chat counts once
    copy_of: Callable[[Path], str | None] | None = None
    # bumped when the reader reads the same transcript differently (Aider's edits timed
    # by their requests): a session an older reader indexed is read again, unchanged
    reader_version: int = 0

    def roots(self, env: Mapping[str, str] | None = None, home: Path | None = None) -> list[Path]:
        """The roots ``root_env`` names, else the agent's own places (``default_roots``)."""
        env = os.environ if env is None else env
        override = roots_named(env, self.root_env)
        if override is not None:
            return override
        home = home if home is not None else Path(env.get("HOME") or Path.home())
        return self.default_roots(env, home)

    @property
    def names(self) -> tuple[str, ...]:
        """Its id and aliases: every spelling ``--agent`` accepts."""
        return (self.id, *self.aliases)
