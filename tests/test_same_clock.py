"""A session on git's clock gets no clock skew against its commits (match/clock.py).

A session that ran in one of this repository's checkouts on this machine shares
git's clock: its write dated after a commit is not in it. A session recorded on
another machine keeps the 120 s of skew. Newcomer 10 #1: an agent that rewrote a
file whole 50 s after a person's commit took the person's committed lines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import commit_env, deja, deja_json, git
from plain_writes import write_set as _writes

from deja_blame.attribution.facts.checkouts import checkouts, ran_in
from deja_blame.attribution.facts.model import CLOCK_SKEW, BlameLine, LineTexts
from deja_blame.attribution.match import lines as matcher
from deja_blame.attribution.match.clock import ROUNDING, Deadlines, latest_write

T0 = 1_784_278_800  # 2026-07-17T09:00:00Z
PERSON = ["alpha = compute_the_alpha(1)", "beta = compute_the_beta(2)  # typed by Pat"]
GAMMA = "gamma = compute_the_gamma(3)"


# -- the rule, on plain data -----------------------------------------------------------


def test_a_commit_takes_writes_up_to_the_skew_from_another_clock_and_rounding_from_its_own() -> (
    None
):
    b = BlameLine(1, "c" * 40, 10_000, "m.py", 1)
    assert latest_write(b, now=20_000.0) == 10_000 + CLOCK_SKEW
    assert latest_write(b, now=20_000.0, same_clock=True) == 10_000 + ROUNDING
    # not committed yet: any write up to now (the working tree), on either clock
    assert latest_write(None, now=20_000.0, same_clock=True) == 20_000 + CLOCK_SKEW
    open_line = BlameLine(2, None, None, "m.py", 2)
    assert latest_write(open_line, now=20_000.0, same_clock=True) == 20_000 + CLOCK_SKEW
    deadlines = Deadlines.of([b, None], 20_000.0, frozenset({7}))
    assert deadlines.late(0, 7, 10_050.0) and not deadlines.late(0, 8, 10_050.0)
    assert not deadlines.late(0, 7, 10_001.5)  # git keeps whole seconds
    assert not deadlines.late(1, 7, 20_050.0)


def _sids(out: list[matcher.LineMatch | None]) -> list[int | None]:
    return [m.sid if m else None for m in out]


def test_a_whole_file_write_after_the_person_s_commit_leaves_their_lines_on_the_same_clock() -> (
    None
):
    file = [*PERSON, GAMMA]
    blamed: list[BlameLine | None] = [
        BlameLine(i + 1, "c" * 40, 10_000, "m.py", i + 1) for i in (0, 1)
    ]
    blamed.append(None)  # gamma: not committed yet
    ws = _writes([(1, 0, 10_050.0, file)])  # the session rewrote m.py 50 s after the commit
    texts = LineTexts.of(file)
    assert _sids(matcher.match_lines(texts, blamed, ws, now=10_100.0)) == [1, 1, 1]
    same = matcher.match_lines(texts, blamed, ws, now=10_100.0, same_clock=frozenset({1}))
    assert _sids(same) == [None, None, 1]
    # written a second after the commit's whole second: still in it
    ws = _writes([(1, 0, 10_001.0, file)])
    same = matcher.match_lines(texts, blamed, ws, now=10_100.0, same_clock=frozenset({1}))
    assert _sids(same) == [1, 1, 1]


def test_the_same_session_s_write_before_the_commit_still_gives_it_the_lines() -> None:
    # the session wrote the two lines, the person committed them, the session then
    # rewrote the file whole with them and a third: its earlier write is the lines'
    file = [*PERSON, GAMMA]
    blamed: list[BlameLine | None] = [
        BlameLine(i + 1, "c" * 40, 10_000, "m.py", i + 1) for i in (0, 1)
    ]
    blamed.append(None)
    ws = _writes([(1, 0, 9_900.0, PERSON), (1, 1, 10_050.0, file)])
    out = matcher.match_lines(
        LineTexts.of(file), blamed, ws, now=10_100.0, same_clock=frozenset({1})
    )
    assert _sids(out) == [1, 1, 1]
    assert [m.edit_ord if m else None for m in out] == [0, 0, 1]


# -- which sessions share git's clock ----------------------------------------------------


def test_the_checkouts_are_the_root_and_its_worktrees(repo: Path, tmp_path: Path) -> None:
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "a", env=commit_env(T0))
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(wt))
    for root in (repo, wt):
        found = checkouts(str(root))
        assert str(repo) in found and str(wt) in found
    folders = checkouts(str(repo))
    assert ran_in(str(repo), folders) and ran_in(f"{wt}/src", folders)
    assert not ran_in(f"{repo}-copy", folders)  # a sibling folder, not inside
    assert not ran_in("/home/alice/repo", folders) and not ran_in("", folders)
    assert not ran_in("C:/Users/x/repo", folders)


# -- end to end: the newcomer's reproduction ----------------------------------------------


def _iso(epoch: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(epoch, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _antigravity_overwrite(root: Path, sid: str, target: str, content: str, at: int) -> None:
    """An Antigravity session that rewrites ``target`` whole (write_to_file, Overwrite)."""
    logs = root / "brain" / sid / ".system_generated" / "logs"
    logs.mkdir(parents=True)
    records: list[dict[str, Any]] = [
        {
            "step_index": 0,
            "source": "USER_EXPLICIT",
            "type": "USER_INPUT",
            "status": "DONE",
            "created_at": _iso(at),
            "content": "<USER_REQUEST>\nadd gamma\n</USER_REQUEST>",
        },
        {
            "step_index": 1,
            "source": "MODEL",
            "type": "PLANNER_RESPONSE",
            "status": "DONE",
            "created_at": _iso(at + 2),
            "content": "Rewriting m.py.",
            "tool_calls": [
                {
                    "name": "write_to_file",
                    "args": {
                        "CodeContent": json.dumps(content),
                        "Overwrite": "true",
                        "TargetFile": json.dumps(target),
                    },
                }
            ],
        },
        {
            "step_index": 2,
            "source": "MODEL",
            "type": "CODE_ACTION",
            "status": "DONE",
            "created_at": _iso(at + 3),
            "content": f"Created file file://{target} with requested content.",
        },
    ]
    (logs / "transcript.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


@pytest.mark.parametrize("here", [True, False], ids=["this-checkout", "another-machine"])
def test_an_overwrite_50_s_after_a_person_s_commit_keeps_their_lines_only_on_this_clock(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, here: bool
) -> None:
    root = tmp_path / "agroot"
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(root))
    (repo / "m.py").write_text("\n".join(PERSON) + "\n")
    git(repo, "add", "m.py")
    git(repo, "commit", "-qm", "person", env=commit_env(T0))
    content = "\n".join([*PERSON, GAMMA]) + "\n"
    target = str(repo / "m.py") if here else "/home/alice/repo/m.py"
    _antigravity_overwrite(root, "7e7e7e7e-7b4d-4e8a-9c61-2d5f8a0b7e13", target, content, T0 + 50)
    (repo / "m.py").write_text(content)
    doc = deja_json("blame", str(repo / "m.py"), "--json", cwd=repo)
    sessions = [ln["session"] for ln in doc["lines"]]
    if here:  # the session ran here, on git's clock: after the commit, not in it
        assert sessions[:2] == [None, None]
        assert sessions[2] is not None and sessions[2].startswith("7e7e7e7e")
        out = deja("why", "m.py:2", cwd=repo).stdout.decode()
        assert "7e7e7e7e" in out and "after the commit" in out, out
        assert "began at 2026-07-17T09:00:50Z, after that commit" in out, out
    else:  # another machine's clock may run 120 s ahead of git's
        assert all(s is not None and s.startswith("7e7e7e7e") for s in sessions), sessions
