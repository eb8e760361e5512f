"""A real client: Debian's ``neovim`` (0.7, its built-in LSP client) headless,
configured as docs/editors.md says, shows deja's code lens and hover."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
from test_lsp import REQUEST, SID, world  # noqa: F401 (the fixture)

SCRIPT = Path(__file__).with_name("lsp_neovim.lua")


def nvim() -> str:
    found = shutil.which("nvim")
    if found is None:
        import pytest

        pytest.fail("neovim is not installed (apt-get install -y neovim): no real LSP client ran")
    return found


def test_neovim_shows_the_lens_and_the_hovers(world: dict[str, Any], tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "nvim.json"
    env = {
        **os.environ,
        "DEJA_NVIM_OUT": str(out),
        "DEJA_PYTHON": sys.executable,
        "DEJA_FILE": str(world["repo"] / "cart.py"),
        "DEJA_AGENT_LINE": "7",
        "DEJA_LSP_POLL": "0",
        "XDG_CONFIG_HOME": str(tmp_path / "nvim-config"),  # no user init.lua
    }
    proc = subprocess.run(
        [nvim(), "--headless", "--clean", "-n", "-c", f"luafile {SCRIPT}"],
        cwd=world["repo"],
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert out.is_file(), proc.stderr.decode(errors="replace")[-2000:]
    seen = orjson.loads(out.read_bytes())
    assert seen["error"] is None, seen["error"]
    assert seen["attached"] is True
    assert [lens["line"] for lens in seen["lenses"]] == [5, 5]
    assert seen["lenses"][0]["title"].startswith("agy 3f2a9c1e 2026-07-17")
    drawn = " ".join(v["text"] for v in seen["virtual"] if v["line"] == 5)
    assert "agy 3f2a9c1e" in drawn  # Neovim drew the lens as virtual text
    assert SID in seen["agent_hover"] and REQUEST in seen["agent_hover"]
    assert "person starts the cart" in seen["person_hover"]
