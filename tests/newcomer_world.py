"""The README's world: what a newcomer has after a week with deja, built in a temp dir.

A HOME with transcripts where each agent keeps them (Antigravity session
``3f2a9c1e...``, Claude Code session ``0b7c6a52...``, a Codex session), and the
repository ``~/src/shop`` the README's examples name: ``src/app.py`` (100 lines;
an Antigravity session rewrote lines 40-60 before ``v1.2``), ``src/cart.py``
(Claude Code added ``refund`` at lines 43-46), tags ``v1.0`` and ``v1.2``, the
remotes ``origin`` and ``upstream`` (bare), ``main`` tracking ``origin/main``
two commits behind, and a ``feature`` branch. ``run_line`` runs one command line
as a person types it, in bash, with fake ``agy``/``claude``/``codex``/``gemini``
on PATH (handoff starts them).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from antigravity_writer import TranscriptWriter
from conftest import commit_env, git

T0 = 1_784_278_800  # 2026-07-17T09:00:00Z
AGY_SID = "3f2a9c1e-5d1b-4c8e-9a70-2b6f1e0c4d11"
CLAUDE_SID = "0b7c6a52-8e3d-4f19-b2a4-7c9d0e1f2a33"
CODEX_SID = "c0dec0de-1111-4000-8000-000000000004"

APP_BEFORE = "".join(f"value_{i} = compute({i})\n" for i in range(1, 101))
AGY_BLOCK = "".join(f"value_{i} = compute_with_tax({i}, TAX_RATE)\n" for i in range(40, 61))
APP_V12 = APP_BEFORE.replace(
    "".join(f"value_{i} = compute({i})\n" for i in range(40, 61)), AGY_BLOCK
)
CART = "".join(f"item_{i} = Item({i}, price={i * 3})\n" for i in range(1, 43))
REFUND = (
    "def refund(order):\n"
    "    amount = order.total - order.discount\n"
    "    order.status = 'refunded'\n"
    "    return round(amount, 2)\n"
)


def iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


@dataclass
class World:
    tmp: Path
    home: Path
    repo: Path
    bin: Path
    env: dict[str, str]

    def run_line(self, line: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """One command line in bash (pipes, ``~``, globs and redirections as typed)."""
        return subprocess.run(
            ["bash", "-c", line],
            cwd=cwd or self.repo,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
        )


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _claude(home: Path, repo: Path, at: float) -> None:
    project = home / ".claude" / "projects" / ("-" + str(repo).strip("/").replace("/", "-"))
    project.mkdir(parents=True)
    path = str(repo / "src" / "cart.py")
    last = CART.splitlines()[-1] + "\n"
    new = last + "\n" + REFUND
    patch_lines = [" " + last.rstrip("\n"), *["+" + ln for ln in ("\n" + REFUND).splitlines()]]
    base = {"sessionId": CLAUDE_SID, "cwd": str(repo)}
    records: list[dict[str, Any]] = [
        {**base, "type": "user", "timestamp": iso(at),
         "message": {"role": "user", "content": "Add a refund function to the cart."}},
        {**base, "type": "assistant", "timestamp": iso(at + 5),
         "message": {"role": "assistant", "model": "claude-opus-4-1", "content": [
             {"type": "tool_use", "id": "t1", "name": "Edit",
              "input": {"file_path": path, "old_string": last, "new_string": new}}]}},
        {**base, "type": "user", "timestamp": iso(at + 6),
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "t1", "content": "The file has been updated."}]},
         "toolUseResult": {"filePath": path, "userModified": False, "structuredPatch": [
             {"oldStart": 42, "oldLines": 1, "newStart": 42, "newLines": 6, "lines": patch_lines}]}},
        {**base, "type": "assistant", "timestamp": iso(at + 9),
         "message": {"role": "assistant", "model": "claude-opus-4-1", "content": [
             {"type": "text", "text": "Added refund(); it rounds to cents."}]}},
    ]  # fmt: skip
    _write(project / f"{CLAUDE_SID}.jsonl", "".join(json.dumps(r) + "\n" for r in records))


def _codex(home: Path, repo: Path, at: float) -> None:
    day = home / ".codex" / "sessions" / "2026" / "12" / "01"
    records = [
        {"timestamp": iso(at), "type": "session_meta", "payload": {"id": CODEX_SID, "cwd": str(repo)}},
        {"timestamp": iso(at), "type": "turn_context", "payload": {"cwd": str(repo), "model": "gpt-5-codex"}},
        {"timestamp": iso(at + 1), "type": "response_item", "payload": {
            "type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "Explain the cart module."}]}},
    ]  # fmt: skip
    _write(
        day / f"rollout-2026-12-01T09-00-00-{CODEX_SID}.jsonl",
        "".join(json.dumps(r) + "\n" for r in records),
    )


def _fake_agents(bin_dir: Path) -> None:
    bin_dir.mkdir()
    for name in ("agy", "claude", "codex", "gemini"):
        exe = bin_dir / name
        exe.write_text("#!/bin/sh\nexit 0\n")
        exe.chmod(0o755)


def build_world(tmp: Path) -> World:
    home = tmp / "home"
    repo = home / "src" / "shop"
    (repo / "src").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "commit.gpgsign", "false")
    _write(repo / "README.md", "# shop\n")
    _write(repo / "src" / "app.py", APP_BEFORE)
    _write(repo / "src" / "cart.py", CART)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "shop: first version", env=commit_env(T0))
    git(repo, "tag", "v1.0")

    agy = TranscriptWriter(home / ".gemini" / "antigravity", AGY_SID, start=T0 + 3600)
    agy.register_workspace(str(repo), kind="cli", title="Tax in the app")
    agy.user("Apply the tax rate to values 40 to 60.", cwd=str(repo))
    old = "".join(f"value_{i} = compute({i})\n" for i in range(40, 61))
    agy.replace(str(repo / "src" / "app.py"), old, AGY_BLOCK, current=APP_BEFORE)
    agy.run_command("python -m pytest -q", exit_code=0, cwd=str(repo))
    agy.assistant("Values 40 to 60 now include the tax.")
    _write(repo / "src" / "app.py", APP_V12)
    git(repo, "commit", "-qam", "app: tax", env=commit_env(T0 + 7200))
    git(repo, "tag", "v1.2")

    _claude(home, repo, T0 + 10_000)
    _write(repo / "src" / "cart.py", CART + "\n" + REFUND)
    git(repo, "commit", "-qam", "cart: refund", env=commit_env(T0 + 12_000))
    _codex(home, repo, T0 + 20_000)
    # an Amp store copied elsewhere, as `deja index --agent amp --root ~/backup/amp` reads it
    fixtures = Path(__file__).resolve().parent.parent / "fixtures" / "amp" / "threads"
    shutil.copytree(fixtures, home / "backup" / "amp")
    # and Claude Code's projects, as `deja index --root ~/backup/claude-projects` reads them
    shutil.copytree(home / ".claude" / "projects", home / "backup" / "claude-projects")
    for n in range(3):
        _write(repo / "docs" / f"note{n}.md", f"note {n}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"docs: note {n}", env=commit_env(T0 + 13_000 + n))

    for remote in ("origin", "upstream"):
        git(tmp, "init", "-q", "--bare", str(tmp / f"{remote}.git"))
        git(repo, "remote", "add", remote, str(tmp / f"{remote}.git"))
        git(repo, "push", "-q", remote, "main")
    git(repo, "branch", "-q", "--set-upstream-to=origin/main")
    git(repo, "checkout", "-q", "-b", "feature")
    _write(repo / "src" / "feature.py", "feature = True\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "feature", env=commit_env(T0 + 14_000))
    git(repo, "checkout", "-q", "main")
    for n in range(2):  # main is two commits ahead of origin/main
        _write(repo / "src" / f"extra{n}.py", f"extra = {n}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"extra {n}", env=commit_env(T0 + 15_000 + n))

    bin_dir = tmp / "bin"
    _fake_agents(bin_dir)
    runtime = tmp / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEJA_")}
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_RUNTIME_DIR=str(runtime),  # the README's `deja server start` puts its socket here
        # this interpreter's deja first, then the fake agents
        PATH=os.pathsep.join([str(Path(sys.executable).parent), str(bin_dir), env["PATH"]]),
        COLUMNS="120",
    )
    return World(tmp=tmp, home=home, repo=repo, bin=bin_dir, env=env)
