"""``copy_blame.CopyBlame`` answers ``git blame --porcelain -C`` line for line, on
histories that move blocks within files, copy and move them between files a
commit changed, cut them with edits, and merge branches (a parent whose file is
the merge's, and a merge that changed the file against both parents)."""

from __future__ import annotations

import os
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from deja_blame.attribution.facts import copy_blame, shared
from deja_blame.attribution.facts.alignment import blame_hunks
from deja_blame.attribution.facts.copy_blame import CopyBlame, NotHere
from deja_blame.attribution.facts.git_blame import parse_porcelain
from deja_blame.attribution.facts.history import RepoHistory

_SPACE = b" \t\r\x0b\x0c"
# lines that repeat (brackets, blank lines, a few calls): git's alignment has choices,
# and blocks of them score near git's bars of 20 and 40 letters and digits
_LINES = [
    "}",
    "",
    "    return value",
    "    total = total + step",
    "if ready {",
    "    log(message)",
    "    alpha_beta_gamma(delta)",
    "x",
]


def _git(root: Path, *args: str, when: int = 0) -> str:
    env = dict(os.environ)
    if when:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{when} +0000"
    proc = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env=env, check=True
    )
    return proc.stdout


def _line(rnd: random.Random) -> str:
    if rnd.random() < 0.5:
        return rnd.choice(_LINES)
    return f"    call_{rnd.randint(0, 40)}(argument_{rnd.randint(0, 9)})"


class _Scripted:
    """A repository whose commits edit, move and copy blocks of lines."""

    def __init__(self, root: Path, seed: int) -> None:
        self.root = root
        self.rnd = random.Random(seed)
        self.when = 1_700_000_000
        _git(root, "init", "-q", "-b", "main")
        self.files: dict[str, list[str]] = {}
        for k in range(3):
            self.files[f"src/f{k}.go"] = [_line(self.rnd) for _ in range(self.rnd.randint(20, 50))]
        self.commit("start")

    def write(self) -> None:
        for path, lines in self.files.items():
            p = self.root / path
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("".join(line + "\n" for line in lines))

    def commit(self, message: str) -> None:
        self.write()
        _git(self.root, "add", "-A")
        self.when += 100
        _git(self.root, "commit", "-q", "--allow-empty", "-m", message, when=self.when)

    def step(self) -> None:
        rnd = self.rnd
        paths = sorted(self.files)
        a, b = rnd.choice(paths), rnd.choice(paths)
        src, dst = self.files[a], self.files[b]
        kind = rnd.random()
        if kind < 0.35 and len(src) > 8:  # a block moved or copied (to another file or within)
            at = rnd.randrange(len(src) - 6)
            block = src[at : at + rnd.randint(3, 12)]
            if rnd.random() < 0.6:
                del src[at : at + len(block)]
            to = rnd.randint(0, len(dst))
            dst[to:to] = block
        elif kind < 0.45 and len(paths) < 6:  # a new file, a copy of part of one
            new = f"src/n{len(paths)}.go"
            self.files[new] = src[: rnd.randint(5, 25)] + [_line(rnd) for _ in range(3)]
        elif kind < 0.5 and len(paths) > 2:  # a file deleted: a source of copies no more
            del self.files[a]
            (self.root / a).unlink()
        else:  # edits
            for _ in range(rnd.randint(1, 4)):
                at = rnd.randint(0, len(src))
                if rnd.random() < 0.5:
                    src[at:at] = [_line(rnd) for _ in range(rnd.randint(1, 4))]
                else:
                    del src[at : at + rnd.randint(1, 3)]
        self.commit("step")

    def merge_branch(self) -> None:
        """A branch edits the top of a file while main edits its bottom: git merges
        them into a text that is neither parent's."""
        path = sorted(self.files)[0]
        _git(self.root, "checkout", "-q", "-b", "side")
        self.files[path][1:1] = [_line(self.rnd) for _ in range(3)]
        self.commit("side")
        side = dict((k, list(v)) for k, v in self.files.items())
        _git(self.root, "checkout", "-q", "main")
        self.files = {
            k: (self.root / k).read_text().splitlines() for k in side if (self.root / k).exists()
        }
        self.files[path][-1:] = [_line(self.rnd) for _ in range(3)]
        self.commit("main")
        self.when += 100
        _git(self.root, "merge", "-q", "--no-edit", "side", when=self.when)
        _git(self.root, "branch", "-q", "-D", "side")
        self.files = {k: (self.root / k).read_text().splitlines() for k in self.files}


def _git_c(root: Path, path: str, ranges: list[tuple[int, int]]) -> list:
    args = ["blame", "--porcelain", "-C", *(f"-L{a},{b}" for a, b in ranges), "HEAD", "--", path]
    return parse_porcelain(_git(root, *args).encode())


