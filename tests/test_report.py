"""deja report end to end: real repositories, real-format transcripts, the real command.

The feature-branch scenario (built once per module, never modified by a test):

    main:    base (a person)                                   <- origin/main
    feature: c1 session A writes app/health.py (5) and 2 lines of app/main.py
             c2 a person adds 2 lines to app/main.py
             c3 session B writes app/prices.py (4); a person adds 1 line to README.md
             c4 a person deletes 2 of A's lines in health.py and adds 1 line

Totals: 15 added, 11 by sessions (A 7, B 4), 4 by people. At the tip A has 5
lines left, B 4. A's last test run (pytest) failed; B's (npm test) passed.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pygit2
import pytest
from antigravity_writer import TranscriptWriter
from conftest import REPO_ROOT, bench_module, commit_env, deja, git

from deja_blame.report import build_report, render_markdown
from deja_blame.report.collect import is_test_command
from deja_blame.report.model import (
    CommandRun,
    CommitReport,
    Counts,
    FileReport,
    Report,
    SessionFile,
    SessionReport,
)
from deja_blame.report.render_markdown import LIMIT, MARKER

T0 = 1_784_278_800  # 2026-07-17T09:00:00Z
SID_A = "a1a1a1a1-0000-4000-8000-00000000000a"
SID_B = "b2b2b2b2-0000-4000-8000-00000000000b"
SECRET = "sk-live1234567890abcdefghij"
GH_TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
PROMPT_B = (
    'Write a price formatter. Ignore `this` | and <script>alert("pwned")</script> '
    f"@octocat <!-- deja-report --> </details> **bold** [x](https://evil.example) api_key={SECRET}"
)

BASE_MAIN = "from flask import Flask\napp = Flask(__name__)\n"
HEALTH = (
    "from flask import Blueprint\n"
    'health_bp = Blueprint("health", __name__)\n'
    '@health_bp.get("/health")\n'
    "def health_check():\n"
    '    return {"ok": True, "service": "shop"}\n'
)
PRICES = (
    "def format_price(cents):\n"
    "    euros = cents / 100\n"
    '    return f"{euros:.2f} EUR"\n'
    "PRICE_FORMAT_VERSION = 2\n"
)


@dataclass
class Scenario:
    repo: Path
    root: Path
    env: dict[str, str]
    shas: list[str] = field(default_factory=list)


def sealed(home: Path) -> dict[str, str]:
    """The same sealing as conftest's, as an explicit environment (module-scoped builds)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "DEJA_", "XDG_"))}
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_STATE_HOME=str(home / ".local/state"),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Test Person",
        GIT_AUTHOR_EMAIL="person@example.com",
        GIT_COMMITTER_NAME="Test Person",
        GIT_COMMITTER_EMAIL="person@example.com",
        GIT_EDITOR="false",
        DEJA_DB=str(home / "index.db"),
        DEJA_ANTIGRAVITY_ROOT=str(home / "no-root"),
    )
    return env


def g(sc: Scenario, *args: str, at: int | None = None) -> str:
    env = {**sc.env, **(commit_env(at) if at is not None else {})}
    proc = subprocess.run(["git", *args], cwd=sc.repo, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, f"git {args}: {proc.stderr}"
    return proc.stdout


def run(sc: Scenario, *args: str, check: bool = True, **env: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "deja_blame", *args],
        cwd=sc.repo,
        env={**sc.env, **env},
        capture_output=True,
        timeout=120,
    )
    if check:
        assert proc.returncode == 0, proc.stderr.decode()
    return proc


