"""Rows for a warehouse (``deja export --format rows``): one per commit x file x session.

Each row says how many lines one commit added to one file for one session (its
agent and model), and how many of them are still there at the tip; the lines
no session wrote are one more row with ``session`` null (people's), so a
warehouse computes shares without anything else; a commit that added no line
has one row with no path and zeros (so commits are counted). The attribution is the
report's (``report.collect.attribute``: the commit's note, else the index, and
git-ai's note); what survives is ``git blame`` at the tip, as the report counts
it. The columns are ``COLUMNS``, in that order; docs/contract.md documents them
and they only ever grow. The same repository exported twice gives the same rows.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pygit2

from deja_blame.errors import DejaError
from deja_blame.gitutil import run_git, workdir
from deja_blame.index import queries as Q
from deja_blame.models import UNKNOWN_AGENT
from deja_blame.transcripts.text import format_time

SCHEMA = "deja.rows/1"
# name -> type (DuckDB/BigQuery-ish, for the docs and the Parquet schema)
COLUMNS: dict[str, str] = {
    "schema": "string",
    "repository": "string",
    "repository_root": "string",
    "tip": "string",
    "commit": "string",
    "commit_time": "timestamp",
    "author_time": "timestamp",
    "month": "string",
    "author": "string",
    "author_email": "string",
    "path": "string",
    "session": "string",
    "agent": "string",
    "model": "string",
    "session_started_at": "timestamp",
    "attribution": "string",
    "lines_added": "int64",
    "lines_surviving": "int64",
}
_NOTHING_ADDED: dict[str, Any] = {
    "path": None,
    "session": None,
    "agent": None,
    "model": None,
    "session_started_at": None,
    "attribution": None,
    "lines_added": 0,
    "lines_surviving": 0,
}
_CREDENTIALS = re.compile(r"^([a-z][a-z0-9+.-]*://)[^/@]*@", re.IGNORECASE)
_SCP = re.compile(r"^[^/@:]+@([^/:]+):(.*)$")


@dataclass
class RepositoryIdentity:
    name: str  # github.com/team/app: the origin's address without credentials or .git
    root: str | None  # the first root commit of the tip's history: the same in every clone


def repository_name(url: str | None, fallback: str) -> str:
    """``origin``'s URL as ``host/owner/name`` (no scheme, user, password or ``.git``);
    a local path's last part; ``fallback`` without a URL."""
    if not url:
        return fallback
    url = url.strip()
    m = _SCP.match(url)
    if m:
        name = f"{m.group(1)}/{m.group(2)}"
    else:
        url = _CREDENTIALS.sub(r"\1", url)
        if "://" in url:
            name = url.split("://", 1)[1]
            if url.lower().startswith("file://"):
                name = Path(name).name
        else:
            name = Path(url.rstrip("/\\")).name or fallback
    name = name.rstrip("/")
    return name[:-4] if name.endswith(".git") else name


def repository_identity(repo: pygit2.Repository, tip: str, name: str | None) -> RepositoryIdentity:
    root = workdir(repo)
    if name is None:
        proc = run_git(root, ["config", "--get", "remote.origin.url"], check=False)
        url = proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else None
        name = repository_name(url, Path(root).resolve().name)
    roots = run_git(root, ["rev-list", "--max-parents=0", tip], check=False).stdout.decode().split()
    return RepositoryIdentity(name=name, root=roots[-1] if roots else None)


def _time(epoch: int) -> str:
    return format_time(datetime.fromtimestamp(epoch, tz=timezone.utc))


def _month(epoch: int) -> str:
    """The commit's month in UTC, as ``deja stats --by month`` groups it."""
    from deja_blame.report.history import period_of

    return period_of(datetime.fromtimestamp(epoch, tz=timezone.utc), "month")[0]