def _ours(history: RepoHistory, root: Path, path: str, ranges: list[tuple[int, int]]) -> list:
    head = _git(root, "rev-parse", "HEAD").strip()
    assert history.knows(head)

    def held(specs: list[str]) -> list[frozenset[bytes]]:
        got = history.read_many(specs)
        return [frozenset((b or b"").translate(None, _SPACE).split(b"\n")) for b in got]

    text = history.read(f"{head}:{path}")
    assert text is not None
    return CopyBlame(str(root), history, history.read_many, held, head, path, text).blame(ranges)


def _answered_as_git(
    history: RepoHistory, root: Path, questions: list[tuple[str, list[tuple[int, int]]]]
) -> int:
    """How many of ``questions`` (a path, its ranges) were answered in process, each
    as ``git blame -C`` answers it (one left to git is not counted)."""
    asked = 0
    for path, ranges in questions:
        try:
            ours = _ours(history, root, path, ranges)
        except NotHere:
            continue  # left to git: a commit deleted several files
        assert ours == _git_c(root, path, ranges), (path, ranges)
        asked += 1
    return asked


@pytest.fixture
def history_of() -> Iterator[list[RepoHistory]]:
    made: list[RepoHistory] = []
    yield made
    for h in made:
        h.close_reader()


@pytest.mark.parametrize("seed", range(8))
def test_answers_as_git_blame_c(tmp_path: Path, seed: int, history_of: list[RepoHistory]) -> None:
    repo = _Scripted(tmp_path, seed)
    for k in range(24):
        repo.step()
        if k in (8, 16):
            repo.merge_branch()
    history = RepoHistory(str(tmp_path))
    history_of.append(history)
    rnd = random.Random(seed)
    asked = 0
    for path in sorted(repo.files):
        n = len(repo.files[path])
        if n < 2:
            continue
        questions = [[(1, n)]]
        for _ in range(3):
            a = rnd.randint(1, n)
            questions.append([(a, min(n, a + rnd.randint(0, 15))), (rnd.randint(1, n), n)])
        asked += _answered_as_git(history, tmp_path, [(path, r) for r in questions])
    assert asked >= 8


def test_a_copy_from_another_file_the_commit_changed(
    tmp_path: Path, history_of: list[RepoHistory]
) -> None:
    """The block git -C finds: lines from the old file's middle, the file cut there."""
    block = [f"    important_call_{k}(with_arguments, and_more)" for k in range(6)]
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "a.go").write_text("\n".join(["func a() {", *block, "}", ""]))
    (tmp_path / "b.go").write_text("func b() {\n}\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "one", when=1_700_000_000)
    (tmp_path / "a.go").write_text("func a() {\n}\n")
    (tmp_path / "b.go").write_text("\n".join(["func b() {", *block[1:5], "}", ""]))
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "move", when=1_700_000_100)
    history = RepoHistory(str(tmp_path))
    history_of.append(history)
    ours = _ours(history, tmp_path, "b.go", [(1, 6)])
    assert ours == _git_c(tmp_path, "b.go", [(1, 6)])
    assert {b.orig_path for b in ours} == {"a.go", "b.go"}  # the block came from a.go


def test_a_commit_deleting_several_files_is_left_to_git(
    tmp_path: Path, history_of: list[RepoHistory]
) -> None:
    _git(tmp_path, "init", "-q", "-b", "main")
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.go").write_text(f"package {name}\nfunc {name}() {{}}\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "one", when=1_700_000_000)
    _git(tmp_path, "mv", "a.go", "d.go")
    _git(tmp_path, "rm", "-q", "b.go")
    _git(tmp_path, "commit", "-q", "-m", "rename and delete", when=1_700_000_100)
    history = RepoHistory(str(tmp_path))
    history_of.append(history)
    with pytest.raises(NotHere):
        _ours(history, tmp_path, "d.go", [(1, 2)])


def test_ties_go_to_the_later_file_and_stretch(
    tmp_path: Path, history_of: list[RepoHistory]
) -> None:
    """``copy_split_if_better`` keeps the later of equal splits: of two files, the
    one later in path order; of two stretches of one file, the later one."""
    block = [f"    shared_step_{k}(argument_one, argument_two)" for k in range(4)]
    first = [f"    first_part_{k}(aaaaaaaaaa, bbbbbbbbbb)" for k in range(3)]
    second = [f"    later_part_{k}(cccccccccc, dddddddddd)" for k in range(3)]
    assert len("".join(first)) == len("".join(second))
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "a.go").write_text("\n".join(["func a() {", *block, "}", ""]))
    (tmp_path / "b.go").write_text("\n".join(["func b() {", *block, "}", ""]))
    (tmp_path / "d.go").write_text("\n".join(["func d() {", *first, "}", "", *second, ""]))
    (tmp_path / "c.go").write_text("func c() {\n}\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "one", when=1_700_000_000)
    for name in ("a", "b"):
        (tmp_path / f"{name}.go").write_text(f"func {name}() {{\n}}\n")
    (tmp_path / "d.go").write_text("func d() {\n}\n")
    body = ["func c() {", *block, "}", *first, "    different_line_here(zzz)", *second, ""]
    (tmp_path / "c.go").write_text("\n".join(body))
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "gather", when=1_700_000_100)
    history = RepoHistory(str(tmp_path))
    history_of.append(history)
    ours = _ours(history, tmp_path, "c.go", [(1, len(body) - 1)])
    assert ours == _git_c(tmp_path, "c.go", [(1, len(body) - 1)])
    paths = {b.line: b.orig_path for b in ours}
    assert paths[2] == "b.go"  # the block both a.go and b.go had
    assert paths[7] == "d.go" and paths[11] == "d.go"


