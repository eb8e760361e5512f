"""deja blame takes git blame's options: -w, -M, -C, --since, --ignore-rev(s-file) go to
git (and blame.ignoreRevsFile applies, as in git), --date, -e, -s, --line-porcelain
shape the output; attribution follows the commit and file git names."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from conftest import commit_env, deja, deja_json, git

T0 = 1_795_852_800  # 2026-11-28T08:00:00Z
BODY = [
    "def total(items):",
    "    subtotal = sum(item.price for item in items)",
    "    if subtotal > 100:",
    "        subtotal = subtotal * 0.9",
    "    return round(subtotal, 2)",
]


def iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _claude_session(home: Path, repo: Path, lines: list[str], at: int) -> str:
    sid = "c1a2b3c4-0000-4000-8000-00000000aaaa"
    project = home / ".claude" / "projects" / "-repo"
    project.mkdir(parents=True, exist_ok=True)
    content = "\n".join(lines) + "\n"
    records: list[dict[str, Any]] = [
        {"type": "user", "sessionId": sid, "cwd": str(repo), "timestamp": iso(at),
         "message": {"role": "user", "content": "Write total()."}},
        {"type": "assistant", "sessionId": sid, "cwd": str(repo), "timestamp": iso(at + 5),
         "message": {"role": "assistant", "model": "claude-opus-4-1", "content": [
             {"type": "tool_use", "id": "t1", "name": "Write",
              "input": {"file_path": str(repo / "cart.py"), "content": content}}]}},
        {"type": "user", "sessionId": sid, "cwd": str(repo), "timestamp": iso(at + 6),
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "t1", "content": "File created"}]},
         "toolUseResult": {"type": "create", "filePath": str(repo / "cart.py"),
                           "content": content, "structuredPatch": []}},
    ]  # fmt: skip
    (project / f"{sid}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return sid


@pytest.fixture
def reformatted(repo: Path, tmp_path: Path) -> dict[str, Any]:
    """A session writes cart.py (commit A); a person re-indents it to tabs (commit B)
    and moves nothing else; a third commit (C) by the person adds a line."""
    sid = _claude_session(tmp_path / "home", repo, BODY, T0)
    (repo / "cart.py").write_text("\n".join(BODY) + "\n")
    git(repo, "add", "cart.py")
    git(repo, "commit", "-qm", "total", env=commit_env(T0 + 600))
    a = git(repo, "rev-parse", "HEAD").strip()
    tabs = [line.replace("    ", "\t") for line in BODY]
    (repo / "cart.py").write_text("\n".join(tabs) + "\n")
    git(repo, "commit", "-qam", "tabs", env=commit_env(T0 + 1200))
    b = git(repo, "rev-parse", "HEAD").strip()
    (repo / "cart.py").write_text("\n".join(tabs) + "\n\nCURRENCY = 'EUR'\n")
    git(repo, "commit", "-qam", "currency", env=commit_env(T0 + 1800))
    return {"repo": repo, "sid": sid, "a": a, "b": b}


def _commits(doc: dict[str, Any]) -> list[str]:
    return [ln["commit"] for ln in doc["lines"]]


def test_whitespace_and_ignored_revisions_follow_git(reformatted: dict[str, Any]) -> None:
    repo, a, b, sid = reformatted["repo"], reformatted["a"], reformatted["b"], reformatted["sid"]
    env = {"DEJA_ANTIGRAVITY_ROOT": ""}
    plain = deja_json("blame", str(repo / "cart.py"), "--json", env=env)
    assert _commits(plain)[1:5] == [b] * 4  # the re-indented lines: commit B
    w = deja_json("blame", "-w", str(repo / "cart.py"), "--json", env=env)
    assert _commits(w)[:5] == [a] * 5  # white space ignored: the session's commit
    assert [ln["session"] for ln in w["lines"][:5]] == [sid] * 5
    ignored = deja_json("blame", "--ignore-rev", b, str(repo / "cart.py"), "--json", env=env)
    assert _commits(ignored)[1:5] == [a] * 4
    # git's own setting, as git blame applies it
    (repo / ".git-blame-ignore-revs").write_text(f"# formatting\n{b}\n")
    git(repo, "config", "blame.ignoreRevsFile", ".git-blame-ignore-revs")
    configured = deja_json("blame", str(repo / "cart.py"), "--json", env=env)
    assert _commits(configured)[1:5] == [a] * 4
    assert (
        subprocess.run(["git", "blame", "--porcelain", "cart.py"], cwd=repo, capture_output=True)
        .stdout.split()[0]
        .decode()
        == a
    )  # what git blame itself says with that setting
    # the hook's notes do not depend on a local setting: annotate blames without it, so
    # commit B introduced the re-indented lines (and a re-indent keeps their writer)
    deja("annotate", "HEAD~1", cwd=repo, env=env)
    note = json.loads(git(repo, "notes", "--ref", "deja", "show", "HEAD~1"))
    assert [r[:2] for r in note["files"]["cart.py"][sid]] == [[2, 5]]


def test_since_marks_older_commits_as_the_boundary(reformatted: dict[str, Any]) -> None:
    repo = reformatted["repo"]
    doc = deja_json("blame", "--since", "2026-11-28T08:25:00Z", str(repo / "cart.py"), "--json")
    git_says = subprocess.run(
        ["git", "blame", "--porcelain", "--since", "2026-11-28T08:25:00Z", "cart.py"],
        cwd=repo,
        capture_output=True,
        text=True,
    ).stdout
    heads = [ln.split()[0] for ln in git_says.splitlines() if len(ln.split()) >= 3
             and len(ln.split()[0]) == 40]  # fmt: skip
    assert _commits(doc) == heads  # the boundary where git puts it
    assert reformatted["b"] in heads and reformatted["a"] not in heads
    out = deja("blame", "--since=2030-01-01", str(repo / "cart.py")).stdout.decode()
    assert len(out.splitlines()) == 7


def test_moves_and_copies_follow_git(repo: Path) -> None:
    lines = [f"value_{i} = compute_value({i}, scale=3)" for i in range(12)]
    (repo / "a.py").write_text("\n".join(lines) + "\n")
    (repo / "b.py").write_text("x = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "one", env=commit_env(T0))
    first = git(repo, "rev-parse", "HEAD").strip()
    # move six lines from a.py to b.py in one commit
    (repo / "a.py").write_text("\n".join(lines[:6]) + "\n")
    (repo / "b.py").write_text("x = 1\n" + "\n".join(lines[6:]) + "\n")
    git(repo, "commit", "-qam", "move", env=commit_env(T0 + 60))
    plain = deja_json("blame", str(repo / "b.py"), "--json")
    assert set(_commits(plain)[1:]) == {git(repo, "rev-parse", "HEAD").strip()}
    copied = deja_json("blame", "-C", str(repo / "b.py"), "--json")
    assert set(_commits(copied)[1:]) == {first}
    moved = deja_json("blame", "-M", "-C50", str(repo / "b.py"), "--json")
    assert set(_commits(moved)[1:]) == {first}


def test_output_options(reformatted: dict[str, Any]) -> None:
    repo = reformatted["repo"]
    out = deja("blame", "-e", "--date", "iso", str(repo / "cart.py")).stdout.decode()
    last = out.splitlines()[-1]
    assert "<person@example.com>" in last and "2026-11-28 08:30:00 +0000" in last
    quiet = deja("blame", "-s", str(repo / "cart.py")).stdout.decode().splitlines()[-1]
    assert "Test Person" not in quiet and "2026" not in quiet and quiet.endswith("CURRENCY = 'EUR'")
    lp = deja("blame", "--line-porcelain", str(repo / "cart.py")).stdout.decode()
    assert lp.count("\nauthor ") + lp.startswith("author ") == 7  # every line has it
    assert lp.count("\nfilename cart.py") == 7
    p = deja("blame", "--porcelain", str(repo / "cart.py")).stdout.decode()
    assert p.count("\nauthor ") < 7
    assert deja("blame", "-p", str(repo / "cart.py")).stdout.decode() == p  # git's short -p
    bad = deja("blame", "--date", "bogus", str(repo / "cart.py"), check=False)
    assert bad.returncode == 2 and b"unknown date format 'bogus'" in bad.stderr  # bad usage
    assert b"Traceback" not in bad.stderr
    both = deja("blame", "--porcelain", "--line-porcelain", str(repo / "cart.py"), check=False)
    assert both.returncode == 2


def test_white_space_only_changes_give_one_answer_with_or_without_w(
    repo: Path, tmp_path: Path
) -> None:
    """A person's commit that only touches white space (a trailing space on a short
    line, spaces on a blank line, a line re-indented) keeps the session's lines
    theirs, with the same confidence, whether git blame ignores white space or not."""
    body = [*BODY, "", "def other(x):", "    y = x + 1", "    return y * 2"]
    sid = _claude_session(tmp_path / "home", repo, body, T0)
    (repo / "cart.py").write_text("\n".join(body) + "\n")
    git(repo, "add", "cart.py")
    git(repo, "commit", "-qm", "total", env=commit_env(T0 + 600))
    spaced = list(body)
    spaced[5] = "  "  # the blank line gains spaces
    spaced[7] = "    y = x + 1 "  # a short line gains a trailing space
    spaced[8] = "\treturn y * 2"  # re-indented
    (repo / "cart.py").write_text("\n".join(spaced) + "\n")
    git(repo, "commit", "-qam", "white space", env=commit_env(T0 + 1200))
    env = {"DEJA_ANTIGRAVITY_ROOT": ""}
    answers = []
    for flags in ([], ["-w"]):
        doc = deja_json("blame", *flags, str(repo / "cart.py"), "--json", env=env)
        answers.append([(ln["session"], ln["confidence"]) for ln in doc["lines"]])
    assert answers[0] == answers[1]
    assert [s for s, _ in answers[0]][6:9] == [sid] * 3


def test_show_email_gives_the_whole_address_as_git_does(repo: Path) -> None:
    mail = "maintainers@users.noreply.a-long-organisation-name.example"
    (repo / "a.py").write_text("x = 1\n")
    git(repo, "add", "a.py")
    env = {**commit_env(1_784_278_800), "GIT_AUTHOR_EMAIL": mail}
    git(repo, "commit", "-q", "-m", "a", env=env)
    out = deja("blame", "-e", "a.py", cwd=repo).stdout.decode()
    assert f"(<{mail}> " in out  # a cut address is no address
    assert f"(<{mail}> " in git(repo, "blame", "-e", "a.py")


def test_a_revision_added_to_the_ignore_revs_file_is_seen(repo: Path) -> None:
    """The caches key an ignore-revs file by its content, not only its path: a
    revision added to it changes git blame's answer, and deja's with it."""
    (repo / "a.py").write_text("x=1\ny=2\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "person writes", env=commit_env(1_780_000_000))
    first = git(repo, "rev-parse", "HEAD").strip()
    (repo / "a.py").write_text("x = 1\ny = 2\n")
    git(repo, "commit", "-qam", "reformat", env=commit_env(1_780_000_060))
    reformat = git(repo, "rev-parse", "HEAD").strip()
    ignore = repo / ".git-blame-ignore-revs"
    ignore.write_text("")
    args = ("blame", str(repo / "a.py"), "--json", "--ignore-revs-file", str(ignore))
    assert _commits(deja_json(*args)) == [reformat] * 2
    ignore.write_text(reformat + "\n")  # the reformat is to be looked through now
    assert _commits(deja_json(*args)) == [first] * 2
