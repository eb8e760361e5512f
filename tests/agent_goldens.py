"""The golden sessions of the agents read since the plug-in registry (fixtures/<agent>/):
each fixture tree laid out as the agent keeps it, read from a copy whose files all
carry one modification time (several agents record no times of their own).

``python tests/agent_goldens.py AGENT`` rewrites ``fixtures/AGENT/expected.json``
from the reader (check the diff by eye: it is the test's answer).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "fixtures"
MTIME = 1_795_939_200  # 2026-11-29T08:00:00Z
# agent -> its fixture folder (the root its DEJA_<AGENT>_ROOT names): every agent with
# fixtures/<id>/expected.json but Antigravity (its fixtures are one folder per rule)
GOLDEN_AGENTS = {
    name: name
    for name in sorted(p.parent.name for p in FIXTURES.glob("*/expected.json"))
    if name != "antigravity"
}


def lay_out(agent: str, into: Path) -> Path:
    """A copy of the agent's fixture tree under ``into``, as the agent writes it."""
    root = into / GOLDEN_AGENTS[agent]
    shutil.copytree(
        FIXTURES / GOLDEN_AGENTS[agent], root, ignore=shutil.ignore_patterns("expected.json")
    )
    kept = root / "dot-specstory"
    if kept.is_dir():  # kept under another name: deja's repository carries no .specstory
        kept.rename(root / ".specstory")  # for whole runs in it to find (index/below.py)
    sql = root / "opencode.sql"
    if sql.exists():  # OpenCode's database, built from its SQL (no binary in the repository)
        conn = sqlite3.connect(root / "opencode.db")
        conn.executescript(sql.read_text("utf-8"))
        conn.commit()
        conn.close()
        sql.unlink()
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            os.utime(Path(dirpath) / name, (MTIME, MTIME))
    return root


def read_all(agent: str, into: Path) -> dict[str, Any]:
    """Every session of the agent's fixture, as JSON, keyed by session id (Aider's and
    SpecStory's ids hash where the file is: keyed ``aider``, and by the file's name);
    where the copy is reads ``<root>``.
    Times an agent writes without an offset (Aider's) are read as UTC: set ``TZ``."""
    from deja_blame.transcripts.registry import agent_named, discover, read_session

    root = lay_out(agent, into)
    found = discover([agent], env={agent_named(agent).root_env: str(root)})
    out: dict[str, Any] = {}
    for tf in found:
        doc = read_session(tf).to_json()
        doc["transcript"] = Path(doc["transcript"]).relative_to(root.resolve()).as_posix()
        key = "aider" if agent == "aider" else tf.session_id
        if agent == "specstory":  # one session per file, its id a hash of where it is
            key = tf.path.name
        if agent in ("aider", "specstory"):
            doc["session_id"] = key
        out[key] = _rooted(doc, str(root.resolve()))
    return out


def _rooted(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace(root, "<root>")
    if isinstance(value, list):
        return [_rooted(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _rooted(v, root) for k, v in value.items()}
    return value


if __name__ == "__main__":
    import tempfile
    import time

    import orjson

    os.environ["TZ"] = "UTC"
    time.tzset()
    for name in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            got = read_all(name, Path(tmp))
        (FIXTURES / GOLDEN_AGENTS[name] / "expected.json").write_bytes(
            orjson.dumps(got, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
        )
        print(name, len(got), "sessions")
