"""The first answer first: deja blame, why and stats read the new transcripts that name
the repository (a byte search, no JSON) before answering, and leave the others to
deja index."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from conftest import commit_env, deja, deja_json, git
from hypothesis import given, settings
from hypothesis import strategies as st
from test_blame import T0, Session

from deja_blame.index import prescan
from deja_blame.index.db import connect
from deja_blame.transcripts.transcript_file import TranscriptFile

BLOCK = ["def total(items):", "    return sum(x.price for x in items)"]

T = TypeVar("T")


def _watch_searches(
    monkeypatch: pytest.MonkeyPatch, keep: Callable[[Path, tuple[prescan.Needle, ...]], T]
) -> list[T]:
    """What ``prescan.holds_any`` is asked, in order, as ``keep(path, needles)`` makes
    it (the transcript searched, or the needles it is searched for); it still searches."""
    asked: list[T] = []
    real = prescan.holds_any

    def counting(path: Path, n: tuple[prescan.Needle, ...], seen: set[bytes] | None = None) -> bool:
        asked.append(keep(path, n))
        return real(path, n, seen)

    monkeypatch.setattr(prescan, "holds_any", counting)
    return asked


def _sessions(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {r[0] for r in conn.execute("SELECT session_id FROM sessions")}


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    root = tmp_path / "agroot"
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(root))
    target = repo / "shop" / "cart.py"
    target.parent.mkdir()
    target.write_text("\n".join(BLOCK) + "\n")
    ours = Session(root, "aaaa0000-0000-4000-8000-000000000001")
    ours.user("Add a total", T0)
    ours.write(target, "\n".join(BLOCK) + "\n", T0 + 10)
    # another project's sessions: nothing in them names this repository
    for k in range(3):
        other = Session(root, f"bbbb0000-0000-4000-8000-00000000000{k}")
        other.user("Tidy the parser", T0 + k)
        other.write(tmp_path / f"elsewhere{k}" / "parse.py", "def parse(text):\n    pass\n", T0 + k)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "cart", env=commit_env(T0 + 100))
    return {"repo": repo, "root": root, "db": tmp_path / "index.db", "target": target}


def test_blame_reads_the_sessions_that_name_the_repository_first(world: dict[str, Path]) -> None:
    doc = deja_json("blame", "shop/cart.py", "--json", cwd=world["repo"])
    assert [ln["session"] for ln in doc["lines"]] == ["aaaa0000-0000-4000-8000-000000000001"] * 2
    assert _sessions(world["db"]) == {"aaaa0000-0000-4000-8000-000000000001"}
    deja("index", "-q", cwd=world["repo"])  # the rest: deja index reads them
    assert len(_sessions(world["db"])) == 4


def test_stats_and_why_read_them_first_too(world: dict[str, Path]) -> None:
    deja("why", "shop/cart.py:1", cwd=world["repo"])
    assert _sessions(world["db"]) == {"aaaa0000-0000-4000-8000-000000000001"}
    deja("stats", "--json", cwd=world["repo"])
    assert _sessions(world["db"]) == {"aaaa0000-0000-4000-8000-000000000001"}


def test_a_session_in_another_clone_is_found_by_the_files_path(
    world: dict[str, Path], tmp_path: Path
) -> None:
    # the same project cloned elsewhere under another name: its root is not ours, the
    # file's repository-relative path is
    clone = tmp_path / "copy-of-shop"
    theirs = Session(world["root"], "cccc0000-0000-4000-8000-000000000001")
    theirs.user("Add a total there", T0 + 5)
    theirs.write(clone / "shop" / "cart.py", "\n".join(BLOCK) + "\n", T0 + 20)
    deja("blame", "shop/cart.py", "--json", cwd=world["repo"])
    assert "cccc0000-0000-4000-8000-000000000001" in _sessions(world["db"])


def test_a_needle_across_chunks_or_json_escaped_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(prescan, "SCAN_CHUNK", 64)
    root = Path("/work/caf\u00e9-app")
    needles = prescan.needles_for(root, ["src/m\u00f8dule.py"])
    f = tmp_path / "t.jsonl"
    # split across two 64-byte chunks
    f.write_bytes(b"x" * 60 + b"/work/caf\xc3\xa9-app/src/a.py\n")
    assert prescan.holds_any(f, needles)
    # JSON text inside JSON (a tool's arguments): the escape escaped again
    inner = json.dumps({"TargetFile": json.dumps("/elsewhere/src/m\u00f8dule.py")})
    f.write_text(inner)
    assert "\\\\u00f8" in inner and prescan.holds_any(f, needles)
    f.write_text(json.dumps({"TargetFile": "/elsewhere/parse.py"}))
    assert not prescan.holds_any(f, needles)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.binary(min_size=1, max_size=4).map(lambda b: b.replace(b"\x00", b"a")), max_size=6),
    st.binary(max_size=40),
)
def test_needles_holding_another_are_left_out_and_the_same_files_found(
    needles: list[bytes], haystack: bytes
) -> None:
    kept = prescan.without_redundant(needles)
    assert set(kept) <= set(needles) and all(a not in b for a in kept for b in kept if a != b)
    assert any(n in haystack for n in needles) == any(n in haystack for n in kept)


_name_bytes = st.lists(st.sampled_from([b"/", b"\\", b'"', b"shop", b"sh", b"op", b"a.py", b"x"]))


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(_name_bytes.map(b"".join).filter(bool), min_size=1, max_size=5),
    _name_bytes.map(b"".join),
    st.sampled_from([1, 2, 64]),
)
def test_the_anchored_search_finds_what_a_search_for_each_needle_finds(
    needles: list[bytes], haystack: bytes, hits: int
) -> None:
    kept = prescan.without_redundant(needles)
    saved = prescan.ANCHOR_HITS
    prescan.ANCHOR_HITS = hits  # past it, an anchor's needles are searched as they are
    try:
        found = prescan._found(haystack, prescan.search_plan(kept))
    finally:
        prescan.ANCHOR_HITS = saved
    assert found == any(n in haystack for n in needles)


def test_the_forms_of_a_name_share_one_anchor() -> None:
    plan = prescan.search_plan(prescan.needles_for(Path("/w/shop"), ["src/cart.py"]))
    anchors = dict(plan.anchored)
    assert set(anchors) == {b"shop"} and plan.direct == ()
    assert plan.named == (prescan.InFolder((b"src",), b"cart.py"),)
    assert b"/w/shop" in anchors[b"shop"] and b"\\shop\\" in anchors[b"shop"]


def test_the_escaped_forms_of_a_name_are_one_search() -> None:
    needles = prescan.needles_for(Path("/w/shop"), ["src/a.py"])
    assert b"\\shop\\" in needles and b"\\\\shop\\\\" not in needles
    # the file by its name: whatever folder the session resolved it against
    assert b"/w/shop" in needles and prescan.InFolder((b"src",), b"a.py") in needles
    assert b"a.py" not in needles and b"src/a.py" not in needles


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ("my file.py", b'{"uri": "file:///home/bob/work2/my%20file.py"}'),
        ("caf\u00e9_menu.py", json.dumps({"path": "/w2/caf\u00e9_menu.py"}).encode()),
        ("\u65e5\u672c.py", json.dumps({"path": "/w2/\u65e5\u672c.py"}).encode()),
        ("\u65e5\u672c.py", json.dumps(json.dumps({"path": "/w2/\u65e5\u672c.py"})).encode()),
        ("\u65e5\u672c.py", b"file:///w2/%E6%97%A5%E6%9C%AC.py"),
        ("\u65e5\u672c.py", "/w2/\u65e5\u672c.py".encode()),
    ],
)
def test_a_file_name_is_found_in_every_form_a_transcript_writes_it(
    tmp_path: Path, name: str, written: bytes
) -> None:
    """A name with characters a transcript may write escaped (a space in a file://
    URI, JSON's \\u escapes, once or twice): its longest run of plain characters,
    or, too short a run (``.py``), the name's escaped forms."""
    needles = prescan.name_needles([f"src/{name}"])
    assert all(len(n) >= prescan.PLAIN_RUN_MIN for n in needles)
    f = tmp_path / "t.jsonl"
    f.write_bytes(written)
    assert prescan.holds_any(f, needles)
    f.write_bytes(b'{"path": "/w2/src/other.py"}')
    assert not prescan.holds_any(f, needles)


def test_a_session_in_a_subfolder_of_a_clone_under_another_name_is_read_first(
    tmp_path: Path, repo: Path
) -> None:
    """Codex in ``src/`` of a clone at ``/home/alice/work2`` names ``app.py`` (its
    apply_patch is relative): neither the repository nor ``src/app.py``. Found by the
    file's name, the first blame is the complete index's."""
    from test_sessions_from_anywhere import APP, SID, UTIL, codex, commit_all

    home = tmp_path / "home"  # the fresh HOME conftest gives every test
    codex(home, "/home/alice/work2/src", {"app.py": APP})
    commit_all(repo, {"src/app.py": APP, "src/util.py": UTIL}, "the work", T0 + 7200)
    first = _ask(tmp_path, repo, "first.db", "blame", "src/app.py", "--json")
    _index_all(tmp_path, repo, "c.db")
    assert first == _ask(tmp_path, repo, "c.db", "blame", "src/app.py", "--json")
    assert {ln["session"] for ln in json.loads(first)["lines"]} == {SID["codex"]}


def test_a_renamed_file_s_old_name_is_searched_for_once_git_blame_names_it(
    tmp_path: Path, repo: Path
) -> None:
    """A session in a clone under another folder name wrote ``src/old.py``; a person
    renamed it to ``src/new.py``. Its transcript names neither the repository nor
    ``new.py``: the refresh leaves it, and once git blame says the lines were in
    ``src/old.py`` the answer reads it (the other projects' sessions stay unread)."""
    from test_sessions_from_anywhere import APP, SID, UTIL, claude_code, commit_all

    home = tmp_path / "home"  # the fresh HOME conftest gives every test
    claude_code(home, "/home/alice/work2", {"src/old.py": APP})
    for k in range(3):  # other projects' sessions, left for deja index
        other = Session(home / ".gemini" / "antigravity", f"bbbb0000-0000-4000-8000-00000000000{k}")
        other.user("Tidy the parser", T0 + k)
        other.write(tmp_path / f"elsewhere{k}" / "parse.py", "def parse(text):\n    pass\n", T0 + k)
    commit_all(repo, {"src/old.py": APP, "src/util.py": UTIL}, "the work", T0 + 7200)
    git(repo, "mv", "src/old.py", "src/new.py")
    git(repo, "commit", "-q", "-m", "rename", env=commit_env(T0 + 9000))
    first = _ask(tmp_path, repo, "first.db", "blame", "src/new.py", "--json")
    assert _sessions(tmp_path / "first.db") == {SID["claude-code"]}
    _index_all(tmp_path, repo, "c.db")
    assert first == _ask(tmp_path, repo, "c.db", "blame", "src/new.py", "--json")
    assert {ln["session"] for ln in json.loads(first)["lines"]} == {SID["claude-code"]}
    # and why, asked first, too
    why = _ask(tmp_path, repo, "why.db", "why", "src/new.py:3", "--json")
    assert why == _ask(tmp_path, repo, "c.db", "why", "src/new.py:3", "--json")


def _index_all(tmp_path: Path, repo: Path, db: str) -> None:
    """deja index of every transcript under the fresh HOME into ``db``."""
    deja("index", "-q", cwd=repo, env={"DEJA_ANTIGRAVITY_ROOT": "", "DEJA_DB": str(tmp_path / db)})


def _ask(tmp_path: Path, repo: Path, db: str, *args: str) -> bytes:
    # the agents' default places under the fresh HOME, none named by a variable
    env = {"DEJA_ANTIGRAVITY_ROOT": "", "DEJA_DB": str(tmp_path / db), "DEJA_NO_CACHE": "1"}
    return deja(*args, cwd=repo, env=env).stdout


def test_a_transcript_found_unrelated_is_not_searched_again_until_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = connect(tmp_path / "i.db")
    f = tmp_path / "t.jsonl"
    f.write_text('{"content": "/elsewhere/parse.py"}\n')
    tf = TranscriptFile("s1", f, tmp_path, "antigravity")
    needles = prescan.needles_for(tmp_path / "repo", ["a.py"])
    searched = _watch_searches(monkeypatch, lambda path, n: path)
    assert prescan.split(conn, [tf], needles) == ([], [tf])
    assert prescan.split(conn, [tf], needles) == ([], [tf])
    assert len(searched) == 1
    f.write_text('{"content": "' + str(tmp_path / "repo" / "a.py") + '"}\n')
    assert prescan.split(conn, [tf], needles) == ([tf], [])


def test_the_first_answer_is_the_complete_index_s_answer(tmp_path: Path, repo: Path) -> None:
    """The first blame and why, from an empty index (only the transcripts that name the
    repository or the file read first), say byte for byte what they say once every
    transcript is indexed: three agents, sessions recorded in this clone, on another
    machine and on Windows, a stranger's project with the same relative paths."""
    from test_sessions_from_anywhere import (
        APP,
        CAROL_APP,
        SID,
        UTIL,
        antigravity,
        claude_code,
        codex,
        commit_all,
        lines,
        rewritten,
    )

    home = tmp_path / "home"  # the fresh HOME conftest gives every test
    extra = lines("extra", 6)
    head = "".join(APP.splitlines(keepends=True)[:4])  # rewritten later by another agent
    antigravity(home, str(repo), {"src/app.py": APP})
    # on Windows, under another folder name: only the file's own path names it
    claude_code(home, "C:\\Users\\bob\\shop", {"src/util.py": UTIL, "src/app.py": head})
    codex(home, "/home/alice/work/shop", {"src/extra.py": extra})  # another machine
    carol = Session(home / ".gemini" / "antigravity", "ca401000-0000-4000-8000-000000000001")
    carol.user("Price things my way", T0 + 30)
    carol.write(Path("/home/carol/other/src/app.py"), CAROL_APP, T0 + 40)
    for k in range(3):  # other projects' sessions, left for deja index
        other = Session(home / ".gemini" / "antigravity", f"bbbb0000-0000-4000-8000-00000000000{k}")
        other.user("Tidy the parser", T0 + k)
        other.write(tmp_path / f"elsewhere{k}" / "parse.py", "def parse(text):\n    pass\n", T0 + k)
    files = {"src/app.py": APP, "src/util.py": UTIL, "src/extra.py": extra}
    commit_all(repo, files, "the sessions' work", T0 + 7200)
    commit_all(repo, {"src/app.py": rewritten(APP, keep=6)}, "a person rewrites some", T0 + 9000)

    def ask(db: str, *args: str) -> bytes:
        # the agents' default places under the fresh HOME, none named by a variable
        env = {"DEJA_ANTIGRAVITY_ROOT": "", "DEJA_DB": str(tmp_path / db)}
        if db == "complete.db":
            env["DEJA_NO_CACHE"] = "1"  # computed from the index, not read back
        return deja(*args, cwd=repo, env=env).stdout

    ask("complete.db", "index", "-q")
    named: set[str] = set()
    for n, rel in enumerate(files):
        for question in (("blame", rel, "--json"), ("why", f"{rel}:4", "--json")):
            first = ask(f"first-{n}-{question[0]}.db", *question)
            assert first == ask("complete.db", *question), (question, first.decode())
            if question[0] == "blame":
                named |= {ln["session"] for ln in json.loads(first)["lines"]}
    # not vacuous: each agent's session is in the answers, and only they are
    assert named - {None} == set(SID.values())


def test_stats_in_a_clone_under_another_name_is_the_complete_index_s_answer(
    tmp_path: Path,
) -> None:
    """A clone at a folder of another name (``git clone .../inventory c6/stock``): the
    sessions ran in the original (``/home/alice/code/inventory``) and name neither
    ``stock`` nor its root. The first deja stats finds them by the name the clone's
    remote gives the repository, and says what it left unread."""
    from test_sessions_from_anywhere import APP, FILES, claude_code, commit_all, rewritten

    home = tmp_path / "home"  # the fresh HOME conftest gives every test
    origin = tmp_path / "code" / "inventory"
    origin.mkdir(parents=True)
    git(origin, "init", "-q", "-b", "main")
    claude_code(home, "/home/alice/code/inventory", FILES)
    for k in range(3):  # other projects' sessions, left for deja index
        other = Session(home / ".gemini" / "antigravity", f"bbbb0000-0000-4000-8000-00000000000{k}")
        other.user("Tidy the parser", T0 + k)
        other.write(tmp_path / f"elsewhere{k}" / "parse.py", "def parse(text):\n    pass\n", T0 + k)
    commit_all(origin, FILES, "the session's work", T0 + 120)
    commit_all(origin, {"src/app.py": rewritten(APP, keep=6)}, "a person rewrites some", T0 + 7200)
    clone = tmp_path / "c6" / "stock"
    git(tmp_path, "clone", "-q", str(origin), str(clone))

    def stats(db: str) -> tuple[dict[str, object], str]:
        env = {"DEJA_ANTIGRAVITY_ROOT": "", "DEJA_DB": str(tmp_path / db), "DEJA_NO_CACHE": "1"}
        proc = deja("stats", "--json", cwd=clone, env=env)
        return json.loads(proc.stdout), proc.stderr.decode()

    first, said = stats("first.db")
    assert first["attributed_lines"] == 11  # the session's 15 lines less the 4 rewritten
    # the other projects' sessions were left, and it says so (not only on a terminal)
    assert first["unread_transcripts"] == 3
    assert "3 new transcripts" in said and "deja index" in said
    deja(
        "index",
        "-q",
        cwd=clone,
        env={"DEJA_ANTIGRAVITY_ROOT": "", "DEJA_DB": str(tmp_path / "complete.db")},
    )
    complete, said = stats("complete.db")
    assert complete["unread_transcripts"] == 0 and "deja index" not in said
    assert {k: v for k, v in first.items() if k != "unread_transcripts"} == {
        k: v for k, v in complete.items() if k != "unread_transcripts"
    }


def test_the_names_a_repository_s_remotes_give_it(tmp_path: Path, repo: Path) -> None:
    git(repo, "remote", "add", "origin", "git@github.com:acme/shop.git")
    git(repo, "remote", "add", "mirror", "https://example.com/team/tools/")
    git(repo, "remote", "add", "local", "C:\\\\Users\\\\bob\\\\src\\\\ledger")
    assert prescan.remote_names(repo) == {"shop", "tools", "ledger"}
    needles = prescan.needles_for(repo)
    assert b"/shop/" in needles and b"\\ledger\\" in needles
    # a linked work tree reads the common config
    (repo / "a").write_text("a\n")
    git(repo, "add", "a")
    git(repo, "commit", "-q", "-m", "a")
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    assert prescan.remote_names(tmp_path / "wt") == {"shop", "tools", "ledger"}
    assert prescan.remote_names(tmp_path) == set()  # no repository: none


def test_an_old_name_already_searched_for_is_not_searched_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``core.py`` renamed from ``click/core.py``: the refresh searched the unread
    transcripts for ``core.py`` already, so the old name (or one holding it) asks no
    pass over them; a name of its own does, once, and only for the connection that
    refreshed; the next answer not again until the transcript changes."""
    from deja_blame.index import unread

    conn = connect(tmp_path / "i.db")
    f = tmp_path / "t.jsonl"
    f.write_text('{"content": "/elsewhere/parse.py"}\n')
    tf = TranscriptFile("s1", f, tmp_path, "antigravity")
    searched = _watch_searches(monkeypatch, lambda path, n: path)
    unread.left_unread(conn, [tmp_path], [tf], (b"/repo/", b"core.py"))
    assert unread.read_naming(conn, ["click/core.py"]) == 0
    assert unread.read_naming(conn, ["lib/core.pyx"]) == 0  # holds core.py: not there
    assert searched == []
    assert unread.read_naming(connect(tmp_path / "other.db"), ["src/old.py"]) == 0
    assert searched == []
    assert unread.read_naming(conn, ["src/old.py"]) == 0
    assert unread.read_naming(conn, ["src/old.py"]) == 0
    assert searched == [f]
    # in another folder: no search either, old.py is nowhere in it
    assert unread.read_naming(conn, ["lib/old.py"]) == 0
    assert searched == [f]
    # the next answer (another refresh, the same transcript unchanged) does not
    # search it for that name again
    unread.left_unread(conn, [tmp_path], [tf], (b"/repo/", b"core.py"))
    assert unread.read_naming(conn, ["src/old.py"]) == 0
    assert searched == [f]
    f.write_text('{"content": "/home/alice/work2/src/old.py"}\n')
    unread.left_unread(conn, [tmp_path], [tf], (b"/repo/", b"core.py"))
    assert unread.read_naming(conn, ["src/old.py"]) == 1
    assert searched == [f, f]


@pytest.mark.parametrize(
    ("written", "src", "pkg_src"),
    [
        (b'{"file_path": "/home/alice/work2/src/app.py"}', True, False),
        (json.dumps({"p": "C:\\Users\\bob\\w2\\src\\app.py"}).encode(), True, False),
        (json.dumps(json.dumps({"p": "C:\\Users\\bob\\w2\\src\\app.py"})).encode(), True, False),
        (b"file:///home/bob/w2%2Fsrc%2Fapp.py", True, False),  # a URI quoting its separators
        (b'"src\\/app.py"', True, True),  # JSON's optional escape of a slash; relative
        (b"*** Add File: app.py\\n", True, True),  # relative to a folder from elsewhere
        (b'"cmd": "cd src && cat > ./app.py"', True, True),
        (b'"path": "../app.py"', True, True),  # resolved in the text: any folder
        (b'"path": "/w2/lib/../app.py"', True, True),
        (b'"files": "a.py\\napp.py"', True, True),  # a JSON string's line begins with it
        (b'"files": "a.py\\nsrc/app.py"', True, True),
        (b'"p": "\\u002Fw2\\u002Fsrc\\u002Fapp.py"', True, False),
        (b'{"file_path": "/home/zed/other/lib/app.py"}', False, False),  # another folder
        (json.dumps({"p": "C:\\Users\\bob\\w2\\lib\\app.py"}).encode(), False, False),
        (b'{"file_path": "/home/zed/other/myapp.py"}', False, False),  # another name
        (b'{"file_path": "/app.py"}', False, False),  # the file system's top
        (b'{"file_path": "/home/zed/xsrc/app.py"}', False, False),
        # in two folders: the folder above counts too, where the text names it
        (b'{"file_path": "/home/alice/work2/pkg/src/app.py"}', True, True),
        (json.dumps({"p": "C:\\Users\\bob\\w2\\pkg\\src\\app.py"}).encode(), True, True),
        (b'{"file_path": "/src/app.py"}', True, False),  # above the last folder: unchecked
        (b'"patch": "*** Add File: src\\\\app.py"', True, True),
        (b"file:///w2/pkg%2Fsrc%2Fapp.py", True, True),
        (b'"p": "\\u002Fw2\\u002Fpkg\\u002Fsrc\\u002Fapp.py"', True, True),
        (b'"p": "/w2/lib/../src/app.py"', True, True),
        (b'"files": "a.py\\npkg/src/app.py"', True, True),
    ],
)
def test_a_name_in_a_folder_is_found_where_a_path_can_end_in_that_folder(
    tmp_path: Path, written: bytes, src: bool, pkg_src: bool
) -> None:
    """``src/app.py`` is searched for as ``app.py`` after ``src`` and separators (raw,
    escaped, quoted), after ``.`` or ``..``, or bare (a reader resolves it against a
    folder it takes from a field or a file); not after another folder: every
    project has an ``app.py``, an ``__init__.py``, an ``index.ts``. ``pkg/src/app.py``
    as ``app.py`` after ``src`` after ``pkg``, or after ``src`` where a relative
    path's text begins."""
    needles = prescan.name_needles(["src/app.py"])
    assert needles == (prescan.InFolder((b"src",), b"app.py"),)
    deeper = prescan.name_needles(["pkg/src/app.py"])
    assert deeper == (prescan.InFolder((b"src", b"pkg"), b"app.py"),)
    f = tmp_path / "t.jsonl"
    f.write_bytes(written)
    assert prescan.holds_any(f, needles) is src
    assert prescan.holds_any(f, deeper) is pkg_src


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [b"/", b"\\", b"\\\\", b'"', b" ", b"src", b"lib", b"app.py", b".", b"..", b"%2F", b"x"]
            + [b"pkg", b"\\u002F", b"\\n"]
        ),
        max_size=24,
    ).map(b"".join),
    st.integers(min_value=1, max_value=16),
)
def test_a_name_in_a_folder_cut_by_a_chunk_is_never_missed(haystack: bytes, chunk: int) -> None:
    """Read in chunks, the search finds what it finds in the whole text, or more (what
    a chunk cut off before a name is not known: read)."""
    import tempfile

    needles = prescan.name_needles(["pkg/src/app.py"])
    whole = prescan._found(haystack, prescan.search_plan(needles))
    saved = prescan.SCAN_CHUNK
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "t"
        f.write_bytes(haystack)
        prescan.SCAN_CHUNK = chunk
        try:
            assert prescan.holds_any(f, needles) >= whole
        finally:
            prescan.SCAN_CHUNK = saved


