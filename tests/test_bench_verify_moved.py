"""bench/moved_machine.py's verification of a line through the file it demonstrably
came from (``Verifier.verify_moved``): git's diff of the claim's commit, never deja's
answer, says where the text was; the session's edits must hold it there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import bench_module, git

from deja_blame.index.fingerprint import fingerprint


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

    mm = bench_module("moved_machine")
    verifier = mm.Verifier(pygit2.Repository(str(repo)), None, repo)
    for sid, rows in edits.items():  # the sessions' edits, as the index gives them
        verifier.edits[sid] = [(path, [fingerprint(x) for x in lines]) for path, lines in rows]
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


def test_a_common_line_a_person_took_out_of_another_file_verifies_nothing(repo: Path) -> None:
    # the session only ever wrote a.go; a person's commit takes load()'s error check out
    # of a.go and writes an unrelated b.go with its own `return err`
    load = [
        "package a",
        "",
        "func load() error {",
        "\tif err := open(); err != nil {",
        "\t\treturn err",
        "\t}",
        "\treturn nil",
        "}",
    ]
    _commit(repo, {"a.go": "\n".join(load) + "\n"}, "the session's a.go")
    save = [
        "package a",
        "",
        "func save() error {",
        "\tif err := write(); err != nil {",
        "\t\treturn err",
        "\t}",
        "\treturn nil",
        "}",
    ]
    sha = _commit(
        repo,
        {
            "a.go": "package a\n\nfunc load() error {\n\treturn open()\n}\n",
            "b.go": "\n".join(save) + "\n",
        },
        "a person's b.go",
    )
    verifier = _verifier(repo, {"s": [("/u/cli/a.go", load)]})
    for line in (4, 5, 6, 7, 8):  # `return err` and `return nil` both left a.go
        assert not _claim(verifier, (sha, "b.go", "s", line))


def test_a_rename_git_misses_verifies_the_text_the_deleted_file_held(repo: Path) -> None:
    # clean.go held the line at the parent; the session then grew it into cleanup.go
    _commit(repo, {"clean.go": "\n".join(CLEAN) + "\n"}, "one")
    more = ["\tcount(orphans)", "\tprune(orphans)", "\treport(orphans)"]
    grown = ["package cli", "", "func cleanup() {", "", "\tpreview(branches)", "", *more, "}"]
    sha = _commit(repo, {"clean.go": None, "cleanup.go": "\n".join(grown) + "\n"}, "grown")
    assert "R" not in git(repo, "diff", "--name-status", "-M", f"{sha}^", sha)
    verifier = _verifier(repo, {"s": [("/u/cli/clean.go", CLEAN), ("/u/cli/clean.go", more)]})
    assert _claim(verifier, (sha, "cleanup.go", "s", 5))  # clean.go held it, alone
    assert _claim(verifier, (sha, "cleanup.go", "s", 6))  # a blank line beside it
    for line in (7, 8, 9, 10):  # a block the session wrote there, and its bracket
        assert _claim(verifier, (sha, "cleanup.go", "s", line))
    assert not _claim(verifier, (sha, "cleanup.go", "s", 3))  # neither


def test_a_deleted_file_gives_only_text_it_held_or_a_block_the_session_wrote_there(
    repo: Path,
) -> None:
    # cleanup.go is mostly clean.go and the session's block written there, and the session
    # once wrote `return err` and a bracket into clean.go; but clean.go did not hold them
    # at the parent, nor did the session write them beside the lines they stand beside
    _commit(repo, {"clean.go": "\n".join(CLEAN) + "\n"}, "one")
    more = ["\tcount(orphans)", "\tprune(orphans)", "\treport(orphans)"]
    grown = [
        *CLEAN,
        "",
        "func more() error {",
        *more,
        "\tif failed {",
        "\t\treturn err",
        "\t}",
        "}",
    ]
    sha = _commit(repo, {"clean.go": None, "cleanup.go": "\n".join(grown) + "\n"}, "grown")
    assert "R" not in git(repo, "diff", "--name-status", "-M", f"{sha}^", sha)
    wrote = [("/u/cli/clean.go", more), ("/u/cli/clean.go", ["\treturn err", "\t}"])]
    verifier = _verifier(repo, {"s": wrote})
    assert _claim(verifier, (sha, "cleanup.go", "s", 9))  # the block, so cleanup.go is clean.go
    assert not _claim(verifier, (sha, "cleanup.go", "s", 12))
    assert not _claim(verifier, (sha, "cleanup.go", "s", 13))


def test_names_git_quotes_are_read_as_the_files_they_are(repo: Path) -> None:
    for name in ("héllo.go", 'say "hi".go'):
        _commit(repo, {name: "\n".join(HOOKS) + "\n"}, "one")
        sha = _commit(
            repo,
            {name: "\n".join(HOOKS[:5]) + "\n", "overlap.go": "\n".join(HOOKS[5:]) + "\n"},
            "extract",
        )
        moves = bench_module("moved_machine").CommitMoves.of(repo, sha)
        assert name in moves.removed and name not in moves.added_files
        verifier = _verifier(repo, {"s": [(f"/u/cli/{name}", HOOKS[5:])]})
        assert _claim(verifier, (sha, "overlap.go", "s", 2))
        git(repo, "rm", "-q", "overlap.go", name)
        git(repo, "commit", "-q", "-m", "again")
