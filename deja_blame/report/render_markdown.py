"""The report as GitHub-flavoured Markdown, sized for a pull-request comment.

A summary table first, the details folded in ``<details>``; never more than
``LIMIT`` characters (GitHub refuses comments over 65,536): when the report is
longer, the longest section loses rows from its end and says how many.
``MARKER`` is a hidden comment that lets CI find and update its own comment.

Text from transcripts is inert here: HTML is escaped, Markdown punctuation is
backslash-escaped, table pipes and backticks become entities, newlines become
spaces and ``@name`` cannot mention anyone.
"""

from __future__ import annotations

from dataclasses import dataclass

from deja_blame.notes.public import project_meaning
from deja_blame.outputs.escape import markdown, markdown_code
from deja_blame.report.model import Report, SessionReport, pct, prompts_hint, time_span
from deja_blame.session_ids import short
from deja_blame.transcripts.registry import label_of

MARKER = "<!-- deja-report -->"
LIMIT = 60_000
PROMPT_CHARS = 300
REQUEST_CHARS = 160
COMMAND_CHARS = 120
MAX_REQUESTS = 12
MAX_COMMANDS = 15
MAX_SESSION_FILES = 20

# the Markdown report's escaping of every field (outputs/escape.py)
md_text = markdown
md_code = markdown_code


def _short(sha: str) -> str:
    return sha[:8]


def _bar(share: float, width: int = 10) -> str:
    filled = round(share * width)
    return "█" * filled + "░" * (width - filled)


def _tests(s: SessionReport) -> str:
    status = s.tests_status
    last = s.last_test
    if status is None:
        # known from a note that says nothing of tests: not "ran none"
        return "❔ unknown (no transcript here)" if _unknown_tests(s) else "–"
    mark = {"passed": "✅ passed", "failed": "❌ **failed**", "unknown": "❔ unknown"}[status]
    return f"{mark} ({md_code(last.command, 40)})" if last else f"{mark} (its note)"


def _unknown_tests(s: SessionReport) -> bool:
    return not s.indexed and s.noted_tests is None


@dataclass
class _Section:
    """A folded section: fixed text around a list of rows that may be cut."""

    title: str
    head: str
    rows: list[str]
    unit: str
    open: bool = False
    cut: int = 0
    tail: str = ""
    rows_chars: int = 0  # the rows' characters, each with its newline

    def __post_init__(self) -> None:
        self.rows_chars = sum(len(r) + 1 for r in self.rows)

    def size(self) -> int:
        """The characters ``render`` gives, to the one: the frame (the title, the head,
        the cut line, the tail) rendered around no rows, and the rows' own."""
        if not self.rows and not self.cut:
            return 0
        return len(self._join([])) + self.rows_chars

    def drop_last(self) -> None:
        self.rows_chars -= len(self.rows.pop()) + 1
        self.cut += 1

    def render(self) -> str:
        if not self.rows and not self.cut:
            return ""
        return self._join(self.rows)

    def _join(self, rows: list[str]) -> str:
        out = [f"<details{' open' if self.open else ''}><summary>{self.title}</summary>", ""]
        if self.head:
            out.append(self.head)
        out.extend(rows)
        if self.cut:
            out.append("")
            out.append(
                f"*… {self.cut} more {self.unit} not shown: cut to fit a pull-request comment"
                " (the full report: `deja report --format json` or `--format html`).*"
            )
        if self.tail:
            out.append(self.tail)
        out += ["", "</details>", ""]
        return "\n".join(out)


