"""Stage 2 of the moves rule: which of the lines the other rules left unmatched moved
here from another file, and a block a person moved here keeps its session.

Stage 1 (``facts/moved.py``: ``where_from``) found, for the lines left, which files
sessions wrote their texts to and what ``git blame -C`` says of their blocks
(``MoveFacts``). Here it is judged which moved (``moved_here``): the lines -C says
came from another file; the lines whose text left a file in the commit that
brought them here (a rename git did not see as one, a session's new function the
person moved before committing: ``_left_behind``); every line that commit brought
from a file that left whole and is mostly here; the blocks of files git never had
(renamed before their first commit). What the judgement needs of git's history
and the index depends on what it found so far: it reads the answers stage 1 gave
(``MoveFacts.answers``) and says what it lacked, which stage 1 reads before it
judges again (``Judgement``; no git, SQL or thread here). Stage 1 then
reads the writes to the files they came from, the matcher matches those lines as
their blame where they came from says (``match.match_moved``), and here: which of
those matches stand (``keep_blocks``). Moved lines are less certain than lines
matched in place.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from deja_blame.attribution.facts.model import (
    CLOCK_SKEW,
    MOVED_BLOCK,
    BlameLine,
    LineTexts,
    MovedLines,
    PathLog,
    PathLogIndex,
    has_line,
)
from deja_blame.attribution.match.scaffolding import is_comment, is_distinctive

if TYPE_CHECKING:
    from deja_blame.attribution.facts.model import FileFacts
    from deja_blame.attribution.facts.rule_facts import MoveFacts
    from deja_blame.attribution.model import LineAttribution

LEFT_BEHIND_COMMITS = 24  # commits examined for text that left a file unseen, per file

MOVED_CONFIDENCE = 0.9  # of a line matched in place


def block_texts(
    lines: list[LineAttribution], trivial: list[bool], moved: list[bool], left_file: list[bool]
) -> dict[str, set[str]]:
    """Each session's different texts among the lines given it as moved here that
    say who wrote them: lines whose text left the file the session wrote them in (a
    move), or distinctive lines (``scaffolding.py``)."""
    texts: dict[str, set[str]] = {}
    for k, ln in enumerate(lines):
        if moved[k] and ln.session is not None and ln.via == "index" and not trivial[k]:
            if left_file[k] or (is_distinctive(ln.text) and not is_comment(ln.text)):
                texts.setdefault(ln.session, set()).add(ln.text.strip())
    return texts


def keep_blocks(
    lines: list[LineAttribution],
    trivial: list[bool],
    moved: list[bool],
    left_file: list[bool],
    whole: Mapping[str, set[int]] | None = None,
) -> None:
    """A session keeps the lines it was given as moved here only where at least
    ``MOVED_BLOCK`` different lines of its own moved here that say who wrote them
    (``block_texts``). One ``import re`` that arrived with a person's new code is a
    line that happens to recur; so are the imports, the fixture and the short
    asserts a person types into a new test file that a session once wrote into
    another (git blame -C finds them all the same).

    The count is the whole file's. A window (``deja why``, ``blame -L``) sees a few
    of a session's moved lines: where they fall short, a line keeps its session
    only where the whole file's answer gives it that session (``whole``: session ->
    the file's lines it is given, made by stage 1 at the first ask, since it costs
    the whole file's answer). Counting the window's lines alone dropped what the
    whole file keeps (entireio ``transcript/parse.go``: the session's imports moved
    70 lines above); adding the whole file's count to a window that matched a moved
    line to another writer than the whole file did gave it a session the file does
    not (``reset.go``)."""
    texts = block_texts(lines, trivial, moved, left_file)
    for k, ln in enumerate(lines):
        if not (moved[k] and ln.via == "index"):
            continue
        if len(texts.get(ln.session or "", ())) >= MOVED_BLOCK:
            continue
        if whole is not None and ln.session and ln.line in whole.get(ln.session, ()):
            continue  # short here, but the whole file gives it this session
        ln.session = ln.source = ln.written_at = None
        ln.confidence = None
        ln.edit_ord = None
        ln.via = None


def short_sessions(
    lines: list[LineAttribution], trivial: list[bool], moved: list[bool], left_file: list[bool]
) -> set[str]:
    """The sessions given lines as moved here with fewer than ``MOVED_BLOCK`` different
    lines of their own that say who wrote them (``block_texts``): those ``keep_blocks``
    drops, unless the whole file's answer gives them the line (in a window, where
    the whole file's count is not seen: stage 1 makes that answer for them only)."""
    texts = block_texts(lines, trivial, moved, left_file)
    return {
        ln.session
        for k, ln in enumerate(lines)
        if moved[k]
        and ln.via == "index"
        and ln.session
        and len(texts.get(ln.session, ())) < MOVED_BLOCK
    }


