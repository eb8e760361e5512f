"""A file with no record its agent's reader knows is no session: random bytes saved as
``~/.claude/projects/<dir>/junk.jsonl`` were listed as ``junk claude-code 0 0 -``
("1 session added") and counted by doctor. It is said as skipped, its stat kept (not
read again until it changes), and read as a session once it holds real records."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import orjson
import pytest
from agent_goldens import GOLDEN_AGENTS, lay_out
from conftest import deja
from test_sessions_from_anywhere import FILES, claude_code

# 82 KB: past where Gemini CLI looks for a session's metadata before calling it one
JUNK = bytes(range(256)) * 320 + b"\n\x00\xff{not json\n" + os.urandom(512)


def _sessions(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {r[0] for r in conn.execute("SELECT session_id FROM sessions")}


def test_a_junk_jsonl_is_no_session_until_it_holds_records(tmp_path: Path) -> None:
    home = tmp_path / "home"  # the fresh HOME conftest gives every test
    env = {"DEJA_ANTIGRAVITY_ROOT": ""}
    folder = home / ".claude" / "projects" / "-work-shop"
    folder.mkdir(parents=True)
    junk = folder / "junk.jsonl"
    junk.write_bytes(JUNK)
    first = orjson.loads(deja("index", "--json", env=env).stdout)
    assert first["added"] == 0 and first["not_sessions"] == [str(junk)]
    assert _sessions(tmp_path / "index.db") == set()
    assert "junk" not in deja("sessions", env=env).stdout.decode()
    said = deja("index", env=env).stderr.decode() + deja("index", env=env).stdout.decode()
    assert "1 file with no session in it" in said
    doctor = deja("doctor", "--json", env=env, check=False).stdout
    fresh = [c for c in orjson.loads(doctor)["checks"] if c["name"] == "index up to date"]
    assert fresh and fresh[0]["ok"], fresh
    # the same file again: not read (its stat is kept), still said
    again = orjson.loads(deja("index", "--json", env=env).stdout)
    assert again["not_sessions"] == [str(junk)] and again["updated"] == 0
    # it gets real records: read, from the start
    claude_code(home, "/work/shop", FILES)
    real = next(folder.glob("*-*.jsonl"))
    junk.write_bytes(real.read_bytes())
    real.unlink()
    got = orjson.loads(deja("index", "--json", env=env).stdout)
    assert got["added"] == 1 and got["not_sessions"] == []
    assert _sessions(tmp_path / "index.db") == {"junk"}


@pytest.mark.parametrize("agent", [*sorted(GOLDEN_AGENTS), "antigravity"])
def test_no_reader_makes_a_session_of_junk(tmp_path: Path, agent: str) -> None:
    """Each of the agents' readers: one of its transcripts overwritten with random
    bytes is no session; the others of its store are read as before."""
    from deja_blame.transcripts.registry import agent_named, discover

    if agent == "antigravity":
        from test_blame import T0, Session

        root = tmp_path / "antigravity"
        s = Session(root, "aaaa0000-0000-4000-8000-000000000001")
        s.user("Add a total", T0)
        s.write(tmp_path / "shop" / "cart.py", "x = 1\n", T0 + 10)
        Session(root, "aaaa0000-0000-4000-8000-000000000002").user("Something else", T0)
    else:
        root = lay_out(agent, tmp_path / "store")
    found = sorted(
        discover([agent], env={agent_named(agent).root_env: str(root)}),
        key=lambda tf: tf.session_id,
    )
    assert found
    # (Gemini CLI's last one has a .json of its own too, which would be read instead)
    victim = found[0] if agent == "gemini-cli" else found[-1]
    for path in (victim.path, *victim.parts):
        Path(path).write_bytes(JUNK)
    proc = deja("index", "--agent", agent, "--root", str(root), "--json", check=False)
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    held = _sessions(tmp_path / "index.db")
    with sqlite3.connect(tmp_path / "index.db") as conn:
        read = {r[0] for r in conn.execute("SELECT transcript FROM sessions")}
    assert str(victim.path) not in read, (agent, doc)
    # said: no session in it, a problem, or a document cut short (read at the next run)
    said = str(victim.path) in doc["not_sessions"] or doc["problems"] or doc["incomplete"]
    assert said, (agent, doc)
    others = {tf.session_id for tf in found if tf.path != victim.path}
    assert others <= held, (agent, others - held, doc)
