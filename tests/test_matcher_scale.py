"""The matcher at scale: the same answers as the reference, bounded work, and the
attribution cache (warm reads, invalidation, the working tree, single lines)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import reference_matcher as ref
from conftest import deja, deja_json, git
from hypothesis import given, settings
from hypothesis import strategies as st
from test_blame import AGENT_BLOCK, T0, Session, commit_all

from deja_blame.attribution.facts import model as writes_mod
from deja_blame.attribution.facts.model import BlameLine, LineTexts
from deja_blame.attribution.match import lines as matcher
from deja_blame.index.fingerprint import fingerprint

# Lines real code repeats: blank, brackets, short keywords, and a few real ones.
VOCAB = [
    "",
    "",
    "",
    ")",
    "}",
    "]",
    '"""',
    "else:",
    "pass",
    "return None",
    "x = 1",
    "y = 2",
    "def f(a, b):",
    "    return a + b",
    "import os",
    "print('hi')",
]


def _both(texts: list[str], blamed: list[BlameLine | None], rows: list[tuple], now: float):
    """The reference and the fast matcher on the same writes."""
    by_fp: dict[int, list[ref.Write]] = {}
    # the lines table's order: (path, fingerprint, session, edit, index)
    rows = sorted(rows, key=lambda r: r[:5])
    for _pid, fp, sid, edit, idx, at, by_user in rows:
        by_fp.setdefault(fp, []).append(ref.Write(sid, edit, idx, at, bool(by_user), True))
    fps = {fingerprint(t) for t in texts}
    ws = writes_mod.WriteSet()
    ws.add_rows([r for r in rows if r[1] in fps], {1: True})
    old = ref.match_lines(texts, blamed, by_fp, now=now)
    new = matcher.match_lines(LineTexts.of(texts), blamed, ws, now=now)
    key = lambda m: None if m is None else (m.sid, m.edit_ord, m.idx, m.confidence, m.run)  # noqa: E731
    return [key(m) for m in old], [key(m) for m in new]


@st.composite
def scenes(draw: Any) -> tuple[list[str], list[BlameLine | None], list[tuple], float]:
    n = draw(st.integers(1, 40))
    texts = [draw(st.sampled_from(VOCAB)) for _ in range(n)]
    blamed: list[BlameLine | None] = []
    for i in range(n):
        t = draw(st.sampled_from([None, 1000.0, 2000.0, 3000.0]))
        blamed.append(
            None if t is None else BlameLine(i + 1, f"{int(t):040d}", int(t), "a.py", i + 1)
        )
    rows: list[tuple] = []
    for edit in range(draw(st.integers(0, 8))):
        sid = draw(st.integers(1, 4))
        at = draw(st.sampled_from([500.0, 1500.0, 2500.0, 3500.0]))
        by_user = draw(st.sampled_from([0, 0, 0, 1]))
        # an edit copies a stretch of the file (maybe altered) or writes vocabulary
        start = draw(st.integers(0, n - 1))
        length = draw(st.integers(1, 12))
        added = texts[start : start + length]
        added = [
            draw(st.sampled_from(VOCAB)) if draw(st.booleans()) and draw(st.booleans()) else t
            for t in added
        ]
        for idx, t in enumerate(added):
            rows.append((1, fingerprint(t), sid, edit, idx, at, by_user))
        # retries: the same edit again, by the same or another session, earlier or later
        for retry in range(draw(st.integers(0, 3))):
            again = draw(st.sampled_from([500.0, 1500.0, 2500.0, 3500.0, at]))
            other = draw(st.integers(1, 4))
            for idx, t in enumerate(added):
                rows.append(
                    (1, fingerprint(t), other, 100 + edit * 10 + retry, idx, again, by_user)
                )
    return texts, blamed, rows, 4000.0


@settings(max_examples=400, deadline=None)
@given(scenes())
def test_fast_matcher_gives_the_references_answers(scene: Any) -> None:
    texts, blamed, rows, now = scene
    old, new = _both(texts, blamed, rows, now)
    assert new == old