@pytest.mark.parametrize(
    ("rel", "theirs"),
    [("pkg/__init__.py", "lib{k}/__init__.py"), ("web/src/index.ts", "src/index.ts")],
)
def test_a_common_file_name_does_not_read_every_project_that_has_one(
    tmp_path: Path, repo: Path, rel: str, theirs: str
) -> None:
    """``pkg/__init__.py``, ``web/src/index.ts``: other projects' sessions wrote their
    own ``__init__.py`` in other folders, their own ``src/index.ts``, and are left for
    deja index; a session in a clone under another folder name that wrote this one
    is read first, and the first blame is the complete index's."""
    from test_sessions_from_anywhere import SID, claude_code, commit_all, lines

    home = tmp_path / "home"  # the fresh HOME conftest gives every test
    init = lines("init", 6)
    claude_code(home, "/home/alice/work2", {rel: init})
    others = set()
    for k in range(3):
        sid = f"bbbb0000-0000-4000-8000-00000000000{k}"
        other = Session(home / ".gemini" / "antigravity", sid)
        other.user("Make it a package", T0 + k)
        other.write(tmp_path / f"elsewhere{k}" / theirs.format(k=k), init, T0 + k)
        others.add(sid)
    commit_all(repo, {rel: init}, "the work", T0 + 7200)
    first = _ask(tmp_path, repo, "first.db", "blame", rel, "--json")
    assert _sessions(tmp_path / "first.db") == {SID["claude-code"]}
    _index_all(tmp_path, repo, "c.db")
    assert others < _sessions(tmp_path / "c.db")
    assert first == _ask(tmp_path, repo, "c.db", "blame", rel, "--json")
    assert {ln["session"] for ln in json.loads(first)["lines"]} == {SID["claude-code"]}


