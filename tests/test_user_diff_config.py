"""The person's diff configuration does not change what deja reads from git's diffs
(REVIEW12 F5): ``diff.interHunkContext`` merged the hunks of ``git diff -U0 HEAD`` with
the unchanged lines between them, so blame marked those lines "not committed yet" and
why of a changed line found no history; ``color.ui=always`` wrote escapes into
``git log -L``'s rows; ``diff.context`` gave a squash another patch id than its branch."""

from __future__ import annotations

from pathlib import Path

import orjson
from conftest import commit_env, deja, git
from test_notes_carry import Server, forge  # noqa: F401  (the fixture)
from test_notes_world import World

from deja_blame.attribution.line_history import replaced_line, versions

T0 = 1_790_000_000
LINES = [f"line number {n} = compute({n})" for n in range(1, 11)]


def _ten_lines_then_two_changed(repo: Path) -> None:
    (repo / "f.py").write_text("\n".join(LINES) + "\n")
    git(repo, "add", "f.py")
    git(repo, "commit", "-qm", "ten", env=commit_env(T0))
    changed = list(LINES)
    changed[1] += "  # two"
    changed[3] += "  # four"
    (repo / "f.py").write_text("\n".join(changed) + "\n")
    git(repo, "config", "diff.interHunkContext", "3")
    git(repo, "config", "diff.context", "5")


def test_why_of_an_uncommitted_line_reads_its_own_hunk(repo: Path) -> None:
    _ten_lines_then_two_changed(repo)
    assert replaced_line(repo, "f.py", 2, LINES[1] + "  # two") == 2
    assert replaced_line(repo, "f.py", 4, LINES[3] + "  # four") == 4
    # committed: the line's own commit's diff (git log -1 -p -U0) says it had an older version
    git(repo, "commit", "-qam", "tweaks", env=commit_env(T0 + 60))
    head = git(repo, "rev-parse", "HEAD").strip()
    got = versions(repo, "f.py", head, 2, LINES[1] + "  # two")
    assert [v.text for v in got] == [LINES[1], LINES[1] + "  # two"]


def test_blame_keeps_the_unchanged_lines_between_two_changes_committed(repo: Path) -> None:
    _ten_lines_then_two_changed(repo)
    ten = git(repo, "rev-parse", "HEAD").strip()
    doc = orjson.loads(deja("blame", "f.py", "--json", "--no-refresh", cwd=repo).stdout)
    commits = [ln["commit"] for ln in doc["lines"]]
    assert commits[1] is None and commits[3] is None
    assert [c for k, c in enumerate(commits) if k not in (1, 3)] == [ten] * 8


def test_a_history_under_color_always_is_read(repo: Path) -> None:
    git(repo, "config", "color.ui", "always")
    (repo / "f.py").write_text("\n".join(LINES) + "\n")
    git(repo, "add", "f.py")
    git(repo, "commit", "-qm", "ten", env=commit_env(T0))
    # two lines changed in one commit, so its own diff cannot say the line has one version
    (repo / "f.py").write_text("\n".join([LINES[0] + " # a", LINES[1] + " # b", *LINES[2:]]) + "\n")
    git(repo, "commit", "-qam", "both", env=commit_env(T0 + 60))
    (repo / "f.py").write_text("\n".join([LINES[0] + " # a", LINES[1] + " # c", *LINES[2:]]) + "\n")
    git(repo, "commit", "-qam", "again", env=commit_env(T0 + 120))
    head = git(repo, "rev-parse", "HEAD").strip()
    got = versions(repo, "f.py", head, 2, LINES[1] + " # c")
    assert [v.text for v in got] == [LINES[1], LINES[1] + " # b", LINES[1] + " # c"]


def test_a_squash_is_matched_to_its_branch_whatever_the_diff_context(
    tmp_path: Path,
    forge: tuple[World, Server],  # noqa: F811
) -> None:
    dev, server = forge
    server.git("update-ref", "refs/heads/pr1", server.git("rev-parse", "refs/pull/1/head"))
    squash = server.squash(1, "Alpha")
    for n in (1, 2, 3):
        server.git("update-ref", "-d", f"refs/pull/{n}/head")
    ci = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(server.path), str(ci))
    git(ci, "config", "diff.context", "8")
    doc = orjson.loads(deja("notes", "carry", "..".join(squash), "--json", cwd=ci).stdout)
    [entry] = doc["commits"]
    assert (entry["how"], entry["branch"]) == ("squash", "origin/pr1")
