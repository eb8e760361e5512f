"""Notes across the forge's server-side merges (``deja notes carry``).

A pull request merged with "Squash and merge" or "Rebase and merge" makes new
commits on the server: no local hook runs, so they have no note, although the
pull request's own commits carried them. Run in CI on every push to the default
branch, this gives each new commit its note by carrying the pull request's
notes over by line text, as the local rewrite hook does (``rewrite_notes``):
no transcripts are needed.

Which old commits a new one came from:

- a merge commit: nothing to carry (``git blame`` follows its parents to the
  pull request's commits, whose notes apply as they are);
- a commit that is itself one of the pull request's (a fast-forward): nothing;
- a commit whose message names its pull request (GitHub's squash subject
  "Title (#123)", GitLab's "See merge request group/project!123"): a squash,
  every commit of that pull request;
- else the pull request commit with the same patch id (``git patch-id
  --stable``), or the same author, author date and message (a rebase merge
  that had to resolve a conflict): a rebase, that one commit;
- else, by text: every candidate commit (only lines this commit introduced and
  whose text an old commit's note claims are carried).

The pull request's commits are those of its head (``refs/pull/N/head`` on
GitHub, ``refs/merge-requests/N/head`` on GitLab, fetched from the remote) that
the target branch did not have before the push. A plain git remote has no such
heads: there the remote's branches stand for them (a squash of a whole branch, by
its change's patch id; a rebase merge's commit, by one branch commit's).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pygit2

from deja_blame.errors import DejaError
from deja_blame.gitcli import is_commit
from deja_blame.gitutil import run_git, workdir
from deja_blame.notes.annotate import rewrite_notes
from deja_blame.notes.lookup import read_note
from deja_blame.notes.store import note_blob_map, ref_target
from deja_blame.objectid import ID

FORGE_REFS = {
    "github": "refs/pull/{n}/head",
    "gitlab": "refs/merge-requests/{n}/head",
}
LOCAL_PREFIX = "refs/deja-carry/"  # where fetched pull request heads are kept
NULL = re.compile(r"^0{40}(?:0{24})?$")
_HEX = re.compile(rf"^{ID}$")
# GitHub squash: "Subject (#123)"; GitHub merge: "Merge pull request #123 from ...";
# GitLab: "See merge request group/project!123" in the merge or squash commit
_SQUASH_SUBJECT = re.compile(r"\(#(\d{1,9})\)\s*$")
_GITHUB_MERGE = re.compile(r"^Merge pull request #(\d{1,9}) ")
_GITLAB_MR = re.compile(r"^See merge request \S*!(\d{1,9})\s*$", re.MULTILINE)
MAX_SOURCES = 500  # commits of one pull request read at most


@dataclass
class CarriedCommit:
    """One new commit of the target branch and what it was given."""

    commit: str
    how: str  # squash | rebase | text | merge | already | none
    pull: str | None = None  # the pull request the message names
    sources: list[str] = field(default_factory=list)
    lines: int = 0  # lines its note claims afterwards
    # the remote's branch found holding the squashed change, or the rebased commit
    # (no pull request head)
    branch: str | None = None
    # its note was there already, as this run would write it (a run repeated)
    unchanged: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "how": self.how,
            "pull": self.pull,
            "sources": self.sources,
            "lines": self.lines,
            "branch": self.branch,
            "unchanged": self.unchanged,
        }


@dataclass
class CarryResult:
    range: str
    pulls: dict[str, str | None] = field(default_factory=dict)  # number -> head (None: absent)
    commits: list[CarriedCommit] = field(default_factory=list)

    @property
    def noted(self) -> int:
        return sum(1 for c in self.commits if c.lines)

    @property
    def changed(self) -> int:
        """The commits whose note this run wrote or changed (0 for a run repeated)."""
        return sum(1 for c in self.commits if c.lines and not c.unchanged)

    def to_json(self) -> dict[str, Any]:
        return {
            "range": self.range,
            "pulls": self.pulls,
            "commits": [c.to_json() for c in self.commits],
            "noted": self.noted,
            "changed": self.changed,
        }


def pulls_named(message: str) -> list[str]:
    """The pull (merge) request numbers a merge or squash commit's message names."""
    lines = message.strip().splitlines()
    subject = lines[0] if lines else ""
    found: list[str] = []
    for m in (_SQUASH_SUBJECT.search(subject), _GITHUB_MERGE.match(subject)):
        if m:
            found.append(m.group(1))
    found += _GITLAB_MR.findall(message)
    return list(dict.fromkeys(found))


