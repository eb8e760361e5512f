"""Reading and writing ``refs/notes/deja`` safely while other writers run.

Writes go through ``git fast-import``: one process for any number of notes, the
notes fan-out handled by git, and a compare-and-swap on the ref (the new notes
commit has the tip we read as its parent; fast-import refuses to move the ref
when it is no longer that tip). A refused write is recomputed from the new tip
and retried. deja's own writers also take a lock file first, so two hooks in
two worktrees queue instead of retrying; git's own notes writers (``git notes``,
the rewrite copy) take no such lock and are what the compare-and-swap is for.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame import statefile
from deja_blame.errors import DejaError
from deja_blame.gitcli import git_errors, is_blob, is_cli, is_tree, peel
from deja_blame.gitutil import no_git_env, workdir
from deja_blame.notes.schema import (
    GITAI_REF,
    MAX_NOTE_BYTES,
    NOTES_REF,
    Note,
    note_parts,
    parse_note,
    parse_note_docs,
    split_note,
    with_foreign,
)
from deja_blame.objectid import LENGTHS, is_object_id, null_id

if TYPE_CHECKING:
    import pygit2

MAX_ATTEMPTS = 12
LOCK_WAIT = 10.0  # seconds to wait for another deja writer before going ahead anyway


def common_dir(repo: pygit2.Repository) -> Path:
    """The repository's common git directory (shared by all worktrees)."""
    gitdir = Path(repo.path)
    marker = gitdir / "commondir"
    if marker.is_file():
        rel = marker.read_text(encoding="utf-8").strip()
        return (gitdir / rel).resolve()
    return gitdir.resolve()


def deja_dir(repo: pygit2.Repository) -> Path:
    """``.git/deja``: the hook log, the install record, the notes lock."""
    return common_dir(repo) / "deja"


def ref_object(repo: pygit2.Repository, ref: str = NOTES_REF) -> tuple[str, str] | None:
    """(object id, its kind: commit, blob, tree, tag) that ``ref`` points at, or None."""
    try:
        sha = str(repo.references[ref].resolve().target)
        return sha, repo[sha].type_str
    except git_errors():
        return None


def wrong_kind_message(ref: str, sha: str, kind: str) -> str:
    return (
        f"{ref} points at a {kind} ({sha[:12]}), not a notes commit: deja reads no notes"
        " from it and leaves it as it is"
    )


WRONG_KIND_HINT = "see what it is: git cat-file -p {ref}; remove it: git update-ref -d {ref}"
_WARNED_REFS: set[str] = set()


def ref_target(repo: pygit2.Repository, ref: str = NOTES_REF) -> str | None:
    """The notes commit ``ref`` points at, or None. A ref pointing at something else
    (a blob, a tree, a tag: a fork's or a tool's mistake) holds no notes: one
    warning, and it is left alone (writers refuse it: ``check_notes_ref``)."""
    found = ref_object(repo, ref)
    if found is None:
        return None
    sha, kind = found
    if kind != "commit":
        if ref not in _WARNED_REFS:
            from deja_blame.output import warn

            _WARNED_REFS.add(ref)
            warn(wrong_kind_message(ref, sha, kind))
        return None
    return sha


@dataclass(frozen=True)
class NotesTips:
    """The notes one answer is made with, read once per question (``read_tips``):
    deja's notes commit (``ref_target``: None where there is none, or the ref points
    at something else) and git-ai's ref's target (None: no such ref)."""

    deja: str | None
    gitai: str | None


def read_tips(repo: pygit2.Repository) -> NotesTips:
    """deja's and git-ai's notes tips, read once for a question: the cache's key, the
    notes lookup (``notes/lookup.py``) and git-ai's lookup are all given these."""
    try:
        gitai: str | None = str(repo.references[GITAI_REF].target)
    except git_errors():
        gitai = None
    return NotesTips(deja=ref_target(repo), gitai=gitai)


