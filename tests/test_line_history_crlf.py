"""A line's history in a file with CRLF line endings is an LF file's (REVIEW12 F3): the
diff's rows kept their CR, so why of an uncommitted line found no line of HEAD it
changed, a committed line's own diff never matched its text (git log -L ran for
every one), and the history's texts ended in a CR."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import commit_env, git

from deja_blame.attribution.line_history import only_version, replaced_line, versions

T0 = 1_790_000_000
BEFORE = ["import os", "value = compute_total(rows)", "print(value)"]
AFTER = ["import os", "value = compute_total(rows, rate)", "print(value)"]


@pytest.mark.parametrize("eol", ["\r\n", "\n"])
def test_a_crlf_files_line_history_is_an_lf_files(repo: Path, eol: str) -> None:
    (repo / "f.py").write_bytes(eol.join(BEFORE + [""]).encode())
    git(repo, "add", "f.py")
    git(repo, "commit", "-qm", "first", env=commit_env(T0))
    first = git(repo, "rev-parse", "HEAD").strip()
    (repo / "f.py").write_bytes(eol.join(AFTER + [""]).encode())

    assert replaced_line(repo, "f.py", 2, AFTER[1]) == 2
    assert replaced_line(repo, "f.py", 1, AFTER[0]) is None  # not changed

    one = only_version(repo, "f.py", first, 2, BEFORE[1])
    assert one is not None and one.text == BEFORE[1]
    git(repo, "commit", "-qam", "rate", env=commit_env(T0 + 60))
    head = git(repo, "rev-parse", "HEAD").strip()
    got = versions(repo, "f.py", head, 2, AFTER[1])
    assert [(v.commit, v.text) for v in got] == [(first, BEFORE[1]), (head, AFTER[1])]


def test_a_file_not_in_utf8_finds_the_line_it_changed(repo: Path) -> None:
    """Latin-1 text: the working tree's line is read with U+FFFD for what is not UTF-8
    (as blame shows it), and so is the diff it is looked up in."""
    (repo / "f.py").write_bytes("name = 'café'\nx = 1\n".encode("latin-1"))
    git(repo, "add", "f.py")
    git(repo, "commit", "-qm", "first", env=commit_env(T0))
    (repo / "f.py").write_bytes("name = 'café crème'\nx = 1\n".encode("latin-1"))
    as_read = "name = 'café crème'".encode("latin-1").decode("utf-8", "replace")
    assert replaced_line(repo, "f.py", 1, as_read) == 1