def _rev_list(repo: pygit2.Repository, args: list[str]) -> list[str]:
    proc = run_git(workdir(repo), ["rev-list", *args], check=False)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DejaError(f"git rev-list {' '.join(args)} failed: {err[-1] if err else '?'}")
    return proc.stdout.decode().split()


def _commit_id(repo: pygit2.Repository, rev: str) -> str:
    if rev.startswith("-"):
        raise DejaError(f"{rev!r} is not a revision")
    proc = run_git(workdir(repo), ["rev-parse", "--verify", "-q", f"{rev}^{{commit}}"], check=False)
    sha = proc.stdout.decode().strip()
    if proc.returncode != 0 or not _HEX.match(sha):
        raise DejaError(f"unknown revision {rev!r}", hint="fetch it first (git fetch origin)")
    return sha


def target_commits(repo: pygit2.Repository, spec: str) -> tuple[str | None, list[str]]:
    """``BEFORE..AFTER`` (a push: BEFORE may be all zeros for a new branch) or one
    revision -> (the branch's tip before, the new commits along its first parents,
    oldest first)."""
    if ".." in spec:
        before, _, after = spec.partition("..")
        after_sha = _commit_id(repo, after or "HEAD")
        if not before or NULL.match(before):
            return None, [after_sha]
        before_sha = _commit_id(repo, before)
        return before_sha, _rev_list(
            repo, ["--first-parent", "--reverse", after_sha, "--not", before_sha]
        )
    sha = _commit_id(repo, spec)
    commit = repo[sha]
    assert is_commit(commit)
    parent = str(commit.parent_ids[0]) if commit.parent_ids else None
    return parent, [sha]


def fetch_pull(repo: pygit2.Repository, remote: str, number: str, forge: str) -> str | None:
    """Fetch the head of pull request ``number`` from ``remote``; its commit, or None
    when the remote has no such ref."""
    if not number.isdigit():
        raise DejaError(f"{number!r} is not a pull request number")
    remote_ref = FORGE_REFS[forge].format(n=int(number))
    local = f"{LOCAL_PREFIX}{forge}/{int(number)}"
    proc = run_git(
        workdir(repo),
        [
            "fetch",
            "--no-tags",
            "--no-write-fetch-head",
            "--quiet",
            remote,
            f"+{remote_ref}:{local}",
        ],
        check=False,
    )
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace")
        if "couldn't find remote ref" in err:
            return None
        lines = [ln for ln in err.strip().splitlines() if ln.strip()]
        raise DejaError(f"git fetch {remote} {remote_ref} failed: {lines[-1] if lines else '?'}")
    return _commit_id(repo, local)


def _patch_ids(repo: pygit2.Repository, shas: list[str]) -> dict[str, str]:
    """commit -> its stable patch id (commits with an empty diff have none)."""
    if not shas:
        return {}
    root = workdir(repo)
    diff = run_git(
        root, ["diff-tree", "--stdin", "-p", "--root", "-r"], input="\n".join(shas).encode() + b"\n"
    )
    proc = run_git(root, ["patch-id", "--stable"], input=diff.stdout)
    out: dict[str, str] = {}
    for line in proc.stdout.decode().splitlines():
        parts = line.split()
        if len(parts) == 2:
            out[parts[1]] = parts[0]
    return out


MAX_BRANCHES = 200  # remote branches compared with a squash at most