def check_notes_ref(repo: pygit2.Repository, ref: str = NOTES_REF) -> None:
    """A DejaError (one line and a hint) when ``ref`` points at anything but a commit."""
    found = ref_object(repo, ref)
    if found is not None and found[1] != "commit":
        message = wrong_kind_message(ref, found[0], found[1])
        _WARNED_REFS.add(ref)  # said once: readers later in this process need not repeat it
        raise DejaError(message, hint=WRONG_KIND_HINT.format(ref=ref))


_HEX = frozenset("0123456789abcdef")


def note_blob_map(repo: pygit2.Repository, commit: str | None) -> dict[str, str]:
    """annotated commit sha -> note blob sha, for the notes commit ``commit`` (any fan-out)."""
    if commit is None:
        return {}
    return tree_note_blobs(repo, peel(repo[commit], "tree"))


def tree_note_blobs(repo: pygit2.Repository, tree: pygit2.Tree) -> dict[str, str]:
    """annotated commit sha -> note blob sha, for a notes tree (``notes_tree``)."""
    out: dict[str, str] = {}
    if is_cli(repo):  # one ls-tree, not a cat-file round trip per fan-out directory
        listed = repo.git(["ls-tree", "-r", "-z", "--full-tree", str(tree.id)], check=False)  # type: ignore[attr-defined]
        for entry in listed.split(b"\0"):
            meta, _, name_b = entry.partition(b"\t")
            fields = meta.split(b" ")
            name = name_b.decode("ascii", "replace").replace("/", "")
            if len(fields) == 3 and fields[1] == b"blob":
                if len(name) in LENGTHS and _HEX.issuperset(name):
                    out[name] = fields[2].decode("ascii")
        return out

    def walk(t: pygit2.Tree, prefix: str) -> None:
        for entry in t:
            name = prefix + (entry.name or "")
            if entry.type_str == "tree" and len(name) < max(LENGTHS):
                sub = repo[entry.id]
                assert is_tree(sub)
                walk(sub, name)
            elif entry.type_str == "blob" and len(name) in LENGTHS and _HEX.issuperset(name):
                out[name] = str(entry.id)  # (a non-hex name annotates nothing git knows)

    walk(tree, "")
    return out


def note_path(repo: pygit2.Repository, commit: str, sha: str) -> str | None:
    """Where the notes commit ``commit`` keeps the note of ``sha`` (any fan-out)."""
    found = _find_note(peel(repo[commit], "tree"), sha)
    return found[0] if found else None


def notes_changed(root: str | Path, then: str, now: str) -> set[str] | None:
    """The commits whose notes differ between the notes commits ``then`` and ``now``
    (added, changed or removed: one ``git diff-tree``), or None when git cannot say."""
    from deja_blame.gitutil import try_git

    if not (is_object_id(then) and is_object_id(now)):
        return None
    args = ["diff-tree", "-r", "--no-commit-id", "--name-only", "-z", "--end-of-options"]
    proc = try_git(root, [*args, then, now])
    if proc is None or proc.returncode != 0:
        return None
    names = proc.stdout.decode("ascii", "replace").split("\0")
    # a note's path is its commit's name, fanned out
    return {name.replace("/", "") for name in names if name}


def note_blob(tree: pygit2.Tree, sha: str) -> str | None:
    """The id of the blob holding ``sha``'s note in a notes tree, or None."""
    found = _find_note(tree, sha)
    return str(found[1]) if found is not None else None