def export_rows(
    repo: pygit2.Repository,
    spec: str | None,
    conn: sqlite3.Connection | None,
    progress: Callable[[int, int], None] | None = None,
    repository: str | None = None,
) -> Iterator[dict[str, Any]]:
    """The rows of ``spec``'s commits (default: all of HEAD's history), oldest commit
    first, then by path, people's row before the sessions' (by session id)."""
    from deja_blame.report.collect import (
        NoteStore,
        attribute,
        blame_at,
        export_range,
        range_commits,
        written_paths,
    )

    root = workdir(repo)
    rng = export_range(repo, root, spec)
    assert rng.tip is not None
    identity = repository_identity(repo, rng.tip, repository)
    notes = NoteStore(repo)
    use_index = conn is not None and Q.has_sessions(conn)
    written = written_paths(repo, conn) if use_index else []
    commits = range_commits(repo, rng)
    per_commit = []
    for done, commit in enumerate(commits):
        if progress is not None:
            progress(done, len(commits))
        per_commit.append((commit, attribute(repo, commit, notes, conn, use_index, written)))

    # What is still there at the tip: (commit, path, session or None) -> lines.
    tip_tree = repo[rng.tip].peel(pygit2.Commit).tree
    paths = sorted({p for _, cl in per_commit for p in cl.introduced if cl.introduced[p]})
    paths = [p for p in paths if _blob_at(tip_tree, p)]
    by_sha = {str(c.id): cl for c, cl in per_commit}
    surviving: dict[tuple[str, str, str | None], int] = {}
    for lines in blame_at(repo, root, rng.tip, paths).values():
        for b in lines:
            cl = by_sha.get(b.commit or "")
            if cl is None or b.orig_line not in cl.introduced.get(b.orig_path, ()):
                continue  # not a line this range's commits introduced
            key = (b.commit or "", b.orig_path, cl.session_of.get(b.orig_path, {}).get(b.orig_line))
            surviving[key] = surviving.get(key, 0) + 1

    sessions: dict[str, tuple[str, str | None, str | None]] = {}
    for commit, cl in per_commit:
        sha = str(commit.id)
        base = {
            "schema": SCHEMA,
            "repository": identity.name,
            "repository_root": identity.root,
            "tip": rng.tip,
            "commit": sha,
            "commit_time": _time(commit.commit_time),
            "author_time": _time(commit.author.time),
            "month": _month(commit.commit_time),
            "author": commit.author.name,
            "author_email": commit.author.email,
        }
        if not any(cl.introduced.values()):
            # a commit that added no line (a deletion, a merge taking one side, an empty
            # commit) still counts as a commit: one row of zeros with no path
            yield {**base, **_NOTHING_ADDED}
            continue
        for path in sorted(cl.introduced):
            added = cl.introduced[path]
            if not added:
                continue
            counts: dict[str | None, int] = {}
            for line in added:
                sid = cl.session_of.get(path, {}).get(line)
                counts[sid] = counts.get(sid, 0) + 1
            for sid in sorted(counts, key=lambda s: (s is not None, s or "")):
                if sid is not None and sid not in sessions:
                    sessions[sid] = _session(sid, cl.session_meta.get(sid), conn)
                agent, model, started = sessions[sid] if sid is not None else (None, None, None)
                yield {
                    **base,
                    "path": path,
                    "session": sid,
                    "agent": agent,
                    "model": model,
                    "session_started_at": started,
                    "attribution": cl.source if sid is not None else None,
                    "lines_added": counts[sid],
                    "lines_surviving": surviving.get((sha, path, sid), 0),
                }


def _blob_at(tree: pygit2.Tree, path: str) -> bool:
    try:
        return tree[path].type_str == "blob"
    except KeyError:
        return False


def _session(
    sid: str, meta: Any, conn: sqlite3.Connection | None
) -> tuple[str, str | None, str | None]:
    """(agent, model, started at) of a session: from the note's entry, else the index."""
    from deja_blame.outputs.agent_trace import _session as agent_and_model

    agent, model = agent_and_model(sid, meta, conn)
    started = meta.get("started_at") if isinstance(meta, dict) else None
    if not isinstance(started, str) and conn is not None:
        row = Q.session_by_id(conn, sid)
        started = row.started_at if row is not None else None
    return agent or UNKNOWN_AGENT, model, started if isinstance(started, str) else None


def write_parquet(rows: Iterator[dict[str, Any]], path: Path) -> int:
    """The rows as one Parquet file (needs pyarrow where deja is installed: pip install pyarrow)."""
    try:
        import pyarrow as pa  # type: ignore[import-not-found]
        import pyarrow.parquet as pq  # type: ignore[import-not-found]
    except ImportError as exc:
        raise DejaError(
            "writing Parquet needs pyarrow, which is not installed",
            hint="pip install pyarrow where deja is installed (pipx: pipx inject deja pyarrow),"
            " or write JSON Lines (leave out .parquet)",
        ) from exc
    types = {"string": pa.string(), "int64": pa.int64(), "timestamp": pa.timestamp("s", tz="UTC")}
    schema = pa.schema([(name, types[kind]) for name, kind in COLUMNS.items()])
    stamps = [name for name, kind in COLUMNS.items() if kind == "timestamp"]
    data = []
    for row in rows:
        for name in stamps:
            if row.get(name):
                row[name] = datetime.fromisoformat(row[name].replace("Z", "+00:00"))
        data.append(row)
    table = pa.Table.from_pylist(data, schema=schema)
    pq.write_table(table, str(path))
    return len(data)
