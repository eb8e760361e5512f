"""Computing and storing a commit's note (``deja annotate``, the hooks).

Three sources, in order of priority for a line claimed by more than one:

1. the index, re-derived now (``attribute_commit``): the freshest evidence;
2. the note already stored for this commit (computed for it earlier, maybe on
   another machine with other transcripts);
3. notes carried by line text from commits this one was made from: the old
   commits of a rewrite, the commit a cherry-pick names (``-x`` or
   ``CHERRY_PICK_HEAD``), the commits a ``merge --squash`` message lists, and
   the commits a ``reset --soft`` left behind (``ORIG_HEAD``).

Nothing is written for a commit with no attributed line, and nothing when the
stored note already says the same (annotate is idempotent).
"""

from __future__ import annotations

import re
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from deja_blame import __version__
from deja_blame.errors import DejaError
from deja_blame.gitutil import resolve_commit, run_git, workdir
from deja_blame.notes.lookup import read_note
from deja_blame.notes.public import no_new_prompts, public_sessions
from deja_blame.notes.remap import Carrier
from deja_blame.notes.schema import Note, merge_notes, with_foreign
from deja_blame.notes.store import check_notes_ref, read_note_docs, read_note_parts, update_notes
from deja_blame.objectid import ID, is_object_id

TOOL = f"deja-blame {__version__}"
PROMPTS_KEY = "deja.notes.prompts"
MAX_SOURCES = 50

_CHERRY = re.compile(rf"\(cherry picked from commit ({ID})\)")
_SQUASHED = re.compile(rf"^commit ({ID})$", re.MULTILINE)


def prompts_opted_in(repo: pygit2.Repository) -> bool:
    """``git config deja.notes.prompts true``: the user allows prompt text in notes."""
    try:
        return bool(repo.config.get_bool(PROMPTS_KEY))
    except (KeyError, pygit2.GitError, ValueError):
        return False


def derive(
    repo: pygit2.Repository,
    sha: str,
    conn: sqlite3.Connection | None,
    include_prompts: bool,
    only: set[str] | None = None,
) -> Note:
    """The commit's attribution from the index alone (notes not consulted); ``only``:
    the files worth blaming, when the caller knows (``attribute_commit``'s)."""
    if conn is None:
        return Note(commit=sha, tool=TOOL)
    from deja_blame.attribution.commit import attribute_commit
    from deja_blame.suites import tests_for_note

    note = attribute_commit(
        repo, sha, conn, note_lookup=None, include_prompts=include_prompts, only=only
    ).note
    note.tool = TOOL
    for session_id, info in note.sessions.items():
        tests = tests_for_note(conn, session_id)
        if tests is not None:
            info["tests"] = tests
    return note


def _exists(repo: pygit2.Repository, sha: str) -> bool:
    try:
        repo[sha].peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        return False
    return True


def _is_ancestor(repo: pygit2.Repository, a: str, b: str) -> bool:
    """a is b or an ancestor of it."""
    if a == b:
        return True
    try:
        return bool(repo.descendant_of(b, a))
    except (KeyError, ValueError, pygit2.GitError):
        return False


