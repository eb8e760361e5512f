"""git blame's plain answer for a whole file (no ``-M``, no ``-C``), computed in
process where a question about many files has read the repository's history.

``copy_blame`` ports ``blame.c``; with its moves and copies off it is git's plain
blame: the walk gives each commit's lines to the first parent with the same blob
(``pass_whole_blame``) or through the same diff to each parent that differs
(``pass_blame_to_parent``), and follows a whole-file rename where its
``find_rename`` answers as git does. ``deja stats`` blamed every file with a
``git blame`` process; once its moves rule has read the history (each commit's
changes, ``history.py``), a file's walk is a dict lookup for each commit that did
not change it, a blob read and a diff for each one that did. Checked equal to
``git blame --porcelain`` line for line (commit, path and line there) on every
file of entireio, click and express at several revisions
(``bench/plain_blame_check.py``).

Git answers where this module does not: a one-file question (the history is not
read for it), blame options, a configured ``blame.ignoreRevsFile``, a diff
configuration that changes git's (``gitread.plain_diff``), a libgit2 that
aligns lines otherwise, and what ``copy_blame`` leaves to git (``NotHere``: a
commit that deleted several files, a type change, an object missing).
"""

from __future__ import annotations

from collections import Counter

from deja_blame.attribution import blame_options
from deja_blame.attribution.facts import shared
from deja_blame.attribution.facts.copy_blame import CopyBlame, NotHere
from deja_blame.attribution.facts.gitread import git, plain_diff
from deja_blame.attribution.facts.history import RepoHistory, repo_history
from deja_blame.attribution.facts.model import BlameLine


def engine_history(root: str, rev: str) -> RepoHistory | None:
    """The history ``copy_blame`` walks for ``rev`` (a full commit id), where this
    question (``shared.active``) has read it already and git blame's answer is the
    engine's: default options, no ignored revisions, git's plain diff. None: ask git."""
    if not shared.active(root):
        return None  # a one-file question: the history is not read for it
    if not blame_options.current().default or not no_ignored_revs(root):
        return None
    if not plain_diff(root):
        return None  # a textconv driver or another diff: git compares otherwise
    history = repo_history(root)
    if not history.commits or not history.knows(rev):
        return None
    return history


def no_ignored_revs(root: str) -> bool:
    """No ``blame.ignoreRevsFile`` configured (asked once per question)."""

    def ask() -> bool:
        proc = git(root, ["config", "--get-all", "blame.ignoreRevsFile"])
        return proc is not None and proc.returncode == 1

    return shared.remembered(root, "no blame.ignoreRevsFile", ask)


def tried(root: str, rev: str, relpath: str) -> bool:
    """Whether ``plain_blame`` will try this question (no ``git blame`` need start
    early for it: it would be ended unread)."""
    history = engine_history(root, rev)
    return history is not None and not _rename_left_to_git(history, relpath)


def plain_blame(root: str, rev: str, relpath: str) -> list[BlameLine] | None:
    """``git blame --porcelain REV -- PATH``'s lines, in file order; None: ask git."""
    history = engine_history(root, rev)
    if history is None or _rename_left_to_git(history, relpath):
        return None
    text = history.read(f"{rev}:{relpath}")
    if text is None:
        return None
    try:
        engine = CopyBlame(root, history, history.read_many, _no_held, rev, relpath, text, False)
        count = engine.line_count()
        return engine.blame([(1, count)] if count else [])
    except NotHere:
        return None


def _rename_left_to_git(history: RepoHistory, path: str) -> bool:
    """Whether a commit changed ``path`` against every parent and added it against one
    it also deleted several files against (or one, and added more than 100): there
    ``copy_blame`` leaves the rename lookup to git, so a walk that reaches it is work
    lost (click: 57 of 166 files at HEAD). Renames are two changes each in the
    history (no detection)."""
    for cid in history.changing(path):
        commit = history.commits.get(cid)
        if commit is None or any(path not in changes for changes in commit.against):
            continue  # a parent with the same blob takes every line: no lookup
        for changes in commit.against:
            if changes[path][0] != "A":
                continue
            statuses = Counter(status for status, _ in changes.values())
            if statuses["D"] > 1 or (statuses["D"] and statuses["A"] > 100):
                return True
    return False


def _no_held(specs: list[str]) -> list[frozenset[bytes]]:
    raise AssertionError("a plain blame looks for no copies")  # copies off: never asked
