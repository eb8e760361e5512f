"""What the in-process blame checks share (``plain_blame_check.py``,
``copy_blame_check.py``): git's own blame of a question, its answer parsed and the
CPU of its process, in an environment without the user's git config."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from deja_blame.attribution.facts.git_blame import BlameLine, parse_porcelain  # noqa: E402


def sealed_env(prefix: str) -> dict[str, str]:
    """This process's environment without ``GIT_*`` variables, with a fresh HOME and no
    system config (what git blames with here is the repository alone), set for this
    process too (the module under test runs git through it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=tempfile.mkdtemp(prefix=prefix), GIT_CONFIG_NOSYSTEM="1")
    os.environ.clear()
    os.environ.update(env)
    return env


def git_blame(
    repo: str, args: list[str], env: dict[str, str]
) -> tuple[list[BlameLine] | None, float]:
    """``git blame --porcelain ARGS``'s answer as ``parse_porcelain`` gives it (None when
    git refused the question) and the CPU seconds of its process."""
    before = os.times()
    proc = subprocess.run(
        ["git", "-C", repo, "blame", "--porcelain", *args], capture_output=True, env=env
    )
    after = os.times()
    cpu = after.children_user + after.children_system
    cpu -= before.children_user + before.children_system
    return (parse_porcelain(proc.stdout) if proc.returncode == 0 else None), cpu
