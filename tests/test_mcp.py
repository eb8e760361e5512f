"""deja mcp, started as a subprocess and driven by a plain client written from the
protocol (tests/mcp_client.py): agent, person and uncommitted lines, the privacy
of requests, bounded answers with cursors, sessions and show, a reviewer's clone
with notes only, a session from another machine's path, and bad requests."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import deja, git
from mcp_client import McpClient, text_of
from test_blame import AGENT_BLOCK, T0, Session, commit_all

SID = "5e5e5e5e-aaaa-4bbb-8ccc-000000000043"
OTHER = "0c0c0c0c-aaaa-4bbb-8ccc-0000000000c0"
PERSON = "TAX_RATE = 0.2\n\n\nclass Cart:\n    pass\n"
REQUEST = "Add a total() helper to cart.py, the key is sk-proj-abcdefghijklmnopqrstuvwx"
TOOLS = {"why", "blame", "sessions", "show"}


def build(tmp_path: Path, repo: Path, session_path: Path | None = None) -> dict[str, Any]:
    """A person's five lines, an agent session's block (lines 6-12) and its test run,
    committed; then two lines not committed: the person's and another session's."""
    root = tmp_path / "agroot"
    (repo / "cart.py").write_text(PERSON)
    base = commit_all(repo, "person starts the cart", T0 - 3600)
    s = Session(root, SID)
    s.user(REQUEST, T0)
    s.replace(session_path or repo / "cart.py", [], AGENT_BLOCK, T0 + 60, start=6)
    s.run("python -m pytest -q", 0, T0 + 120)
    (repo / "cart.py").write_text(PERSON + "\n".join(AGENT_BLOCK) + "\n")
    head = commit_all(repo, "add total", T0 + 600)
    return {"repo": repo, "root": root, "base": base, "head": head}


@pytest.fixture
def world(tmp_path: Path, repo: Path) -> dict[str, Any]:
    return build(tmp_path, repo)


@pytest.fixture
def clients() -> Iterator[list[McpClient]]:
    started: list[McpClient] = []
    yield started
    for c in started:
        c.kill()


def start(
    clients: list[McpClient],
    cwd: Path,
    world: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
) -> McpClient:
    base = {"DEJA_ANTIGRAVITY_ROOT": str(world["root"])} if world else {}
    client = McpClient(cwd, {**base, **(env or {})}, args)
    clients.append(client)
    return client


def structured(result: dict[str, Any]) -> dict[str, Any]:
    assert result["isError"] is False, text_of(result)
    return dict(result["structuredContent"])


def only_run(result: dict[str, Any]) -> dict[str, Any]:
    runs = structured(result)["runs"]
    assert len(runs) == 1, runs
    return dict(runs[0])


def test_agent_person_and_uncommitted_lines(
    world: dict[str, Any], clients: list[McpClient]
) -> None:
    repo = world["repo"]
    # not committed: a person's line and a line another session wrote
    other = Session(world["root"], OTHER)
    other.user("Count the items", T0 + 7000)
    added = ["def count(cart):", "    return len(cart)"]
    other.replace(repo / "cart.py", [], added, T0 + 7060, start=13)
    with (repo / "cart.py").open("a") as f:
        f.write("\n".join(added) + "\n# a note of the person's\n")
    client = start(clients, repo, world)
    init = client.initialize()
    assert init["protocolVersion"] == "2025-11-25"
    assert init["capabilities"]["tools"] == {"listChanged": False}
    tools = client.request("tools/list")["tools"]
    assert {t["name"] for t in tools} == TOOLS
    assert all(t["inputSchema"]["type"] == "object" for t in tools)

    agent = client.call("why", file="cart.py", line=11)
    run = only_run(agent)
    assert run["kind"] == "agent" and run["session"] == SID and run["agent"] == "antigravity"
    assert run["commit"] == world["head"] and run["confidence"] > 0.5
    assert run["request"] is None and run["request_withheld"] is True  # not opted in
    added_lines = [a for h in run["edit"]["hunks"] for a in h["added"]]
    assert "    subtotal = sum(item.price * item.qty for item in cart)" in added_lines
    assert [(c["command"], c["exit_code"]) for c in run["commands_after"]] == [
        ("python -m pytest -q", 0)
    ]
    text = text_of(agent)
    assert SID in text and "withheld" in text and "python -m pytest -q -> exit 0" in text
    assert "Add a total()" not in text

    person = only_run(client.call("why", file="cart.py", line=1))
    assert person["kind"] == "person" and person["author"] == "Test Person"
    assert person["commit"] == world["base"] and person["summary"] == "person starts the cart"
    assert "session" not in person

    by_session = only_run(client.call("why", file=str(repo / "cart.py"), line=13))
    assert (by_session["kind"], by_session["session"], by_session["commit"]) == (
        "agent",
        OTHER,
        None,
    )
    mine = only_run(client.call("why", file="cart.py", line=15))
    assert (mine["kind"], mine["commit"]) == ("uncommitted", None)
    assert "not committed yet" in text_of(client.call("why", file="cart.py", line=15))

    blame = structured(client.call("blame", file="cart.py"))
    assert [(r["start"], r["end"], r["kind"], r.get("session")) for r in blame["runs"]] == [
        (1, 5, "person", None),
        (6, 12, "agent", SID),
        (13, 14, "agent", OTHER),
        (15, 15, "uncommitted", None),
    ]
    assert blame["total_lines"] == 15 and "next_cursor" not in blame
    assert client.close() == 0


@pytest.mark.parametrize("how", ["git config", "--prompts"])
def test_requests_only_where_opted_in_and_always_redacted(
    world: dict[str, Any], clients: list[McpClient], how: str
) -> None:
    repo = world["repo"]
    if how == "git config":
        git(repo, "config", "deja.notes.prompts", "true")
    client = start(clients, repo, world, args=("--prompts",) if how == "--prompts" else ())
    client.initialize()
    result = client.call("why", file="cart.py", line=6)
    run = only_run(result)
    assert run["request"] == "Add a total() helper to cart.py, the key is [redacted]"
    assert "sk-proj-" not in json.dumps(result)
    sessions = structured(client.call("sessions"))["sessions"]
    assert sessions[0]["first_request"].endswith("the key is [redacted]")
    assert client.close() == 0


def test_sessions_and_show(world: dict[str, Any], clients: list[McpClient]) -> None:
    repo = world["repo"]
    elsewhere = Session(world["root"], OTHER)  # another project of the same person
    elsewhere.user("Plant the tomatoes", T0)
    elsewhere.replace(Path("/home/carol/garden/beds.py"), [], ["rows = 4"], T0 + 9)
    deja("index", env={"DEJA_ANTIGRAVITY_ROOT": str(world["root"])})  # both sessions indexed
    client = start(clients, repo, world)
    client.initialize()
    found = structured(client.call("sessions"))
    assert [s["session"] for s in found["sessions"]] == [SID]
    assert found["sessions"][0]["files"] == ["cart.py"]
    assert found["sessions"][0]["first_request"] is None  # not opted in
    assert structured(client.call("sessions", path="cart.py"))["total"] == 1
    assert structured(client.call("sessions", path="docs"))["total"] == 0
    assert structured(client.call("sessions", since="2026-07-17"))["total"] == 1
    assert structured(client.call("sessions", since="2030-01-01"))["total"] == 0
    assert structured(client.call("sessions", query="ANTIGRAVITY"))["total"] == 1
    assert structured(client.call("sessions", query="tomatoes"))["total"] == 0

    shown = structured(client.call("show", session=SID[:8]))
    assert shown["session"] == SID and shown["agent"] == "antigravity"
    kinds = {
        (e["kind"], e.get("path"), e.get("command"), e.get("exit_code")) for e in shown["entries"]
    }
    assert ("command", None, "python -m pytest -q", 0) in kinds
    assert ("file", "cart.py", None, None) in kinds
    assert all(e["withheld"] for e in shown["entries"] if e["kind"] == "request")
    # a session of another project is not this repository's to show
    refused = client.call("show", session=OTHER)
    assert refused["isError"] is True and "no session" in text_of(refused)
    assert "tomatoes" not in text_of(refused)
    assert client.close() == 0


def test_a_reviewer_s_clone_with_notes_only(
    world: dict[str, Any], clients: list[McpClient], tmp_path: Path
) -> None:
    repo = world["repo"]
    git(repo, "config", "deja.notes.prompts", "true")
    deja("annotate", cwd=repo, env={"DEJA_ANTIGRAVITY_ROOT": str(world["root"])})
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "fetch", "-q", "origin", "refs/notes/deja:refs/notes/deja")
    (tmp_path / "nothing" / "brain").mkdir(parents=True)
    empty = {
        "DEJA_DB": str(tmp_path / "reviewer.db"),
        "DEJA_ANTIGRAVITY_ROOT": str(tmp_path / "nothing"),
    }
    client = start(clients, clone, env=empty)
    client.initialize()
    run = only_run(client.call("why", file="cart.py", line=7))
    assert (run["kind"], run["session"], run["via"], run["note_only"]) == (
        "agent",
        SID,
        "note",
        True,
    )
    # the author opted in when the note was written: the note carries the request, redacted
    assert run["request"].endswith("the key is [redacted]")
    noted = structured(client.call("sessions"))["sessions"]
    assert [(s["session"], s["from_notes"]) for s in noted] == [(SID, True)]
    shown = structured(client.call("show", session=SID[:8]))
    assert shown["from_notes"] is True
    assert ("commit", world["head"], "cart.py", 7) in {
        (e["kind"], e.get("commit"), e.get("path"), e.get("lines")) for e in shown["entries"]
    }
    person = only_run(client.call("why", file="cart.py", line=2))
    assert person["kind"] == "person" and person["author"] == "Test Person"
    assert client.close() == 0


def test_a_session_from_another_machine_s_path(
    tmp_path: Path, repo: Path, clients: list[McpClient]
) -> None:
    """The session ran in Alice's clone at /home/alice/shop; this clone is elsewhere."""
    world = build(tmp_path, repo, session_path=Path("/home/alice/shop/cart.py"))
    client = start(clients, repo, world)
    client.initialize()
    run = only_run(client.call("why", file="cart.py", line=8))
    assert (run["kind"], run["session"]) == ("agent", SID)
    found = structured(client.call("sessions", path="cart.py"))["sessions"]
    assert [s["session"] for s in found] == [SID]
    assert found[0]["project"] == "-"  # Alice's directory is not given away
    shown = client.call("show", session=SID)
    assert structured(shown)["session"] == SID
    files = [e["path"] for e in structured(shown)["entries"] if e["kind"] == "file"]
    # nor is it in the files the session touched: the file it stands for here (not
    # "~/shop/cart.py", another machine's home read as this one's: newcomer 10 #7)
    assert files == ["cart.py"]
    assert "alice" not in text_of(shown)
    assert "in - (elsewhere: another clone or machine" in text_of(shown)
    assert client.close() == 0


