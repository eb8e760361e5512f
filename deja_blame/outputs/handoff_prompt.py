"""The handoff prompt: what a new agent session needs to carry on an indexed one.

``build_prompt(session)`` gives, in this order: what seems left open, the goal
(the user's requests, newest first), what was done (files edited, with how many
of the lines the session wrote are still in the working tree), the last
commands with their exit codes, and the agent's last message. The text is
redacted (``outputs.redact``), made inert (no control characters) and bounded:
a long session is summarised (fewer, shorter items, newest first) until it
fits, and the result is never cut in the middle of a line.

Working-tree files are read only inside the session's project directory, or,
when the clone has moved, inside the repository the caller stands in: a path
that leaves them (``..``, a symlink pointing outside) is not read.
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
import stat
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from deja_blame.index.fingerprint import normalise_line
from deja_blame.models import Command, Edit, Session
from deja_blame.output import inert, terminal, utc_minute, utc_second
from deja_blame.outputs.redact import redact
from deja_blame.transcripts.registry import display_name
from deja_blame.transcripts.text import epoch_of

__all__ = (
    "DEFAULT_LIMIT",
    "FileState",
    "build_prompt",
    "check_files",
    "is_test_command",
    "locate",
    "project_dir",
)

DEFAULT_LIMIT = 16_000  # characters
MAX_READ_BYTES = 8 * 1024 * 1024  # a working-tree file larger than this is not compared

# pytest, python -m pytest, npm test, npm run test:unit, yarn test, go test ./...,
# cargo test, mvn -q test, ./gradlew test, make check, rspec, dotnet test, ...
_TEST_COMMAND = re.compile(
    r"""(?x)(?:^|[\s;&|(/])(?:
        (?:python[\d.]*\s+-m\s+)?(?:pytest|py\.test|unittest|tox|nox)
      | (?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test(?::[\w:-]+)?
      | npx\s+(?:jest|vitest|mocha|playwright\s+test)
      | jest | vitest | mocha | karma | phpunit | rspec | ctest
      | go\s+test | cargo\s+(?:test|nextest) | deno\s+test | mix\s+test | swift\s+test
      | dotnet\s+test | zig\s+build\s+test | (?:bundle\s+exec\s+)?rake\s+(?:test|spec)
      | (?:mvn|\./mvnw|gradle|\./gradlew)\s+(?:[-\w.:=]+\s+)*?(?:test|check|verify)
      | make\s+(?:[-\w.=]+\s+)*?(?:test|tests|check)
    )(?=$|[\s;&|)])"""
)

# Tool is running as a background task with task id: ...
# Task Description: npm run dev
_BACKGROUND = re.compile(r"running as a background task", re.IGNORECASE)
_TASK_DESCRIPTION = re.compile(r"^[ \t]*Task Description:[ \t]*(.*?)[ \t]*$", re.MULTILINE)


def is_test_command(command: str) -> bool:
    """Whether ``command`` runs a test suite (pytest, npm test, go test, cargo test, ...)."""
    return bool(_TEST_COMMAND.search(command))


# -- the working tree ------------------------------------------------------------------


@dataclass
class FileState:
    """One edited file: what the session did to it and what of that is still there."""

    path: str  # as transcribed
    shown: str  # relative to the project when under it
    edits: int = 0
    added: int = 0
    removed: int = 0
    by_user: int = 0  # edits the transcript reports as made by the person
    written: list[str] = field(default_factory=list)  # net lines the session left
    kept: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    last_edit: int = 0  # position of the session's last edit to it
    found_at: Path | None = None
    note: str | None = None  # why nothing was compared


def _under(path: str, base: str) -> str | None:
    """``path`` relative to ``base`` (both normalised, absolute), or None when outside."""
    if path == base:
        return ""
    prefix = base if base.endswith("/") else base + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


def _inside(candidate: Path, base: Path) -> bool:
    """``candidate``, symlinks followed, is ``base`` or lies under it."""
    try:
        real = candidate.resolve()
        root = base.resolve()
    except (OSError, RuntimeError):
        return False
    return real == root or root in real.parents


def _read_lines(candidate: Path, base: Path) -> list[str] | None:
    if not _inside(candidate, base):
        return None
    try:
        st = os.stat(candidate)
        # a FIFO or device would block or never end; a huge file is not source
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_READ_BYTES:
            return None
        with open(candidate, "rb") as fh:
            data = fh.read(MAX_READ_BYTES + 1)
    except OSError:
        return None
    return data.decode("utf-8", "replace").splitlines()


def project_dir(project: str) -> Path | None:
    """The session's project as an existing directory, or None.

    Unknown (``-``) and filesystem roots do not count: a root as the project
    would put every file of the machine "inside the project".
    """
    if project in ("", "-"):
        return None
    clean = posixpath.normpath(project.replace("\\", "/"))
    if clean in ("/", "//") or re.match(r"^[A-Za-z]:/?$", clean):
        return None
    try:
        return Path(clean) if os.path.isdir(clean) else None
    except (OSError, ValueError):
        return None


def locate(
    path: str, project: str, repo_root: Path | None
) -> tuple[str, Path | None, list[str] | None, str | None]:
    """Where the session's ``path`` is now: (shown, file, its lines, note).

    Looked up under the project when it still exists; otherwise (the clone
    moved, or the project is unknown) relative to ``repo_root``, trying the
    longest trailing part of the path first. Never outside those two, and,
    when the project holds the repository (a project inferred from paths the
    session touched can be as wide as their common parent), never outside
    the repository.
    """
    clean = posixpath.normpath(path.replace("\\", "/")) if path else path
    base = posixpath.normpath(project) if project not in ("", "-") else None
    rel = _under(clean, base) if base else None
    shown = rel if rel else clean
    if base and project_dir(base) is not None:
        if rel is None:
            return shown, None, None, "outside the project: not checked"
        limit = Path(base)
        if repo_root is not None:
            root_text = posixpath.normpath(str(repo_root))
            if _under(root_text, base):  # the repository lies strictly inside the project
                if _under(clean, root_text) is None:
                    return shown, None, None, "outside the repository: not checked"
                limit = repo_root
        candidate = Path(base) / rel
        lines = _read_lines(candidate, limit)
        if lines is None:
            return shown, None, None, _missing(candidate, limit)
        return shown, candidate, lines, None
    if repo_root is None:
        return shown, None, None, "project directory not found: not checked"
    parts = [p for p in clean.split("/") if p and p not in (".", "..")]
    if parts and re.match(r"^[A-Za-z]:$", parts[0]):
        parts = parts[1:]  # a Windows drive
    shortest = max(1, len([p for p in (rel or "").split("/") if p]))
    for n in range(len(parts), shortest - 1, -1):
        candidate = repo_root.joinpath(*parts[-n:])
        lines = _read_lines(candidate, repo_root)
        if lines is not None:
            return shown, candidate, lines, None
    return shown, None, None, "not found in the working tree (deleted or moved?)"


def _missing(candidate: Path, base: Path) -> str:
    if not _inside(candidate, base):
        return "leads outside the project: not read"
    if not candidate.exists():
        return "not in the working tree any more (deleted or moved?)"
    return "not a readable text file: not checked"


class _Written:
    """The lines a session left in one file, in order; removal by content, newest first."""

    def __init__(self) -> None:
        self.lines: list[str | None] = []
        self.where: dict[str, list[int]] = {}  # normalised line -> positions, oldest first

    def add(self, line: str) -> None:
        norm = normalise_line(line)
        if norm:  # blank lines say nothing
            self.where.setdefault(norm, []).append(len(self.lines))
            self.lines.append(line)

    def remove(self, line: str) -> None:
        stack = self.where.get(normalise_line(line))
        if stack:
            self.lines[stack.pop()] = None

    def live(self) -> list[str]:
        return [x for x in self.lines if x is not None]


def check_files(session: Session, repo_root: Path | None = None) -> list[FileState]:
    """Each edited file, in order of first edit, with the lines the session left there.

    The session's own later edits count: a line it added and then replaced is
    not expected in the file. Blank lines are not counted.
    """
    states: dict[str, FileState] = {}
    written: dict[str, _Written] = {}
    for i, edit in enumerate(session.edits):
        fs = states.get(edit.path)
        if fs is None:
            fs = states[edit.path] = FileState(path=edit.path, shown=edit.path)
            written[edit.path] = _Written()
        fs.last_edit = i
        _fold(fs, written[edit.path], edit)
    for fs in states.values():
        fs.written = written[fs.path].live()
        shown, found, lines, note = locate(fs.path, session.project, repo_root)
        fs.shown, fs.found_at, fs.note = shown, found, note
        if lines is None:
            continue
        present = Counter(normalise_line(ln) for ln in lines)
        for line in fs.written:
            norm = normalise_line(line)
            if present[norm] > 0:
                present[norm] -= 1
                fs.kept.append(line)
            else:
                fs.gone.append(line)
    return list(states.values())


def _fold(fs: FileState, written: _Written, edit: Edit) -> None:
    for line in edit.removed:
        written.remove(line)
    if edit.source == "user":
        fs.by_user += 1
        return
    fs.edits += 1
    fs.added += len(edit.added)
    fs.removed += len(edit.removed)
    for line in edit.added:
        written.add(line)


# -- commands ----------------------------------------------------------------------------


def _background_commands(session: Session) -> set[str]:
    """Commands a tool step reports as sent to the background."""
    out: set[str] = set()
    for m in session.messages:
        if m.role == "tool" and _BACKGROUND.search(m.text):
            d = _TASK_DESCRIPTION.search(m.text)
            if d and d.group(1):
                out.add(d.group(1).strip())
    return out


def _is_background(cmd: Command, background: set[str]) -> bool:
    if cmd.exit_code is not None:
        return False
    return (cmd.status or "").upper() == "RUNNING" or cmd.command.strip() in background


def _outcome(cmd: Command, background: set[str]) -> str:
    test = is_test_command(cmd.command)
    if cmd.exit_code is None:
        if _is_background(cmd, background):
            return "sent to the background, no exit code recorded"
        return "exit code not recorded"
    if cmd.exit_code == 0:
        return "exit 0" + (", tests passed" if test else "")
    return f"exit {cmd.exit_code}" + (", FAILING TEST RUN" if test else ", failed")


# -- rendering -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Caps:
    requests: int | None  # how many requests (newest first); None = all
    files: int | None
    commands: int
    lines: int  # sample lines shown per file (kept / gone)
    chars: int  # longest item before it is shortened
    last_words: int  # characters of the agent's last message


# From everything down to the bare minimum, in small steps so that a long
# session keeps as much as fits. Each level keeps the newest items.
_LEVELS = (
    _Caps(None, None, 15, 5, 4000, 2000),
    _Caps(60, 80, 15, 4, 2500, 1500),
    _Caps(40, 60, 12, 3, 1500, 1200),
    _Caps(30, 40, 10, 3, 1000, 1000),
    _Caps(20, 30, 10, 2, 800, 800),
    _Caps(15, 20, 8, 2, 600, 600),
    _Caps(10, 15, 8, 1, 400, 400),
    _Caps(7, 10, 6, 1, 300, 300),
    _Caps(5, 8, 5, 1, 240, 240),
    _Caps(3, 5, 3, 0, 160, 160),
    _Caps(2, 4, 3, 0, 120, 100),
    _Caps(1, 3, 2, 0, 100, 0),
)


# Transcript texts are redacted whole, before they are shortened (a token cut
# in two would no longer be recognised), once per build: every level of
# summarising renders the same texts again.
# Control characters go first, so that none can split a token in two.
@functools.lru_cache(maxsize=4096)
def _redacted(text: str) -> str:
    return redact(inert(text))


def _clip(text: str, limit: int) -> str:
    """At most ``limit`` characters: whole lines where possible, a marked cut otherwise."""
    if len(text) <= limit:
        return text
    out: list[str] = []
    used = 0
    for line in text.split("\n"):
        if used + len(line) + 1 > limit:
            break
        out.append(line)
        used += len(line) + 1
    if not out:
        out = [text[: max(1, limit)].rstrip()]
    kept = "\n".join(out)
    return kept + f" … [{len(text) - len(kept)} more characters]"


def _item(text: str, limit: int, indent: str = "  ") -> str:
    """A list item: its continuation lines indented so the list stays readable."""
    clipped = _clip(_redacted(text.strip()), limit)
    return clipped.replace("\n", "\n" + indent)


def _quote(line: str, limit: int = 160) -> str:
    one = terminal(_redacted(line.strip()))
    if len(one) > limit:
        one = one[: limit - 1] + "…"
    return one


def _time(at: str | None) -> str:
    """A request's time as deja's text shows agents' times: ``2026-07-17 09:01 UTC``."""
    if not at:
        return ""
    return terminal(utc_minute(at)) + " "


def _open_items(session: Session, files: list[FileState], background: set[str]) -> list[str]:
    out: list[str] = []
    cmds = session.commands
    tests = [c for c in cmds if is_test_command(c.command) and c.exit_code is not None]
    if tests:
        last = tests[-1]
        if last.exit_code != 0:
            out.append(
                f"The last test run failed (exit {last.exit_code}): `{_quote(last.command)}`."
                " Make it pass."
            )
    if cmds:
        last = cmds[-1]
        if last.exit_code not in (None, 0) and not is_test_command(last.command):
            code = last.exit_code
            out.append(f"The last command failed (exit {code}): `{_quote(last.command)}`.")
    for cmd in cmds:
        if _is_background(cmd, background):
            out.append(
                f"Started in the background, no exit code recorded: `{_quote(cmd.command)}`"
                " (check whether it is still running or what it reported)."
            )
    users = [m for m in session.messages if m.role == "user" and m.text]
    agent_edits = [e for e in session.edits if e.source != "user"]
    if users and agent_edits:
        last_user, last_edit = users[-1], agent_edits[-1]
        tu, te = epoch_of(last_user.at), epoch_of(last_edit.at)
        if tu is not None and te is not None and tu > te:
            out.append(
                "The last request came after the last edit and may not be done yet: "
                f"\u201c{_quote(last_user.text, 300)}\u201d"
            )
    elif users and not agent_edits:
        out.append("No file was edited in that session.")
    for fs in files:
        if fs.found_at is not None and fs.written and not fs.kept:
            out.append(
                f"None of the lines the session wrote to {terminal(fs.shown)} are in the working tree"
                " any more (reverted or rewritten since?)."
            )
    return out


def _render(session: Session, files: list[FileState], caps: _Caps) -> str:
    background = _background_commands(session)
    lines: list[str] = [
        f"You are taking over from an earlier {display_name(session.source)}"
        " agent session. Carry on where it"
        " left off: check the current state of the files and the tests first, then continue"
        " with what is left open.",
        "",
        # one line each: a newline in a field would start a line of the prompt's own
        f"Previous session: {terminal(session.session_id)}",
        f"Project: {terminal(session.project)}",
        f"Time: {terminal(utc_second(session.started_at) or '?')}"
        f" -> {terminal(utc_second(session.ended_at) or '?')}",
        "(Summary by deja handoff. Text quoted from that session; secrets are redacted.)",
    ]

    opened = _open_items(session, files, background)
    lines += ["", "## What seems left open"]
    lines += [f"- {_item(x, caps.chars)}" for x in opened] or ["- Nothing obvious."]

    users = [m for m in session.messages if m.role == "user" and m.text]
    lines += ["", "## Goal: the user's requests, newest first"]
    if not users:
        lines.append("- (no user request recorded)")
    shown_reqs = users[::-1] if caps.requests is None else users[::-1][: caps.requests]
    for m in shown_reqs:
        lines.append(f"- {_time(m.at)}{_item(m.text, caps.chars)}")
    left_out = len(users) - len(shown_reqs)
    if left_out > 0:
        lines.append(f"- ({left_out} earlier requests left out; the first one was:)")
        lines.append(f"- {_time(users[0].at)}{_item(users[0].text, caps.chars)}")

    lines += ["", "## What was done: files edited, most recently edited first"]
    if not files:
        lines.append("- (no file edits recorded)")
    newest = sorted(files, key=lambda f: f.last_edit, reverse=True)
    shown_files = newest if caps.files is None else newest[: caps.files]
    for fs in shown_files:
        lines += _file_lines(fs, caps)
    if len(files) > len(shown_files):
        lines.append(f"- ({len(files) - len(shown_files)} more files left out)")

    cmds = session.commands
    lines += ["", "## Last commands, newest first (with exit codes)"]
    if not cmds:
        lines.append("- (no commands recorded)")
    for cmd in cmds[::-1][: caps.commands]:
        where = f"  (in {terminal(cmd.cwd)})" if cmd.cwd and cmd.cwd != session.project else ""
        lines.append(f"- `{_item(cmd.command, caps.chars)}` -> {_outcome(cmd, background)}{where}")
    if len(cmds) > caps.commands:
        lines.append(f"- ({len(cmds) - caps.commands} earlier commands left out)")

    last_words = [m for m in session.messages if m.role == "assistant" and m.text]
    if last_words and caps.last_words:
        lines += ["", "## The agent's last message"]
        # indented, as every quoted text: no line of it reads as a heading of deja's
        lines.append("  " + _item(last_words[-1].text, caps.last_words))
    return "\n".join(lines) + "\n"


def _file_lines(fs: FileState, caps: _Caps) -> list[str]:
    edits = f"{fs.edits} edit" + ("s" if fs.edits != 1 else "")
    head = f"- {terminal(fs.shown)}: +{fs.added} -{fs.removed} lines in {edits}"
    if fs.by_user:
        head += f" (and {fs.by_user} change(s) by the person)"
    out = [head]
    if fs.note:
        out.append(f"  {fs.note}")
    elif fs.written:
        out.append(
            f"  {len(fs.kept)} of the {len(fs.written)} non-blank lines the session left there"
            " are still in the working tree"
        )
        if caps.lines:
            out += [f"    still there: {_quote(x)}" for x in fs.kept[: caps.lines]]
            out += [f"    gone: {_quote(x)}" for x in fs.gone[: caps.lines]]
    return out


def _fit(text: str, limit: int) -> str:
    """Whole lines only: drop from the end until ``text`` fits in ``limit`` characters."""
    if len(text) <= limit:
        return text
    note = "[... shortened to fit]\n"
    out: list[str] = []
    used = len(note)
    for line in text.splitlines(keepends=True):
        if used + len(line) > limit:
            break
        out.append(line)
        used += len(line)
    return "".join(out) + (note if used <= limit else "")


def _finish(text: str) -> str:
    return redact(inert(text))


def build_prompt(
    session: Session,
    repo_root: Path | None = None,
    limit: int = DEFAULT_LIMIT,
    files: Iterable[FileState] | None = None,
) -> str:
    """The handoff prompt for ``session``, at most ``limit`` characters.

    ``repo_root`` is the repository the caller stands in: where edited files are
    looked up when the session's project directory no longer exists.
    """
    states = list(files) if files is not None else check_files(session, repo_root)
    text = ""
    try:
        for caps in _LEVELS:
            text = _finish(_render(session, states, caps))
            if len(text) <= limit:
                return text
        return _fit(text, limit)
    finally:
        _redacted.cache_clear()
