"""Sharing notes: ``deja notes fetch [REMOTE]`` and ``deja notes push [REMOTE]``.

Fetch brings the remote's ``refs/notes/deja`` into ``refs/notes/deja-remote/<remote>``
(never straight over the local notes), then merges it into the local notes:
a fast-forward when one side contains the other, else a three-way merge per
annotated commit against the merge base, as ``git notes merge`` does, except
that a note both sides changed is merged as JSON (the union of the two, the
local note winning a line both claim) instead of concatenated or overwritten.
The result is a merge commit with both tips as parents, written with a
compare-and-swap on the local ref, so nothing local is ever overwritten.

Push never forces: when the remote moved, it fetches, merges, and tries again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pygit2

from deja_blame.errors import DejaError
from deja_blame.gitcli import is_blob, is_commit
from deja_blame.gitutil import run_git, workdir
from deja_blame.notes.public import public_sessions
from deja_blame.notes.remap import effective_note
from deja_blame.notes.schema import (
    NOTES_REF,
    merge_notes,
    note_parts,
    parse_note_docs,
    split_note,
    with_foreign,
)
from deja_blame.notes.store import (
    MAX_ATTEMPTS,
    _fast_import,
    _fast_import_stream,
    check_notes_ref,
    note_blob_map,
    note_path,
    ref_object,
    ref_target,
    writer_lock,
)
from deja_blame.objectid import null_id

REMOTE_PREFIX = "refs/notes/deja-remote/"
PUSH_ATTEMPTS = 5
_REMOTE_NAME = re.compile(r"^[A-Za-z0-9._/@:+~-]+$")


def tracking_ref(remote: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", remote).strip("._") or "remote"
    return REMOTE_PREFIX + safe


@dataclass
class MergeResult:
    kind: str = "up-to-date"  # up-to-date | created | fast-forward | merge
    taken: int = 0  # notes taken from the remote side
    merged: int = 0  # notes both sides changed, merged as JSON
    kept: int = 0  # notes both sides changed that could not be read: the local one kept
    skipped: int = 0  # their notes for objects this clone lacks (or that are no commits)
    restored: int = 0  # damaged deja notes here replaced by their whole one

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "taken": self.taken,
            "merged": self.merged,
            "kept": self.kept,
            "skipped": self.skipped,
            "restored": self.restored,
        }


@dataclass
class FetchResult:
    remote: str
    ref: str
    fetched: str | None  # the remote notes commit, or None when the remote has no notes
    merge: MergeResult
    local: str | None = None  # the local notes commit afterwards

    def to_json(self) -> dict[str, Any]:
        return {
            "remote": self.remote,
            "ref": self.ref,
            "fetched": self.fetched,
            "merge": self.merge.to_json(),
            "local": self.local,
        }


def _update_ref(repo: pygit2.Repository, new: str, old: str | None) -> bool:
    proc = run_git(workdir(repo), ["update-ref", NOTES_REF, new, old or null_id(new)], check=False)
    return proc.returncode == 0


def _blob_text(repo: pygit2.Repository, blob: str) -> str:
    obj = repo[blob]
    assert is_blob(obj)
    return obj.data.decode("utf-8", "replace")


def _is_commit_here(repo: pygit2.Repository, sha: str) -> bool:
    try:
        return is_commit(repo[sha])
    except (KeyError, ValueError):
        return False


def _restorations(
    repo: pygit2.Repository, mine: dict[str, str], other: dict[str, str]
) -> dict[str, str]:
    """annotated commit -> new note text, for each local note that is a damaged deja
    note (``schema.note_parts``: no document of it parses) where the other side's
    note of the commit is whole: theirs, with every other tool's line of ours kept."""
    out: dict[str, str] = {}
    for sha, th in other.items():
        lo = mine.get(sha)
        if lo is None or lo == th:
            continue
        ours = note_parts(_blob_text(repo, lo))
        if not ours.damaged or parse_note_docs("\n\n".join(map(str, ours.docs))):
            continue  # whole, or a damaged document beside one that reads
        theirs_text = _blob_text(repo, th)
        theirs = note_parts(theirs_text)
        if theirs.damaged or not parse_note_docs(theirs_text):
            continue
        extra = [ln for ln in ours.foreign if ln not in theirs.foreign]
        if not extra:
            out[sha] = theirs_text
            continue
        note = effective_note(repo, sha, parse_note_docs(theirs_text))
        if note is not None:
            out[sha] = with_foreign(note.dumps(), theirs.foreign + extra)
    return out


