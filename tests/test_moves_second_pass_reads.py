"""What the moves rule's second pass reads again, and what it no longer does.

``FileHistory.again`` (the file's versions for the second pass of the rules) shares
what the first pass read and derived, but counts its budget as a new history
would: the same versions are readable in the second pass whatever the first read,
and none is asked of git twice. ``PathLogIndex`` answers the moves rule's
per-line questions of a path's log as the passes over the log did. Plain data: no
git, no index.
"""

from __future__ import annotations

import random

import pytest

from deja_blame.attribution.facts import versions
from deja_blame.attribution.facts.model import PathLogIndex
from deja_blame.attribution.facts.versions import FileHistory

SHAS = [f"{k:040x}" for k in range(1, 6)]  # newest first
TEXTS = {sha: f"line {k}\nshared\n    shared\n" for k, sha in enumerate(SHAS)}


class Counted(FileHistory):
    """A history whose versions come from ``TEXTS``, counting the reads of git."""

    reads: list[str]

    def _read(self, specs: list[str]) -> list[bytes | None]:
        self.reads.extend(specs)
        return [TEXTS[spec.split(":")[0]].encode() for spec in specs]


def _history() -> Counted:
    history = Counted("/nowhere", {"a.py"}, None)
    history.reads = []
    history._loaded = True
    history.commits = list(SHAS)
    history.times = [1000 - k for k in range(len(SHAS))]
    history.position = {sha: k for k, sha in enumerate(SHAS)}
    history.parent = {
        sha: (SHAS[k + 1] if k + 1 < len(SHAS) else None) for k, sha in enumerate(SHAS)
    }
    return history


def _again(first: Counted) -> Counted:
    second = first.again()
    second.__class__ = Counted
    second.reads = first.reads
    return second


def _ask(history: FileHistory, sha: str) -> tuple[bool, ...]:
    readable = history.readable(sha)
    if not readable:
        return (False,)
    return (
        True,
        history.has_text(sha, "shared"),
        history.has_stripped(sha, "shared"),
        history.count(sha, "    shared"),
        history.count_stripped(sha, "shared"),
        len(history.texts(sha)),
        len(history.fingerprints(sha)),
        len(history.spellings(sha)["shared"]),
    )


def test_a_second_pass_reads_nothing_again_and_answers_as_a_new_history(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(versions, "MAX_VERSIONS", 3)
    rng = random.Random(7)
    for _ in range(50):
        first = _history()
        for sha in rng.sample(SHAS, 3):
            _ask(first, sha)
        asked = rng.sample(SHAS, 4)
        second = _again(first)
        fresh = _history()
        read_before = len(first.reads)
        # a new history's budget: the same versions readable, the same answers
        assert [_ask(second, sha) for sha in asked] == [_ask(fresh, sha) for sha in asked]
        # and git asked only for versions the first pass did not read
        again = first.reads[read_before:]
        assert not set(again) & set(first.reads[:read_before])


ACCESSORS = {
    "has_text": lambda h, sha: h.has_text(sha, "shared"),
    "has_stripped": lambda h, sha: h.has_stripped(sha, "shared"),
    "count": lambda h, sha: h.count(sha, "shared"),
    "count_stripped": lambda h, sha: h.count_stripped(sha, "shared"),
    "texts": lambda h, sha: h.texts(sha),
    "fingerprints": lambda h, sha: h.fingerprints(sha),
    "spellings": lambda h, sha: h.spellings(sha),
}


@pytest.mark.parametrize("name", sorted(ACCESSORS))
def test_a_version_read_in_the_first_pass_still_counts_in_the_second_budget(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setattr(versions, "MAX_VERSIONS", 2)
    first = _history()
    for sha in SHAS[:2]:
        _ask(first, sha)
    second = _again(first)
    assert second.readable(SHAS[3])  # nothing read in this pass yet
    _ask(second, SHAS[3])
    ACCESSORS[name](second, SHAS[0])  # read by the first pass, derived there: counted here
    assert not second.readable(SHAS[1])  # a new history would have spent its two too


def test_a_path_log_index_answers_as_the_passes_over_the_log() -> None:
    rng = random.Random(3)
    shas = [f"{k:040x}" for k in range(12)]
    for _ in range(200):
        log = [
            (rng.choice(shas), rng.randrange(0, 50), rng.choice("AMD"))
            for _ in range(rng.randrange(0, 10))
        ]
        index = PathLogIndex(log)
        for commit in shas:
            assert (commit in index.deleted) == any(
                sha == commit and status == "D" for sha, _, status in log
            )
            for when in range(-1, 52, 5):
                assert index.last_before(when, commit) == max(
                    (t for sha, t, _ in log if t <= when and sha != commit), default=0
                )
