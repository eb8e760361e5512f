"""deja lsp, driven over the protocol by a plain client (tests/lsp_client.py):
lenses on an agent's block, hovers, unsaved edits, a file outside any repository,
a reviewer's clone with notes only, refresh on a new commit, cancel, exit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
from conftest import deja, git
from lsp_client import LspClient
from test_blame import AGENT_BLOCK, T0, Session, commit_all

SID = "3f2a9c1e-aaaa-4bbb-8ccc-000000000001"
PERSON = "TAX_RATE = 0.2\n\n\nclass Cart:\n    pass\n"
REQUEST = "Add a total() helper to cart.py"


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A person's five lines, then an agent session's block (lines 6-12), committed."""
    root = tmp_path / "agroot"
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(root))
    (repo / "cart.py").write_text(PERSON)
    base = commit_all(repo, "person starts the cart", T0 - 3600)
    s = Session(root, SID)
    s.user(REQUEST, T0)
    s.replace(repo / "cart.py", [], AGENT_BLOCK, T0 + 60, start=6)
    (repo / "cart.py").write_text(PERSON + "\n".join(AGENT_BLOCK) + "\n")
    head = commit_all(repo, "add total", T0 + 600)
    return {"repo": repo, "root": root, "base": base, "head": head}


@pytest.fixture
def clients() -> Iterator[list[LspClient]]:
    started: list[LspClient] = []
    yield started
    for c in started:
        c.kill()


def start(clients: list[LspClient], cwd: Path, env: dict[str, str] | None = None) -> LspClient:
    client = LspClient(cwd, env)
    clients.append(client)
    client.initialize(cwd)
    return client


def lens_lines(lenses: list[dict[str, Any]]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for lens in lenses:
        out.setdefault(lens["range"]["start"]["line"], []).append(lens["command"]["title"])
    return out


def test_agent_block_person_lines_and_a_clean_exit(
    world: dict[str, Any], clients: list[LspClient]
) -> None:
    client = start(clients, world["repo"])
    uri = client.open(world["repo"] / "cart.py")
    lenses = client.lenses(uri)
    # one run: the agent's block starts at line 6 (0-based 5); none on the person's lines
    by_line = lens_lines(lenses)
    assert list(by_line) == [5], by_line
    title = by_line[5][0]
    assert title.startswith("agy 3f2a9c1e 2026-07-17 09:01 UTC ")  # as blame's text
    assert float(title.split()[-1]) > 0
    assert lenses[0]["command"]["command"] == "deja.why"
    assert "hand off" in by_line[5]
    hover = client.hover(uri, 7)
    assert hover is not None
    assert SID in hover and "· agy session" in hover  # blame's word, as the lens
    assert REQUEST in hover  # the request, from the index
    assert "+    subtotal = sum(item.price * item.qty for item in cart)" in hover  # the edit
    assert world["head"][:12] in hover
    person = client.hover(uri, 0)
    assert person is not None
    assert "Test Person" in person and "person starts the cart" in person
    assert world["base"][:12] in person and "2026-07-17" in person
    assert SID not in person
    # deja.why from the lens: deja why's answer for the line
    why = client.request("workspace/executeCommand", {"command": "deja.why", "arguments": [uri, 5]})
    assert why["session"] == SID and why["prompt"]["text"] == REQUEST
    assert why["line"] == 6 and why["commit"] == world["head"]
    handoff = client.request(
        "workspace/executeCommand", {"command": "deja.handoff", "arguments": [uri, 5]}
    )
    assert handoff["session"] == SID and REQUEST in handoff["prompt"]
    assert client.errors == []
    assert client.close() == 0


def test_the_hand_off_lens_opens_the_prompt(
    world: dict[str, Any], clients: list[LspClient], tmp_path: Path
) -> None:
    """The "hand off" lens opens what it says: the prompt the next agent would start on,
    as a private file the client is asked to show (window/showDocument), and a
    message naming the command that starts an agent on it."""
    client = LspClient(world["repo"])
    clients.append(client)
    caps = {"window": {"showDocument": {"support": True}}}
    client.request("initialize", {"processId": None, "rootUri": None, "capabilities": caps})
    client.notify("initialized", {})
    uri = client.open(world["repo"] / "cart.py")
    lens = next(x for x in client.lenses(uri) if x["command"]["title"] == "hand off")
    client.start("workspace/executeCommand", lens["command"])
    shown = client.wait_for("window/showDocument")
    path = Path(unquote(urlparse(shown["params"]["uri"]).path))
    assert REQUEST in path.read_text() and SID in path.read_text()
    assert path.stat().st_mode & 0o777 == 0o600 and path.is_relative_to(tmp_path)
    said = client.wait_for("window/showMessage")["params"]["message"]
    assert str(path) in said
    # the command it names runs as it is (an agent named, the prompt printed)
    named = said.split(": ", 1)[1].split("start an agent on it in a terminal: ")[1]
    args = named.replace("<agent>", "claude").split()
    assert args[0] == "deja"
    assert REQUEST in deja(*args[1:], "--print", cwd=world["repo"]).stdout.decode()
    assert client.close() == 0


def test_an_unsaved_edit_above_shifts_the_annotations(
    world: dict[str, Any], clients: list[LspClient]
) -> None:
    client = start(clients, world["repo"])
    path = world["repo"] / "cart.py"
    uri = client.open(path)
    assert list(lens_lines(client.lenses(uri))) == [5]
    typed = "import math\nimport os\n" + path.read_text()
    client.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": typed}]},
    )
    assert list(lens_lines(client.lenses(uri))) == [7]
    unsaved = client.hover(uri, 0)
    assert unsaved is not None and "not saved" in unsaved and SID not in unsaved
    moved = client.hover(uri, 9)
    assert moved is not None and SID in moved
    person = client.hover(uri, 2)
    assert person is not None and "person starts the cart" in person
    # a line typed inside the agent's block splits its run; the typed line is nobody's
    lines = typed.split("\n")
    lines.insert(10, "    # a note typed here")
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": 3},
            "contentChanges": [{"text": "\n".join(lines)}],
        },
    )
    assert list(lens_lines(client.lenses(uri))) == [7, 11]
    assert SID not in (client.hover(uri, 10) or "")
    assert client.close() == 0


