"""deja show SESSION: one indexed session."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import click

from deja_blame.errors import DejaError
from deja_blame.index.store import load_session, resolve_session_id
from deja_blame.jsonout import print_json
from deja_blame.models import UNKNOWN_AGENT
from deja_blame.output import agent_word, counted, shorten, style, terminal, use_colour, utc_second
from deja_blame.outputs.session_text import print_session
from deja_blame.session_ids import has_prefix


def run_show(conn: sqlite3.Connection, session: str, as_json: bool, full: bool = False) -> int:
    try:
        session_id = resolve_session_id(conn, session)
    except DejaError as exc:
        # not indexed here: a reviewer's clone may know it from the notes
        noted = noted_session(Path.cwd(), session)
        if noted is None:
            raise exc from None
        if as_json:
            print_json(noted)
        else:
            _print_noted(noted)
        return 0
    loaded = load_session(conn, session_id)
    if as_json:
        print_json(loaded.to_json())
    else:
        print_session(loaded, full=full)
    return 0


def noted_session(where: Path, prefix: str) -> dict[str, Any] | None:
    """What the notes of the repository holding ``where`` say of the one session
    matching ``prefix`` (a reviewer's clone knows it from them alone)."""
    if not prefix:
        return None
    found = _noted(where, prefix)
    if len(found) > 1:
        raise DejaError(f"session id {prefix!r} is ambiguous: {', '.join(sorted(found))}")
    if not found:
        return None
    (doc,) = found.values()
    return doc


def noted_sessions(where: Path) -> list[dict[str, Any]]:
    """Every session the notes of the repository holding ``where`` name, as
    ``noted_session`` gives each, the one that began last first."""
    docs = list(_noted(where, "").values())
    docs.sort(key=lambda d: (str(d.get("started_at") or ""), d["session_id"]), reverse=True)
    return docs


def _noted(where: Path, prefix: str) -> dict[str, dict[str, Any]]:
    """session id -> what the notes say of it, for the sessions whose id starts with
    ``prefix`` (every one: ""). Empty outside a repository or without notes."""
    from deja_blame.gitutil import open_repository
    from deja_blame.notes.lookup import read_note
    from deja_blame.notes.store import note_blob_map, ref_target

    try:
        repo = open_repository(where)
    except DejaError:
        return {}
    found: dict[str, dict[str, Any]] = {}
    for commit in sorted(note_blob_map(repo, ref_target(repo))):
        note = read_note(repo, commit)
        if note is None:
            continue
        for path, per in note.files.items():
            for sid, ranges in per.items():
                if not has_prefix(sid, prefix):
                    continue
                doc = found.setdefault(
                    sid, {"session_id": sid, **note.sessions.get(sid, {}), "commits": {}}
                )
                lines = sum(int(r[1]) - int(r[0]) + 1 for r in ranges)
                doc["commits"].setdefault(commit, {})[path] = {"ranges": ranges, "lines": lines}
    for doc in found.values():
        doc["from_notes"] = True
        doc["commits"] = [{"commit": c, "files": f} for c, f in sorted(doc["commits"].items())]
    return found


def _print_noted(doc: dict[str, Any]) -> None:
    c = use_colour()
    echo = click.echo
    echo(
        style(f"session {terminal(doc['session_id'])}", c, bold=True)
        + f"  ({agent_word(str(doc.get('agent') or UNKNOWN_AGENT))}, from this repository's notes:"
        " its transcript is not on this machine)"
    )
    echo(f"project     {terminal(str(doc.get('project') or '-'))}")
    echo(f"started     {terminal(utc_second(doc.get('started_at')) or '?')}")
    if doc.get("first_prompt"):
        echo(f"request     {shorten(str(doc['first_prompt']), 100)}")
    echo("\n" + style("Lines it wrote, by commit", c, bold=True))
    for item in doc["commits"]:
        for path, info in sorted(item["files"].items()):
            spans = ", ".join(
                f"{r[0]}-{r[1]}" if r[0] != r[1] else f"{r[0]}" for r in info["ranges"][:8]
            )
            echo(
                f"  {item['commit'][:8]}  {terminal(path)}  {counted(info['lines'], 'line')} ({spans})"
            )
