"""The history read once answers as ``git log --parents REV -- PATHS`` does.

Blame's rules (the commit window, moves) read a file's log at every commit a
report or a stats run blames it at; ``repo_history`` walks one ``git log -m``
instead. Here every answer it gives on a history with the shapes that steer
git's walk (merges that keep one side, merges equal to a parent, a merge whose
parents collapse to one, equal commit times out of order, a deleted and a
re-added file, a rename) is compared with git's own.
"""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import pytest
from conftest import commit_env, git

from deja_blame.attribution.facts.history import DIRECT_ASKS, RepoHistory

T0 = 1_780_000_000


def _commit(repo: Path, when: int, message: str, files: dict[str, str | None]) -> None:
    for name, text in files.items():
        path = repo / name
        if text is None:
            git(repo, "rm", "-q", name)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        git(repo, "add", name)
    git(repo, "commit", "-q", "--allow-empty", "-m", message, env=commit_env(when))


def _merge(repo: Path, when: int, branch: str, *extra: str) -> None:
    git(repo, "merge", "-q", "--no-ff", "--no-edit", *extra, branch, env=commit_env(when))


def _history(repo: Path) -> None:
    _commit(repo, T0, "root", {"a.py": "a1\n", "b.py": "b1\n"})
    git(repo, "branch", "side")
    _commit(repo, T0 + 10, "a2", {"a.py": "a1\na2\n"})
    _commit(repo, T0 + 10, "b2 same second", {"b.py": "b1\nb2\n"})
    git(repo, "checkout", "-q", "side")
    _commit(repo, T0 + 5, "side a", {"a.py": "a1\nside\n"})
    _commit(repo, T0 + 30, "side c, newer than main", {"c.py": "c1\n"})
    git(repo, "checkout", "-q", "main")
    # keeps main's a.py: treesame to its first parent for a.py, not for c.py
    _merge(repo, T0 + 20, "side", "-s", "ours")
    _commit(repo, T0 + 20, "c on main", {"c.py": "c-main\n"})
    git(repo, "checkout", "-q", "-b", "topic", "side")
    _commit(repo, T0 + 40, "topic a", {"a.py": "topic\n"})
    git(repo, "checkout", "-q", "main")
    _merge(repo, T0 + 50, "topic", "-X", "theirs")
    _commit(repo, T0 + 60, "delete b", {"b.py": None})
    _commit(repo, T0 + 70, "b again", {"b.py": "b1\nb2\n"})
    _commit(repo, T0 + 80, "empty", {})
    git(repo, "mv", "a.py", "d.py")
    git(repo, "commit", "-q", "-m", "rename", env=commit_env(T0 + 90))
    git(repo, "checkout", "-q", "-b", "twin", "HEAD~1")
    _commit(repo, T0 + 95, "twin d", {"a.py": "same\n"})
    git(repo, "checkout", "-q", "main")
    _commit(repo, T0 + 95, "main d", {"a.py": "same\n"})
    _merge(repo, T0 + 99, "twin")