def less_certain(lines: list[LineAttribution], moved: list[bool]) -> None:
    """Moved lines are less certain than lines matched in place."""
    for k, ln in enumerate(lines):
        if moved[k] and ln.session is not None and ln.confidence is not None:
            ln.confidence = round(ln.confidence * MOVED_CONFIDENCE, 2)


class Unanswered(Exception):
    """A question of the judgement stage 1 has not answered yet (``Answers``)."""


class Answers:
    """What the judgement asks of git's history and the index (``MoveAsks``' questions),
    read from the answers stage 1 gave (``MoveFacts.answers``). A question not answered
    yet is noted (``asked``, in the order asked) and raises ``Unanswered``: the round's
    judgement does not stand, and stage 1 answers what it lacked before the next."""

    def __init__(self, known: Mapping[tuple[Any, ...], Any]) -> None:
        self.known = known
        self.asked: dict[tuple[Any, ...], None] = {}

    def _answer(self, *question: Any) -> Any:
        try:
            return self.known[question]
        except KeyError:
            self.asked[question] = None
            raise Unanswered from None

    def text_at(self, rev: str, path: str) -> str:
        return self._answer("text_at", rev, path)

    def holds(self, rev: str, path: str, text: str) -> bool:
        return self._answer("holds", rev, path, text)

    def solid_lines_at(self, rev: str, path: str) -> set[str]:
        return self._answer("solid_lines_at", rev, path)

    def touched(self, commit: str) -> dict[str, tuple[str, str | None]]:
        return self._answer("touched", commit)

    def renamed_to(self, commit: str, path: str) -> set[str]:
        return self._answer("renamed_to", commit, path)

    def path_log(self, path: str) -> PathLog:
        return self._answer("path_log", path)

    def log_index(self, path: str) -> PathLogIndex:
        return self._answer("log_index", path)

    def parent_time(self, commit: str) -> int | None:
        return self._answer("parent_time", commit)

    def write_times(self, pid: int, fp: int) -> list[float]:
        return self._answer("write_times", pid, fp)

    def paths_git_lacks(self, names: dict[int, str]) -> set[int]:
        return self._answer("paths_git_lacks", tuple(names.items()))


@dataclass
class Judgement:
    """``moved_here``'s answer: the lines moved (``MovedLines``; None where none did),
    which stands only where it lacked no answer (``asked``: empty; else stage 1
    answers those, ``moved.answer_asked``, and the judgement is made again)."""

    moved: MovedLines | None
    asked: list[tuple[Any, ...]] = field(default_factory=list)


def moved_here(facts: FileFacts, found: MoveFacts) -> Judgement:
    """Which of the lines the rules left unmatched moved here from another file, from
    what stage 1 ``found`` (``MoveFacts``, its ``answers`` included). The paths of the
    answer (``MovedLines.paths``) add the files they came from to the file's own;
    stage 1 reads those files' writes (``FactSource.for_moved``).

    Its questions are asked in steps, each on what the one before found: where a
    step lacks an answer, each line or block goes on without it (it asks the rest of
    what it needs), and the judgement stops there, saying what it lacked: a round of
    stage 1 answers them all at once. Within a step no answer decides which other
    line asks what; across steps they do, so a step waits for the one before."""
    ask = Answers(found.answers)
    try:
        moved = _judged(facts, found, ask)
    except Unanswered:
        moved = None
    return Judgement(moved, list(ask.asked))


