"""GitHub Copilot's chats in VS Code:
``<config>/Code/User/workspaceStorage/<hash>/GitHub.copilot-chat/transcripts/<id>.jsonl``
(the agent's event stream) and ``<hash>/chatSessions/<id>.json[l]`` (VS Code's record
of each chat, every version writes it) (``<config>``: ``$XDG_CONFIG_HOME`` or
``~/.config``; ``~/Library/Application Support`` on macOS, ``%APPDATA%`` on Windows;
VS Code Insiders too), ``<hash>/workspace.json`` naming the project folder."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.transcripts.agent import BY_CONTENT, BY_NAME, Agent, Handoff, Sniffed
from deja_blame.transcripts.files import Below, Skipped, files_as_sessions, is_regular
from deja_blame.transcripts.transcript_file import TranscriptFile
from deja_blame.transcripts.vscode import LOCATION_ENV, user_folders

if TYPE_CHECKING:
    from deja_blame.models import Session

AGENT = "copilot"
ROOT_ENV = "DEJA_COPILOT_ROOT"
PRODUCTS = ("Code", "Code - Insiders")
CHAT_SESSIONS = "chatSessions"


def default_roots(env: Mapping[str, str], home: Path) -> list[Path]:
    return [user / "workspaceStorage" for user in user_folders(env, home, PRODUCTS, remote=False)]


def find_transcripts(
    root: Path, problems: list[str] | None = None, skipped: Skipped | None = None
) -> Iterator[TranscriptFile]:
    """Only ``<hash>/GitHub.copilot-chat/transcripts`` and ``<hash>/chatSessions`` of
    each workspace are walked (the rest of workspaceStorage belongs to VS Code and
    other extensions). A stream and a chat session of the same name are one chat:
    one session, the stream with the chat session as its part (names only: no
    file is opened to pair them)."""
    below = Below(root, problems, skipped)
    for workspace in below.folders(root):
        streams: list[Path] = []
        chat = workspace / "GitHub.copilot-chat"
        if below.folder(chat) and below.folder(chat / "transcripts"):
            streams = list(below.walk(chat / "transcripts", lambda d, n: n.endswith(".jsonl")))
        chats: dict[str, Path] = {}
        sessions = workspace / CHAT_SESSIONS
        if below.folder(sessions):
            # a chat in both shapes (VS Code moved it to the log): the log
            for path in below.walk(sessions, lambda d, n: n.endswith((".json", ".jsonl"))):
                if chats.setdefault(path.stem, path).suffix == ".json":
                    chats[path.stem] = path
        for path in streams:
            paired = chats.pop(path.stem, None) if path.parent == chat / "transcripts" else None
            parts = (paired,) if paired is not None else ()
            yield TranscriptFile(path.stem, path, root, AGENT, parts)
        yield from files_as_sessions(iter(chats.values()), root, AGENT, lambda p: p.stem)


def chat_of_stream(stream: Path) -> Path | None:
    """The chat session of the same name as an event stream in its workspace."""
    if stream.parent.name != "transcripts" or stream.parent.parent.name != "GitHub.copilot-chat":
        return None
    folder = stream.parents[2] / CHAT_SESSIONS
    for suffix in (".jsonl", ".json"):
        if is_regular(folder / f"{stream.stem}{suffix}"):
            return folder / f"{stream.stem}{suffix}"
    return None


def workspace_folder(transcript: Path) -> str | None:
    """The folder ``workspace.json`` names for the workspace the transcript belongs to."""
    from deja_blame.transcripts.reading import load_document
    from deja_blame.transcripts.tool_edits import path_of

    up = 1 if _is_chat_session(transcript) else 2  # <hash>/chatSessions/<id>.json
    # a link there is no workspace's: never followed
    if len(transcript.parents) <= up or not is_regular(transcript.parents[up] / "workspace.json"):
        return None
    # VS Code writes it when the workspace opens: caught half written, the session
    # waits for the next run (IncompleteTranscript) rather than losing its project
    doc = load_document(transcript.parents[up] / "workspace.json")
    folder = doc.get("folder") if isinstance(doc, dict) else None
    return path_of(folder)


def _is_chat_session(path: Path) -> bool:
    return path.parent.name == CHAT_SESSIONS or path.suffix == ".json"


def _read(tf: TranscriptFile) -> Session:
    from deja_blame.transcripts.copilot.chat_session import read_chat_session
    from deja_blame.transcripts.copilot.events import read_events
    from deja_blame.transcripts.text import normalise_path

    folder = workspace_folder(tf.path)
    project = normalise_path(folder) if folder else None
    if _is_chat_session(tf.path) or _starts_a_chat_session(tf.path):
        return read_chat_session(tf.path, tf.session_id, project)
    sid = tf.session_id or tf.path.stem
    chats = [p for p in tf.parts if _is_chat_session(p)]
    if chats:
        return read_chat_session(chats[0], sid, project, stream=tf.path)
    return read_events(tf.path, sid, AGENT, project)


def _starts_a_chat_session(path: Path) -> bool:
    """A JSON Lines file (``deja parse`` of one out of its folder) whose first record is
    a chat session's whole state (``{"kind": 0, "v": ...}``), not an event."""
    from deja_blame.transcripts.reading import open_regular

    with open_regular(path) as fh:
        head = fh.read(64).lstrip()
    return head.startswith(b'{"kind":0') or head.startswith(b'{"kind": 0')


def _parts(path: Path) -> tuple[Path, ...]:
    """``deja parse`` of a stream reads its chat session with it, as the index does."""
    chat = chat_of_stream(path)
    return (chat,) if chat is not None else ()


def _sniff(s: Sniffed) -> int:
    if "GitHub.copilot-chat" in s.path.parts or CHAT_SESSIONS in s.path.parts:
        return BY_NAME
    if b'"requests"' in s.head and (
        b'"responderUsername"' in s.head or b'"requesterUsername"' in s.head
    ):
        return BY_CONTENT  # a chat session: the JSON document, or its log's first state
    for rec in s.records:
        if rec.get("kind") == 0 and isinstance(rec.get("v"), dict) and "requests" in rec["v"]:
            return BY_CONTENT
    for rec in s.records:
        data = rec.get("data")
        if rec.get("type") == "session.start" and isinstance(data, dict):
            return BY_CONTENT if "vscodeVersion" in data else 0
    return 0


PLUGIN = Agent(
    id=AGENT,
    label="copilot",
    display_name="GitHub Copilot (VS Code)",
    root_env=ROOT_ENV,
    default_roots=default_roots,
    find=find_transcripts,
    read=_read,
    # 1: insert_edit_into_file's lines, chat sessions; 2: a stream and its chat one
    # session, edit mode's textEditGroup edits
    # 3: each record's step is the person's request it followed
    # 4: an edit's place among its session's messages (why's words around it)
    reader_version=4,
    parts=_parts,
    sniff=_sniff,
    where="~/.config/Code/User/workspaceStorage/*/{GitHub.copilot-chat/transcripts,chatSessions}",
    location_env=LOCATION_ENV,
    aliases=("github-copilot", "vscode-copilot"),
    # VS Code 1.102+: ``code chat --mode agent PROMPT`` opens a Copilot agent-mode chat
    # in the current directory's window, begun with the prompt
    handoff=Handoff(
        "code",
        ("chat", "--mode", "agent"),
        "install VS Code 1.102 or later with GitHub Copilot, and its code command on PATH",
    ),
    other_names=("github-copilot",),
)

__all__ = ["PLUGIN"]
