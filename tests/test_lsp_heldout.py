"""deja lsp: what issue 31's held-out client trial (a plain LSP client of its own,
worlds built from nothing) found that tests/test_lsp.py did not cover."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import deja, git
from lsp_client import LspClient
from test_blame import T0, Session
from test_lsp import SID, clients, lens_lines, start, world

OTHER = "0c0c0c0c-aaaa-4bbb-8ccc-0000000000c0"  # a session of another project
LATER = "9b1d2e3f-aaaa-4bbb-8ccc-000000000002"

__all__ = ["clients", "world"]  # fixtures, used by name


def test_the_authors_clone_with_notes_still_offers_the_hand_off(
    world: dict[str, Any], clients: list[LspClient]
) -> None:
    """With the hooks installed every committed line is read from its note first;
    the session's transcript is still on this machine, so the lens to hand it off
    must stay (it was dropped for every line a note answered)."""
    repo = world["repo"]
    deja("annotate", cwd=repo)  # what the post-commit hook does
    client = start(clients, repo)
    uri = client.open(repo / "cart.py")
    by_line = lens_lines(client.lenses(uri))
    assert list(by_line) == [5]
    assert by_line[5][0].startswith("agy 3f2a9c1e")
    hover = client.hover(uri, 6) or ""
    assert SID in hover and "from the note" in hover  # answered from the note
    assert "hand off" in by_line[5]
    handoff = client.request(
        "workspace/executeCommand", {"command": "deja.handoff", "arguments": [uri, 5]}
    )
    assert handoff["session"] == SID
    assert client.close() == 0


def test_a_note_s_session_unknown_here_gets_no_hand_off(
    world: dict[str, Any], clients: list[LspClient], tmp_path: Path
) -> None:
    """The same note read with an index that does not hold the session: no hand-off lens."""
    repo = world["repo"]
    deja("annotate", cwd=repo)
    empty = {
        "DEJA_DB": str(tmp_path / "other.db"),
        "DEJA_ANTIGRAVITY_ROOT": str(tmp_path / "nothing"),
    }
    (tmp_path / "nothing" / "brain").mkdir(parents=True)
    client = start(clients, repo, empty)
    uri = client.open(repo / "cart.py")
    by_line = lens_lines(client.lenses(uri))
    assert list(by_line) == [5]
    assert "hand off" not in by_line[5]
    assert client.close() == 0


def indexed_sessions(db: Path) -> set[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {r[0] for r in conn.execute("SELECT session_id FROM sessions")}
    finally:
        conn.close()


def test_the_server_reads_only_the_transcripts_that_concern_its_files(
    world: dict[str, Any], clients: list[LspClient], tmp_path: Path
) -> None:
    """A heavy user's other projects are not read before the first lenses (nor by the
    poll): only what can concern the open file, as ``deja blame FILE`` reads. All of
    them at once kept the first lenses waiting (5.1 s against blame's 0.5 s with
    1,500 other sessions in the trial)."""
    other = Session(world["root"], OTHER)
    other.user("Plant the tomatoes", T0)
    other.replace(Path("/home/carol/garden/beds.py"), [], ["tomatoes = plant(rows=4)"], T0 + 9)
    db = tmp_path / "index.db"  # conftest's DEJA_DB
    client = start(clients, world["repo"], {"DEJA_LSP_POLL": "0.1"})
    uri = client.open(world["repo"] / "cart.py")
    assert list(lens_lines(client.lenses(uri))) == [5]
    assert SID in indexed_sessions(db)
    time.sleep(0.5)  # polls come and go: they read no more than the open file needs
    assert client.hover(uri, 6) is not None
    assert OTHER not in indexed_sessions(db)
    deja("index")  # what `deja index` and the post-commit hook are for
    assert OTHER in indexed_sessions(db)
    assert client.close() == 0


def test_a_save_reads_the_new_transcript_lines_that_wrote_the_file(
    world: dict[str, Any], clients: list[LspClient]
) -> None:
    """With no poll at all (DEJA_LSP_POLL=0), saving the file is enough: the load
    reads the new lines of the session that wrote it before blaming."""
    repo = world["repo"]
    client = start(clients, repo)  # the client's default: no poll
    uri = client.open(repo / "cart.py")
    assert list(lens_lines(client.lenses(uri))) == [5]
    added = ["def count(cart):", "    return sum(item.qty for item in cart)"]
    text = (repo / "cart.py").read_text() + "\n\n" + "\n".join(added) + "\n"
    later = Session(world["root"], LATER)
    later.user("Count the items in the cart", T0 + 8000)
    later.replace(repo / "cart.py", [], added, T0 + 8060, start=15)
    (repo / "cart.py").write_text(text)
    client.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": text}]},
    )
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    by_line = lens_lines(client.lenses(uri))
    assert list(by_line) == [5, 14]
    assert by_line[14][0].startswith("agy 9b1d2e3f")
    assert client.close() == 0


def test_the_poll_searches_new_transcripts_once_per_repository(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The poll reads what concerns the open files with one set of needles per
    repository (its root and every open file's path). One set per file made prescan
    forget (it remembers 32 sets) and search every unread transcript again for each
    of 40 open files whenever any transcript grew."""
    import io

    from deja_blame.attribution.model import FileBlame
    from deja_blame.editor.lsp import server as lsp_server
    from deja_blame.editor.lsp.documents import Document
    from deja_blame.index import refresh
    from deja_blame.index.prescan import needles_for

    asked: list[tuple[bytes, ...] | None] = []
    monkeypatch.setattr(
        refresh, "refresh_index", lambda conn, concern=None, changed=None: asked.append(concern)
    )
    srv = lsp_server.Server(io.BytesIO(), io.BytesIO(), None)
    srv.conn = sqlite3.connect(":memory:")
    roots = [tmp_path / "a", tmp_path / "b"]
    for root in roots:
        (root / "src").mkdir(parents=True)
        git(root, "init", "-q")
        for i in range(40):
            (root / "src" / f"f{i}.py").write_text("x = 1\n")
            doc = Document(f"file://{root}/src/f{i}.py", root / "src" / f"f{i}.py")
            doc.blame = FileBlame(path=f"src/f{i}.py", rev=None, root=str(root), lines=[])
            srv.docs[doc.uri] = doc
    srv._refresh_open()
    assert len(asked) == 2, len(asked)
    for root in roots:
        assert needles_for(root, sorted(f"src/f{i}.py" for i in range(40))) in asked


