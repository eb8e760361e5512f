"""The accuracy simulator: a git repository, agent sessions and a person, with known authorship.

A scenario drives a ``Sim``: sessions edit files through a real-format
transcript (``antigravity_writer``), the person edits files directly,
commits happen at controlled times. Every file is kept in memory as a list of
``Line(text, owner)`` next to the file on disk, so that for every final line we
know who wrote it:

- an agent edit gives its written side (the ``+`` lines of the very diff the
  transcript records, exact text) to the session; context lines keep their owner;
- a person's edit is compared whitespace-normalised: a line whose normalised
  text did not change keeps its owner (a formatter's reindent), any other line
  the person touched is the person's (``PERSON``), including a line reverted to
  its original text;
- a move keeps owners; ``git mv`` carries them to the new path.

``expect(path, rev)`` freezes the truth for one blame; ``run_deja`` indexes the
transcripts, runs ``deja blame --json`` for each and ``score`` compares.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from antigravity_writer import TranscriptWriter

PERSON = "person"
T0 = 1784278800  # 2026-07-17T09:00:00Z
_NAMESPACE = uuid.UUID("7d3c2a10-5d2e-4c57-9f3e-6a1d1f0e9b21")
_WS = re.compile(r"\s+")


def normalise(text: str) -> str:
    return _WS.sub("", text)


@dataclass
class Line:
    text: str
    owner: str  # PERSON or a session id
    # Other answers that are also right (PERSON: no session). Only a whole-file
    # overwrite sets this: a line it rewrote unchanged was written by both.
    alt: tuple[str, ...] = ()

    def copy(self) -> Line:
        return Line(self.text, self.owner, self.alt)

    @property
    def required(self) -> bool:
        """An agent line that blame must give to its session (counts for recall)."""
        return self.owner != PERSON and PERSON not in self.alt


@dataclass
class Target:
    """One blame to run, with the truth frozen when it was asked for."""

    path: str  # relative to the repository
    rev: str | None  # None: the working tree
    truth: list[Line]


@dataclass
class Mismatch:
    path: str
    rev: str | None
    line: int
    text: str
    expected: str | None  # session label, or None for "no session"
    got: str | None


@dataclass
class Score:
    scenario: str
    lines: int = 0
    agent_lines: int = 0  # lines the truth gives to a session
    attributed: int = 0  # lines blame gave to some session
    correct: int = 0  # of those, given to a session that really wrote them
    found: int = 0  # agent lines given to their session
    mismatches: list[Mismatch] = field(default_factory=list)
    error: str | None = None
    # the same counts by the agent of the session: attributed/correct by the session
    # blame named, agent_lines/found by the session that wrote the line
    by_agent: dict[str, dict[str, int]] = field(default_factory=dict)

    def count(self, agent: str, what: str) -> None:
        row = self.by_agent.setdefault(
            agent, {"attributed": 0, "correct": 0, "agent_lines": 0, "found": 0}
        )
        row[what] += 1

    @property
    def precision(self) -> float:
        return self.correct / self.attributed if self.attributed else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.agent_lines if self.agent_lines else 1.0

    @property
    def wrong(self) -> int:
        """Lines given to a session that did not write them."""
        return self.attributed - self.correct

    @property
    def missed(self) -> int:
        """Agent lines not given to their session."""
        return self.agent_lines - self.found

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "lines": self.lines,
            "agent_lines": self.agent_lines,
            "attributed": self.attributed,
            "correct": self.correct,
            "found": self.found,
            "wrong": self.wrong,
            "missed": self.missed,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "error": self.error,
            "by_agent": self.by_agent,
            "mismatches": [m.__dict__ for m in self.mismatches],
        }


class SimError(RuntimeError):
    pass


def retrack(old: list[Line], new_texts: list[str], owner: str, by_person: bool) -> list[Line]:
    """The file's lines after an edit, with owners.

    The agent's side uses the exact-text ``SequenceMatcher`` that
    ``difflib.unified_diff`` (hence the transcript's diff block) uses, so the
    lines it owns are exactly the ``+`` lines it recorded. A person's side is
    compared whitespace-normalised, so a reindent keeps the owner.
    """
    if by_person:
        a = [normalise(x.text) for x in old]
        b = [normalise(x) for x in new_texts]
    else:
        a = [x.text for x in old]
        b = list(new_texts)
    out: list[Line] = []
    # A person's edit as git's diff sees it: no "popular line" junk heuristic, which
    # in a file of 200+ lines aligned a one-line change inside one of two identical
    # blocks (Go table tests) as the whole block deleted and typed again.
    ops = difflib.SequenceMatcher(None, a, b, autojunk=not by_person).get_opcodes()
    # a session's edit: the lines it removed, by exact text (``_rewritten``)
    removed: dict[str, list[Line]] = {}
    if not by_person:
        for tag, i1, i2, _, _ in ops:
            for x in old[i1:i2] if tag != "equal" else ():
                if x.text.strip():
                    removed.setdefault(x.text, []).append(x)
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            for k in range(i2 - i1):
                kept = old[i1 + k]
                out.append(Line(new_texts[j1 + k], kept.owner, kept.alt))
        elif by_person and tag == "replace":
            out.extend(_reflowed(old[i1:i2], a[i1:i2], new_texts[j1:j2], b[j1:j2], owner))
        elif not by_person:
            out.extend(_rewritten(removed, new_texts[j1:j2], owner))
        else:
            out.extend(Line(t, owner) for t in new_texts[j1:j2])
    _mark_slides(ops, old, out, a, b)
    return out


def _mark_slides(
    ops: list[tuple[str, int, int, int, int]], old: list[Line], out: list[Line], a: list[str],
    b: list[str],
) -> None:  # fmt: skip
    """A block added (or removed) between lines of the same text slides: ``}``,
    blank, ``/**`` added before ``}``, blank, ``/**`` is the same file as added
    after them, and which copy is the new one is the diff's choice (difflib's here,
    git's for blame; git slides hunks by its own heuristics). Either writer is right
    for the lines a slide would trade."""

    def either(x: Line, owner: str) -> None:
        if owner != x.owner and owner not in x.alt:
            x.alt = (*x.alt, owner)

    new_of = {
        i1 + k: j1 + k for tag, i1, i2, j1, _ in ops if tag == "equal" for k in range(i2 - i1)
    }
    kept_new = set(new_of.values())
    for tag, i1, i2, j1, j2 in ops:
        if tag == "insert":
            s = 0  # down: the added block's first lines are the lines after it
            while j1 + s < j2 and j2 + s in kept_new and b[j1 + s] == b[j2 + s]:
                added, kept = out[j1 + s], out[j2 + s]
                added_owner = added.owner
                either(added, kept.owner)
                either(kept, added_owner)
                s += 1
            s = 0  # up: its last lines are the lines before it
            while j2 - 1 - s >= j1 and j1 - 1 - s in kept_new and b[j2 - 1 - s] == b[j1 - 1 - s]:
                added, kept = out[j2 - 1 - s], out[j1 - 1 - s]
                added_owner = added.owner
                either(added, kept.owner)
                either(kept, added_owner)
                s += 1
        elif tag == "delete":
            s = 0  # the kept line after the removed block may be the removed one
            while i1 + s < i2 and new_of.get(i2 + s) == j1 + s and a[i1 + s] == a[i2 + s]:
                either(out[j1 + s], old[i1 + s].owner)
                s += 1
            s = 0
            while (
                i2 - 1 - s >= i1
                and new_of.get(i1 - 1 - s) == j1 - 1 - s
                and a[i2 - 1 - s] == a[i1 - 1 - s]
            ):
                either(out[j1 - 1 - s], old[i2 - 1 - s].owner)
                s += 1


def _rewritten(removed: dict[str, list[Line]], new_texts: list[str], owner: str) -> list[Line]:
    """Lines a session's edit added. A line whose exact text the same edit removed
    (a list reordered, ``MAX_LENGTH,`` kept among new items) is the session's by
    difflib's alignment, the transcript's; git's diff may align the edit otherwise
    and keep the old line: either writer is right (as for a whole-file
    overwrite's unchanged lines)."""
    out = []
    for t in new_texts:
        was = removed.get(t)
        if was and was[0].owner != owner:
            prev = was.pop(0)
            out.append(Line(t, owner, (prev.owner, *prev.alt)))
        else:
            out.append(Line(t, owner))
    return out


def _reflowed(
    old: list[Line], old_norm: list[str], new_texts: list[str], new_norm: list[str], owner: str
) -> list[Line]:
    """Lines a person (a formatter) changed. Where the changed block is, white space
    aside, the same text (lines joined or split), each new line keeps the writer of
    the old line its first character came from. Where it is not (the formatter
    also added a trailing comma, the person changed a word), the same holds line by
    line: a new line all of whose characters are old ones (in order, white space
    aside) keeps its first character's writer; a line with any new character is
    the person's."""
    owner_at: list[Line] = []
    for line, norm in zip(old, old_norm):
        owner_at.extend([line] * len(norm))
    old_joined, new_joined = "".join(old_norm), "".join(new_norm)
    if old_joined == new_joined:
        source: list[int | None] = list(range(len(new_joined)))
    elif len(old_joined) + len(new_joined) > 40_000:
        return [Line(t, owner) for t in new_texts]  # too big to align by character
    else:
        source = [None] * len(new_joined)
        matcher = difflib.SequenceMatcher(None, old_joined, new_joined, autojunk=False)
        for a, b, size in matcher.get_matching_blocks():
            for k in range(size):
                source[b + k] = a + k
    blanks = [line for line, norm in zip(old, old_norm) if not norm]  # in order
    out: list[Line] = []
    pos = 0
    for text, norm in zip(new_texts, new_norm):
        chars = source[pos : pos + len(norm)]
        pos += len(norm)
        if not norm:
            # a blank line: an old blank line of the block, else the next text's writer
            first = source[pos] if pos < len(source) else None
            src = blanks.pop(0) if blanks else owner_at[first] if first is not None else None
            out.append(Line(text, src.owner, src.alt) if src is not None else Line(text, owner))
        elif chars[0] is not None and chars == list(range(chars[0], chars[0] + len(chars))):
            src = owner_at[chars[0]]  # the line is old text, white space aside
            out.append(Line(text, src.owner, src.alt))
        else:
            out.append(Line(text, owner))
    return out


def _trivial(text: str) -> bool:
    """A line of no letters or digits (``}``, ``*/``, blank): nothing tells two apart."""
    return not any(c.isalnum() for c in text)


def _text(lines: Sequence[Line]) -> str:
    return "".join(x.text + "\n" for x in lines)


def _replace_once(text: str, old: str, new: str, where: str) -> str:
    at = text.find(old)
    if at < 0 or not old:
        raise SimError(f"text not found in {where}: {old[:60]!r}")
    return text[:at] + new + text[at + len(old) :]


def deja_command() -> list[str]:
    """How to run deja: ``$DEJA_BENCH_CMD`` (split on spaces) or this Python's module."""
    custom = os.environ.get("DEJA_BENCH_CMD")
    if custom:
        return custom.split()
    return [sys.executable, "-m", "deja_blame"]


