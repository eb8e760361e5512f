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
from test_index import append, conversation, db_path, transcript

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
