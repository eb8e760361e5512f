"""A warm answer asks git and the index for as little as it can: the commits' authors
kept with the cached answer (never a partial list of them), the shallow check taken
from the rev-parse the command made anyway, one query for every session named, the
cache's use mark written at most every few minutes, JSON escaped only when it can
hold something to escape."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import commit_env, git, run_deja

from deja_blame import gitcli, gitutil, jsonout
from deja_blame.index import queries as Q
from deja_blame.index.db import connect
from deja_blame.outputs import blame_text


@pytest.fixture
def two_authors(repo: Path) -> Path:
    (repo / "a.py").write_text("".join(f"line_{i} = {i}\n" for i in range(1, 11)))
    git(repo, "add", "a.py")
    env = {"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com"}
    git(repo, "commit", "-q", "-m", "one", env={**commit_env(1_784_278_800), **env})
    text = (repo / "a.py").read_text().replace("line_9 = 9", "line_9 = 90")
    (repo / "a.py").write_text(text)
    env = {"GIT_AUTHOR_NAME": "Bo", "GIT_AUTHOR_EMAIL": "bo@example.com"}
    git(repo, "commit", "-qam", "two", env={**commit_env(1_784_278_900), **env})
    return repo


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[set[str]]:
    asked: list[set[str]] = []
    real = gitutil.commit_authors

    def counted(root: Any, commits: set[str]) -> dict[str, gitutil.Author]:
        asked.append(set(commits))
        return real(root, commits)

    monkeypatch.setattr(blame_text, "commit_authors", counted)  # what blame's outputs ask
    return asked


def _blame(repo: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    monkeypatch.chdir(repo)
    got = run_deja("blame", "a.py", *args)
    assert got.exit_code == 0, got.output
    return got.stdout


def test_a_warm_answer_takes_the_authors_from_the_cache(
    two_authors: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _counting(monkeypatch)
    first = _blame(two_authors, monkeypatch, "--json")
    assert asked == [], "git blame named the authors: no git log is needed"
    again = _blame(two_authors, monkeypatch, "--json")
    assert asked == [], "the second answer asked git for the authors"
    assert again == first
    authors = {ln["line"]: ln["author"] for ln in orjson.loads(again)["lines"]}
    assert authors[9] == "Bo" and authors[1] == "Ada"
    assert orjson.loads(again)["lines"][8]["author_mail"] == "<bo@example.com>"
    # the text output reads the same kept authors
    text = _blame(two_authors, monkeypatch)
    assert asked == []
    assert "Bo" in text.splitlines()[8] and "Ada" in text.splitlines()[0]


def test_the_cold_answer_keeps_its_authors_in_one_write(
    two_authors: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deja_blame.attribution import cache

    def second_write(*args: Any) -> None:
        raise AssertionError("the cache entry was written twice (the authors after)")

    monkeypatch.setattr(cache, "add_authors", second_write)
    _blame(two_authors, monkeypatch, "--json")
    asked = _counting(monkeypatch)
    _blame(two_authors, monkeypatch, "--json")
    assert asked == [], "the entry was kept without its authors"


@pytest.mark.parametrize("how", ["file", "config"])
def test_a_mailmap_leaves_the_authors_to_git_log(
    two_authors: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """git blame maps names through a mailmap; deja's authors are git log's, as before."""
    mailmap = "Robert Mapped <rob@example.com> Bo <bo@example.com>\n"
    if how == "file":
        (two_authors / ".mailmap").write_text(mailmap)
    else:
        (two_authors.parent / "people.map").write_text(mailmap)
        git(two_authors, "config", "mailmap.file", str(two_authors.parent / "people.map"))
    asked = _counting(monkeypatch)
    doc = orjson.loads(_blame(two_authors, monkeypatch, "--json"))
    assert len(asked) == 1
    line9 = doc["lines"][8]
    expected = git(two_authors, "log", "-1", "--format=%an <%ae>", "HEAD").strip()
    assert f"{line9['author']} {line9['author_mail']}" == expected


def test_a_line_range_never_keeps_part_of_the_authors(
    two_authors: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _counting(monkeypatch)
    _blame(two_authors, monkeypatch, "--porcelain")  # cached, no authors asked
    assert asked == []
    _blame(two_authors, monkeypatch, "-L", "1,1", "--json")  # one commit's author
    assert len(asked) == 1 and len(asked[0]) == 1
    doc = orjson.loads(_blame(two_authors, monkeypatch, "--json"))
    assert len(asked) == 2, "a line range's authors were kept as the whole file's"
    assert {ln["line"]: ln["author"] for ln in doc["lines"]}[9] == "Bo"
    _blame(two_authors, monkeypatch, "--json")
    assert len(asked) == 2


def test_the_reverse_commits_get_their_own_authors(
    two_authors: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _counting(monkeypatch)
    monkeypatch.chdir(two_authors)
    assert run_deja("blame", "HEAD~1", "a.py", "--json").exit_code == 0  # its authors kept
    assert asked == []  # git blame named them
    got = run_deja("blame", "a.py", "--json", "--reverse", "HEAD~1..HEAD")
    assert len(asked) == 1, "--reverse printed the authors kept for other commits"
    lines = orjson.loads(got.stdout)["lines"]
    assert lines[0]["author"] == "Bo"  # still there at HEAD: the last commit is two


def test_the_shallow_check_is_the_rev_parse_already_made(tmp_path: Path, repo: Path) -> None:
    (repo / "a.py").write_text("x = 1\n")
    git(repo, "add", "a.py")
    git(repo, "commit", "-qm", "one")
    (repo / "a.py").write_text("x = 2\n")
    git(repo, "commit", "-qam", "two")
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow)], check=True
    )
    from deja_blame.attribution.cache import repo_state

    gitcli.SHALLOW.clear()
    assert repo_state(shallow) is not None and repo_state(repo) is not None
    assert gitcli.SHALLOW[str(shallow.resolve())] is True
    assert gitcli.SHALLOW[str(repo.resolve())] is False
    gitcli.SHALLOW.clear()
    gitcli.CliRepository(shallow)
    assert gitcli.SHALLOW == {str(shallow.resolve()): True}
    assert gitutil.is_shallow(str(shallow)) is True


def test_sessions_are_read_in_one_query_each_as_alone(tmp_path: Path) -> None:
    conn = connect(tmp_path / "index.db")
    for n in range(3):
        conn.execute(
            "INSERT INTO sessions(session_id, source, transcript, project, started_at)"
            " VALUES (?,?,?,?,?)",
            (f"s{n}", "antigravity", f"/t{n}", f"/p{n}", "2026-12-01T00:00:00Z"),
        )
    got = Q.sessions_by_ids(conn, ["s2", "s0", "nobody"])
    assert set(got) == {"s0", "s2"}
    assert got["s2"] == Q.session_by_id(conn, "s2")


def test_the_use_mark_is_written_at_most_every_few_minutes(tmp_path: Path) -> None:
    conn = connect(tmp_path / "index.db")
    Q.cache_put(conn, "attribution_cache", "k", b"data", 10, token="t")
    then = time.time() - 5
    conn.execute("UPDATE attribution_cache SET used=?", (then,))
    Q.cache_touch(conn, "attribution_cache", "k", then)
    assert conn.execute("SELECT used FROM attribution_cache").fetchone()[0] == then
    old = time.time() - Q.CACHE_TOUCH_EVERY - 1
    conn.execute("UPDATE attribution_cache SET used=?", (old,))
    Q.cache_touch(conn, "attribution_cache", "k", old)
    assert conn.execute("SELECT used FROM attribution_cache").fetchone()[0] > then


def test_json_is_escaped_only_where_it_can_hold_an_unsafe_character() -> None:
    assert jsonout.dumps({"a": "plain"}) == b'{\n  "a": "plain"\n}\n'
    assert b"\\u202e" in jsonout.dumps({"a": "x\u202ey"})
    assert "é".encode() in jsonout.dumps({"a": "é"})


def test_every_unsafe_character_is_escaped_among_safe_ones() -> None:
    unsafe = [0x80, 0x9F, 0x61C, 0x200E, 0x200F, 0x2028, 0x202E, 0x2066, 0x2069]
    for code in unsafe:
        out = jsonout.dumps({"a": f"é“x{chr(code)}y”"})
        assert b"\\u%04x" % code in out and chr(code).encode() not in out
    for code in (0x7F, 0xA0, 0x61B, 0x200D, 0x2030, 0x2065, 0x206A, 0x201C):
        assert chr(code).encode() in jsonout.dumps({"a": chr(code)})


def test_a_cached_line_range_is_the_whole_answer_s_lines(
    two_authors: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = orjson.loads(_blame(two_authors, monkeypatch, "--json"))  # cached now
    part = orjson.loads(_blame(two_authors, monkeypatch, "-L", "3,5", "--json"))
    assert part["lines"] == whole["lines"][2:5]
    last = orjson.loads(_blame(two_authors, monkeypatch, "-L", "9,40", "--json"))
    assert [ln["line"] for ln in last["lines"]] == [9, 10]
    got = run_deja("blame", "a.py", "-L", "11,12")
    assert str(got.exception) == "file a.py has only 10 lines"


def test_the_deferred_write_keeps_the_index_state_of_the_answer(
    two_authors: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session read into the index after the answer was computed, before the cache's
    deferred write, must leave the entry stale: the state stored is the answer's."""
    from deja_blame.attribution import cache

    states = iter(["when computed", "later", "later", "later"])
    monkeypatch.setattr(cache, "token", lambda conn, root, paths: next(states))
    stored: list[str | None] = []

    def put(conn: Any, table: str, key: str, data: bytes, keep: int, token: Any = None) -> None:
        if table == "attribution_cache":
            stored.append(token)

    monkeypatch.setattr(Q, "cache_put", put)
    _blame(two_authors, monkeypatch, "--porcelain")
    assert stored == ["when computed"]


