"""The HTML report in a real headless Chromium (Debian's ``chromium``; CI installs it).

Without Chromium these tests fail rather than skip: the page is only known to
work once a browser has drawn it.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest
from test_report import SECRET, SID_A, SID_B, Scenario, build_feature_scenario, run

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # nothing resolves: a request the page tried would show up as a failed job
    "--host-resolver-rules=MAP * ~NOTFOUND",
]


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail("chromium is not installed (apt-get install -y chromium): the HTML is untested")


def browse(page: Path, work: Path, *extra: str) -> subprocess.CompletedProcess[bytes]:
    profile = work / f"profile-{len(list(work.glob('profile-*')))}"
    proc = subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()],
        capture_output=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return proc


class Page(HTMLParser):
    """Text by element id, every tag and attribute, and the text of the whole page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.by_id: dict[str, str] = {}
        self.text: list[str] = []
        self.styles: list[str] = []
        self._open: list[tuple[str | None, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags.append((tag, a))
        if "style" in a:
            self.styles.append(a["style"])
        self._open.append((a.get("id"), tag))

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            _, t = self._open.pop()
            if t == tag:
                break

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        for ident, _ in self._open:
            if ident:
                self.by_id[ident] = self.by_id.get(ident, "") + data
        if self._open and self._open[-1][1] == "style":
            self.styles.append(data)


def parse(html: str) -> Page:
    p = Page()
    p.feed(html)
    p.close()
    return p


def external_references(html: str) -> list[str]:
    """Every reference in the page to something outside it (http(s), //host, other schemes)."""
    page = parse(html)
    found = []
    for tag, attrs in page.tags:
        if tag in ("script", "link", "img", "iframe", "object", "embed", "video", "audio", "base"):
            found.append(f"<{tag}>")
        for name in (
            "src",
            "href",
            "action",
            "formaction",
            "poster",
            "data",
            "srcset",
            "xlink:href",
        ):
            value = attrs.get(name, "").strip()
            if value and not value.startswith("#"):
                found.append(f"{tag} {name}={value}")
        if tag == "meta" and attrs.get("http-equiv", "").lower() == "refresh":
            found.append("meta refresh")
    for css in page.styles:
        for m in re.finditer(r"url\(\s*['\"]?([^'\")]*)|@import", css):
            if not m.group(0).startswith("url(") or not m.group(1).startswith("data:"):
                found.append(f"css {m.group(0)}")
    return found


def page_requests(netlog: Path) -> list[str]:
    """URLs the page itself asked the network for (Chromium's own background jobs have a
    network isolation key of their own; the page's carry its file:// top frame)."""
    log = json.loads(netlog.read_text())
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    urls = []
    for ev in log["events"]:
        params = ev.get("params") or {}
        if names.get(ev["type"]) != "URL_REQUEST_START_JOB" or "url" not in params:
            continue
        if "file://" in params.get("network_isolation_key", "") or params.get("initiator") in (
            "null",
            "file://",
        ):
            if not params["url"].startswith(("file:", "data:")):
                urls.append(params["url"])
    return urls


def png_size_and_variety(path: Path) -> tuple[int, int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    pos, idat = 8, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    return width, height, len(set(zlib.decompress(idat)))


@pytest.fixture(scope="module")
def feature(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    return build_feature_scenario(tmp_path_factory.mktemp("feature-html"))


@pytest.fixture(scope="module")
def html_file(feature: Scenario) -> Path:
    out = feature.repo.parent / "report.html"
    run(feature, "report", "--format", "html", "--output", str(out))
    return out


def test_html_is_self_contained(html_file: Path) -> None:
    html = html_file.read_text()
    assert external_references(html) == []
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    # the checker itself finds what it is meant to find
    bad = (
        '<link rel="stylesheet" href="https://cdn.example/x.css"><img src="//img.example/a.png">'
        '<div style="background:url(http://bg.example/b.png)"></div><a href="#ok">ok</a>'
    )
    assert external_references(bad) == [
        "<link>",
        "link href=https://cdn.example/x.css",
        "<img>",
        "img src=//img.example/a.png",
        "css url(http://bg.example/b.png",
    ]


def test_rendered_page_shows_the_totals(html_file: Path, tmp_path: Path) -> None:
    dom = browse(html_file, tmp_path, "--dump-dom").stdout.decode()
    page = parse(dom)
    assert page.by_id["total-added"].strip() == "15"
    assert page.by_id["total-sessions"].strip() == "11"
    assert page.by_id["total-people"].strip() == "4"
    text = " ".join(" ".join(page.text).split())
    assert "by agent sessions (73.3%)" in text
    assert "by people or unknown (26.7%)" in text
    assert "7 lines written, 5 surviving" in text
    assert "last test run failed (exit 1)" in text
    assert "app/prices.py 4 4 0 100.0%" in text
    # the changed lines are there, tinted by session, with the prompt behind them
    rows = [a for t, a in page.tags if t == "tr" and "title" in a]
    titles = {a["title"] for a in rows}
    assert any("first prompt: Add a health check endpoint to the app" in t for t in titles)
    assert any("request 2: Also register it in main.py" in t for t in titles)
    assert any(t.startswith("not written by an indexed session") for t in titles)
    classes = [a["class"] for a in rows]
    assert classes.count("s0") == 5 and classes.count("s1") == 4  # A's 5 lines left, B's 4
    # the share over time: an inline SVG chart the browser kept, a bar pair per period
    bars = [a for t, a in page.tags if t == "rect" and a.get("class") in ("agents", "people")]
    assert bars and len(bars) % 2 == 0
    assert "Lines added per week" in text


def test_prompt_with_script_shows_as_text(html_file: Path, tmp_path: Path) -> None:
    html = html_file.read_text()
    assert "<script" not in html.lower()
    assert SECRET not in html
    dom = browse(html_file, tmp_path, "--dump-dom").stdout.decode()
    page = parse(dom)
    assert not [t for t, _ in page.tags if t == "script"]
    text = "".join(page.text)
    assert '<script>alert("pwned")</script>' in text  # shown, not run
    assert "api_key=[redacted]" in text


def test_no_external_request_is_made(html_file: Path, tmp_path: Path) -> None:
    netlog = tmp_path / "net.json"
    browse(html_file, tmp_path, "--dump-dom", f"--log-net-log={netlog}")
    assert page_requests(netlog) == []
    # and the net log check sees a page that does reach out
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><head><link rel="stylesheet" href="https://cdn.example.org/x.css">'
        '</head><body><img src="http://img.example.org/a.png"></body></html>'
    )
    badlog = tmp_path / "bad-net.json"
    browse(bad, tmp_path, "--dump-dom", f"--log-net-log={badlog}")
    assert sorted(set(page_requests(badlog))) == [
        "http://img.example.org/a.png",
        "https://cdn.example.org/x.css",
    ]


def test_screenshot(html_file: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    browse(html_file, tmp_path, f"--screenshot={shot}", "--window-size=1200,1900")
    width, height, variety = png_size_and_variety(shot)
    assert (width, height) == (1200, 1900)
    assert variety > 50  # drawn, not blank
    keep = Path(__file__).resolve().parent.parent / ".pytest_cache" / "report-screenshot.png"
    keep.parent.mkdir(exist_ok=True)
    shutil.copy(shot, keep)  # to look at after a run


def test_no_prompts_html(feature: Scenario, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    run(feature, "report", "--format", "html", "--no-prompts", "-o", str(out))
    html = out.read_text()
    assert "endpoint to the app" not in html and "price formatter" not in html
    assert "Prompts left out" in html
    assert f"session {SID_A[:8]}" in html and SID_B in html


# measured in a page that frames the report 420 px wide (headless Chromium's window
# is 500 px at least); the report itself carries no script
PROBE = """<script>
function measure(frame) {
  const d = frame.contentDocument, w = frame.contentWindow;
  const q = (s) => d.querySelector(s);
  const right = (s) => q(s) ? Math.ceil(q(s).getBoundingClientRect().right) : -1;
  const css = (s, p) => q(s) ? w.getComputedStyle(q(s))[p] : "none";
  document.title = JSON.stringify({
    inner: w.innerWidth, scroll: d.documentElement.scrollWidth, files: right("#files table"),
    chart: q("svg.history") ? q("svg.history").getBoundingClientRect().width : -1,
    chartAgents: css("svg.history rect.agents", "fill"),
    chartPeople: css("svg.history rect.people", "fill"),
    keyAgents: css("#history .sw.agents", "backgroundColor"),
    keyPeople: css("#history .sw.people", "backgroundColor"),
  });
}
</script><title>-</title>"""


def test_a_420px_screen_and_one_colour_per_kind(feature: Scenario, tmp_path: Path) -> None:
    page = feature.repo.parent / "history.html"
    run(feature, "report", "HEAD~3..HEAD", "--format", "html", "--output", str(page))
    # (the report's CSP forbids scripts: the framed copy goes without it)
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page.read_text())
    framed = html.replace("&", "&amp;").replace('"', "&quot;")
    probe = tmp_path / "probe.html"
    probe.write_text(
        f'<!doctype html><html><head>{PROBE}</head><body style="margin:0">'
        f'<iframe width="420" height="900" style="border:0" onload="measure(this)"'
        f' srcdoc="{framed}"></iframe></body></html>'
    )
    dom = browse(probe, tmp_path, "--dump-dom", "--window-size=800,1000").stdout.decode()
    title = re.search(r"<title>(.*?)</title>", dom, re.S).group(1)
    got = json.loads(title.replace("&quot;", '"'))
    assert got["inner"] == 420 and got["files"] > 0
    assert got["scroll"] <= got["inner"], got  # nothing scrolls the page sideways
    assert got["files"] <= got["inner"], got  # the files table fits
    assert got["chart"] >= 600, got  # the chart keeps its size: labels stay readable
    assert got["chartAgents"] == got["keyAgents"] != "none", got
    assert got["chartPeople"] == got["keyPeople"] != "none", got