def _judged(facts: FileFacts, found: MoveFacts, ask: Answers) -> MovedLines | None:
    """``moved_here``'s judgement, reading ``ask``; ``Unanswered`` at the end of a step
    that lacked an answer."""
    lines, texts, by_line = facts.lines, facts.texts, facts.blamed
    paths, skip = facts.paths, facts.settled or None
    elsewhere, names, ranges = found.elsewhere, found.names, found.ranges
    whole = _whole_file_sources(lines, texts, found.todo, elsewhere)
    first = lines[0].line
    moved = [False] * len(lines)
    # lines whose text left the file it came from in the commit that brought it here
    # (a move, not a copy): they need no distinctive text (``keep_blocks``)
    left_file = [False] * len(lines)
    evidence = list(by_line)
    holds = ask.holds
    for k, b in found.copied:
        evidence[k] = b
        moved[k] = True
        brought = by_line[k]
        if brought is not None and brought.commit is not None:
            # still in the file it came from after the commit that brought it
            # here: a copy (the scaffolding a person types into a new test
            # file), which must be distinctive to keep its session
            try:
                left_file[k] = not holds(brought.commit, b.orig_path, lines[k].text)
            except Unanswered:
                pass
    _step_done(ask)
    more = dict(found.named)

    # Work that left a file in the commit that brought it here, never committed
    # where the session wrote it: a rename git did not see as one (the person
    # moved the file and the release changed half of it), or a session's new
    # function the person moved before committing. Neither blame nor -C can
    # point at it; that the commit deleted the file, or that a session wrote the
    # text there after the file's last commit, can.
    left = _left_behind(
        ask,
        lines,
        texts,
        evidence,
        ranges,
        first,
        elsewhere,
        names,
        ask.write_times,
        holds,
        whole,
    )
    _step_done(ask)
    renamed: dict[str, set[int]] = {}  # commit -> files it deleted that moved here
    texts_here = {ln.text.strip() for ln, trivial in zip(lines, texts.trivial) if not trivial}
    for k, pids in left.items():
        moved[k] = True
        brought = evidence[k]
        try:
            left_file[k] = left_a_file_git_had(
                pids,
                whole,
                lambda pid: bool(ask.path_log(names[pid])),
                partial(_taken_out, ask, holds, brought, lines[k].text, texts.trivial[k]),
            )
        except Unanswered:
            pass
        more.update(dict.fromkeys((pid for pid in pids if pid not in paths), True))
        if brought is None or brought.commit is None:
            continue
        for pid in pids:
            if brought.commit in renamed and pid in renamed[brought.commit]:
                continue
            try:
                log = ask.path_log(names[pid])
                if _deleted_in(log, brought.commit) and _mostly_here(
                    ask, brought.commit, names[pid], texts_here
                ):
                    renamed.setdefault(brought.commit, set()).add(pid)
            except Unanswered:
                pass
    _step_done(ask)
    # A file that left whole and is mostly here (a rename git missed: the same
    # commit rewrote much of it): every line that commit brought here may be its,
    # not only the blocks found (a lone docstring line, a blank). A new module
    # that took some blocks of a deleted one is not that module: only the blocks.
    for k, ln in enumerate(lines):
        brought = evidence[k]
        if not moved[k] and ln.session is None and brought is not None:
            moved[k] = left_file[k] = brought.commit in renamed
    # A file a session wrote that the person renamed before the first commit: git
    # never had the session's path, so neither blame nor -C can point at it.
    # "Had" is: some commit the revision reaches changed the path (paths_had), a
    # merged side branch's included, each path on its own. git's log of the paths
    # asked together counted a side branch's path as had or not by which other
    # paths were asked beside it; a path git held anywhere in the history is no
    # file only the session knew, so its texts are left to blame and -C.
    wrote = {pid for pids in elsewhere.values() for pid in pids} - set(more)
    gone = ask.paths_git_lacks({pid: names[pid] for pid in wrote})
    for start, end in ranges if gone else ():
        block = range(start - first, end - first + 1)
        for k in block:
            if not moved[k] and lines[k].session is None and lines[k].commit is not None:
                moved[k] = left_file[k] = True
        from_gone = _written_for_commit(ask, lines, texts, evidence, block, gone, elsewhere, whole)
        more.update(dict.fromkeys(from_gone, True))
    _step_done(ask)
    if skip:
        moved = [m and not done for m, done in zip(moved, skip)]
    if not any(moved):
        return None
    return MovedLines(evidence, moved, left_file, {**paths, **more})


