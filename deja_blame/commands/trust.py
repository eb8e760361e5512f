"""deja trust PATH: read a session a repository carries (or another user owns) as
the user's own. ``index.provenance`` says why deja does not by itself."""

from __future__ import annotations

import os
from pathlib import Path

import click

from deja_blame import statefile
from deja_blame.errors import DejaError
from deja_blame.index.provenance import trust_file, trusted_paths
from deja_blame.jsonout import print_json
from deja_blame.output import terminal


def run_trust(paths: list[Path], remove: bool, as_json: bool) -> int:
    where = trust_file()
    listed = [str(p) for p in trusted_paths({"HOME": os.environ.get("HOME", ""), **_config()})]
    for path in paths:
        text = os.path.abspath(path)
        if "\n" in text or "\r" in text:
            raise DejaError(f"a path with a line break cannot be trusted: {text!r}")
        if remove:
            listed = [p for p in listed if p != text]
        elif text not in listed:
            listed.append(text)
    if paths:
        _save(where, listed)
    if as_json:
        print_json({"trusted": listed, "file": str(where)})
        return 0
    if not listed:
        click.echo(f"nothing trusted beyond deja's own rules ({terminal(str(where))} is empty)")
    for p in listed:
        click.echo(terminal(p))
    if paths and not remove:
        click.echo("read at the next deja command (or now: deja index)", err=True)
    elif paths:
        click.echo(
            "what only this trust let in leaves the index at the next deja command"
            " (or now: deja index)",
            err=True,
        )
    return 0


def _config() -> dict[str, str]:
    """Only the variables that place the trust file (not DEJA_TRUSTED: the file is listed)."""
    return {k: os.environ[k] for k in ("XDG_CONFIG_HOME",) if os.environ.get(k)}


def _save(where: Path, listed: list[str]) -> None:
    if not statefile.ensure_dir(where.parent.parent) or not statefile.ensure_dir(where.parent):
        raise DejaError(f"cannot create {where.parent}")
    data = "".join(f"{p}\n" for p in listed).encode("utf-8", "surrogateescape")
    try:
        statefile.write_bytes(where, data, mode=0o600)
    except OSError as exc:
        raise DejaError(f"cannot write {where}: {exc.strerror or exc}") from exc
