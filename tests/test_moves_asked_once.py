"""What the moves rule asks again file after file in a question about many files
(``deja stats``, ``report``): a path's log is made once per revision and path, the
writes' times are kept in order and searched by bisection, and the paths a file's
texts were written to are counted text by text. Each must answer as the plain
definition it replaced. Plain data: no git, no index."""

from __future__ import annotations

import random
from typing import Any

import pytest

from deja_blame.attribution.facts import indexread, moved, shared
from deja_blame.attribution.facts.history import LogEntry
from deja_blame.attribution.facts.model import LineTexts
from deja_blame.attribution.facts.moved import WhereFrom
from deja_blame.attribution.match import moves
from deja_blame.attribution.match.moves import written_between
from deja_blame.attribution.model import LineAttribution

ROOT = "/repo"


def test_written_between_is_any_time_in_the_span() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        times = sorted(float(rng.randrange(20)) for _ in range(rng.randrange(6)))
        since, until = float(rng.randrange(-1, 21)), float(rng.randrange(-1, 21))
        assert written_between(times, since, until) == any(since < at <= until for at in times), (
            times,
            since,
            until,
        )


class _History:
    """``repo_history``'s ``entries``, counting the asks."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    def entries(self, rev: str, paths: set[str]) -> list[LogEntry]:
        (path,) = paths
        self.asked.append((rev, path))
        return [LogEntry(f"{rev}-{path}", 10, (), {path: ("M", "b" * 40)})]


@pytest.fixture
def history(monkeypatch: pytest.MonkeyPatch) -> _History:
    got = _History()
    monkeypatch.setattr(moved, "repo_history", lambda root: got)
    return got


def test_a_path_log_is_made_once_per_question_and_revision(history: _History) -> None:
    conn: Any = None
    with shared.one_question(ROOT):
        one, two = WhereFrom(conn, ROOT, "r1"), WhereFrom(conn, ROOT, "r1")
        other = WhereFrom(conn, ROOT, "r2")
        logs = [ask.path_log("a.go") for ask in (one, two, other)]
        indexes = [ask.log_index("a.go") for ask in (one, two, other)]
    assert history.asked == [("r1", "a.go"), ("r2", "a.go")]
    assert logs[0] == logs[1] == [("r1-a.go", 10, "M")]
    assert logs[2] == [("r2-a.go", 10, "M")]  # another revision's log is its own
    assert indexes[0] is indexes[1] and indexes[2] is not indexes[0]
    # outside a question each file's answer asks for itself
    WhereFrom(conn, ROOT, "r1").path_log("a.go")
    WhereFrom(conn, ROOT, "r1").path_log("a.go")
    assert history.asked[2:] == [("r1", "a.go"), ("r1", "a.go")]


def test_write_times_are_the_sessions_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [
        (1, 9, 1, 0, 0, 30.0, 0),
        (1, 9, 2, 0, 0, None, 0),  # no time: never a write in a span
        (1, 9, 3, 0, 0, 10.0, 1),  # the person's
        (1, 9, 4, 0, 0, 20.0, 0),
        (1, 9, 5, 0, 0, 5.0, 0),
    ]
    asked: list[int] = []

    def line_writes(conn: object, pid: int, fps: list[int]) -> list[Any]:
        asked.append(pid)
        return rows

    monkeypatch.setattr(indexread, "line_writes", line_writes)
    conn: Any = None
    assert WhereFrom(conn, ROOT, "r").write_times(1, 9) == [5.0, 20.0, 30.0]
    with shared.one_question(ROOT):
        for _ in range(3):
            assert WhereFrom(conn, ROOT, "r").write_times(1, 9) == [5.0, 20.0, 30.0]
    assert asked == [1, 1]  # kept for the question


def test_different_texts_count_each_path_as_line_by_line() -> None:
    rng = random.Random(3)
    words = ["a = 1", "a  =  1", "b = 2", "  b = 2", "c(x)", "c( x )", "d"]
    for _ in range(300):
        texts = [rng.choice(words) for _ in range(rng.randrange(1, 12))]
        line_texts = LineTexts.of(texts)
        lines = [LineAttribution(k + 1, t, "c" * 40) for k, t in enumerate(texts)]
        elsewhere = {
            fp: {rng.randrange(4) for _ in range(rng.randrange(3))} for fp in set(line_texts.fps)
        }
        ks = sorted(rng.sample(range(len(texts)), rng.randrange(len(texts) + 1)))
        plain: dict[int, set[str]] = {}
        for k in ks:
            for pid in elsewhere.get(line_texts.fps[k], ()):
                plain.setdefault(pid, set()).add(lines[k].text.strip())
        got = moves._different_texts(lines, line_texts, ks, elsewhere)
        assert dict(got) == {pid: len(done) for pid, done in plain.items()}


def test_the_logs_of_the_last_revisions_asked_are_kept(
    history: _History, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(moved, "KEPT_REVISIONS", 2)
    conn: Any = None
    with shared.one_question(ROOT):
        for rev in ["r0", "r1", "r0", "r2", "r0", "r1"]:
            WhereFrom(conn, ROOT, rev).path_log("a.go")
    # r0 asked again is kept, so r2 drops r1, and r1 is asked again
    assert history.asked == [("r0", "a.go"), ("r1", "a.go"), ("r2", "a.go"), ("r1", "a.go")]


class _Blobs:
    """``repo_history``'s ``read``: a file's text at a revision, counting the reads."""

    def __init__(self, texts: dict[str, bytes]) -> None:
        self.texts = texts
        self.read_of: list[str] = []

    def read(self, spec: str) -> bytes | None:
        self.read_of.append(spec)
        return self.texts.get(spec)


def test_a_file_holds_a_line_white_space_aside_and_is_read_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # commander's JSDoc: `` *     writeOut(str)`` in one file, `` *  writeOut(str)`` in
    # another is the same line to the moves rule (a copy)
    blobs = _Blobs({"c:lib/command.js": b"/**\n *     writeOut(str)\n */\n\n}\n"})
    monkeypatch.setattr(moved, "repo_history", lambda root: blobs)
    conn: Any = None
    ask = WhereFrom(conn, ROOT, "c")
    assert ask.holds("c", "lib/command.js", " *  writeOut(str)")
    assert not ask.holds("c", "lib/command.js", " *  writeErr(str)")
    assert not ask.holds("c", "gone.js", " *  writeOut(str)")  # no such file: holds nothing
    # its lines that are not trivial (blank, punctuation only, too short), stripped
    assert ask.solid_lines_at("c", "lib/command.js") == {"*     writeOut(str)"}
    assert blobs.read_of == ["c:lib/command.js", "c:gone.js"]  # each version read once
