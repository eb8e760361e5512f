"""File names with any byte git allows: a tab, a newline, quotes, a backslash, a
leading dash, spaces, non-ASCII. Each agent's session writes such a file; blame,
why, stats, annotate and the note give its lines to that session.

Paths cross git's output in many places (``git log``/``diff`` name lists, blame's
porcelain ``filename`` lines, core.quotePath quoting, the note's JSON keys): each
must read them whole (``-z``, or git's C-quoting undone).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import commit_env, deja, git
from test_notes_world import S1, S2, body, file_claims, make_world
from test_other_agents import AFTER, BEFORE, NEW_LINES, T0, _claude
from test_other_agents import _codex as codex_session

NAMES = [
    "tab\tx.py",
    "new\nline.py",
    'q"uote.py',
    "back\\slash.py",
    "-dash.py",
    "sp ace.py",
    "caf\u00e9 \u65e5\u672c.py",
    "dir with\ttab/inner.py",
]


def _codex(home: Path, repo: Path, at: float, name: str) -> str:
    return codex_session(home, repo, at, str(repo / name))


def _round_trip(repo: Path, name: str, sid: str, lines: list[int], env: dict[str, str]) -> None:
    """blame, why, stats, annotate and blame from the note alone, for ``name``."""
    doc = orjson.loads(deja("blame", "--json", "--", name, cwd=repo, env=env).stdout)
    assert doc["path"] == name
    got = {ln["line"] for ln in doc["lines"] if ln["session"] == sid}
    assert got == set(lines), doc["lines"]
    why = orjson.loads(deja("why", "--json", "--", f"{name}:{lines[0]}", cwd=repo, env=env).stdout)
    assert why["session"] == sid
    stats = orjson.loads(deja("stats", "--json", cwd=repo, env=env).stdout)
    assert {s["session"]: s["lines"] for s in stats["by_session"]} == {sid: len(lines)}
    assert stats["skipped"] == []
    deja("annotate", cwd=repo, env=env)
    note = orjson.loads(git(repo, "notes", "--ref", "deja", "show", "HEAD"))
    assert set(file_claims(note, name)) == set(lines) and list(note["files"]) == [name]
    # a clone with the notes and nothing else: the note alone gives the lines back
    empty = {**env, "DEJA_DB": str(repo.parent / "empty.db"), "DEJA_ANTIGRAVITY_ROOT": "",
             "DEJA_CLAUDE_ROOT": "", "DEJA_CODEX_ROOT": "", "HOME": str(repo.parent / "nohome")}  # fmt: skip
    doc = orjson.loads(deja("blame", "--json", "--", name, cwd=repo, env=empty).stdout)
    assert {ln["line"] for ln in doc["lines"] if ln["session"] == sid} == set(lines)


# a Codex patch names its file on one line ("*** Update File: NAME"): it cannot
# write a name with a newline, so that pair is not a case
@pytest.mark.parametrize(
    ("agent", "write", "name"),
    [("claude-code", _claude, name) for name in NAMES]
    + [("codex", _codex, name) for name in NAMES if "\n" not in name],
)
def test_other_agents_write_files_of_any_name(
    repo: Path, tmp_path: Path, name: str, agent: str, write: Any
) -> None:
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(BEFORE)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "prices", env=commit_env(T0))
    home = tmp_path / "home"
    sid = write(home, repo, T0 + 3600, name)
    path.write_text(AFTER)
    git(repo, "commit", "-qam", "discount", env=commit_env(T0 + 7200))
    env = {"DEJA_ANTIGRAVITY_ROOT": "", "DEJA_DB": str(tmp_path / "index.db"), "HOME": str(home)}
    _round_trip(repo, name, sid, NEW_LINES, env)


@pytest.mark.parametrize("name", NAMES)
def test_antigravity_writes_files_of_any_name(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    w = make_world(tmp_path, repo, monkeypatch)
    w.person("README.md", "# p\n")
    w.commit("init")
    w.write(S1, name, body("a", 3))
    w.commit("agent")
    w.index()
    monkeypatch.delenv("DEJA_CLAUDE_ROOT", raising=False)
    _round_trip(repo, name, S1, [1, 2, 3], {})


def test_a_name_that_is_not_utf8_breaks_no_command(repo: Path, tmp_path: Path) -> None:
    """``caf\\xe9.py`` (Latin-1): git takes it; SQLite, orjson and notes take only UTF-8.
    Every command answers, and JSON names the file with its other bytes as ``\\xNN``."""
    raw = b"caf\xe9.py"
    (repo / raw.decode("utf-8", "surrogateescape")).write_bytes(b"x = 1\ny = 2\n")
    (repo / "pricing.py").write_text(BEFORE)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "prices", env=commit_env(T0))
    home = tmp_path / "home"
    sid = _claude(home, repo, T0 + 3600, "pricing.py")
    (repo / "pricing.py").write_text(AFTER)
    name = raw.decode("utf-8", "surrogateescape")
    (repo / name).write_bytes(b"x = 1\ny = 2\nz = 3\n")  # a person's line in the range
    git(repo, "commit", "-qam", "discount", env=commit_env(T0 + 7200))
    env = {"DEJA_ANTIGRAVITY_ROOT": "", "DEJA_DB": str(tmp_path / "index.db"), "HOME": str(home)}

    def run(*args: str) -> bytes:
        proc = deja(*args, cwd=repo, env=env, check=False)
        assert proc.returncode == 0, proc.stderr
        assert b"unexpected error" not in proc.stderr
        return proc.stdout

    for _ in range(2):  # the second time from the caches
        doc = orjson.loads(run("blame", "--json", "--", name))
        assert doc["path"] == "caf\\xe9.py" and [ln["text"] for ln in doc["lines"]] == [
            "x = 1",
            "y = 2",
            "z = 3",
        ]
        assert b"x = 1" in run("--no-pager", "blame", "--", name)
    assert orjson.loads(run("why", "--json", "--", f"{name}:1"))["session"] is None
    stats = orjson.loads(run("stats", "--json"))
    assert stats["lines"] == 3 + len(AFTER.splitlines()) and stats["skipped"] == []
    assert {s["session"]: s["lines"] for s in stats["by_session"]} == {sid: len(NEW_LINES)}
    run("annotate", "HEAD~1..HEAD")
    report = orjson.loads(run("report", "HEAD", "--format", "json"))
    assert "caf\\xe9.py" in _strings(report)
    assert "caf\\xe9.py" in run("report", "HEAD").decode("utf-8")
    run("report", "HEAD", "--format", "html").decode("utf-8")
    for line in run("export", "HEAD").splitlines():
        orjson.loads(line)
    # the agent's file next to it keeps its lines, from the index and from the note
    doc = orjson.loads(run("blame", "--json", "pricing.py"))
    assert {ln["line"] for ln in doc["lines"] if ln["session"] == sid} == set(NEW_LINES)


def _strings(doc: Any) -> set[str]:
    if isinstance(doc, str):
        return {doc}
    if isinstance(doc, dict):
        return set().union(*(_strings(k) | _strings(v) for k, v in doc.items()))
    if isinstance(doc, list):
        return set().union(set(), *(_strings(v) for v in doc))
    return set()


def test_names_through_the_hooks_annotate_all_stats_and_report(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The note the post-commit hook writes, ``annotate --all``, ``stats`` and
    ``report`` name every file as git does, beside pathspec magic (``:``, ``*``,
    ``[``) that would match another file if the name reached git as a pattern."""
    w = make_world(tmp_path, repo, monkeypatch)
    monkeypatch.setenv("DEJA_HOOK_SYNC", "1")
    w.person("README.md", "# p\n")
    w.commit("init")
    w.deja("hooks", "install")
    git(repo, "config", "deja.hook.timeout", "120")  # the note, not the budget, is checked
    names = [*NAMES, ":colon.py", "st*r.py", "br[a]c.py"]
    for k, name in enumerate(names):
        w.write(S1, name, body(f"n{k}", 3))
    w.write(S2, "star.py", body("other", 3))  # what st*r.py would match as a glob
    first = w.commit("agent")
    for k, name in enumerate(names):
        w.write(S1, name, body(f"n{k}", 3) + body(f"m{k}", 2))
    second = w.commit("agent again")
    for sha, lines in ((first, {1: S1, 2: S1, 3: S1}), (second, {4: S1, 5: S1})):
        note = w.note(sha)
        assert note is not None
        for name in names:
            assert file_claims(note, name) == lines, (name, note)
    assert file_claims(w.note(first), "star.py") == {1: S2, 2: S2, 3: S2}
    assert "star.py" not in w.note(second)["files"]
    git(repo, "notes", "--ref", "deja", "remove", first, second)
    w.deja("annotate", "--all")
    for name in names:
        assert file_claims(w.note(second), name) == {4: S1, 5: S1}, name
    stats = orjson.loads(w.deja("stats", "--json").stdout)
    by_session = {s["session"]: s["lines"] for s in stats["by_session"]}
    assert by_session == {S1: 5 * len(names), S2: 3} and stats["skipped"] == []
    report = orjson.loads(w.deja("report", "HEAD~2..HEAD", "--format", "json").stdout)
    assert set(names) <= _strings(report)
    for name in names:
        doc = orjson.loads(w.deja("blame", "--json", "--", name).stdout)
        assert [ln["session"] for ln in doc["lines"]] == [S1] * 5, name
