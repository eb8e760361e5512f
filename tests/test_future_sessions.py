"""A session whose times are after this machine's clock gets no commit made before
them; ``deja sessions`` says so (newcomer 8: it was listed with no remark, and
``deja why`` said "not written by any indexed session")."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import orjson
from conftest import deja

SID = "f0f0f0f0-1111-4000-8000-00000000f0f0"


def _iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _session(home: Path, repo: Path, at: float) -> None:
    base = {"sessionId": SID, "cwd": str(repo), "isSidechain": False}
    record = {**base, "type": "user", "uuid": "u0", "timestamp": _iso(at),
              "message": {"role": "user", "content": "write it"}}  # fmt: skip
    folder = home / ".claude" / "projects" / "-repo"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{SID}.jsonl").write_bytes(orjson.dumps(record) + b"\n")


def test_a_session_in_the_future_is_said_to_be(tmp_path: Path, repo: Path) -> None:
    env = {"DEJA_ANTIGRAVITY_ROOT": ""}
    _session(Path.home(), repo, time.time() + 86_400)
    deja("index", "-q", cwd=repo, env=env)
    said = deja("sessions", cwd=repo, env=env).stderr.decode()
    assert "1 session (f0f0f0f0) started after this machine's clock" in said, said
    # the control: the same session an hour ago is no remark
    _session(Path.home(), repo, time.time() - 3600)
    deja("index", "-q", cwd=repo, env=env)
    said = deja("sessions", cwd=repo, env=env).stderr.decode()
    assert "clock" not in said, said
