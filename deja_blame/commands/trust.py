"""deja trust PATH: read a session a repository carries (or another user owns) as
the user's own; ``--list`` also shows, and ``--forget PATH`` takes back, the histories
deja remembers reading as the user's own before they committed them
(``index.provenance``'s own-memory). ``index.provenance`` says why deja does not
read them by itself."""

from __future__ import annotations

import os
from pathlib import Path

import click

from deja_blame import statefile
from deja_blame.errors import DejaError
from deja_blame.index.provenance import (
    forget_own,
    own_file,
    read_as_own,
    settled,
    trust_file,
    trusted_paths,
)
from deja_blame.jsonout import print_json
from deja_blame.output import terminal


def run_trust(
    paths: list[Path], remove: bool, as_json: bool, forget: bool = False, everything: bool = False
) -> int:
    if forget:
        return _run_forget(paths, as_json)
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
        print_json({"trusted": listed, "file": str(where), **_own_json()})
        return 0
    if everything:
        click.echo(f"trusted ({terminal(str(where))}):" if listed else "trusted: nothing")
        for p in listed:
            click.echo(f"  {terminal(p)}")
        _echo_own()
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


def _own_json() -> dict[str, object]:
    """The own-memory, for ``--json``: each history with the bytes checked against it."""
    own = read_as_own()
    return {
        "own": [
            {"path": p, "size": r.size, "checked": settled(r.size), "sha256": r.sha256}
            for p, r in sorted(own.items())
        ],
        "own_file": str(own_file()),
    }


def _echo_own() -> None:
    own = read_as_own()
    if not own:
        click.echo("read as yours before you committed them: nothing")
        return
    click.echo(
        f"read as yours before you committed them ({terminal(str(own_file()))};"
        " deja trust --forget PATH takes one back):"
    )
    for p, r in sorted(own.items()):
        click.echo(f"  {terminal(p)} (its first {settled(r.size):,} bytes)")


def _run_forget(paths: list[Path], as_json: bool) -> int:
    """``deja trust --forget PATH...``: the remembered histories at or under each PATH
    are no longer read as the user's own once tracked."""
    if not paths:
        raise DejaError("deja trust --forget needs a PATH (deja trust --list shows them)")
    try:
        gone = forget_own(paths)
    except OSError as exc:
        raise DejaError(str(exc)) from exc
    if as_json:
        print_json({"forgotten": gone, "own_file": str(own_file())})
        return 0
    for p in gone:
        click.echo(f"forgot {terminal(p)}")
    if not gone:
        named = ", ".join(terminal(os.path.abspath(p)) for p in paths)
        click.echo(f"nothing remembered at {named} (deja trust --list shows it all)", err=True)
        return 0
    click.echo(
        "committed, it is left out like a clone's from the next deja command (or now:"
        " deja index); untracked, it is yours again when next read",
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
