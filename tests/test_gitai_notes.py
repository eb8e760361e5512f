"""git-ai's authorship notes (refs/notes/ai, authorship/3.0.0) read by blame, why,
stats and report, for lines deja's own notes and index do not explain.

The notes are written as the Git AI Standard v3.0.0 (git-ai-project/git-ai,
``specs/git_ai_standard_v3.0.0.md``) shows them: the sessions format, a known
human, a legacy key, a quoted path.
"""

from __future__ import annotations

from pathlib import Path

from conftest import commit_env, deja, deja_json, git

from deja_blame.notes.gitai import parse_authorship

T0 = 1_795_852_800  # 2026-11-28T08:00:00Z
SESSION = "s_c9883b05a2487d"
LEGACY = "abcd1234abcd1234"

NOTE = """a.py
  s_c9883b05a2487d::t_9f8e7d6c5b4a32 6-8
  s_c9883b05a2487d::t_a1b2c3d4e5f678 9-10
  h_31dce776f88375 11-12
"my notes.md"
  abcd1234abcd1234 1-2
---
{
  "schema_version": "authorship/3.0.0",
  "git_ai_version": "1.4.5",
  "base_commit_sha": "BASE",
  "prompts": {
    "abcd1234abcd1234": {
      "agent_id": {"tool": "cursor", "id": "6ef2299e-a67f-432b-aa80-3d2fb4d28999", "model": "gpt-4"},
      "human_author": "Developer <dev@example.com>",
      "total_additions": 2, "total_deletions": 0, "accepted_lines": 2, "overriden_lines": 0
    }
  },
  "humans": {"h_31dce776f88375": {"author": "Developer <dev@example.com>"}},
  "sessions": {
    "s_c9883b05a2487d": {
      "agent_id": {"tool": "claude", "id": "conv_abc123", "model": "claude-sonnet-4-5-20250514"},
      "human_author": "dev@example.com"
    }
  }
}
"""


def make_repo(repo: Path) -> str:
    (repo / "a.py").write_text("".join(f"line_{i} = {i}\n" for i in range(1, 6)))
    git(repo, "add", "a.py")
    git(repo, "commit", "-qm", "base", env=commit_env(T0))
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "a.py").write_text("".join(f"line_{i} = {i}\n" for i in range(1, 14)))
    (repo / "my notes.md").write_text("# Notes\n\nWritten in Cursor.\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "more", env=commit_env(T0 + 3600))
    note = repo / "note.txt"
    note.write_text(NOTE.replace("BASE", base))
    git(repo, "notes", "--ref", "ai", "add", "-F", str(note), "HEAD")
    note.unlink()
    return git(repo, "rev-parse", "HEAD").strip()


def test_parse_authorship() -> None:
    note = parse_authorship(NOTE)
    assert note is not None
    who = note.author_of("a.py", 9)
    assert who is not None and (who.key, who.agent, who.human) == (SESSION, "claude-code", False)
    assert who.model == "claude-sonnet-4-5-20250514" and who.tool_session == "conv_abc123"
    person = note.author_of("a.py", 11)
    assert person is not None and person.human and person.person == "Developer <dev@example.com>"
    assert note.author_of("a.py", 13) is None  # untracked: git-ai knows nothing of it
    legacy = note.author_of("my notes.md", 2)
    assert legacy is not None and (legacy.key, legacy.agent) == (LEGACY, "cursor")
    # not an authorship log: skipped, never an error
    assert parse_authorship("just a note") is None
    assert parse_authorship('a.py\n  x 1\n---\n{"schema_version": 3}') is None
    broken = parse_authorship(
        'a.py\n  k 1-x\n  j 0-2\n  ok 4\n---\n{"schema_version": "authorship/3.0.0"}'
    )
    assert broken is not None and list(broken.files["a.py"]) == [("ok", [(4, 4)])]


def test_blame_why_stats_and_report_read_gitai_notes(repo: Path) -> None:
    head = make_repo(repo)
    doc = deja_json("blame", str(repo / "a.py"), "--json")
    got = {ln["line"]: (ln["session"], ln["source"], ln.get("via")) for ln in doc["lines"]}
    for n in range(6, 11):
        assert got[n] == (SESSION, "claude-code", "git-ai")
    for n in (1, 2, 3, 4, 5, 11, 12, 13):  # deja's people, git-ai's human, untracked
        assert got[n][0] is None
    assert doc["sessions"][SESSION]["source"] == "claude-code"
    assert doc["sessions"][SESSION]["model"] == "claude-sonnet-4-5-20250514"
    why = deja_json("why", f"{repo / 'a.py'}:7", "--json")
    assert (why["session"], why["via"]) == (SESSION, "git-ai")
    said = deja("why", f"{repo / 'a.py'}:7").stdout.decode()
    assert "(from git-ai's note)" in said and "from the git-ai" not in said  # newcomer 7
    stats = deja_json("stats", "--json", cwd=repo)
    assert {a["agent"]: a["lines"] for a in stats["by_agent"]} == {"claude-code": 5, "cursor": 2}
    report = deja_json("report", "HEAD~1..HEAD", "--format", "json", cwd=repo)
    assert report["totals"]["by_sessions"] == 7
    agents = {s["session_id"]: s["agent"] for s in report["sessions"]}
    assert agents == {SESSION: "claude-code", LEGACY: "cursor"}
    assert report["commits"][0]["sha"] == head


def test_notes_fetch_git_ai(repo: Path, tmp_path: Path) -> None:
    make_repo(repo)
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(remote))
    git(repo, "push", "-q", str(remote), "refs/notes/ai:refs/notes/ai")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    before = deja_json("blame", str(clone / "a.py"), "--json")
    assert not any(ln["session"] for ln in before["lines"])
    out = deja_json("notes", "fetch", "--git-ai", "--json", cwd=clone)
    assert out["git_ai"] == "fetched"
    after = deja_json("blame", str(clone / "a.py"), "--json")
    assert sum(1 for ln in after["lines"] if ln["session"] == SESSION) == 5
    again = deja("notes", "fetch", "--git-ai", cwd=clone).stderr.decode()
    assert "git-ai notes (refs/notes/ai) of origin: fetched" in again
    none = deja_json("notes", "fetch", "--git-ai", str(repo), "--json", cwd=tmp_path / "clone")
    assert none["git_ai"] == "fetched"
    assert git(clone, "notes", "--ref", "ai", "list").strip()  # the ref is there, as fetched


