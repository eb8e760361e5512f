"""A commit recorded as given no line, then the session's transcript re-timed; and
``deja why`` of a line a session wrote with no time.

The post-commit hook derived the commit while the session's writes were timed after
it (a clock set wrong, a transcript written by hand): no line was the session's, and
``.git/deja/history`` recorded the commit with the writes it saw. The transcript
corrected to times before the commit holds as many lines: the record must still
stop standing for the commit, in this index and in a new one (newcomer 15 #3).
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import commit_env, deja, git

T0 = 1_796_655_600  # 2026-12-07T15:00:00Z
SID = "9f8e7d6c-1111-4222-8333-444455556666"
EARLIER = "0000aaaa-1111-4222-8333-444455556666"
HELPERS = "def is_blank(text):\n    return not text.strip()\n\n\ndef clamp(v, lo, hi):\n    return max(lo, min(v, hi))\n"
FIRST = "def first_helper(value):\n    return value * 2 + 1\n"


def _iso(epoch: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(epoch, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _claude(store: Path, repo: Path, sid: str, rel: str, text: str, at: int | None) -> None:
    """A Claude Code session that writes ``rel`` whole at ``at`` (None: records with no
    ``timestamp``, as a transcript written by hand may be)."""
    path = str(repo / rel)
    common = {"cwd": str(repo), "sessionId": sid}
    records = [
        {**common, "type": "user", "uuid": "u1", "timestamp": _iso((at or 0) - 5),
         "message": {"role": "user", "content": f"write {rel}"}},
        {**common, "type": "assistant", "uuid": "u2", "timestamp": _iso(at or 0),
         "message": {"role": "assistant", "model": "claude-x", "content": [
             {"type": "tool_use", "id": "t1", "name": "Write",
              "input": {"file_path": path, "content": text}}]}},
        {**common, "type": "user", "uuid": "u3", "timestamp": _iso(at or 0),
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "t1",
              "content": f"File created successfully at: {path}"}]},
         "toolUseResult": {"type": "create", "filePath": path, "content": text}},
    ]  # fmt: skip
    if at is None:
        for record in records:
            del record["timestamp"]
    folder = store / str(repo).replace("/", "-")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{sid}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def test_a_transcript_retimed_before_a_commit_recorded_with_no_line_gives_its_lines(
    repo: Path, tmp_path: Path
) -> None:
    store = tmp_path / "claude"
    env = {"DEJA_CLAUDE_ROOT": str(store)}
    (repo / "a.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init", env=commit_env(T0))
    deja("hooks", "install", cwd=repo, env=env)
    git(repo, "config", "deja.hook.background", "false")
    git(repo, "config", "deja.hook.timeout", "60")
    _claude(store, repo, EARLIER, "b.py", FIRST, T0 + 600)  # a note: the notes ref exists
    (repo / "b.py").write_text(FIRST)
    git(repo, "add", "b.py")
    git(repo, "commit", "-qm", "b", env={**commit_env(T0 + 1_200), **env})

    commit_at = T0 + 3_600
    _claude(store, repo, SID, "t.py", HELPERS, commit_at + 65)  # after its commit
    (repo / "t.py").write_text(HELPERS)
    git(repo, "add", "t.py")
    git(repo, "commit", "-qm", "t", env={**commit_env(commit_at), **env})
    deja("annotate", "--all", cwd=repo, env=env)
    history = (repo / ".git" / "deja" / "history").read_text()
    assert history.startswith("none ") and "\ndone " in history, history

    def code_lines(db: str) -> list[str | None]:
        """The session of each line that is not blank."""
        got = deja("blame", "t.py", "--json", cwd=repo, env={**env, "DEJA_DB": db})
        lines = json.loads(got.stdout)["lines"]
        return [ln["session"] for ln in lines if ln["line"] not in (3, 4)]

    db = str(tmp_path / "index.db")
    assert code_lines(db) == [None] * 4
    _claude(store, repo, SID, "t.py", HELPERS, commit_at - 600)  # the clock corrected
    assert code_lines(db) == [SID] * 4
    assert code_lines(str(tmp_path / "fresh.db")) == [SID] * 4


def test_why_says_a_session_wrote_the_line_with_no_time(repo: Path, tmp_path: Path) -> None:
    """A transcript whose records hold no ``timestamp`` (written by hand): its writes
    cannot be placed before a commit, so blame gives the lines to nobody, and ``deja
    why`` says which session wrote the line and why it is not its (newcomer 15 #2)."""
    store = tmp_path / "claude"
    env = {"DEJA_CLAUDE_ROOT": str(store)}
    _claude(store, repo, SID, "t.py", HELPERS, None)
    (repo / "t.py").write_text(HELPERS)
    git(repo, "add", "t.py")
    git(repo, "commit", "-qm", "t", env=commit_env(T0))
    said = deja("why", "t.py:1", cwd=repo, env=env).stdout.decode()
    assert "not written by any indexed session" in said, said
    assert (
        f"session {SID} (claude) wrote this line, but its transcript gives no time for the"
        " write: nothing places it before the commit"
    ) in said, said
    doc = json.loads(deja("why", "t.py:1", "--json", cwd=repo, env=env).stdout)
    assert doc["written_untimed"] == {"session": SID, "agent": "claude-code"}