def test_a_file_outside_any_repository_gets_nothing_and_no_error(
    tmp_path: Path, clients: list[LspClient]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.py").write_text("print('hello')\n")
    client = start(clients, elsewhere)
    uri = client.open(elsewhere / "notes.py")
    assert client.lenses(uri) == []
    assert client.hover(uri, 0) is None
    # a buffer that is no file at all
    untitled = "untitled:Untitled-1"
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": untitled, "languageId": "python", "version": 1, "text": "x\n"}},
    )
    assert client.lenses(untitled) == []
    assert client.hover(untitled, 0) is None
    assert client.errors == []
    assert client.close() == 0


@pytest.mark.parametrize("opted_in", [False, True])
def test_a_reviewer_s_clone_from_notes_alone(
    world: dict[str, Any], clients: list[LspClient], tmp_path: Path, opted_in: bool
) -> None:
    repo = world["repo"]
    if opted_in:
        git(repo, "config", "deja.notes.prompts", "true")
    deja("annotate", cwd=repo)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "fetch", "-q", "origin", "refs/notes/deja:refs/notes/deja")
    empty = {
        "DEJA_DB": str(tmp_path / "reviewer.db"),
        "DEJA_ANTIGRAVITY_ROOT": str(tmp_path / "nothing"),
    }
    client = start(clients, clone, empty)
    uri = client.open(clone / "cart.py")
    by_line = lens_lines(client.lenses(uri))
    assert list(by_line) == [5]
    assert by_line[5][0].startswith("agy 3f2a9c1e")
    assert "hand off" not in by_line[5]  # no transcript here to hand off
    hover = client.hover(uri, 6)
    assert hover is not None and SID in hover and "from the note" in hover
    assert (REQUEST in hover) is opted_in
    person = client.hover(uri, 0)
    assert person is not None and "person starts the cart" in person
    assert client.close() == 0


def test_a_new_commit_refreshes_the_annotations(
    world: dict[str, Any], clients: list[LspClient]
) -> None:
    """No timer (the poll is off): the editor reloading the committed file is what tells
    the server, and it blames again at once, so what the client sees next is right
    (it raced a 2-second poll and could show "not committed yet")."""
    repo = world["repo"]
    (repo / "notes.txt").write_text("a note\n")
    commit_all(repo, "a note", T0 + 3600)
    client = start(clients, repo, {"DEJA_LSP_POLL": "0"})
    uri = client.open(repo / "cart.py")
    other = client.open(repo / "notes.txt")  # another file of the repository, open
    assert list(lens_lines(client.lenses(uri))) == [5]
    # the person rewrites the agent's first line and commits
    text = (repo / "cart.py").read_text().replace("def total(cart):", "def total(basket):")
    (repo / "cart.py").write_text(text)
    commit_all(repo, "rename", T0 + 7200)
    # the editor reloads the buffer it was showing from the changed file
    client.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": text}]},
    )
    assert list(lens_lines(client.lenses(uri))) == [6]  # the next answer is the new one
    renamed = client.hover(uri, 5) or ""
    assert "rename" in renamed and SID not in renamed  # the person's line now
    assert "not committed" not in renamed
    told = [client.wait_for("deja/annotationsChanged")["params"]["uris"] for _ in range(2)]
    assert sorted(told) == sorted([[uri], [other]])  # the commit moved the other file's too
    assert client.wait_for("workspace/codeLens/refresh")["id"]
    # an agent's line: the first hover answers in full
    first = client.hover(uri, 6) or ""
    assert SID in first and "hover again" not in first
    assert client.close() == 0