def merge_notes_ref(repo: pygit2.Repository, theirs: str, label: str) -> MergeResult:
    """Merge the notes commit ``theirs`` into the local ``refs/notes/deja``."""
    result = MergeResult()
    root = str(workdir(repo))
    check_notes_ref(repo)
    with writer_lock(repo):
        last_err = ""
        for _ in range(MAX_ATTEMPTS):
            result = MergeResult()
            tip = ref_target(repo)
            if tip is None:
                if _update_ref(repo, theirs, None):
                    result.kind = "created"
                    return result
                continue
            if tip == theirs or repo.descendant_of(tip, theirs):
                # nothing of theirs is new here; a damaged note of ours is restored
                # from theirs (a note cut short here says "already up to date" else)
                restore = _restorations(repo, note_blob_map(repo, tip), note_blob_map(repo, theirs))
                if not restore:
                    return result
                stream = _fast_import_stream(
                    repo, NOTES_REF, tip, restore, f"notes: restore damaged deja notes from {label}"
                )
                ok, last_err = _fast_import(repo, stream)
                if ok:
                    result.restored = len(restore)
                    return result
                continue
            if repo.descendant_of(theirs, tip):
                if _update_ref(repo, theirs, tip):
                    result.kind = "fast-forward"
                    return result
                continue
            base_oid = repo.merge_base(tip, theirs)
            base = note_blob_map(repo, str(base_oid) if base_oid else None)
            mine = note_blob_map(repo, tip)
            other = note_blob_map(repo, theirs)
            changes: dict[str, str | None] = {}
            carried: dict[str, str] = {}  # tree path -> blob, for notes of absent objects
            restore = _restorations(repo, mine, other)
            for sha in sorted(set(mine) | set(other)):
                b, lo, th = base.get(sha), mine.get(sha), other.get(sha)
                if sha in restore:
                    changes[sha] = restore[sha]
                    result.restored += 1
                    continue
                if lo != th and th != b and not _is_commit_here(repo, sha):
                    # A teammate's note for a commit this clone does not have (yet):
                    # not read or merged here, but carried as it is, so pushing the
                    # merge loses nothing of theirs.
                    result.skipped += 1
                    if th is not None and lo is None:
                        path = note_path(repo, theirs, sha)
                        if path is not None:
                            carried[path] = th
                    continue
                if lo == th or th == b:
                    continue  # same, or only we changed it
                if lo == b:
                    changes[sha] = _blob_text(repo, th) if th is not None else None
                    result.taken += 1
                    continue
                if th is None:
                    continue  # we changed it, they deleted it: keep ours
                if lo is None:
                    changes[sha] = _blob_text(repo, th)  # we deleted, they changed: theirs
                    result.taken += 1
                    continue
                ours_text, theirs_text = _blob_text(repo, lo), _blob_text(repo, th)
                ours_doc = effective_note(repo, sha, parse_note_docs(ours_text))
                theirs_doc = effective_note(repo, sha, parse_note_docs(theirs_text))
                foreign = split_note(ours_text)[1]  # another tool's lines, both sides'
                foreign += [ln for ln in split_note(theirs_text)[1] if ln not in foreign]
                if ours_doc is None or theirs_doc is None:
                    result.kept += 1
                    continue
                merged = merge_notes([ours_doc, theirs_doc], commit=sha, tool=ours_doc.tool)
                merged.sessions = public_sessions(merged.sessions, root, include_prompts=True)
                changes[sha] = with_foreign(merged.dumps(), foreign)
                result.merged += 1
            stream = _fast_import_stream(
                repo,
                NOTES_REF,
                tip,
                changes,
                f"notes: merge deja notes from {label}",
                merge=theirs,
                blobs=carried,
            )
            ok, last_err = _fast_import(repo, stream)
            if ok:
                result.kind = "merge"
                return result
        raise DejaError(
            f"could not merge the notes from {label}: {last_err or 'the ref kept moving'}"
        )


