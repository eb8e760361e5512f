"""The report as one self-contained HTML page: inline CSS, no script, no external asset.

Readable without JavaScript: the totals, a bar per file, each session folded in
``<details>``, and the changed lines at the tip tinted by the session that wrote
them; hovering a line shows the request behind it (``title``), its marker links
to that request in the session's details. A Content-Security-Policy forbids the
page any network access and any script, as a second line of defence behind the
escaping: everything from a transcript or the repository goes through
``html.escape``.
"""

from __future__ import annotations

from deja_blame.outputs.escape import clip
from deja_blame.outputs.escape import html as html_text
from deja_blame.report.history import choose_period, share_history, svg_chart
from deja_blame.report.model import Counts, FileLines, Report, SessionReport, pct, time_span
from deja_blame.session_ids import short
from deja_blame.transcripts.registry import label_of

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'"
# Long text is cut with a marker saying how much more there was (the JSON report
# keeps it whole): a 1 MiB prompt and a 5 MB line made a 5.3 MB page
PROMPT_CHARS = 4_000  # a request
LINE_CHARS = 1_000  # a line of code
TEXT_CHARS = 1_000  # a command, a commit's subject, a path, a project


# the HTML reports' escaping of every field (outputs/escape.py)
e = html_text


def _hue(i: int) -> float:
    return (i * 137.508 + 200) % 360  # the golden angle: neighbours far apart


def _style(report: Report) -> str:
    per_session = []
    for s in report.sessions:
        h = _hue(s.colour)
        per_session.append(
            f".s{s.colour}{{background:hsl({h:.0f} 70% 88%)}}"
            f".b{s.colour}{{background:hsl({h:.0f} 55% 48%)}}"
            f"@media (prefers-color-scheme: dark){{.s{s.colour}{{background:hsl({h:.0f} 40% 24%)}}}}"
        )
    return """
:root{color-scheme:light dark;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;
--people:#c8ced6;--card:#f6f8fa}
@media (prefers-color-scheme: dark){:root{--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;
--bg:#0d1117;--people:#4a525c;--card:#161b22}}
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:var(--bg);margin:0 auto;max-width:1100px;padding:24px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;border-bottom:1px solid var(--line);
padding-bottom:4px;margin-top:32px}
code,.src,.ln{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
.muted{color:var(--muted)}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin:16px 0}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 16px;
min-width:180px}
.card .num{font-size:26px;font-weight:600}
.bar{display:flex;height:12px;border-radius:6px;overflow:hidden;background:var(--people);
min-width:120px}
.bar.big{height:20px;margin:8px 0 4px}
.bar span{display:block;height:100%}
.people{background:var(--people)}
.agents{background:#6d5dfc}
svg.history{max-width:100%;height:auto}
svg.history rect.agents{fill:#6d5dfc}svg.history rect.people{fill:var(--people)}
.chart{overflow-x:auto}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
details.session{border:1px solid var(--line);border-radius:8px;padding:8px 12px;margin:8px 0}
details.session>summary{cursor:pointer}
.sw{display:inline-block;width:12px;height:12px;border-radius:3px;vertical-align:-1px;
margin-right:6px}
.fail{color:#cf222e;font-weight:600}.pass{color:#1a7f37}
.prompt{white-space:pre-wrap;background:var(--card);border-left:3px solid var(--line);
padding:6px 10px;margin:4px 0}
table.code{border:1px solid var(--line)}
table.code td{border:0;padding:0 8px}
table.code td.ln{color:var(--muted);text-align:right;user-select:none;width:1%;
white-space:nowrap}
table.code td.src{white-space:pre-wrap;word-break:break-all}
table.code td.who{width:1%;white-space:nowrap;font-size:12px}
table.code tr.gap td{color:var(--muted);text-align:center;background:var(--card)}
table.code tr.people{background:transparent}
a{color:inherit}
#lines details{margin:10px 0}#lines summary{cursor:pointer;margin-bottom:2px}
.legend span{margin-right:14px;white-space:nowrap}
td code{overflow-wrap:anywhere}
@media (max-width:640px){body{padding:12px}th,td{padding:4px;overflow-wrap:anywhere}.bar{min-width:0}
.card{min-width:0;flex:1 1 40%}
#files th:nth-child(6),#files td:nth-child(6){display:none}
svg.history{max-width:none}}
""" + "\n".join(per_session)


def _bar(counts: Counts, report: Report, big: bool = False) -> str:
    if not counts.added:
        return f'<div class="bar{" big" if big else ""}"></div>'
    parts = []
    for s in report.sessions:
        n = counts.by_session.get(s.session_id, 0)
        if n:
            w = 100.0 * n / counts.added
            parts.append(
                f'<span class="b{s.colour}" style="width:{w:.2f}%" '
                f'title="{e(short(s.session_id))}: {n} lines"></span>'
            )
    people = counts.by_people
    if people:
        parts.append(
            f'<span class="people" style="width:{100.0 * people / counts.added:.2f}%" '
            f'title="people or unknown: {people} lines"></span>'
        )
    return f'<div class="bar{" big" if big else ""}">{"".join(parts)}</div>'