MIXED = ("antigravity", "claude-code", "codex")


class Session:
    """One agent session: its transcript writer and the paths it sees the repository under."""

    def __init__(self, sim: Sim, label: str, workspace: str, agent: str | None = None) -> None:
        self.sim = sim
        self.label = label
        self.id = str(uuid.uuid5(_NAMESPACE, f"{sim.name}/{label}"))
        self.workspace = workspace
        self.writer: Any
        self.agent = agent or sim.agent
        if self.agent == "mixed":  # each session one of the three, drawn from its label
            self.agent = MIXED[int(uuid.uuid5(_NAMESPACE, label).hex, 16) % len(MIXED)]
        if self.agent == "claude-code":
            from claude_writer import ClaudeWriter

            self.writer = ClaudeWriter(sim.claude_root, self.id, sim.clock, workspace=workspace)
        elif self.agent == "codex":
            from codex_writer import CodexWriter

            self.writer = CodexWriter(sim.codex_root, self.id, sim.clock, workspace=workspace)
        else:
            self.writer = TranscriptWriter(sim.root, self.id, start=sim.clock, workspace=workspace)

    def abs(self, path: str) -> str:
        return f"{self.workspace}/{path}"

    def _sync(self) -> None:
        self.sim.clock = self.writer.now.timestamp()

    def _start(self) -> None:
        self.writer.set_time(self.sim.clock)

    def user(self, text: str) -> Session:
        self._start()
        self.writer.user(text)
        self._sync()
        return self

    def say(self, text: str) -> Session:
        self._start()
        self.writer.assistant(text)
        self._sync()
        return self

    def run(self, cmd: str, exit_code: int = 0, output: str = "") -> Session:
        self._start()
        self.writer.run_command(cmd, exit_code, cwd=self.workspace, output=output)
        self._sync()
        return self

    def view(self, path: str) -> Session:
        self._start()
        self.writer.view(self.abs(path), content=self.sim.read(path))
        self._sync()
        return self

    def replace(
        self,
        path: str,
        old: str,
        new: str,
        *,
        current: str | None = None,
        apply: bool = True,
        say: str | None = None,
    ) -> Session:
        """A replace_file_content edit of ``path``; ``apply=False`` writes only the transcript.

        ``current`` is the file as the session saw it (default: as it is now).
        """
        self._start()
        before = self.sim.read(path) if current is None else current
        result = self.writer.replace(self.abs(path), old, new, current=before, say=say)
        self._sync()
        if apply:
            if current is not None and current != self.sim.read(path):
                raise SimError("apply=True needs the session to see the file as it is")
            self.sim._set(path, result.after, owner=self.id, by_person=False)
        return self

    def multi_replace(self, path: str, chunks: Sequence[tuple[str, str]]) -> Session:
        self._start()
        result = self.writer.multi_replace(self.abs(path), chunks, current=self.sim.read(path))
        self._sync()
        self.sim._set(path, result.after, owner=self.id, by_person=False)
        return self

    def write_file(self, path: str, content: str, overwrite: bool = False) -> Session:
        """write_to_file: every line of ``content`` is the session's.

        Over an existing file (``overwrite=True``) a line it rewrote unchanged
        was written by both: the session, or (also right) whoever wrote it before.
        """
        exists = path in self.sim.files
        if exists and not overwrite:
            raise SimError(f"{path} exists: pass overwrite=True")
        self._start()
        self.writer.write_file(self.abs(path), content, overwrite=overwrite)
        self._sync()
        self.sim._set(path, content, owner=self.id, by_person=False)
        if exists:
            self.sim.files[path] = [
                x if x.owner == self.id else Line(x.text, self.id, (x.owner, *x.alt))
                for x in self.sim.files[path]
            ]
        return self

    def shell_write(self, path: str, content: str, command: str, *, append: bool = True) -> Session:
        """The session writes ``content`` to ``path`` through its shell: ``command`` (a
        here document, ``cat >> f <<'EOF'``), as the agent would type it. Appended (or
        the file replaced): the new lines are the session's."""
        self._start()
        self.writer.run_command(command, 0, cwd=self.workspace, output="")
        self._sync()
        before = self.sim.read(path) if append and path in self.sim.files else ""
        self.sim._set(path, before + content, owner=self.id, by_person=False)
        return self

    def user_edit(self, path: str, old: str, new: str) -> Session:
        """The person edits while the session runs; the transcript reports it (USER diff)."""
        self._start()
        result = self.writer.user_edit(self.abs(path), old, new, current=self.sim.read(path))
        self._sync()
        self.sim._set(path, result.after, owner=PERSON, by_person=True)
        return self

    def register(self, kind: str = "cli") -> Session:
        self.writer.register_workspace(self.workspace, kind=kind)
        return self


