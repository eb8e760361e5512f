"""A window of a renamed file (``deja why``, ``blame -L``) reads the writes of the
file's earlier names, as the whole file's answer does: the answer of a line does not
depend on whether a ``deja blame`` of the file ran (and kept its answer) before."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import deja_json, git
from test_blame import T0, Session, commit_all

LINES = [f"value_{k} = compute({k}, scale={k * 7})" for k in range(120)]


def test_why_of_a_renamed_file_answers_as_the_whole_file(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "agroot"
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(root))
    Session(root, "first-session").write(repo / "old.py", "\n".join(LINES) + "\n", T0)
    (repo / "old.py").write_text("\n".join(LINES) + "\n")
    commit_all(repo, "the session's file", T0 + 600)
    git(repo, "mv", "old.py", "new.py")
    commit_all(repo, "renamed", T0 + 700)
    # the person indents the lower lines: git blames them on this commit, at the new
    # name, while the top lines' blame still names old.py
    text = LINES[:20] + ["    " + t for t in LINES[20:]]
    (repo / "new.py").write_text("\n".join(text) + "\n")
    commit_all(repo, "indented", T0 + 800)
    target = f"{repo / 'new.py'}:100"
    cold = deja_json("why", target, "--json")  # a window: lines 60-120, all at new.py
    whole = deja_json("blame", str(repo / "new.py"), "--json")
    kept = deja_json("why", target, "--json")  # the whole file's kept answer
    line = whole["lines"][99]
    assert line["session"] == "first-session"
    assert (cold["session"], cold["confidence"]) == (line["session"], line["confidence"])
    assert (kept["session"], kept["confidence"]) == (cold["session"], cold["confidence"])


def test_an_earlier_name_git_could_read_as_magic_is_found(repo: Path) -> None:
    """``:(top)y.py`` renamed ``:(top)z.py``: the names are names, not pathspec magic."""
    from deja_blame.attribution.facts.gitread import earlier_names

    (repo / ":(top)y.py").write_text("\n".join(LINES) + "\n")
    commit_all(repo, "made", T0)
    git(repo, "mv", ":(top)y.py", ":(top)z.py")
    commit_all(repo, "renamed", T0 + 60)
    assert earlier_names(repo, None, ":(top)z.py") == {":(top)y.py"}
