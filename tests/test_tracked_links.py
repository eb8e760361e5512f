"""Tracked symbolic links, by git's rule: a link is a one-line blob (its target's
name), whatever it points at, and no path goes through one (newcomer 8: a link to a
folder was skipped by whole-tree stats as "Is a directory" but counted by
``deja stats LINK`` as the folder's files; a link pointing outside the work tree was
blamed but "outside the repository" for ``deja stats LINK``; a path through a
link to a folder outside was "not inside a git repository")."""

from __future__ import annotations

from pathlib import Path

from conftest import commit_env, deja, deja_json, git

ENV = {"DEJA_ANTIGRAVITY_ROOT": ""}


def _links(tmp_path: Path, repo: Path) -> None:
    (repo / "a.py").write_text("x = 1\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "r.txt").write_text("hi\nthere\n")
    (repo / "docs_link").symlink_to("docs")
    (tmp_path / "outside.txt").write_text("secret\n")
    (repo / "out_link.py").symlink_to(tmp_path / "outside.txt")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "f.txt").write_text("x\n")
    (repo / "ext").symlink_to(tmp_path / "elsewhere")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "links", env=commit_env(1_784_278_800))


def test_a_link_is_a_one_line_file_to_every_command(tmp_path: Path, repo: Path) -> None:
    _links(tmp_path, repo)
    whole = deja_json("stats", "--json", cwd=repo, env=ENV)
    assert whole["skipped"] == [] and whole["files"] == 5, whole
    per_path = 0
    for rel in ("a.py", "docs", "docs_link", "out_link.py", "ext"):
        one = deja_json("stats", "--json", rel, cwd=repo, env=ENV)
        assert one["skipped"] == [], (rel, one)
        per_path += one["lines"]
    assert per_path == whole["lines"] == 6
    for link, target in (("docs_link", "docs"), ("out_link.py", str(tmp_path / "outside.txt"))):
        doc = deja_json("blame", "--json", link, cwd=repo, env=ENV)
        assert [ln["text"] for ln in doc["lines"]] == [target]
    assert "secret" not in deja("blame", "out_link.py", cwd=repo, env=ENV).stdout.decode()


def test_a_path_through_a_link_says_so(tmp_path: Path, repo: Path) -> None:
    _links(tmp_path, repo)
    proc = deja("blame", "ext/f.txt", cwd=repo, env=ENV, check=False)
    err = proc.stderr.decode()
    assert proc.returncode != 0 and "not inside a git repository" not in err
    assert f"ext/f.txt is beyond a symbolic link ({repo}/ext)" in err, err