def _record_walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of every run the matcher walks, from now on."""
    lengths: list[int] = []
    real_walk = matcher._walk_run

    def recording(*args: Any) -> int:
        length = real_walk(*args)
        lengths.append(length)
        return length

    monkeypatch.setattr(matcher, "_walk_run", recording)
    return lengths


def test_ten_thousand_writes_of_one_line_cost_a_bounded_amount(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A file of 2,000 identical lines, 10,000 sessions that each wrote that line,
    # and every line blank or "}" around: work per line must not grow with either.
    texts = ["value = compute()", "", "}"] * 700
    rows = [
        (1, fingerprint("value = compute()"), sid, 0, 0, 100.0 + sid, 0) for sid in range(10_000)
    ]
    rows += [(1, fingerprint(""), sid, 0, 1, 100.0 + sid, 0) for sid in range(10_000)]
    ws = writes_mod.WriteSet()
    ws.add_rows(sorted(rows, key=lambda r: r[:5]), {1: True})
    walks = _record_walks(monkeypatch)
    blamed = [BlameLine(i + 1, "c" * 40, 50_000, "a.py", i + 1) for i in range(len(texts))]
    out = matcher.match_lines(LineTexts.of(texts), blamed, ws, now=60_000.0)
    non_trivial = texts.count("value = compute()")
    assert len(walks) <= non_trivial * matcher.COMMON_KEEP
    # each write accounts for one line at most, and the latest writes are taken first
    taken = [m.sid for m in out if m is not None and texts[out.index(m)] == "value = compute()"]
    assert len(taken) == len(set(taken))
    assert max(m.sid for m in out if m is not None) == 9_999


def test_identical_edits_are_walked_once_and_offered_latest_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 300 sessions replayed the same edit (twins): its runs are walked from the group's
    # first edit alone, and the line goes to the latest of them
    block = ["def total(order):", "    subtotal = sum(order)", "    return subtotal"]
    rows = [
        (1, fingerprint(t), sid, 0, idx, 100.0 + sid, 0)
        for sid in range(300)
        for idx, t in enumerate(block)
    ]
    ws = writes_mod.WriteSet()
    ws.add_rows(sorted(rows, key=lambda r: r[:5]), {1: True})
    walks = _record_walks(monkeypatch)
    blamed = [BlameLine(i + 1, "c" * 40, 50_000, "a.py", i + 1) for i in range(len(block))]
    out = matcher.match_lines(LineTexts.of(block), blamed, ws, now=60_000.0)
    assert walks == [3]
    assert [m.sid if m else None for m in out] == [299] * 3


def test_a_file_of_only_blank_and_brace_lines_matches_nothing_and_finishes() -> None:
    texts = ["", "}", ""] * 30_000
    rows = [
        (1, fingerprint(t), sid, 0, i, 10.0, 0)
        for sid in range(50)
        for i, t in enumerate(["", "}"] * 20)
    ]
    ws = writes_mod.WriteSet()
    ws.add_rows(sorted(rows, key=lambda r: r[:5]), {1: True})
    out = matcher.match_lines(LineTexts.of(texts), [None] * len(texts), ws, now=100.0)
    assert out == [None] * len(texts)  # trivial lines are never evidence alone


# -- the attribution cache, end to end ------------------------------------------------


@pytest.fixture
def committed(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """cart.py with an agent's block, committed; the session's transcript not yet written."""
    root = tmp_path / "agroot"
    root.mkdir()
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(root))
    (repo / "cart.py").write_text("TAX_RATE = 0.2\n\n\nclass Cart:\n    pass\n")
    commit_all(repo, "person starts", T0 - 3600)
    (repo / "cart.py").write_text(
        "TAX_RATE = 0.2\n\n\nclass Cart:\n    pass\n" + "\n".join(AGENT_BLOCK) + "\n"
    )
    commit_all(repo, "agent work", T0 + 600)
    return {"repo": repo, "root": root}


def _sessions(doc: dict[str, Any]) -> list[str | None]:
    return [ln["session"] for ln in doc["lines"]]


def test_a_cached_answer_goes_stale_when_the_index_learns_of_a_write(
    committed: dict[str, Any],
) -> None:
    repo, root = committed["repo"], committed["root"]
    first = deja_json("blame", str(repo / "cart.py"), "--json")
    assert not any(_sessions(first))  # nothing indexed yet, and this answer is cached
    s = Session(root, "3f2a9c1e-aaaa-4bbb-8ccc-0000000000c1")
    s.user("Add a total() helper to cart.py", T0)
    s.replace(repo / "cart.py", [], AGENT_BLOCK, T0 + 60, start=6)
    second = deja_json("blame", str(repo / "cart.py"), "--json")  # refresh reads the session
    assert _sessions(second)[5] == "3f2a9c1e-aaaa-4bbb-8ccc-0000000000c1"
    third = deja_json("blame", str(repo / "cart.py"), "--json", "--no-refresh")
    assert third == second


def test_the_cache_gives_what_a_fresh_computation_gives(committed: dict[str, Any]) -> None:
    repo, root = committed["repo"], committed["root"]
    s = Session(root, "3f2a9c1e-aaaa-4bbb-8ccc-0000000000c2")
    s.user("Add a total() helper to cart.py", T0)
    s.replace(repo / "cart.py", [], AGENT_BLOCK, T0 + 60, start=6)
    cold = deja_json("blame", str(repo / "cart.py"), "--json")
    warm = deja_json("blame", str(repo / "cart.py"), "--json")
    fresh = deja_json("blame", str(repo / "cart.py"), "--json", env={"DEJA_NO_CACHE": "1"})
    assert cold == warm == fresh
    assert sum(1 for x in _sessions(warm) if x) >= 5
    # one line, from the cache and computed alone around it (git blame -L)
    for line in (6, 10, 12):
        one = deja_json("why", f"{repo / 'cart.py'}:{line}", "--json")
        alone = deja_json("why", f"{repo / 'cart.py'}:{line}", "--json", env={"DEJA_NO_CACHE": "1"})
        assert one["session"] == alone["session"] == warm["lines"][line - 1]["session"]
        assert one["confidence"] == alone["confidence"]


def test_a_saved_working_file_rematches_only_its_new_lines(committed: dict[str, Any]) -> None:
    repo, root = committed["repo"], committed["root"]
    s = Session(root, "3f2a9c1e-aaaa-4bbb-8ccc-0000000000c3")
    s.user("Add a total() helper to cart.py", T0)
    s.replace(repo / "cart.py", [], AGENT_BLOCK, T0 + 60, start=6)
    head = deja_json("blame", str(repo / "cart.py"), "--json")
    more = ["def refund(order):", "    return order.total * -1"]
    s.replace(repo / "cart.py", [], more, T0 + 7200, start=13)
    text = (repo / "cart.py").read_text().splitlines()
    text[1:1] = ["# a person's comment"]  # a person's uncommitted line, near the top
    (repo / "cart.py").write_text("\n".join(text + more) + "\n")
    work = deja_json("blame", str(repo / "cart.py"), "--json")
    fresh = deja_json("blame", str(repo / "cart.py"), "--json", env={"DEJA_NO_CACHE": "1"})
    assert work == fresh
    lines = work["lines"]
    assert lines[1]["commit"] is None and lines[1]["session"] is None
    assert [ln["session"] for ln in lines[-2:]] == ["3f2a9c1e-aaaa-4bbb-8ccc-0000000000c3"] * 2
    assert all(ln["commit"] is None for ln in lines[-2:])
    # the committed lines keep HEAD's answer, moved down by one
    assert [ln["session"] for ln in lines[2:-2]] == [ln["session"] for ln in head["lines"][1:]]


def test_the_cache_is_per_repository(committed: dict[str, Any], tmp_path: Path) -> None:
    repo = committed["repo"]
    deja_json("blame", str(repo / "cart.py"), "--json")
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow)], check=True
    )
    git(repo, "log", "-1")
    theirs = deja_json("blame", str(shallow / "cart.py"), "--json")
    ours = deja_json("blame", str(repo / "cart.py"), "--json")
    # the full clone sees two commits; the shallow one only its boundary
    assert len({ln["commit"] for ln in ours["lines"]}) == 2
    assert len({ln["commit"] for ln in theirs["lines"]}) == 1


def _warm_imports(committed: dict[str, Any], sid: str, *command: str) -> tuple[str, set[str]]:
    """A session's block in cart.py, blamed once (computed and cached); then
    ``deja COMMAND`` under ``-X importtime``: its output and the modules it imported."""
    repo, root = committed["repo"], committed["root"]
    s = Session(root, sid)
    s.user("Add a total() helper to cart.py", T0)
    s.replace(repo / "cart.py", [], AGENT_BLOCK, T0 + 60, start=6)
    deja_json("blame", str(repo / "cart.py"), "--json")
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "deja_blame", *command],
        capture_output=True,
        env=os.environ.copy(),
        cwd=repo,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-500:]
    imported = {
        line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines() if "|" in line
    }
    return proc.stdout.decode(), imported


def test_a_warm_why_imports_neither_pygit2_nor_multiprocessing(committed: dict[str, Any]) -> None:
    sid = "3f2a9c1e-aaaa-4bbb-8ccc-0000000000c4"
    out, imported = _warm_imports(committed, sid, "why", f"{committed['repo'] / 'cart.py'}:7")
    assert "deja_blame.attribution.answer" in imported  # the measurement saw deja's imports
    assert "pygit2" not in imported
    assert "multiprocessing" not in imported
    assert sid in out


def test_a_block_pasted_hundreds_of_times_is_walked_within_a_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 40 real-looking lines pasted 500 times (20,000 lines); 200 sessions each
    # wrote the block once: 200 x 500 places where every write would fit.
    block = [f"    value_{k} = compute({k}, options)" for k in range(40)]
    texts = block * 500
    # each session's block ends with a line of its own: no two edits are twins
    rows = [
        (1, fingerprint(t), sid, 0, idx, 100.0 + sid, 0)
        for sid in range(200)
        for idx, t in enumerate([*block, f"mark({sid})"])
    ]
    ws = writes_mod.WriteSet()
    ws.add_rows(sorted(rows, key=lambda r: r[:5]), {1: True})
    walks = _record_walks(monkeypatch)
    blamed = [BlameLine(i + 1, "c" * 40, 50_000, "a.py", i + 1) for i in range(len(texts))]
    out = matcher.match_lines(LineTexts.of(texts), blamed, ws, now=60_000.0)
    # 200 edits x 500 places: each edit is walked within its budget
    assert sum(walks) <= 200 * (matcher.EDIT_RUN_BUDGET + 4 * (len(block) + 1) + len(block))
    # still evidence where it was walked: the first copy goes to the latest session
    assert [m.sid if m else None for m in out[:40]] == [199] * 40


def test_a_range_past_the_end_is_an_error_in_git_blames_words(committed: dict[str, Any]) -> None:
    from conftest import deja

    repo = committed["repo"]
    n = len((repo / "cart.py").read_text().splitlines())
    for env in ({}, {"DEJA_NO_CACHE": "1"}):  # from the cache, and blamed around the range
        proc = deja("blame", str(repo / "cart.py"), "-L", f"{n + 5},{n + 9}", env=env, check=False)
        assert proc.returncode == 1
        assert f"file cart.py has only {n} lines" in proc.stderr.decode()
        why = deja("why", f"{repo / 'cart.py'}:{n + 1}", env=env, check=False)
        assert why.returncode == 1 and f"has only {n} lines" in why.stderr.decode()
    git_says = subprocess.run(
        ["git", "blame", "-L", f"{n + 5},{n + 9}", "cart.py"], cwd=repo, capture_output=True
    )
    assert f"has only {n} lines" in git_says.stderr.decode()


def test_a_lockfile_of_repeated_lines_costs_work_in_proportion_to_its_lines() -> None:
    # One session wrote a 6,000-line file of ten texts: 600 writes of each text.
    # Each line's candidates were filtered and sorted again line by line (a
    # 30,000-line lockfile: 11 s); they are sorted once per text.
    n = 6000
    texts = [f'    "dep-{i % 10}": "^1.{i % 3}.0",' for i in range(n)]
    rows = sorted(
        ((1, fingerprint(t), 1, 0, idx, 100.0, 0) for idx, t in enumerate(texts)),
        key=lambda r: r[:5],
    )
    ws = writes_mod.WriteSet()
    ws.add_rows(rows, {1: True})

    class Counted(dict):  # type: ignore[type-arg]
        reads = 0

        def __getitem__(self, key: Any) -> Any:
            Counted.reads += 1
            return super().__getitem__(key)

    ws.info = Counted(ws.info)
    blamed = [BlameLine(i + 1, "c" * 40, 50_000, "a.py", i + 1) for i in range(n)]
    out = matcher.match_lines(LineTexts.of(texts), blamed, ws, now=60_000.0)
    assert sum(m is not None for m in out) == n  # every line its own write
    assert Counted.reads <= 20 * n


def test_a_warm_blame_imports_no_matcher_and_no_pygit2(committed: dict[str, Any]) -> None:
    """A cached answer is read through the cache alone: the matcher, the move and
    commit-window rules and pygit2 are never imported (the warm path's start-up)."""
    sid = "3f2a9c1e-aaaa-4bbb-8ccc-0000000000c5"
    out, imported = _warm_imports(committed, sid, "blame", "cart.py", "--json")
    assert "deja_blame.attribution.answer" in imported  # the measurement saw deja's imports
    for heavy in (
        "deja_blame.attribution.blame",
        "deja_blame.attribution.match.lines",
        "deja_blame.attribution.match.moves",
        "deja_blame.attribution.match.window",
        "pygit2",
    ):
        assert heavy not in imported, heavy
    assert sid[:8] in out


def test_git_blame_starts_when_the_cache_misses_and_is_taken_once(
    committed: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold blame starts git blame as soon as the attribution cache has missed
    (before the repository is opened), and the blame takes that process: git blame
    runs once. With the blame itself cached, the early process is ended."""
    from deja_blame import gitutil
    from deja_blame.attribution import api
    from deja_blame.attribution.facts import git_blame as blame_engine
    from deja_blame.index.db import connect

    repo, root = committed["repo"], committed["root"]
    s = Session(root, "3f2a9c1e-aaaa-4bbb-8ccc-0000000000c6")
    s.user("Add a total() helper to cart.py", T0)
    s.replace(repo / "cart.py", [], AGENT_BLOCK, T0 + 60, start=6)
    started: list[tuple[str, str | None]] = []
    real = blame_engine._start_git

    def counting(root_: Path, relpath: str, rev: str | None, span: Any = None) -> Any:
        started.append((relpath, rev))
        return real(root_, relpath, rev, span)

    monkeypatch.setattr(blame_engine, "_start_git", counting)
    opened: list[int] = []
    real_locate = gitutil.locate

    def locate(file: Path, rev: str | None = None, through_git: bool = False) -> Any:
        opened.append(len(started))  # how many blames had started when the repository opened
        return real_locate(file, rev, through_git=through_git)

    monkeypatch.setattr(gitutil, "locate", locate)
    db = Path(os.environ["DEJA_DB"])
    conn = connect(db)
    try:
        first = api.compute(conn, repo / "cart.py", None, None, refresh=True)
        assert [ln.session for ln in first.lines][5:] == [
            "3f2a9c1e-aaaa-4bbb-8ccc-0000000000c6"
        ] * len(AGENT_BLOCK)
        assert len(started) == 1 and opened == [1]  # started before the repository opened
        assert not blame_engine._EARLY
        # the attribution cache emptied, git's blame still cached: the early one ends
        conn.execute("DELETE FROM attribution_cache")
        conn.commit()
        again = api.compute(conn, repo / "cart.py", None, None, refresh=False)
        assert [ln.session for ln in again.lines] == [ln.session for ln in first.lines]
        assert len(started) == 2  # the early start, not taken ...
        assert not blame_engine._EARLY  # ... and ended
    finally:
        conn.close()


def test_cat_file_reads_past_a_missing_name_with_spaces(repo: Path) -> None:
    """``git cat-file --batch`` answers ``<spec> missing`` for a name a commit lacks;
    a name with spaces must not be taken for a header (it once ended every later
    read of the blame: the file's older versions all read as absent)."""
    from deja_blame.gitutil import CatFile

    (repo / "a b.py").write_text("x = 1\n")
    commit_all(repo, "a file with a space", T0)
    batch = CatFile(repo)
    try:
        assert batch.read("HEAD:no such file.py") is None
        assert batch.read("HEAD:a b.py") == b"x = 1\n"
        assert batch.read_many(["HEAD:gone too.py", "HEAD:a b.py", "HEAD:x\ny"]) == [
            None,
            b"x = 1\n",
            None,
        ]
    finally:
        batch.close()


def test_an_early_blame_nobody_takes_is_ended(
    committed: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A binary file at a revision: the cache misses, git blame starts early, and the
    blame is refused before it takes that process: the process is ended, not left
    running (the editor server lives for hours). (The working tree's binary file is
    refused by its first bytes before git blame starts.)"""
    from deja_blame.attribution import api
    from deja_blame.attribution.facts import git_blame as blame_engine
    from deja_blame.errors import DejaError
    from deja_blame.index.db import connect

    repo = committed["repo"]
    (repo / "logo.bin").write_bytes(b"\x89PNG\x00\x01\x02" * 50)
    commit_all(repo, "a logo", T0 + 700)
    ended: list[bool] = []
    real = blame_engine._start_git

    def watched(root_: Path, relpath: str, rev: str | None, span: Any = None) -> Any:
        pending = real(root_, relpath, rev, span)
        cancel = pending.cancel
        pending.cancel = lambda: (ended.append(True), cancel())[1]  # type: ignore[method-assign]
        return pending

    monkeypatch.setattr(blame_engine, "_start_git", watched)
    conn = connect(Path(os.environ["DEJA_DB"]))
    try:
        head = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        with pytest.raises(DejaError, match="binary"):
            api.compute(conn, repo / "logo.bin", head, None, refresh=False)
    finally:
        conn.close()
    assert ended == [True]
    assert not blame_engine._EARLY


def test_a_note_on_another_file_s_commit_keeps_the_cached_answer(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file's cached answer reads only the notes of the commits its lines came
    from: a note written for a commit that touched another file (what each commit's
    hook does) keeps it; a note of one of its own commits does not."""
    from deja_blame.attribution import api
    from deja_blame.attribution import blame as blame_module
    from deja_blame.index.db import connect

    (repo / "a.py").write_text("a = 1\n")
    commit_all(repo, "a", T0)
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "b.py").write_text("b = 2\nc = 3\n")
    commit_all(repo, "b", T0 + 60)
    b_commit = git(repo, "rev-parse", "HEAD").strip()
    (repo / "a.py").write_text("a = 1\nd = 4\n")
    commit_all(repo, "a again", T0 + 120)
    a_commit = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "notes", "--ref", "refs/notes/deja", "add", "-m", "{}", base)

    computed: list[str] = []
    real = blame_module.blame_versions

    def counting(repo_: Any, versions: Any, *args: Any, **kw: Any) -> Any:
        computed.append(versions[0].relpath)
        return real(repo_, versions, *args, **kw)

    monkeypatch.setattr(blame_module, "blame_versions", counting)
    conn = connect(Path(os.environ["DEJA_DB"]))
    try:
        api.compute(conn, repo / "b.py", None, None, refresh=False)
        api.compute(conn, repo / "b.py", None, None, refresh=False)
        assert computed == ["b.py"]  # cached
        git(repo, "notes", "--ref", "refs/notes/deja", "add", "-m", "{}", a_commit)
        api.compute(conn, repo / "b.py", None, None, refresh=False)
        assert computed == ["b.py"]  # a.py's commit's note: b.py's answer stands
        git(repo, "notes", "--ref", "refs/notes/deja", "add", "-m", "{}", b_commit)
        api.compute(conn, repo / "b.py", None, None, refresh=False)
        assert computed == ["b.py", "b.py"]  # its own commit's note: computed again
        git(repo, "notes", "--ref", "refs/notes/deja", "remove", base)
        api.compute(conn, repo / "b.py", None, None, refresh=False)
        assert computed == ["b.py", "b.py"]  # a note gone from a commit it never read
    finally:
        conn.close()


def test_cat_file_reads_a_name_that_is_not_utf8_and_goes_on(repo: Path) -> None:
    """A name that is not UTF-8 (blame's porcelain gives it as surrogate escapes)
    once raised while asking git and turned off every later read of the process:
    the commit-window rules then saw no old version of any file."""
    import os

    from deja_blame.gitutil import CatFile

    (repo / "good.py").write_text("x = 1\n")
    with open(os.fsencode(repo) + b"/caf\xe9.py", "wb") as f:
        f.write(b"y = 2\n")
    commit_all(repo, "two files", T0)
    batch = CatFile(repo)
    try:
        assert batch.read("HEAD:" + os.fsdecode(b"caf\xe9.py")) == b"y = 2\n"
        assert batch.read("HEAD:\udc80\ud800.py") is None  # no name git can have
        assert batch.read("HEAD:good.py") == b"x = 1\n"
    finally:
        batch.close()


def test_deja_no_cache_computes_afresh(
    committed: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """DEJA_NO_CACHE=1 computes everything afresh: no cached answer is read back (the
    README says so; the attribution cache was still read on the computing path)."""
    from deja_blame.attribution import api, cache
    from deja_blame.index.db import connect

    repo = committed["repo"]
    conn = connect(Path(os.environ["DEJA_DB"]))
    try:
        api.compute(conn, repo / "cart.py", None, None, refresh=False)  # cached
        loaded: list[str] = []
        real = cache.load
        monkeypatch.setattr(cache, "load", lambda *a: loaded.append(a[1]) or real(*a))
        api.compute(conn, repo / "cart.py", None, None, refresh=False)
        assert loaded  # the cache is read without the variable
        loaded.clear()
        monkeypatch.setenv("DEJA_NO_CACHE", "1")
        api.compute(conn, repo / "cart.py", None, None, refresh=False)
        assert loaded == []
    finally:
        conn.close()


def test_an_answer_computed_without_notes_is_not_deja_blame_s(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The post-commit hook computes a commit's answer without deja's notes (it is
    writing them); deja blame reads them. A teammate's note on an older commit names
    its lines: after the hook ran on a later commit, deja blame must still give
    those lines to the note's session, not the hook's cached answer."""
    import json

    root = tmp_path / "agroot"
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(root))
    (repo / "cart.py").write_text("TAX_RATE = 0.2\n")
    commit_all(repo, "person starts", T0 - 3600)
    s = Session(root, "3f2a9c1e-aaaa-4bbb-8ccc-0000000000c7")
    s.user("Add a total() helper", T0)
    s.replace(repo / "cart.py", [], AGENT_BLOCK, T0 + 60, start=2)
    (repo / "cart.py").write_text("TAX_RATE = 0.2\n" + "\n".join(AGENT_BLOCK) + "\n")
    block = commit_all(repo, "agent block", T0 + 300)
    note = {
        "schema": 2,
        "tool": "deja-blame 0.1.0",
        "commit": block,
        "files": {"cart.py": {"teammate-session": [[2, 1 + len(AGENT_BLOCK), 0.97, T0 + 60]]}},
        "sessions": {"teammate-session": {"agent": "codex", "project": "/elsewhere"}},
    }
    git(repo, "notes", "--ref", "refs/notes/deja", "add", "-m", json.dumps(note), block)
    text = "TAX_RATE = 0.2\n" + "\n".join(AGENT_BLOCK) + "\nX = 1\n"
    (repo / "cart.py").write_text(text)
    commit_all(repo, "person adds X", T0 + 600)
    deja("index")
    deja("annotate", "HEAD", cwd=repo)  # what the post-commit hook runs: no note to write
    warm = deja_json("blame", str(repo / "cart.py"), "--json", "--no-refresh")
    fresh = deja_json(
        "blame", str(repo / "cart.py"), "--json", "--no-refresh", env={"DEJA_NO_CACHE": "1"}
    )
    assert [ln["session"] for ln in fresh["lines"]][1:3] == ["teammate-session"] * 2
    assert [(ln["session"], ln.get("via")) for ln in warm["lines"]] == [
        (ln["session"], ln.get("via")) for ln in fresh["lines"]
    ]


def test_answers_under_a_since_are_not_cached(
    committed: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--since=2.weeks.ago`` is another boundary tomorrow: such answers are neither
    read from nor written to the caches."""
    from deja_blame.attribution import api, blame_options, cache
    from deja_blame.index.db import connect

    repo = committed["repo"]
    touched: list[str] = []
    for name in ("load", "store"):
        real = getattr(cache, name)
        monkeypatch.setattr(
            cache,
            name,
            lambda *a, real=real, name=name, **k: touched.append(name) or real(*a, **k),
        )
    conn = connect(Path(os.environ["DEJA_DB"]))
    try:
        with blame_options.using(blame_options.GitBlameOptions(since="2.weeks.ago")):
            api.compute(conn, repo / "cart.py", None, None, refresh=False)
            api.compute(conn, repo / "cart.py", None, None, refresh=False)
        assert touched == []
        api.compute(conn, repo / "cart.py", None, None, refresh=False)
        assert "store" in touched  # without it, the answer is cached
    finally:
        conn.close()


def test_a_file_no_session_wrote_asks_git_for_no_log(
    committed: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rules' reading ahead (the file's log, on a thread while git blame runs) is
    for files some session wrote: deja stats blames hundreds that none did, and a log
    each made it a fifth slower."""
    from deja_blame.attribution import api
    from deja_blame.attribution.facts.history import RepoHistory
    from deja_blame.index.db import connect

    repo = committed["repo"]
    (repo / "notes.txt").write_text("a person's file\n")
    commit_all(repo, "notes", T0 + 900)
    logs: list[frozenset[str]] = []
    real = RepoHistory.log
    monkeypatch.setattr(
        RepoHistory,
        "log",
        lambda self, rev, paths: logs.append(frozenset(paths)) or real(self, rev, paths),
    )
    conn = connect(Path(os.environ["DEJA_DB"]))
    try:
        api.compute(conn, repo / "notes.txt", None, None, refresh=False)
    finally:
        conn.close()
    assert logs == []


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 40)), min_size=1, max_size=30, unique=True
    ),
    st.integers(-2, 42),
    st.integers(-2, 42),
    st.integers(0, 7),
)
def test_later_writers_answer_as_a_pass_over_every_session(
    writes: list[tuple[int, int]], at: int, limit: int, sid: int
) -> None:
    """``_LaterWriters`` (a bisection) says what the pass over every session's span
    it replaced said: another session wrote here after ``at``, begun by ``limit``."""
    info = {(s, k, 0): (0, float(t), False, True, k) for k, (s, t) in enumerate(writes)}
    spans: dict[int, list[float]] = {}
    for key, w in info.items():
        span = spans.setdefault(key[0], [w[1], w[1]])
        span[0], span[1] = min(span[0], w[1]), max(span[1], w[1])
    expected = any(
        other != sid and last > at and first <= limit for other, (first, last) in spans.items()
    )
    # an edit's writes share its time: each write here is an edit of its own
    edit_info = {(key[0], key[1]): (w[1], w[2], w[3]) for key, w in info.items()}
    assert matcher._LaterWriters(edit_info).any_between(float(at), float(limit), sid) is expected


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 2),  # path
            st.integers(0, 4),  # fingerprint
            st.integers(0, 5),  # session
            st.integers(0, 2),  # edit
            st.integers(0, 3),  # index
            st.integers(0, 2),  # time
        ),
        min_size=1,
        max_size=40,
    ),
    st.lists(st.integers(0, 5), max_size=6),
)
def test_first_writes_walked_by_group_are_each_texts_first_twins(
    rows: list[tuple[int, int, int, int, int, int]], fps: list[int]
) -> None:
    """The writes a line may take on its text alone, found by walking the groups of
    twins, are what asking each write of the text for its group gave: the writes of
    each group's first edit, in ``by_fp``'s order (a tie in time is broken by it)."""
    # each edit one time and one path, as the index has them; rows in its order
    times = {(sid, edit): float(at) for _, _, sid, edit, _, at in rows}
    paths = {(sid, edit): pid for pid, _, sid, edit, _, _ in rows}
    table = sorted(
        {(paths[(s, e)], fp, s, e, idx, times[(s, e)], 0) for _, fp, s, e, idx, _ in rows}
    )
    ws = writes_mod.WriteSet()
    ws.add_rows(table, {1: True, 2: False})
    twins = ws.twins()
    heads = {edit for edit, group in twins.items() if group.members[0] == edit}
    expected = {fp: [k for k in ws.by_fp.get(fp, ()) if k[:2] in heads] for fp in fps}
    assert matcher._first_writes(ws, twins, fps) == expected