def _check_remote(repo: pygit2.Repository, remote: str) -> None:
    if not _REMOTE_NAME.match(remote) or remote.startswith("-"):
        raise DejaError(f"{remote!r} is not a remote name or URL")
    names = run_git(workdir(repo), ["remote"], check=False).stdout.decode().split()
    if remote not in names and "/" not in remote and ":" not in remote:
        raise DejaError(
            f"no remote named {remote!r}", hint="git remote -v lists them; or pass a URL or path"
        )


def fetch(repo: pygit2.Repository, remote: str = "origin") -> FetchResult:
    _check_remote(repo, remote)
    ref = tracking_ref(remote)
    proc = run_git(
        workdir(repo),
        ["fetch", "--no-tags", "--no-write-fetch-head", remote, f"+{NOTES_REF}:{ref}"],
        check=False,
    )
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        if "couldn't find remote ref" in err:
            return FetchResult(
                remote=remote, ref=ref, fetched=None, merge=MergeResult(), local=ref_target(repo)
            )
        raise DejaError(f"git fetch {remote} failed: {_git_reason(err, proc.returncode)}")
    found = ref_object(repo, ref)
    if found is not None and found[1] != "commit":
        raise DejaError(
            f"{remote}'s {NOTES_REF} points at a {found[1]} ({found[0][:12]}), not a notes"
            " commit: nothing merged, the local notes are as they were",
            hint=f"ask whoever wrote it there; its copy is {ref}",
        )
    theirs = ref_target(repo, ref)
    if theirs is None:
        return FetchResult(remote=remote, ref=ref, fetched=None, merge=MergeResult())
    merge = merge_notes_ref(repo, theirs, remote)
    return FetchResult(remote=remote, ref=ref, fetched=theirs, merge=merge, local=ref_target(repo))


@dataclass
class PushResult:
    remote: str
    pushed: str | None = None
    attempts: int = 0
    merges: int = 0
    url: str = ""  # where the remote pushes to, its user and password left out
    dry_run: bool = False
    # a dry run: the notes commit that would be pushed, and whether the remote would
    # take it as it is (False: it has notes this clone lacks, merged first by a push)
    would_push: str | None = None
    fast_forward: bool | None = None
    # the remote held this very notes commit already (as last fetched or pushed)
    up_to_date: bool = False

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "remote": self.remote,
            "pushed": self.pushed,
            "attempts": self.attempts,
            "merges": self.merges,
            "url": self.url,
        }
        if not self.dry_run:
            doc["up_to_date"] = self.up_to_date
        if self.dry_run:
            doc |= {
                "dry_run": True,
                "would_push": self.would_push,
                "fast_forward": self.fast_forward,
            }
        return doc


def push_url(repo: pygit2.Repository, remote: str) -> str:
    """Where ``git push REMOTE`` sends to (a remote's push URL, or REMOTE itself when it
    is a URL or path), with any user and password in it left out: said before and
    after a push, so a clone of someone else's project shows where notes would go."""
    proc = run_git(workdir(repo), ["remote", "get-url", "--push", remote], check=False)
    url = proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else remote
    return _CREDENTIALS.sub(r"\1", url)


_CREDENTIALS = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@]*@")


