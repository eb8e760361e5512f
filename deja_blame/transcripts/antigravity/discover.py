"""Where Antigravity transcripts live (format section 1)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path

from deja_blame.transcripts.transcript_file import TranscriptFile, roots_named

AGENT = "antigravity"
ROOT_ENV = "DEJA_ANTIGRAVITY_ROOT"
FULL_NAME = "transcript_full.jsonl"  # nothing truncated: preferred
COMPACT_NAME = "transcript.jsonl"


# ~/.gemini/<name>/brain: the app and IDE (antigravity, antigravity-ide), agy
# (antigravity-cli) and the jetski build write the same layout
ROOT_PATTERNS = ("antigravity*", "jetski*")


def discover_roots(env: Mapping[str, str] | None = None, home: Path | None = None) -> list[Path]:
    """The transcript roots: ``$DEJA_ANTIGRAVITY_ROOT`` (``:``-separated) or every
    ``~/.gemini/antigravity*`` and ``~/.gemini/jetski*`` directory."""
    env = os.environ if env is None else env
    override = roots_named(env, ROOT_ENV)
    if override is not None:
        return override
    home = home if home is not None else Path(env.get("HOME") or Path.home())
    gemini = home / ".gemini"
    found: set[Path] = set()
    for pattern in ROOT_PATTERNS:
        try:
            found.update(p for p in gemini.glob(pattern) if p.is_dir())
        except OSError:
            continue
    return sorted(found)


def sibling_transcripts(path: Path) -> list[Path]:
    """The other file of the session ``path`` belongs to: ``transcript.jsonl`` beside
    ``transcript_full.jsonl`` and the other way round (none for another name)."""
    other = {FULL_NAME: COMPACT_NAME, COMPACT_NAME: FULL_NAME}.get(path.name)
    if other is None:
        return []
    candidate = path.with_name(other)
    try:
        return [candidate] if stat.S_ISREG(os.stat(candidate).st_mode) else []
    except OSError:
        return []


def find_transcripts(root: Path, problems: list[str] | None = None) -> Iterator[TranscriptFile]:
    """Each session of ``root``: ``transcript_full.jsonl`` when it exists (nothing in it is
    cut), with ``transcript.jsonl`` beside it as a part (it can reach further back).

    Trouble with one entry (unreadable, a directory where a file should be) is
    appended to ``problems`` as a one-line message and the walk goes on.
    """
    brain = root / "brain"
    try:
        entries = sorted(os.scandir(brain), key=lambda e: e.name)
    except FileNotFoundError:
        if problems is not None:
            if not root.exists():
                problems.append(f"transcript root not found: {root}")
            else:
                problems.append(f"no brain/ directory under transcript root {root}")
        return
    except OSError as exc:
        if problems is not None:
            problems.append(f"cannot read {brain}: {exc.strerror or exc}")
        return
    for entry in entries:
        try:
            if not entry.is_dir():
                continue
        except OSError:
            continue
        # One stat per name and plain strings: with nothing new to index, this walk
        # is most of what ``deja index`` does (2,000 sessions: 8,400 stats before).
        logs = os.path.join(entry.path, ".system_generated", "logs")
        found: list[str] = []
        for name in (FULL_NAME, COMPACT_NAME):
            candidate = os.path.join(logs, name)
            try:
                mode = os.stat(candidate).st_mode
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError as exc:
                if problems is not None:
                    problems.append(f"cannot read {candidate}: {exc.strerror or exc}")
                continue
            if stat.S_ISREG(mode):
                found.append(candidate)
            elif problems is not None:
                problems.append(f"not a regular file, skipped: {candidate}")
        if found:
            yield TranscriptFile(
                session_id=entry.name,
                path=Path(found[0]),
                root=root,
                agent=AGENT,
                parts=tuple(Path(p) for p in found[1:]),
            )