def _tests(s: SessionReport) -> str:
    last = s.last_test
    status = s.tests_status
    if status is None:
        if not s.indexed and s.noted_tests is None:  # a note that says nothing of tests
            return ' · <span class="muted">test result unknown (no transcript here)</span>'
        return ""
    if status == "failed":
        how = f"exit {last.exit_code}" if last else "as the commit's note records"
        return f' · <span class="fail">last test run failed ({how})</span>'
    if status == "passed":
        return ' · <span class="pass">tests passed</span>'
    return ' · <span class="muted">test result unknown</span>'


def _session(s: SessionReport, report: Report) -> str:
    out = [
        f'<details class="session" id="s{s.colour}">',
        f'<summary><span class="sw b{s.colour}"></span><code>{e(short(s.session_id))}</code>'
        f" · {e(label_of(s.agent))} · <b>{s.written}</b> lines written, {s.surviving} surviving"
        f"{_tests(s)}</summary>",
        f"<p>Session <code>{e(s.session_id)}</code> · project"
        f" <code>{e(clip(s.project, TEXT_CHARS))}</code> · "
        f"{time_span(e(s.started_at or ''), e(s.ended_at or ''), '→')}</p>",
    ]
    if not s.indexed:
        out.append(
            '<p class="muted">Known from commit notes only: the transcript is not on this'
            " machine.</p>"
        )
    if report.prompts or s.first_prompt:  # its note's (published), or opted in
        if s.first_prompt:
            out.append(f'<p id="s{s.colour}-r0"><b>First prompt</b></p>')
            out.append(f'<div class="prompt">{e(clip(s.first_prompt, PROMPT_CHARS))}</div>')
        if s.requests:
            out.append(f'<p><b>Later requests ({len(s.requests)})</b></p><ol start="2">')
            for i, r in enumerate(s.requests, 1):
                out.append(
                    f'<li id="s{s.colour}-r{i}"><div class="prompt">'
                    f"{e(clip(r, PROMPT_CHARS))}</div></li>"
                )
            out.append("</ol>")
    else:
        out.append('<p class="muted">Prompts left out (--no-prompts).</p>')
    files = sorted(s.files.values(), key=lambda f: (-f.written, f.path))
    if files:
        out.append("<p><b>Files</b></p><table><tr><th>File</th>")
        out.append('<th class="n">Written</th><th class="n">Surviving</th></tr>')
        for f in files:
            out.append(
                f'<tr><td><code>{e(f.path)}</code></td><td class="n">{f.written}</td>'
                f'<td class="n">{f.surviving}</td></tr>'
            )
        out.append("</table>")
    if s.commands:
        out.append(f"<p><b>Commands ({len(s.commands)})</b></p><table>")
        for c in s.commands:
            code = "?" if c.exit_code is None else str(c.exit_code)
            cls = "muted" if c.exit_code is None else ("fail" if c.failed else "pass")
            test = ' <span class="muted">(test)</span>' if c.is_test else ""
            out.append(
                f"<tr><td><code>{e(clip(c.command, TEXT_CHARS))}</code>{test}</td>"
                f'<td class="n {cls}">exit {e(code)}</td></tr>'
            )
        out.append("</table>")
    out.append("</details>")
    return "\n".join(out)


def _line_title(report: Report, session: str | None, request: int | None) -> str:
    if session is None:
        return "not written by an indexed session: a person, or unknown"
    s = report.session(session)
    if s is None:
        return f"session {session}"
    head = f"session {short(s.session_id)} ({label_of(s.agent)})"
    if not (report.prompts or s.first_prompt):
        return head
    prompt = s.prompt_of(request)
    if not prompt:
        return head
    which = "first prompt" if not request else f"request {request + 1}"
    return f"{head}, {which}: {prompt[:400]}"


def _file_lines(fl: FileLines, report: Report) -> str:
    out = [f"<details open><summary><code>{e(fl.path)}</code></summary>", '<table class="code">']
    prev: tuple[str | None, int | None] | None = None
    for k, run in enumerate(fl.runs):
        if k:
            out.append('<tr class="gap"><td></td><td></td><td>⋯</td></tr>')
            prev = None
        for ln in run:
            s = report.session(ln.session) if ln.session else None
            cls = f"s{s.colour}" if s is not None else "people"
            title = _line_title(report, ln.session, ln.request)
            who = ""
            if s is not None and prev != (ln.session, ln.request):
                anchor = f"s{s.colour}"
                label = short(s.session_id)
                if report.prompts and ln.request is not None:
                    anchor += f"-r{ln.request}"
                    label += f" #{ln.request + 1}"
                who = f'<a href="#{anchor}">{e(label)}</a>'
            prev = (ln.session, ln.request)
            out.append(
                f'<tr class="{cls}" title="{e(title)}"><td class="ln">{ln.line}</td>'
                f'<td class="who">{who}</td><td class="src">{e(clip(ln.text, LINE_CHARS))}</td></tr>'
            )
    out.append("</table></details>")
    return "\n".join(out)


