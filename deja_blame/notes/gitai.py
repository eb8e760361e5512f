"""git-ai's authorship notes (``refs/notes/ai``, ``authorship/3.0.0``), read for blame.

A note is an attestation section, ``---`` on a line of its own, then JSON:

    src/main.rs
      s_c9883b05a2487d::t_9f8e7d6c5b4a32 1-10,15-20
      h_31dce776f88375 42-50
    "src/my file.rs"
      abcd1234abcd1234 1-50
    ---
    {"schema_version": "authorship/3.0.0", "prompts": {...}, "sessions": {...},
     "humans": {...}, "base_commit_sha": "..."}

File paths stand at column 0 (quoted when they hold blanks); each entry line,
indented two spaces, is an attestation key and the lines (of that commit's
version of the file) it wrote. Keys: ``s_<14hex>::t_<14hex>`` (a session, found
in ``sessions`` by the part before ``::``), ``h_<14hex>`` (a known human, in
``humans``: the lines stay people's), or a bare 16-hex legacy key (in
``prompts``). A session's agent is its ``agent_id.tool``.

deja uses these for lines its own notes and index do not explain (``via:
"git-ai"``). A note that is not in this format is skipped, never an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from deja_blame.notes.schema import GITAI_REF, MAX_LINE, MAX_NOTE_LINES, MAX_PATH, MAX_RANGES

if TYPE_CHECKING:  # pygit2 is imported where a note is read: a warm blame never needs it
    import pygit2

SCHEMA = "authorship/3.0.0"
MAX_NOTE_BYTES = 16 * 1024 * 1024  # as deja's own notes: bigger ones are not read
MAX_TEXT = 4096
MAX_KEY = 256
_LINE_DIGITS = len(str(MAX_LINE))
CONFIDENCE = 0.9  # git-ai saw the lines written; deja did not


@dataclass(frozen=True)
class Author:
    """Who a git-ai note says wrote a line: a session (``human`` False) or a known person."""

    key: str  # the session id (s_..., or a legacy key), or the human key (h_...)
    human: bool
    agent: str | None = None
    model: str | None = None
    tool_session: str | None = None  # agent_id.id: the session in the agent's own terms
    person: str | None = None  # a human record's author

    def info(self) -> dict[str, Any]:
        """The session as the blame document's ``sessions`` shows one known only from notes."""
        doc: dict[str, Any] = {"agent": self.agent or "unknown", "project": "-", "via": "git-ai"}
        if self.model:
            doc["model"] = self.model
        if self.tool_session:
            doc["agent_session"] = self.tool_session
        return doc


@dataclass
class Authorship:
    files: dict[str, list[tuple[str, list[tuple[int, int]]]]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def author_of(self, path: str, line: int) -> Author | None:
        for key, ranges in self.files.get(path, ()):
            if any(a <= line <= b for a, b in ranges):
                return self._author(key)
        return None

    def _author(self, key: str) -> Author:
        if key.startswith("h_"):
            rec = _dict(_dict(self.meta.get("humans")).get(key))
            return Author(key=key, human=True, person=_str(rec.get("author")))
        if key.startswith("s_"):
            sid = key.split("::", 1)[0]
            rec = _dict(_dict(self.meta.get("sessions")).get(sid))
        else:
            sid = key
            rec = _dict(_dict(self.meta.get("prompts")).get(key))
        agent_id = _dict(rec.get("agent_id"))
        tool = _str(agent_id.get("tool"))
        return Author(
            key=sid,
            human=False,
            agent=_deja_id(tool) if tool else None,  # agent_id.tool, in deja's ids
            model=_str(agent_id.get("model")),
            tool_session=_str(agent_id.get("id")),
        )


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: object) -> str | None:
    """A string detail, on one line and capped (printed by why, show, blame, report)."""
    if not isinstance(value, str) or not value:
        return None
    from deja_blame.notes.public import one_line

    return one_line(value[:MAX_TEXT])


def _ranges(spec: str) -> list[tuple[int, int]] | None:
    """``1-10,15`` -> [(1, 10), (15, 15)], within the limits of deja's own notes (no
    number past MAX_LINE, no more than MAX_RANGES ranges), or None."""
    parts = spec.split(",", MAX_RANGES)
    if len(parts) > MAX_RANGES:
        return None
    out: list[tuple[int, int]] = []
    for part in parts:
        a, _, b = part.partition("-")
        if not _digits(a) or (b and not _digits(b)):
            return None
        start, end = int(a), int(b or a)
        if not 1 <= start <= end <= MAX_LINE:
            return None
        out.append((start, end))
    return out


def _digits(text: str) -> bool:
    # 5,000 digits would make int() raise: no line number has more than eight
    return 0 < len(text) <= _LINE_DIGITS and text.isascii() and text.isdigit()


def parse_authorship(text: str) -> Authorship | None:
    """A note's text -> its attestations and metadata; None when it is not one."""
    head, sep, tail = text.partition("\n---\n")
    if not sep:
        if text.startswith("---\n"):  # no attestation at all
            head, tail = "", text[4:]
        else:
            return None
    if len(text) > MAX_NOTE_BYTES:
        return None
    try:
        meta = orjson.loads(tail)  # nesting past 1,024 levels is an error, not a RecursionError
    except orjson.JSONDecodeError:
        return None
    if not isinstance(meta, dict) or not str(meta.get("schema_version", "")).startswith(
        "authorship/"
    ):
        return None
    result = Authorship(meta=meta)
    current: str | None = None
    budget = MAX_NOTE_LINES
    for line in head.split("\n"):
        if not line.strip():
            continue
        if line.startswith("  ") and current is not None:
            key, _, spec = line[2:].partition(" ")
            ranges = _ranges(spec.strip())
            if ranges:
                budget -= sum(b - a + 1 for a, b in ranges)
            if key and ranges and budget >= 0 and len(key) <= MAX_KEY:
                result.files.setdefault(current, []).append((key, ranges))
            continue
        if line[0].isspace():
            continue  # an entry before any path, or not two spaces: skipped
        current = line[1:-1] if len(line) > 1 and line[0] == line[-1] == '"' else line
        if len(current) > MAX_PATH:
            current = None
    return result


class GitAiLookup:
    """(commit, path, line) -> the git-ai author, reading each commit's note once."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self.repo = repo
        self.notes: dict[str, Authorship | None] = {}

    def note(self, commit: str) -> Authorship | None:
        if commit not in self.notes:
            self.notes[commit] = self._read(commit)
        return self.notes[commit]

    def _read(self, commit: str) -> Authorship | None:
        from deja_blame.notes.store import read_note_text

        # its size read first, never loaded past MAX_NOTE_BYTES; a ref of the wrong kind is None
        text = read_note_text(self.repo, commit, GITAI_REF)
        return parse_authorship(text) if text is not None else None

    def __call__(self, commit: str, path: str, line: int) -> Author | None:
        note = self.note(commit)
        return note.author_of(path, line) if note is not None else None


def _deja_id(tool: str) -> str:
    # the registry imports every agent's plug-in: only where git-ai's notes are read
    from deja_blame.transcripts.registry import from_other_name

    return from_other_name(tool)


def gitai_lookup_for(repo: pygit2.Repository) -> GitAiLookup | None:
    """A lookup over the repository's git-ai notes, or None when it has none."""
    from deja_blame.gitcli import git_errors

    try:
        repo.references[GITAI_REF]
    except git_errors():
        return None
    return GitAiLookup(repo)
