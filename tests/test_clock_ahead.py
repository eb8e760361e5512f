"""A session of another machine whose clock runs ahead of git's (newcomer 17 #1).

Its write of a line is dated after the commit that holds the line, by more than
the 120 s of skew deja allows: the line is the commit's author's (README rule 2),
and ``deja why`` and ``deja doctor`` said nothing about the session. Now why names
it and the clock, and doctor warns (``clock``); the attribution is unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from conftest import commit_env, deja, git
from test_other_agents import T0, iso

CONTENT = "def remote_three() -> int:\n    # three, as the remote service counts it\n    return 3\n"
SID = "33334444-aaaa-4bbb-8ccc-000000000003"
ENV = {"DEJA_ANTIGRAVITY_ROOT": ""}


def _session(tmp_path: Path, folder: str, sep: str, written_at: int) -> None:
    """A Claude Code session at ``folder`` (another machine's) that writes
    src/remote.py with CONTENT, its write dated ``written_at``."""
    path = sep.join([folder, "src", "remote.py"])
    project = tmp_path / "home" / ".claude" / "projects" / "-other-machine"
    project.mkdir(parents=True)
    records = [
        {"type": "user", "sessionId": SID, "cwd": folder, "timestamp": iso(written_at - 2),
         "message": {"role": "user", "content": "Add remote_three."}},
        {"type": "assistant", "sessionId": SID, "cwd": folder, "timestamp": iso(written_at - 1),
         "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t1",
                     "name": "Write", "input": {"file_path": path, "content": CONTENT}}]}},
        {"type": "user", "sessionId": SID, "cwd": folder, "timestamp": iso(written_at),
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                     "content": "File created"}]},
         "toolUseResult": {"type": "create", "filePath": path, "content": CONTENT}},
    ]  # fmt: skip
    (project / f"{SID}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def _commit(repo: Path) -> None:
    (repo / "README").write_text("project\n")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "start", env=commit_env(T0))
    (repo / "src").mkdir()
    (repo / "src" / "remote.py").write_text(CONTENT)
    git(repo, "add", "src/remote.py")
    git(repo, "commit", "-qm", "remote", env=commit_env(T0 + 600))


@pytest.mark.parametrize(
    ("folder", "sep", "shown"),
    [("/home/pat/src/project", "/", "/home/pat/src/project"),
     ("D:\\work\\myfork", "\\", "D:/work/myfork")],
)  # fmt: skip
def test_a_session_whose_clock_runs_ahead_is_named_by_why_and_doctor(
    repo: Path, tmp_path: Path, folder: str, sep: str, shown: str
) -> None:
    _commit(repo)
    _session(tmp_path, folder, sep, T0 + 600 + 15 * 60)  # its clock 15 min ahead
    doc = orjson.loads(deja("why", "src/remote.py:2", "--json", cwd=repo, env=ENV).stdout)
    assert doc["session"] is None  # the commit's author's, as before
    assert doc["written_elsewhere_after_commit"] == {
        "session": SID, "agent": "claude-code", "clone": shown,
        "at": iso(T0 + 1500)[:19] + "Z", "commit_at": iso(T0 + 600)[:19] + "Z",
        "ahead_seconds": 900,
    }  # fmt: skip
    text = deja("why", "src/remote.py:2", cwd=repo, env=ENV).stdout.decode()
    assert (
        f"session {SID} (claude) wrote this line in another clone or on another machine"
        f" ({shown}), its write dated {iso(T0 + 1500)[:19]}Z, 15 min after the commit"
    ) in text, text
    assert "the clock where it ran is ahead of git's by more than the 2 minutes" in text

    doctor = deja("doctor", "--json", cwd=repo, env=ENV)
    checks = {c["name"]: c for c in orjson.loads(doctor.stdout)["checks"]}
    clock = checks["clock"]
    assert clock["ok"] is True and clock["fix"] == "set the clock right where that session ran"
    assert clock["detail"].startswith(
        "3 lines of the latest commits written by 1 session of another machine or clone"
        " (33334444), the writes dated after the commits that hold them (by up to 15 min)"
    ), clock["detail"]
    assert "deja why src/remote.py:1 in commit" in clock["detail"]
    assert doctor.returncode == 0  # a warning
    assert "warn  clock" in deja("doctor", cwd=repo, env=ENV).stdout.decode()


def test_a_write_within_the_skew_is_the_session_s_and_a_much_later_one_is_not_named(
    repo: Path, tmp_path: Path
) -> None:
    """Within 120 s the line is the session's (nothing to explain); a write a day later
    is a later session's, not a clock's: neither gets the clock line."""
    _commit(repo)
    _session(tmp_path, "/home/pat/src/project", "/", T0 + 600 + 26 * 3600)
    doc = orjson.loads(deja("why", "src/remote.py:2", "--json", cwd=repo, env=ENV).stdout)
    assert doc["session"] is None and "written_elsewhere_after_commit" not in doc
    checks = orjson.loads(deja("doctor", "--json", cwd=repo, env=ENV).stdout)["checks"]
    assert "clock" not in {c["name"] for c in checks}


def test_within_the_skew_the_line_is_the_session_s(repo: Path, tmp_path: Path) -> None:
    _commit(repo)
    _session(tmp_path, "/home/pat/src/project", "/", T0 + 600 + 60)
    doc = orjson.loads(deja("why", "src/remote.py:2", "--json", cwd=repo, env=ENV).stdout)
    assert doc["session"] == SID and "written_elsewhere_after_commit" not in doc
    checks = orjson.loads(deja("doctor", "--json", cwd=repo, env=ENV).stdout)["checks"]
    assert "clock" not in {c["name"] for c in checks}


def test_doctor_reads_the_log_whatever_diff_noprefix_says(repo: Path, tmp_path: Path) -> None:
    """``diff.noprefix=true`` (a person's setting) printed ``+++ src/remote.py``: the
    check read no path and found nothing, silently (review 17)."""
    _commit(repo)
    _session(tmp_path, "/home/pat/src/project", "/", T0 + 600 + 15 * 60)
    git(repo, "config", "diff.noprefix", "true")
    deja("why", "src/remote.py:2", cwd=repo, env=ENV)  # the session read into the index
    checks = orjson.loads(deja("doctor", "--json", cwd=repo, env=ENV).stdout)["checks"]
    assert "clock" in {c["name"] for c in checks}


def test_the_log_reader_counts_a_hunk_s_lines_and_reads_quoted_paths() -> None:
    """An added line that reads ``++ x`` is no file header, and a path git quoted is
    read back: both lost every later line of their file before (review 17)."""
    from deja_blame.commands.doctor import _added_lines

    log = (
        b"\x00abc 100\n\ndiff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n"
        b"@@ -1,0 +2,3 @@\n+++ counter\n+b = 2\n+c = 3\n"
        b'diff --git "a/na\\303\\257ve.py" "b/na\\303\\257ve.py"\n'
        b'--- "a/na\\303\\257ve.py"\n+++ "b/na\\303\\257ve.py"\n'
        b"@@ -3 +3 @@\n-old\n+new\n\\ No newline at end of file\n"
        b"\x00def 200\n\ndiff --git a/y.py b/y.py\n--- a/y.py\n+++ b/y.py\n@@ -0,0 +1 @@\n+y = 1\n"
    )
    assert list(_added_lines(log)) == [
        ("abc", 100.0, "x.py", 2, "++ counter"),
        ("abc", 100.0, "x.py", 3, "b = 2"),
        ("abc", 100.0, "x.py", 4, "c = 3"),
        ("abc", 100.0, "na\u00efve.py", 3, "new"),
        ("def", 200.0, "y.py", 1, "y = 1"),
    ]
