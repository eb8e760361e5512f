"""The texts written to a path, read from the edits for a question about many files:
exactly the texts whose fingerprints are the path's rows of the lines table (the
reflow rule then hashes only its candidates that one of them is), once per question,
and nothing where they cannot all be at hand."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from test_blame import T0, Session

from deja_blame.attribution.facts import indexread as Q
from deja_blame.attribution.facts import shared, writes
from deja_blame.attribution.facts.source import FactSource
from deja_blame.index import db as index_db
from deja_blame.index import ingest
from deja_blame.index.fingerprint import fingerprint


def _index(tmp_path: Path) -> tuple[sqlite3.Connection, dict[str, int]]:
    root = tmp_path / "root"
    work = tmp_path / "work"
    one = Session(root, "s-one")
    one.write(work / "app.py", "def total(cart):\n    return  sum( cart )\n\n}\n", T0)
    one.replace(work / "app.py", ["}"], ["    # the sum", "print( total([1]) )"], T0 + 60)
    two = Session(root, "s-two")
    two.write(work / "lib.py", "import os\nvalue = os.sep\n", T0 + 120)
    two.replace(work / "app.py", [""], ["value = total( [2, 3] )"], T0 + 180, start=3)
    conn = index_db.connect(tmp_path / "index.db")
    ingest.index_roots(conn, [root], jobs=1)
    ids = {Path(path).name: pid for pid, path in conn.execute("SELECT path_id, path FROM paths")}
    return conn, ids


def test_the_texts_of_a_path_are_those_of_its_written_lines(tmp_path: Path) -> None:
    conn, ids = _index(tmp_path)
    assert set(ids) == {"app.py", "lib.py"}
    for pid in ids.values():
        texts = writes.texts_written(conn, pid)
        assert texts is not None
        by_rows = Q.fingerprints_of_paths(conn, [pid])[pid]
        assert {fingerprint(t) for t in texts} == by_rows
        assert all(not any(ch.isspace() for ch in t) for t in texts)  # as fingerprinted
    assert "value=total([2,3])" in (writes.texts_written(conn, ids["app.py"]) or set())


def test_too_many_edits_or_a_damaged_one_give_no_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn, ids = _index(tmp_path)
    with monkeypatch.context() as patched:
        patched.setattr(writes, "TEXTS_UP_TO", 2)  # app.py has three edits
        assert writes.texts_written(conn, ids["app.py"]) is None
        assert writes.texts_written(conn, ids["lib.py"]) is not None
    conn.execute("UPDATE edits SET body = x'78deadbeef' WHERE path LIKE '%lib.py'")
    assert writes.texts_written(conn, ids["lib.py"]) is None
    assert writes.texts_written(conn, ids["app.py"]) is not None


def test_a_question_reads_each_path_once_and_one_file_reads_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn, ids = _index(tmp_path)
    read: list[int] = []
    real = writes.texts_written

    def counted(conn: sqlite3.Connection, pid: int) -> set[str] | None:
        read.append(pid)
        return real(conn, pid)

    monkeypatch.setattr("deja_blame.attribution.facts.source.texts_written", counted)
    source = FactSource(conn, tmp_path / "repo", None)
    both = {ids["app.py"]: True, ids["lib.py"]: False}
    assert source.written_texts(both) is None  # one file's blame: candidates are hashed
    assert read == []
    with shared.one_question(tmp_path / "repo"):
        got = source.written_texts(both)
        assert got is not None
        assert got.texts == (real(conn, ids["app.py"]) or set()) | (
            real(conn, ids["lib.py"]) or set()
        )
        assert got.starts("value=") and got.starts("importos") and not got.starts("valuex")
        again = FactSource(conn, tmp_path / "repo", "HEAD")  # another file of the question
        lib = again.written_texts({ids["lib.py"]: True})
        assert lib is not None and lib.texts == real(conn, ids["lib.py"])
        assert again.written_texts(both) is got
        assert sorted(read) == sorted(ids.values())  # each path read once
    with shared.one_question(tmp_path / "b"), monkeypatch.context() as patched:
        patched.setattr(writes, "TEXTS_UP_TO", 2)  # app.py's three edits are too many
        there = FactSource(conn, tmp_path / "b", None)
        assert there.written_texts(both) is None  # hashed, as without a question
        assert there.written_texts({ids["lib.py"]: True}) is not None
