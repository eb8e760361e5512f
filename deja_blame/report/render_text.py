"""The report as plain text for a terminal: what ``deja report`` prints when its
output is one (Markdown, made for a pull-request comment, is full of markup there).

The same facts as the Markdown in the same order (totals, sessions, files, session
details, commits), nothing cut (a terminal has no comment limit). Every field goes
through ``output.terminal``: a transcript's escape sequence or bidi control is
inert here as everywhere deja writes to a terminal.
"""

from __future__ import annotations

from deja_blame.notes.public import project_meaning
from deja_blame.output import agent_word, shorten, terminal, utc_minute
from deja_blame.report.model import Report, SessionReport, pct, prompts_hint, time_span
from deja_blame.session_ids import short

PROMPT_CHARS = 60
REQUEST_CHARS = 100
COMMAND_CHARS = 80
SUBJECT_CHARS = 50
MAX_REQUESTS = 12
MAX_COMMANDS = 15


def _tests(s: SessionReport) -> str:
    status = s.tests_status
    if status is None:
        return "unknown (no transcript here)" if not s.indexed and s.noted_tests is None else "-"
    return {"passed": "passed", "failed": "FAILED", "unknown": "unknown"}[status]


def _elsewhere(s: SessionReport) -> bool:
    """Whether the session's project is shown ``-`` (with what that means)."""
    return s.project in (None, "", "-")


def _project(s: SessionReport, said_before: bool = False) -> str:
    """The session's folder: ``.``, repository-relative, or, for one elsewhere, the
    index's path on this machine (this text is for the person here; the shared forms
    keep ``-``), else ``-`` and what it means."""
    if s.project == "-" and s.local_project:
        return (
            f"  project {terminal(s.local_project)} (elsewhere: not this repository's folder;"
            " shared reports and notes leave the path out)"
        )
    return f"  project {terminal(s.project)}{project_meaning(s.project, said_before)}"


def _session_block(s: SessionReport, prompts: bool, said_before: bool = False) -> list[str]:
    span = time_span(
        terminal(utc_minute(s.started_at) or ""), terminal(utc_minute(s.ended_at) or ""), "->"
    )
    out = [
        f"Session {terminal(short(s.session_id))[:8]} ({agent_word(s.agent)}), {span}",
        _project(s, said_before),
    ]
    if not s.indexed:
        out.append("  known from commit notes only: the transcript is not on this machine")
    if s.first_prompt:  # set only where the report may show it (its note's, or opted in)
        out.append(f"  first prompt: {shorten(s.first_prompt, REQUEST_CHARS)}")
        for i, r in enumerate(s.requests[:MAX_REQUESTS], 2):
            out.append(f"  {i}. {shorten(r, REQUEST_CHARS)}")
        if len(s.requests) > MAX_REQUESTS:
            out.append(f"  ... {len(s.requests) - MAX_REQUESTS} more requests")
    out.append(f"  lines: {s.written} written in this range, {s.surviving} still there")
    for f in sorted(s.files.values(), key=lambda f: (-f.written, f.path)):
        out.append(f"    {terminal(f.path)}: {f.written} written, {f.surviving} surviving")
    if s.commands:
        shown = s.commands[-MAX_COMMANDS:]
        out.append(f"  commands ({len(s.commands)}):")
        if len(s.commands) > MAX_COMMANDS:
            out.append(f"    ... {len(s.commands) - MAX_COMMANDS} earlier commands")
        for c in shown:
            code = "exit ?" if c.exit_code is None else f"exit {c.exit_code}"
            test = " (test)" if c.is_test else ""
            out.append(f"    $ {shorten(c.command, COMMAND_CHARS)}  {code}{test}")
    if s.tests_status == "failed":
        last = s.last_test
        out.append(
            "  the last test run FAILED"
            + (
                f": {shorten(last.command, COMMAND_CHARS)} exited {last.exit_code}"
                if last is not None
                else " (as the commit's note records)"
            )
        )
    return out


def render_text(report: Report) -> str:
    t = report.totals
    n = len(report.commits)
    # the default with no upstream, spelled as git would: what it means, said
    spec = "the last commit (HEAD^!)" if report.spec == "HEAD^!" else terminal(report.spec)
    out = [f"deja report of {spec}", ""]
    if n == 0:
        return "\n".join([*out, "No commits in this range: nothing to report.", ""])
    out += [
        f"{n} commit{'s' if n != 1 else ''}, {t.added} lines added: {t.by_sessions}"
        f" ({pct(t.by_sessions, t.added)}%) by agent sessions, {t.by_people}"
        f" ({pct(t.by_people, t.added)}%) by people or unknown",
    ]
    failed = report.failed_sessions
    if failed:
        names = ", ".join(terminal(short(s.session_id))[:8] for s in failed)
        out.append(f"the last test run FAILED in {len(failed)} session(s): {names}")
    if report.sessions:
        out += ["", f"Sessions ({len(report.sessions)})"]
        out.append(
            f"  {'SESSION':<9} {'AGENT':<11} {'LINES':>5} {'KEPT':>5}  {'TESTS':<8} FIRST PROMPT"
        )
        for s in report.sessions:
            prompt = (
                shorten(s.first_prompt, PROMPT_CHARS)
                if report.prompts or s.first_prompt
                else "(left out)"
            )
            out.append(
                f"  {terminal(short(s.session_id))[:8]:<9} {agent_word(s.agent)[:11]:<11}"
                f" {s.written:>5} {s.surviving:>5}  {_tests(s):<8} {prompt or '-'}"
            )
        hint = prompts_hint(report)
        if hint:
            out.append(f"  (prompts left out: {hint})")
    if report.files:
        out += [
            "",
            f"Files ({len(report.files)})",
            f"  {'ADDED':>5} {'AGENT':>5} {'SHARE':>6}  FILE",
        ]
        for f in report.files:
            c = f.counts
            share = f"{pct(c.by_sessions, c.added)}%"
            out.append(f"  {c.added:>5} {c.by_sessions:>5} {share:>6}  {terminal(f.path)}")
    said = False  # what "-" means, said at its first session only
    for s in report.sessions:
        out += ["", *_session_block(s, report.prompts, said)]
        said = said or (_elsewhere(s) and not s.local_project)
    out += ["", f"Commits ({n})", f"  {'COMMIT':<9} {'ADDED':>5} {'AGENT':>5}  {'FROM':<5} SUBJECT"]
    for cr in report.commits:
        merge = " (merge)" if cr.is_merge else ""
        out.append(
            f"  {cr.sha[:8]:<9} {cr.counts.added:>5} {cr.counts.by_sessions:>5}  {cr.source:<5}"
            f" {shorten(cr.subject, SUBJECT_CHARS)}{merge}"
        )
    out += [
        "",
        f"attribution from git notes ({report.notes_found} of {n} commits) and the local index;"
        " --format markdown for a pull-request comment, json for the full data",
        "",
    ]
    return "\n".join(out)
