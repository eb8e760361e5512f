"""Where Codex CLI keeps its sessions: ``<home>/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``.

``<home>`` is ``$CODEX_HOME`` or ``~/.codex`` (``$DEJA_CODEX_ROOT`` replaces
both). Older versions wrote ``sessions/rollout-*.jsonl`` with no date folders;
both are found, and archived sessions (``archived_sessions/``) too. The session id is the UUID that ends the file name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from deja_blame.transcripts.files import is_regular
from deja_blame.transcripts.transcript_file import TranscriptFile

ROOT_ENV = "DEJA_CODEX_ROOT"
AGENT = "codex"
_UUID_TAIL = re.compile(
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$", re.IGNORECASE
)


def default_roots(env: Mapping[str, str], home: Path) -> list[Path]:
    codex_home = env.get("CODEX_HOME")
    return [Path(codex_home).expanduser() if codex_home else home / ".codex"]


def session_id_of(path: Path) -> str:
    m = _UUID_TAIL.search(path.name)
    return m.group(1).lower() if m else path.stem


def find_transcripts(root: Path, problems: list[str] | None = None) -> Iterator[TranscriptFile]:
    # sessions/, and archived_sessions/ (what `codex` archives is history all the same)
    bases = [root / d for d in ("sessions", "archived_sessions") if (root / d).is_dir()]
    found: list[Path] = []
    for base in bases or [root]:
        for dirpath, dirnames, filenames in os.walk(base, onerror=None):
            dirnames.sort()
            found += [
                Path(dirpath) / f
                for f in sorted(filenames)
                if f.startswith("rollout-") and f.endswith(".jsonl")
            ]
    for path in found:
        try:
            if not is_regular(path):
                continue
        except OSError:
            continue
        yield TranscriptFile(session_id=session_id_of(path), path=path, root=root, agent=AGENT)