def test_authors_git_could_not_read_are_git_log_s(repo: Path) -> None:
    """A commit whose author line has no mail or no time: git blame makes up
    "(unknown)" and time 0, git log says nothing. deja's authors are git log's,
    with or without a mailmap."""
    (repo / "f.txt").write_text("one\n")
    git(repo, "add", "f.txt")
    git(repo, "commit", "-qm", "one", env=commit_env(1_784_278_800))
    for k, author in enumerate(["NoMail 1700000000 +0000", "A <a@b>"]):
        (repo / "f.txt").write_text((repo / "f.txt").read_text() + f"line {k}\n")
        git(repo, "add", "f.txt")
        tree = git(repo, "write-tree").strip()
        head = git(repo, "rev-parse", "HEAD").strip()
        raw = f"tree {tree}\nparent {head}\nauthor {author}\ncommitter C <c@c> 1700000000 +0000\n\nm\n"
        made = subprocess.run(
            ["git", "hash-object", "-t", "commit", "-w", "--literally", "--stdin"],
            cwd=repo, input=raw.encode(), capture_output=True, check=True,
        ).stdout.decode().strip()  # fmt: skip
        git(repo, "update-ref", "HEAD", made)
    without = orjson.loads(run_deja_in(repo, "blame", "f.txt", "--json"))
    (repo / ".mailmap").write_text("Nobody <n@n> <nobody@example.com>\n")
    with_map = orjson.loads(run_deja_in(repo, "blame", "f.txt", "--json", "--no-refresh"))
    people = [(ln["author"], ln["author_mail"], ln["author_time"]) for ln in without["lines"]]
    assert people == [
        (ln["author"], ln["author_mail"], ln["author_time"]) for ln in with_map["lines"]
    ]
    assert people[0][0] is not None and "(unknown)" not in str(people)


