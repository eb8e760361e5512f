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


def test_stats_says_what_the_people_past_its_first_ten_wrote(repo: Path) -> None:
    """``by person`` lists ten: a last line counts the rest, so the column adds up to
    the lines (newcomer 15 #5)."""
    for k in range(12):
        (repo / "app.py").write_text("".join(f"line_{i} = {i}\n" for i in range(k + 1)))
        git(repo, "add", "app.py")
        who = {"GIT_AUTHOR_NAME": f"Person {k:02}", "GIT_AUTHOR_EMAIL": f"p{k}@example.com"}
        git(repo, "commit", "-qm", f"line {k}", env={**commit_env(1_784_278_800 + k), **who})
    stats = deja("stats", cwd=repo).stdout.decode()
    people = stats.split("by person\n", 1)[1].splitlines()
    assert len(people) == 11, stats
    assert people[-1].split() == ["2", "more", "people", "2", "16.7%"], stats
