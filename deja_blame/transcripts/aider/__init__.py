"""Aider: ``.aider.chat.history.md`` in the repository it worked in (``$AIDER_CHAT_HISTORY_FILE``
names another file). Found from where deja runs: the current directory up to its
git work tree."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.transcripts.agent import BY_CONTENT, BY_NAME, Agent, Sniffed
from deja_blame.transcripts.files import Below, Skipped
from deja_blame.transcripts.transcript_file import TranscriptFile

if TYPE_CHECKING:
    from deja_blame.models import Session

AGENT = "aider"
ROOT_ENV = "DEJA_AIDER_ROOT"
HISTORY_NAME = ".aider.chat.history.md"


def default_roots(env: Mapping[str, str], home: Path) -> list[Path]:
    """The file Aider's variable names, else the history files from the current
    directory up to its git work tree (aider writes its history at the work tree's
    top): only those that are there, so no history is no root at all."""
    named = env.get("AIDER_CHAT_HISTORY_FILE")
    if named:
        return [Path(named).expanduser()]
    try:
        here = Path(os.getcwd())
    except OSError:
        return []
    roots = []
    for directory in (here, *here.parents):
        if os.path.isfile(directory / HISTORY_NAME):
            roots.append(directory)
        if os.path.exists(directory / ".git") or directory == home:
            break
    return roots


def session_id_of(path: Path) -> str:
    """One history file is one session: named by where it is (a clone elsewhere is another)."""
    import hashlib  # here: its import sets up every OpenSSL digest (4-10 ms of a warm answer)

    digest = hashlib.sha256(str(path.resolve()).encode("utf-8", "surrogatepass")).hexdigest()
    return f"aider-{digest[:16]}"


def find_transcripts(
    root: Path, problems: list[str] | None = None, skipped: Skipped | None = None
) -> Iterator[TranscriptFile]:
    if root.is_file():
        # a file the user named (``AIDER_CHAT_HISTORY_FILE``, ``--root``) is a root: it
        # may be a link, like any root; it is read where it leads
        path = root.resolve() if root.is_symlink() else root
    else:
        # the history in a folder: a committed link to ~/.netrc is no history
        path = root / HISTORY_NAME
        if not Below(root, problems, skipped).regular(path):
            return
    base = path.parent
    yield TranscriptFile(session_id=session_id_of(path), path=path, root=base, agent=AGENT)


def _read(tf: TranscriptFile) -> Session:
    from deja_blame.transcripts.aider.reader import parse_transcript

    return parse_transcript(tf.path, tf.session_id or session_id_of(tf.path))


def _sniff(s: Sniffed) -> int:
    if s.path.name.endswith(".aider.chat.history.md") or s.path.name == HISTORY_NAME:
        return BY_NAME
    if s.head.startswith(b"\n# aider chat started at") or s.head.startswith(
        b"# aider chat started"
    ):
        return BY_CONTENT
    return 0


PLUGIN = Agent(
    id=AGENT,
    label="aider",
    display_name="Aider",
    root_env=ROOT_ENV,
    default_roots=default_roots,
    find=find_transcripts,
    read=_read,
    sniff=_sniff,
    where=f"<repository>/{HISTORY_NAME}",
    location_env=("AIDER_CHAT_HISTORY_FILE",),
    file_roots=True,
    request_marker=b"\n#### ",
    handoff=None,  # aider --message runs one request and exits: no interactive handoff
    # 1: each edit timed by its request (.aider.input.history); 2: a chat recorded on
    # Windows names ``src\\app.py`` as two parts, not one name
    # 2: Windows chats; 3: the model, the banner no reply; 4: each record's step is
    # the person's request it followed; 5: udiff and whole edit formats, aider's own
    # answered questions no request
    # 6: an edit's place among its session's messages (why's words around it)
    reader_version=6,
)

__all__ = ["PLUGIN"]