def report_json(sc: Scenario, *args: str, **env: str) -> dict:
    return orjson.loads(run(sc, "report", *args, "--format", "json", **env).stdout)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def build_feature_scenario(base: Path) -> Scenario:
    home = base / "home"
    home.mkdir(parents=True)
    sc = Scenario(repo=base / "repo", root=base / "root", env=sealed(home))
    sc.repo.mkdir()
    g(sc, "init", "-q", "-b", "main")
    g(sc, "config", "commit.gpgsign", "false")
    # the person shares their requests (a report, like a note, withholds them otherwise)
    g(sc, "config", "deja.notes.prompts", "true")
    write(sc.repo / "README.md", "# Shop\n")
    write(sc.repo / "app/main.py", BASE_MAIN)
    g(sc, "add", ".")
    g(sc, "commit", "-qm", "base", at=T0 - 3600)
    subprocess.run(
        ["git", "init", "-q", "--bare", str(base / "origin.git")], check=True, env=sc.env
    )
    g(sc, "remote", "add", "origin", str(base / "origin.git"))
    g(sc, "push", "-q", "-u", "origin", "main")
    g(sc, "checkout", "-q", "-b", "feature", "--track", "origin/main")

    ws = str(sc.repo)
    a = TranscriptWriter(sc.root, SID_A, start=T0, workspace=ws)
    a.user("Add a health check endpoint to the app")
    write(sc.repo / "app/health.py", a.write_file(f"{ws}/app/health.py", HEALTH).after)
    a.user("Also register it in main.py")
    main_after = a.replace(
        f"{ws}/app/main.py",
        "app = Flask(__name__)\n",
        "app = Flask(__name__)\napp.register_blueprint(health_bp)\nlog_startup_banner(app)\n",
        current=BASE_MAIN,
    ).after
    write(sc.repo / "app/main.py", main_after)
    a.run_command("pytest -q", exit_code=1, output="1 failed, 3 passed")
    g(sc, "add", ".")
    g(sc, "commit", "-qm", "Add health check", at=T0 + 300)
    sc.shas.append(g(sc, "rev-parse", "HEAD").strip())

    write(sc.repo / "app/main.py", main_after + "# configured by hand\nDEBUG_MODE = False\n")
    g(sc, "commit", "-qam", "Configure by hand", at=T0 + 600)
    sc.shas.append(g(sc, "rev-parse", "HEAD").strip())

    b = TranscriptWriter(sc.root, SID_B, start=T0 + 900, workspace=ws)
    b.user(PROMPT_B)
    write(sc.repo / "app/prices.py", b.write_file(f"{ws}/app/prices.py", PRICES).after)
    b.run_command("npm test", exit_code=0)
    b.run_command(f"curl -H 'Authorization: Bearer {GH_TOKEN}' https://api.example.com", 0)
    write(sc.repo / "README.md", "# Shop\nPrices are formatted in EUR.\n")
    g(sc, "add", ".")
    g(sc, "commit", "-qm", "Prices <b>and</b> | README", at=T0 + 1200)
    sc.shas.append(g(sc, "rev-parse", "HEAD").strip())

    lines = HEALTH.splitlines()
    write(sc.repo / "app/health.py", "\n".join(lines[:3] + ["# health check moved"]) + "\n")
    g(sc, "commit", "-qam", "Trim health", at=T0 + 1500)
    sc.shas.append(g(sc, "rev-parse", "HEAD").strip())

    run(sc, "index", "--root", str(sc.root), "-q")
    return sc


