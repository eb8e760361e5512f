"""bench/moved_machine.py's ``transcript_missing`` label: a missed own-edit line whose
commit's own checkpoint transcript the extraction did not read (not in the snapshot,
or naming no session) stands on the session's other transcripts' writes of its text,
so it is counted apart from the strict and beyond-used-up figures, never out of them.
A checkpoints branch built with git, one transcript's blob absent as in a partial
clone's snapshot."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from conftest import bench_module, git

MM = bench_module("moved_machine")
ABSENT = "e2d89341a35a01d763fa9c3e8ad996ed7704e63c"  # a blob the snapshot does not hold


def _blob(repo: Path, text: str) -> str:
    return subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=repo, input=text, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip


def _tree(repo: Path, files: dict[str, str]) -> str:
    """A tree of ``files`` (path -> blob id), the blobs allowed to be absent."""
    here = {name: sha for name, sha in files.items() if "/" not in name}
    below: dict[str, dict[str, str]] = {}
    for name, sha in files.items():
        if "/" in name:
            top, rest = name.split("/", 1)
            below.setdefault(top, {})[rest] = sha
    rows = [f"100644 blob {sha}\t{name}" for name, sha in here.items()]
    rows += [f"040000 tree {_tree(repo, sub)}\t{top}" for top, sub in below.items()]
    return subprocess.run(
        ["git", "mktree", "--missing"],
        cwd=repo, input="\n".join(rows) + "\n", capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip


def _checkpoints(repo: Path) -> None:
    """Three checkpoints of session s1: one read, one whose transcript is absent, one
    whose transcript names no session; ``BRANCH`` points at them."""
    git(repo, "init", "-q")
    files: dict[str, str] = {}
    lines = {
        "aa/000000000001": json.dumps({"sessionId": "s1", "cwd": "/u/cli"}) + "\n",
        "bb/000000000002": None,
        "cc/000000000003": json.dumps({"type": "summary"}) + "\n",
    }
    for cp, text in lines.items():
        transcript = f"{cp}/0/full.jsonl"
        files[transcript] = ABSENT if text is None else _blob(repo, text)
        files[f"{cp}/metadata.json"] = _blob(
            repo, json.dumps({"sessions": [{"transcript": f"/{transcript}"}]})
        )
        files[f"{cp}/0/metadata.json"] = _blob(repo, json.dumps({"session_id": "s1"}))
    tree = _tree(repo, files)
    commit = git(
        repo, "commit-tree", tree, "-m", "checkpoints",
        env={"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@a", "GIT_COMMITTER_NAME": "a",
             "GIT_COMMITTER_EMAIL": "a@a"},
    ).strip()  # fmt: skip
    git(repo, "update-ref", f"refs/heads/{MM.BRANCH}", commit)


def test_the_transcripts_extraction_did_not_read_are_named(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _checkpoints(repo)
    unread: set[str] = set()
    sessions = MM.extract_sessions(repo, tmp_path / "work", unread)
    assert sessions == {"s1": "/u/cli"}
    assert unread == {"bb/000000000002/0/full.jsonl", "cc/000000000003/0/full.jsonl"}
    transcripts = MM.checkpoint_transcripts(repo)
    assert transcripts["bb000000000002"] == ["bb/000000000002/0/full.jsonl"]
    assert MM.checkpoint_sessions(repo)["bb000000000002"] == {"s1"}  # the same session
    assert not MM.transcript_missing(["aa000000000001"], transcripts, unread)
    assert MM.transcript_missing(["bb000000000002"], transcripts, unread)
    assert MM.transcript_missing(["cc000000000003"], transcripts, unread)
    # a commit of two checkpoints, one of them not read: its session's edits are not all seen
    assert MM.transcript_missing(["aa000000000001", "bb000000000002"], transcripts, unread)
    assert not MM.transcript_missing(["dd000000000004"], transcripts, unread)


def _missed(commit: str, place: str, missing: bool) -> dict[str, Any]:
    return {
        "commit": commit, "path": "a.go", "line": 1, "cause": "repeated", "place": place,
        "transcript_missing": missing,
    }  # fmt: skip


def test_missing_transcripts_are_a_third_figure_the_strict_one_keeps() -> None:
    missed = [
        _missed("seen", "placed", False),
        _missed("seen", "no_unique_line", False),
        _missed("seen", "used_up", False),
        _missed("seen", "elsewhere", False),
        _missed("unseen", "placed", True),
        _missed("unseen", "placed", True),
        _missed("unseen", "used_up", True),
        _missed("unseen", "elsewhere", True),
    ]
    strict, beyond, seen, unseen = MM.missed_counts(missed)
    assert strict == {"seen": 3, "unseen": 3}  # every place but elsewhere, missing or not
    assert beyond == {"seen": 2, "unseen": 2}  # used_up copies left out
    assert seen == {"seen": 2}  # and the lines of commits whose transcript was not read
    assert unseen == 3  # the strict lines labelled transcript_missing
