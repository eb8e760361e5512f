"""A blame derived from an older one is git blame's own answer.

``derived_blame`` carries a file's blame at one commit to a later commit through
the commits in between (identical parents, and the diffs of commits with one
parent). Here every file at every commit of a history with the shapes that steer
git's blame (a merge that takes one side whole, a merge that changed the file
against both parents, a mode changed on a merge, a rename, a repeated block that
the diff could align two ways, a last line without its newline, a name with
pathspec magic) is derived where it can be and compared with git blame.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import commit_env, git

from deja_blame.attribution.facts import derived_blame
from deja_blame.attribution.facts.git_blame import parse_porcelain

T0 = 1_780_000_000


def _commit(repo: Path, when: int, message: str, files: dict[str, str]) -> None:
    for name, text in files.items():
        (repo / name).write_text(text)
        git(repo, "add", name)
    git(repo, "commit", "-q", "--allow-empty", "-m", message, env=commit_env(when))


def _block(tag: str) -> str:
    return "".join(f"def {tag}{k}():\n    return {k}\n\n" for k in range(3))


def _history(repo: Path) -> None:
    base = "import os\n" + _block("f") + "x = 1\n"
    _commit(repo, T0, "root", {"a.py": base, "b.txt": "one\ntwo\nthree", "[x].py": "p\n"})
    _commit(repo, T0 + 10, "repeat a block", {"a.py": base + _block("f") + "y = 2\n"})
    _commit(repo, T0 + 20, "last line", {"b.txt": "one\ntwo\nthree\nfour", "[x].py": "p\nq\n"})
    git(repo, "branch", "side")
    # the same line added to [x].py on both sides, its mode changed on one: git's
    # blame passes it to the first parent with the same blob (main), mode aside
    same = {"[x].py": "p\nq\nr\n"}
    _commit(repo, T0 + 30, "main edits a", {"a.py": "import sys\n" + base + "y = 3\n", **same})
    git(repo, "checkout", "-q", "side")
    _commit(repo, T0 + 40, "side edits b", {"b.txt": "zero\none\ntwo\nthree\nfour\n", **same})
    _commit(repo, T0 + 45, "side edits a", {"a.py": base + "z = 9\n"})
    (repo / "[x].py").chmod(0o755)
    git(repo, "add", "[x].py")
    git(repo, "commit", "-q", "-m", "mode", env=commit_env(T0 + 47))
    git(repo, "checkout", "-q", "main")
    # b.txt taken whole from side; a.py changed against both parents
    subprocess.run(
        ["git", "merge", "-q", "--no-ff", "--no-commit", "side"], cwd=repo, capture_output=True
    )
    (repo / "a.py").write_text("import sys\n" + base + "z = 9\ny = 3\n")
    git(repo, "add", "a.py", "b.txt", "[x].py")
    git(repo, "commit", "-q", "--no-edit", env=commit_env(T0 + 50))
    _commit(repo, T0 + 60, "after the merge", {"a.py": "import sys\n" + base + "z = 9\n"})
    git(repo, "mv", "b.txt", "c.txt")
    git(repo, "commit", "-q", "-m", "rename", env=commit_env(T0 + 70))
    _commit(repo, T0 + 80, "c after the rename", {"c.txt": "zero\none\ntwo\n"})
    _commit(repo, T0 + 90, "a again", {"a.py": "import sys\n" + base + "z = 10\n"})


def _git_blame(repo: Path, rev: str, path: str) -> list:
    proc = subprocess.run(
        ["git", "blame", "--porcelain", "--ignore-revs-file=", rev, "--", path],
        cwd=repo,
        capture_output=True,
        check=True,
    )
    return parse_porcelain(proc.stdout)


def _every_file_at_every_commit(repo: Path) -> list[tuple[str, str]]:
    out = []
    revs = git(repo, "rev-list", "--reverse", "--topo-order", "HEAD").split()
    for rev in revs:
        for path in git(repo, "ls-tree", "-r", "-z", "--name-only", rev).split("\0"):
            if path:
                out.append((rev, path))
    return out


def test_derived_blames_are_git_blames(repo: Path) -> None:
    _history(repo)
    derived = 0
    with derived_blame.share_blames(repo):
        for rev, path in _every_file_at_every_commit(repo):
            want = _git_blame(repo, rev, path)
            got = derived_blame.derive(repo, rev, path)
            if got is None:
                derived_blame.remember(repo, rev, path, want)
                continue
            derived += 1
            assert got == want, (rev, path)
    # every file at every commit but the first blame of each name and the
    # commits git's own walk must answer (the merge that changed a.py, the rename)
    assert derived >= 20


def test_what_is_not_derived(repo: Path) -> None:
    _history(repo)
    merge = git(repo, "rev-parse", "HEAD~4").strip()
    renamed = git(repo, "rev-parse", "HEAD~2").strip()
    with derived_blame.share_blames(repo):
        for parent in git(repo, "rev-parse", f"{merge}^1", f"{merge}^2").split():
            derived_blame.remember(repo, parent, "a.py", _git_blame(repo, parent, "a.py"))
        # a merge that changed the file against both parents: git's own
        assert derived_blame.derive(repo, merge, "a.py") is None
        # through a rename: git's own
        derived_blame.remember(repo, merge, "b.txt", _git_blame(repo, merge, "b.txt"))
        assert derived_blame.derive(repo, renamed, "c.txt") is None
        # but the merge taken whole from a parent is (b.txt)
        side = git(repo, "rev-parse", f"{merge}^2").strip()
        derived_blame.remember(repo, side, "b.txt", _git_blame(repo, side, "b.txt"))
        assert derived_blame.derive(repo, merge, "b.txt") == _git_blame(repo, merge, "b.txt")
    # outside a command that shares blames nothing is remembered nor derived
    derived_blame.remember(repo, merge, "b.txt", _git_blame(repo, merge, "b.txt"))
    assert derived_blame.derive(repo, merge, "b.txt") is None


def test_a_diff_configuration_blames_with_git(repo: Path) -> None:
    _history(repo)
    git(repo, "config", "diff.algorithm", "histogram")
    head = git(repo, "rev-parse", "HEAD").strip()
    with derived_blame.share_blames(repo):
        parent = git(repo, "rev-parse", "HEAD^").strip()
        derived_blame.remember(repo, parent, "a.py", _git_blame(repo, parent, "a.py"))
        assert derived_blame.derive(repo, head, "a.py") is None