def _session_block(s: SessionReport, prompts: bool, said_before: bool = False) -> str:
    lines = [f"#### Session {md_code(short(s.session_id))} · {md_text(label_of(s.agent))}", ""]
    span = time_span(md_text(s.started_at or ""), md_text(s.ended_at or ""), "→")
    # its own leading space: the escaping drops it ("<code>-</code>\\(elsewhere")
    meaning = project_meaning(s.project, said_before).strip()
    meaning = f" {md_text(meaning)}" if meaning else ""
    lines.append(f"- **Project:** {md_code(s.project)}{meaning} · **time:** {span}")
    if not s.indexed:
        lines.append("- *Known from commit notes only: the transcript is not on this machine.*")
    if prompts or s.first_prompt:  # its note's (published by its author), or opted in
        if s.first_prompt:
            lines.append(f"- **First prompt:** {md_text(s.first_prompt, PROMPT_CHARS)}")
        if s.requests:
            lines.append(f"- **Later requests ({len(s.requests)}):**")
            for i, r in enumerate(s.requests[:MAX_REQUESTS], 2):
                lines.append(f"  {i}. {md_text(r, REQUEST_CHARS)}")
            if len(s.requests) > MAX_REQUESTS:
                lines.append(f"  - *… {len(s.requests) - MAX_REQUESTS} more*")
    files = sorted(s.files.values(), key=lambda f: (-f.written, f.path))
    lines.append(f"- **Lines:** {s.written} written in this range, {s.surviving} still there")
    for f in files[:MAX_SESSION_FILES]:
        lines.append(f"  - {md_code(f.path)}: {f.written} written, {f.surviving} surviving")
    if len(files) > MAX_SESSION_FILES:
        lines.append(f"  - *… {len(files) - MAX_SESSION_FILES} more files*")
    if s.commands:
        lines.append(f"- **Commands ({len(s.commands)}):**")
        shown = s.commands[-MAX_COMMANDS:]
        if len(s.commands) > MAX_COMMANDS:
            lines.append(f"  - *… {len(s.commands) - MAX_COMMANDS} earlier commands*")
        for c in shown:
            code = "exit ?" if c.exit_code is None else f"exit {c.exit_code}"
            mark = "❔" if c.exit_code is None else ("✅" if c.exit_code == 0 else "❌")
            test = " *(test)*" if c.is_test else ""
            lines.append(f"  - {mark} {md_code(c.command, COMMAND_CHARS)} {code}{test}")
    if s.tests_status == "failed":
        last = s.last_test
        if last is None:
            lines.append("- ⚠️ **The last test run failed** (as the commit's note records)")
        else:
            lines.append(
                f"- ⚠️ **The last test run failed:** {md_code(last.command, COMMAND_CHARS)}"
                f" exited {last.exit_code}"
            )
    lines.append("")
    return "\n".join(lines)


