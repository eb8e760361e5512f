"""The agents deja reads: one registry every command asks.

One line per agent plug-in (``transcripts/<agent>/``, an ``Agent``). Its id is the
``agent`` of its sessions everywhere; every reader gives the same ``Session``, so
nothing after this stage knows which agent wrote a transcript. Adding an agent:
one package, one line here, golden fixtures.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from deja_blame.errors import DejaError
from deja_blame.models import UNKNOWN_AGENT
from deja_blame.transcripts.agent import Agent, Sniffed
from deja_blame.transcripts.files import Skipped
from deja_blame.transcripts.reading import (
    MalformedTranscript,
    max_transcript_records,
    open_regular,
    too_many,
)
from deja_blame.transcripts.transcript_file import TranscriptFile, one_copy_each

if TYPE_CHECKING:  # the readers are imported where a transcript is read
    from deja_blame.models import Session
    from deja_blame.transcripts.agent import Reader
    from deja_blame.transcripts.first_seen import FirstSeen
    from deja_blame.transcripts.reading import ReaderState

# One line per agent: its package under transcripts/, which exposes ``PLUGIN``.
PLUGINS = (
    "antigravity",
    "claude_code",
    "codex",
    "gemini_cli",
    "cursor",
    "copilot",
    "copilot_cli",
    "windsurf",
    "opencode",
    "amp",
    "droid",
    "continue_dev",
    "aider",
    "pi",
    "cline",
    "roo_code",
    "kilo_code",
    "specstory",
)
AGENTS: tuple[Agent, ...] = tuple(
    importlib.import_module(f"deja_blame.transcripts.{name}").PLUGIN for name in PLUGINS
)

__all__ = [
    "AGENTS",
    "UNKNOWN_AGENT",
    "agent_named",
    "discover",
    "discover_in",
    "label_of",
    "display_name",
]

# The agent whose roots ``--root`` names and the index's ``roots`` arguments carry
# (deja read it first); the others are found where each keeps its transcripts.
ROOTS_AGENT = AGENTS[0]  # antigravity, the first line
OTHER_AGENTS = tuple(a for a in AGENTS if a is not ROOTS_AGENT)

AGENT_IDS = tuple(a.id for a in AGENTS)
ALL_NAMES = tuple(n for a in AGENTS for n in a.names)
_BY_ID = {a.id: a for a in AGENTS}
_SNIFF_BYTES = 64 * 1024
_SNIFF_RECORDS = 20


def agent_named(name: str) -> Agent:
    """The agent called ``name`` (its id or one of its aliases); a DejaError otherwise."""
    key = name.strip().lower()
    found = _BY_ID.get(key)
    if found is not None:
        return found
    for a in AGENTS:
        if key in a.aliases:
            return a
    raise DejaError(f"unknown agent {name!r}", hint=f"one of: {', '.join(AGENT_IDS)}")


def known(agent_id: str | None) -> Agent | None:
    """The registered agent with this id; None for one deja does not read (a note
    written by another tool, or a newer deja)."""
    return _BY_ID.get(agent_id or "")


def label_of(agent_id: str | None) -> str:
    """The agent as blame's column shows it: a whole word for the agents deja knows
    (``agy``, ``claude``, ``copilot-cli``, ``windsurf``); another name (a note's
    "unknown", another tool's) as it is (the caller makes it inert and bounds it)."""
    a = known(agent_id)
    return a.label if a is not None else (agent_id or UNKNOWN_AGENT)


def display_name(agent_id: str | None) -> str:
    """The agent's name in prose: "Claude Code"; an unknown id as it is."""
    a = known(agent_id)
    return a.display_name if a is not None else (agent_id or UNKNOWN_AGENT)


def from_other_name(name: str) -> str:
    """deja's id for an agent another tool (git-ai) names ``name``; the name itself
    when it is none deja reads."""
    key = name.strip().lower()
    for a in AGENTS:
        if key == a.id or key in a.other_names:
            return a.id
    return name


def handoff_targets() -> dict[str, Agent]:
    """Every ``--to`` spelling of an agent that has a command line to start."""
    return {n: a for a in AGENTS if a.handoff is not None for n in a.names}


def location_variables() -> tuple[str, ...]:
    """Every variable that moves a store deja reads: the overrides and the agents' own."""
    return tuple(v for a in AGENTS for v in (a.root_env, *a.location_env))


def discover(
    agents: list[str] | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    problems: list[str] | None = None,
    skipped: Skipped | None = None,
    below: Mapping[str, list[Path]] | None = None,
) -> list[TranscriptFile]:
    """Every transcript of the chosen agents (all by default), first root first.

    A root that is not there is only a problem when its variable named it:
    nobody uses every agent. ``skipped`` gets the links and special files below
    the roots that were passed over (``transcripts.files``). ``below``: more roots
    of each agent, found below the current folder (``index/below.py``), unless its
    variable names its roots; what only they hold is ``found_below``.
    """
    env = os.environ if env is None else env
    chosen = [agent_named(a) for a in agents] if agents else list(AGENTS)
    found: list[TranscriptFile] = []
    for a in chosen:
        named = bool(env.get(a.root_env))
        roots = a.roots(env, home)
        only_below = (
            [r for r in below.get(a.id, ()) if r not in roots] if below and not named else []
        )
        for root in roots + only_below:
            if not (root.is_dir() or (a.file_roots and root.is_file())):
                if named and problems is not None:
                    problems.append(f"transcript root not found: {root} (from {a.root_env})")
                continue
            got = a.find(root, problems if named or a.always_report else None, skipped)
            if root in only_below:  # never remembered as the user's own (``provenance``)
                got = (replace(tf, found_below=True) for tf in got)
            found += got
    return one_copy_each(found, problems)


def discover_in(
    roots: list[Path],
    agents: list[str] | None = None,
    problems: list[str] | None = None,
    skipped: Skipped | None = None,
) -> list[TranscriptFile]:
    """Every transcript under ``roots`` (``deja index --root``), in place of every
    agent's own places.

    With one agent chosen, its finder reads the roots as its own store (what its
    ``DEJA_<AGENT>_ROOT`` would name). Otherwise every chosen agent's finder looks
    (all by default), and a file one finds is its only when that agent is the
    surest of it by its name and first records (``sniffed_agent``): finders that
    take any folder as their store never claim another agent's files.
    """
    chosen = [agent_named(a) for a in agents] if agents else list(AGENTS)
    found: list[TranscriptFile] = []
    for root in roots:
        if not (root.is_dir() or root.is_file()):
            if problems is not None:
                problems.append(f"transcript root not found: {root} (from --root)")
            continue
        for a in chosen:
            if not (root.is_dir() or a.file_roots):
                continue
            if len(chosen) == 1:
                found += a.find(root, problems, skipped)
                continue
            # what an agent's finder says of a root that is not its store ("no
            # brain/ directory", the links it passed over) is said only when it
            # found something there
            said: list[str] = []
            passed = Skipped()
            mine = [tf for tf in a.find(root, said, passed) if sniffed_agent(tf.path, chosen) is a]
            found += mine
            if mine and problems is not None:
                problems += said
            if mine and skipped is not None:
                skipped.merge(passed)
    return one_copy_each(found, problems)


def read_session(tf: TranscriptFile, seen: FirstSeen | None = None) -> Session:
    """One transcript as a Session, by its agent's reader; ``seen`` dates the records
    of an agent whose transcripts record no times (``Agent.read_seen``)."""
    return read_checked(agent_named(tf.agent), tf, seen)


def reader_failed(a: Agent, exc: Exception) -> MalformedTranscript:
    """What the index says of a transcript whose reader raised ``exc``: skipped, in
    one line, the agent and the error named (the message cut: it may quote the file)."""
    return MalformedTranscript(
        f"not a {a.display_name} transcript deja can read, skipped"
        f" ({type(exc).__name__}: {str(exc)[:200]})"
    )


def read_checked(a: Agent, tf: TranscriptFile, seen: FirstSeen | None = None) -> Session:
    """``a.read(tf)``; a transcript its reader cannot make sense of (a JSON document
    of another shape, values of the wrong type, nested past Python's limit) is a
    MalformedTranscript: an OSError, which the index skips and counts as it does a
    file it cannot read, and ``deja parse`` says in one line."""
    try:
        session = a.read(tf) if seen is None or a.read_seen is None else a.read_seen(tf, seen)
    except OSError:
        raise  # the file itself: the index says what (cannot read, still being written)
    except Exception as exc:  # noqa: BLE001 - one transcript never stops the index
        # Not only the shapes foreseen (ValueError, TypeError, ...): a value no reader
        # expected (a time past year 9999 with an offset, an integer past 64 bits)
        # raised OverflowError and stopped `deja index` for every transcript.
        raise reader_failed(a, exc) from None
    # the record limit, whatever the shape (Aider's Markdown, a document's messages)
    limit = max_transcript_records()
    held = len(session.messages) + len(session.commands) + len(session.files) + len(session.edits)
    if held > limit:
        raise too_many(limit)
    return session


def reads_whole(tf: TranscriptFile) -> bool:
    """True when its agent's reader keeps its own state in ``ReaderState.other`` (or
    none: read from the start whenever it changed); False for a reader whose state is
    the ``ReaderState`` itself (Antigravity's, which also keeps byte spans)."""
    return not agent_named(tf.agent).native_state


def resumable_reader(tf: TranscriptFile, state: ReaderState | None) -> Reader | None:
    """A reader for ``tf`` going on from ``state`` (None: from the start), or None when
    its agent's transcripts are read whole."""
    a = agent_named(tf.agent)
    return a.resume(tf, state) if a.resume is not None else None


def guess_agent(path: Path) -> str:
    """Which agent wrote the transcript at ``path``: each agent sniffs its name and
    first records; the surest wins, the earlier registered on a tie (the first
    agent when none knows it)."""
    best = sniffed_agent(path)
    return (best or AGENTS[0]).id


def sniffed_agent(path: Path, among: list[Agent] | tuple[Agent, ...] = AGENTS) -> Agent | None:
    """The agent of ``among`` surest that ``path`` is its (the earlier registered on
    a tie); None when none of them knows it."""
    try:
        with open_regular(path) as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError:
        head = b""
    sniffed = Sniffed(path, head, _records(head))
    best, score = None, 0
    for a in among:
        got = a.sniff(sniffed)
        if got > score:
            best, score = a, got
    return best


def _records(head: bytes) -> list[dict[str, Any]]:
    """The JSON Lines records that start ``head``; none for one JSON document."""
    if head.lstrip().startswith(b"{") and b"\n" not in head.strip():
        return []
    out: list[dict[str, Any]] = []
    for raw in head.split(b"\n")[:_SNIFF_RECORDS]:
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def parse_any(path: Path, agent: str | None = None) -> Session:
    """``deja parse``: one transcript file of any agent, no index."""
    a = agent_named(agent) if agent else agent_named(guess_agent(path))
    parts = a.parts(path) if a.parts is not None else ()
    tf = TranscriptFile(session_id="", path=path, root=path.parent, agent=a.id, parts=parts)
    return read_checked(a, tf)
