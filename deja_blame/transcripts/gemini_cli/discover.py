"""Where Gemini CLI keeps its sessions: ``<gemini>/tmp/<project>/chats/session-*.json[l]``.

``<gemini>`` is ``$GEMINI_CLI_HOME/.gemini`` or ``~/.gemini`` (``$DEJA_GEMINI_ROOT``
replaces both). ``<project>`` is a SHA-256 of the project's path in older
versions and a short project name in current ones (with the path in its
``.project_root`` file): any folder is taken. A session resumed by a newer
version is copied from ``session-X.json`` to ``session-X.jsonl``; the copy is
read. A sub-agent's file ``chats/<session id>/<agent>.jsonl`` belongs to that session.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import orjson

from deja_blame.transcripts.files import Below, Skipped, one_name
from deja_blame.transcripts.reading import open_regular, read_whole
from deja_blame.transcripts.transcript_file import TranscriptFile

ROOT_ENV = "DEJA_GEMINI_ROOT"
AGENT = "gemini-cli"
_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"([^"\\]{1,200})"')
_FIRST_BYTES = 4096
_PEEK_BYTES = 64 * 1024


def default_roots(env: Mapping[str, str], home: Path) -> list[Path]:
    cli_home = env.get("GEMINI_CLI_HOME")
    return [(Path(cli_home).expanduser() if cli_home else home) / ".gemini"]


def session_id_in(path: Path) -> str | None:
    """The ``sessionId`` a session file names first (its metadata comes first)."""
    try:
        with open_regular(path) as fh:
            head = fh.read(_FIRST_BYTES)  # the metadata comes first: usually all it takes
            m = _SESSION_ID.search(head)
            if m is None:
                head += fh.read(_PEEK_BYTES - _FIRST_BYTES)
                m = _SESSION_ID.search(head)
    except OSError:
        return None
    return m.group(1).decode("utf-8", "replace") if m else None


def find_transcripts(
    root: Path, problems: list[str] | None = None, skipped: Skipped | None = None
) -> Iterator[TranscriptFile]:
    below = Below(root, problems, skipped)
    base = below.base("tmp")
    if base is None:
        return
    for project in below.folders(base):
        chats = project / "chats"
        chosen: dict[str, Path] = {}
        for path in below.files(chats, _is_session_file):
            sid = session_id_in(path)
            if sid is None:
                if _too_short_to_say(path) and not _begun_without_metadata(path):
                    # created, its metadata not written yet: a session under its file
                    # name now would stay in the index beside the real one
                    continue
                sid = path.stem
            # the .jsonl a resumed session was copied to holds all of the .json
            if sid not in chosen or path.suffix == ".jsonl":
                chosen[sid] = path
        for sid, path in chosen.items():
            parts = subagent_files(path, sid, below)
            yield TranscriptFile(session_id=sid, path=path, root=root, agent=AGENT, parts=parts)


def _is_session_file(name: str) -> bool:
    return name.startswith("session-") and name.endswith((".json", ".jsonl"))


def _begun_without_metadata(path: Path) -> bool:
    """A JSON Lines session whose first line is written whole and names no
    ``sessionId``: its metadata is not coming (files written without it exist), so
    it is a session under its file name now."""
    if path.suffix != ".jsonl":
        return False  # a .json document is rewritten whole: cut short, it says nothing
    try:
        with open_regular(path) as fh:
            head = fh.read(_FIRST_BYTES)
    except OSError:
        return False
    first, newline, _rest = head.partition(b"\n")
    if not newline:
        return False
    try:
        record = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return isinstance(record, dict) and "sessionId" not in record


def _too_short_to_say(path: Path) -> bool:
    """Is the file still shorter than where its ``sessionId`` would be? (The CLI
    writes the metadata first.)"""
    try:
        return path.stat().st_size < _PEEK_BYTES
    except OSError:
        return True


def subagent_files(
    path: Path, session_id: str | None = None, below: Below | None = None
) -> tuple[Path, ...]:
    """A session's sub-agent files: ``chats/<session id>/*.jsonl`` (the folder a link: none)."""
    below = below if below is not None else Below(path.parent)
    name = session_id or session_id_in(path) or path.stem
    sub = path.parent / name
    if not one_name(name):  # read from the file: never a way out of its folder
        return ()
    return tuple(below.files(sub, lambda n: n.endswith(".jsonl")))


def project_root_of(transcript: Path) -> str | None:
    """The project a chats folder belongs to, where Gemini CLI wrote it down, else
    where its folder's name is the SHA-256 of the current folder or one above it."""
    marker = transcript.parent.parent / ".project_root"
    try:
        text = read_whole(marker, 64 * 1024).decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return hashed_project(transcript.parent.parent.name)
    return text or hashed_project(transcript.parent.parent.name)


def hashed_project(name: str) -> str | None:
    """The folder whose path's SHA-256 is ``name`` (older Gemini CLI versions name a
    project's folder so, and write no ``.project_root``), among the current folder and
    those above it: deja runs in the project it answers for, and a hash names no other
    folder. None for any other name, or where none of them is it."""
    import hashlib

    if len(name) != 64 or not all(c in "0123456789abcdef" for c in name):
        return None
    try:
        here = Path(os.getcwd())
    except OSError:
        return None
    for folder in (here, *here.parents):
        if hashlib.sha256(str(folder).encode("utf-8", "surrogateescape")).hexdigest() == name:
            return str(folder)
    return None
