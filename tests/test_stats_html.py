"""deja stats --by month --html: the share of agents over time as a self-contained page,
drawn by a real headless Chromium with its console watched (Debian's ``chromium``;
CI installs it: without it these tests fail rather than skip)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from test_notes_world import S1, S2, World, body, make_world
from test_report_html import CHROMIUM_FLAGS, chromium, external_references, parse

from deja_blame.report.history import Period
from deja_blame.report.render_history_html import render_history_html

DAY = 86_400


def render(page: Path, work: Path) -> tuple[str, list[str]]:
    """(the DOM Chromium built, the console messages it logged)."""
    profile = work / f"profile-{len(list(work.glob('profile-*')))}"
    proc = subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr",
         "--v=0", "--dump-dom", page.as_uri()],
        capture_output=True,
        timeout=180,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    console = [ln for ln in proc.stderr.decode("utf-8", "replace").splitlines() if ":CONSOLE" in ln]
    return proc.stdout.decode(), console


@pytest.fixture
def history(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    w = make_world(tmp_path, repo, monkeypatch)
    w.person("README.md", "# app\n")
    w.commit("init")
    for month, (sid, rel, n) in enumerate([(S1, "a.py", 6), (S2, "b.py", 4), (S1, "c.py", 9)]):
        w.clock += 31 * DAY * (month > 0)
        w.write(sid, rel, body(rel[0], n))
        w.person(f"people{month}.py", body(f"p{month}", 3))
        w.commit(f"month {month}")
    w.index()
    w.deja("annotate", "HEAD~3..HEAD")
    return w


def test_the_chart_renders_without_console_errors(history: World, tmp_path: Path) -> None:
    page = tmp_path / "share.html"
    history.deja("stats", "--by", "month", "--html", str(page))
    assert page.stat().st_mode & 0o777 == 0o600
    html = page.read_text()
    assert external_references(html) == []  # no network: everything inline
    dom, console = render(page, tmp_path)
    assert console == []
    found = parse(dom)
    assert found.by_id["added"] == "29" and found.by_id["by-agents"] == "19"
    assert found.by_id["share"] == "65.5%"
    rects = [a for tag, a in found.tags if tag == "rect"]
    assert len([r for r in rects if r.get("class") == "agents"]) == 3
    assert len([a for tag, a in found.tags if tag == "circle"]) == 3  # the share, per month
    months = re.findall(r"<td>(2026-\d\d)</td>", dom)
    assert months == ["2026-07", "2026-08", "2026-09"]


def test_the_console_check_can_fail(tmp_path: Path) -> None:
    """The control: a page whose script throws is caught by the same check."""
    page = tmp_path / "bad.html"
    page.write_text("<!doctype html><script>throw new Error('drawn wrong')</script>")
    _, console = render(page, tmp_path)
    assert any("drawn wrong" in ln for ln in console)


def test_names_are_text_not_markup(tmp_path: Path) -> None:
    hostile = "</title></svg><script>alert(1)</script><img src=x onerror=alert(2)>"
    periods = [
        Period(key="2026-07", start="2026-07-01", commits=2, added=10, by_agents=6,
               by_agent={hostile: 4, "codex": 2}),
        Period(key="2026-08", start="2026-08-01", commits=1, added=5, by_agents=0),
    ]  # fmt: skip
    page = tmp_path / "hostile.html"
    page.write_text(render_history_html(periods, "month", f"main {hostile}", "a" * 40))
    dom, console = render(page, tmp_path)
    assert console == []
    tags = {tag for tag, _ in parse(dom).tags}
    assert "script" not in tags and "img" not in tags
    assert hostile in "".join(parse(dom).text)  # shown as the text it is


def test_html_needs_by(history: World) -> None:
    proc = history.deja("stats", "--html", "x.html", check=False)
    assert proc.returncode == 2 and b"--html draws the history" in proc.stderr
    assert not (history.repo / "x.html").exists()


def test_no_commits_is_a_page_too(tmp_path: Path) -> None:
    page = tmp_path / "empty.html"
    page.write_text(render_history_html([], "week", "v1..v1", None))
    dom, console = render(page, tmp_path)
    assert console == [] and "No commits in this range." in dom
    assert os.path.getsize(page) < 4000
