"""Which of a file's texts sessions wrote to other files (the moves rule's first
question, ``WhereFrom.written_elsewhere``): a question about many files (``deja
stats``, ``report``) looks each text up among every path's texts, read once; a
one-file question asks the index path by path. Both must give the same answer."""

from __future__ import annotations

import itertools
import random

import pytest

from deja_blame.attribution.facts import indexread, repository, shared
from deja_blame.attribution.facts.moved import WhereFrom

ROOT = "/repo"
NAMES = {1: "a.py", 2: "b.py", 3: "c.py", 4: "d.py", 5: "e.py"}


@pytest.fixture
def written(monkeypatch: pytest.MonkeyPatch) -> dict[int, set[int]]:
    """Each path's fingerprints written (path id -> fps), as the index would say."""
    rng = random.Random(11)
    data = {pid: {rng.randrange(30) for _ in range(12)} for pid in NAMES}
    data[5] = set()  # a path no session wrote a text of ours to
    asked: list[str] = []

    def of_paths(conn: object, pids: list[int]) -> dict[int, set[int]]:
        asked.append("of_paths")
        return {pid: set(data[pid]) for pid in pids}

    def written_to(conn: object, pid: int, fps: set[int]) -> set[int]:
        asked.append("written")
        return data[pid] & set(fps)

    monkeypatch.setattr(repository, "paths_of_repository", lambda conn, root, revs: NAMES)
    monkeypatch.setattr(indexread, "fingerprints_of_paths", of_paths)
    monkeypatch.setattr(indexread, "fingerprints_written", written_to)
    return data


def test_a_question_about_many_files_answers_as_one_file_does(
    written: dict[int, set[int]],
) -> None:
    rng = random.Random(5)
    cases = [
        (set(skip), {rng.randrange(40) for _ in range(rng.randrange(1, 20))})
        for n in range(3)
        for skip in itertools.combinations(NAMES, n)
    ]
    alone = [WhereFrom(None, ROOT, "c" * 40).written_elsewhere(skip, fps) for skip, fps in cases]  # type: ignore[arg-type]
    with shared.one_question(ROOT):
        many = [
            WhereFrom(None, ROOT, "c" * 40).written_elsewhere(skip, fps)  # type: ignore[arg-type]
            for skip, fps in cases
        ]
    assert many == alone
    # the file's own paths are never where its texts went elsewhere
    for (skip, _), (found, names) in zip(cases, many):
        assert not skip & set(names)
        assert all(pids and not pids & skip for pids in found.values())
    assert any(found for found, _ in many)
    assert any(len(pids) > 1 for found, _ in many for pids in found.values())
