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

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from deja_blame.transcripts.registry import from_other_name

if TYPE_CHECKING:  # pygit2 is imported where a note is read: a warm blame never needs it
    import pygit2

GITAI_REF = "refs/notes/ai"
SCHEMA = "authorship/3.0.0"
MAX_NOTE_BYTES = 16 * 1024 * 1024  # as deja's own notes: bigger ones are not read
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
            agent=from_other_name(tool) if tool else None,  # agent_id.tool, in deja's ids
            model=_str(agent_id.get("model")),
            tool_session=_str(agent_id.get("id")),
        )


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _ranges(spec: str) -> list[tuple[int, int]] | None:
    out: list[tuple[int, int]] = []
    for part in spec.split(","):
        a, _, b = part.partition("-")
        if not a.isdigit() or (b and not b.isdigit()):
            return None
        start, end = int(a), int(b or a)
        if start < 1 or end < start:
            return None
        out.append((start, end))
    return out


def parse_authorship(text: str) -> Authorship | None:
    """A note's text -> its attestations and metadata; None when it is not one."""
    head, sep, tail = text.partition("\n---\n")
    if not sep:
        if text.startswith("---\n"):  # no attestation at all
            head, tail = "", text[4:]
        else:
            return None
    try:
        meta = json.loads(tail)
    except ValueError:
        return None
    if not isinstance(meta, dict) or not str(meta.get("schema_version", "")).startswith(
        "authorship/"
    ):
        return None
    result = Authorship(meta=meta)
    current: str | None = None
    for line in head.split("\n"):
        if not line.strip():
            continue
        if line.startswith("  ") and current is not None:
            key, _, spec = line[2:].partition(" ")
            ranges = _ranges(spec.strip())
            if key and ranges:
                result.files.setdefault(current, []).append((key, ranges))
            continue
        if line[0].isspace():
            continue  # an entry before any path, or not two spaces: skipped
        current = line[1:-1] if len(line) > 1 and line[0] == line[-1] == '"' else line
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
        import pygit2

        try:
            note = self.repo.lookup_note(commit, GITAI_REF)
            blob = self.repo[note.id]
        except (KeyError, ValueError, pygit2.GitError):
            return None
        if not isinstance(blob, pygit2.Blob) or blob.size > MAX_NOTE_BYTES:
            return None
        return parse_authorship(blob.data.decode("utf-8", "replace"))

    def __call__(self, commit: str, path: str, line: int) -> Author | None:
        note = self.note(commit)
        return note.author_of(path, line) if note is not None else None


def gitai_lookup_for(repo: pygit2.Repository) -> GitAiLookup | None:
    """A lookup over the repository's git-ai notes, or None when it has none."""
    import pygit2

    try:
        repo.references[GITAI_REF]
    except (KeyError, pygit2.GitError):
        return None
    return GitAiLookup(repo)
