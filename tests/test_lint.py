"""The project's own checks: ruff (lint and format) and mypy on the package."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO_ROOT


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=600
    )


def test_ruff_check() -> None:
    proc = run("ruff", "check", "deja_blame", "tests", "bench")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format() -> None:
    proc = run("ruff", "format", "--check", "deja_blame", "tests", "bench")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_on_the_package() -> None:
    proc = run("mypy", "deja_blame")
    assert proc.returncode == 0, proc.stdout + proc.stderr
