"""The moves rule's judgement (``match.moves.moved_here``) is a function of plain data:
stage 1's ``MoveFacts`` and the answers of its ``MoveAsks`` (here made of dicts), given
in rounds: the judgement says what it lacks, stage 1 answers it.

A block git blame -C says came from another file moved here; it is a move (its text
left that file) where the file no longer holds it after the commit that brought it
here, a copy where it still does. A block whose text left a file a session wrote it
to, in a commit that deleted that file, moved here too, though -C named nothing."""

from __future__ import annotations

from deja_blame.attribution.facts.model import (
    BlameLine,
    FileFacts,
    LineTexts,
    MovedLines,
    PathLog,
    PathLogIndex,
)
from deja_blame.attribution.facts.moved import answer_asked
from deja_blame.attribution.facts.rule_facts import MoveFacts
from deja_blame.attribution.match.moves import moved_here
from deja_blame.attribution.model import LineAttribution
from deja_blame.index.fingerprint import fingerprint

C = "c" * 40  # the commit that brought the block here
OLD = "o" * 40  # an older commit of the source file
LATER = "d" * 40  # the person's commit of the line below the block
AT = 1_000_000
HERE, SOURCE = "pkg/new.py", "pkg/old.py"
BLOCK = ["def total(order):", "    return sum(order.prices)", "", "def count(order):"]
SOURCE_ID = 4


class Asks:
    """The history the judgement asks about, as dicts: each file's text at a revision,
    each path's log, what each commit touched."""

    def __init__(self, texts: dict[tuple[str, str], str], logs: dict[str, PathLog]) -> None:
        self.texts, self.logs = texts, logs
        self.asked: list[tuple[str, str]] = []

    def text_at(self, rev: str, path: str) -> str:
        self.asked.append((rev, path))
        return self.texts.get((rev, path), "")

    def holds(self, rev: str, path: str, text: str) -> bool:
        return text.strip() in {t.strip() for t in self.text_at(rev, path).splitlines()}

    def solid_lines_at(self, rev: str, path: str) -> set[str]:
        return {t.strip() for t in self.text_at(rev, path).splitlines() if t.strip()}

    def touched(self, commit: str) -> dict[str, tuple[str, str | None]]:
        deleted = any(sha == commit and st == "D" for sha, _, st in self.logs.get(SOURCE, []))
        return {SOURCE: ("D", None) if deleted else ("M", SOURCE), HERE: ("A", HERE)}

    def renamed_to(self, commit: str, path: str) -> set[str]:
        return set()

    def path_log(self, path: str) -> PathLog:
        return self.logs.get(path, [])

    def log_index(self, path: str) -> PathLogIndex:
        return PathLogIndex(self.path_log(path))

    def parent_time(self, commit: str) -> int | None:
        return AT - 60

    def write_times(self, pid: int, fp: int) -> list[float]:
        return [float(AT - 3600)]

    def paths_git_lacks(self, names: dict[int, str]) -> set[int]:
        return set()


def _facts() -> FileFacts:
    texts = [*BLOCK, "print(total([]))"]
    commits = [C] * len(BLOCK) + [LATER]
    lines = [
        LineAttribution(line=i + 1, text=t, commit=c)
        for i, (t, c) in enumerate(zip(texts, commits))
    ]
    for ln in lines:
        ln.orig_path = HERE
    blamed: list[BlameLine | None] = [
        BlameLine(i + 1, c, AT, HERE, i + 1) for i, c in enumerate(commits)
    ]
    return FileFacts(HERE, "/nowhere", C, len(texts), lines, blamed, LineTexts.of(texts))


def _found(facts: FileFacts, asks: Asks, copied: bool) -> MoveFacts:
    solid = [k for k, t in enumerate(BLOCK) if t]
    elsewhere = {fingerprint(BLOCK[k]): {SOURCE_ID} for k in solid}
    from_c = [(k, BlameLine(k + 1, OLD, AT - 600, SOURCE, k + 1)) for k in solid] if copied else []
    return MoveFacts(
        solid,
        elsewhere,
        {SOURCE_ID: SOURCE},
        [[1, len(BLOCK)]],
        from_c,
        {SOURCE_ID: True} if copied else {},
        asks,  # type: ignore[arg-type]
    )


def _judged(facts: FileFacts, found: MoveFacts) -> tuple[MovedLines | None, int]:
    """The judgement in rounds, as ``blame._moved`` makes it: stage 1 answers what
    each round lacked; and how many rounds it took."""
    rounds = 1
    judged = moved_here(facts, found)
    while judged.asked:
        assert all(q not in found.answers for q in judged.asked)  # nothing asked twice
        answer_asked(found, judged.asked)
        judged = moved_here(facts, found)
        rounds += 1
    return judged.moved, rounds


def test_the_judgement_reads_only_the_answers_it_is_given() -> None:
    facts = _facts()
    asks = Asks({(C, SOURCE): "other = 1\n"}, {})
    found = _found(facts, asks, copied=True)
    first = moved_here(facts, found)
    assert first.moved is None and first.asked  # nothing answered: it says what it lacks
    assert asks.asked == []  # and asked stage 1's reader nothing
    moved, rounds = _judged(facts, found)
    assert moved is not None and rounds > 1


def test_a_block_c_found_is_a_move_where_it_left_its_file_and_a_copy_where_it_stayed() -> None:
    before = "\n".join(BLOCK) + "\n"
    for still_there, left in ((False, True), (True, False)):
        facts = _facts()
        asks = Asks({(C, SOURCE): before if still_there else "other = 1\n"}, {})
        moved, _ = _judged(facts, _found(facts, asks, copied=True))
        assert moved is not None
        assert [moved.moved[k] for k in range(len(BLOCK))] == [True, True, False, True]
        assert [moved.left_file[k] for k in (0, 1, 3)] == [left] * 3
        assert moved.evidence[0] is not None and moved.evidence[0].orig_path == SOURCE
        assert moved.paths == {SOURCE_ID: True}
        assert (C, SOURCE) in asks.asked  # the file after the commit, asked once it mattered


def test_a_block_that_left_a_file_its_commit_deleted_moved_here_without_c() -> None:
    facts = _facts()
    before = "\n".join(BLOCK) + "\n"
    logs: dict[str, PathLog] = {SOURCE: [(OLD, AT - 600, "A"), (C, AT, "D")]}
    asks = Asks({(C + "^", SOURCE): before}, logs)
    moved, _ = _judged(facts, _found(facts, asks, copied=False))
    assert moved is not None
    assert moved.moved[: len(BLOCK)] == [True] * len(BLOCK)  # its blank line went with it
    assert not moved.moved[len(BLOCK)]  # the person's line of a later commit stays
    assert moved.paths == {SOURCE_ID: True}  # the deleted file's writes stand for it
    # a file that left nothing: no line moved
    nothing = Asks({}, {SOURCE: [(OLD, AT - 600, "A")]})
    assert _judged(_facts(), _found(_facts(), nothing, copied=False))[0] is None
