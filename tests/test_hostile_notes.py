"""Notes from strangers (a fork's pull request, a teammate's push) are input: each
hostile note below goes through blame, why and the three report formats under a
memory and a time limit, and is dropped or cleaned, never trusted."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from conftest import commit_env, git

SID = "11111111-aaaa-4000-8000-000000000001"
MEMORY_LIMIT = 1536 * 1024 * 1024
TIME_LIMIT = 60

DEEP = "[" * 100_000 + "]" * 100_000

HOSTILE = {
    "huge range": {"files": {"a.py": {SID: [[2, 1_000_000_000_000, 0.9]]}}},
    "1e18 range": '{"schema": 1, "commit": "C", "files": {"a.py": {"S": [[2, 1e18, 0.9]]}}}',
    "NaN confidence": '{"schema": 1, "commit": "C", "files": {"a.py": {"S": [[1, 2, NaN]]}}}',
    "Infinity": '{"schema": 1, "commit": "C", "files": {"a.py": {"S": [[1, Infinity, 0.9]]}}}',
    "1e309 confidence": '{"schema": 1, "commit": "C", "files": {"a.py": {"S": [[1, 2, 1e309]]}}}',
    "negative confidence": {"files": {"a.py": {SID: [[1, 2, -7]]}}},
    "deep nesting": DEEP,
    "newline in session id": {"files": {"a.py": {"evil\ndeja: forged line": [[1, 2, 0.9]]}}},
    "bidi controls": {
        "files": {"a.py": {SID: [[1, 2, 0.9]]}},
        "sessions": {SID: {"agent": "antigravity", "project": "/w/\u202eyrt\u202c\x1b[31m"}},
    },
    "a huge string": {
        "files": {"a.py": {SID: [[1, 2, 0.9]]}},
        "sessions": {SID: {"agent": "antigravity", "project": "x" * 5_000_000}},
    },
}


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _deja(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "deja_blame", *args],
        cwd=cwd,
        capture_output=True,
        timeout=TIME_LIMIT,
        preexec_fn=_limits,
        env=os.environ.copy(),
    )


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_note_is_cleaned_or_dropped(repo: Path, case: str) -> None:
    (repo / "a.py").write_text("x = 1\ny = 2\nz = 3\n")
    git(repo, "add", "a.py")
    git(repo, "commit", "-q", "-m", "one", env=commit_env(1_784_278_800))
    sha = git(repo, "rev-parse", "HEAD").strip()
    doc = HOSTILE[case]
    if isinstance(doc, dict):
        text = orjson.dumps({"schema": 2, "commit": sha, **doc}).decode()
    else:
        text = doc.replace('"C"', f'"{sha}"').replace('"S"', f'"{SID}"')
    note_file = repo.parent / "note.txt"
    note_file.write_text(text)
    git(repo, "notes", "--ref", "refs/notes/deja", "add", "-f", "-F", str(note_file), sha)
    runs = [
        ("blame", "a.py"),
        ("blame", "a.py", "--json"),
        ("why", "a.py:1"),
        ("report", "HEAD", "--format", "markdown"),
        ("report", "HEAD", "--format", "json"),
        ("report", "HEAD", "--format", "html", "-o", str(repo.parent / "r.html")),
    ]
    for args in runs:
        proc = _deja(*args, cwd=repo)
        out = proc.stdout.decode("utf-8", "replace")
        assert proc.returncode == 0, (case, args, proc.stderr.decode()[-400:])
        assert "Traceback" not in proc.stderr.decode()
        assert "forged line" not in out  # a session id cannot print lines of its own
        assert "\u202e" not in out and "\x1b[31m" not in out
        if "--json" in args:
            for ln in orjson.loads(proc.stdout)["lines"]:
                conf = ln["confidence"]
                assert conf is None or 0.0 <= conf <= 1.0
    html = (repo.parent / "r.html").read_bytes()
    assert len(html) < 2_000_000  # a 5 MB string in a note does not make a 157 MB page


@pytest.mark.parametrize(
    "name", ["caf\u00e9.py", 'say "hi".py', "tab\there.py", "back\\slash.py", "new\nline.py"]
)
def test_file_names_git_quotes_keep_their_sessions(tmp_path: Path, repo: Path, name: str) -> None:
    from test_notes_world import S1, World, body

    w = World(tmp_path, repo)
    w.person("README.md", "# x\n")
    w.commit("init")
    w.write(S1, name, body("q", 4))
    w.commit("agent work")
    w.deja("index", "-q")
    w.deja("annotate")
    assert set((w.note() or {})["files"]) == {name}
    fresh = tmp_path / "fresh.db"
    by_index = w.sessions_by_line(name)
    # from the note alone (another index, no transcripts)
    by_note = w.sessions_by_line(
        name, env={"DEJA_DB": str(fresh), "DEJA_ANTIGRAVITY_ROOT": str(tmp_path / "none")}
    )
    assert by_index == by_note == [S1] * 4
    report = orjson.loads(w.deja("report", "HEAD~1..HEAD", "--format", "json").stdout)
    assert report["totals"]["by_sessions"] == 4


def test_parse_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    for target in (str(fifo), "/dev/zero"):
        proc = subprocess.run(
            [sys.executable, "-m", "deja_blame", "parse", target],
            capture_output=True,
            timeout=30,
            preexec_fn=_limits,
        )
        assert proc.returncode == 1
        assert "not a regular file" in proc.stderr.decode()


def test_a_write_past_the_content_cap_says_it_was_cut(tmp_path: Path) -> None:
    from antigravity_writer import TranscriptWriter

    root = tmp_path / "root"
    w = TranscriptWriter(root, "5e5e5e5e-0000-4000-8000-000000000001", start=1_784_278_800)
    w.user("Generate the table.")
    body = "".join(f"ROW_{i} = {i}\n" for i in range(100_000))  # about 1.4 MB
    w.write_file("/w/table.py", body)
    proc = subprocess.run(
        [sys.executable, "-m", "deja_blame", "parse", str(w.path), "--json"],
        capture_output=True,
        timeout=60,
    )
    (edit,) = orjson.loads(proc.stdout)["edits"]
    assert edit["truncated"] is True
    assert 0 < len(edit["added"]) < 100_000  # what fits the 1 MiB cap, and no more
    text = subprocess.run(
        [sys.executable, "-m", "deja_blame", "parse", str(w.path)], capture_output=True, timeout=60
    ).stdout.decode()
    assert "cut: the transcript holds only part of it" in text


def test_a_sha256_repository_is_served_not_refused(tmp_path: Path) -> None:
    """libgit2 cannot open it; deja reads it through git (tests/test_sha256.py end to end)."""
    repo = tmp_path / "sha256"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", str(repo)], check=True)
    (repo / "a.py").write_text("x = 1\n")
    git(repo, "add", "a.py")
    git(repo, "commit", "-q", "-m", "one", env=commit_env(1_784_278_800))
    for args in (("blame", "a.py"), ("why", "a.py:1"), ("report", "HEAD"), ("hooks", "install")):
        proc = _deja(*args, cwd=repo)
        err = proc.stderr.decode()
        assert proc.returncode == 0, (args, err)
        assert "Traceback" not in err and "unexpected error" not in err, err
    doctor = _deja("doctor", cwd=repo).stdout.decode()
    assert any(
        ln.startswith("ok    repository") and "SHA-256" in ln for ln in doctor.splitlines()
    ), doctor


def test_a_note_too_large_to_be_deja_s_is_skipped_with_one_warning(repo: Path) -> None:
    (repo / "a.py").write_text("x = 1\ny = 2\n")
    git(repo, "add", "a.py")
    git(repo, "commit", "-q", "-m", "one", env=commit_env(1_784_278_800))
    sha = git(repo, "rev-parse", "HEAD").strip()
    doc = {"schema": 2, "commit": sha, "files": {"a.py": {SID: [[1, 2, 0.9]]}}}
    doc["sessions"] = {SID: {"agent": "antigravity", "project": "p" * 20_000_000}}
    note_file = repo.parent / "note.txt"
    note_file.write_bytes(orjson.dumps(doc))
    git(repo, "notes", "--ref", "refs/notes/deja", "add", "-f", "-F", str(note_file), sha)
    proc = _deja("blame", "a.py", "--json", cwd=repo)
    err = proc.stderr.decode()
    assert proc.returncode == 0, err
    assert err.count("skipped the note of commit") == 1 and "too large" in err, err
    assert all(ln["session"] is None for ln in orjson.loads(proc.stdout)["lines"])