def test_a_deleted_file_full_detection_gives_another_new_file_is_left_to_git(
    tmp_path: Path, history_of: list[RepoHistory]
) -> None:
    """Blame follows the asked file alone (``single_follow``): where the old file's
    exact copy is added beside an edited one, ``diff-tree -M`` pairs the old file
    with the copy, but blame pairs it with the asked file. Not answered here."""
    old = [f"def func_{k}(x):\n    y = x + {k}\n    return y\n" for k in range(40)]
    edited = [f.replace(f"x + {k}", f"x * {k} - 1") if k % 3 == 0 else f for k, f in enumerate(old)]
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "old.py").write_text("".join(old))
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "one", when=1_700_000_000)
    (tmp_path / "old.py").unlink()
    (tmp_path / "backup.py").write_text("".join(old))
    (tmp_path / "new.py").write_text("".join(edited))
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "split", when=1_700_000_100)
    history = RepoHistory(str(tmp_path))
    history_of.append(history)
    n = 3 * 40
    try:
        ours = _ours(history, tmp_path, "new.py", [(1, n)])
    except NotHere:
        return
    assert ours == _git_c(tmp_path, "new.py", [(1, n)])


def test_ranges_past_the_file_are_left_to_git(
    tmp_path: Path, history_of: list[RepoHistory]
) -> None:
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "a.go").write_text("one\ntwo\nthree\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "one", when=1_700_000_000)
    history = RepoHistory(str(tmp_path))
    history_of.append(history)
    assert [b.line for b in _ours(history, tmp_path, "a.go", [(2, 3), (1, 1)])] == [1, 2, 3]
    for ranges in ([(1, 4)], [(0, 2)], [(3, 2)]):
        with pytest.raises(NotHere):
            _ours(history, tmp_path, "a.go", ranges)


def test_the_users_rename_limit_does_not_change_the_answer(
    tmp_path: Path, history_of: list[RepoHistory]
) -> None:
    """git blame finds a renamed file whatever ``diff.renameLimit`` says; the rename
    lookup asks diff-tree with git's default limit, so a user's limit of 1 (too few
    for a commit adding two files) changes nothing."""
    old = [f"def func_{k}(x):\n    y = x + {k}\n    return y\n\n" for k in range(40)]
    edited = [f.replace(f"x + {k}", f"x * {k}") if k % 5 == 0 else f for k, f in enumerate(old)]
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "config", "diff.renameLimit", "1")
    (tmp_path / "old.py").write_text("".join(old))
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "one", when=1_700_000_000)
    (tmp_path / "old.py").unlink()
    (tmp_path / "new.py").write_text("".join(edited))
    (tmp_path / "other.txt").write_text("x\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "rename with edits", when=1_700_000_100)
    history = RepoHistory(str(tmp_path))
    history_of.append(history)
    n = 4 * 40
    ours = _ours(history, tmp_path, "new.py", [(1, n)])
    assert ours == _git_c(tmp_path, "new.py", [(1, n)])
    assert {b.orig_path for b in ours} == {"old.py", "new.py"}


@pytest.mark.parametrize("seed", range(4))
def test_a_question_about_many_files_answers_the_same(
    tmp_path: Path, seed: int, history_of: list[RepoHistory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within a question about many files the walks' diffs are kept by the two
    versions' (commit, path): asked again (the moves rule's -C after the plain blame),
    over merges that changed a file against both parents, the answers are git's, with
    fewer diffs computed than outside a question."""
    repo = _Scripted(tmp_path, seed)
    for k in range(24):
        repo.step()
        if k in (6, 12, 18):
            repo.merge_branch()
    diffs = [0]

    def counted(old: bytes, new: bytes) -> list[tuple[int, int, int, int]]:
        diffs[0] += 1
        return blame_hunks(old, new)

    monkeypatch.setattr(copy_blame, "blame_hunks", counted)
    rnd = random.Random(seed)
    questions = [
        (path, ranges)
        for path in sorted(repo.files)
        if (n := len(repo.files[path])) >= 2
        for ranges in ([(1, n)], [(rnd.randint(1, n), n)], [(1, n)])
    ]

    def answered() -> int:
        history = RepoHistory(str(tmp_path))
        history_of.append(history)
        return _answered_as_git(history, tmp_path, questions)

    alone = answered()
    outside, diffs[0] = diffs[0], 0
    with shared.one_question(str(tmp_path)):
        assert answered() == alone >= 6
    assert diffs[0] < outside