@pytest.fixture(scope="module")
def feature(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    return build_feature_scenario(tmp_path_factory.mktemp("feature"))


# -- content ---------------------------------------------------------------------------


def test_json_totals_files_sessions_commits(feature: Scenario) -> None:
    doc = report_json(feature)  # the default range: origin/main..HEAD
    assert doc["schema"] == 1
    assert doc["range"]["spec"] == "origin/main..HEAD"
    assert doc["range"]["tip"] == feature.shas[-1]
    assert doc["range"]["commits"] == 4
    t = doc["totals"]
    assert (t["added"], t["by_sessions"], t["by_people"]) == (15, 11, 4)
    assert (t["by_sessions_pct"], t["by_people_pct"]) == (73.3, 26.7)
    assert t["by_session"] == {SID_A: 7, SID_B: 4}

    files = [(f["path"], f["added"], f["by_sessions"], f["by_people"]) for f in doc["files"]]
    assert files == [  # by agent share
        ("app/prices.py", 4, 4, 0),
        ("app/health.py", 6, 5, 1),
        ("app/main.py", 4, 2, 2),
        ("README.md", 1, 0, 1),
    ]

    a, b = doc["sessions"]
    assert a["session_id"] == SID_A and b["session_id"] == SID_B
    assert a["indexed"] and a["agent"] == "antigravity"
    assert a["project"] == "."  # shared: the repository's own folder is written .
    assert a["started_at"] == "2026-07-17T09:00:00Z" and a["ended_at"] > a["started_at"]
    assert a["first_prompt"] == "Add a health check endpoint to the app"
    assert a["requests"] == ["Also register it in main.py"]
    assert (a["written"], a["surviving"]) == (7, 5)
    assert a["files"] == [
        {"path": "app/health.py", "written": 5, "surviving": 3},
        {"path": "app/main.py", "written": 2, "surviving": 2},
    ]
    assert [(c["command"], c["exit_code"], c["test"]) for c in a["commands"]] == [
        ("pytest -q", 1, True)
    ]
    assert a["tests"] == {"command": "pytest -q", "exit_code": 1, "status": "failed"}
    assert a["tests_failed"] is True
    assert (b["written"], b["surviving"]) == (4, 4)
    assert b["tests"]["status"] == "passed" and b["tests_failed"] is False
    assert doc["tests_failed"] == [SID_A]

    commits = [
        (c["sha"], c["added"], c["by_sessions"], c["by_people"], c["attribution"])
        for c in doc["commits"]
    ]
    assert commits == [
        (feature.shas[0], 7, 7, 0, "index"),
        (feature.shas[1], 2, 0, 2, "index"),
        (feature.shas[2], 5, 4, 1, "index"),
        (feature.shas[3], 1, 0, 1, "index"),
    ]
    assert doc["commits"][2]["subject"] == "Prices <b>and</b> | README"
    assert not any(c["merge"] for c in doc["commits"])


def test_explicit_range_and_single_commit(feature: Scenario) -> None:
    doc = report_json(feature, f"{feature.shas[0]}..{feature.shas[2]}")
    assert [c["sha"] for c in doc["commits"]] == feature.shas[1:3]
    assert doc["range"]["tip"] == feature.shas[2]
    assert (doc["totals"]["added"], doc["totals"]["by_sessions"]) == (7, 4)
    one = report_json(feature, feature.shas[0])  # a single revision is that commit
    assert [c["sha"] for c in one["commits"]] == [feature.shas[0]]
    assert one["sessions"][0]["surviving"] == 7  # the tip is that commit


def test_markdown_is_a_pr_comment(feature: Scenario) -> None:
    md = run(feature, "report").stdout.decode()
    assert md.startswith(MARKER + "\n")
    assert md.count(MARKER) == 1  # the prompt's own marker is neutralised
    assert len(md) < LIMIT
    summary, _, rest = md.partition("<details")
    assert "**4 commits**, **15** lines added" in summary
    assert "**11** (73.3%) by agent sessions" in summary
    assert "**4** (26.7%) by people or unknown" in summary
    assert "Last test run failed" in summary and "<code>a1a1a1a1</code>" in summary
    assert md.count("<details") == md.count("</details>") == 4
    assert "<code>app/prices.py</code> | 4 | 4 | 0 | 100.0%" in md
    assert "Add a health check endpoint to the app" in md
    assert "Also register it in main.py" in md
    assert "❌ <code>pytest -q</code> exit 1 *(test)*" in md


def pipes(row: str) -> int:
    return row.count("|")


def test_markdown_neutralises_injection_from_prompts(feature: Scenario) -> None:
    md = run(feature, "report").stdout.decode()
    assert "<script" not in md and "&lt;script&gt;" in md
    assert md.count("</details>") == md.count("<details")
    assert "@octocat" not in md and "@&#8203;octocat" in md
    assert "**bold**" not in md and "\\*\\*bold\\*\\*" in md
    assert "[x](https://evil.example)" not in md
    assert "`this`" not in md and "&#96;this&#96;" in md
    # every row of a table has the header's cell count: no pipe got through
    for table in re.findall(r"((?:^\|.*\n)+)", md, flags=re.M):
        rows = table.strip().splitlines()
        assert {pipes(r) for r in rows} == {pipes(rows[0])}, rows
    # a commit subject (from git, not a transcript) is escaped too
    assert "Prices &lt;b&gt;and&lt;/b&gt; &#124; README" in md


def test_every_prompt_and_command_is_redacted(feature: Scenario) -> None:
    for fmt in ("markdown", "json", "html"):
        out = run(feature, "report", "--format", fmt).stdout.decode()
        assert SECRET not in out and GH_TOKEN not in out, fmt
        assert "redacted" in out
    doc = report_json(feature)
    b = doc["sessions"][1]
    assert b["first_prompt"].endswith("api_key=[redacted]")
    assert "Authorization: Bearer [redacted]" in b["commands"][1]["command"]


def test_no_prompts_leaves_prompt_text_out(feature: Scenario) -> None:
    words = ("endpoint to the app", "Also register it", "price formatter", "octocat")
    for fmt in ("markdown", "json", "html"):
        out = run(feature, "report", "--no-prompts", "--format", fmt).stdout.decode()
        for w in words:
            assert w not in out, (fmt, w)
    doc = report_json(feature, "--no-prompts")
    assert doc["prompts"] is False
    for s in doc["sessions"]:
        assert s["first_prompt"] is None and s["requests"] == []
        assert s["commands"]  # commands are not prompts: still there, redacted
    assert doc["totals"]["by_sessions"] == 11


def test_output_file_and_json_flag(feature: Scenario, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = run(feature, "report", "--json", "-o", str(out))
    assert proc.stdout == b""
    assert orjson.loads(out.read_bytes())["totals"]["added"] == 15
    bad = run(feature, "report", "--json", "--format", "html", check=False)
    assert bad.returncode == 2
    missing = run(feature, "report", "-o", str(tmp_path / "nope" / "r.md"), check=False)
    assert missing.returncode == 1
    assert missing.stderr.decode().startswith("deja: error: cannot write")


# -- notes -----------------------------------------------------------------------------


def add_notes_from_index(sc: Scenario, shas: list[str]) -> None:
    """Each commit's note as ``deja annotate`` computes it (attribute_commit), stored
    with plain ``git notes``."""
    from deja_blame.attribution.commit import attribute_commit
    from deja_blame.index.db import connect

    repo = pygit2.Repository(str(sc.repo))
    conn = connect(Path(sc.env["DEJA_DB"]))
    try:
        for sha in shas:
            note = attribute_commit(repo, sha, conn).note
            g(sc, "notes", "--ref", "deja", "add", "-f", "-m", note.dumps(), sha)
    finally:
        conn.close()


def test_notes_alone_give_the_same_report(tmp_path: Path) -> None:
    sc = build_feature_scenario(tmp_path / "world")
    add_notes_from_index(sc, sc.shas)
    # a fresh clone's view: no transcripts, an empty index
    doc = report_json(sc, DEJA_DB=str(tmp_path / "empty.db"))
    assert [c["attribution"] for c in doc["commits"]] == ["note"] * 4
    t = doc["totals"]
    assert (t["added"], t["by_sessions"], t["by_people"]) == (15, 11, 4)
    a, b = doc["sessions"]
    assert (a["session_id"], a["written"], a["surviving"]) == (SID_A, 7, 5)
    assert (b["session_id"], b["written"], b["surviving"]) == (SID_B, 4, 4)
    assert a["indexed"] is False and a["first_prompt"] is None and a["commands"] == []
    assert a["project"] == "."  # shared: the repository's own folder is written .
    md = run(sc, "report", DEJA_DB=str(tmp_path / "empty.db")).stdout.decode()
    assert "Known from commit notes only" in md
    # notes that say nothing of the tests: not "ran none"
    assert md.count("❔ unknown (no transcript here)") == 2

    # A note wins over the index: claim the person's lines of c2 for a third session.
    note = {
        "schema": 1,
        "tool": "test",
        "commit": sc.shas[1],
        "files": {"app/main.py": {"c3c3c3c3-note-only": [[5, 6, 0.9]]}},
        "sessions": {"c3c3c3c3-note-only": {"agent": "antigravity", "project": "/elsewhere"}},
    }
    g(sc, "notes", "--ref", "deja", "add", "-f", "-m", orjson.dumps(note).decode(), sc.shas[1])
    doc = report_json(sc)
    c2 = doc["commits"][1]
    assert (c2["attribution"], c2["by_session"]) == ("note", {"c3c3c3c3-note-only": 2})
    assert doc["totals"]["by_sessions"] == 13


def test_a_report_from_notes_alone_knows_how_the_tests_ended(tmp_path: Path) -> None:
    """CI's gate (docs/ci.md: ``.tests_failed == []``) runs on a clone with notes and
    no transcripts: the notes deja annotate writes say how each session's last test
    run ended (one word, never the command), so the gate fails there too."""
    sc = build_feature_scenario(tmp_path / "world")
    run(sc, "annotate", "origin/main..HEAD", "--no-refresh")
    author = report_json(sc, "origin/main..HEAD")
    assert author["tests_failed"] == [SID_A]
    note = g(sc, "notes", "--ref", "deja", "show", sc.shas[0])
    assert '"tests":"failed"' in note.replace(" ", "") and "pytest" not in note

    ci = {"DEJA_DB": str(tmp_path / "empty.db")}
    doc = report_json(sc, "origin/main..HEAD", **ci)
    assert doc["tests_failed"] == [SID_A]
    a, b = doc["sessions"]
    assert (a["indexed"], a["tests"]) == (
        False,
        {"command": None, "exit_code": None, "status": "failed"},
    )
    assert (b["tests"]["status"], b["tests_failed"]) == ("passed", False)
    md = run(sc, "report", "origin/main..HEAD", **ci).stdout.decode()
    assert "❌ **failed** (its note)" in md and "✅ passed (its note)" in md
    assert "The last test run failed** (as the commit's note records)" in md


@pytest.mark.parametrize(("first", "last"), [("passed", "failed"), ("failed", "passed")])
def test_from_notes_alone_a_session_s_tests_are_as_its_latest_commit_left_them(
    first: str, last: str, repo: Path, tmp_path: Path
) -> None:
    """Review 9: a session's two commits, its tests passing at the first and failing
    before the second (and the reverse): CI's report says how they stood last."""
    from conftest import commit_env, deja_json, git

    sid = "11111111-2222-4333-8444-555555555555"
    (repo / "base.txt").write_text("base\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base", env=commit_env(1_784_278_000))
    for n, (status, text) in enumerate(((first, "a\nb\n"), (last, "a\nb\nc\nd\n"))):
        (repo / "app.py").write_text(text)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"c{n}", env=commit_env(1_784_278_860 + 1000 * n))
        sha = git(repo, "rev-parse", "HEAD").strip()
        note = {
            "schema": 2,
            "tool": "deja-blame 0.1.0",
            "commit": sha,
            "files": {"app.py": {sid: [[2 * n + 1, 2 * n + 2, 0.97, 1_784_278_860]]}},
            "sessions": {
                sid: {"agent": "claude-code", "project": ".", "tests": status},
            },
        }
        git(repo, "notes", "--ref", "deja", "add", "-m", orjson.dumps(note).decode(), sha)
    env = {"DEJA_DB": str(tmp_path / "empty.db")}
    doc = deja_json("report", "HEAD~2..HEAD", "--format", "json", "--no-refresh", cwd=repo, env=env)
    (session,) = doc["sessions"]
    assert session["tests"]["status"] == last
    assert doc["tests_failed"] == ([sid] if last == "failed" else [])


def test_a_partial_clone_reports_what_the_full_one_does(tmp_path: Path) -> None:
    """A reviewer's ``git clone --filter=blob:none`` lacks the old versions of files,
    which libgit2 cannot fetch: deja has git fetch them for each commit's diff. With
    the remote gone as well, the report still comes out (what is missing is not
    counted), instead of an unexpected error."""
    sc = build_feature_scenario(tmp_path / "world")
    origin = tmp_path / "world" / "origin.git"
    g(sc, "push", "-q", "origin", "feature")
    subprocess.run(
        ["git", "-C", str(origin), "config", "uploadpack.allowfilter", "true"],
        check=True,
        env=sc.env,
    )

    def blobless_clone(to: Path) -> Path:
        subprocess.run(
            ["git", "clone", "-q", "--filter=blob:none", "--no-local", "-b", "feature"]
            + [str(origin), str(to)],
            check=True,
            env=sc.env,
        )
        return to

    clone = blobless_clone(tmp_path / "clone")
    missing = subprocess.run(
        ["git", "rev-list", "--objects", "--missing=print", "--all"],
        cwd=clone,
        capture_output=True,
        text=True,
        env=sc.env,
    ).stdout
    assert missing.count("\n?") >= 1  # old versions of files are not in the clone
    reviewer = Scenario(repo=clone, root=sc.root, env=sc.env)
    doc = report_json(reviewer, "origin/main..HEAD")  # here feature tracks origin/feature
    t = doc["totals"]
    assert (t["added"], t["by_sessions"], t["by_people"]) == (15, 11, 4)

    bare = blobless_clone(tmp_path / "clone2")
    import shutil

    shutil.rmtree(origin)  # nothing left to fetch from
    proc = run(
        Scenario(repo=bare, root=sc.root, env=sc.env),
        *("report", "origin/main..HEAD", "--format", "json"),
    )
    assert "Traceback" not in proc.stderr.decode() and "unexpected" not in proc.stderr.decode()
    assert orjson.loads(proc.stdout)["totals"]["added"] <= 15


# -- bad input -------------------------------------------------------------------------


def one_line_error(proc: subprocess.CompletedProcess, start: str) -> str:
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    assert err.startswith(f"deja: error: {start}"), err
    assert len([ln for ln in err.splitlines() if not ln.startswith("hint:")]) == 1, err
    return err


def test_unknown_revision_is_a_one_line_error(feature: Scenario) -> None:
    one_line_error(run(feature, "report", "nope..HEAD", check=False), "unknown revision")
    one_line_error(run(feature, "report", "no-such-branch", check=False), "unknown revision")
    one_line_error(run(feature, "report", "HEAD:README.md", check=False), "'HEAD:README.md'")
    one_line_error(run(feature, "report", "--", "--all", check=False), "'--all' is not")


def test_empty_range(feature: Scenario) -> None:
    doc = report_json(feature, "HEAD..HEAD")
    assert doc["commits"] == [] and doc["files"] == [] and doc["sessions"] == []
    assert doc["totals"]["added"] == 0 and doc["totals"]["by_sessions_pct"] == 0.0
    md = run(feature, "report", "HEAD..HEAD").stdout.decode()
    assert md.startswith(MARKER) and "No commits in this range" in md
    html = run(feature, "report", "HEAD..HEAD", "--format", "html").stdout.decode()
    assert "No commits in this range" in html


def test_outside_a_repository_and_without_commits(tmp_path: Path, repo: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    one_line_error(deja("report", cwd=plain, check=False), "")
    one_line_error(deja("report", cwd=repo, check=False), "this repository has no commits")


def test_range_with_no_attributed_lines(repo: Path) -> None:
    (repo / "a.txt").write_text("one\ntwo\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "one", env=commit_env(T0))
    (repo / "a.txt").write_text("one\ntwo\nthree\n")
    git(repo, "commit", "-qam", "two", env=commit_env(T0 + 60))
    proc = deja("report", "--format", "json", cwd=repo)
    doc = orjson.loads(proc.stdout)
    # no upstream: the last commit
    assert doc["range"]["spec"] == "HEAD^!" and len(doc["commits"]) == 1
    assert (doc["totals"]["added"], doc["totals"]["by_sessions"]) == (1, 0)
    assert doc["totals"]["by_people_pct"] == 100.0 and doc["sessions"] == []
    assert "every line counts as people or unknown" in proc.stderr.decode()
    root = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    md = deja("report", f"{root}~0", cwd=repo).stdout.decode()  # the root commit alone
    assert "**2** lines added: **0** (0.0%) by agent sessions" in md
    assert "No attribution available" in md


def test_merge_commit_counts_against_first_parent_once(repo: Path, tmp_path: Path) -> None:
    root = tmp_path / "root"
    ws = str(repo)
    (repo / "README.md").write_text("# x\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base", env=commit_env(T0 - 100))
    git(repo, "checkout", "-qb", "feature")
    w = TranscriptWriter(root, SID_A, start=T0, workspace=ws)
    w.user("Write the parser")
    body = "def parse_config(text):\n    return dict(line.split('=') for line in text)\n"
    (repo / "parser.py").write_text(w.write_file(f"{ws}/parser.py", body).after)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "parser", env=commit_env(T0 + 100))
    git(repo, "checkout", "-q", "main")
    (repo / "notes.txt").write_text("written by hand\nand more\nand more again\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "notes", env=commit_env(T0 + 200))
    git(repo, "checkout", "-q", "feature")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge main", "main", env=commit_env(T0 + 300))
    deja("index", "--root", str(root))

    doc = orjson.loads(deja("report", "main~1..feature", "--format", "json", cwd=repo).stdout)
    merges = [c for c in doc["commits"] if c["merge"]]
    assert len(doc["commits"]) == 3 and len(merges) == 1
    assert merges[0]["added"] == 0  # a clean merge introduces nothing of its own
    assert (doc["totals"]["added"], doc["totals"]["by_sessions"]) == (5, 2)
    assert doc["totals"]["added"] == sum(c["added"] for c in doc["commits"])
    assert doc["sessions"][0]["surviving"] == 2

    # An "evil" merge: the merge itself adds a line; only that line is the merge's.
    (repo / "parser.py").write_text(body + "PARSER_VERSION = 3\n")
    git(repo, "commit", "-q", "--amend", "-am", "merge main", env=commit_env(T0 + 400))
    doc = orjson.loads(deja("report", "main~1..feature", "--format", "json", cwd=repo).stdout)
    merge = [c for c in doc["commits"] if c["merge"]][0]
    assert (merge["added"], merge["by_people"]) == (1, 1)
    assert doc["totals"]["added"] == 6
    # Range from the first parent: the merge and what it brought in, nothing twice.
    doc = orjson.loads(deja("report", "feature^1..feature", "--format", "json", cwd=repo).stdout)
    assert doc["totals"]["added"] == 4 and len(doc["commits"]) == 2


# -- library ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q",
        "cd /work/api && python3 -m pytest tests/",
        "npm test",
        "npm run test:unit",
        "yarn test",
        "go test ./...",
        "cargo test --all",
        "make test",
        "tox -e py311",
        "npx jest --ci",
        "CI=1 npx vitest run",
        "uv run pytest",
        "./gradlew test",
        "timeout 60 pytest -x",
    ],
)
def test_test_like_commands(command: str) -> None:
    assert is_test_command(command)


@pytest.mark.parametrize(
    "command",
    ["ls -la", "npm install", "git commit -m test", "echo pytest", "cat tests/test_x.py", "make"],
)
def test_commands_that_are_not_tests(command: str) -> None:
    assert not is_test_command(command)


def huge_report() -> Report:
    long = "Please refactor <b>everything</b> | " + "and then some more words " * 60
    sessions = [
        SessionReport(
            session_id=f"{i:08x}-0000-4000-8000-000000000000",
            first_prompt=long,
            requests=[long] * 30,
            files={f"src/f{j}.py": SessionFile(f"src/f{j}.py", 10, 5) for j in range(40)},
            commands=[
                CommandRun(f"pytest tests/t{j}.py -k {'x' * 100}", 1, None, True) for j in range(40)
            ],
            indexed=True,
            colour=i,
        )
        for i in range(300)
    ]
    files = [
        FileReport(f"src/{'deep/' * 10}file_{i}.py", Counts(100, {sessions[0].session_id: 50}))
        for i in range(3000)
    ]
    commits = [
        CommitReport(f"{i:040x}", [f"{i + 1:040x}"], long, "P", "2026", Counts(10), "note")
        for i in range(2000)
    ]
    return Report(
        spec="origin/main..HEAD",
        tip="f" * 40,
        base=[],
        commits=commits,
        totals=Counts(300000, {s.session_id: 500 for s in sessions}),
        files=files,
        sessions=sessions,
        prompts=True,
        tool="deja-blame test",
    )


def test_markdown_stays_under_the_limit_and_says_what_was_cut() -> None:
    md = render_markdown(huge_report())
    assert len(md) <= LIMIT
    assert md.startswith(MARKER)
    assert md.count("<details") == md.count("</details>")
    assert re.search(r"… \d+ more files not shown", md)
    assert re.search(r"… \d+ more commits not shown", md)
    assert "**2000 commits**" in md  # the summary is never cut
    assert "| Agent sessions | 150000 | 50.0% |" in md
    assert "and 290 more" in md  # the failed-tests line is bounded too


@pytest.mark.parametrize("prompts", [True, False])
def test_markdown_s_budget_counts_every_character_it_emits(prompts: bool) -> None:
    """At the edge: a report of exactly ``limit`` characters is shown whole, one character
    less cuts rows and stays within it. The budget counts every line it emits: the
    prompts-left-out line under the sessions table, the cut lines, every frame (it
    guessed 120 a section and 200 more, so it cut a report that fitted)."""
    import dataclasses

    big = huge_report()
    report = dataclasses.replace(
        big, sessions=big.sessions[:3], files=big.files[:200], commits=big.commits[:100]
    )
    report.prompts = prompts
    if not prompts:  # as collect leaves them: a request is set only where it is shown
        report.sessions = [
            dataclasses.replace(s, first_prompt=None, requests=[]) for s in report.sessions
        ]
    whole = render_markdown(report, limit=10**9)
    assert ("Prompts left out" in whole) is not prompts
    assert render_markdown(report, limit=len(whole)) == whole
    for limit in (len(whole) - 1, len(whole) - 150, len(whole) // 2, 20_000):
        md = render_markdown(report, limit=limit)
        assert len(md) <= limit, (limit, len(md))
        assert "not shown" in md and "report cut to fit" not in md, limit
        assert ("Prompts left out" in md) is not prompts


def test_speed_200_commits_with_notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bench repository: correct totals, in well under 2 s of CPU (this process and
    the git it runs: wall time on a loaded machine measured the load), without a
    process per commit."""
    import resource

    bench = bench_module("report", "bench_report")
    expected = bench.build_repo(tmp_path / "repo", commits=200, files=20)
    repo = pygit2.Repository(str(tmp_path / "repo"))

    calls = []
    real_run = subprocess.run

    def counting_run(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(args[0] if args else kwargs.get("args"))
        return real_run(*args, **kwargs)

    def cpu() -> float:
        return sum(
            r.ru_utime + r.ru_stime
            for r in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
        )

    monkeypatch.setattr(subprocess, "run", counting_run)
    start = cpu()
    report = build_report(repo, "main~200..main", None)
    took = cpu() - start
    render_markdown(report)
    assert (report.totals.added, report.totals.by_sessions) == (
        expected["added"],
        expected["by_sessions"],
    )
    assert report.notes_found == 200
    assert len(calls) <= 25, f"{len(calls)} subprocesses for 200 commits"  # blame per file
    assert took < 2.0, f"build_report took {took:.2f} s of CPU"


# -- the documented JSON schema ----------------------------------------------------------


def shape(doc: object, path: str = "") -> set[str]:
    """Every field path of a document (lists: their first item; by_session: keys are ids)."""
    out: set[str] = set()
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.add(f"{path}.{k}")
            if k != "by_session":
                out |= shape(v, f"{path}.{k}")
    elif isinstance(doc, list) and doc:
        out |= shape(doc[0], f"{path}[]")
    return out


def test_json_matches_the_documented_schema(feature: Scenario) -> None:
    text = (REPO_ROOT / "docs" / "report.md").read_text()
    example = orjson.loads(re.search(r"```json\n(.*?)```", text, flags=re.S).group(1))
    doc = report_json(feature)
    assert shape(doc) == shape(example)
    # and every field the example shows is named in the field tables
    for field_path in shape(example):
        name = field_path.rsplit(".", 1)[-1]
        assert re.search(rf"`(?:[\w.]+\.)?{name}(?:\.[\w.]+)?`", text), name


def test_blames_derived_across_commits_give_the_same_report(
    feature: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report blames each file at each commit that changed it, then at the tip:
    the later blames are carried from the earlier ones (``derived_blame``), and the
    report is the one git's own blames give."""
    from deja_blame.attribution.facts import derived_blame
    from deja_blame.index.db import connect
    from deja_blame.report import render_json

    for name, value in feature.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("DEJA_NO_CACHE", "1")  # each report blames afresh
    repo = pygit2.Repository(str(feature.repo))
    conn = connect(Path(feature.env["DEJA_DB"]))
    real = derived_blame.derive
    derived: list[str] = []

    def counted(root: object, commit: str, path: str) -> object:
        got = real(root, commit, path)  # type: ignore[arg-type]
        if got is not None:
            derived.append(path)
        return got

    monkeypatch.setattr(derived_blame, "derive", counted)
    shared = render_json(build_report(repo, "origin/main..HEAD", conn))
    assert derived, "no blame was derived"
    monkeypatch.setattr(derived_blame, "derive", lambda *_: None)
    assert render_json(build_report(repo, "origin/main..HEAD", conn)) == shared


def _git_processes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    started: list[str] = []
    real = subprocess.Popen.__init__

    def spy(self: subprocess.Popen, args: Any, *a: Any, **k: Any) -> None:
        if isinstance(args, (list, tuple)) and args and str(args[0]).endswith("git"):
            started.append(" ".join(str(x) for x in args[1:4]))
        real(self, args, *a, **k)

    monkeypatch.setattr(subprocess.Popen, "__init__", spy)
    # what git rev-parse and for-each-ref would say, read from the repository's files
    # where they say it all (``gitfiles``): the same question, without a process
    from deja_blame import gitfiles

    def counted(real: Any, asked: str) -> Any:
        def read(*a: Any) -> Any:
            started.append(f"-C files {asked}")
            return real(*a)

        return read

    monkeypatch.setattr(gitfiles, "rev_parse", counted(gitfiles.rev_parse, "rev-parse"))
    monkeypatch.setattr(gitfiles, "ref_tips", counted(gitfiles.ref_tips, "for-each-ref"))
    return started


def test_stats_asks_what_holds_for_the_tree_once(
    feature: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every file of a stats run shares HEAD, the notes' tips and what sessions wrote
    to each file (``facts/shared.py``): the same numbers, fewer questions."""
    import contextlib
    import sqlite3

    from deja_blame.commands import stats as stats_cmd
    from deja_blame.index.db import connect

    for name, value in feature.env.items():
        monkeypatch.setenv(name, value)
    db = Path(feature.env["DEJA_DB"])
    files = stats_cmd.files_of(feature.repo, None, [])

    def cold_stats() -> tuple[dict, list[str]]:
        with sqlite3.connect(db) as raw:
            raw.execute("DELETE FROM blame_cache")
            raw.execute("DELETE FROM attribution_cache")
        started = _git_processes(monkeypatch)
        got = stats_cmd.stats_of(connect(db), feature.repo, None, files, refresh=False)
        monkeypatch.undo()
        for name, value in feature.env.items():
            monkeypatch.setenv(name, value)
        return got.to_json(), started

    shared_json, shared_asks = cold_stats()
    monkeypatch.setattr(stats_cmd.shared, "one_question", lambda _root: contextlib.nullcontext())
    alone_json, alone_asks = cold_stats()
    assert shared_json == alone_json

    # HEAD and the notes' tips: once a file each alone (stage 1 takes HEAD as the
    # command's edge read it), a few times shared (the pool's threads may each ask
    # before the first answer is kept)
    def tips(asks: list[str]) -> int:
        return sum(a.split(" ", 2)[2] in ("rev-parse", "for-each-ref") for a in asks)

    assert len(files) == 4 and tips(alone_asks) >= 2 * len(files)
    assert tips(shared_asks) <= 6


def test_fingerprints_of_paths_are_each_paths(feature: Scenario) -> None:
    from deja_blame.attribution.facts import indexread as Q
    from deja_blame.index.db import connect

    conn = connect(Path(feature.env["DEJA_DB"]))
    from deja_blame.index.queries import LINES

    pids = [int(r[0]) for r in conn.execute(f"SELECT DISTINCT path_id FROM {LINES}")]
    fps = {int(r[0]) for r in conn.execute(f"SELECT fp FROM {LINES}")} | {1, 2, 3}
    every = Q.fingerprints_of_paths(conn, pids + [10**9])
    assert len(pids) >= 3 and every[10**9] == set()
    for pid in pids:
        assert every[pid] & fps == Q.fingerprints_written(conn, pid, fps)
        assert every[pid]


def test_a_report_withholds_requests_and_private_paths_unless_the_person_opted_in(
    tmp_path: Path,
) -> None:
    # A report is made to be shared (a PR comment): as with notes, the person's requests
    # only where they opted in, and home folders never named (another user's, Windows')
    sc = build_feature_scenario(tmp_path / "world")
    g(sc, "config", "--unset", "deja.notes.prompts")
    doc = report_json(sc)
    assert doc["prompts"] is False
    for s in doc["sessions"]:
        assert s["first_prompt"] is None and s["requests"] == []
    assert "Add a health check" not in run(sc, "report").stdout.decode()
    assert report_json(sc, "--prompts")["sessions"][0]["first_prompt"]
    g(sc, "config", "deja.notes.prompts", "true")
    assert report_json(sc)["prompts"] is True
    assert report_json(sc, "--no-prompts")["prompts"] is False
    both = run(sc, "report", "--prompts", "--no-prompts", check=False)
    assert both.returncode == 2 and b"disagree" in both.stderr  # bad usage, as --json --format
    # every text that names a home folder, its user's name left out
    from deja_blame.outputs.redact import redact_for_sharing

    for private in ("/home/alice/shop", "C:\\Users\\bob\\shop", "/Users/carol/shop"):
        shared = redact_for_sharing(f"cd {private} && pytest", str(sc.repo))
        assert "alice" not in shared and "bob" not in shared and "carol" not in shared
    text = orjson.dumps(report_json(sc)).decode()
    assert str(sc.repo) not in text  # the repository's own folder is written .
    # a session's project elsewhere on the author's disk is not given away (as in notes)
    conn = sqlite3.connect(sc.env["DEJA_DB"])
    conn.execute("UPDATE sessions SET project = '/workspaces/acme-internal/shop'")
    conn.commit()
    conn.close()
    doc = report_json(sc, "--no-refresh")
    assert {s["project"] for s in doc["sessions"]} == {"-"}
    assert "acme-internal" not in run(sc, "report", "--no-refresh").stdout.decode()


def test_stats_leaves_no_connection_of_its_threads_open(
    feature: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The blaming threads' connections are closed when stats_of returns. Left to
    the garbage collector (an sqlite3 connection's statement cache refers to it),
    they were still open when the command closed its own: its close did not fold
    the WAL, and a resident server's fork, which ends without collecting, left a
    16 MB WAL beside the index with no process holding it."""
    import gc
    import sqlite3

    from deja_blame.commands import stats as stats_cmd
    from deja_blame.index.db import connect

    for name, value in feature.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(stats_cmd, "MAX_JOBS", 3)
    db = Path(feature.env["DEJA_DB"])
    files = stats_cmd.files_of(feature.repo, None, [])
    assert len(files) > 1  # blamed by threads

    def still_open() -> list[sqlite3.Connection]:
        found = []
        for obj in gc.get_objects():
            if isinstance(obj, sqlite3.Connection):
                try:
                    obj.total_changes  # noqa: B018 - raises once closed
                except sqlite3.ProgrammingError:
                    continue
                found.append(obj)
        return found

    gc.collect()
    before = {id(c) for c in still_open()}
    gc.disable()  # what the collector would free by chance is not the point
    try:
        conn = connect(db)
        stats_cmd.stats_of(conn, feature.repo, None, files, refresh=False)
        left = [c for c in still_open() if id(c) not in before and c is not conn]
        conn.close()
    finally:
        gc.enable()
    assert left == []
