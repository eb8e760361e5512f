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
from deja_blame.attribution.blame import blame_file
from deja_blame.attribution.facts.indexread import candidate_paths
from deja_blame.attribution.model import FileBlame, NoteLookup
from deja_blame.errors import DejaError
from deja_blame.gitutil import read_file, resolve_commit, try_git, workdir
from deja_blame.index import queries as Q
from deja_blame.index.fingerprint import fingerprint, is_trivial
from deja_blame.models import UNKNOWN_AGENT
from deja_blame.notes.schema import Note, ranges_of
from deja_blame.notes.store import read_tips
from deja_blame.transcripts.text import epoch_of

# the file modes whose lines git blames (not symlinks, submodules, trees)
BLOB_MODES = (pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE)


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
        if patch_delta.new_file.mode not in BLOB_MODES:
            continue
        out.append(patch_delta.new_file.path)
    return out


def introduced_lines(repo: pygit2.Repository, commit: pygit2.Commit) -> dict[str, set[int]]:
    """path -> line numbers (in this commit's version) that the commit introduced.

    Against the parent; for a merge, only lines new against every parent.
    Binary files, submodules, symlinks and deletions introduce nothing.

    A partial clone (``--filter=blob:none``) lacks most old files' contents, and
    libgit2 cannot fetch them as git does: git is asked for the commit's diff
    once, which fetches what it needs in one batch, and the diff read again.
    What is still missing (no remote to fetch from) introduces nothing known.
    """
    try:
        return _introduced(repo, commit, missing_ok=False)
    except (KeyError, pygit2.GitError):
        pass
    sha = str(commit.id)
    for args in [["diff", "-M", "--numstat", str(p.id), sha] for p in commit.parents] or [
        ["show", "--numstat", "--format=", sha]
    ]:
        try_git(repo.path, args, timeout=120)
    return _introduced(repo, commit, missing_ok=True)


def _introduced(
    repo: pygit2.Repository, commit: pygit2.Commit, missing_ok: bool
) -> dict[str, set[int]]:
    if commit.parents:
        diffs = [repo.diff(p, commit, context_lines=0) for p in commit.parents]
    else:
        diffs = [commit.tree.diff_to_tree(context_lines=0, swap=True)]
    result: dict[str, set[int]] | None = None
    for diff in diffs:
        try:
            diff.find_similar()
        except (KeyError, pygit2.GitError):
            if not missing_ok:
                raise
            # a blob this clone lacks: an added and a deleted file, not a rename
        added: dict[str, set[int]] = {}
        for k, delta in enumerate(diff.deltas):
            if delta.status == pygit2.GIT_DELTA_DELETED or delta.new_file.mode not in BLOB_MODES:
                continue
            try:
                patch = diff[k]
            except (KeyError, pygit2.GitError):
                if not missing_ok:
                    raise
                continue  # its content is not in this clone
            if patch is None:
                continue
            lines = {ln.new_lineno for hunk in patch.hunks for ln in hunk.lines if ln.origin == "+"}
            if lines and not patch.delta.is_binary:
                added[delta.new_file.path] = lines
        if result is None:
            result = added
        else:
            result = {p: s & added[p] for p, s in result.items() if p in added and s & added[p]}
    return result or {}


def written_paths(
    repo: pygit2.Repository, conn: sqlite3.Connection | None, commit: str | None = None
) -> list[int]:
    """The ids of the paths of this repository's files that sessions wrote to: under
    its root, or in another clone, another machine (by path suffix: the files of
    ``commit`` and its parent; without one, HEAD's)."""
    if conn is None:
        return []
    from deja_blame.attribution.facts.repository import paths_of_repository

    revs = [commit, commit + "^"] if commit else ["HEAD"]
    return sorted(paths_of_repository(conn, str(workdir(repo)), revs))


def files_worth_blaming(
    repo: pygit2.Repository,
    commit: pygit2.Commit,
    conn: sqlite3.Connection,
    introduced: dict[str, set[int]],
    written: list[int],
) -> set[str]:
    """Of the files a commit changed, those where the index can find a session's line.

    A file a session wrote (by its path, here or in another clone), or one where
    the commit introduced ``MOVED_BLOCK`` different lines (blank lines and
    brackets aside) that sessions wrote to other files of this repository: the
    least that a move needs to give a session a line (``moves.keep_blocks``).
    Blaming the rest finds nobody, and on a commit of many files it is most of
    the time: a 21-file commit of gemini-cli took 8-9 s to annotate (the hook's
    foreground budget is 2 s) for 2 files that could hold a session's line.
    """
    from deja_blame.attribution.match.moves import MOVED_BLOCK

    root = str(workdir(repo))
    out: set[str] = set()
    for path, lines in introduced.items():
        if candidate_paths(conn, root, {path}):
            out.add(path)
            continue
        if not written:
            continue
        try:
            texts = read_file(repo, path, str(commit.id)).lines()
        except DejaError:
            continue
        fps = {
            fingerprint(texts[n - 1])
            for n in lines
            if 0 < n <= len(texts) and not is_trivial(texts[n - 1])
        }
        if len(fps) >= MOVED_BLOCK and (
            len(Q.fingerprints_written_to_any(conn, written, fps)) >= MOVED_BLOCK
        ):
            out.add(path)
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
    session's lines); by default ``files_worth_blaming`` says which."""
    commit = resolve_commit(repo, rev)
    sha = str(commit.id)
    note = Note(commit=sha, tool=f"deja-blame {__version__}")
    if only is None and conn is not None:
        only = files_worth_blaming(
            repo, commit, conn, introduced_lines(repo, commit), written_paths(repo, conn, sha)
        )
    result = CommitAttribution(commit=sha, note=note)
    tips = read_tips(repo)  # the notes' refs, once for the commit's files
    for path in changed_files(repo, commit):
        if only is not None and path not in only:
            continue
        try:
            # only this commit's lines go in its note: only they are matched
            focus = None if keep_blames else sha
            fb = blame_file(repo, path, sha, conn, note_lookup=note_lookup, focus=focus, tips=tips)
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
                    "agent": info.source if info else UNKNOWN_AGENT,
                    "project": info.project if info else "-",
                    "started_at": info.started_at if info else None,
                }
                if info and info.model:
                    entry["model"] = info.model
                if include_prompts and info and info.first_prompt:
                    entry["first_prompt"] = info.first_prompt
                note.sessions.setdefault(sid, entry)
    return result