class Sim:
    """A scenario's world: repository, transcript root, clock, and who wrote each line."""

    def __init__(self, workdir: Path, name: str, start: float = T0) -> None:
        self.name = name
        self.workdir = workdir.resolve()
        self.repo = self.workdir / "repo"
        self.root = self.workdir / "antigravity"
        # DEJA_BENCH_AGENT=claude-code: the sessions write Claude Code transcripts;
        # =mixed: each session is Antigravity, Claude Code or Codex CLI, drawn at random
        self.agent = os.environ.get("DEJA_BENCH_AGENT", "antigravity")
        self.claude_root = self.workdir / "claude"
        self.claude_root.mkdir(parents=True, exist_ok=True)
        self.codex_root = self.workdir / "codex"
        self.codex_root.mkdir(parents=True, exist_ok=True)
        self.db = self.workdir / "index.db"
        self.home = self.workdir / "home"
        self.clock = float(start)
        self.files: dict[str, list[Line]] = {}
        self.head: dict[str, list[Line]] = {}  # the last commit's truth
        self.snapshots: dict[str, dict[str, list[Line]]] = {}  # every commit's, by sha
        self.sessions: dict[str, Session] = {}
        self.targets: list[Target] = []
        self.commits: list[tuple[str, float]] = []
        for d in (self.repo, self.root, self.home):
            d.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "commit.gpgsign", "false")

    # -- environment ---------------------------------------------------------

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """A sealed environment: no inherited GIT_/DEJA_ variables, a fake HOME."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("GIT_", "DEJA_")) and k not in ("XDG_DATA_HOME", "XDG_STATE_HOME")
        }
        env.update(
            HOME=str(self.home),
            XDG_DATA_HOME=str(self.home / ".local/share"),
            XDG_STATE_HOME=str(self.home / ".local/state"),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_AUTHOR_NAME="Pat Person",
            GIT_AUTHOR_EMAIL="pat@example.com",
            GIT_COMMITTER_NAME="Pat Person",
            GIT_COMMITTER_EMAIL="pat@example.com",
            GIT_EDITOR="false",
            DEJA_DB=str(self.db),
            DEJA_ANTIGRAVITY_ROOT=str(self.root),
            DEJA_CLAUDE_ROOT=str(self.claude_root),
            DEJA_CODEX_ROOT=str(self.codex_root),
        )
        if "DEJA_BENCH_CMD" in os.environ:
            env["DEJA_BENCH_CMD"] = os.environ["DEJA_BENCH_CMD"]
        env.update(extra or {})
        return env

    def git(self, *args: str, env: dict[str, str] | None = None) -> str:
        proc = subprocess.run(
            ["git", *args], cwd=self.repo, capture_output=True, text=True, env=self.env(env)
        )
        if proc.returncode != 0:
            raise SimError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
        return proc.stdout

    # -- the clock -----------------------------------------------------------

    def advance(self, seconds: float) -> Sim:
        self.clock += seconds
        return self

    # -- files ---------------------------------------------------------------

    def read(self, path: str) -> str:
        return _text(self.files[path])

    def _set(self, path: str, text: str, owner: str, by_person: bool) -> None:
        new_texts = text.splitlines()
        old = self.files.get(path, [])
        self.files[path] = retrack(old, new_texts, owner, by_person)
        disk = self.repo / path
        disk.parent.mkdir(parents=True, exist_ok=True)
        disk.write_text(text, encoding="utf-8")

    def session(
        self, label: str, prompt: str, workspace: str | None = None, agent: str | None = None
    ) -> Session:
        """Start a session (its first user message now) working in ``workspace`` (the repo),
        by ``agent`` (antigravity, claude-code, codex; default DEJA_BENCH_AGENT or antigravity)."""
        s = Session(self, label, workspace or str(self.repo), agent)
        self.sessions[s.id] = s
        s.user(prompt)
        return s

    def person_write(self, path: str, text: str) -> Sim:
        """The person writes a whole file (new, or rewritten: normalised diff keeps owners)."""
        self._set(path, text, owner=PERSON, by_person=True)
        return self

    def person_edit(self, path: str, old: str, new: str) -> Sim:
        """The person replaces the first ``old`` with ``new`` in ``path``."""
        self._set(path, _replace_once(self.read(path), old, new, path), PERSON, True)
        return self

    def person_rewrite(self, path: str, fn: Callable[[str], str]) -> Sim:
        """A tool the person runs over the whole file (a formatter): ``fn(text) -> text``."""
        self._set(path, fn(self.read(path)), PERSON, True)
        return self

    def person_move(self, path: str, block: str, after: str | None = None) -> Sim:
        """Move the whole-line ``block`` after the whole-line text ``after`` (default: the end).

        Owners move with the lines: moving code does not rewrite it.
        """
        lines = self.files[path]
        start, end = self._find_lines(path, block)
        moved = lines[start:end]
        rest = lines[:start] + lines[end:]
        if after is None:
            at = len(rest)
        else:
            texts = [x.text for x in rest]
            want = after.rstrip("\n").split("\n")
            at = -1
            for i in range(len(texts) - len(want) + 1):
                if texts[i : i + len(want)] == want:
                    at = i + len(want)
                    break
            if at < 0:
                raise SimError(f"anchor not found in {path}: {after[:60]!r}")
        self.files[path] = rest[:at] + moved + rest[at:]
        (self.repo / path).write_text(self.read(path), encoding="utf-8")
        return self

    def _find_lines(self, path: str, block: str) -> tuple[int, int]:
        texts = [x.text for x in self.files[path]]
        want = block.rstrip("\n").split("\n")
        for i in range(len(texts) - len(want) + 1):
            if texts[i : i + len(want)] == want:
                return i, i + len(want)
        raise SimError(f"block not found in {path}: {block[:60]!r}")

    # -- git -----------------------------------------------------------------

    def commit(self, message: str, *, amend: bool = False, tz: str = "+0000") -> str:
        """Commit everything at the current clock (author and committer date, in zone ``tz``).

        ``amend=True`` rewrites the last commit the way ``git commit --amend``
        does: the author date stays the old one, only the committer date moves.
        """
        date = f"@{int(self.clock)} {tz}"
        self.git("add", "-A")
        if amend:
            self.git("commit", "-q", "--amend", "--no-edit", env={"GIT_COMMITTER_DATE": date})
            old = self.commits.pop()[0]
            del self.snapshots[old]
        else:
            self.git(
                "commit",
                "-q",
                "-m",
                message,
                env={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date},
            )
        sha = self.git("rev-parse", "HEAD").strip()
        if not amend and self.commits:
            self._git_reading(self.commits[-1][0], sha)
        self.head = {p: [x.copy() for x in ls] for p, ls in self.files.items()}
        self.snapshots[sha] = self.head
        self.commits.append((sha, self.clock))
        self.clock += 1
        return sha

    def _git_reading(self, parent: str, sha: str) -> None:
        """Identical trivial lines (``}``, ``*/``, blank) read as git reads the commit.

        Which of two identical ``}`` a commit added is the diff's choice: the truth
        takes difflib's (each edit's own), ``git blame`` takes git's (the whole
        commit's, with its slider heuristics). Where git keeps a trivial line the
        truth calls new (its writer changed), the line's writer before the commit
        is also right; and the nearest line of that text git calls new, which the
        truth keeps, may be the new writer's: either reading is right for both.
        """
        before = self.snapshots.get(parent, {})
        for path, lines in self.files.items():
            old = before.get(path)
            if old is None or [x.text for x in old] == [x.text for x in lines]:
                continue
            proc = subprocess.run(
                ["git", "blame", "--porcelain", f"{parent}..{sha}", "--", path],
                cwd=self.repo, capture_output=True, text=True, env=self.env(),
            )  # fmt: skip
            if proc.returncode != 0:
                continue
            kept: dict[int, int] = {}  # line (0-based) -> the parent's line git kept
            for row in proc.stdout.split("\n"):
                parts = row.split(" ")
                if len(parts) >= 3 and len(parts[0]) == 40 and parts[1].isdigit():
                    if parts[0] != sha:
                        kept[int(parts[2]) - 1] = int(parts[1]) - 1
            swapped: list[tuple[int, str]] = []  # git's kept lines the truth calls new
            for i, p in kept.items():
                if i >= len(lines) or p >= len(old):
                    continue
                x, was = lines[i], old[p]
                if _trivial(x.text) and x.owner != was.owner and x.text == was.text:
                    swapped.append((i, x.owner))
                    if was.owner not in x.alt:
                        x.alt = (*x.alt, was.owner)
            old_owners = {x.owner for x in old}
            for j, y in enumerate(lines):
                if j in kept or not _trivial(y.text) or y.owner not in old_owners:
                    continue  # a line git calls new that the truth keeps
                near = [(abs(i - j), i, o) for i, o in swapped if lines[i].text == y.text]
                if near:
                    _, i, o = min(near)
                    swapped.remove((i, o))
                    if o not in y.alt and o != y.owner:
                        y.alt = (*y.alt, o)

    def replace_repository(self) -> Sim:
        """The folder now holds another project: its files and history are gone, a new
        repository is made at the same path (sessions of the old one ran here)."""
        import shutil

        shutil.rmtree(self.repo)
        self.repo.mkdir(parents=True)
        self.files, self.head, self.snapshots, self.commits = {}, {}, {}, []
        self.targets = []
        self.git("init", "-q", "-b", "main")
        self.git("config", "commit.gpgsign", "false")
        return self

    def git_mv(self, old: str, new: str) -> Sim:
        (self.repo / new).parent.mkdir(parents=True, exist_ok=True)
        self.git("mv", old, new)
        self.files[new] = self.files.pop(old)
        return self

    def checkout(self, path: str, rev: str | None = None) -> Sim:
        """``git checkout [rev] -- path``: the file (and its owners) as it was at ``rev``.

        Without ``rev`` the person throws away the working-tree changes.
        """
        if rev is None:
            self.git("checkout", "--", path)
            self.files[path] = [x.copy() for x in self.head[path]]
        else:
            sha = self.git("rev-parse", "--verify", f"{rev}^{{commit}}").strip()
            self.git("checkout", sha, "--", path)
            self.files[path] = [x.copy() for x in self.snapshots[sha][path]]
        return self

    # -- expectations and running deja ---------------------------------------

    def expect(self, path: str, rev: str | None = None) -> Sim:
        """Blame ``path`` at ``rev`` (None: the working tree; else any revision git
        resolves to one of the scenario's commits) when the scenario is run."""
        if rev is None:
            source = self.files
        else:
            sha = self.git("rev-parse", "--verify", f"{rev}^{{commit}}").strip()
            source = self.snapshots[sha]
        self.targets.append(Target(path, rev, [x.copy() for x in source[path]]))
        return self

    def label(self, owner: str | None) -> str | None:
        if owner is None or owner == PERSON:
            return None
        s = self.sessions.get(owner)
        return s.label if s else owner

    def deja(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*deja_command(), *args],
            cwd=cwd or self.repo,
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=300,
        )

    def index(self) -> dict[str, Any]:
        proc = self.deja("index", "--root", str(self.root), "--json")
        if proc.returncode != 0:
            raise SimError(f"deja index failed ({proc.returncode}): {proc.stderr.strip()}")
        return json.loads(proc.stdout)

    def blame(self, target: Target) -> dict[str, Any]:
        args = ["blame", target.path, "--json"]
        if target.rev:
            args += ["--rev", target.rev]
        proc = self.deja(*args)
        if proc.returncode != 0:
            raise SimError(
                f"deja {' '.join(args)} failed ({proc.returncode}): "
                f"{proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ''}"
            )
        return json.loads(proc.stdout)

    def annotate(self) -> None:
        """Write every commit's note (``deja annotate --all``): the hooks' steady state,
        where blame reads a commit's note instead of matching its lines again."""
        proc = self.deja("annotate", "--all")
        if proc.returncode != 0:
            last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
            raise SimError(f"deja annotate --all failed ({proc.returncode}): {last}")

    def run_deja(self, notes: bool = False) -> Score:
        """Index, blame every target, and score the answers against the truth; with
        ``notes``, annotate the history first, so blame answers from the notes."""
        score = Score(self.name)
        for t in self.targets:
            score.lines += len(t.truth)
            score.agent_lines += required_count(t.truth)
        try:
            self.index()
            if notes:
                self.annotate()
            for t in self.targets:
                score_target(self, t, self.blame(t), score)
        except (SimError, json.JSONDecodeError, subprocess.TimeoutExpired) as exc:
            score.error = str(exc)
        return score


