"""A session's writes outside the repository are not the repository's files.

A session in this clone wrote ``/etc/outside.py`` and ``REPO/../dotdot.py``; a
person later commits ``etc/outside.py`` and ``dotdot.py`` with the same text. A
match by path suffix stands for another clone, and neither the file system's top
nor a folder holding this repository is one: blame, stats and the note give those
lines to the person. A worktree made inside the main checkout (``.claude/worktrees``)
still finds the sessions that worked in the main checkout.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import orjson
from conftest import commit_env, deja, deja_json, git

from deja_blame.index.clone_paths import stands_for

T0 = 1_784_278_800  # 2026-07-17T09:00:00Z
SID = "0a1b2c3d-4444-4000-8000-00000000a0e5"
APP = "def total(prices):\n    return sum(price_of(p) for p in prices)\n"
OUTSIDE = "OUTSIDE_SETTING = compute_outside_setting(3)\n"
DOTDOT = "DOTDOT_SETTING = compute_dotdot_setting(2)\n"


def _iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _claude_writes(home: Path, cwd: str, writes: dict[str, str]) -> None:
    """A Claude Code session in ``cwd`` writing each absolute path of ``writes``."""
    base = {"sessionId": SID, "cwd": cwd, "isSidechain": False}
    records: list[dict[str, Any]] = [
        {**base, "type": "user", "uuid": "u0", "timestamp": _iso(T0),
         "message": {"role": "user", "content": "Write the settings."}},
    ]  # fmt: skip
    for k, (path, content) in enumerate(writes.items()):
        at = T0 + 10 * (k + 1)
        records += [
            {**base, "type": "assistant", "uuid": f"a{k}", "timestamp": _iso(at),
             "message": {"role": "assistant", "model": "claude-opus-4-5", "content": [
                 {"type": "tool_use", "id": f"t{k}", "name": "Write",
                  "input": {"file_path": path, "content": content}}]}},
            {**base, "type": "user", "uuid": f"r{k}", "timestamp": _iso(at + 1),
             "message": {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": f"t{k}",
                  "content": f"File created successfully at: {path}"}]},
             "toolUseResult": {"type": "create", "filePath": path, "content": content,
                               "structuredPatch": []}},
        ]  # fmt: skip
    folder = home / ".claude" / "projects" / ("-" + cwd.strip("/").replace("/", "-"))
    folder.mkdir(parents=True)
    (folder / f"{SID}.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))


def _commit(repo: Path, files: dict[str, str], at: int, who: str = "Pat") -> None:
    for rel, content in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(content)
    git(repo, "add", "-A")
    env = {**commit_env(at), "GIT_AUTHOR_NAME": who, "GIT_COMMITTER_NAME": who}
    git(repo, "commit", "-qm", f"{who}'s files", env=env)


def _session_lines(repo: Path, rel: str) -> int:
    doc = deja_json("blame", "--json", "--", rel, cwd=repo, env={"DEJA_ANTIGRAVITY_ROOT": ""})
    return sum(1 for ln in doc["lines"] if ln["session"] == SID)


def test_writes_outside_the_repository_stay_the_person_s(tmp_path: Path, repo: Path) -> None:
    root = str(repo)
    _claude_writes(
        tmp_path / "home",
        root,
        {f"{root}/app.py": APP, "/etc/outside.py": OUTSIDE, f"{root}/../dotdot.py": DOTDOT},
    )
    _commit(repo, {"app.py": APP}, T0 + 600)
    _commit(repo, {"etc/outside.py": OUTSIDE, "dotdot.py": DOTDOT}, T0 + 86_400, who="Eve")
    assert _session_lines(repo, "app.py") == 2
    assert _session_lines(repo, "etc/outside.py") == 0
    assert _session_lines(repo, "dotdot.py") == 0
    stats = deja_json("stats", "--json", cwd=repo, env={"DEJA_ANTIGRAVITY_ROOT": ""})
    assert stats["attributed_lines"] == 2
    deja("annotate", "--all", cwd=repo, env={"DEJA_ANTIGRAVITY_ROOT": ""})
    note = orjson.loads(git(repo, "notes", "--ref", "deja", "show", "HEAD~1"))
    assert list(note["files"]) == ["app.py"]
    noted = git(repo, "notes", "--ref", "deja", "list")
    assert git(repo, "rev-parse", "HEAD").strip() not in noted  # Eve's commit: no note


def test_a_worktree_inside_the_main_checkout_finds_its_sessions(tmp_path: Path, repo: Path) -> None:
    _claude_writes(tmp_path / "home", str(repo), {f"{repo}/app.py": APP})
    _commit(repo, {"app.py": APP}, T0 + 600)
    inner = repo / ".claude" / "worktrees" / "w"
    git(repo, "worktree", "add", "-q", "--detach", str(inner))
    assert _session_lines(inner, "app.py") == 2


def test_which_written_paths_stand_for_a_repository_file(tmp_path: Path) -> None:
    root = f"{tmp_path}/work/shop"
    assert stands_for(f"{root}/src/app.py", "src/app.py", root) is True
    assert stands_for(f"{root}/./src/app.py", "src/app.py", root) is True
    assert stands_for(f"{root}/lib/../src/app.py", "src/app.py", root) is True
    assert stands_for("/home/alice/shop/src/app.py", "src/app.py", root) is False
    assert stands_for("C:/Users/bob/shop/src/app.py", "src/app.py", root) is False
    assert stands_for("/home/alice/shop/src/app.py", "src/other.py", root) is None
    # the file system's top and a drive are no clone
    assert stands_for("/etc/outside.py", "etc/outside.py", root) is None
    assert stands_for("C:/outside.py", "outside.py", root) is None
    # a folder holding this repository: only where it is a checkout itself
    assert stands_for(f"{root}/../dotdot.py", "dotdot.py", root) is None
    assert stands_for(f"{tmp_path}/work/notes.py", "notes.py", root) is None
    (tmp_path / "work" / ".git").mkdir(parents=True)
    assert stands_for(f"{tmp_path}/work/notes.py", "notes.py", root) is False
