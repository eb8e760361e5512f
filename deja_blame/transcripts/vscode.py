"""Where VS Code and its forks keep a user's data: ``<config>/<Product>/User``.

``<config>`` is ``$XDG_CONFIG_HOME`` (else ``~/.config``) on Linux, ``~/Library/Application
Support`` on macOS and ``%APPDATA%`` on Windows; each is looked at on every system, since
a root that is not there costs one ``stat``. A remote window (SSH, a container, a
codespace) keeps the same folder under the server's data folder on the remote machine.
Copilot's chats live in ``User/workspaceStorage``, the extensions' own stores in
``User/globalStorage/<publisher.extension>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

# the VS Code builds and forks that run VS Code's extensions
EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
# the ``User`` folder a remote window's server keeps under the remote home
REMOTE_DATA = (".vscode-server", ".vscode-server-insiders", ".vscode-remote", ".cursor-server")
LOCATION_ENV = ("XDG_CONFIG_HOME", "APPDATA")


def config_folders(env: Mapping[str, str], home: Path) -> list[Path]:
    """Each system's folder of applications' settings, Linux's first."""
    configs = [Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"]
    configs.append(home / "Library" / "Application Support")
    if env.get("APPDATA"):
        configs.append(Path(env["APPDATA"]))
    return configs


def user_folders(
    env: Mapping[str, str], home: Path, products: Iterable[str] = EDITORS, remote: bool = True
) -> list[Path]:
    """Every ``User`` folder of ``products`` (and of remote windows' servers)."""
    folders = [c / product / "User" for c in config_folders(env, home) for product in products]
    if remote:
        folders += [home / server / "data" / "User" for server in REMOTE_DATA]
    return folders


def extension_stores(env: Mapping[str, str], home: Path, extension: str) -> list[Path]:
    """Every editor's store of one extension: ``User/globalStorage/<extension>``."""
    return [user / "globalStorage" / extension for user in user_folders(env, home)]