def _find_note(tree: pygit2.Tree, sha: str) -> tuple[str, pygit2.Oid] | None:
    """(path, blob id) of ``sha``'s note in a notes tree, at whatever fan-out git chose
    (the depth of the last note found is tried first: one tree has one fan-out, and
    a miss costs an exception)."""
    depth = _LAST_DEPTH[0]
    if depth:
        path = "/".join([sha[2 * i : 2 * i + 2] for i in range(depth)] + [sha[2 * depth :]])
        try:
            return path, tree[path].id
        except KeyError:
            pass
    for depth in range(0, len(sha) // 2):
        if depth and not _has_dir(tree, sha, depth):
            return None  # no fan-out directory this deep: no note deeper either
        path = "/".join([sha[2 * i : 2 * i + 2] for i in range(depth)] + [sha[2 * depth :]])
        try:
            found = path, tree[path].id
        except KeyError:
            continue
        _LAST_DEPTH[0] = depth
        return found
    return None


_LAST_DEPTH = [0]  # the fan-out of the notes tree last read


def _has_dir(tree: pygit2.Tree, sha: str, depth: int) -> bool:
    try:
        tree["/".join(sha[2 * i : 2 * i + 2] for i in range(depth))]
        return True
    except KeyError:
        return False


def notes_tree(repo: pygit2.Repository, ref: str = NOTES_REF) -> pygit2.Tree | None:
    """The tree of ``ref``'s notes commit (None: no notes), for ``read_note_text``'s
    ``tree``: a reader of hundreds of notes resolves the ref once."""
    return notes_tree_at(repo, ref_target(repo, ref))


def notes_tree_at(repo: pygit2.Repository, tip: str | None) -> pygit2.Tree | None:
    """The tree of the notes commit ``tip`` (as ``read_tips`` or ``ref_target`` read
    it; None: no notes)."""
    if tip is None:
        return None
    try:
        return peel(repo[tip], "tree")  # type: ignore[no-any-return]
    except git_errors():
        return None


def read_note_text(
    repo: pygit2.Repository,
    commit: str,
    ref: str = NOTES_REF,
    tree: pygit2.Tree | None = None,
) -> str | None:
    """The text of ``commit``'s note under ``ref`` (or in ``tree``: ``notes_tree``), or
    None. Its size is read first (libgit2's note lookup loads the whole blob): a 1 GB
    note costs a header read."""
    if tree is None:
        tree = notes_tree(repo, ref)
        if tree is None:
            return None
    try:
        found = _find_note(tree, commit)
    except git_errors():
        return None
    return None if found is None else read_note_blob(repo, commit, str(found[1]), ref)


def read_note_blob(
    repo: pygit2.Repository, commit: str, blob_id: str, ref: str = NOTES_REF
) -> str | None:
    """``read_note_text`` of a note whose blob is known (``tree_note_blobs``)."""
    try:
        size = repo.odb.read_header(blob_id)[1]
    except git_errors():
        return None
    if size > MAX_NOTE_BYTES:
        _skipped_note(commit, size, ref)
        return None
    blob = repo[blob_id]
    if not is_blob(blob):
        return None
    return blob.data.decode("utf-8", "replace")


def read_note(repo: pygit2.Repository, commit: str, ref: str = NOTES_REF) -> Note | None:
    text = read_note_text(repo, commit, ref)
    if text is None:
        return None
    note = parse_note(text)
    if note is None and not said_foreign(commit, text):
        _skipped_note(commit, len(text.encode("utf-8", "replace")), ref)
    return note


_FOREIGN_SAID: list[str] = []
_DAMAGED_SAID: set[str] = set()


def said_foreign(commit: str, text: str) -> bool:
    """Say (once per process) that notes hold lines deja does not read, and (once per
    commit) that a note holds a damaged deja document; True when ``text`` holds either."""
    if text.lstrip().startswith("{") and text.rstrip().endswith("}"):
        return False  # deja's JSON alone (the usual case): no scan
    parts = note_parts(text)
    if not parts.foreign and not parts.damaged:
        return False
    from deja_blame.output import warn

    if parts.damaged and commit not in _DAMAGED_SAID:
        _DAMAGED_SAID.add(commit)
        warn(damaged_text(commit, bool(parts.docs)))
    if parts.foreign and not _FOREIGN_SAID:
        n = len(parts.foreign)
        warn(
            f"the note of commit {commit[:12]} in {NOTES_REF} holds {n} line{'s' if n != 1 else ''}"
            " deja does not read (another tool's, such as deja-vu's): skipped here, and"
            " kept as they are when deja writes the note"
        )
    if parts.foreign:
        _FOREIGN_SAID.append(commit)
    return True


def damaged_text(commit: str, rest_read: bool) -> str:
    """What deja says of a damaged deja note, and the ways back."""
    skipped = "what it held is skipped" if rest_read else "its lines are nobody's"
    return (
        f"the note of commit {commit[:12]} in {NOTES_REF} is a damaged deja note (cut short"
        f" or edited: it does not parse): {skipped} here until it is restored: deja notes"
        f" fetch restores it from a remote whose note of that commit is whole, deja annotate"
        f" {commit[:12]} re-derives it from the transcripts where they are on this machine"
    )


def read_note_parts(
    repo: pygit2.Repository, commit: str, ref: str = NOTES_REF
) -> tuple[list[Note], list[str]]:
    """The note's deja documents and the other lines in it (another tool's), for writers."""
    text = read_note_text(repo, commit, ref)
    if text is None:
        return [], []
    return parse_note_docs(text), split_note(text)[1]


_SKIPPED: set[str] = set()
SKIPPED_SHOWN = 3


def _skipped_note(commit: str, size: int, ref: str = NOTES_REF) -> None:
    """One warning per unreadable note (a few per process): a fork's note is input."""
    from deja_blame.output import warn

    if commit in _SKIPPED:
        return
    _SKIPPED.add(commit)
    if len(_SKIPPED) <= SKIPPED_SHOWN:
        why = "too large" if size > MAX_NOTE_BYTES else "not a deja note this version reads"
        warn(f"skipped the note of commit {commit[:12]} in {ref} ({why}, {size:,} bytes)")
    elif len(_SKIPPED) == SKIPPED_SHOWN + 1:
        warn(f"skipping more unreadable notes in {ref} without saying so")


def read_note_docs(
    repo: pygit2.Repository,
    commit: str,
    ref: str = NOTES_REF,
    derived: bool = True,
    tree: pygit2.Tree | None = None,
) -> list[Note]:
    text = read_note_text(repo, commit, ref, tree)
    if text is None:
        return []
    said_foreign(commit, text)
    return parse_note_docs(text, derived)


@contextmanager
def writer_lock(repo: pygit2.Repository) -> Iterator[None]:
    """Serialise deja's notes writers across processes and worktrees (best effort)."""
    try:
        import fcntl
    except ImportError:  # no fcntl (Windows): the compare-and-swap alone keeps us safe
        yield
        return
    path = deja_dir(repo) / "notes.lock"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = statefile.open_lock(path)  # not through a link, not a FIFO
    except OSError:
        fd = None
    if fd is None:
        yield
        return
    try:
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() > deadline:
                    break  # a stuck holder: go ahead, the compare-and-swap still guards
                time.sleep(0.02)
        yield
    finally:
        os.close(fd)  # releases the lock


def _identity(repo: pygit2.Repository) -> str:
    def conf(key: str) -> str | None:
        try:
            return str(repo.config[key])
        except git_errors():
            return None

    name = os.environ.get("GIT_COMMITTER_NAME") or conf("user.name") or "deja"
    email = os.environ.get("GIT_COMMITTER_EMAIL") or conf("user.email") or "deja@localhost"
    name = name.replace("<", "").replace(">", "").replace("\n", " ").strip() or "deja"
    email = email.replace("<", "").replace(">", "").replace("\n", "").strip()
    return f"{name} <{email}> {int(time.time())} +0000"


def _fast_import_stream(
    repo: pygit2.Repository,
    ref: str,
    parent: str | None,
    changes: Mapping[str, str | None],
    message: str,
    merge: str | None = None,
    blobs: Mapping[str, str] | None = None,
) -> bytes:
    """A fast-import commit of ``ref``: notes set (``N``, the object must be here) and,
    in ``blobs``, existing blobs put at tree paths as they are (``M``: notes of
    objects this clone lacks, carried without being read)."""
    msg = message.encode()
    parts = [
        f"commit {ref}\n".encode(),
        f"committer {_identity(repo)}\n".encode(),
        f"data {len(msg)}\n".encode() + msg + b"\n",
    ]
    if parent is not None:
        parts.append(f"from {parent}\n".encode())
    if merge is not None:
        parts.append(f"merge {merge}\n".encode())
    for sha, text in sorted(changes.items()):
        if text is None:
            parts.append(f"N {null_id(sha)} {sha}\n".encode())  # fast-import: delete the note
        else:
            body = text.encode()
            parts.append(f"N inline {sha}\ndata {len(body)}\n".encode() + body + b"\n")
    for path, blob in sorted((blobs or {}).items()):
        parts.append(f"M 100644 {blob} {path}\n".encode())
    parts.append(b"\n")
    return b"".join(parts)


def _fast_import(repo: pygit2.Repository, stream: bytes) -> tuple[bool, str]:
    proc = subprocess.Popen(
        ["git", "-C", str(workdir(repo)), "fast-import", "--quiet", "--date-format=raw"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=no_git_env(),
    )
    _, err_bytes = proc.communicate(stream)
    err = err_bytes.decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        # fast-import leaves a crash report for every failed run: ours, not the user's
        for gitdir in {Path(repo.path), common_dir(repo)}:
            for crash in gitdir.glob(f"fast_import_crash_{proc.pid}"):
                crash.unlink(missing_ok=True)
    return proc.returncode == 0, err


Compute = Callable[["pygit2.Repository", str | None], Mapping[str, str | None]]


def update_notes(
    repo: pygit2.Repository,
    compute: Compute,
    message: str,
    ref: str = NOTES_REF,
    merge: str | None = None,
) -> str | None:
    """Apply ``compute(repo, tip)`` -> {commit: note text or None to delete} to ``ref``.

    ``compute`` sees the current tip and is called again after a lost race, so
    it must read what it merges with from ``repo`` each time. ``merge`` makes
    the new notes commit a merge with that notes commit (``deja notes fetch``).
    Returns the new tip, or None when there was nothing to change.
    """
    check_notes_ref(repo, ref)  # never written over: fast-import would crash on it
    with writer_lock(repo):
        last_err = ""
        for attempt in range(MAX_ATTEMPTS):
            check_notes_ref(repo, ref)
            tip = ref_target(repo, ref)
            changes = dict(compute(repo, tip))
            if not changes and merge is None:
                return None
            stream = _fast_import_stream(repo, ref, tip, changes, message, merge=merge)
            ok, last_err = _fast_import(repo, stream)
            if ok:
                return ref_target(repo, ref)
            import random

            time.sleep(random.uniform(0.01, 0.05) * (attempt + 1))
        raise DejaError(f"could not update {ref}: {last_err.splitlines()[-1] if last_err else '?'}")


def write_notes(
    repo: pygit2.Repository,
    notes: Mapping[str, Note | None],
    message: str,
    ref: str = NOTES_REF,
) -> str | None:
    """Write these notes as they are (None deletes), skipping the ones already stored."""

    def compute(r: pygit2.Repository, tip: str | None) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for sha, note in notes.items():
            current = read_note_text(r, sha, ref) if tip is not None else None
            foreign = split_note(current)[1] if current is not None else []
            if note is None:
                if current is not None:
                    out[sha] = with_foreign("", foreign) if foreign else None
            elif current != with_foreign(note.dumps(), foreign):
                out[sha] = with_foreign(note.dumps(), foreign)
        return out

    return update_notes(repo, compute, message, ref=ref)