def score_target(sim: Sim, target: Target, doc: dict[str, Any], score: Score) -> None:
    """Add one blame document's answers to ``score``."""
    got_lines = doc.get("lines") or []
    if [x.get("text") for x in got_lines] != [x.text for x in target.truth]:
        raise SimError(
            f"blame of {target.path}@{target.rev or 'worktree'} returned "
            f"{len(got_lines)} lines that differ from the file ({len(target.truth)} lines)"
        )
    answers = [x.get("session") for x in got_lines]
    dealt = _expected_with_blank_swaps(target.truth, answers)

    def agent_of(sid: str) -> str:
        s = sim.sessions.get(sid)
        return s.agent if s else "other"

    for i, (truth, answer, (expected, alt)) in enumerate(zip(target.truth, answers, dealt), 1):
        ok = {expected} | {None if o == PERSON else o for o in alt}
        required = _required(truth, expected, alt)
        if required and expected is not None:
            score.count(agent_of(expected), "agent_lines")
        if answer is not None:
            score.attributed += 1
            score.count(agent_of(answer), "attributed")
            if answer in ok:
                score.correct += 1
                score.count(agent_of(answer), "correct")
                if required and expected is not None:
                    score.found += 1
                    score.count(agent_of(expected), "found")
        if answer not in ok:
            score.mismatches.append(
                Mismatch(
                    path=target.path,
                    rev=target.rev,
                    line=i,
                    text=truth.text,
                    expected=sim.label(expected),
                    got=sim.label(answer),
                )
            )


