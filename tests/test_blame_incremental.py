"""git blame --incremental, parsed while git writes it, gives the lines git blame
--porcelain gives: renames, quoted names, uncommitted lines, blocks cut anywhere."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

from conftest import commit_env, git

from deja_blame.attribution.facts.git_blame import (
    _Incremental,
    _IncrementalParser,
    parse_porcelain,
)


def _history(repo: Path) -> str:
    name = "caf\u00e9\tmenu.py"  # quoted by git: a tab and a non-ASCII letter
    (repo / "old.py").write_text("".join(f"a{i} = {i}\n" for i in range(30)))
    git(repo, "add", "old.py")
    git(repo, "commit", "-qm", "one", env=commit_env(1_784_278_800))
    git(repo, "mv", "old.py", name)
    text = (repo / name).read_text().replace("a7 = 7", "a7 = 70").replace("a20 = 20", "b = 2")
    (repo / name).write_text(text)
    git(repo, "commit", "-qam", "two", env=commit_env(1_784_278_900))
    (repo / name).write_text(text.replace("a3 = 3", "a3 = 33") + "tail = 1\n")
    return name


def _comparable(lines: list) -> list:
    """The lines with an uncommitted line's time left out: git gives those the time
    it runs, and two runs can fall on either side of a second."""
    return [dataclasses.replace(b, commit_time=None) if b.commit is None else b for b in lines]


def _blame(repo: Path, form: str, name: str, rev: list[str]) -> bytes:
    return subprocess.run(
        ["git", "blame", form, *rev, "--", name], cwd=repo, capture_output=True, check=True
    ).stdout


def test_incremental_is_porcelain_s_lines_in_any_chunks(repo: Path) -> None:
    name = _history(repo)
    for rev in ([], ["HEAD"]):  # the working tree (uncommitted lines) and a commit
        want = parse_porcelain(_blame(repo, "--porcelain", name, rev))
        data = _blame(repo, "--incremental", name, rev)
        for size in (1, 7, len(data)):  # blocks cut anywhere, as a pipe delivers them
            got: list = []
            parser = _IncrementalParser(got)
            rest = b""
            for k in range(0, len(data), size):
                *rows, rest = (rest + data[k : k + size]).split(b"\n")
                parser.feed(rows)
            parser.feed([rest])
            got.sort(key=lambda b: b.line)
            assert _comparable(got) == _comparable(want)
        assert any(b.commit is None for b in want) == (rev == [])
        assert {b.orig_path for b in want} == {"old.py", name}


def test_the_reader_thread_returns_git_s_lines_and_errors(repo: Path) -> None:
    name = _history(repo)
    proc = subprocess.Popen(
        ["git", "blame", "--incremental", "HEAD", "--", name],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    lines, err = _Incremental(proc).result()
    assert lines == parse_porcelain(_blame(repo, "--porcelain", name, ["HEAD"]))
    assert err == b"" and proc.returncode == 0
    proc = subprocess.Popen(
        ["git", "blame", "--incremental", "HEAD", "--", "nowhere.py"],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    lines, err = _Incremental(proc).result()
    assert lines == [] and b"no such path" in err and proc.returncode != 0


def test_the_lines_stream_to_a_consumer_before_the_result(repo: Path) -> None:
    from deja_blame.attribution.facts.git_blame import PendingBlame, _start_git

    name = _history(repo)
    pending = _start_git(repo, name, "HEAD")
    seen: list = []
    pending.stream(seen.extend)
    lines = pending.result()
    assert sorted(seen, key=lambda b: b.line) == lines and len(lines) == 30

    def broken(found: list) -> None:
        raise ValueError("a rule failed on the reader thread")

    failing = _start_git(repo, name, "HEAD")
    failing.stream(broken)
    try:
        failing.result()
    except ValueError as exc:
        assert "reader thread" in str(exc)
    else:
        raise AssertionError("the consumer's error was lost")
    # a blame that does not come in blocks (cached, pygit2) gives them all at the result
    whole = PendingBlame(lambda: lines)
    late: list = []
    whole.stream(late.extend)
    assert late == [] and whole.result() == lines and late == lines
