"""``deja report`` on a terminal (NEWCOMER12 #3): it printed the pull-request comment's
raw markup there (``<details>``, ``<code>``, ``\\(``). On a terminal it prints plain
text now; piped, or with -o, it is the Markdown scripts and CI read, as documented.
Where the person's requests are left out, the report says how to show them."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from test_report import SID_A, SID_B, Scenario, build_feature_scenario, g, run, write

from deja_blame.report.render_markdown import MARKER

HOSTILE = "Trim \x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x07link\x1b]8;;\x07 \u202eevil"


@pytest.fixture(scope="module")
def feature(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    sc = build_feature_scenario(tmp_path_factory.mktemp("terminal"))
    write(sc.repo / "NOTES.md", "by hand\n")
    g(sc, "add", ".")
    g(sc, "commit", "-qm", HOSTILE)
    return sc


def on_a_terminal(sc: Scenario, *args: str) -> str:
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "deja_blame", "--no-pager", *args],
        cwd=sc.repo,
        stdout=slave,
        stderr=subprocess.DEVNULL,
        env=sc.env,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    assert proc.wait(timeout=120) == 0
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def test_on_a_terminal_the_report_is_plain_text(feature: Scenario) -> None:
    out = on_a_terminal(feature, "report")
    for markup in (MARKER, "<details", "<code>", "</summary>", "**", "\\(", "|---"):
        assert markup not in out, (markup, out)
    assert "5 commits, 16 lines added: 11 (68.8%) by agent sessions" in out, out
    assert f"{SID_A[:8]}  agy" in out and f"{SID_B[:8]}  agy" in out
    assert "the last test run FAILED in 1 session(s): a1a1a1a1" in out
    assert "Add a health check endpoint to the app" in out  # opted in: shown
    # every field inert: no escape sequence, hyperlink or bidi override of a subject
    assert "\x1b" not in out and "\u202e" not in out and "Trim [31mred" not in out
    assert "  index Trim red link evil\n" in out
    # asked for, the Markdown on a terminal too; piped, the Markdown as documented
    assert on_a_terminal(feature, "report", "--format", "markdown").startswith(MARKER)
    assert run(feature, "report").stdout.decode().startswith(MARKER + "\n")


def test_where_prompts_are_left_out_the_report_says_how_to_show_them(
    feature: Scenario, tmp_path: Path
) -> None:
    g(feature, "config", "--unset", "deja.notes.prompts")
    try:
        out = on_a_terminal(feature, "report")
        assert "Add a health check" not in out
        assert "(left out)" in out
        assert "prompts left out: deja report --prompts shows them (redacted)" in out
        md = run(feature, "report").stdout.decode()
        assert "Add a health check" not in md
        assert "*Prompts left out: `deja report --prompts` shows them (redacted)" in md
        assert "Add a health check" in on_a_terminal(feature, "report", "--prompts")
        written = tmp_path / "r.md"
        on_a_terminal(feature, "report", "-o", str(written))  # a file: Markdown
        assert written.read_text().startswith(MARKER)
    finally:
        g(feature, "config", "deja.notes.prompts", "true")


def test_the_last_commit_is_said_in_words(repo: Path) -> None:
    """With no upstream the report is of HEAD^!: the text says what that is."""
    from conftest import deja

    (repo / "a.py").write_text("x = 1\n")
    g_env = {"GIT_AUTHOR_NAME": "P", "GIT_AUTHOR_EMAIL": "p@e", "GIT_COMMITTER_NAME": "P",
             "GIT_COMMITTER_EMAIL": "p@e"}  # fmt: skip
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    subprocess.run(
        ["git", "commit", "-qm", "one"], cwd=repo, check=True, env={**os.environ, **g_env}
    )
    out = deja("report", "--format", "text", cwd=repo).stdout.decode()
    assert out.startswith("deja report of the last commit (HEAD^!)\n"), out
    assert "\\!" not in out