def _branch_squashed(
    repo: pygit2.Repository, remote: str, before: str, sha: str, patch_id: str | None
) -> tuple[str, list[str]] | None:
    """(``remote/BRANCH``, its commits the target branch did not have ``before``) of the
    remote-tracking branch whose whole change (from where it left ``before``'s history
    to its tip) has the patch id of commit ``sha``: the branch a squash merge made
    ``sha`` of. None: none, or more than one does."""
    root = workdir(repo)
    if patch_id is None:
        patch_id = _patch_ids(repo, [sha]).get(sha)
    if patch_id is None:
        return None
    proc = run_git(
        root,
        ["for-each-ref", "--format=%(objectname) %(refname)", f"refs/remotes/{remote}/"],
        check=False,
    )
    tips: list[tuple[str, str]] = []
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        tip, _, ref = line.partition(" ")
        name = ref[len("refs/remotes/") :]
        if name.endswith("/HEAD") or tip == sha:
            continue
        tips.append((tip, name))
    found: list[tuple[str, str]] = []
    patches = bytearray()
    for tip, _name in tips[:MAX_BRANCHES]:
        base = run_git(root, ["merge-base", before, tip], check=False).stdout.decode().strip()
        if not _HEX.match(base) or base == tip:
            continue  # unrelated, or merged into the branch already
        # plumbing, as the squash's own patch is made: git diff would follow the
        # person's diff.context, diff.renames, diff.algorithm, textconv, another patch id
        diff = run_git(root, ["diff-tree", "-p", "-r", base, tip], check=False)
        patches += f"commit {tip}\n".encode() + diff.stdout
    if patches:
        ids = run_git(root, ["patch-id", "--stable"], input=bytes(patches), check=False)
        names = dict(tips)
        for line in ids.stdout.decode().splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == patch_id and parts[1] in names:
                found.append((parts[1], names[parts[1]]))
    if len(found) != 1:
        return None
    tip, name = found[0]
    return name, _rev_list(repo, ["--reverse", "--no-merges", tip, "--not", before])[-MAX_SOURCES:]


MAX_BRANCH_COMMITS = 2_000  # commits of the remote's branches compared with a rebase at most


def _branch_commits_by_patch(
    repo: pygit2.Repository, remote: str, before: str, after: str
) -> dict[str, tuple[str, str]]:
    """patch id -> (commit, ``remote/BRANCH``) of the commits of the remote's branches
    that neither ``before`` nor ``after`` holds, the newest first: what a rebase merge
    on a plain git remote (no ``refs/pull/N/head``) replayed onto the branch. One
    ``git log`` for every branch (``%S``: the branch each commit was reached from),
    one ``patch-id`` for every commit."""
    proc = run_git(
        workdir(repo),
        [
            "log",
            "--no-merges",
            "--source",
            "--format=%H %S",
            f"--max-count={MAX_BRANCH_COMMITS}",
            f"--glob=refs/remotes/{remote}/*",
            "--not",
            before,
            after,
        ],
        check=False,
    )
    branch_of: dict[str, str] = {}
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        sha, _, ref = line.partition(" ")
        if _HEX.match(sha) and ref.startswith("refs/remotes/") and not ref.endswith("/HEAD"):
            branch_of.setdefault(sha, ref[len("refs/remotes/") :])
    found: dict[str, tuple[str, str]] = {}
    for sha, pid in _patch_ids(repo, list(branch_of)).items():
        found.setdefault(pid, (sha, branch_of[sha]))
    return found


def _identity(commit: pygit2.Commit) -> tuple[str, str, int, str]:
    """What a rebase keeps of a commit: its author, author date and message."""
    return (commit.author.name, commit.author.email, commit.author.time, commit.message.strip())


