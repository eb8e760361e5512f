"""The VS Code extension's own tests (editors/vscode/test, node's test runner):
extension.js with VS Code's API recorded and a real ``deja lsp`` behind it, on a
file two agent sessions wrote. VS Code itself cannot be had here (no download of
its build), so @vscode/test-electron is not used; node is Debian's ``nodejs``
(``npm`` brings it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from conftest import REPO_ROOT
from test_blame import AGENT_BLOCK, T0, Session, commit_all
from test_lsp import PERSON, SID

OTHER = "b81d4f60-aaaa-4bbb-8ccc-000000000002"
SECOND_BLOCK = ["def count(cart):", "    return sum(item.qty for item in cart)"]
TESTS = REPO_ROOT / "editors" / "vscode" / "test"


def test_the_extension_against_a_real_deja_lsp(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed (apt-get install -y nodejs): the extension's tests")
    root = tmp_path / "agroot"
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(root))
    (repo / "cart.py").write_text(PERSON)
    commit_all(repo, "person starts the cart", T0 - 3600)
    first = Session(root, SID)
    first.user("Add a total() helper to cart.py", T0)
    first.replace(repo / "cart.py", [], AGENT_BLOCK, T0 + 60, start=6)
    text = PERSON + "\n".join(AGENT_BLOCK) + "\n"
    (repo / "cart.py").write_text(text)
    commit_all(repo, "add total", T0 + 600)
    second = Session(root, OTHER)
    second.user("And a count() helper", T0 + 900)
    start = len(text.splitlines()) + 1
    second.replace(repo / "cart.py", [], SECOND_BLOCK, T0 + 960, start=start)
    (repo / "cart.py").write_text(text + "\n".join(SECOND_BLOCK) + "\n")
    commit_all(repo, "add count", T0 + 1200)
    n = len(AGENT_BLOCK)
    runs = [[5, 5 + n - 1, SID], [start - 1, start - 1 + len(SECOND_BLOCK) - 1, OTHER]]
    deja_exe = Path(sys.executable).parent / "deja"
    proc = subprocess.run(
        [node, "--test", "--test-concurrency=1", str(TESTS / "extension.test.js")],
        cwd=repo,
        env={
            **os.environ,
            "DEJA_EXE": str(deja_exe),
            "DEJA_FILE": str(repo / "cart.py"),
            "DEJA_EXPECT": orjson.dumps({"runs": runs}).decode(),
            "DEJA_LSP_POLL": "0",
        },
        capture_output=True,
        timeout=300,
    )
    out = proc.stdout.decode(errors="replace")
    assert proc.returncode == 0, out[-4000:] + proc.stderr.decode(errors="replace")[-2000:]
    assert "# pass 4" in out and "# fail 0" in out, out
