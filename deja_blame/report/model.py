"""The report as plain data: what ``collect`` builds and every renderer reads.

Nothing here knows about git, SQLite or an output format. Every string that
came from a transcript (prompts, commands) has been through ``redact`` before
it lands in these classes; the renderers still escape it for their format.

``Report.to_json`` is the JSON format (``docs/report.md`` documents it): field
names are stable, new fields may be added.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from deja_blame.models import UNKNOWN_AGENT

REPORT_SCHEMA = 1


# how to show the person's requests, said where a report leaves them out: a request a
# transcript here holds is shown where the person opted in (a report is made to be
# shared); one a commit's note carries was published by its author, and is shown as
# deja why, the hover and MCP show it (trial 16 #6)
PROMPTS_HINT = (
    "deja report --prompts shows them (redacted); git config deja.notes.prompts true"
    " shows them by default, and publishes them in the notes"
)
# where every session left without one is known from its note alone (a reviewer's clone)
NOTED_PROMPTS_HINT = (
    "a note carries its session's first request only where its author set"
    " git config deja.notes.prompts true"
)


def prompts_hint(report: Report) -> str | None:
    """What to say of the requests a report leaves out; None where none is left out
    (every session's shown, or --no-prompts: the person chose)."""
    missing = [s for s in report.sessions if not s.first_prompt]
    if report.prompts or report.no_prompts or not missing:
        return None
    return PROMPTS_HINT if any(s.indexed for s in missing) else NOTED_PROMPTS_HINT


def pct(part: int, whole: int) -> float:
    """``part`` as a percentage of ``whole``, one decimal; 0.0 when there is no whole."""
    return round(100.0 * part / whole, 1) if whole else 0.0


def time_span(started: str | None, ended: str | None, arrow: str) -> str:
    """A session's time in a report's words, each time already escaped by the caller's
    renderer: ``A -> B``; ``started A`` or ``ended B`` where a note or transcript gives
    one end only (a reviewer's clone with notes alone); ``time not known`` for neither.
    It showed ``A -> ?``, which reads as broken output."""
    if started and ended:
        return f"{started} {arrow} {ended}"
    if started:
        return f"started {started}"
    if ended:
        return f"ended {ended}"
    return "time not known"


@dataclass
class Counts:
    """Lines introduced, and how many of them each session wrote."""

    added: int = 0
    by_session: dict[str, int] = field(default_factory=dict)

    @property
    def by_sessions(self) -> int:
        return sum(self.by_session.values())

    @property
    def by_people(self) -> int:
        """Lines no session wrote: a person, or unknown."""
        return self.added - self.by_sessions

    @property
    def sessions_share(self) -> float:
        return self.by_sessions / self.added if self.added else 0.0

    def add(self, other: Counts) -> None:
        self.added += other.added
        for sid, n in other.by_session.items():
            self.by_session[sid] = self.by_session.get(sid, 0) + n

    def to_json(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "by_sessions": self.by_sessions,
            "by_people": self.by_people,
            "by_sessions_pct": pct(self.by_sessions, self.added),
            "by_people_pct": pct(self.by_people, self.added),
            "by_session": dict(sorted(self.by_session.items(), key=lambda kv: (-kv[1], kv[0]))),
        }


@dataclass
class FileReport:
    path: str
    counts: Counts

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, **self.counts.to_json()}


@dataclass
class CommandRun:
    command: str  # redacted
    exit_code: int | None
    at: str | None
    is_test: bool = False

    @property
    def failed(self) -> bool:
        return self.exit_code is not None and self.exit_code != 0

    def to_json(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "exit_code": self.exit_code,
            "at": self.at,
            "test": self.is_test,
        }


@dataclass
class SessionFile:
    path: str
    written: int = 0  # lines of the session introduced by commits in the range
    surviving: int = 0  # of the session's range lines, still there at the tip

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "written": self.written, "surviving": self.surviving}