def test_a_name_found_nowhere_is_not_searched_for_again_in_other_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``src/click/core.py`` was ``click/core.py``: a transcript the refresh found to
    hold ``core.py`` nowhere holds it in no folder, so the old name asks it no search
    (in this answer or the next); one that holds ``core.py`` in another folder is
    searched, and one that holds the old path is read."""
    from deja_blame.index import unread

    conn = connect(tmp_path / "i.db")
    f = tmp_path / "t.jsonl"
    f.write_text('{"content": "/elsewhere/parse.py"}\n')
    tf = TranscriptFile("s1", f, tmp_path, "antigravity")
    searched = _watch_searches(monkeypatch, lambda path, n: path)
    needles = prescan.needles_for(tmp_path / "repo", ["src/click/core.py"])

    def refresh_then_old_name() -> int:
        assert prescan.split(conn, [tf], needles) == ([], [tf])
        unread.left_unread(conn, [tmp_path], [tf], needles)
        return unread.read_naming(conn, ["click/core.py"])

    assert refresh_then_old_name() == 0
    assert searched == [f]  # the refresh's search only
    assert refresh_then_old_name() == 0
    assert searched == [f]  # the next answer: neither
    f.write_text('{"content": "/elsewhere/lib/core.py"}\n')
    assert refresh_then_old_name() == 0
    assert searched == [f, f, f]  # holds core.py elsewhere: the old name is searched for
    f.write_text('{"content": "/home/alice/work2/click/core.py"}\n')
    assert refresh_then_old_name() == 1
    assert searched == [f, f, f, f, f]


def test_a_name_found_nowhere_leaves_the_search_beside_another_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``src/click/core.py`` was ``click.py`` and ``click/core.py``: the old names'
    search of a transcript the refresh found to hold ``core.py`` nowhere looks for
    ``click.py`` alone (a pass over the file less); one holding ``click.py`` is read."""
    from deja_blame.index import unread

    conn = connect(tmp_path / "i.db")
    f = tmp_path / "t.jsonl"
    f.write_text('{"content": "/elsewhere/parse.py"}\n')
    tf = TranscriptFile("s1", f, tmp_path, "antigravity")
    searched = _watch_searches(monkeypatch, lambda path, n: n)
    needles = prescan.needles_for(tmp_path / "repo", ["src/click/core.py"])
    assert prescan.split(conn, [tf], needles) == ([], [tf])
    unread.left_unread(conn, [tmp_path], [tf], needles)
    assert unread.read_naming(conn, ["click.py", "click/core.py"]) == 0
    assert searched[1:] == [(b"click.py",)]
    f.write_text('{"content": "/home/alice/work2/click.py"}\n')
    assert prescan.split(conn, [tf], needles) == ([], [tf])
    unread.left_unread(conn, [tmp_path], [tf], needles)
    assert unread.read_naming(conn, ["click.py", "click/core.py"]) == 1