def carry_notes(
    repo: pygit2.Repository,
    spec: str,
    *,
    remote: str | None = "origin",
    pulls: list[str] | None = None,
    sources: list[str] | None = None,
    forge: str = "github",
) -> CarryResult:
    """Give the new commits of ``spec`` (``BEFORE..AFTER`` or one commit) the notes of
    the pull requests they came from. ``pulls``: numbers to fetch from ``remote``
    besides those the messages name; ``sources``: revisions or ranges whose commits
    are candidates too (a ref alone: its commits the branch did not have before)."""
    if forge not in FORGE_REFS:
        raise DejaError(f"unknown forge {forge!r} (one of {', '.join(FORGE_REFS)})")
    result = CarryResult(range=spec)
    before, targets = target_commits(repo, spec)
    not_before = ["--not", before] if before else []
    commits = {sha: repo[sha] for sha in targets}

    # The pull requests named (by the caller, by the messages) and their commits.
    numbers = list(pulls or [])
    for sha in targets:
        numbers += pulls_named(commits[sha].message or "")  # type: ignore[attr-defined]
    pull_commits: dict[str, list[str]] = {}
    for number in dict.fromkeys(numbers):
        head = fetch_pull(repo, remote, number, forge) if remote else None
        result.pulls[number] = head
        if head is not None:
            found = _rev_list(repo, ["--reverse", "--no-merges", head, *not_before])
            pull_commits[number] = found[-MAX_SOURCES:]
    extra: list[str] = []
    for rev in sources or []:
        if ".." in rev or rev.startswith("^"):
            extra += _rev_list(repo, ["--reverse", "--no-merges", *rev.split()])
        else:
            extra += _rev_list(
                repo, ["--reverse", "--no-merges", _commit_id(repo, rev), *not_before]
            )
    pool = list(dict.fromkeys([c for cs in pull_commits.values() for c in cs] + extra))
    pool = [c for c in pool if c not in commits]  # a fast-forward: already on the branch
    pool_set = set(pool)

    # Matching for rebases: patch ids first, then what a rebase keeps of a commit.
    singles = [sha for sha in targets if len(commits[sha].parent_ids) == 1]  # type: ignore[attr-defined]
    ids = _patch_ids(repo, singles + pool) if pool else {}
    by_patch: dict[str, list[str]] = {}
    by_identity: dict[tuple[str, str, int, str], list[str]] = {}
    for c in pool:
        if c in ids:
            by_patch.setdefault(ids[c], []).append(c)
        obj = repo[c]
        assert is_commit(obj)
        by_identity.setdefault(_identity(obj), []).append(c)

    pairs: list[tuple[str, str]] = []
    # a plain git remote's branches' commits by patch id, read when first needed
    branch_patches: dict[str, tuple[str, str]] | None = None
    for sha in targets:
        commit = commits[sha]
        assert is_commit(commit)
        named = [n for n in pulls_named(commit.message or "") if pull_commits.get(n)]
        entry = CarriedCommit(commit=sha, how="none", pull=named[0] if named else None)
        result.commits.append(entry)
        if len(commit.parent_ids) > 1:
            entry.how = "merge"  # blame follows its parents to the notes that apply
            continue
        if sha in pool_set or any(sha in cs for cs in pull_commits.values()):
            entry.how = "already"
            continue
        if named:
            entry.how = "squash"
            entry.sources = [c for n in named for c in pull_commits[n]]
        elif (pid := ids.get(sha)) and by_patch.get(pid):
            # the same patch: a rebase keeps the commit's author date and message, a
            # squash of a one-commit pull request makes its own
            source = by_patch[pid][0]
            old_commit = repo[source]
            assert is_commit(old_commit)
            entry.how = "rebase" if _identity(old_commit) == _identity(commit) else "squash"
            entry.sources = [source]
        elif by_identity.get(_identity(commit)):
            entry.how = "rebase"
            entry.sources = [by_identity[_identity(commit)][0]]
        elif pool:
            entry.how = "text"
            entry.sources = list(pool)
        elif remote and before is not None and len(commit.parent_ids) == 1:
            # no pull request head (a plain git remote keeps no refs/pull/N/head):
            # the remote's branch whose change this commit squashed, by patch id
            if branch_patches is None:  # read once, for every commit left
                branch_patches = _branch_commits_by_patch(repo, remote, before, targets[-1])
                ids = {**_patch_ids(repo, [c for c in singles if c not in ids]), **ids}
            squashed = _branch_squashed(repo, remote, before, sha, ids.get(sha))
            if squashed is not None:
                entry.how, entry.branch = "squash", squashed[0]
                entry.sources = squashed[1]
            elif (pid := ids.get(sha)) is not None and pid in branch_patches:
                # one commit of a remote branch with the same patch: a rebase merge
                # (a squash of a one-commit branch is found just above)
                source, entry.branch = branch_patches[pid]
                old_commit = repo[source]
                assert is_commit(old_commit)
                same = _identity(old_commit) == _identity(commit)
                entry.how = "rebase" if same else "squash"
                entry.sources = [source]
        pairs += [(old, sha) for old in entry.sources]
    before_notes = note_blob_map(repo, ref_target(repo))
    if pairs:
        # The pull request's notes were published: carry their prompts as they are.
        rewrite_notes(repo, pairs, None, include_prompts=True)
    after_notes = note_blob_map(repo, ref_target(repo))
    for entry in result.commits:
        note = read_note(repo, entry.commit)
        entry.lines = note.line_count() if note is not None else 0
        blob = after_notes.get(entry.commit)
        entry.unchanged = blob is not None and before_notes.get(entry.commit) == blob
    return result