@dataclass
class SessionReport:
    session_id: str
    agent: str = UNKNOWN_AGENT
    project: str = "-"
    # the index's folder of a session shown ``-`` (another clone, another folder):
    # the text report (a person's, on this machine) shows it; what is shared never
    # does (not in to_json, the Markdown or the HTML)
    local_project: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    indexed: bool = False  # False: known only from commit notes (no transcript here)
    first_prompt: str | None = None  # redacted; None with --no-prompts or when unknown
    requests: list[str] = field(default_factory=list)  # later user requests, redacted
    files: dict[str, SessionFile] = field(default_factory=dict)
    commands: list[CommandRun] = field(default_factory=list)
    colour: int = 0  # the session's position in the report: one colour each
    # known only from notes: what they recorded of its tests (``notes/public.py``'s
    # NOTED_TESTS); None when they say nothing (a note from before they did)
    noted_tests: str | None = None

    @property
    def written(self) -> int:
        return sum(f.written for f in self.files.values())

    @property
    def surviving(self) -> int:
        return sum(f.surviving for f in self.files.values())

    @property
    def last_test(self) -> CommandRun | None:
        for cmd in reversed(self.commands):
            if cmd.is_test:
                return cmd
        return None

    @property
    def tests_status(self) -> str | None:
        """``passed``, ``failed``, ``unknown`` (no exit code) of the last test-like command;
        None when the session ran none."""
        from deja_blame.suites import tests_status

        if self.last_test is None:
            return self.noted_tests if self.noted_tests != "none" else None
        return tests_status([c.exit_code for c in self.commands if c.is_test])

    def prompt_of(self, request: int | None) -> str | None:
        """Request ``request`` (0 = the first prompt) of the session, when known."""
        if request is None:
            return self.first_prompt
        if request == 0:
            return self.first_prompt
        if 0 < request <= len(self.requests):
            return self.requests[request - 1]
        return self.first_prompt

    def to_json(self) -> dict[str, Any]:
        last = self.last_test
        return {
            "session_id": self.session_id,
            "agent": self.agent,
            "project": self.project,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "indexed": self.indexed,
            "first_prompt": self.first_prompt,
            "requests": list(self.requests),
            "written": self.written,
            "surviving": self.surviving,
            "files": [
                f.to_json() for f in sorted(self.files.values(), key=lambda f: (-f.written, f.path))
            ],
            "commands": [c.to_json() for c in self.commands],
            "tests": None
            if self.tests_status is None
            else {
                # from a note (no transcript here): no command, no exit code
                "command": last.command if last else None,
                "exit_code": last.exit_code if last else None,
                "status": self.tests_status,
            },
            "tests_failed": self.tests_status == "failed",
        }


@dataclass
class CommitReport:
    sha: str
    parents: list[str]
    subject: str
    author: str
    time: str  # committer time, RFC 3339 UTC
    counts: Counts
    source: str  # "note" | "index" | "none": where the attribution came from

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1

    def to_json(self) -> dict[str, Any]:
        return {
            "sha": self.sha,
            "parents": list(self.parents),
            "merge": self.is_merge,
            "subject": self.subject,
            "author": self.author,
            "time": self.time,
            "attribution": self.source,
            **self.counts.to_json(),
        }


@dataclass
class ShownLine:
    """One changed line at the tip, for the HTML view."""

    line: int
    text: str
    session: str | None
    request: int | None = None  # which request of the session (0 = first prompt)


@dataclass
class FileLines:
    path: str
    # runs of consecutive changed lines; a gap between runs is drawn as an ellipsis
    runs: list[list[ShownLine]] = field(default_factory=list)


@dataclass
class Report:
    spec: str  # the range as asked (or the default it stood for)
    tip: str | None  # the commit whose version is "final"
    base: list[str]  # the commits excluded (what ^X hid)
    commits: list[CommitReport]
    totals: Counts
    files: list[FileReport]  # sorted by agent share, then lines
    sessions: list[SessionReport]  # by lines written in the range
    prompts: bool
    tool: str
    notes_found: int = 0  # commits of the range with a note
    indexed_sessions: int = 0
    lines: list[FileLines] = field(default_factory=list)  # HTML only
    lines_cut: int = 0  # changed lines left out of ``lines`` (the view is capped)
    no_prompts: bool = False  # --no-prompts: not even the requests the notes carry

    def session(self, sid: str) -> SessionReport | None:
        for s in self.sessions:
            if s.session_id == sid:
                return s
        return None

    @property
    def failed_sessions(self) -> list[SessionReport]:
        return [s for s in self.sessions if s.tests_status == "failed"]

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": REPORT_SCHEMA,
            "tool": self.tool,
            "range": {
                "spec": self.spec,
                "tip": self.tip,
                "base": list(self.base),
                "commits": len(self.commits),
            },
            "prompts": self.prompts,
            "totals": {**self.totals.to_json(), "commits": len(self.commits)},
            "files": [f.to_json() for f in self.files],
            "sessions": [s.to_json() for s in self.sessions],
            "commits": [c.to_json() for c in self.commits],
            "tests_failed": [s.session_id for s in self.failed_sessions],
        }
