"""The agents deja reads, and where each keeps its transcripts.

One entry per harness: its name (the ``agent`` of its sessions everywhere),
the environment variable that replaces its discovery, where it keeps
transcripts by default, and its reader. Every reader gives the same
``Session``: nothing after this stage knows which agent wrote a transcript.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from deja_blame.errors import DejaError
from deja_blame.models import SOURCE_ANTIGRAVITY, Session
from deja_blame.transcripts import claude_code, codex, gemini_cli
from deja_blame.transcripts.antigravity import discover as antigravity_roots
from deja_blame.transcripts.antigravity.discover import TranscriptFile, roots_named

if TYPE_CHECKING:  # the readers are imported where a transcript is read
    from deja_blame.transcripts.antigravity.reader import ReaderState
    from deja_blame.transcripts.builder import BatchReader


@dataclass(frozen=True)
class Harness:
    name: str  # the sessions' agent: antigravity, claude-code, codex, gemini-cli
    aliases: tuple[str, ...]  # what --agent and --to also accept
    root_env: str
    default_roots: Callable[[Mapping[str, str], Path], list[Path]]
    find: Callable[[Path, list[str] | None], Iterator[TranscriptFile]]
    where: str  # where it looks, for messages

    def roots(self, env: Mapping[str, str] | None = None, home: Path | None = None) -> list[Path]:
        """The roots ``root_env`` names, else the agent's own places (``default_roots``)."""
        env = os.environ if env is None else env
        override = roots_named(env, self.root_env)
        if override is not None:
            return override
        home = home if home is not None else Path(env.get("HOME") or Path.home())
        return self.default_roots(env, home)


def _antigravity_roots(env: Mapping[str, str], home: Path) -> list[Path]:
    return antigravity_roots.discover_roots(env, home)


HARNESSES: tuple[Harness, ...] = (
    Harness(
        SOURCE_ANTIGRAVITY,
        ("agy",),
        antigravity_roots.ROOT_ENV,
        _antigravity_roots,
        antigravity_roots.find_transcripts,
        "~/.gemini/antigravity*",
    ),
    Harness(
        claude_code.AGENT,
        ("claude",),
        claude_code.ROOT_ENV,
        claude_code.default_roots,
        claude_code.find_transcripts,
        "${CLAUDE_CONFIG_DIR:-~/.claude}/projects",
    ),
    Harness(
        codex.AGENT,
        ("codex-cli",),
        codex.ROOT_ENV,
        codex.default_roots,
        codex.find_transcripts,
        "${CODEX_HOME:-~/.codex}/sessions",
    ),
    Harness(
        gemini_cli.AGENT,
        ("gemini",),
        gemini_cli.ROOT_ENV,
        gemini_cli.default_roots,
        gemini_cli.find_transcripts,
        "~/.gemini/tmp/*/chats",
    ),
)
AGENT_NAMES = tuple(h.name for h in HARNESSES)
ALL_NAMES = tuple(n for h in HARNESSES for n in (h.name, *h.aliases))


def harness(name: str) -> Harness:
    """The harness called ``name`` (or one of its aliases); a DejaError otherwise."""
    key = name.strip().lower()
    for h in HARNESSES:
        if key == h.name or key in h.aliases:
            return h
    raise DejaError(f"unknown agent {name!r}", hint=f"one of: {', '.join(AGENT_NAMES)}")


def discover(
    agents: list[str] | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    problems: list[str] | None = None,
) -> list[TranscriptFile]:
    """Every transcript of the chosen agents (all by default), first root first.

    A root that is not there is only a problem when its variable named it:
    nobody uses every agent.
    """
    env = os.environ if env is None else env
    chosen = [harness(a) for a in agents] if agents else list(HARNESSES)
    found: list[TranscriptFile] = []
    seen: set[str] = set()
    for h in chosen:
        named = bool(env.get(h.root_env))
        for root in h.roots(env, home):
            if not root.is_dir():
                if named and problems is not None:
                    problems.append(f"transcript root not found: {root} (from {h.root_env})")
                continue
            for tf in h.find(root, problems if named or h.name == SOURCE_ANTIGRAVITY else None):
                if tf.session_id in seen:
                    if problems is not None:
                        problems.append(
                            f"session {tf.session_id} found in more than one root; kept the first"
                        )
                    continue
                seen.add(tf.session_id)
                found.append(tf)
    return found