def test_answers_are_bounded_and_a_cursor_gives_the_rest(
    repo: Path, clients: list[McpClient]
) -> None:
    """A 2,000-line file, each line its own commit's subject 300 characters long: no
    answer is longer than the cap, and the cursors walk the whole file once."""
    (repo / "big.py").write_text("".join(f"x_{i} = {i}\n" for i in range(1, 2001)))
    commit_all(repo, "a person writes big.py " + "words " * 50, T0)
    client = start(clients, repo)
    client.initialize()
    seen: list[tuple[int, int]] = []
    args: dict[str, Any] = {"file": "big.py"}
    for _ in range(20):
        result = client.call("blame", **args)
        data = structured(result)
        assert len(text_of(result)) <= 8_500
        seen += [(r["start"], r["end"]) for r in data["runs"]]
        if "next_cursor" not in data:
            break
        args = {"file": "big.py", "cursor": data["next_cursor"]}
    assert seen == [(1, 400), (401, 800), (801, 1200), (1201, 1600), (1601, 2000)]
    # a range: the why of lines 10-1000, one run per answer window
    first = structured(client.call("why", file="big.py", start=10, end=1000))
    assert first["runs"][0]["start"] == 10 and first["next_cursor"]
    # a cursor is for its own question only
    wrong = client.call("blame", file="big.py", start=10, cursor=first["next_cursor"])
    assert wrong["isError"] is True and "cursor" in text_of(wrong)
    assert client.close() == 0


