"""The sessions the user told deja to forget (``deja forget``), kept in a file of
their own beside ``deja trust``'s: an index forgets with its rows, so ``deja index
--rebuild`` (or another ``--db``) read them again. Every index run leaves the
sessions listed here out, and drops any it holds, until ``deja forget --undo``.
One session id a line; the file is the user's alone (0600)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import deja_blame.statefile as statefile
from deja_blame.errors import DejaError
from deja_blame.session_ids import has_prefix

MAX_FILE = 1 << 20


def forgotten_file(env: Mapping[str, str] | None = None) -> Path:
    """Where ``deja forget`` keeps the sessions it forgot."""
    from deja_blame.index.provenance import trust_file

    return trust_file(env).with_name("forgotten")


def kept_forgotten(env: Mapping[str, str] | None = None) -> list[str]:
    """The session ids the user forgot, in the order they were forgotten."""
    text = statefile.read_text(forgotten_file(env), MAX_FILE) or ""
    return list(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))


def save_forgotten(ids: list[str], env: Mapping[str, str] | None = None) -> Path:
    """Replace the list with ``ids``; the file's path. DejaError when it cannot be written."""
    where = forgotten_file(env)
    if not statefile.ensure_dir(where.parent.parent) or not statefile.ensure_dir(where.parent):
        raise DejaError(f"cannot create {where.parent}")
    if any("\n" in sid or "\r" in sid for sid in ids):
        raise DejaError("a session id with a line break cannot be kept")
    data = "".join(f"{sid}\n" for sid in ids).encode("utf-8", "surrogateescape")
    try:
        statefile.write_bytes(where, data, mode=0o600)
    except OSError as exc:
        raise DejaError(f"cannot write {where}: {exc.strerror or exc}") from exc
    return where


def one_of(ids: list[str], prefix: str) -> str | None:
    """The one id of ``ids`` that is ``prefix`` or starts with it; None for none;
    DejaError when several do."""
    if prefix in ids:
        return prefix
    found = [sid for sid in ids if prefix and has_prefix(sid, prefix)]
    if len(found) > 1:
        raise DejaError(
            f"session id {prefix!r} is ambiguous among the forgotten: {', '.join(found)}"
        )
    return found[0] if found else None
