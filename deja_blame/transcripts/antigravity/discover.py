"""Where Antigravity transcripts live (format section 1)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from deja_blame.transcripts.files import LINK, SPECIAL, Below, Skipped, lkind
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
    gemini = gemini_folder(env, home)
    found: set[Path] = set()
    for pattern in ROOT_PATTERNS:
        try:
            found.update(p for p in gemini.glob(pattern) if p.is_dir())
        except OSError:
            continue
    return sorted(found)


def gemini_folder(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """``~/.gemini``, where ``discover_roots`` finds the roots no variable names."""
    env = os.environ if env is None else env
    home = home if home is not None else Path(env.get("HOME") or Path.home())
    return home / ".gemini"


def sibling_transcripts(path: Path) -> list[Path]:
    """The other file of the session ``path`` belongs to: ``transcript.jsonl`` beside
    ``transcript_full.jsonl`` and the other way round (none for another name)."""
    other = {FULL_NAME: COMPACT_NAME, COMPACT_NAME: FULL_NAME}.get(path.name)
    if other is None:
        return []
    candidate = path.with_name(other)
    return [candidate] if lkind(candidate) == "file" else []  # a link beside it: not followed


def find_transcripts(
    root: Path, problems: list[str] | None = None, skipped: Skipped | None = None
) -> Iterator[TranscriptFile]:
    """Each session of ``root``: ``transcript_full.jsonl`` when it exists (nothing in it is
    cut), with ``transcript.jsonl`` beside it as a part (it can reach further back).

    Trouble with one entry (unreadable, a directory where a file should be) is
    appended to ``problems`` as a one-line message and the walk goes on; a link or
    special file below the root is passed over (``skipped``), never followed.
    """
    below = Below(root, problems, skipped)
    brain = root / "brain"
    kind = lkind(brain)
    if kind != "dir":
        if kind in (LINK, SPECIAL):
            below.skip(brain, kind)
        elif problems is not None and not root.exists():
            problems.append(f"transcript root not found: {root}")
        # a root that is there with no brain/ yet holds no session, as an empty
        # folder of any other agent: no problem (deja doctor says it has none)
        return
    try:
        with os.scandir(brain) as listing:
            entries = sorted(listing, key=lambda e: e.name)
    except OSError as exc:
        if problems is not None:
            problems.append(f"cannot read {brain}: {exc.strerror or exc}")
        return
    for entry in entries:
        try:
            if entry.is_symlink():
                below.skip(entry.path, LINK)
                continue
            if not entry.is_dir(follow_symlinks=False):
                continue
        except OSError:
            continue
        # Plain strings, an lstat per name: with nothing new to index, this walk is
        # most of what ``deja index`` does (2,000 sessions: 8,400 stats before 2026-11)
        generated = f"{entry.path}/.system_generated"
        logs = f"{generated}/logs"
        if lkind(generated) != "dir" or lkind(logs) != "dir":
            for folder in (generated, logs):
                folder_kind = lkind(folder)
                if folder_kind in (LINK, SPECIAL):
                    below.skip(folder, folder_kind)
                if folder_kind != "dir":
                    break
            continue
        found: list[str] = []
        for name in (FULL_NAME, COMPACT_NAME):
            candidate = f"{logs}/{name}"
            kind = lkind(candidate)
            if kind == "file":
                found.append(candidate)
            elif kind in (LINK, SPECIAL):
                below.skip(candidate, kind)
            elif kind is not None and problems is not None:
                problems.append(f"not a regular file, skipped: {candidate}")
        if found:
            yield TranscriptFile(
                session_id=entry.name,
                path=Path(found[0]),
                root=root,
                agent=AGENT,
                parts=tuple(Path(p) for p in found[1:]),
            )