def _read_ref_file(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if is_object_id(text) else None


def carry_sources(repo: pygit2.Repository, commit: pygit2.Commit, is_head: bool) -> list[str]:
    """Commits ``commit`` was made from, whose notes may be carried onto it."""
    sha = str(commit.id)
    found: list[str] = []
    message = commit.message or ""
    found += _CHERRY.findall(message)
    if "Squashed commit of the following:" in message:
        found += _SQUASHED.findall(message)
    if is_head:
        gitdir = Path(repo.path)
        picked = _read_ref_file(gitdir / "CHERRY_PICK_HEAD")
        if picked:
            found.append(picked)
        orig = _read_ref_file(gitdir / "ORIG_HEAD")
        parent = str(commit.parents[0].id) if commit.parents else None
        # reset --soft (or --hard) then commit again: ORIG_HEAD is the abandoned
        # tip, built on this commit's parent and not part of this commit's history.
        if (
            orig
            and parent
            and orig != sha
            and _exists(repo, orig)
            and not _is_ancestor(repo, orig, sha)
            and _is_ancestor(repo, parent, orig)
        ):
            proc = run_git(
                workdir(repo),
                ["rev-list", f"--max-count={MAX_SOURCES}", "--reverse", f"{parent}..{orig}"],
                check=False,
            )
            found += proc.stdout.decode().split()
    out: list[str] = []
    for s in found:
        if s != sha and s not in out and _exists(repo, s):
            out.append(s)
    return out[:MAX_SOURCES]


@dataclass
class AnnotateResult:
    commit: str
    note: Note  # what the commit's note says now (or would say, with --dry-run)
    written: bool
    existed: bool
    derived_lines: int = 0
    carried_lines: int = 0
    sources: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "written": self.written,
            "existed": self.existed,
            "derived_lines": self.derived_lines,
            "carried_lines": self.carried_lines,
            "sources": self.sources,
            "note": self.note.to_json(),
        }


def _carried(
    repo: pygit2.Repository, sha: str, sources: list[str], docs: list[Note]
) -> Note | None:
    """Notes of the source commits, and documents git copied onto this one, carried here."""
    pairs: list[tuple[Note, str]] = []
    for s in sources:
        n = read_note(repo, s)
        if n is not None and not n.is_empty():
            pairs.append((n, s))
    pairs += [(d, d.commit) for d in docs if d.commit and d.commit != sha]
    if not pairs:
        return None
    return Carrier(repo, sha).carry_from(pairs)


def own_document(docs: list[Note], sha: str) -> Note | None:
    own = [d for d in docs if not d.commit or d.commit == sha]
    if not own:
        return None
    return own[0] if len(own) == 1 else merge_notes(own, commit=sha)


@dataclass
class Derivation:
    """A commit's attribution from the index, before it is merged with its stored
    note and carried notes and written."""

    sha: str
    note: Note
    sources: list[str]
    # what it was computed from (``notes/derived_from``); None: no index to say
    derived_from: dict[str, int] | None
    # ``deja annotate REV --prompts``: the person named this commit, so its note may
    # publish requests the note it replaces did not (``no_new_prompts``)
    add_prompts: bool = False


def derive_commit(
    repo: pygit2.Repository,
    commit: pygit2.Commit,
    conn: sqlite3.Connection | None,
    include_prompts: bool,
    is_head: bool = False,
    extra_sources: list[str] | None = None,
    derived_from: dict[str, int] | None = None,
    only: set[str] | None = None,
) -> Derivation:
    """``derive`` and the commits whose notes are carried; ``derived_from`` is computed
    here when not given (the history pass has it already, and ``only``)."""
    sha = str(commit.id)
    if derived_from is None and conn is not None:
        from deja_blame.attribution.facts.settled import commit_derived_from

        derived_from = commit_derived_from(conn, workdir(repo), sha)
    sources = carry_sources(repo, commit, is_head) + [s for s in (extra_sources or []) if s != sha]
    note = derive(repo, sha, conn, include_prompts, only)
    return Derivation(sha, note, sources, derived_from)


def final_note(
    r: pygit2.Repository, d: Derivation, include_prompts: bool
) -> tuple[Note, list[Note], list[str], int]:
    """(the note ``d`` makes, the stored documents, other tools' lines, lines carried)."""
    from deja_blame.notes.derived_from import combined

    docs, foreign = read_note_parts(r, d.sha)
    carried = _carried(r, d.sha, d.sources, docs)
    own = own_document(docs, d.sha)
    final = merge_notes([d.note, own, carried], commit=d.sha, tool=TOOL)
    final.sessions = public_sessions(final.sessions, str(workdir(r)), include_prompts)
    if not d.add_prompts:
        final.sessions = no_new_prompts(final.sessions, [doc.sessions for doc in docs] or None)
    recorded = own.derived_from if own is not None else None
    final.derived_from = recorded if d.derived_from is None else combined(recorded, d.derived_from)
    return final, docs, foreign, carried.line_count() if carried is not None else 0


