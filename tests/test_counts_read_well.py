"""Counts in text output read as English: one file, one commit (the newcomer read
"in 1 files" and "1 commits")."""

from __future__ import annotations

from pathlib import Path

from conftest import commit_env, deja, git


def test_one_file_is_said_in_the_singular(repo: Path) -> None:
    (repo / "app.py").write_text("total = 1\n")
    git(repo, "add", "app.py")
    git(repo, "commit", "-qm", "one", env=commit_env(1_784_278_800))
    stats = deja("stats", cwd=repo).stdout.decode()
    assert " in 1 file in the working tree " in stats, stats
