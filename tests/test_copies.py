"""``git blame -C`` is not asked where its answer can only be the plain blame's
(``facts/copies.py``): every answer given without git is git's own, and git is
asked wherever a block could have come from another file or moved in its own."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import commit_env, git

from deja_blame.attribution.facts import derived_blame, shared
from deja_blame.attribution.facts.copies import plain_answer
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


def _plain(repo: Path, path: str) -> dict[int, BlameLine | None]:
    out = git(repo, "blame", "--porcelain", "HEAD", "--", path).encode()
    return {b.line: b for b in parse_porcelain(out)}


@pytest.mark.parametrize(
    ("path", "asks_git"),
    [
        ("b.py", True),  # a block that moved from a.py
        ("c.py", False),
        ("a.py", False),  # only brackets and blanks since its first commit
        ("d.py", True),  # the block was in the file before: -M may move it
        ("e.py", True),  # the lines were in root.py, which the commit changed
        ("f.py", False),  # and so were these, with too few letters to move
        ("root.py", False),  # a root commit's lines and new ones
        ("g.py", True),  # a merge's own lines: left to git
    ],
)
def test_an_answer_without_git_is_git_s(repo: Path, path: str, asks_git: bool) -> None:
    _history(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    plain = _plain(repo, path)
    ranges = [(1, len(plain))]
    with shared.one_question(repo):
        assert repo_history(repo).knows(head)
        got = plain_answer(repo, head, path, plain)
    assert (got is None) == asks_git
    if got is not None:
        real = blame_copies(repo, path, head, ranges)
        assert [(b.line, b.commit, b.orig_path) for b in got] == [
            (b.line, b.commit, b.orig_path) for b in real
        ]
    moved = {"b.py": {"a.py", "b.py"}, "e.py": {"root.py", "e.py"}}  # where git finds one
    if path in moved:
        assert {b.orig_path for b in blame_copies(repo, path, head, ranges)} == moved[path]


def test_git_is_asked_outside_a_question_and_with_blame_options(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-file blame does not read the history for it; blame options, a configured
    ignore-revs file or a textconv driver change what git compares."""
    from deja_blame.attribution import blame_options

    _history(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    plain = _plain(repo, "c.py")
    assert plain_answer(repo, head, "c.py", plain) is None
    with shared.one_question(repo):
        repo_history(repo).knows(head)
        assert plain_answer(repo, head, "c.py", plain) is not None
        with blame_options.using(blame_options.GitBlameOptions(ignore_whitespace=True)):
            assert plain_answer(repo, head, "c.py", plain) is None
    (repo / ".revs").write_text("")
    git(repo, "config", "blame.ignoreRevsFile", ".revs")
    with shared.one_question(repo):
        assert plain_answer(repo, head, "c.py", plain) is None
    git(repo, "config", "--unset", "blame.ignoreRevsFile")
    git(repo, "config", "diff.py.textconv", "cat")
    monkeypatch.setattr(derived_blame, "_PLAIN_DIFF", {})  # what it found is kept per process
    with shared.one_question(repo):
        assert plain_answer(repo, head, "c.py", plain) is None