def unchanged(final: Note, docs: list[Note]) -> bool:
    """The stored note already says this (what it was computed from included)."""
    return (
        len(docs) == 1
        and final.same_content(docs[0])
        and final.derived_from == docs[0].derived_from
    )


def store_notes(
    repo: pygit2.Repository,
    items: list[Derivation],
    include_prompts: bool,
    message: str,
    results: dict[str, AnnotateResult] | None = None,
) -> str | None:
    """Write the notes of ``items`` in one notes commit (merged with what is stored,
    each written only when it changed); ``results``: what each note says now."""
    out: dict[str, str | None] = {}

    def compute(r: pygit2.Repository, tip: str | None) -> dict[str, str | None]:
        out.clear()  # called again after a lost race: the last call's is what is written
        for d in items:
            final, docs, foreign, carried_lines = final_note(r, d, include_prompts)
            if results is not None:
                results[d.sha] = AnnotateResult(
                    commit=d.sha,
                    note=final,
                    written=False,
                    existed=bool(docs),
                    derived_lines=d.note.line_count(),
                    carried_lines=carried_lines,
                    sources=d.sources,
                )
            if final.is_empty() or unchanged(final, docs):
                continue  # nothing to say, or already said: idempotent
            out[d.sha] = with_foreign(final.dumps(), foreign)  # another tool's lines kept
        return dict(out)

    tip = update_notes(repo, compute, message)
    if tip is not None and results is not None:
        for sha in out:
            results[sha].written = True
    return tip


def annotate(
    repo: pygit2.Repository,
    rev: str,
    conn: sqlite3.Connection | None,
    include_prompts: bool | None = None,
    write: bool = True,
    extra_sources: list[str] | None = None,
    add_prompts: bool = False,
) -> AnnotateResult:
    """Compute ``rev``'s note from the index, the stored note and carried notes; store it.

    ``add_prompts`` (``deja annotate REV --prompts``): the sessions' requests go in
    even where the stored note had none; otherwise a note that replaces another
    publishes no request it did not (``no_new_prompts``)."""
    commit = resolve_commit(repo, rev)
    sha = str(commit.id)
    if write:
        check_notes_ref(repo)  # before any work: a ref of the wrong kind is left alone
    if add_prompts:
        include_prompts = True
    elif include_prompts is None:
        include_prompts = prompts_opted_in(repo)
    head = repo.head.target if not repo.head_is_unborn else None
    is_head = head is not None and str(head) == sha
    d = derive_commit(repo, commit, conn, include_prompts, is_head, extra_sources)
    d.add_prompts = add_prompts
    if not write:
        final, docs, _, carried_lines = final_note(repo, d, include_prompts)
        return AnnotateResult(
            commit=sha,
            note=final,
            written=False,
            existed=bool(docs),
            derived_lines=d.note.line_count(),
            carried_lines=carried_lines,
            sources=d.sources,
        )
    results: dict[str, AnnotateResult] = {}
    store_notes(repo, [d], include_prompts, f"deja annotate {sha[:12]}", results)
    return results[sha]


def commits_of(repo: pygit2.Repository, spec: str) -> list[str]:
    """A revision (one commit) or a range ``A..B`` (its commits, oldest first)."""
    if ".." not in spec:
        return [str(resolve_commit(repo, spec).id)]
    proc = run_git(workdir(repo), ["rev-list", "--reverse", spec], check=False)
    if proc.returncode != 0:
        raise DejaError(f"unknown revision range {spec!r}")
    return proc.stdout.decode().split()


# -- rewrites (the post-rewrite hook) ---------------------------------------------------


@dataclass
class RewriteResult:
    pairs: int = 0
    commits: int = 0  # new commits given a note
    carried: int = 0  # of which from the old notes alone so far
    derived: int = 0  # of which re-derived from the index too
    unfinished: list[str] = field(default_factory=list)  # not re-derived (out of time)

    def to_json(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs,
            "commits": self.commits,
            "carried": self.carried,
            "derived": self.derived,
            "unfinished": self.unfinished,
        }