def test_the_first_hover_shows_the_line_s_history(
    tmp_path: Path, repo: Path, clients: list[LspClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line a person wrote and a session rewrote: its history (both versions) is in
    the first hover, not promised for a second one."""
    root = tmp_path / "agroot"
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(root))
    (repo / "cart.py").write_text(PERSON)
    commit_all(repo, "person starts the cart", T0 - 3600)
    s = Session(root, SID)
    s.user("Raise the tax rate", T0)
    s.replace(repo / "cart.py", ["TAX_RATE = 0.2"], ["TAX_RATE = 0.25"], T0 + 60, start=1)
    (repo / "cart.py").write_text(PERSON.replace("0.2\n", "0.25\n", 1))
    commit_all(repo, "tax", T0 + 600)
    client = start(clients, repo)
    uri = client.open(repo / "cart.py")
    first = client.hover(uri, 0) or ""
    assert SID in first and "**History**" in first, first
    assert "TAX_RATE = 0.2" in first and "hover again" not in first
    history = first.split("**History**")[1]
    assert " UTC " in history, history  # agents' times say their zone, as in deja why
    assert client.close() == 0


def test_a_cancelled_request_is_answered_as_cancelled(
    world: dict[str, Any], clients: list[LspClient]
) -> None:
    client = start(clients, world["repo"])
    uri = client.open(world["repo"] / "cart.py")
    # queued behind the file's first blame: cancelled before its turn comes
    ids = [client.start("textDocument/codeLens", {"textDocument": {"uri": uri}}) for _ in range(3)]
    client.notify("$/cancelRequest", {"id": ids[1]})
    answers = [client.wait(i) for i in ids]
    assert answers[1]["error"]["code"] == -32800
    assert "result" in answers[0] and "result" in answers[2]
    assert client.close() == 0


def test_exit_without_shutdown_exits_1(tmp_path: Path, clients: list[LspClient]) -> None:
    client = start(clients, tmp_path)
    client.notify("exit", None)
    assert client.proc.wait(timeout=30) == 1


def test_new_transcript_lines_refresh_the_annotations(
    world: dict[str, Any], clients: list[LspClient]
) -> None:
    repo = world["repo"]
    added = ["def count(cart):", "    return sum(item.qty for item in cart)"]
    text = (repo / "cart.py").read_text() + "\n\n" + "\n".join(added) + "\n"
    (repo / "cart.py").write_text(text)  # not committed, and no session known to write it
    client = start(clients, repo, {"DEJA_LSP_POLL": "0.2"})
    uri = client.open(repo / "cart.py")
    assert list(lens_lines(client.lenses(uri))) == [5]
    # the agent's transcript of that write appears (its session was still running)
    later = Session(world["root"], "9b1d2e3f-aaaa-4bbb-8ccc-000000000002")
    later.user("Count the items in the cart", T0 + 8000)
    later.replace(repo / "cart.py", [], added, T0 + 8060, start=15)
    # the transcript grows one record at a time: a poll may read its request before
    # its edit (a refresh with nothing new to show), and the next poll the edit
    for _ in range(10):
        assert client.wait_for("deja/annotationsChanged")["params"]["uris"] == [uri]
        by_line = lens_lines(client.lenses(uri))
        if 14 in by_line:
            break
    assert list(by_line) == [5, 14]
    assert by_line[14][0].startswith("agy 9b1d2e3f")
    assert client.close() == 0


def test_a_cancel_after_the_answer_cancels_nothing_later(
    world: dict[str, Any], clients: list[LspClient]
) -> None:
    """A ``$/cancelRequest`` that arrives after its request was answered is
    forgotten: a later request with the same id (JSON-RPC lets a client reuse an id
    once answered) is answered, not cancelled."""
    client = start(clients, world["repo"])
    uri = client.open(world["repo"] / "cart.py")
    first = client.start("textDocument/codeLens", {"textDocument": {"uri": uri}})
    assert "result" in client.wait(first)
    client.notify("$/cancelRequest", {"id": first})
    client.send(
        {"id": first, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": uri}}}
    )
    again = client.wait(first)
    assert "result" in again, again
    assert client.close() == 0
