"""The text report (a person's, on this machine) names the folder of a session that
worked elsewhere, as the index has it: it showed ``-``, which sent the person to
``deja sessions`` for the path. What is shared (Markdown, JSON, HTML, notes) keeps
``-``: a folder outside the repository does not leave the machine."""

from __future__ import annotations

from pathlib import Path

from conftest import commit_env, deja, deja_json, git
from test_other_agents import AFTER, BEFORE, T0, _claude

from deja_blame.report.model import Counts, Report, SessionReport
from deja_blame.report.render_text import _project

NO_AGY = {"DEJA_ANTIGRAVITY_ROOT": ""}


def test_a_session_in_another_clone_shows_its_folder_in_the_text_report_only(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "pricing.py").write_text(BEFORE)
    git(repo, "add", "pricing.py")
    git(repo, "commit", "-qm", "prices", env=commit_env(T0))
    other = tmp_path / "other-clone"
    git(tmp_path, "clone", "-q", str(repo), str(other))
    sid = _claude(tmp_path / "home", other, T0 + 3600)
    (other / "pricing.py").write_text(AFTER)
    git(other, "commit", "-qam", "discount", env=commit_env(T0 + 7200))
    git(repo, "pull", "-q", "--ff-only", str(other), "HEAD")

    text = deja("report", "--format", "text", "HEAD^!", cwd=repo, env=NO_AGY).stdout.decode()
    assert f"Session {sid[:8]} (claude)" in text, text
    assert (
        f"  project {other} (elsewhere: not this repository's folder;"
        " shared reports and notes leave the path out)"
    ) in text.splitlines(), text
    for fmt in ("markdown", "html"):
        shared = deja("report", "--format", fmt, "HEAD^!", cwd=repo, env=NO_AGY).stdout.decode()
        assert sid[:8] in shared and str(other) not in shared, shared
    doc = deja_json("report", "--format", "json", "HEAD^!", cwd=repo, env=NO_AGY)
    assert [s["project"] for s in doc["sessions"]] == ["-"]
    assert str(other) not in str(doc)


def test_the_folder_is_shown_inert_and_dash_stays_where_none_is_known() -> None:
    s = SessionReport("s1", project="-", local_project="/w/\x1b[31mred\u202e")
    assert "\x1b" not in _project(s) and "\u202e" not in _project(s)
    assert _project(s).startswith("  project /w/red (elsewhere:"), _project(s)
    assert _project(SessionReport("s1")).startswith("  project - (elsewhere: another clone")
    assert _project(SessionReport("s1", project=".")) == "  project . (this repository's top)"


def test_a_session_with_one_time_known_says_so_and_never_shows_a_question_mark() -> None:
    """A reviewer's clone with the notes alone may know when a session started and not
    when it ended: ``started A``, not ``A -> ?`` (newcomer 16 #5). Every renderer."""
    from deja_blame.report.model import time_span
    from deja_blame.report.render_html import _session as html_session
    from deja_blame.report.render_markdown import _session_block as md_block
    from deja_blame.report.render_text import _session_block as text_block

    start, end = "2026-12-07T18:31:00Z", "2026-12-07T19:02:00Z"
    assert time_span("A", "B", "->") == "A -> B"
    assert time_span("A", "", "->") == "started A"
    assert time_span("", "B", "->") == "ended B"
    assert time_span("", "", "->") == "time not known"
    only_start = SessionReport("9f8e7d6c-1", agent="claude-code", started_at=start)
    header = text_block(only_start, False)[0]
    assert header == "Session 9f8e7d6c (claude), started 2026-12-07 18:31 UTC", header
    both = SessionReport("9f8e7d6c-1", agent="claude-code", started_at=start, ended_at=end)
    assert text_block(both, False)[0].endswith("2026-12-07 18:31 UTC -> 2026-12-07 19:02 UTC")
    neither = SessionReport("9f8e7d6c-1", agent="claude-code")
    assert text_block(neither, False)[0].endswith(", time not known")
    md = md_block(only_start, False)
    assert f"**time:** started {start}" in md and "?" not in md, md
    report = Report("HEAD~1..HEAD", None, [], [], Counts(), [], [only_start], False, "deja")
    html = html_session(only_start, report)
    assert f"started {start}</p>" in html and "→ ?" not in html, html


def test_what_dash_means_is_said_once_and_markdown_keeps_its_space() -> None:
    """Four sessions elsewhere printed the long "(elsewhere: ...)" four times, and the
    Markdown read ``<code>-</code>\\(elsewhere``, rendered ``-(elsewhere`` (newcomer
    17 #7). Said at the first session; the others say "as above"."""
    from deja_blame.report.model import CommitReport
    from deja_blame.report.render_markdown import render_markdown
    from deja_blame.report.render_text import render_text

    sessions = [SessionReport(f"5e55{i}000-1", agent="claude-code") for i in range(3)]
    commit = CommitReport("c" * 40, [], "work", "P", "2026-12-07T21:00:00Z", Counts(), "note")
    report = Report("HEAD~1..HEAD", None, [], [commit], Counts(), [], sessions, False, "deja")
    for text in (render_text(report), render_markdown(report)):
        assert text.count("(elsewhere: another clone or machine") == 1, text
        assert text.count("elsewhere, as above") == 2, text
    md = render_markdown(report)
    assert "**Project:** <code>-</code> \\(elsewhere: another clone" in md, md
