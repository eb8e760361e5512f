"""``deja stats`` names the people of every file's lines with one ``git log``, and
counts and orders them as naming each file's on its own did."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import git

from deja_blame.attribution import stats as stats_mod
from deja_blame.attribution.stats import NOT_COMMITTED, collect_stats


@dataclass
class _Line:
    commit: str | None
    session: str | None = None
    source: str | None = None


@dataclass
class _Blame:
    root: Path
    lines: list[_Line]
    sessions: dict[str, Any] = field(default_factory=dict)


def _commit(repo: Path, name: str, path: str) -> str:
    (repo / path).write_text(f"{name}\n")
    git(repo, "add", path)
    env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": f"{name.lower()}@example.com"}
    git(repo, "commit", "-q", "-m", f"{name} {path}", env=env)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize("jobs", [1, 3])
def test_one_git_log_names_every_files_people(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    ada = _commit(repo, "Ada", "a.py")
    bo = _commit(repo, "Bo", "b.py")
    cy = _commit(repo, "Cy", "c.py")
    per_file = {
        "a.py": [_Line(ada), _Line(bo), _Line(None, "s1", "claude")],
        "b.py": [_Line(cy), _Line(cy), _Line(ada), _Line(None)],
        "c.py": [_Line(bo)],
    }
    calls: list[set[str]] = []
    real = stats_mod.commit_authors

    def counting(root: str | Path, commits: set[str]) -> Any:
        calls.append(set(commits))
        return real(root, commits)

    monkeypatch.setattr(stats_mod, "commit_authors", counting)
    got = collect_stats(
        repo, list(per_file), None, lambda p: _Blame(repo, per_file[p.name]), jobs=jobs
    )
    assert calls == [{ada, bo, cy}]
    doc = got.to_json()
    # each file's people named on their own, summed, in the order the files met them
    assert doc["by_person"] == [
        {"author": "Ada", "lines": 2},
        {"author": "Bo", "lines": 2},
        {"author": "Cy", "lines": 2},
        {"author": NOT_COMMITTED, "lines": 1},
    ]
    assert doc["lines"] == 8 and doc["attributed_lines"] == 1
    # a commit git does not know: the files are asked one by one, as before
    calls.clear()
    per_file["c.py"] = [_Line("0" * 40), _Line(bo)]
    got = collect_stats(repo, list(per_file), None, lambda p: _Blame(repo, per_file[p.name]))
    assert len(calls) == 4
    assert got.to_json()["by_person"] == [
        {"author": "Ada", "lines": 2},
        {"author": "Cy", "lines": 2},
        {"author": "-", "lines": 2},
        {"author": "Bo", "lines": 1},
        {"author": NOT_COMMITTED, "lines": 1},
    ]


def test_stats_with_no_session_indexed_says_so(repo: Path) -> None:
    """newcomer 18 #9: "0 of N lines (0.0%)" and nothing else, where blame says that no
    session is indexed; 0 % then means "not known", not "none"."""
    from conftest import deja

    _commit(repo, "Ana", "a.txt")
    said = deja("stats", cwd=repo).stderr.decode()
    assert "no sessions are indexed: every line is unattributed (" in said, said
    assert "deja index" in said
