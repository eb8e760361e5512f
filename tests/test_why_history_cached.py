"""``deja why`` of a line with older versions blames the file at each older commit:
that answer is kept in the attribution cache, so the next ``why`` of a line whose
history passes through the same commit matches nothing again (an editor hovering
line after line, an agent asking over MCP). It was matched afresh every time: a
window around the line, never kept (0.35 s of a 0.55 s ``why`` on express's
``lib/response.js`` with 1,000 sessions)."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import commit_env, git, run_deja

from deja_blame.attribution import blame

T0 = 1_780_000_000
SID = "5a1e7c2d-0b3f-4e6a-9c8d-7f1e2d3c4b5a"
HEAD_TEXT = "".join(f"def step_{i}(x):\n    return x + {i}\n\n" for i in range(1, 30))
OLD_LINE = "    return x + 7\n"
NEW_LINE = "    return x + 7 * SCALE\n"


def _iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _session(home: Path, repo: Path, edits: list[tuple[float, str, str]]) -> None:
    """One Claude Code session that made ``edits`` (time, old text, new text) to calc.py."""
    project = home / ".claude" / "projects" / ("-" + str(repo).strip("/").replace("/", "-"))
    project.mkdir(parents=True, exist_ok=True)
    base = {"sessionId": SID, "cwd": str(repo)}
    path = str(repo / "calc.py")
    records: list[dict[str, Any]] = [
        {**base, "type": "user", "timestamp": _iso(edits[0][0] - 5),
         "message": {"role": "user", "content": "Write the steps, then note the spec."}},
    ]  # fmt: skip
    for n, (at, old, new) in enumerate(edits):
        tool = (
            {"name": "Write", "input": {"file_path": path, "content": new}}
            if not old
            else {
                "name": "Edit",
                "input": {"file_path": path, "old_string": old, "new_string": new},
            }
        )
        records.append(
            {**base, "type": "assistant", "timestamp": _iso(at),
             "message": {"role": "assistant", "model": "claude-opus-4-1",
                         "content": [{"type": "tool_use", "id": f"t{n}", **tool}]}}
        )  # fmt: skip
        records.append(
            {**base, "type": "user", "timestamp": _iso(at + 1),
             "message": {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": f"t{n}", "content": "Done."}]}}
        )  # fmt: skip
    (project / f"{SID}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


@pytest.fixture
def world(repo: Path, tmp_path: Path) -> Path:
    """calc.py written by a session and committed; the session then changed line 20
    (``return x + 7``) and that was committed too: the line has two versions."""
    import os

    home = Path(os.environ["HOME"])
    first = HEAD_TEXT
    second = HEAD_TEXT.replace(OLD_LINE, NEW_LINE)
    _session(home, repo, [(T0 - 60, "", first), (T0 + 600, OLD_LINE, NEW_LINE)])
    (repo / "calc.py").write_text(first)
    git(repo, "add", "calc.py")
    git(repo, "commit", "-qm", "steps", env=commit_env(T0))
    (repo / "calc.py").write_text(second)
    git(repo, "commit", "-qam", "spec", env=commit_env(T0 + 900))
    return repo


def _cached_rows(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM blame_cache").fetchone()[0])


def test_a_second_why_reads_the_older_versions_from_the_cache(
    world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    monkeypatch.chdir(world)
    line = HEAD_TEXT.splitlines().index(OLD_LINE.rstrip("\n")) + 1
    assert run_deja("index", "-q").exit_code == 0
    db = Path(os.environ["DEJA_DB"])
    computed: list[str | None] = []
    real = blame._compute

    def counting(*args: Any, **kwargs: Any) -> Any:
        computed.append(args[0].version.commit)  # the Question's version
        return real(*args, **kwargs)

    monkeypatch.setattr(blame, "_compute", counting)
    first = run_deja("why", f"calc.py:{line}", "--json")
    assert first.exit_code == 0, first.output
    doc = orjson.loads(first.output)
    history = doc["history"]
    assert [v["session"] for v in history] == [SID, SID]  # both versions the session's
    older = history[0]["commit"]
    assert older in computed  # the first why matched the file at the older commit
    assert _cached_rows(db) >= 1  # and kept that answer
    computed.clear()
    second = run_deja("why", f"calc.py:{line}", "--json")
    assert second.exit_code == 0 and orjson.loads(second.output) == doc
    assert older not in computed  # read back, not matched again