def _step_done(ask: Answers) -> None:
    """A step of the judgement ends: the next reads what it found, so where it lacked
    an answer the judgement stops here (``Unanswered``)."""
    if ask.asked:
        raise Unanswered


def left_a_file_git_had(
    pids: set[int], whole: set[int], had: Callable[[int], bool], taken_out: Callable[[], bool]
) -> bool:
    """Whether a text that left the files ``pids`` (``_left_behind``) moved: it left
    one git had by this revision (``had``: its log is not empty), or one this file
    mostly is (``whole``: renamed before its first commit), or git's own diff of the
    line's commit took the text out of another file (``taken_out``: the same file
    under the name git had, the session's path being older).

    A file git never had "loses" every text it held (nothing of it is there after
    the commit), so what left only such files, with nothing taken out of a file in
    git, is judged as a copy is (``match.moves.keep_blocks``: two distinctive
    lines): a person's new test in ``common_test.go`` (entireio eac9e693) gave its
    ``tmpDir := t.TempDir()``, ``if err != nil {`` and ``}`` to a session that wrote
    a test file in a worktree a day before, never committed there by then. A
    session's ``class Token:`` block, written to ``packaging/_tokenizer.py`` before
    the person moved the package to ``src/`` (git never had the session's path),
    moved from ``src/packaging/_tokenizer_impl.py`` into ``_musllinux.py`` in one
    commit: a move, as that commit's diff shows."""
    return any(pid in whole or had(pid) for pid in pids) or taken_out()


def _taken_out(
    ask: Answers,
    holds: Callable[[str, str, str], bool],
    brought: BlameLine | None,
    text: str,
    trivial: bool,
) -> bool:
    """Whether the commit that brought a line here (``brought``) took its ``text``
    out of another file it changed or deleted: in that file at the commit's parent,
    not in it (under its new name, if renamed) after. A blank line or bracket says
    nothing; a commit git cannot read says no."""
    if trivial or brought is None or brought.commit is None:
        return False
    commit, here = brought.commit, brought.orig_path
    for path, (status, now) in ask.touched(commit).items():
        if status == "A" or path == here or now == here:
            continue
        if holds(commit + "^", path, text) and (now is None or not holds(commit, now, text)):
            return True
    return False


def _left_behind(
    ask: Answers,
    lines: list[LineAttribution],
    texts: LineTexts,
    evidence: list[BlameLine | None],
    ranges: list[list[int]],
    first: int,
    elsewhere: dict[int, set[int]],
    names: dict[int, str],
    written_at: Callable[[int, int], list[float]],
    holds: Callable[[str, str, str], bool],
    whole: set[int],
) -> dict[int, set[int]]:
    """Line index -> paths (ids) its text left in the commit that brought it here.

    A line qualifies when it is unmatched, inside a block of such lines, and its
    text left a file a session wrote it to in the commit that brought it
    (``evidence``: git blame's, or -C's): the file had it before that commit, or a
    session wrote it there after the file's last commit (work git never saw
    there), and the file no longer has it after the commit. At least
    ``MOVED_BLOCK`` different lines of the block must have left the same file:
    one ``return NotImplemented`` leaving a file proves nothing. The rest of the
    block that sessions wrote there, and its blank lines and brackets, go with it.
    Files are asked of git only where sessions wrote that many different lines
    of the block there (one ``cat-file --batch`` for every read).
    """
    out: dict[int, set[int]] = {}
    commits: set[str] = set()  # each costs a diff-tree and file reads: a bounded few
    for start, end in ranges:
        block: list[int] = []
        for k in range(start - first, end - first + 1):
            b = evidence[k]
            if lines[k].session is not None or b is None or b.commit is None:
                continue
            block.append(k)
        solid = [k for k in block if not texts.trivial[k]]
        written = _different_texts(lines, texts, solid, elsewhere)
        asked = {pid for pid, n in written.items() if n >= MOVED_BLOCK}
        left: dict[int, set[int]] = {}
        for k in block if asked else ():
            b = evidence[k]
            assert b is not None and b.commit is not None
            if texts.trivial[k]:
                continue
            if b.commit not in commits:
                if len(commits) >= LEFT_BEHIND_COMMITS:
                    continue
                commits.add(b.commit)
            fp = texts.fps[k]
            for pid in asked & elsewhere.get(fp, set()):
                stripped = lines[k].text.strip()
                try:
                    if _text_left(
                        ask, b, names[pid], stripped, partial(written_at, pid, fp), holds,
                        pid in whole,
                    ):  # fmt: skip
                        left.setdefault(pid, set()).add(k)
                except Unanswered:
                    pass  # asked of stage 1: this round's judgement does not stand
        sources = {
            pid
            for pid, ks in left.items()
            if len({lines[k].text.strip() for k in ks}) >= MOVED_BLOCK
        }
        if not sources:
            continue
        for k in block:
            if texts.trivial[k]:
                out[k] = sources
                continue
            # a line of the block also found elsewhere in the file it left
            # (``return None``) went with the block
            got = sources & elsewhere.get(texts.fps[k], set())
            if got:
                out[k] = got
    return out


