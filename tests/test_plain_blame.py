"""``plain_blame`` answers ``git blame --porcelain`` line for line (commit, path and
line there) from the history a question about many files has read, on histories
that edit, move and copy blocks, add, delete and rename files and merge branches;
and a whole file's blame in such a question starts no git process. Where it
cannot answer as git does it says so (None) and git blames."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pygit2
import pytest

from deja_blame.attribution import blame_options
from deja_blame.attribution.facts import derived_blame, git_blame, gitread, shared
from deja_blame.attribution.facts.git_blame import blame_version, parse_porcelain
from deja_blame.attribution.facts.history import forget_histories, repo_history
from deja_blame.attribution.facts.plain_blame import plain_blame
from deja_blame.gitutil import FileVersion
from tests.test_copy_blame import _git, _line, _Scripted


@pytest.fixture(autouse=True)
def _histories_closed() -> Any:
    yield
    forget_histories()  # the process's histories and their cat-file processes


class _Renaming(_Scripted):
    def rename(self) -> None:
        """A file renamed, with a few edits (git blame follows it whole)."""
        old = self.rnd.choice(sorted(self.files))
        new = f"src/r{len(self.files)}_{self.rnd.randint(0, 99)}.go"
        if new in self.files:
            return
        lines = self.files.pop(old)
        (self.root / old).unlink()
        if self.rnd.random() < 0.5 and lines:
            lines[self.rnd.randrange(len(lines))] = _line(self.rnd)
        self.files[new] = lines
        self.commit("rename")


def _git_blame(root: Path, rev: str, path: str) -> list:
    return parse_porcelain(_git(root, "blame", "--porcelain", rev, "--", path).encode())


def _ours(root: Path, rev: str, path: str) -> list | None:
    with shared.one_question(root):
        assert repo_history(root).knows(rev)
        return plain_blame(str(root), rev, path)


@pytest.mark.parametrize("seed", range(6))
def test_answers_as_git_blame(tmp_path: Path, seed: int) -> None:
    repo = _Renaming(tmp_path, seed)
    older = ""
    for k in range(24):
        repo.step()
        if k in (5, 17):
            repo.rename()
        if k in (8, 16):
            repo.merge_branch()
        if k == 12:
            older = _git(tmp_path, "rev-parse", "HEAD").strip()
    head = _git(tmp_path, "rev-parse", "HEAD").strip()
    answered = 0
    for rev in (head, older):
        names = _git(tmp_path, "ls-tree", "-r", "--name-only", rev).split("\n")
        for path in filter(None, names):
            ours = _ours(tmp_path, rev, path)
            if ours is None:
                continue  # left to git: a commit deleted several files
            assert ours == _git_blame(tmp_path, rev, path), (rev, path)
            answered += 1
    assert answered >= 4


def _two_commits(root: Path) -> str:
    _git(root, "init", "-q", "-b", "main")
    (root / "old.py").write_text("".join(f"def f{k}():\n    return {k}\n\n" for k in range(30)))
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "one", when=1_700_000_000)
    _git(root, "mv", "old.py", "new.py")
    with (root / "new.py").open("a") as f:
        f.write("def g():\n    return 'g'\n")
    (root / "empty.txt").write_text("")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "renamed, one function added", when=1_700_000_100)
    return _git(root, "rev-parse", "HEAD").strip()


def test_a_renamed_file_and_an_empty_one(tmp_path: Path) -> None:
    head = _two_commits(tmp_path)
    ours = _ours(tmp_path, head, "new.py")
    assert ours == _git_blame(tmp_path, head, "new.py")
    assert ours is not None and {b.orig_path for b in ours} == {"old.py", "new.py"}
    assert _ours(tmp_path, head, "empty.txt") == [] == _git_blame(tmp_path, head, "empty.txt")


def test_left_to_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    head = _two_commits(tmp_path)
    root = str(tmp_path)
    assert plain_blame(root, head, "new.py") is None  # a one-file question
    forget_histories()
    with shared.one_question(root):
        assert plain_blame(root, head, "new.py") is None  # the history not read yet
        assert repo_history(root).knows(head)
        assert plain_blame(root, head, "new.py") is not None
        assert plain_blame(root, head, "gone.py") is None  # no such file
        with blame_options.using(blame_options.GitBlameOptions(ignore_whitespace=True)):
            assert plain_blame(root, head, "new.py") is None
    (tmp_path / ".revs").write_text("")
    _git(tmp_path, "config", "blame.ignoreRevsFile", ".revs")
    assert _ours(tmp_path, head, "new.py") is None
    _git(tmp_path, "config", "--unset", "blame.ignoreRevsFile")
    _git(tmp_path, "config", "diff.py.textconv", "cat")
    monkeypatch.setattr(gitread, "_PLAIN_DIFF", {})  # what it found is kept per process
    assert _ours(tmp_path, head, "new.py") is None


def test_a_commit_deleting_several_files_is_left_to_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's rename lookup there is not ``copy_blame``'s: the file goes to git, and
    before any walk (the walk would stop at that commit, its work lost)."""
    _git(tmp_path, "init", "-q", "-b", "main")
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("".join(f"{name}_{k} = {k}\n" for k in range(20)))
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "one", when=1_700_000_000)
    _git(tmp_path, "rm", "-q", "a.py", "b.py")
    (tmp_path / "c.py").write_text("".join(f"a.py_{k} = {k}\n" for k in range(20)))
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "two deleted, one renamed", when=1_700_000_100)
    head = _git(tmp_path, "rev-parse", "HEAD").strip()
    assert _ours(tmp_path, head, "c.py") is None
    from deja_blame.attribution.facts import plain_blame as module

    def no_walk(*_: Any) -> Any:
        raise AssertionError("walked")

    monkeypatch.setattr(module, "CopyBlame", no_walk)
    assert _ours(tmp_path, head, "c.py") is None