def _required(line: Line, expected: str | None, alt: tuple[str, ...]) -> bool:
    """Blame must give this line to a session (blank lines: by the owner dealt to them)."""
    return expected is not None and PERSON not in alt


def required_count(truth: list[Line]) -> int:
    """How many lines of ``truth`` blame must give to their session (recall's denominator)."""
    return sum(1 for x in truth if x.required)


def _expected_with_blank_swaps(
    truth: list[Line], answers: list[str | None]
) -> list[tuple[str | None, tuple[str, ...]]]:
    """The expected session (and other right answers) of each line.

    Blank lines may trade owners among themselves: a blank line carries
    nothing that says which one it is, so when the truth has k blank lines of
    session S, any k blank lines given to S are right. The blank lines' owners
    are dealt out to agree with the answers where they can; every other line is
    scored where it stands.
    """
    expected = [(None if x.owner == PERSON else x.owner, x.alt) for x in truth]
    blanks = [i for i, x in enumerate(truth) if not x.text.strip()]
    pool = [expected[i] for i in blanks]

    def fits(entry: tuple[str | None, tuple[str, ...]], answer: str | None) -> bool:
        owner, alt = entry
        return answer == owner or (PERSON if answer is None else answer) in alt

    unset: list[int] = []
    for i in blanks:
        for rank in (0, 1):  # an exact owner first, then an also-right one
            k = next(
                (
                    k
                    for k, e in enumerate(pool)
                    if (e[0] == answers[i] if rank == 0 else fits(e, answers[i]))
                ),
                None,
            )
            if k is not None:
                expected[i] = pool.pop(k)
                break
        else:
            unset.append(i)
    for i, entry in zip(unset, pool):
        expected[i] = entry
    return expected