def _text_left(
    ask: Answers,
    b: BlameLine,
    path: str,
    stripped: str,
    written_at: Callable[[], list[float]],
    holds: Callable[[str, str, str], bool],
    whole: bool = False,
) -> bool:
    """Whether the text ``stripped`` (at any indent) left ``path`` in commit ``b.commit``
    (which brought it to ``b.orig_path``): not in the file after the commit, and in it
    before, or written there by a session since the file's last commit.

    A file git saw renamed to this one is not a source: blame followed that
    rename, and the lines it gives this commit are the ones it rewrote. Nor is a
    file the commit deleted, then: what git missed is a rename, and it saw one.
    """
    commit = b.commit
    here = b.orig_path or ""
    if commit is None or path == here:
        return False
    # The cheap questions first, from one log of the path: did the commit delete
    # it (with the text in it), or did a session write the text there since the
    # path's last commit (work git never saw there)? A text that left a file the
    # commit only changed is git blame -C's to find (reading that file before
    # every such commit cost deja stats on click 7 % for 12 more lines of 5,653
    # and 5 more wrong on packaging's history).
    log = ask.log_index(path)
    deleted = commit in log.deleted
    if not (deleted and has_line(ask.text_at(commit + "^", path), stripped, exact=False)):
        until = (b.commit_time or 0) + CLOCK_SKEW
        since: float = log.last_before(b.commit_time or 0, commit)
        if not log.times and not whole:  # a file git never had
            since = _floor_for_unseen(ask, b)
        if not written_between(written_at(), since, until):
            return False
    if path in ask.renamed_to(commit, here):
        return False
    status, now = ask.touched(commit).get(path, (None, path))
    if now is None and ask.renamed_to(commit, here):
        return False  # deleted, but git saw another file renamed to this one: not its source
    # still there (or there under its new name): a copy, not a move
    return now is None or not holds(commit, now, stripped)


def _written_for_commit(
    ask: Answers,
    lines: list[LineAttribution],
    texts: LineTexts,
    evidence: list[BlameLine | None],
    block: range,
    gone: set[int],
    elsewhere: dict[int, set[int]],
    whole: set[int],
) -> set[int]:
    """Of the files git never had (``gone``), those a session wrote at least
    ``MOVED_BLOCK`` different lines of the block to for the commit that brought
    them into the repository (``evidence``: git blame -C's where it found where
    they came from, else git blame's), by its time (``_floor_for_unseen``)."""
    got: dict[int, set[str]] = {}
    for k in block:
        ln, b = lines[k], evidence[k]
        if ln.session is not None or texts.trivial[k] or b is None or b.commit is None:
            continue
        fp = texts.fps[k]
        pids = gone & elsewhere.get(fp, set())
        if not pids:
            continue
        try:
            floor = _floor_for_unseen(ask, b)
        except Unanswered:
            continue
        until = (b.commit_time or 0) + CLOCK_SKEW
        for pid in pids:
            since = 0.0 if pid in whole else floor
            try:
                if written_between(ask.write_times(pid, fp), since, until):
                    got.setdefault(pid, set()).add(ln.text.strip())
            except Unanswered:
                pass
    return {pid for pid, done in got.items() if len(done) >= MOVED_BLOCK}