def _git_log(repo: Path, rev: str, paths: tuple[str, ...]) -> list[tuple]:
    out = subprocess.run(
        [
            "git",
            "log",
            "--parents",
            "--format=>%H %ct %P",
            "--raw",
            "--no-abbrev",
            "--no-renames",
            rev,
            "--",
            *paths,
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    entries: list[list] = []
    for row in out.splitlines():
        if row.startswith(">"):
            fields = row[1:].split()
            entries.append([fields[0], int(fields[1]), tuple(fields[2:]), set()])
        elif row.startswith(":"):
            meta, path = row.split("\t", 1)
            entries[-1][3].add((path, meta.split()[4][:1], meta.split()[3]))
    return [tuple(e) for e in entries]


@pytest.mark.parametrize("walked", [True, False], ids=["walked", "asked-of-git"])
def test_every_log_is_git_s(repo: Path, walked: bool) -> None:
    """Walked from the history read once, and (a single blame's few questions)
    asked of git one by one: the same answers."""
    _history(repo)
    revs = git(repo, "rev-list", "--all").split()
    files = ["a.py", "b.py", "c.py", "d.py", "nowhere.py"]
    history = RepoHistory(repo)
    history._direct = DIRECT_ASKS if walked else -10_000
    asked = 0
    for rev in revs:
        for n in (1, 2):
            for paths in itertools.combinations(files, n):
                got = history.log(rev, set(paths))
                assert got is not None
                mine = [
                    (e.commit, e.time, e.parents, {(p, s, b) for p, (s, b) in e.changes.items()})
                    for e in got
                ]
                assert mine == _git_log(repo, rev, paths), (rev, paths)
                asked += 1
    assert asked == len(revs) * 15
    assert bool(history.commits) == walked
    assert history.log("HEAD", {"b.py"}) == history.log(revs[0], {"b.py"})
    assert history.log("no-such-rev", {"b.py"}) is None


def test_threads_asking_logs_at_once_read_the_history_once_each(tmp_path: Path) -> None:
    """The process's history is shared by threads (a blame's read-ahead, stats' pool,
    the editor server's worker and history threads): several reading it at once once
    broke each other's walk ('dictionary changed size during iteration')."""
    import sys
    import threading

    from deja_blame.attribution.facts import history as RH

    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    branches, commits = 8, 300
    stream, mark = [], 0
    for b in range(branches):
        for i in range(commits):
            mark += 1
            data = f"branch {b} commit {i}\n"
            parent = "" if i == 0 else f"from :{mark - 1}\n"
            stream.append(
                f"commit refs/heads/b{b}\nmark :{mark}\ncommitter T <t@e> {T0 + mark} +0000\n"
                f"data 1\nx\n{parent}M 100644 inline f{b}.txt\ndata {len(data)}\n{data}\n"
            )
    subprocess.run(
        ["git", "fast-import", "--quiet"], input="".join(stream).encode(), cwd=repo, check=True
    )
    tips = [git(repo, "rev-parse", f"b{b}").strip() for b in range(branches)]
    errors: list[str] = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch often: the race shows at once (19 of 80)
    try:
        for _ in range(10):
            history = RepoHistory(str(repo))
            history._direct = DIRECT_ASKS  # past the first logs: the whole history is read
            barrier = threading.Barrier(branches)

            def ask(
                b: int, history: RH.RepoHistory = history, barrier: threading.Barrier = barrier
            ) -> None:
                barrier.wait()
                try:
                    got = history.log(tips[b], {f"f{b}.txt"})
                    assert got is not None and len(got) == commits
                except Exception as exc:  # noqa: BLE001 - what the test looks for
                    errors.append(repr(exc))

            threads = [threading.Thread(target=ask, args=(b,)) for b in range(branches)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []


def test_a_long_lived_reader_keeps_a_bounded_memo(repo: Path) -> None:
    """The editor server asks the log of file after file for hours: the walk's memo
    (every commit walked, per set of paths) keeps only the newest sets."""
    from deja_blame.attribution.facts import history as RH

    _history(repo)
    history = RepoHistory(str(repo))
    history._direct = DIRECT_ASKS  # the whole history read: logs are walked here
    for k in range(RH.MEMOS_KEPT + 40):
        assert history.log("HEAD", {f"no-such-{k}.py"}) == []
    assert len(history._simplified) <= RH.MEMOS_KEPT
    revs = git(repo, "rev-list", "--all").split()
    for rev in revs * 2:  # each revision's reachable commits: only the last few kept
        assert history.paths_had(rev, {"a.py"}) == history.paths_had(rev, {"a.py", "b.py"}) & {
            "a.py"
        }
    assert len(revs) > RH.REACHED_KEPT >= len(history._reached)
    assert history.log("HEAD", {"a.py"}) == history._walk(
        history.resolve("HEAD") or "", frozenset({"a.py"})
    )


def _as_set(entries: list) -> list[tuple]:
    return sorted(
        (e.commit, e.time, e.parents, sorted((p, s, b) for p, (s, b) in e.changes.items()))
        for e in entries
    )


def _random_history(repo: Path, seed: int, commits: int = 90) -> None:
    """Branches forking and merging at random: merges that keep one side's file, the
    other's, or new text; deletions, re-additions, commit times out of order and equal."""
    import random

    rng = random.Random(seed)
    files = [f"f{k}.txt" for k in range(6)]
    stream: list[str] = []
    state: dict[int, dict[str, str]] = {}  # mark -> its tree
    tips = [0]  # marks of branch tips (0: none yet)
    for mark in range(1, commits + 1):
        when = T0 + mark * 10 + rng.choice([0, 0, 0, -25, -10, 10])  # skew and ties
        head = rng.randrange(len(tips))
        first = tips[head]
        tree = dict(state.get(first, {}))
        lines = []
        merge_from = 0
        if first and len(set(tips) - {first}) and rng.random() < 0.3:
            merge_from = rng.choice([t for t in tips if t != first])
            other = state[merge_from]
            for f in files:  # take the other side's file, keep ours, or write anew
                pick = rng.random()
                if pick < 0.3 and f in other:
                    tree[f] = other[f]
                elif pick < 0.4:
                    tree[f] = f"merge {mark} {f}\n"
        else:
            for f in rng.sample(files, rng.randint(0, 2)):
                if f in tree and rng.random() < 0.15:
                    del tree[f]
                else:
                    tree[f] = f"{mark} {f}\n"
        old = state.get(first, {})
        for f in files:
            if f in tree and tree[f] != old.get(f):
                data = tree[f]
                lines.append(f"M 100644 inline {f}\ndata {len(data)}\n{data}")
            elif f not in tree and f in old:
                lines.append(f"D {f}")
        state[mark] = tree
        parent = f"from :{first}\n" if first else ""
        merge = f"merge :{merge_from}\n" if merge_from else ""
        stream.append(
            f"commit refs/heads/b{head}\nmark :{mark}\ncommitter T <t@e> {when} +0000\n"
            f"data 1\nx\n{parent}{merge}" + "".join(x + "\n" for x in lines) + "\n"
        )
        tips[head] = mark
        if merge_from and rng.random() < 0.5:
            tips.remove(merge_from)  # a branch merged and gone
        if rng.random() < 0.15:
            tips.append(mark)  # a new branch from here
    stream.append(f"reset refs/heads/main\nfrom :{tips[0]}\n\n")
    subprocess.run(
        ["git", "fast-import", "--quiet"], input="".join(stream).encode(), cwd=repo, check=True
    )


def test_entries_are_the_walk_s_without_its_order(repo: Path, tmp_path: Path) -> None:
    """``entries`` (the commits that changed the paths, reached by leaping down
    first-parent lines) gives what ``log`` walks commit by commit (git's own, above),
    on the history above and on random branching ones. ``paths_had`` is not the
    walk's: it gives the paths any commit the revision reaches changed (git's
    ``log --full-history -m``, no merge simplified), read from the history and
    asked of git alike."""
    _history(repo)
    worlds = [repo]
    for seed in range(3):
        other = tmp_path / f"random{seed}"
        git(tmp_path, "init", "-q", "-b", "main", str(other))
        _random_history(other, seed)
        worlds.append(other)
    compared = differed = 0
    for world in worlds:
        files = sorted(set(git(world, "log", "--all", "--format=", "--name-only").split()))
        revs = git(world, "rev-list", "--all").split()
        history = RepoHistory(world)
        history._direct = DIRECT_ASKS  # past the first logs: the whole history is read
        sets = [c for n in (1, 2, 3) for c in itertools.combinations([*files, "nowhere"], n)]
        git_had = {
            rev: set(
                git(world, "log", "--full-history", "-m", "--format=", "--name-only", rev).split()
            )
            for rev in revs
        }
        for k, rev in enumerate(revs):
            for paths in sets if world == repo or k % 7 == 0 else sets[:: len(files)]:
                walked = history.log(rev, set(paths))
                history._logs.clear()  # ``entries`` would hand back the walk it kept
                leapt = history.entries(rev, set(paths))
                history._unordered.clear()
                assert walked is not None and leapt is not None
                assert _as_set(leapt) == _as_set(walked), (world, rev, paths)
                had = history.paths_had(rev, set(paths))
                assert had == git_had[rev] & set(paths), (world, rev, paths)
                simplified = {p for e in walked for p in e.changes}
                differed += had != simplified
                compared += 1
        for rev in revs[:: max(1, len(revs) // 6)]:
            direct = RepoHistory(world)  # a one-file question's first asks go to git
            for path in files[:DIRECT_ASKS]:
                got = direct.paths_had(rev, {path})
                assert got == git_had[rev] & {path}, (world, rev, path)
            assert not direct.commits  # git answered, the history was not read
    assert compared > 1000
    # the random histories add and drop files on branches merged away: the walk's
    # simplification hides some of them, and by which paths were asked beside them
    assert differed
    assert history.entries("no-such-rev", {"f0.txt"}) is None


def test_forgotten_histories_close_their_git_process(repo: Path) -> None:
    from deja_blame.attribution.facts import history as history_mod

    (repo / "a.txt").write_text("one\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "a")
    h = history_mod.repo_history(repo)
    assert h.read("HEAD:a.txt") == b"one\n"
    batch = h._batch
    assert batch is not None and batch._proc is not None
    proc = batch._proc
    history_mod.forget_histories()
    assert proc.poll() is not None  # git has exited
    assert history_mod.repo_history(repo) is not h  # a new question reads afresh


def test_a_long_lived_process_keeps_few_git_readers_open(tmp_path: Path) -> None:
    """``deja lsp``/``deja mcp`` answer about many repositories: past
    ``MAX_OPEN_READERS`` the least recently read one's ``cat-file`` closes, and a
    read there later opens a new one."""
    from deja_blame.attribution.facts import history as history_mod

    histories = []
    for k in range(history_mod.MAX_OPEN_READERS + 2):
        repo = tmp_path / f"r{k}"
        repo.mkdir()
        git(repo, "init", "-q")
        (repo / "a.txt").write_text(f"{k}\n")
        git(repo, "add", "a.txt")
        git(repo, "commit", "-qm", "a")
        h = history_mod.repo_history(repo)
        assert h.read("HEAD:a.txt") == f"{k}\n".encode()
        histories.append(h)
    try:
        procs = [h._batch._proc if h._batch is not None else None for h in histories]
        assert procs[:2] == [None, None]  # the two least recently read: closed
        assert all(p is not None and p.poll() is None for p in procs[2:])
        assert histories[0].read("HEAD:a.txt") == b"0\n"  # opens again
        assert histories[2]._batch is None  # now the least recently read
        assert sum(h._batch is not None for h in histories) == history_mod.MAX_OPEN_READERS
    finally:
        history_mod.forget_histories()


@pytest.mark.parametrize("walked", [True, False], ids=["walked", "asked-of-git"])
def test_a_path_that_reads_as_pathspec_magic_is_only_that_path(repo: Path, walked: bool) -> None:
    """A session may name any path: ``:(glob)x*`` is a file of that name, never a
    pattern, and ``:(nope)y`` (magic git rejects) turns no other path's answer off."""
    _commit(repo, T0, "a", {"a.py": "a\n", "xa.py": "x\n"})
    (repo / ":(glob)x*").write_text("g\n")
    git(repo, "--literal-pathspecs", "add", ":(glob)x*")
    _commit(repo, T0 + 10, "glob", {})
    glob_commit = git(repo, "rev-parse", "HEAD").strip()
    history = RepoHistory(repo)
    history._direct = DIRECT_ASKS if walked else -10_000
    asked = {"a.py", ":(glob)x*", ":(nope)y", "gone.py"}
    assert history.paths_had("HEAD", asked) == {"a.py", ":(glob)x*"}
    got = history.log("HEAD", {":(glob)x*"})
    assert got is not None and [e.commit for e in got] == [glob_commit]
    got = history.log("HEAD", {"a.py", ":(nope)y"})
    assert got is not None and len(got) == 1 and set(got[0].changes) == {"a.py"}
    assert bool(history.commits) == walked


@pytest.mark.parametrize("walked", [True, False], ids=["walked", "asked-of-git"])
def test_a_path_only_a_merged_side_branch_held_is_had(repo: Path, walked: bool) -> None:
    """A path added and dropped on a side branch merged since is one git had (some
    commit the revision reaches changed it), whichever paths are asked beside it;
    the revision before the merge does not reach it."""
    _commit(repo, T0, "base", {"app.py": "a\n"})
    before = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "side")
    _commit(repo, T0 + 10, "add helpers", {"helpers.py": "h\n"})
    _commit(repo, T0 + 20, "drop helpers", {"helpers.py": None})
    git(repo, "checkout", "-q", "main")
    _commit(repo, T0 + 30, "util", {"util.py": "u\n"})
    _merge(repo, T0 + 40, "side")
    history = RepoHistory(repo)
    history._direct = DIRECT_ASKS if walked else -10_000
    assert history.paths_had("HEAD", {"helpers.py"}) == {"helpers.py"}
    assert history.paths_had("HEAD", {"util.py", "helpers.py"}) == {"util.py", "helpers.py"}
    assert history.paths_had(before, {"util.py", "helpers.py"}) == set()
