"""The task folders Cline, Roo Code and Kilo Code keep, and what tells them apart.

The three extensions (Roo Code forked Cline, Kilo Code forked both) keep one folder
per task in their store, ``<store>/tasks/<task id>/``: ``api_conversation_history.json``
(the conversation as the model saw it) and ``ui_messages.json`` (what the panel
showed, with times), read together as one session. The store is the editor's
``User/globalStorage/<extension id>`` (``transcripts.vscode``); Cline's command line
and JetBrains builds keep theirs in ``~/.cline/data``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.transcripts.agent import BY_CONTENT, BY_NAME, PLAUSIBLE, Agent, Handoff, Sniffed
from deja_blame.transcripts.files import Below, Skipped, is_regular
from deja_blame.transcripts.transcript_file import TranscriptFile
from deja_blame.transcripts.vscode import LOCATION_ENV, extension_stores

if TYPE_CHECKING:
    from deja_blame.models import Session

CONVERSATION = "api_conversation_history.json"
UI_MESSAGES = "ui_messages.json"
TASKS = "tasks"
# the three extensions' stores (publisher.extension)
STORES = frozenset({"saoudrizwan.claude-dev", "rooveterinaryinc.roo-cline", "kilocode.kilo-code"})


def find_tasks(
    agent: str, root: Path, problems: list[str] | None = None, skipped: Skipped | None = None
) -> Iterator[TranscriptFile]:
    """Each task folder below ``root`` holding a conversation: one session, its UI
    messages its part. ``root`` is a store (its ``tasks/<id>/``), or any folder a
    task was copied below (``deja index --root``). Nothing followed."""
    below = Below(root, problems, skipped)
    base = below.base(TASKS)
    if base is None:
        return
    wanted = (CONVERSATION, UI_MESSAGES)
    if base == root and _a_store(root):
        return  # no task yet; the rest of a store (a browser Cline downloaded) is not walked
    if base != root:  # a store: its tasks, one folder each
        folders = [
            {p.name: p for p in below.files(task, lambda n: n in wanted)}
            for task in below.folders(base)
        ]
    else:
        by_folder: dict[Path, dict[str, Path]] = {}
        for path in below.walk(root, lambda d, n: n in wanted):
            by_folder.setdefault(path.parent, {})[path.name] = path
        folders = list(by_folder.values())
    for files in folders:
        conversation = files.get(CONVERSATION)
        if conversation is None:
            continue
        ui = files.get(UI_MESSAGES)
        parts = (ui,) if ui is not None else ()
        yield TranscriptFile(conversation.parent.name, conversation, root, agent, parts)


def _a_store(root: Path) -> bool:
    """An extension's own store, or the command line's ``~/.cline/data``."""
    return root.name in STORES or (root.name == "data" and root.parent.name == ".cline")


def ui_messages_beside(conversation: Path) -> tuple[Path, ...]:
    """``deja parse`` of a conversation reads the task's UI messages with it (their times)."""
    ui = conversation.parent / UI_MESSAGES
    return (ui,) if conversation.name == CONVERSATION and is_regular(ui) else ()


def task_agent(
    *,
    id: str,
    label: str,
    display_name: str,
    extension: str,
    aliases: tuple[str, ...] = (),
    other_names: tuple[str, ...] = (),
    handoff: Handoff | None = None,
    own_store: Callable[[Mapping[str, str], Path], list[Path]] | None = None,
    own_env: tuple[str, ...] = (),
    own_where: str = "",
    folder_marker: bytes = b"# Current Workspace Directory (",
) -> Agent:
    """One of the three agents: its extension's store in every editor (and its own
    store elsewhere, when it has one), read by the one reader."""
    root_env = f"DEJA_{id.upper().replace('-', '_')}_ROOT"

    def default_roots(env: Mapping[str, str], home: Path) -> list[Path]:
        mine = own_store(env, home) if own_store is not None else []
        return [*extension_stores(env, home, extension), *mine]

    def find(
        root: Path, problems: list[str] | None = None, skipped: Skipped | None = None
    ) -> Iterator[TranscriptFile]:
        return find_tasks(id, root, problems, skipped)

    def read(tf: TranscriptFile) -> Session:
        from deja_blame.transcripts.cline.reader import parse_task

        ui = next((p for p in tf.parts if p.name == UI_MESSAGES), None)
        return parse_task(tf.path, tf.session_id or tf.path.parent.name, id, ui)

    names = {extension, id, *aliases, *((".cline",) if own_store is not None else ())}

    def sniff(s: Sniffed) -> int:
        if s.path.name != CONVERSATION:
            return 0
        if names.intersection(s.path.parts):
            return BY_NAME
        if not s.head.lstrip().startswith(b"["):
            return 0
        # a copy elsewhere: the folder its environment names tells Cline's from Roo's
        # (Kilo's is Roo's: Roo, registered first, takes it)
        return BY_CONTENT if folder_marker in s.head else PLAUSIBLE

    where = f"~/.config/Code/User/globalStorage/{extension}/tasks"
    return Agent(
        id=id,
        label=label,
        display_name=display_name,
        root_env=root_env,
        default_roots=default_roots,
        find=find,
        read=read,
        sniff=sniff,
        where=where + (f" and {own_where}" if own_where else ""),
        location_env=(*LOCATION_ENV, *own_env),
        aliases=aliases,
        parts=ui_messages_beside,
        handoff=handoff,
        other_names=other_names,
        # 1: a non-Claude model's text as the extension saved it (entities unescaped);
        # 2: an edit's place among its session's messages (why's words around it)
        reader_version=2,
    )
