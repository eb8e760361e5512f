"""bench/moved_machine.py's verification of a line through the file it demonstrably
came from (``Verifier.verify_moved``): git's diff of the claim's commit, never deja's
answer, says where the text was; the session's edits must hold it there."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from conftest import REPO_ROOT, git

from deja_blame.index.fingerprint import fingerprint


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location(
        "moved_machine", REPO_ROOT / "bench" / "moved_machine.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _commit(repo: Path, files: dict[str, str | None], message: str) -> str:
    for name, text in files.items():
        if text is None:
            git(repo, "rm", "-q", name)
        else:
            (repo / name).write_text(text)
            git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


HOOKS = [
    "func hooks() {",
    "\tstaged := stagedFiles(repo)",
    "\tlog(staged)",
    "}",
    "",
    "func overlap(staged []string) bool {",
    '\tslog.Int("committed_files", len(staged)),',
    "\treturn len(staged) > 0",
    "}",
]
CLEAN = ["package cli", "", "func clean() {", "\tpreview(branches)", "}"]
CLEANUP = [
    "package cli",
    "",
    "func cleanup() {",
    "\tpreview(orphans)",
    "\tremove(orphans)",
    "}",
]


def _verifier(repo: Path, edits: dict[str, list[tuple[str, list[str]]]]) -> Any:
    import pygit2

    mm = _bench()
    verifier = mm.Verifier(pygit2.Repository(str(repo)), None, repo)
    for sid, rows in edits.items():  # the sessions' edits, as the index gives them
        verifier.edits[sid] = [(path, {fingerprint(x) for x in lines}) for path, lines in rows]
    return verifier


def _claim(verifier: Any, claim: tuple[str, str, str, int]) -> bool:
    assert not verifier.verify(claim)  # not through the file's own name
    return bool(verifier.verify_moved(claim))


def test_a_block_moved_out_of_a_file_the_session_wrote_it_into(repo: Path) -> None:
    _commit(repo, {"hooks.go": "\n".join(HOOKS) + "\n", "other.go": "x := 1\n"}, "one")
    sha = _commit(
        repo,
        {"hooks.go": "\n".join(HOOKS[:5]) + "\n", "overlap.go": "\n".join(HOOKS[5:]) + "\n"},
        "extract",
    )
    wrote = {
        "s": [("/u/cli/hooks.go", HOOKS[5:])],  # wrote the block into hooks.go
        "t": [("/u/cli/other.go", HOOKS[5:])],  # wrote the same text elsewhere only
    }
    verifier = _verifier(repo, wrote)
    assert _claim(verifier, (sha, "overlap.go", "s", 2))  # its text left hooks.go
    assert _claim(verifier, (sha, "overlap.go", "s", 4))  # a bracket beside such a line
    assert not _claim(verifier, (sha, "overlap.go", "t", 2))  # other.go kept nothing of it


def test_a_bracket_needs_a_line_of_text_moved_beside_it(repo: Path) -> None:
    _commit(repo, {"hooks.go": "\n".join(HOOKS) + "\n"}, "one")
    sha = _commit(
        repo,
        {"hooks.go": "\n".join(HOOKS[:3]) + "\n", "new.go": "refresh(cache)\n}\n"},
        "a bracket left hooks.go, but no text beside it did",
    )
    verifier = _verifier(repo, {"s": [("/u/cli/hooks.go", HOOKS)]})
    assert not _claim(verifier, (sha, "new.go", "s", 2))


def test_a_rename_git_misses_because_the_file_grew(repo: Path) -> None:
    _commit(repo, {"clean.go": "\n".join(CLEAN) + "\n"}, "one")
    sha = _commit(
        repo, {"clean.go": None, "cleanup.go": "\n".join(CLEANUP) + "\n"}, "clean -> cleanup"
    )
    assert "R" not in git(repo, "diff", "--name-status", "-M", f"{sha}^", sha)
    # the session rewrote clean.go before the commit took it to cleanup.go
    verifier = _verifier(repo, {"s": [("/u/cli/clean.go", CLEANUP[2:])]})
    assert _claim(verifier, (sha, "cleanup.go", "s", 5))
    # a session that wrote those lines to another file is not verified by the rename
    verifier = _verifier(repo, {"s": [("/u/cli/clean_test.go", CLEANUP[2:])]})
    assert not _claim(verifier, (sha, "cleanup.go", "s", 5))


def test_a_deleted_file_is_no_source_of_a_file_mostly_of_other_text(repo: Path) -> None:
    _commit(repo, {"clean.go": "\n".join(CLEAN) + "\n"}, "one")
    other = [
        "package cli",
        "",
        "func archive() {",
        "\tpack(all)",
        "\tsend(all)",
        "\tremove(orphans)",
        "}",
    ]
    sha = _commit(repo, {"clean.go": None, "cleanup.go": "\n".join(other) + "\n"}, "replace")
    verifier = _verifier(repo, {"s": [("/u/cli/clean.go", ["\tremove(orphans)"])]})
    assert not _claim(verifier, (sha, "cleanup.go", "s", 6))