HOSTILE_GITAI = {
    "100,000-deep JSON": "a.py\n  s_c9883b05a2487d::t_1 6-8\n---\n" + "[" * 100_000 + "]" * 100_000,
    "deep JSON after the schema": 'a.py\n  s_c9883b05a2487d::t_1 6-8\n---\n{"schema_version":'
    ' "authorship/3.0.0", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "a 5,000-digit line": "a.py\n  s_c9883b05a2487d::t_1 6-" + "9" * 5000 + "\n---\n"
    '{"schema_version": "authorship/3.0.0"}',
    "a range to 10**12": 'a.py\n  s_c9883b05a2487d::t_1 1-1000000000000\n---\n{"schema_version":'
    ' "authorship/3.0.0"}',
    "a forged agent": 'a.py\n  s_c9883b05a2487d::t_1 6-8\n---\n{"schema_version":'
    ' "authorship/3.0.0", "sessions": {"s_c9883b05a2487d": {"agent_id": {"tool":'
    ' "claude\\nFORGED: verified", "model": "m\\u001b[31m\\nFORGED: x"}}}}',
}


def test_a_hostile_gitai_note_never_breaks_a_command(repo: Path, tmp_path: Path) -> None:
    from test_hostile_notes import _deja

    make_repo(repo)
    for case, text in HOSTILE_GITAI.items():
        note = tmp_path / "note.txt"
        note.write_text(text)
        git(repo, "notes", "--ref", "ai", "add", "-f", "-F", str(note), "HEAD")
        for args in (
            ("blame", "a.py"),
            ("blame", "a.py", "--json"),
            ("why", "a.py:7"),
            ("stats",),
            ("report", "HEAD~1..HEAD", "--format", "markdown"),
            ("export", "HEAD~1..HEAD", "--format", "agent-trace"),
        ):
            proc = _deja(*args, cwd=repo)
            err = proc.stderr.decode("utf-8", "replace")
            assert proc.returncode == 0, (case, args, err[-400:])
            assert "unexpected error" not in err and "Traceback" not in err, (case, args, err)
            out = proc.stdout.decode("utf-8", "replace")
            assert not any(ln.lstrip(" #>*|-").startswith("FORGED") for ln in out.splitlines())
            assert "\x1b[31m" not in out


def test_gitai_ranges_keep_deja_s_limits() -> None:
    ok = '\n---\n{"schema_version": "authorship/3.0.0"}'
    assert parse_authorship("a.py\n  k 1-" + "9" * 5000 + ok).files == {}  # type: ignore[union-attr]
    assert parse_authorship("a.py\n  k 1-10000001" + ok).files == {}  # type: ignore[union-attr]
    many = ",".join(str(i) for i in range(1, 200_002))
    assert parse_authorship("a.py\n  k " + many + ok).files == {}  # type: ignore[union-attr]
    assert parse_authorship("a.py\n  k 1-999999" + ok).files == {"a.py": [("k", [(1, 999999)])]}  # type: ignore[union-attr]