def run_deja_in(repo: Path, *args: str) -> bytes:
    from conftest import deja

    return deja(*args, cwd=repo, env={"DEJA_NO_CACHE": "1"}).stdout


def test_a_modified_file_takes_the_authors_from_git_blame_too(
    two_authors: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _counting(monkeypatch)
    (two_authors / "a.py").write_text((two_authors / "a.py").read_text() + "new = 1\n")
    doc = orjson.loads(_blame(two_authors, monkeypatch, "--json"))
    assert asked == [], "a file with uncommitted lines asked git log for its authors"
    assert doc["lines"][-1]["author"] is None and doc["lines"][8]["author"] == "Bo"


def _authors_by_line(out: str) -> dict[int, str]:
    return {ln["line"]: ln["author"] for ln in orjson.loads(out)["lines"]}


@pytest.mark.parametrize(
    "how",
    ["replace", "replace, asked from a linked worktree", "grafts", "replace, core.useReplaceRefs"],
)
@pytest.mark.parametrize("fresh", [False, True], ids=["cached", "DEJA_NO_CACHE"])
def test_replaced_commits_never_share_an_answer_with_the_stored_ones(
    two_authors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, fresh: bool
) -> None:
    """git blame follows ``git replace`` and ``info/grafts``: an answer (its authors
    too) taken with them is never printed without them, nor the other way round."""
    repo = two_authors
    where = repo
    if "worktree" in how:
        where = tmp_path / "linked"
        git(repo, "worktree", "add", "-q", "--detach", str(where))
    ours = _authors_by_line(_blame(where, monkeypatch, "--json"))
    assert ours[1] == "Ada" and ours[9] == "Bo"
    head = git(repo, "rev-parse", "HEAD").strip()
    grafts = repo / ".git" / "info" / "grafts"
    if how == "grafts":
        grafts.parent.mkdir(exist_ok=True)
        grafts.write_text(head + "\n")  # HEAD without parents: all its lines are Bo's
        want = {1: "Bo", 9: "Bo"}
    else:
        body = git(repo, "cat-file", "commit", "HEAD").replace("author Bo <", "author Mallory <")
        swapped = (
            subprocess.run(
                ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
                cwd=repo,
                input=body.encode(),
                capture_output=True,
                check=True,
            )
            .stdout.decode()
            .strip()
        )
        git(repo, "replace", head, swapped)
        want = {1: "Ada", 9: "Mallory"}
        if "core" in how:  # replace refs turned off, then on again
            git(repo, "config", "core.useReplaceRefs", "false")
            got = _authors_by_line(_blame(where, monkeypatch, "--json"))
            assert got == ours
            git(repo, "config", "--unset", "core.useReplaceRefs")
    if fresh:
        monkeypatch.setenv("DEJA_NO_CACHE", "1")
    for _ in range(2):  # computed, then warm
        got = _authors_by_line(_blame(where, monkeypatch, "--json"))
        assert {n: got[n] for n in want} == want
    monkeypatch.delenv("DEJA_NO_CACHE", raising=False)
    if how == "grafts":
        grafts.unlink()
    else:
        git(repo, "replace", "-d", head)
    for _ in range(2):
        assert _authors_by_line(_blame(where, monkeypatch, "--json")) == ours


def test_no_authors_are_kept_under_deja_no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    from deja_blame.attribution import cache

    def touched(*args: Any) -> None:
        raise AssertionError("the attribution cache was used under DEJA_NO_CACHE")

    monkeypatch.setenv("DEJA_NO_CACHE", "1")
    monkeypatch.setattr(Q, "cache_get", touched)
    monkeypatch.setattr(Q, "cache_replace_data", touched)
    cache.add_authors(sqlite3.connect(":memory:"), "key", {"c" * 40: ("A", "<a@x>", 1)})