def read_session(tf: TranscriptFile) -> Session:
    """One transcript as a Session, by its agent's reader."""
    if tf.agent == claude_code.AGENT:
        from deja_blame.transcripts.claude_code.reader import parse_transcript as claude

        return claude(tf.path, tf.session_id, tf.parts)
    if tf.agent == codex.AGENT:
        from deja_blame.transcripts.codex.reader import parse_transcript as codex_cli

        return codex_cli(tf.path, tf.session_id)
    if tf.agent == gemini_cli.AGENT:
        from deja_blame.transcripts.gemini_cli.reader import parse_transcript as gemini

        return gemini(tf.path, tf.session_id, tf.parts)
    from deja_blame.transcripts.antigravity.reader import parse_transcript

    return parse_transcript(tf.path, tf.session_id, tf.root, tf.parts)


def resumable_reader(tf: TranscriptFile, state: ReaderState | None) -> BatchReader | None:
    """A reader for ``tf`` going on from ``state`` (None: from the start), or None when
    the transcript is read whole. Claude Code's and Codex's transcripts only grow
    (JSON Lines appended to); Gemini CLI's are rewritten (a JSON document, rewinds
    in JSON Lines), and a Claude Code session's sub-agent files interleave with it
    by time."""
    from deja_blame.transcripts.builder import BatchReader

    other = state.other if state is not None else None
    skipped = state.skipped if state is not None else 0
    transcript = str(tf.path.resolve())
    if tf.agent == claude_code.AGENT and not tf.parts:
        from deja_blame.transcripts.claude_code.reader import resume

        return BatchReader(resume(other, tf.session_id, transcript), skipped)
    if tf.agent == codex.AGENT:
        from deja_blame.transcripts.codex.reader import resume as resume_codex

        return BatchReader(resume_codex(other, tf.session_id, transcript), skipped)
    return None


def guess_agent(path: Path) -> str:
    """Which agent wrote the transcript at ``path``: by its name, else its first records."""
    name = path.name
    if "brain" in path.parts or name in (
        antigravity_roots.FULL_NAME,
        antigravity_roots.COMPACT_NAME,
    ):
        return SOURCE_ANTIGRAVITY
    if name.startswith("rollout-") and name.endswith(".jsonl"):
        return codex.AGENT
    if name.startswith("session-") and name.endswith((".json", ".jsonl")):
        return gemini_cli.AGENT
    try:
        with open(path, "rb") as fh:
            head = fh.read(64 * 1024)
    except OSError:
        return SOURCE_ANTIGRAVITY
    if head.lstrip().startswith(b"{") and b"\n" not in head.strip():
        return gemini_cli.AGENT if b'"projectHash"' in head else SOURCE_ANTIGRAVITY
    for raw in head.split(b"\n")[:20]:
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(rec, dict):
            continue
        if "payload" in rec and rec.get("type") in (
            "session_meta",
            "response_item",
            "turn_context",
            "event_msg",
        ):
            return codex.AGENT
        if "projectHash" in rec or "$rewindTo" in rec or "$set" in rec:
            return gemini_cli.AGENT
        if "sessionId" in rec and rec.get("type") in ("user", "assistant", "summary", "system"):
            return claude_code.AGENT
        if "step_index" in rec or "source" in rec:
            return SOURCE_ANTIGRAVITY
    return SOURCE_ANTIGRAVITY


def parse_any(path: Path, agent: str | None = None) -> Session:
    """``deja parse``: one transcript file of any agent, no index."""
    name = harness(agent).name if agent else guess_agent(path)
    if name == SOURCE_ANTIGRAVITY:
        from deja_blame.transcripts.antigravity.reader import parse_transcript

        return parse_transcript(path)
    parts: tuple[Path, ...] = ()
    if name == claude_code.AGENT:
        parts = tuple(claude_code.discover.subagent_files(path))
    elif name == gemini_cli.AGENT:
        parts = gemini_cli.discover.subagent_files(path)
    tf = TranscriptFile(session_id="", path=path, root=path.parent, agent=name, parts=parts)
    return read_session(tf)