WHOLE_FILE_SHARE = 0.8  # of a file's different lines written to one other file: renamed


def _whole_file_sources(
    lines: list[LineAttribution], texts: LineTexts, todo: list[int],
    elsewhere: dict[int, set[int]],
) -> set[int]:  # fmt: skip
    """The other files (ids) sessions wrote ``WHOLE_FILE_SHARE`` of this file's
    different lines to, not blank nor a bracket: this file is one of them renamed
    (a plan a session wrote to ``docs/x.md``, committed as ``docs/architecture/x.md``
    after a rebase), not a file that took some common lines from them."""
    solid = {ln.text.strip() for k, ln in enumerate(lines) if not texts.trivial[k]}
    got = _different_texts(lines, texts, todo, elsewhere)
    return {pid for pid, n in got.items() if n >= WHOLE_FILE_SHARE * len(solid)}


def _different_texts(
    lines: list[LineAttribution], texts: LineTexts, ks: list[int],
    elsewhere: dict[int, set[int]],
) -> Counter[int]:  # fmt: skip
    """Path id -> how many different texts (stripped) of the lines ``ks`` sessions
    wrote to it (``elsewhere``: fingerprint -> paths). A text has one fingerprint
    (its white space removed, hashed), so each fingerprint's different texts are
    counted once for each of its paths, not line after line (entireio's stats met
    403,235 (line, path) pairs so)."""
    by_fp: dict[int, set[str]] = {}
    for k in ks:
        by_fp.setdefault(texts.fps[k], set()).add(lines[k].text.strip())
    got: Counter[int] = Counter()
    for fp, different in by_fp.items():
        for pid in elsewhere.get(fp, ()):
            got[pid] += len(different)
    return got


def _floor_for_unseen(ask: Answers, b: BlameLine) -> float:
    """Since when a write to a file git never had may be the source of a line ``b``
    names the commit of. Into a file that commit created, only work done for it,
    after its parent: the test scaffolding a session wrote to a scratch file weeks
    earlier is not what a person's new test file took (entireio/cli: imports and
    ``if err != nil {`` of new test files). Into a file git had, any earlier write:
    a session's new module, moved to ``src/`` with the layout before its first
    commit and later moved on into this file (packaging's ``class Token``). A file
    git never had that this file mostly is (``_whole_file_sources``) counts from any
    time too: it is this file, renamed before its first commit (and a rebase made
    its commit seconds younger than its parent)."""
    here, commit = b.orig_path, b.commit
    if commit is None or not here:
        return 0.0
    if not any(sha == commit and status == "A" for sha, _, status in ask.path_log(here)):
        return 0.0
    return float(ask.parent_time(commit) or 0)


RENAMED_SHARE = 0.5  # of a deleted file's lines found here: this file is that one


def _mostly_here(ask: Answers, commit: str, path: str, texts_here: set[str]) -> bool:
    """Whether most different lines ``path`` had before ``commit`` are in this file."""
    before = ask.solid_lines_at(commit + "^", path)
    return bool(before) and len(before & texts_here) >= RENAMED_SHARE * len(before)


def written_between(times: list[float], since: float, until: float) -> bool:
    """Whether a time of ``times`` (in order: ``WhereFrom.write_times``) is after
    ``since`` and not after ``until``."""
    k = bisect_right(times, since)
    return k < len(times) and times[k] <= until


def _deleted_in(log: list[tuple[str, int, str]], commit: str) -> bool:
    """Whether ``commit`` deleted the path of ``log`` (``_path_log``)."""
    return any(sha == commit and status == "D" for sha, _, status in log)
