"""``deja sessions`` lists the index and reads no transcript: it says when new ones
wait for ``deja index`` (fixes 8's leftover: a session just ended was missing from
the list with no word why)."""

from __future__ import annotations

import time
from pathlib import Path

import orjson
from conftest import deja, deja_json

SID_A = "a0a0a0a0-1111-4000-8000-00000000a0a0"
SID_B = "b0b0b0b0-1111-4000-8000-00000000b0b0"


def _session(home: Path, repo: Path, sid: str, text: str) -> Path:
    at = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - 600))
    record = {"sessionId": sid, "cwd": str(repo), "isSidechain": False, "type": "user",
              "uuid": "u0", "timestamp": at, "message": {"role": "user", "content": text}}  # fmt: skip
    folder = home / ".claude" / "projects" / "-repo"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{sid}.jsonl"
    with open(path, "ab") as fh:
        fh.write(orjson.dumps(record) + b"\n")
    return path


def test_sessions_says_how_many_transcripts_wait_for_deja_index(repo: Path) -> None:
    env = {"DEJA_ANTIGRAVITY_ROOT": ""}
    _session(Path.home(), repo, SID_A, "first")
    deja("index", "-q", cwd=repo, env=env)
    listed = deja("sessions", cwd=repo, env=env)
    assert b"not yet indexed" not in listed.stderr
    assert deja_json("sessions", "--json", cwd=repo, env=env)["not_yet_indexed"] == 0

    _session(Path.home(), repo, SID_B, "a new session")  # new
    _session(Path.home(), repo, SID_A, "and more")  # grown
    listed = deja("sessions", cwd=repo, env=env)
    assert b"b0b0b0b0" not in listed.stdout  # the list reads nothing
    said = listed.stderr.decode()
    assert "2 new or changed transcripts not yet indexed" in said, said
    assert "deja index reads them" in said
    assert deja_json("sessions", "--json", cwd=repo, env=env)["not_yet_indexed"] == 2

    deja("index", "-q", cwd=repo, env=env)
    listed = deja("sessions", cwd=repo, env=env)
    assert b"b0b0b0b0" in listed.stdout and b"not yet indexed" not in listed.stderr
