"""One question reads the file's versions and the notes once, before the two stages:
``api.compute`` finds the repository, reads the versions (``gitutil.read_versions``),
the notes' refs, deja's notes lookup and the notes besides it (git-ai's, the history
passes' record), and hands them all to ``blame.blame_versions``, which reads none of
them again."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from deja_blame import gitutil
from deja_blame.attribution import api
from deja_blame.attribution import blame as blame_mod
from deja_blame.index.db import connect
from deja_blame.notes import history_state, store
from tests.conftest import git


def _recorded(events: list[str], name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        events.append(name)
        return real(*args, **kwargs)

    return wrapper


@pytest.mark.parametrize("changed", [False, True])
def test_a_question_reads_the_file_and_the_notes_once_before_the_stages(
    repo: Path, monkeypatch: pytest.MonkeyPatch, changed: bool
) -> None:
    path = repo / "cart.py"
    path.write_text("def total(order):\n    return sum(order)\n")
    git(repo, "add", "cart.py")
    git(repo, "commit", "-q", "-m", "cart")
    git(repo, "notes", "--ref", "refs/notes/deja", "add", "-m", "{}", "HEAD")
    if changed:  # HEAD's answer, then the working tree's lines over it
        path.write_text("def total(order):\n    return sum(order)\n\nTAX = 0.2\n")

    events: list[str] = []
    monkeypatch.setattr(gitutil, "read_file", _recorded(events, "file", gitutil.read_file))
    monkeypatch.setattr(store, "read_tips", _recorded(events, "tips", store.read_tips))
    real_state = history_state.HistoryState.__init__
    monkeypatch.setattr(
        history_state.HistoryState, "__init__", _recorded(events, "history", real_state)
    )
    stages = blame_mod.blame_versions
    monkeypatch.setattr(blame_mod, "blame_versions", _recorded(events, "stages", stages))

    conn = connect(Path(os.environ["DEJA_DB"]))
    try:
        result = api.compute(conn, path, None, None, refresh=False)
    finally:
        conn.close()
    assert [ln.line for ln in result.lines] == list(range(1, 5 if changed else 3))
    # the working tree's file and HEAD's, the notes' refs, the history record: each
    # read once, all of them before the stages, none after
    assert events == ["file", "file", "tips", "history", "stages"]