def test_bad_requests_get_one_line_errors_and_the_server_goes_on(
    world: dict[str, Any], clients: list[McpClient], tmp_path: Path
) -> None:
    repo = world["repo"]
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0binary")
    (tmp_path / "secret.txt").write_text("outside\n")
    (repo / "link.py").symlink_to(tmp_path / "secret.txt")
    (repo / "src").mkdir()
    commit_all(repo, "logo, link, folder", T0 + 900)
    client = start(clients, repo, world)
    # before initialize: refused (ping is always answered)
    early = client.wait(client.start("tools/list"))
    assert early["error"]["code"] == -32600
    assert client.request("ping") == {}
    client.initialize()
    # not JSON, not an object, not JSON-RPC, an unknown method, an unknown tool
    client.send_raw(b"{not json\n")
    assert client.receive()["error"]["code"] == -32700
    client.send_raw(b"[]\n")
    assert client.receive()["error"]["code"] == -32600
    client.send_json({"id": 99, "method": "tools/list"})
    assert client.wait(99)["error"]["code"] == -32600
    assert client.wait(client.start("prompts/get", {"name": "x"}))["error"]["code"] == -32601
    unknown = client.wait(client.start("tools/call", {"name": "rm", "arguments": {}}))
    assert unknown["error"]["code"] == -32602
    bad_args = client.wait(client.start("tools/call", {"name": "why", "arguments": [1]}))
    assert bad_args["error"]["code"] == -32602
    cases = [
        ({"file": "missing.py", "line": 1}, "no such file"),
        ({"file": "logo.png", "line": 1}, "binary"),
        ({"file": "../secret.txt", "line": 1}, "outside the repository"),
        ({"file": str(tmp_path / "secret.txt"), "line": 1}, "outside the repository"),
        ({"file": "link.py", "line": 1}, "symbolic link"),
        ({"file": ".git/config", "line": 1}, "git's own directory"),
        ({"file": "src", "line": 1}, "directory"),
        ({"file": "cart.py", "line": 10**12}, "has only 12 lines"),
        ({"file": "cart.py", "start": 10**6, "end": 10**12}, "has only 12 lines"),
        ({"file": "cart.py", "line": 0}, "lines start at 1"),
        ({"file": "cart.py", "line": "5"}, "line number"),
        ({"file": "cart.py", "line": True}, "line number"),
        ({"file": "cart.py"}, "give 'line'"),
        ({"line": 3}, "'file' is required"),
        ({"file": "cart.py", "line": 1, "cursor": "bm90IG91cnM"}, "cursor"),
        ({"file": "cart.py", "line": 1, "repo": str(tmp_path / "nowhere")}, "does not exist"),
    ]
    for args, words in cases:
        result = client.call("why", **args)
        assert result["isError"] is True, (args, result)
        message = text_of(result)
        assert words in message and "\n" not in message, (args, message)
    huge = structured(client.call("blame", file="cart.py", start=3, end=10**12))
    assert (huge["runs"][0]["start"], huge["runs"][-1]["end"]) == (3, 12)
    not_there = client.wait(client.start("resources/read", {"uri": "file:///etc/passwd"}))
    assert not_there["error"]["code"] == -32002
    assert client.request("ping") == {}
    assert client.close() == 0
    assert "Traceback" not in client.stderr()


