"""Where Codex CLI keeps its sessions: ``<home>/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``.

``<home>`` is ``$CODEX_HOME`` or ``~/.codex`` (``$DEJA_CODEX_ROOT`` replaces
both). Older versions wrote ``sessions/rollout-*.jsonl`` with no date folders;
both are found, and archived sessions (``archived_sessions/``) too. The session id is the UUID that ends the file name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from deja_blame.transcripts.files import Below, Skipped
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


def find_transcripts(
    root: Path, problems: list[str] | None = None, skipped: Skipped | None = None
) -> Iterator[TranscriptFile]:
    below = Below(root, problems, skipped)
    # sessions/, and archived_sessions/ (what `codex` archives is history all the same)
    bases = [below.base(d) for d in ("sessions", "archived_sessions")]
    real = [b for b in bases if b is not None and b != root]
    if not real and None not in bases:
        real = [root]  # a root that names the sessions folder itself
    for base in real:
        wanted = below.walk(base, lambda _d, n: n.startswith("rollout-") and n.endswith(".jsonl"))
        for path in wanted:
            yield TranscriptFile(session_id=session_id_of(path), path=path, root=root, agent=AGENT)
