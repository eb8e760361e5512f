"""A line's history (``deja why``): one diff of the line's commit when the line has no
older version, git log -L otherwise, and the same versions either way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deja_blame.attribution import line_history
from deja_blame.attribution.line_history import log_versions, versions
from tests.conftest import commit_env, git

T0 = 1_790_000_000

FIRST = "import os\n\n\n@cache\ndef a():\n    return 1\n\n\n@cache\ndef b():\n    return 2\n"
# c() lands between a() and b(), decorated as b(): git blame (the indent heuristic)
# takes the first @cache as the new one, git log -L (plain Myers) the second
SECOND = FIRST.replace("@cache\ndef b", "@cache\ndef c():\n    return 3\n\n\n@cache\ndef b")
THIRD = (
    SECOND.replace("    return 1\n", "    return 11\n").replace(
        "    return 2\n", "    raise NotImplementedError('no b yet')\n"
    )
    + "# end\n"
)
FOURTH = THIRD.replace("import os\n", "import os.path\n", 1) + "VERSION = 4\n"


def _blame(repo: Path, rev: str, path: str) -> list[tuple[str, int, str, str]]:
    """git blame --porcelain of ``path`` at ``rev``: (commit, line there, path there, text)."""
    out = git(repo, "blame", "--porcelain", rev, "--", path)
    names: dict[str, str] = {}
    rows: list[tuple[str, int, str, str]] = []
    head: tuple[str, int] | None = None
    for row in out.split("\n"):
        m = re.match(r"^([0-9a-f]{40}) (\d+) \d+", row)
        if m:
            head = (m.group(1), int(m.group(2)))
        elif row.startswith("filename ") and head:
            names[head[0]] = row[len("filename ") :]
        elif row.startswith("\t") and head:
            rows.append((head[0], head[1], names[head[0]], row[1:]))
    return rows


@pytest.fixture
def history(repo: Path) -> tuple[Path, list[str]]:
    """Four commits: a file made; a function inserted where the diff can slide; a
    return value tweaked and a line replaced by an unlike one; the file renamed with
    an import tweaked and a line added."""
    commits = []
    (repo / "app.py").write_text(FIRST)
    git(repo, "add", "app.py")
    for i, text in enumerate((FIRST, SECOND, THIRD)):
        (repo / "app.py").write_text(text)
        git(repo, "commit", "-qam", f"c{i + 1}", "--allow-empty", env=commit_env(T0 + i * 60))
        commits.append(git(repo, "rev-parse", "HEAD").strip())
    (repo / "lib").mkdir()
    git(repo, "mv", "app.py", "lib/app.py")
    (repo / "lib" / "app.py").write_text(FOURTH)
    git(repo, "commit", "-qam", "c4", env=commit_env(T0 + 180))
    commits.append(git(repo, "rev-parse", "HEAD").strip())
    return repo, commits


def test_every_line_has_git_log_l_s_versions(history: tuple[Path, list[str]]) -> None:
    """Every line of every commit, blamed as deja blames it: the versions are git log -L's,
    whether one diff of the line's commit said it had no older one or git log -L ran."""
    repo, commits = history
    several = 0
    for rev, path in zip(commits, ("app.py", "app.py", "app.py", "lib/app.py"), strict=True):
        for commit, line, name, text in _blame(repo, rev, path):
            got = versions(repo, name, commit, line, text)
            want = log_versions(repo, name, commit, line, text)
            assert [(v.commit, v.path, v.line, v.text) for v in got] == [
                (v.commit, v.path, v.line, v.text) for v in want
            ], (rev, line, text)
            several += len(want) > 1
    assert several >= 3  # the tweaked return, the tweaked import (across the rename)


def test_a_line_with_no_older_version_costs_no_walk_of_the_history(
    history: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new line, a line that replaced an unlike one and a line of a new file are
    answered from their commit's own diff: git log -L never runs for them."""

    def no_walk(*args: object) -> list[line_history.Version]:
        raise AssertionError("git log -L ran")

    monkeypatch.setattr(line_history, "log_versions", no_walk)
    repo, (c1, c2, c3, c4) = history
    blamed = {
        text: (commit, line, name) for commit, line, name, text in _blame(repo, c4, "lib/app.py")
    }
    for text, commit in (
        ("def c():", c2),
        ("    raise NotImplementedError('no b yet')", c3),
        ("VERSION = 4", c4),
        ("def a():", c1),
    ):
        got_commit, line, name = blamed[text]
        assert got_commit == commit
        (only,) = versions(repo, name, commit, line, text)
        assert (only.commit, only.path, only.line, only.text) == (commit, name, line, text)


def test_a_name_git_could_read_as_a_pattern(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``a*.py`` made in a commit that also changes ``ab.py``: the diff asked is the one
    file's, not the pattern's."""
    (repo / "ab.py").write_text("x = 0\n")
    git(repo, "add", "ab.py")
    git(repo, "commit", "-qm", "ab.py", env=commit_env(T0))
    (repo / "ab.py").write_text("x = 0\ny = 0\n")
    (repo / "a*.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a*.py", env=commit_env(T0 + 60))
    made = git(repo, "rev-parse", "HEAD").strip()
    monkeypatch.setattr(line_history, "log_versions", lambda *a: [])
    (only,) = versions(repo, "a*.py", made, 1, "x = 1")
    assert (only.commit, only.path, only.line) == (made, "a*.py", 1)