@pytest.mark.parametrize(
    ("asked", "answered", "structured_content"),
    [
        ("2024-11-05", "2024-11-05", False),  # before structuredContent (2025-06-18)
        ("2099-01-01", "2025-11-25", True),  # a revision we do not speak: our newest
    ],
)
def test_protocol_version_negotiation(
    world: dict[str, Any],
    clients: list[McpClient],
    asked: str,
    answered: str,
    structured_content: bool,
) -> None:
    client = start(clients, world["repo"], world)
    assert client.initialize(asked)["protocolVersion"] == answered
    result = client.call("why", file="cart.py", line=6)
    assert ("structuredContent" in result) is structured_content
    assert SID in text_of(result)
    assert client.close() == 0


def test_initialize_needs_a_version_and_discovery_is_not_served(
    world: dict[str, Any], clients: list[McpClient]
) -> None:
    client = start(clients, world["repo"], world)
    # a 2026-07-28 client probes server/discover first: "method not found" sends it
    # back to the initialize handshake
    assert client.wait(client.start("server/discover", {}))["error"]["code"] == -32601
    no_version = client.wait(client.start("initialize", {"capabilities": {}}))
    assert no_version["error"]["code"] == -32602
    assert client.initialize()["protocolVersion"] == "2025-11-25"
    assert client.close() == 0


