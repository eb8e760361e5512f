"""The refresh's quick look (``index/changes.py``): before an answer, a stat of each
transcript says which sessions changed since the index read them. Nothing new may
be missed: a grown transcript, a full transcript appearing beside the compact one,
a new session, a transcript replaced by one of the same size. One root and several
(the newest copy of a session is the one compared) are both looked at. Each change
is read by the refresh itself (``refresh_index``), after which nothing is new."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from conftest import deja_json
from test_index import append, conversation, db_path, index, transcript

from deja_blame.index.changes import changed_transcripts
from deja_blame.index.db import connect
from deja_blame.index.refresh import refresh_index


def _found(tmp_path: Path, roots: list[Path]) -> list[tuple[str, str]]:
    conn: sqlite3.Connection = connect(db_path(tmp_path))
    try:
        return [(tf.session_id, tf.path.name) for tf in changed_transcripts(conn, roots, False)]
    finally:
        conn.close()


def _read_all(tmp_path: Path) -> None:
    conn: sqlite3.Connection = connect(db_path(tmp_path))
    try:
        refresh_index(conn)
    finally:
        conn.close()


@pytest.mark.parametrize("n_roots", [1, 2])
def test_every_change_of_a_transcript_is_found_and_nothing_else(
    tmp_path: Path, n_roots: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots = [tmp_path / f"root{k}" for k in range(n_roots)]
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", os.pathsep.join(map(str, roots)))
    root = roots[-1]  # the sessions' newest copies are here
    if n_roots > 1:  # an older copy of a session in the first root: never the one compared
        append(transcript(roots[0], "both"), *conversation(1))
        os.utime(transcript(roots[0], "both"), ns=(1, 1))
    append(transcript(root, "compact"), *conversation(1))
    append(transcript(root, "full", "transcript_full.jsonl"), *conversation(1))
    append(transcript(root, "both"), *conversation(1))
    append(transcript(root, "both", "transcript_full.jsonl"), *conversation(1))
    _read_all(tmp_path)
    assert _found(tmp_path, roots) == []

    # a grown compact transcript; a grown full one (the compact beside it unchanged)
    append(transcript(root, "compact"), *conversation(1, start=10))
    append(transcript(root, "both", "transcript_full.jsonl"), *conversation(1, start=10))
    assert sorted(_found(tmp_path, roots)) == [
        ("both", "transcript_full.jsonl"),
        ("compact", "transcript.jsonl"),
    ]
    _read_all(tmp_path)
    assert _found(tmp_path, roots) == []

    # the compact transcript beside a full one grown alone (it is the full one's part)
    append(transcript(root, "both"), *conversation(1, start=20))
    assert _found(tmp_path, roots) == [("both", "transcript_full.jsonl")]
    _read_all(tmp_path)
    assert _found(tmp_path, roots) == []

    # a full transcript appearing beside the compact one the index read
    append(transcript(root, "compact", "transcript_full.jsonl"), *conversation(2))
    assert _found(tmp_path, roots) == [("compact", "transcript_full.jsonl")]
    _read_all(tmp_path)
    assert _found(tmp_path, roots) == []

    # a new session, and a transcript replaced by another of the same size
    append(transcript(root, "new"), *conversation(1))
    full = transcript(root, "full", "transcript_full.jsonl")
    copy = full.with_name("copy")
    copy.write_bytes(full.read_bytes())
    os.utime(copy, ns=(full.stat().st_atime_ns, full.stat().st_mtime_ns))
    os.replace(copy, full)
    assert sorted(_found(tmp_path, roots)) == [
        ("full", "transcript_full.jsonl"),
        ("new", "transcript.jsonl"),
    ]


def _two_files(root: Path) -> None:
    """A session with both transcripts, the compact one reaching further back (the
    full copy sometimes holds only the last stretch)."""
    append(transcript(root, "pair"), *conversation(2))
    append(transcript(root, "pair", "transcript_full.jsonl"), *conversation(1, start=10))


def _requests(session: str) -> list[str]:
    doc = deja_json("show", session, "--json")
    return [m["text"] for m in doc["messages"] if m["role"] == "user"]


def test_a_session_the_refresh_reads_first_keeps_its_compact_files_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refresh before an answer reads a new session as ``deja index`` does: the
    full transcript with the compact one as its part (it read the full one alone,
    and the requests only the compact one holds were lost)."""
    root = tmp_path / "root"
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(root))
    _two_files(root)
    _read_all(tmp_path)
    assert _requests("pair") == ["Request 0", "Request 10"]
    assert _found(tmp_path, [root]) == []


def test_the_refresh_and_deja_index_keep_one_key_for_a_two_file_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``deja index`` records of a session with both transcripts is what the
    refresh compares: nothing is new after either (the refresh read every such
    session again after each ``deja index``, and ``deja index`` after each refresh)."""
    root = tmp_path / "root"
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(root))
    _two_files(root)
    index(root)
    assert _found(tmp_path, [root]) == []
    _read_all(tmp_path)
    assert index(root)["unchanged"] == 1
    assert _found(tmp_path, [root]) == []