def push_dry_run(repo: pygit2.Repository, remote: str = "origin") -> PushResult:
    """What ``push`` would send and where, sending nothing (``git push --dry-run``)."""
    _check_remote(repo, remote)
    tip = _tip_to_push(repo)
    result = PushResult(remote=remote, url=push_url(repo, remote), dry_run=True, would_push=tip)
    proc = run_git(
        workdir(repo),
        ["push", "--dry-run", "--quiet", remote, f"{NOTES_REF}:{NOTES_REF}"],
        check=False,
    )
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != 0 and not _rejected(err):
        raise DejaError(f"git push --dry-run {remote} failed: {_git_reason(err, proc.returncode)}")
    result.fast_forward = proc.returncode == 0
    return result


def _tip_to_push(repo: pygit2.Repository) -> str:
    """The notes commit a push sends (the ref checked as deja's first); none is an error."""
    check_notes_ref(repo)
    tip = ref_target(repo)
    if tip is None:
        raise DejaError(
            "there are no deja notes to push",
            hint="deja annotate REV (or A..B) writes the notes of commits sessions wrote",
        )
    return tip


def _rejected(err: str) -> bool:
    return any(s in err for s in ("[rejected]", "fetch first", "non-fast-forward", "stale info"))


def push(repo: pygit2.Repository, remote: str = "origin") -> PushResult:
    _check_remote(repo, remote)
    result = PushResult(remote=remote, url=push_url(repo, remote))
    root = workdir(repo)
    for attempt in range(1, PUSH_ATTEMPTS + 1):
        tip = _tip_to_push(repo)
        result.attempts = attempt
        # --porcelain: git says on stdout what it did to the ref ("=" up to date), which
        # the tracking ref (the remote as last fetched) cannot tell
        proc = run_git(
            root, ["push", "--porcelain", remote, f"{NOTES_REF}:{NOTES_REF}"], check=False
        )
        said = proc.stdout.decode("utf-8", "replace")
        if proc.returncode == 0:
            result.pushed = tip
            result.up_to_date = result.merges == 0 and any(
                row.startswith("=\t") for row in said.splitlines()
            )
            run_git(root, ["update-ref", tracking_ref(remote), tip], check=False)
            return result
        err = proc.stderr.decode("utf-8", "replace")
        if not _rejected(err + said):
            raise DejaError(f"git push {remote} failed: {_git_reason(err, proc.returncode)}")
        fetched = fetch(repo, remote)  # the remote moved: merge its notes, then again
        if fetched.merge.kind != "up-to-date":
            result.merges += 1
    raise DejaError(
        f"the notes on {remote} kept moving; gave up after {PUSH_ATTEMPTS} attempts",
        hint="run it again: deja notes push",
    )


def fetch_git_ai(repo: pygit2.Repository, remote: str) -> str:
    """Fetch git-ai's notes (``refs/notes/ai``) from ``remote``, fast-forward only:
    git-ai merges its own notes, and deja never rewrites another tool's ref.
    Returns what happened, in words."""
    from deja_blame.notes.gitai import GITAI_REF

    root = workdir(repo)
    probe = run_git(root, ["ls-remote", remote, GITAI_REF], check=False)
    if probe.returncode != 0:
        raise DejaError(f"cannot reach {remote}: " + _first_line(probe.stderr))
    if not probe.stdout.strip():
        return "none there"
    proc = run_git(
        root, ["fetch", "--no-tags", "--no-write-fetch-head", remote, f"{GITAI_REF}:{GITAI_REF}"],
        check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        return (
            "not fetched: they diverged from the local ones (merge them with git-ai's own"
            " fetch); " + _first_line(proc.stderr)
        )
    return "fetched"


def _git_reason(err: str, code: int) -> str:
    """git's reason in one line: its first ``fatal:`` (or ``error:``) line, not the
    advice after it ("Please make sure you have the correct access rights ...")."""
    lines = [ln.strip() for ln in err.strip().splitlines() if ln.strip()]
    for prefix in ("fatal: ", "error: "):
        for ln in lines:
            if ln.startswith(prefix):
                return ln.removeprefix(prefix)
    lines = [ln for ln in lines if not ln.startswith("hint:")]
    return lines[-1] if lines else f"exit {code}"


def _first_line(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip().splitlines()
    return text[0].removeprefix("fatal: ") if text else "git failed"