def test_the_stats_resource(world: dict[str, Any], clients: list[McpClient]) -> None:
    client = start(clients, world["repo"], world)
    client.initialize()
    (resource,) = client.request("resources/list")["resources"]
    assert resource["uri"] == "deja://stats" and resource["mimeType"] == "application/json"
    (content,) = client.request("resources/read", {"uri": "deja://stats"})["contents"]
    stats = json.loads(content["text"])
    assert (stats["lines"], stats["attributed_lines"]) == (12, 7)
    assert stats["by_session"][0]["session"] == SID
    assert client.close() == 0


def test_the_repository_from_the_client_s_roots(
    world: dict[str, Any], clients: list[McpClient], tmp_path: Path
) -> None:
    """Started outside any repository, the server asks the client for its roots."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    client = start(clients, outside, world)
    client.roots = [world["repo"]]
    client.initialize(roots=True)
    assert client.request("ping") == {}  # the roots were asked and answered meanwhile
    assert client.requests and client.requests[0]["method"] == "roots/list"
    assert only_run(client.call("why", file="cart.py", line=6))["session"] == SID
    assert client.close() == 0


def test_outside_any_repository_the_error_says_what_to_do(
    clients: list[McpClient], tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    client = start(clients, outside)
    client.initialize()
    result = client.call("blame", file="x.py")
    assert result["isError"] is True
    assert "not inside a git repository" in text_of(result) and "repo" in text_of(result)
    assert client.close() == 0


def test_a_kept_answer_follows_the_file_a_commit_and_new_sessions(
    world: dict[str, Any], clients: list[McpClient]
) -> None:
    """The server keeps its last files' answers: an edit of the file, a commit and a
    new session's transcript must each show in the next answer."""
    repo = world["repo"]
    client = start(clients, repo, world)
    client.initialize()
    assert structured(client.call("blame", file="cart.py"))["total_lines"] == 12
    with (repo / "cart.py").open("a") as f:
        f.write("# the person's line\n")
    assert only_run(client.call("why", file="cart.py", line=13))["kind"] == "uncommitted"
    head = commit_all(repo, "the person's line", T0 + 3000)
    person = only_run(client.call("why", file="cart.py", line=13))
    assert (person["kind"], person["commit"]) == ("person", head)
    later = Session(world["root"], OTHER)
    later.user("Count the items", T0 + 7000)
    later.replace(repo / "cart.py", [], ["COUNT = 0"], T0 + 7060, start=14)
    with (repo / "cart.py").open("a") as f:
        f.write("COUNT = 0\n")
    time.sleep(1.1)  # past the server's one look per second for new transcript lines
    run = only_run(client.call("why", file="cart.py", line=14))
    assert (run["kind"], run["session"]) == ("agent", OTHER)
    assert client.close() == 0
