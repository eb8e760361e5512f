"""Commit-window evidence: was a write still the source of the line its commit brought?

git blame names the commit C that brought each line. A session's write of the
line's text is evidence for it when the write was made for C: after the
version of the file C was made from (C's parent for this file, its "floor").
A write older than that is *stale* when its text (indent aside) was in the
first commit that touched the file after the write: the session's work was
committed, and C brought the text again, so whoever did that (a person moving
or retyping it, another session) wrote it, not the old session. It stays
evidence when its text was never committed before C (the person staged other
hunks first), when C only re-indented the line (the version before C had it
with other white space and not as it is now, and C's version lost a copy at
that other indent), and for every line of a file C
restored byte for byte from an older commit. Trivial lines (blank, a lone
bracket) carry no text to tell these apart: for them a write older than the
floor is stale unless a line beside them, brought by the same commit, is one
that commit moved (its exact text was there before).

The file's history is one ``git log`` of the paths blame reported; versions are
read (one ``git cat-file --batch``) only for the lines that need the check, at
most MAX_VERSIONS of them and MAX_VERSION_LINES lines (past that the rules give
way to the matcher alone).
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING

from deja_blame.attribution.facts.model import CLOCK_SKEW

if TYPE_CHECKING:
    from deja_blame.attribution.facts.model import BlameLine, LineTexts
    from deja_blame.attribution.facts.versions import FileHistory


def opened_at(history: FileHistory, commit: str | None, prev: int | None) -> int | None:
    """The version (an index into the file's commits, newest first) a line's commit
    window opens at: the version its commit was made from (``prev``), or, where that
    version was committed in the same second as the line's commit, the newest version
    committed before that second (None: none). A series of commits made again at once
    (a rebase, a cherry-pick of several commits) has one committer time for all: the
    time of the version before says nothing of when its work was done, nor whether a
    session's write made between went into it or into this commit. Then the series is
    one window: a write made since the version before the series is fresh for each of
    its lines, and the matcher places it by its run, its time and where it landed
    (entireio ``status.go``: three commits rebased in one second; the session's
    ``if settings.Enabled {`` written for the third was turned away as committed in
    the first, which holds an older edit's copy of the text)."""
    if prev is None or commit is None:
        return prev
    own = history.position.get(commit)
    if own is None:
        return prev
    times = history.times
    k: int | None = prev
    while k is not None and times[k] == times[own]:
        parent = history.parent.get(history.commits[k])
        k = history.position.get(parent) if parent else None
    return k


class CommitWindow:
    """The commit-window rules over one file's lines (``stale``, ``existed``)."""

    def __init__(
        self,
        history: FileHistory,
        blamed: list[BlameLine | None],
        texts: LineTexts,
    ) -> None:
        self.history = history
        self.blamed = blamed
        self.lines = texts
        self.texts = texts.texts
        self.fps = texts.fps
        self.trivial = texts.trivial
        # the commit before each blamed commit in the file's history (the floor), as
        # an index into commits; the working tree's is the newest commit
        self.before: dict[str | None, int | None] = {}
        # times oldest first, to find the first commit after a write (a running
        # maximum: a rebase or a merge can put an older time after a newer one)
        self.ascending: list[int] = []
        self._stale: dict[tuple[int, float, int], bool] = {}  # (line, write time, copies)
        # per line: (its commit, the floor's index), and the floor's time less the
        # clock skew (None: no earlier version); made once, asked per write
        self._prevs: list[tuple[str | None, int | None]] = []
        self._opened: list[float | None] | None = None

    def _prepare(self) -> None:
        history = self.history
        history.load()
        commits = history.commits
        self.before[None] = 0 if commits else None
        for b in self.blamed:
            if b is None or b.commit in self.before:
                continue
            parent = history.parent.get(b.commit or "")
            self.before[b.commit] = history.position.get(parent) if parent else None
        for t in reversed(history.times):
            self.ascending.append(max(t, self.ascending[-1]) if self.ascending else t)
        times = history.times
        for b in self.blamed:
            commit = b.commit if b is not None else None
            self._prevs.append((commit, self.before.get(commit)))
        opens: dict[str | None, int | None] = {}  # the version each window opens at
        for b in self.blamed:
            commit = b.commit if b is not None else None
            if commit not in opens:
                opens[commit] = opened_at(history, commit, self.before.get(commit))
        self._opened = []
        for commit, prev in self._prevs:
            k = None if prev is None else opens[commit]
            self._opened.append(None if k is None else times[k] - CLOCK_SKEW)

    def _prev(self, i: int) -> tuple[str | None, int | None]:
        if self._opened is None:
            self._prepare()
        return self._prevs[i]

    def existed(self, i: int, fp: int) -> bool:
        """Whether text of fingerprint ``fp`` was in the file before line i's commit."""
        _, prev = self._prev(i)
        if prev is None or not self.history.readable(self.history.commits[prev]):
            return False
        return fp in self.history.fingerprints(self.history.commits[prev])

    def version(self, commit: str) -> list[str] | None:
        """The file's lines at ``commit`` (None: not a commit of its history, or past
        the half of the history's budget the commit-window rule spares: ``spare``)."""
        history = self.history
        history.load()
        if commit not in history.position or not history.spare(commit):
            return None
        return history.lines(commit)

    def fresh(self, i: int, at: float) -> bool:
        """Whether a write made at ``at`` is newer than the version line i's commit was
        made from (then it is never stale). Reads the log, no version of the file."""
        if self._opened is None:
            self._prepare()
        opened = self._opened[i]  # type: ignore[index]
        return opened is None or at >= opened

    def floor(self, i: int) -> float | None:
        """When line i's commit window opened: the time of the version its commit was
        made from, less the clock skew (None: no earlier version). Reads the log only."""
        if self._opened is None:
            self._prepare()
        return self._opened[i]  # type: ignore[index]

    def stale(self, i: int, at: float, copies: int = 0) -> bool:
        """Whether a write made at ``at`` of line i's text cannot be its source.
        ``copies``: how many lines of that text the write's edit wrote (``_brought``);
        0: not known, or another session wrote to the file since (the nearer
        writer): stale as soon as the first commit after the write held the text."""
        commit, prev = self._prev(i)
        history = self.history
        commits = history.commits
        opened = self._opened[i]  # type: ignore[index]
        if prev is None or opened is None or at >= opened:
            return False  # no earlier version, or written after it: in the window
        if commit in history.restores or not history.readable(commits[prev]):
            return False
        if self.trivial[i]:
            # moved with its block, or only its white space changed: git blame -w would
            # name the write's commit, and the answer must not depend on -w
            if self._moved_beside(i, commit, commits[prev]) or self._respaced(
                commit, commits[prev], i
            ):
                return False
            if copies <= 1:
                return True
            # an edit's blank lines and brackets: stale only where the first commit
            # after the write took as many as it wrote (not a split commit's first half)
            first = len(commits) - bisect_right(self.ascending, int(at + CLOCK_SKEW)) - 1
            stripped = self.texts[i].strip()
            return (
                first >= prev
                and history.readable(commits[first])
                and self._brought(first, stripped) >= copies
            )
        known = self._stale.get((i, at, copies))
        if known is not None:
            return known
        text = self.texts[i]
        stripped = text.strip()
        if self._reindented(commit, commits[prev], text, stripped):
            result = False  # there before with other white space: the commit re-indented it
        else:
            # the first commit after the write, no later than the one before the line's
            first = len(commits) - bisect_right(self.ascending, int(at + CLOCK_SKEW)) - 1
            result = (
                first >= prev
                and history.readable(commits[first])
                and history.has_stripped(commits[first], stripped)
                and (copies <= 0 or self._brought(first, stripped) >= copies)
            )
        self._stale[(i, at, copies)] = result
        return result

    def _brought(self, k: int, stripped: str) -> int:
        """How many lines of this text (any indent) the commit at ``k`` (the first after
        a write) added to the file: a write is committed there only if it brought
        as many as the write's edit made. A text the file held already
        (``validate(order)``, ``assert result.ok``) is in that commit whether or not
        it holds the write: the person split the session's work over several
        commits (``git add -p``, or a rebase), and the write's copies came in a
        later one. Where the version before cannot be read (the budget), every
        copy counts as brought, as before this rule."""
        history = self.history
        commits = history.commits
        now = history.count_stripped(commits[k], stripped)
        if k + 1 >= len(commits):
            return now  # the file's first version brought every line it has
        older = commits[k + 1]
        if not history.spare(older):
            return now
        return now - history.count_stripped(older, stripped)

    def _moved(self, commit: str | None, prev_sha: str, text: str) -> bool:
        """Whether ``commit`` moved this text: it was there before, and the commit's
        version does not have more copies of it (a person typing a second copy
        beside the first moved nothing)."""
        history = self.history
        if not history.has_text(prev_sha, text):
            return False
        if commit is None or commit not in history.position or not history.spare(commit):
            return True
        if not history.has_text(commit, text):
            return True  # gone from its old place: moved (or re-indented) away and here
        return history.count(commit, text) <= history.count(prev_sha, text)

    def _reindented(self, commit: str | None, prev_sha: str, text: str, stripped: str) -> bool:
        """Whether ``commit`` re-indented the line: the version before had its text
        only at another indent, and (where the commit's own version can be read) a
        copy at that indent is gone in it. A person typing the same text anew
        beside the old copy re-indented nothing."""
        history = self.history
        if not history.has_stripped(prev_sha, stripped) or history.has_text(prev_sha, text):
            return False
        if commit is None or commit not in history.position or not history.spare(commit):
            return True
        after = history.texts(commit)
        return any(t not in after for t in history.texts(prev_sha) if t.strip() == stripped)

    def _respaced(self, commit: str | None, prev_sha: str, i: int) -> bool:
        """Whether ``commit`` changed only this trivial line's white space (``y = 1`` to
        ``y = 1 ``, a blank line to one of spaces): the version before had the text
        only with other white space, and the commit's version has fewer copies of
        that spelling than the version before."""
        history = self.history
        text, norm = self.texts[i], self.lines.bare[i]
        if history.has_text(prev_sha, text):
            return False
        if self.fps[i] not in history.fingerprints(prev_sha):
            return False
        if commit is None or commit not in history.position or not history.spare(commit):
            return True
        before = history.spellings(prev_sha).get(norm, frozenset())
        return any(history.count(commit, t) < history.count(prev_sha, t) for t in before)

    def _moved_beside(self, i: int, commit: str | None, prev_sha: str) -> bool:
        """A blank line or bracket beside a line its commit moved (the same text was
        in the version before): it moved with its block."""
        texts, trivial = self.texts, self.trivial
        for step in (-1, 1):
            j = i + step
            while 0 <= j < len(texts) and abs(j - i) <= 3:
                if not trivial[j]:
                    b = self.blamed[j]
                    same = (b.commit if b is not None else None) == commit
                    if same and self._moved(commit, prev_sha, texts[j]):
                        return True
                    break
                j += step
        return False