def render_html(report: Report) -> str:
    t = report.totals
    n = len(report.commits)
    tip = (report.tip or "")[:12]
    body: list[str] = [
        "<header><h1>deja report</h1>",
        f'<p class="muted">Range <code>{e(report.spec)}</code> · tip <code>{e(tip)}</code> · '
        f"{n} commit{'s' if n != 1 else ''}</p></header>",
    ]
    body.append('<section id="totals"><h2>Totals</h2>')
    if n == 0:
        body.append("<p>No commits in this range: nothing to report.</p>")
    body.append('<div class="cards">')
    body.append(
        f'<div class="card"><div class="num" id="total-added">{t.added}</div>'
        "<div>lines added</div></div>"
    )
    body.append(
        f'<div class="card"><div class="num" id="total-sessions">{t.by_sessions}</div>'
        f"<div>by agent sessions ({pct(t.by_sessions, t.added)}%)</div></div>"
    )
    body.append(
        f'<div class="card"><div class="num" id="total-people">{t.by_people}</div>'
        f"<div>by people or unknown ({pct(t.by_people, t.added)}%)</div></div>"
    )
    body.append("</div>")
    body.append(_bar(t, report, big=True))
    legend = [
        f'<span><span class="sw b{s.colour}"></span><a href="#s{s.colour}">'
        f"<code>{e(short(s.session_id))}</code></a> {s.written}</span>"
        for s in report.sessions
    ]
    legend.append(f'<span><span class="sw people"></span>people or unknown {t.by_people}</span>')
    body.append(f'<p class="legend">{"".join(legend)}</p>')
    failed = report.failed_sessions
    if failed:
        names = ", ".join(f"<code>{e(short(s.session_id))}</code>" for s in failed)
        body.append(
            f'<p class="fail">Last test run failed in {len(failed)} session(s): {names}</p>'
        )
    body.append("</section>")

    if report.commits:
        by = choose_period(report)
        periods = share_history(report, by)
        body.append(
            f'<section id="history"><h2>Lines added per {by}</h2><p class="muted">'
            '<span class="sw agents"></span> by agent sessions · <span class="sw people">'
            "</span> by people or unknown</p>"
        )
        # on a narrow screen the chart keeps its size (labels stay readable) and
        # scrolls in its own box; the page does not
        body.append(f'<div class="chart">{svg_chart(periods)}</div>')
        body.append("</section>")

    if report.sessions:
        body.append(f'<section id="sessions"><h2>Sessions ({len(report.sessions)})</h2>')
        body.extend(_session(s, report) for s in report.sessions)
        body.append("</section>")

    if report.files:
        body.append(f'<section id="files"><h2>Files ({len(report.files)})</h2><table>')
        body.append(
            '<tr><th>File</th><th class="n">Added</th><th class="n">Agent</th>'
            '<th class="n">People/unknown</th><th class="n">Agent share</th><th></th></tr>'
        )
        for f in report.files:
            fc = f.counts
            body.append(
                f'<tr><td><code>{e(f.path)}</code></td><td class="n">{fc.added}</td>'
                f'<td class="n">{fc.by_sessions}</td><td class="n">{fc.by_people}</td>'
                f'<td class="n">{pct(fc.by_sessions, fc.added)}%</td>'
                f'<td style="width:28%">{_bar(fc, report)}</td></tr>'
            )
        body.append("</table></section>")

    if report.lines:
        body.append(
            '<section id="lines"><h2>Changed lines at the tip</h2><p class="muted">Each line'
            " is tinted by the session that wrote it; hover for the request behind it, click"
            " its marker for the session.</p>"
        )
        body.extend(_file_lines(fl, report) for fl in report.lines)
        if report.lines_cut:
            body.append(f'<p class="muted">… {report.lines_cut} more changed lines not shown.</p>')
        body.append("</section>")

    if report.commits:
        body.append(f'<section id="commits"><h2>Commits ({n})</h2><table>')
        body.append(
            '<tr><th>Commit</th><th>Subject</th><th class="n">Added</th><th class="n">Agent'
            '</th><th class="n">People/unknown</th><th>From</th></tr>'
        )
        for c in report.commits:
            merge = ' <span class="muted">(merge)</span>' if c.is_merge else ""
            body.append(
                f"<tr><td><code>{e(c.sha[:8])}</code>{merge}</td><td>{e(clip(c.subject, TEXT_CHARS))}</td>"
                f'<td class="n">{c.counts.added}</td><td class="n">{c.counts.by_sessions}</td>'
                f'<td class="n">{c.counts.by_people}</td><td>{e(c.source)}</td></tr>'
            )
        body.append("</table></section>")
    body.append(f'<footer><p class="muted">Generated by {e(report.tool)}.</p></footer>')
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>deja report · {e(report.spec)}</title>\n<style>{_style(report)}</style>\n"
        "</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n"
    )