def parse_rewrite_pairs(text: str) -> list[tuple[str, str]]:
    """post-rewrite's stdin: ``<old sha> <new sha> [extra]`` per line."""
    pairs = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and all(is_object_id(p) for p in parts[:2]):
            pairs.append((parts[0], parts[1]))
    return pairs


def rewrite_notes(
    repo: pygit2.Repository,
    pairs: list[tuple[str, str]],
    conn: sqlite3.Connection | None,
    include_prompts: bool | None = None,
    deadline: float | None = None,
) -> RewriteResult:
    """Give each new commit of a rewrite its note: old notes carried, then the index.

    First every new commit gets the old notes carried by line text (cheap, one
    write); then, while there is time, each is re-derived from the index too,
    written in batches so that an interrupted run keeps what it did.
    """
    check_notes_ref(repo)
    if include_prompts is None:
        include_prompts = prompts_opted_in(repo)
    result = RewriteResult(pairs=len(pairs))
    root = str(workdir(repo))
    groups: dict[str, list[str]] = {}
    for old, new in pairs:
        if old != new and _exists(repo, new):
            groups.setdefault(new, [])
            if old not in groups[new]:
                groups[new].append(old)
    if not groups:
        return result
    old_notes: dict[str, Note | None] = {}
    for olds in groups.values():
        for old in olds:
            if old not in old_notes:
                old_notes[old] = read_note(repo, old) if _exists(repo, old) else None
    carried: dict[str, Note | None] = {}
    for new, olds in groups.items():
        sources = [(n, o) for o in olds if (n := old_notes.get(o)) is not None]
        carried[new] = Carrier(repo, new).carry_from(sources) if sources else None

    def finals(derived: dict[str, Note]) -> Any:
        def compute(r: pygit2.Repository, tip: str | None) -> dict[str, str | None]:
            out: dict[str, str | None] = {}
            for new in groups:
                if derived and new not in derived:
                    continue
                docs, foreign = read_note_parts(r, new)
                final = merge_notes(
                    [derived.get(new), own_document(docs, new), carried[new]], commit=new, tool=TOOL
                )
                final.sessions = public_sessions(final.sessions, root, bool(include_prompts))
                # the old commits' notes are the ones this replaces: no request they
                # did not publish (an opt-in after them is for new commits)
                before = [doc.sessions for doc in docs] + [
                    n.sessions for o in groups[new] if (n := old_notes.get(o)) is not None
                ]
                final.sessions = no_new_prompts(final.sessions, before or None)
                if final.is_empty():
                    if docs:  # only a stale copy of the old note was there
                        out[new] = with_foreign("", foreign) if foreign else None
                elif not (len(docs) == 1 and final.same_content(docs[0])):
                    out[new] = with_foreign(final.dumps(), foreign)
            return out

        return compute

    update_notes(repo, finals({}), f"deja: notes carried over a rewrite of {len(groups)} commits")
    result.commits = sum(1 for n in carried.values() if n is not None and not n.is_empty())
    result.carried = result.commits
    if conn is None:
        return result
    todo = list(groups)
    batch: dict[str, Note] = {}
    last_write = time.monotonic()
    for i, new in enumerate(todo):
        if deadline is not None and time.monotonic() > deadline:
            result.unfinished = todo[i:]
            break
        batch[new] = derive(repo, new, conn, include_prompts)
        if time.monotonic() - last_write > 0.5 or i == len(todo) - 1:
            update_notes(repo, finals(batch), "deja: notes re-derived after a rewrite")
            result.derived += len(batch)
            batch = {}
            last_write = time.monotonic()
    if batch:
        update_notes(repo, finals(batch), "deja: notes re-derived after a rewrite")
        result.derived += len(batch)
    result.commits = sum(1 for new in groups if read_note_docs(repo, new))
    return result
