"""``git blame -C`` is not asked where its answer can only be the plain blame's,
and is computed from the blobs where a block could have moved (``facts/copies.py``,
``facts/copy_blame.py``): every answer given without git's ``-C`` is git's own."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import commit_env, git

from deja_blame.attribution.facts import copies, gitread, shared
from deja_blame.attribution.facts.copies import copies_answer
from deja_blame.attribution.facts.git_blame import blame_copies, parse_porcelain
from deja_blame.attribution.facts.history import repo_history
from deja_blame.attribution.facts.model import BlameLine

T0 = 1_780_000_000
SETUP = [
    "def configure_logging(level, destination):",
    "    handler = logging.FileHandler(destination)",
    "    logging.getLogger().addHandler(handler)",
]
HANDLER = [
    "def handle_request(request, response):",
    "    payload = request.json_body_or_default()",
    "    response.write_payload(payload, status_code=200)",
    "    return response",
]
# 35 letters and digits: enough for git to move within a file (20), not to copy
# from another (40)
SHORT = ["total = first_item + second_item", "return total"]
# 45 in all, 15 a line
SPREAD = ["alpha_beta_gamma", "delta_epsilon_zz", "theta_iota_kappa"]


def _commit(repo: Path, when: int, files: dict[str, list[str] | None]) -> str:
    for name, lines in files.items():
        if lines is None:
            git(repo, "rm", "-q", name)
            continue
        (repo / name).write_text("".join(f"{x}\n" for x in lines))
        git(repo, "add", name)
    git(repo, "commit", "-q", "-m", f"at {when}", env=commit_env(when))
    return git(repo, "rev-parse", "HEAD").strip()


def _history(repo: Path) -> None:
    _commit(repo, T0, {"root.py": ["# root", "x = 1", *SETUP]})
    # moved: the handler leaves a.py in the commit that brings it to b.py
    _commit(repo, T0 + 10, {"a.py": ["import os", "", *HANDLER, "", "}"]})
    _commit(repo, T0 + 20, {"a.py": ["import os", "", "}"], "b.py": ["# b", *HANDLER]})
    # new text: nowhere before its commit
    _commit(repo, T0 + 30, {"c.py": ["def only_here_and_nowhere_else(alpha, beta):", "    pass"]})
    # brackets and blank lines, which are everywhere: too few letters for git to move
    _commit(repo, T0 + 40, {"a.py": ["import os", "", "}", "", "}", ")"]})
    # blocks swapped: one the file itself held before its commit (git moves it within)
    _commit(repo, T0 + 50, {"d.py": [*HANDLER, "", *SETUP]})
    _commit(repo, T0 + 60, {"d.py": [*SETUP, "", *HANDLER]})
    # copied from a file the same commit changed; a short line copied is too short
    _commit(repo, T0 + 70, {"root.py": ["# root", "x = 2", *SETUP], "e.py": [*SETUP, "x = 1"]})
    _commit(repo, T0 + 80, {"root.py": ["# root", "x = 3", *SETUP], "f.py": ["# root", "x = 2"]})
    # a merge that brought lines of its own: git looks in each parent's files
    git(repo, "checkout", "-q", "-b", "side", "HEAD~1")
    _commit(repo, T0 + 90, {"s.py": ["# side"]})
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "side", env=commit_env(T0 + 100))
    _commit(repo, T0 + 100, {"g.py": ["# merged", "y = 1"]})
    # into files the commit kept (not added: git would look for them renamed), from
    # another file it changed: a block too short to copy from another file, and
    # lines of a long block that file holds, but not one after another
    _commit(repo, T0 + 110, {"h.py": ["# h"], "src.py": [*SHORT, "z = 0", *SPREAD[::-1]]})
    _commit(repo, T0 + 120, {"h.py": ["# h", *SHORT, "", *SPREAD], "src.py": ["z = 1"]})
    # a block moved from j.py, then moved within i.py: -M finds the first move
    # only, -C then the block where it came from
    notes = [f"# note {k}" for k in range(5)]
    _commit(repo, T0 + 130, {"j.py": ["# j", *SETUP]})
    _commit(repo, T0 + 135, {"i.py": ["# i", *SETUP, *notes], "j.py": ["# j"]})
    _commit(repo, T0 + 140, {"i.py": ["# i", *notes, *SETUP]})


def _plain(repo: Path, path: str) -> dict[int, BlameLine | None]:
    out = git(repo, "blame", "--porcelain", "HEAD", "--", path).encode()
    return {b.line: b for b in parse_porcelain(out)}


@pytest.mark.parametrize(
    ("path", "route"),
    [
        ("b.py", "computed"),  # a block that moved from a.py
        ("c.py", "plain"),
        ("a.py", "plain"),  # only brackets and blanks since its first commit
        ("d.py", "computed"),  # the block was in the file before: moved within
        ("e.py", "computed"),  # the lines were in root.py, which the commit changed
        ("f.py", "plain"),  # and so were these, with too few letters to move
        ("root.py", "plain"),  # a root commit's lines and new ones
        ("g.py", "computed"),  # a merge's own lines: each parent's files
        ("h.py", "plain"),  # too short to copy, and not one after another
        ("i.py", "computed"),  # moved within, and before that from j.py
    ],
)
def test_an_answer_without_git_is_git_s(
    repo: Path, path: str, route: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where a block could have moved, -C is computed from the blobs (``copy_blame``)
    and neither -M nor -C is asked of git; every answer is git's -C."""
    _history(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    plain = _plain(repo, path)
    ranges = [(1, len(plain))]
    asked: list[str] = []
    computed: list[str] = []

    def blame_moves(*args: object) -> object:
        asked.append(path)
        return real_moves(*args)

    def compute(*args: object) -> object:
        computed.append(path)
        return real_compute(*args)

    real_moves, real_compute = copies.blame_moves, copies._computed
    monkeypatch.setattr(copies, "blame_moves", blame_moves)
    monkeypatch.setattr(copies, "_computed", compute)
    with shared.one_question(repo):
        assert repo_history(repo).knows(head)
        got = copies_answer(repo, head, path, ranges, plain)
    assert got is not None and not asked
    assert bool(computed) == (route == "computed")
    real = blame_copies(repo, path, head, ranges)
    assert [(b.line, b.commit, b.orig_path, b.orig_line) for b in got] == [
        (b.line, b.commit, b.orig_path, b.orig_line) for b in real
    ]
    moved = {"b.py": {"a.py", "b.py"}, "e.py": {"root.py", "e.py"}, "i.py": {"i.py", "j.py"}}
    if path in moved:  # where git finds one
        assert {b.orig_path for b in real} == moved[path]


def test_git_is_asked_where_the_copies_cannot_be_computed(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where ``copy_blame`` leaves the question to git (a rename it cannot follow
    as git does), the route before it: git's -M where only a move could be, git's
    -C where a copy could."""
    _history(repo)
    head = git(repo, "rev-parse", "HEAD").strip()

    def not_here(*args: object) -> None:
        return None

    monkeypatch.setattr(copies, "_computed", not_here)
    with shared.one_question(repo):
        assert repo_history(repo).knows(head)
        assert copies_answer(repo, head, "b.py", [(1, 5)], _plain(repo, "b.py")) is None
        d = _plain(repo, "d.py")
        got = copies_answer(repo, head, "d.py", [(1, len(d))], d)
    assert got is not None
    real = blame_copies(repo, "d.py", head, [(1, len(d))])
    assert [(b.line, b.commit, b.orig_path, b.orig_line) for b in got] == [
        (b.line, b.commit, b.orig_path, b.orig_line) for b in real
    ]


def test_a_blob_is_read_once_a_question(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The files a commit changed are read for each file it brought lines to: kept
    for the question (``_lines_of``), not read again file after file."""
    from deja_blame.attribution.facts.history import RepoHistory

    _history(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    read: list[str] = []
    real_read = RepoHistory.read_many

    def read_many(self: RepoHistory, specs: list[str]) -> list[bytes | None]:
        read.extend(specs)
        return real_read(self, specs)

    monkeypatch.setattr(RepoHistory, "read_many", read_many)
    with shared.one_question(repo):
        repo_history(repo).knows(head)
        for _ in range(3):
            assert copies_answer(repo, head, "h.py", [(1, 8)], _plain(repo, "h.py"))
    before = [spec for spec in read if not spec.startswith(head)]  # HEAD's: the file
    assert before and len(before) == len(set(before))


def test_git_is_asked_outside_a_question_and_with_blame_options(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-file blame does not read the history for it; blame options, a configured
    ignore-revs file or a textconv driver change what git compares."""
    from deja_blame.attribution import blame_options

    _history(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    plain = _plain(repo, "c.py")
    assert copies_answer(repo, head, "c.py", [(1, 2)], plain) is None
    with shared.one_question(repo):
        repo_history(repo).knows(head)
        assert copies_answer(repo, head, "c.py", [(1, 2)], plain) is not None
        with blame_options.using(blame_options.GitBlameOptions(ignore_whitespace=True)):
            assert copies_answer(repo, head, "c.py", [(1, 2)], plain) is None
    (repo / ".revs").write_text("")
    git(repo, "config", "blame.ignoreRevsFile", ".revs")
    with shared.one_question(repo):
        assert copies_answer(repo, head, "c.py", [(1, 2)], plain) is None
    git(repo, "config", "--unset", "blame.ignoreRevsFile")
    git(repo, "config", "diff.py.textconv", "cat")
    monkeypatch.setattr(gitread, "_PLAIN_DIFF", {})  # what it found is kept per process
    with shared.one_question(repo):
        assert copies_answer(repo, head, "c.py", [(1, 2)], plain) is None