def test_a_whole_file_blame_of_many_starts_no_git_blame(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``blame_version`` in a question about many files: the answer computed, git's
    own, no ``git blame`` started; outside one, git blames."""
    head = _two_commits(tmp_path)
    want = _git_blame(tmp_path, head, "new.py")
    repo = pygit2.Repository(str(tmp_path))
    version = FileVersion("new.py", head, (tmp_path / "new.py").read_bytes())
    started: list[str] = []
    real = git_blame._start_git

    def counting(root: Path, relpath: str, rev: str | None, span: Any = None) -> Any:
        started.append(relpath)
        return real(root, relpath, rev, span)

    monkeypatch.setattr(git_blame, "_start_git", counting)
    assert blame_version(None, tmp_path, repo, version, "auto").result() == want
    assert started == ["new.py"]
    with shared.one_question(tmp_path):
        assert repo_history(tmp_path).knows(head)
        assert blame_version(None, tmp_path, repo, version, "auto").result() == want
    assert started == ["new.py"]


def test_no_git_blame_is_started_early_for_a_computed_one(tmp_path: Path) -> None:
    """A cache miss starts git blame early (``start_early``), but not for a file the
    engine will answer: that process would be ended unread (entireio's stats started
    274 and took 28)."""
    head = _two_commits(tmp_path)
    with shared.one_question(tmp_path):
        assert repo_history(tmp_path).knows(head)
        git_blame.start_early(tmp_path, head, "new.py")
        assert not git_blame._EARLY
    git_blame.start_early(tmp_path, head, "new.py")  # a one-file question: git, early
    try:
        assert len(git_blame._EARLY) == 1
    finally:
        git_blame.drop_early(tmp_path, head, "new.py")
    assert not git_blame._EARLY


def test_a_computed_blame_ends_the_early_one_and_is_remembered(tmp_path: Path) -> None:
    """``blame_version`` visits ``derived_blame.known`` once: the blame it computes in a
    question about many files ends the early ``git blame`` nobody will take, and is
    remembered for the next commit's derivation."""
    head = _two_commits(tmp_path)
    repo = pygit2.Repository(str(tmp_path))
    version = FileVersion("new.py", head, (tmp_path / "new.py").read_bytes())
    git_blame.start_early(tmp_path, head, "new.py")  # outside a question: started
    assert len(git_blame._EARLY) == 1
    try:
        with derived_blame.share_blames(tmp_path):
            assert repo_history(tmp_path).knows(head)
            got = blame_version(None, tmp_path, repo, version, "auto").result()
            assert got == _git_blame(tmp_path, head, "new.py")
            assert not git_blame._EARLY
            assert derived_blame.derive(tmp_path, head, "new.py") == got
    finally:
        git_blame.drop_early(tmp_path, head, "new.py")


def test_no_rename_lookup_where_the_commit_deleted_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file a commit added where it deleted none was renamed from nothing: git's
    answer, without a ``git diff-tree -M`` (entireio: 120 of them for 263 files)."""
    from deja_blame.attribution.facts import copy_blame

    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "a.py").write_text("".join(f"a_{k} = {k}\n" for k in range(20)))
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "one", when=1_700_000_000)
    (tmp_path / "b.py").write_text("".join(f"a_{k} = {k}\n" for k in range(20)))
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "a copy added", when=1_700_000_100)
    head = _git(tmp_path, "rev-parse", "HEAD").strip()
    asked: list[list[str]] = []
    real = copy_blame.git

    def counting(root: str, args: list[str], **kw: Any) -> Any:
        asked.append(args)
        return real(root, args, **kw)

    monkeypatch.setattr(copy_blame, "git", counting)
    assert _ours(tmp_path, head, "b.py") == _git_blame(tmp_path, head, "b.py")
    assert not asked
    (tmp_path / "a.py").unlink()
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "the old one deleted", when=1_700_000_200)
    _git(tmp_path, "mv", "b.py", "c.py")
    _git(tmp_path, "commit", "-q", "-m", "renamed", when=1_700_000_300)
    head = _git(tmp_path, "rev-parse", "HEAD").strip()
    forget_histories()
    ours = _ours(tmp_path, head, "c.py")
    assert ours == _git_blame(tmp_path, head, "c.py") and len(asked) == 1
