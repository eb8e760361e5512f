"""Carrying a note's line ranges from one commit to another by line text.

Used when history is rewritten (amend, rebase, squash, cherry-pick, reset and
recommit) and the transcripts are not at hand to re-derive attribution: a
range survives where the same line text is found at the new position of the
file in the new commit, and only on lines the new commit introduced.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from deja_blame import linediff
from deja_blame.gitcli import git_errors, is_blob, peel
from deja_blame.notes.schema import LineMap, Note, merge_notes, set_lines

if TYPE_CHECKING:
    import pygit2

GIT_DELTA_DELETED = 2  # pygit2.GIT_DELTA_DELETED (libgit2's git_delta_t), without importing it


def _commit(repo: pygit2.Repository, sha: str) -> pygit2.Commit | None:
    try:
        return peel(repo[sha], "commit")  # type: ignore[no-any-return]
    except git_errors():
        return None


def file_lines(repo: pygit2.Repository, commit: pygit2.Commit, path: str) -> list[str] | None:
    """The file's lines at ``commit`` (no newlines), or None when absent or binary."""
    try:
        blob = repo[commit.tree[path].id]
    except KeyError:
        return None
    if not is_blob(blob) or b"\0" in blob.data[:8000]:
        return None
    text = blob.data.decode("utf-8", "replace")
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def introduced(
    repo: pygit2.Repository, commit: pygit2.Commit
) -> tuple[dict[str, set[int]], dict[str, str]]:
    """Lines each file gained in ``commit`` against its first parent, and renames (old -> new)."""
    if commit.parents:
        diff = commit.parents[0].tree.diff_to_tree(commit.tree, context_lines=0)
    else:
        diff = commit.tree.diff_to_tree(swap=True, context_lines=0)
    diff.find_similar()
    added: dict[str, set[int]] = {}
    renames: dict[str, str] = {}
    for patch in diff:
        if patch is None:
            continue
        delta = patch.delta
        if delta.status == GIT_DELTA_DELETED:
            continue
        new_path = delta.new_file.path
        if delta.old_file.path != new_path:
            renames[delta.old_file.path] = new_path
        lines = added.setdefault(new_path, set())
        for hunk in patch.hunks:
            for ln in hunk.lines:
                if ln.origin == "+" and ln.new_lineno > 0:
                    lines.add(ln.new_lineno)
    return added, renames


def line_mapping(old: list[str], new: list[str]) -> dict[int, int]:
    """1-based old line -> new line, for lines whose text survived (in order, or moved)."""
    if old == new:
        return {i: i for i in range(1, len(old) + 1)}
    out = linediff.line_mapping(old, new)  # git's diff: linear where difflib was quadratic
    used_new = set(out.values())
    # A block moved elsewhere in the file: its lines are unique on both sides.
    old_count = Counter(old)
    new_pos: dict[str, int] = {}
    new_count = Counter(new)
    for j, text in enumerate(new, 1):
        if new_count[text] == 1:
            new_pos[text] = j
    for i, text in enumerate(old, 1):
        if i in out or old_count[text] != 1 or text.strip() == "":
            continue
        hit = new_pos.get(text)
        if hit is not None and hit not in used_new:
            out[i] = hit
            used_new.add(hit)
    return out


class Carrier:
    """Remaps notes onto one target commit; the target's diff is computed once."""

    def __init__(self, repo: pygit2.Repository, target: str) -> None:
        self.repo = repo
        commit = _commit(repo, target)
        if commit is None:
            raise KeyError(target)
        self.commit = commit
        self.sha = str(commit.id)
        self.added, self.renames = introduced(repo, commit)
        self._target_lines: dict[str, list[str] | None] = {}

    def _lines(self, path: str) -> list[str] | None:
        if path not in self._target_lines:
            self._target_lines[path] = file_lines(self.repo, self.commit, path)
        return self._target_lines[path]

    def carry(self, note: Note, source: str | None = None) -> Note:
        """``note`` (computed for ``source``, default ``note.commit``) in this commit's lines."""
        out = Note(commit=self.sha, tool=note.tool)
        src = _commit(self.repo, source or note.commit) if (source or note.commit) else None
        for path in note.files:
            target_path = path
            if path not in self.added and path in self.renames:
                target_path = self.renames[path]
            wanted = self.added.get(target_path)
            if not wanted:
                continue  # the new commit did not touch this file
            new = self._lines(target_path)
            if new is None:
                continue
            old = file_lines(self.repo, src, path) if src is not None else None
            lines = note.line_map(path)
            mapped: LineMap = {}
            if old is None:
                # The old commit is not here (a clone that never saw it): keep the
                # ranges that still point at lines this commit introduced.
                for line, claim in lines.items():
                    if line in wanted:
                        mapped[line] = claim
            else:
                mapping = line_mapping(old, new)
                for line, claim in lines.items():
                    j = mapping.get(line)
                    if j is not None and j in wanted:
                        mapped[j] = claim
            set_lines(out, target_path, mapped)
        used = {sid for per in out.files.values() for sid in per}
        out.sessions = {sid: dict(v) for sid, v in note.sessions.items() if sid in used}
        return out

    def carry_from(self, sources: list[tuple[Note, str]]) -> Note | None:
        """Several notes carried and merged; a later source wins a line claimed twice."""
        carried = [self.carry(n, s) for n, s in sources]
        carried = [c for c in carried if not c.is_empty()]
        if not carried:
            return None
        return merge_notes(list(reversed(carried)), commit=self.sha)


def effective_note(repo: pygit2.Repository, sha: str, docs: list[Note]) -> Note | None:
    """What a commit's note says about that commit.

    Documents computed for it are used as they are; documents git copied from
    another commit on a rewrite (they name that commit) are carried over by
    line text, ranked after this commit's own.
    """
    if not docs:
        return None
    own = [d for d in docs if not d.commit or d.commit == sha]
    foreign = [d for d in docs if d.commit and d.commit != sha]
    if not foreign:
        return own[0] if len(own) == 1 else merge_notes(own, commit=sha)
    try:
        carrier = Carrier(repo, sha)
    except KeyError:
        return merge_notes(docs, commit=sha)
    moved = [carrier.carry(d) for d in foreign]
    return merge_notes([*own, *moved], commit=sha)
