"""Attribution of one commit: which sessions wrote which lines that the commit introduced.

For each file the commit changed (against its first parent), blame the file
at the commit and keep the lines whose blame commit is this one: those are the
lines it introduced. The result is the commit's note (``deja_blame.notes.schema``).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

import pygit2

from deja_blame import __version__
from deja_blame.attribution.blame import FileBlame, NoteLookup, blame_file
from deja_blame.errors import DejaError
from deja_blame.gitutil import resolve_commit
from deja_blame.notes.schema import Note, ranges_of
from deja_blame.transcripts.text import epoch_of


@dataclass
class CommitAttribution:
    """A commit's introduced lines per file, and the note built from them."""

    commit: str
    note: Note
    # path -> (lines the commit introduced, of which attributed)
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    blames: dict[str, FileBlame] = field(default_factory=dict)


def changed_files(repo: pygit2.Repository, commit: pygit2.Commit) -> list[str]:
    """Paths added or modified by ``commit`` (renames: the new path), against its first parent."""
    if commit.parents:
        diff = commit.parents[0].tree.diff_to_tree(commit.tree)
    else:
        diff = commit.tree.diff_to_tree(swap=True)
    diff.find_similar()
    out = []
    for patch_delta in diff.deltas:
        if patch_delta.status in (pygit2.GIT_DELTA_DELETED,):
            continue
        if patch_delta.new_file.mode not in (
            pygit2.GIT_FILEMODE_BLOB,
            pygit2.GIT_FILEMODE_BLOB_EXECUTABLE,
        ):
            continue
        out.append(patch_delta.new_file.path)
    return out


def attribute_commit(
    repo: pygit2.Repository,
    rev: str,
    conn: sqlite3.Connection | None,
    note_lookup: NoteLookup | None = None,
    include_prompts: bool = False,
    keep_blames: bool = False,
    only: set[str] | None = None,
) -> CommitAttribution:
    """``only``: the changed files worth blaming (the others are known to hold no
    session's lines); default all of them."""
    commit = resolve_commit(repo, rev)
    sha = str(commit.id)
    note = Note(commit=sha, tool=f"deja-blame {__version__}")
    result = CommitAttribution(commit=sha, note=note)
    for path in changed_files(repo, commit):
        if only is not None and path not in only:
            continue
        try:
            fb = blame_file(repo, path, sha, conn, note_lookup=note_lookup)
        except DejaError:
            continue  # binary files and the like: nothing to attribute
        mine = [ln for ln in fb.lines if ln.commit == sha]
        per_session: dict[str, list[tuple[int, float, int | None]]] = {}
        for ln in mine:
            if ln.session:
                written = epoch_of(ln.written_at) if ln.written_at else None
                per_session.setdefault(ln.session, []).append(
                    (ln.line, ln.confidence or 0.0, int(written) if written is not None else None)
                )
        result.counts[path] = (len(mine), sum(len(v) for v in per_session.values()))
        if keep_blames:
            result.blames[path] = fb
        if per_session:
            note.files[path] = {sid: ranges_of(lines) for sid, lines in sorted(per_session.items())}
            for sid in per_session:
                info = fb.sessions.get(sid)
                entry = {
                    "agent": info.source if info else "antigravity",
                    "project": info.project if info else "-",
                    "started_at": info.started_at if info else None,
                }
                if info and info.model:
                    entry["model"] = info.model
                if include_prompts and info and info.first_prompt:
                    entry["first_prompt"] = info.first_prompt
                note.sessions.setdefault(sid, entry)
    return result
