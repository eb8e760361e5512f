"""Whether ``git blame -C`` could name another file than the plain blame does.

The moves rule asks ``git blame -C`` where a file's unmatched lines came from
(``FactSource.blame_copies``). It costs more than the file's plain blame, and on
express ``deja stats`` ran it on 114 of 213 files, 88 of which it found nothing
moved in. Git finds a moved line only where the plain blame stops: a line's
commit ``C`` brought it (the plain blame passed it no further), and with ``-C``
git then looks for it, before ``C``, in the same file and in the files ``C``
changed (``blame.c``: ``find_move_in_parent``, ``find_copy_in_parent``). It passes
a block of lines it finds there only when the block holds more than 20 letters
and digits (``blame_entry_score``), so a block of brackets never moves alone.

So when no line of the ranges with a letter or a digit is in any of those files
before its commit (white space aside: a superset of git's exact lines), ``-C``
passes every line where the plain blame does, and its answer is the plain one.
Only then is git not asked: a root commit moves nothing, a merge or a commit
whose parent was not read is left to git, as are blame options, a configured
``blame.ignoreRevsFile`` (``blame_copies`` runs git without clearing it) and a
diff configuration (a textconv driver: git compares other text than the blobs').
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

from deja_blame.attribution import blame_options
from deja_blame.attribution.facts import shared
from deja_blame.attribution.facts.derived_blame import plain_diff
from deja_blame.attribution.facts.history import RepoHistory, repo_history
from deja_blame.attribution.facts.model import BlameLine
from deja_blame.gitutil import try_git

MAX_FILES = 256  # files read before one commit; a commit changing more goes to git
LINES_KEPT = 1024  # blobs' lines kept for one question


def plain_answer(
    root: str | Path, rev: str | None, relpath: str, plain: dict[int, BlameLine | None]
) -> list[BlameLine] | None:
    """``git blame -C``'s answer for the lines ``plain`` holds (line -> the plain
    blame's line) when it can only be the plain blame's own; None: ask git."""
    where = str(root)
    if rev is None or not plain or not shared.active(where):
        return None  # a one-file question: the history is not read for it
    if not blame_options.current().default or not _no_ignored_revs(where):
        return None
    if not plain_diff(where):
        return None  # a textconv driver: git compares other text than the blobs
    history = repo_history(where)
    if not history.commits or not history.knows(rev):
        return None
    text = history.read(f"{rev}:{relpath}")
    if text is None:
        return None
    lines = _bare_lines(text)
    brought: dict[tuple[str, str], list[list[bytes]]] = {}  # (commit, path) -> runs of lines
    last: dict[tuple[str, str], int] = {}
    for n, b in sorted(plain.items()):
        if b is None or b.commit is None or not 0 < n <= len(lines) or b.line != n:
            return None
        key = (b.commit, b.orig_path)
        runs = brought.setdefault(key, [])
        if last.get(key) != n - 1:
            runs.append([])  # git moves a block of consecutive lines of one commit
        runs[-1].append(lines[n - 1])
        last[key] = n
    for (commit, path), runs in brought.items():
        c = history.commits.get(commit)
        if c is None or len(c.parents) > 1:
            return None
        if not c.parents:
            continue  # a root commit: nothing before it to come from
        parent = c.parents[0]
        if parent not in history.commits:
            return None
        changed = c.against[0] if c.against else {}
        # the files the commit changed that were there before it (a file it
        # renamed is a deletion here), and the file itself: where git looks
        files = {path} | {f for f, (status, _) in changed.items() if status != "A"}
        if len(files) > MAX_FILES:
            return None
        # the file itself first, alone: where a line most often is again (then no
        # other file need be read)
        specs = [f"{parent}:{f}" for f in [path, *sorted(files - {path})]]
        for part in (specs[:1], specs[1:]):
            for held in _lines_of(where, history, part) if part else ():
                if any(_could_move(run, held) for run in runs):
                    return None
    return [b for _, b in sorted(plain.items()) if b is not None]


def _lines_of(root: str, history: RepoHistory, specs: list[str]) -> list[set[bytes]]:
    """Each blob's lines, bare: kept for the question (files' lines come from the
    same big commits again and again), up to ``LINES_KEPT`` blobs."""
    kept: dict[str, set[bytes]] = shared.kept(root, "bare lines", dict) or {}
    with _LOCK:  # stats' threads share the question's
        got = {spec: kept[spec] for spec in specs if spec in kept}
    missing = [spec for spec in specs if spec not in got]
    if missing:
        for spec, blob in zip(missing, history.read_many(missing)):
            got[spec] = set(_bare_lines(blob or b""))
        with _LOCK:
            for spec in missing:
                while len(kept) >= LINES_KEPT:
                    kept.pop(next(iter(kept)))
                kept[spec] = got[spec]
    return [got[spec] for spec in specs]


_LOCK = threading.Lock()


def _could_move(run: list[bytes], held: set[bytes]) -> bool:
    """Whether consecutive lines of ``run`` that the file ``held`` all has could make
    a block git moves: one scoring over ``MOVE_SCORE`` letters and digits."""
    score = 0
    for line in run:
        if line in held:
            score += len(_SCORED.findall(line))
            if score >= MOVE_SCORE:
                return True
        else:
            score = 0
    return False


def _bare_lines(text: bytes) -> list[bytes]:
    """The text's lines without white space (lines equal here may differ for git:
    more found, never fewer)."""
    return text.translate(None, _SPACE).split(b"\n")


_SPACE = b" \t\r\x0b\x0c"  # bytes.split()'s white space, the newline aside


# git's bar for a moved block (``blame_move_score``; copies from other files have a
# higher one, 40): a block's score is 1 + its letters and digits, and must pass it
MOVE_SCORE = 20
# a letter or a digit to git; any byte past ASCII too (more counted, never fewer)
_SCORED = re.compile(rb"[0-9A-Za-z\x80-\xff]")


def _no_ignored_revs(root: str) -> bool:
    """No ``blame.ignoreRevsFile`` configured (asked once per question)."""

    def ask() -> bool:
        proc = try_git(root, ["config", "--get-all", "blame.ignoreRevsFile"])
        return proc is not None and proc.returncode == 1

    return shared.remembered(root, "no blame.ignoreRevsFile", ask)