def test_an_anchor_found_nowhere_leaves_the_old_names_holding_it_unsearched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A clone named ``click``: the refresh searched the unread transcript for
    ``click`` (the anchor of ``/click/``, ``\\click\\`` and the clone's path) and
    ``core.py`` and found neither, so the old names ``click.py`` and ``click/core.py``
    ask it nothing more in this answer; a transcript holding ``click.py`` is read."""
    from deja_blame.index import unread

    conn = connect(tmp_path / "i.db")
    f = tmp_path / "t.jsonl"
    f.write_text('{"content": "/elsewhere/parse.py"}\n')
    tf = TranscriptFile("s1", f, tmp_path, "antigravity")
    searched = _watch_searches(monkeypatch, lambda path, n: n)
    needles = prescan.needles_for(tmp_path / "click", ["src/click/core.py"])

    def refresh_then_old_names() -> int:
        nowhere: prescan.Nowhere = {}
        assert prescan.split(conn, [tf], needles, nowhere) == ([], [tf])
        unread.left_unread(conn, [tmp_path], [tf], needles, nowhere)
        return unread.read_naming(conn, ["click.py", "click/core.py"])

    assert refresh_then_old_names() == 0
    assert len(searched) == 1  # the refresh's search only
    f.write_text('{"content": "/home/alice/work2/click.py"}\n')
    assert refresh_then_old_names() == 1
    assert searched[2:] == [(b"click.py",)]  # core.py is still nowhere


@pytest.mark.parametrize(
    "written",
    [
        b'"/home/alice/work2/click.py"',
        b'"\\/home\\/alice\\/work2\\/click.py"',
        b'"{\\"TargetFile\\": \\"/home/alice/work2/click.py\\"}"',
        b'"file:///home/alice/work2%2Fclick.py"',
        b'"C:\\\\Users\\\\alice\\\\work2\\\\click.py"',
        b'"\\\\home\\u002Fclick.py"',
        b'"./click.py"',
        b'"..\\\\click.py"',
        b'"cat > click.py"',
        b'"file:///C:/Users/alice/work2/click%5Ccore.py"',
        b'"work2%2Fclick%2Fcore.py"',
    ],
)
def test_the_old_names_search_reads_every_shape_of_an_old_name(
    tmp_path: Path, written: bytes
) -> None:
    """In a clone named ``click``, ``src/click/core.py`` was ``click.py`` and
    ``click/core.py``: a transcript of a clone under another name that wrote one of
    them, in any form a transcript writes a path in (raw, JSON-escaped once or twice,
    URI-quoted, Windows, ``\\u002F``, relative, bare), holds ``click``, so what the
    refresh found nowhere never spares it the old names' search, which reads it."""
    from deja_blame.index import unread

    conn = connect(tmp_path / "i.db")
    f = tmp_path / "t.jsonl"
    f.write_bytes(b'{"content": ' + written + b"}\n")
    tf = TranscriptFile("s1", f, tmp_path, "antigravity")
    needles = prescan.needles_for(tmp_path / "click", ["src/click/core.py"])
    nowhere: prescan.Nowhere = {}
    assert prescan.split(conn, [tf], needles, nowhere) == ([], [tf])
    unread.left_unread(conn, [tmp_path], [tf], needles, nowhere)
    assert unread.read_naming(conn, ["click.py", "click/core.py"]) == 1


def test_another_file_s_question_searches_an_unread_transcript_for_its_name_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before ``deja index``, a question about ``src/b.py`` after one about
    ``src/a.py``: the unread transcript was found to hold the repository's needles
    nowhere, so it is searched for ``b.py`` alone (a pass, not one per needle); once
    it changes, for everything again, and one naming the repository is read."""
    conn = connect(tmp_path / "i.db")
    f = tmp_path / "t.jsonl"
    f.write_text('{"content": "/elsewhere/parse.py"}\n')
    tf = TranscriptFile("s1", f, tmp_path, "antigravity")
    searched = _watch_searches(monkeypatch, lambda path, n: n)
    repo = tmp_path / "shop"
    first = prescan.needles_for(repo, ["src/a.py"])
    second = prescan.needles_for(repo, ["src/b.py"])
    assert prescan.split(conn, [tf], first) == ([], [tf])
    assert prescan.split(conn, [tf], second) == ([], [tf])
    assert searched[1:] == [(prescan.InFolder((b"src",), b"b.py"),)]
    f.write_text('{"content": "' + str(repo / "README.md") + '"}\n')
    assert prescan.split(conn, [tf], second) == ([tf], [])
    assert searched[2] == second


def test_deja_index_drops_the_refreshes_memos_of_unread_transcripts(
    tmp_path: Path, repo: Path
) -> None:
    """A first answer remembers the transcripts it left unread (``prescan`` memos);
    ``deja index`` of every agent's transcripts reads them, and the memos go with them.
    An index of one root only keeps them (the other roots' transcripts are unread)."""
    other = Session(
        tmp_path / "home" / ".gemini" / "antigravity", "bbbb0000-0000-4000-8000-000000000001"
    )
    other.user("Tidy the parser", T0)
    other.write(tmp_path / "elsewhere" / "parse.py", "def parse(text):\n    pass\n", T0)
    (repo / "app.py").write_text("x = 1\n")
    git(repo, "add", "app.py")
    git(repo, "commit", "-q", "-m", "app", env=commit_env(T0 + 60))
    db = tmp_path / "i.db"
    env = {"DEJA_ANTIGRAVITY_ROOT": "", "DEJA_DB": str(db)}

    def memos() -> int:
        with sqlite3.connect(db) as conn:
            query = "SELECT count(*) FROM meta WHERE key >= 'prescan:' AND key < 'prescan;'"
            return int(conn.execute(query).fetchone()[0])

    deja("blame", "app.py", "--json", cwd=repo, env=env)
    assert memos() > 0
    deja("index", "-q", "--root", str(tmp_path / "nowhere-else"), cwd=repo, env=env, check=False)
    assert memos() > 0
    deja("index", "-q", cwd=repo, env=env)
    assert memos() == 0