def render_markdown(report: Report, limit: int = LIMIT) -> str:
    t = report.totals
    head: list[str] = [MARKER, f"### deja report · {md_code(report.spec)}", ""]
    n = len(report.commits)
    if n == 0:
        head += [
            "No commits in this range: nothing to report.",
            "",
            f"<sub>{md_text(report.tool)}</sub>",
            "",
        ]
        return "\n".join(head)
    share = t.sessions_share
    head += [
        f"**{n} commit{'s' if n != 1 else ''}**, **{t.added}** lines added: "
        f"**{t.by_sessions}** ({pct(t.by_sessions, t.added)}%) by agent sessions, "
        f"**{t.by_people}** ({pct(t.by_people, t.added)}%) by people or unknown.",
        "",
        "| | Lines | Share | |",
        "|---|---:|---:|---|",
        f"| Added | {t.added} | 100% | |",
        f"| Agent sessions | {t.by_sessions} | {pct(t.by_sessions, t.added)}% | {_bar(share)} |",
        f"| People or unknown | {t.by_people} | {pct(t.by_people, t.added)}% | "
        f"{_bar(1 - share if t.added else 0)} |",
        "",
    ]
    failed = report.failed_sessions
    if failed:
        names = ", ".join(md_code(short(s.session_id)) for s in failed[:10])
        if len(failed) > 10:
            names += f" and {len(failed) - 10} more"
        head += [f"> ⚠️ **Last test run failed** in {len(failed)} session(s): {names}", ""]
    if t.added and not t.by_sessions and not report.notes_found and not report.indexed_sessions:
        head += [
            "*No attribution available: no `refs/notes/deja` notes for these commits and no "
            "indexed transcripts (fetch the notes: "
            "`git fetch origin refs/notes/deja:refs/notes/deja`).*",
            "",
        ]

    summary_rows = []
    for s in report.sessions:
        prompt = (
            md_text(s.first_prompt, 80)
            if report.prompts or s.first_prompt
            else "*(prompts left out)*"
        )
        summary_rows.append(
            f"| {md_code(short(s.session_id))} | {md_text(label_of(s.agent))} | {s.written} | "
            f"{s.surviving} | {_tests(s)} | {prompt} |"
        )
    sessions_table = _Section(
        title=f"Sessions ({len(report.sessions)})",
        head="| Session | Agent | Lines | Surviving | Tests | First prompt |\n"
        "|---|---|---:|---:|---|---|",
        rows=summary_rows,
        unit="sessions",
        open=True,
        tail=_prompts_tail(report),
    )
    file_rows = [
        f"| {md_code(f.path)} | {f.counts.added} | {f.counts.by_sessions} | {f.counts.by_people}"
        f" | {pct(f.counts.by_sessions, f.counts.added)}% {_bar(f.counts.sessions_share, 8)} |"
        for f in report.files
    ]
    files = _Section(
        title=f"Files ({len(report.files)})",
        head="| File | Added | Agent | People/unknown | Agent share |\n|---|---:|---:|---:|---|",
        rows=file_rows,
        unit="files",
    )
    details = _Section(
        title="Session details",
        head="",
        rows=_session_blocks(report),
        unit="sessions",
    )
    commit_rows = [
        f"| {md_code(_short(c.sha))}{' (merge)' if c.is_merge else ''} | {md_text(c.subject, 70)}"
        f" | {c.counts.added} | {c.counts.by_sessions} | {c.counts.by_people}"
        f" | {pct(c.counts.by_sessions, c.counts.added)}% | {c.source} |"
        for c in report.commits
    ]
    commits = _Section(
        title=f"Commits ({n})",
        head="| Commit | Subject | Added | Agent | People/unknown | Agent share | From |\n"
        "|---|---|---:|---:|---:|---:|---|",
        rows=commit_rows,
        unit="commits",
    )
    foot = (
        f"<sub>{md_text(report.tool)} · attribution from git notes ({report.notes_found} of {n}"
        " commits) and the local index · `deja report --format json` for the full data</sub>\n"
    )
    sections = [sessions_table, files, details, commits]
    # every character the text below is made of is counted: the head, its two joining
    # newlines and the foot here, each section's whole frame in its size()
    fixed = len("\n".join(head)) + 2 + len(foot)

    def total() -> int:
        return fixed + sum(s.size() for s in sections)

    # Cut the longest section until everything fits.
    while total() > limit:
        longest = max(sections, key=lambda s: s.size())
        if not longest.rows:
            break
        while longest.rows and total() > limit:
            longest.drop_last()
            if longest.size() < max(s.size() for s in sections if s is not longest):
                break
    text = "\n".join(head) + "\n" + "".join(s.render() for s in sections) + "\n" + foot
    if len(text) > limit:  # a last resort; the loop above keeps this from happening
        text = text[: limit - 200] + "\n\n</details>\n\n*… report cut to fit.*\n"
    return text


def _prompts_tail(report: Report) -> str:
    """The line under the sessions' table where requests are left out (``prompts_hint``),
    its commands as code."""
    from deja_blame.report.model import NOTED_PROMPTS_HINT

    hint = prompts_hint(report)
    if hint is None:
        return ""
    if hint == NOTED_PROMPTS_HINT:
        return (
            "\n*Prompts left out: a note carries its session's first request only where its"
            " author set `git config deja.notes.prompts true`.*"
        )
    return (
        "\n*Prompts left out: `deja report --prompts` shows them (redacted);"
        " `git config deja.notes.prompts true` shows them by default, and publishes them"
        " in the notes.*"
    )


def _session_blocks(report: Report) -> list[str]:
    """Each session's block; what a project shown ``-`` means is said at the first."""
    out: list[str] = []
    said = False
    for s in report.sessions:
        out.append(_session_block(s, report.prompts, said))
        said = said or s.project in (None, "", "-")
    return out