def _walks_recorded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of the thread of each walk of every transcript (a stat each) from now."""
    import threading

    from deja_blame.index import changes

    walked_on: list[str] = []
    real = changes.changed_transcripts

    def spy(*args: Any, **kwargs: Any) -> Any:
        walked_on.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(changes, "changed_transcripts", spy)
    return walked_on


def test_a_poll_with_nothing_new_walks_no_transcript_on_the_worker(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The stat of every transcript (tens of milliseconds with a thousand sessions)
    is the timer thread's: on the worker, hovers waited behind it at every tick
    (hover p99 105 ms with 1,500 sessions and a poll every 0.5 s; 41-65 ms now)."""
    import io
    import threading

    from deja_blame.editor.lsp import server as lsp_server

    srv = lsp_server.Server(io.BytesIO(), io.BytesIO(), tmp_path / "index.db")
    srv._start()
    uri = (world["repo"] / "cart.py").as_uri()
    srv._load(uri, None)
    assert srv.docs[uri].blame is not None
    walked_on = _walks_recorded(monkeypatch)
    states = {str(world["repo"]): lsp_server._state_of(str(world["repo"]))}
    srv._job(("poll", False, states))  # what the timer queues when nothing grew
    assert walked_on == []
    assert lsp_server.unread_transcripts(srv.conn) == {}  # all read: nothing grew
    assert walked_on == [threading.current_thread().name]
    assert srv.conn is not None
    srv.conn.close()


def test_a_poll_with_new_lines_reads_them_without_a_second_walk_on_the_worker(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """When the timer found transcripts grown, it hands the worker their list: the
    worker reads them (the session's new lines reach the open file) without a stat of
    every transcript of its own, which hovers would wait behind."""
    import io

    from deja_blame.editor.lsp import server as lsp_server

    repo = world["repo"]
    srv = lsp_server.Server(io.BytesIO(), io.BytesIO(), tmp_path / "index.db")
    srv._start()
    uri = (repo / "cart.py").as_uri()
    added = ["def count(cart):", "    return sum(item.qty for item in cart)"]
    text = (repo / "cart.py").read_text() + "\n\n" + "\n".join(added) + "\n"
    (repo / "cart.py").write_text(text)  # not committed; its session not written yet
    srv._load(uri, None)
    assert srv.conn is not None and srv.docs[uri].blame is not None
    later = Session(world["root"], LATER)
    later.user("Count the items in the cart", T0 + 8000)
    later.replace(repo / "cart.py", [], added, T0 + 8060, start=15)
    found = lsp_server.unread_transcripts(srv.conn)  # the timer thread's look
    assert found
    walked_on = _walks_recorded(monkeypatch)
    states = {str(repo): lsp_server._state_of(str(repo))}
    srv._job(("poll", True, states, list(found.values())))
    assert walked_on == []
    sessions = {ln.session for ln in srv.docs[uri].blame.lines if ln.session}
    assert LATER in sessions
    srv.conn.close()
