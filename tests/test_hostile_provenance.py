"""Sessions a repository carries are a stranger's (issue 39 items 1 and 4).

An attacker commits an agent's history to a repository (thousands of public
repositories commit Aider's ``.aider.chat.history.md``); after ``git clone`` deja
must not take it for the user's own session: no blame, no note, no report, no
handoff from it until the user says ``deja trust PATH``. The same for every other
agent's files committed in a repository and pointed at, and for another local
user's files (git's ``safe.directory`` rule). Untracked histories the user's own
Aider wrote keep working.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import orjson
import pytest
from agent_goldens import FIXTURES, GOLDEN_AGENTS, lay_out
from conftest import commit_env, deja, deja_json, git

from deja_blame.index import provenance
from deja_blame.transcripts.registry import agent_named, discover

T0 = 1_796_000_000
BEFORE = "def total(lines):\n    return sum(q * p for q, p in lines)\n"
AFTER = "def total(lines):\n    return sum(q * p for q, p in lines if q > 0)\n"
HISTORY = (FIXTURES / "aider" / ".aider.chat.history.md").read_text()


def _project(where: Path, commit_history: bool) -> Path:
    """A repository whose cart.py Aider changed; its history committed or not."""
    where.mkdir(parents=True)
    git(where, "init", "-q", "-b", "main")
    (where / "cart.py").write_text(BEFORE)
    git(where, "add", "cart.py")
    git(where, "commit", "-qm", "start", env=commit_env(T0))
    (where / ".aider.chat.history.md").write_text(HISTORY)
    (where / "cart.py").write_text(AFTER)
    if commit_history:
        git(where, "add", "-A")
    else:
        (where / ".git" / "info" / "exclude").write_text(".aider*\n")
        git(where, "add", "cart.py")
    git(where, "commit", "-qm", "aider's work", env=commit_env(T0 + 86_400 * 60))
    return where


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A fresh clone of a stranger's repository that commits its Aider history."""
    upstream = _project(tmp_path / "upstream", commit_history=True)
    git(tmp_path, "clone", "-q", str(upstream), "clone")
    return tmp_path / "clone"


def _agents_on_cart(path: Path) -> list[str | None]:
    doc = deja_json("blame", str(path / "cart.py"), "--json", cwd=path)
    return [
        doc["sessions"][ln["session"]]["agent"] if ln["session"] else None for ln in doc["lines"]
    ]


def test_a_cloned_history_is_left_out_and_said_so_until_trusted(clone: Path) -> None:
    history = clone / ".aider.chat.history.md"
    said = deja("index", cwd=clone).stderr.decode()
    assert f"left out {history} (aider)" in said and f"deja trust {history}" in said
    # a choice, not a problem to fix (newcomer 8: "1 problem" where doctor said "ok")
    summary = said.strip().splitlines()[-1]
    assert "1 left out on purpose" in summary and "problem" not in summary, summary
    assert deja_json("index", "--json", cwd=clone)["left_out"] == 1
    assert deja_json("sessions", "--json", cwd=clone)["sessions"] == []
    assert "aider" not in _agents_on_cart(clone)
    # handoff finds nothing to hand over: no stranger's text reaches the user's agent
    handed = deja("handoff", "--print", cwd=clone, check=False)
    assert "negative quantities" not in handed.stdout.decode()
    doctor = deja("doctor", cwd=clone, check=False).stdout.decode()
    assert f"left out {history}" in doctor and f"deja trust {history}" in doctor
    listed = deja("sessions", cwd=clone, check=False).stderr.decode()
    assert "1 session left out" in listed and "deja doctor" in listed

    # the control: the user vouches for it, and the same history is read
    deja("trust", str(history), cwd=clone)
    assert str(history) in deja("trust", cwd=clone).stdout.decode()
    assert "aider" in _agents_on_cart(clone)
    assert [s["agent"] for s in deja_json("sessions", "--json", cwd=clone)["sessions"]] == ["aider"]
    assert oct(provenance.trust_file().stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("next_command", ["index", "blame"])
def test_trust_taken_back_takes_the_session_out_of_the_index(
    clone: Path, next_command: str
) -> None:
    """``deja trust --remove`` takes the trust back at the next index or blame: the
    stranger's session leaves the index, its lines go back to the person (newcomer 7:
    it stayed, with its lines, until ``deja index --rebuild``)."""
    history = clone / ".aider.chat.history.md"
    deja("trust", str(history), cwd=clone)
    assert "aider" in _agents_on_cart(clone)
    said = deja("trust", "--remove", str(history), cwd=clone).stderr.decode()
    assert "leaves the index" in said
    if next_command == "index":
        said = deja("index", cwd=clone).stderr.decode()
        assert f"removed from the index: left out {history} (aider)" in said
    assert "aider" not in _agents_on_cart(clone)
    assert deja_json("sessions", "--json", cwd=clone)["sessions"] == []
    # and trusted again, it is read again
    deja("trust", str(history), cwd=clone)
    assert "aider" in _agents_on_cart(clone)


def test_doctor_does_not_call_a_history_left_out_on_purpose_not_yet_indexed(
    clone: Path,
) -> None:
    """A carried history ``deja index`` leaves out is no transcript it would read: the
    index is up to date, and doctor says why (newcomer 7: FAIL, 'run deja index', forever)."""
    deja("index", cwd=clone)
    checks = {c["name"]: c for c in deja_json("doctor", "--json", cwd=clone, check=False)["checks"]}
    assert checks["left out"]["ok"]
    fresh = checks["index up to date"]
    assert fresh["ok"], fresh
    assert "1 left out on purpose" in fresh["detail"]
    # the control: a new transcript of its own is still not yet indexed
    (clone / "more").mkdir()
    (clone / "more" / ".aider.chat.history.md").write_text(HISTORY)
    (clone / ".git" / "info" / "exclude").write_text("more/\n")
    env = {"DEJA_AIDER_ROOT": f"{clone}{os.pathsep}{clone / 'more'}"}
    checks = {
        c["name"]: c
        for c in deja_json("doctor", "--json", cwd=clone, check=False, env=env)["checks"]
    }
    assert not checks["index up to date"]["ok"]
    assert "1 new" in checks["index up to date"]["detail"]


def test_stats_does_not_call_a_history_left_out_on_purpose_unread(clone: Path) -> None:
    """``deja stats`` said "1 new transcript left unread ... `deja index` reads them"
    of the carried history, before and after ``deja index`` (which leaves it out),
    and ``unread_transcripts`` was 1 forever (newcomer 8)."""
    for _ in range(2):
        proc = deja("stats", "--json", cwd=clone)
        assert orjson.loads(proc.stdout)["unread_transcripts"] == 0
        assert "left unread" not in proc.stderr.decode()
        deja("index", cwd=clone)
    # the control: a transcript of another project is still said unread
    (clone / "more").mkdir()
    (clone / "more" / ".aider.chat.history.md").write_text(HISTORY.replace("cart.py", "x.py"))
    (clone / ".git" / "info" / "exclude").write_text("more/\n")
    env = {"DEJA_AIDER_ROOT": f"{clone}{os.pathsep}{clone / 'more'}"}
    proc = deja("stats", "--json", cwd=clone, env=env)
    assert orjson.loads(proc.stdout)["unread_transcripts"] == 1
    assert "1 new transcript left unread" in proc.stderr.decode()


def test_the_post_commit_hook_credits_no_carried_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The planted history "wrote" the very lines the user then types and commits."""
    monkeypatch.setenv("DEJA_HOOK_SYNC", "1")
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    (upstream / "cart.py").write_text(BEFORE)
    (upstream / ".aider.chat.history.md").write_text(HISTORY)
    git(upstream, "add", "-A")
    git(upstream, "commit", "-qm", "start", env=commit_env(T0))
    git(tmp_path, "clone", "-q", str(upstream), "clone")
    clone = tmp_path / "clone"
    deja("hooks", "install", cwd=clone)
    git(clone, "config", "deja.hook.timeout", "60")  # a loaded machine: no note left late
    (clone / "cart.py").write_text(AFTER)
    git(clone, "commit", "-qam", "mine", env=commit_env(T0 + 86_400 * 61))
    note = git(clone, "notes", "--ref", "deja", "show", "HEAD") if _has_note(clone) else ""
    assert "aider" not in note, note
    # the control: the same history, the user's own (trusted), is credited
    deja("trust", str(clone / ".aider.chat.history.md"), cwd=clone)
    (clone / "cart.py").write_text(BEFORE)
    git(clone, "commit", "-qam", "back", env=commit_env(T0 + 86_400 * 62))
    (clone / "cart.py").write_text(AFTER)
    git(clone, "commit", "-qam", "again", env=commit_env(T0 + 86_400 * 63))
    assert "aider" in git(clone, "notes", "--ref", "deja", "show", "HEAD")


def _has_note(repo: Path) -> bool:
    return bool(git(repo, "notes", "--ref", "deja", "list").strip())


def test_the_users_own_untracked_history_keeps_working(tmp_path: Path) -> None:
    mine = _project(tmp_path / "mine", commit_history=False)
    assert deja("index", cwd=mine).stderr.decode().count("left out") == 0
    assert "aider" in _agents_on_cart(mine)


def test_a_repositorys_own_config_switch_trusts_its_tracked_sessions(clone: Path) -> None:
    git(clone, "config", "deja.trustSessions", "true")
    assert "aider" in _agents_on_cart(clone)


@pytest.mark.parametrize("next_command", ["index", "blame"])
def test_the_config_switch_turned_off_takes_the_sessions_out(
    clone: Path, next_command: str
) -> None:
    """``deja.trustSessions`` switched off holds from the next index or answer, as
    ``deja trust --remove`` does (it held only from the next ``--rebuild``)."""
    git(clone, "config", "deja.trustSessions", "true")
    assert "aider" in _agents_on_cart(clone)
    git(clone, "config", "deja.trustSessions", "false")
    history = clone / ".aider.chat.history.md"
    if next_command == "index":
        said = deja("index", cwd=clone).stderr.decode()
        assert f"removed from the index: left out {history} (aider)" in said
    assert "aider" not in _agents_on_cart(clone)
    assert deja_json("sessions", "--json", cwd=clone)["sessions"] == []
    # and switched on again, it is read again
    git(clone, "config", "deja.trustSessions", "true")
    assert "aider" in _agents_on_cart(clone)


# every agent's files, committed in a repository and named as the agent's store
CARRIED_AGENTS = sorted(a for a in GOLDEN_AGENTS if a != "aider")


@pytest.mark.parametrize("agent", CARRIED_AGENTS)
def test_other_agents_files_committed_in_a_repository_are_left_out(
    agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    store = lay_out(agent, upstream / "logs")
    git(upstream, "add", "-A")
    git(upstream, "commit", "-qm", "our agent logs", env=commit_env(T0))
    git(tmp_path, "clone", "-q", str(upstream), "clone")
    carried = tmp_path / "clone" / store.relative_to(upstream)
    spec = agent_named(agent)
    monkeypatch.setenv(spec.root_env, str(carried))
    found = discover([agent])
    assert found, agent  # the files are there to be found
    kept, left = provenance.split_trusted(found)
    assert kept == [] and {lo.why for lo in left} == {provenance.CARRIED}
    # deja index (the one gate every command's refresh goes through) reads none
    db = tmp_path / "index.db"
    said = deja("index", "--db", str(db), check=False).stderr.decode()
    assert "left out" in said, said
    assert sqlite3.connect(db).execute("SELECT count(*) FROM sessions").fetchone() == (0,)
    # --root too: naming a folder is not vouching for what a clone put there
    said = deja("index", "--db", str(db), "--root", str(carried), check=False).stderr.decode()
    assert sqlite3.connect(db).execute("SELECT count(*) FROM sessions").fetchone() == (0,)
    # the control: trusted, the same files are read
    monkeypatch.setenv("DEJA_TRUSTED", str(tmp_path / "clone"))
    deja("index", "--db", str(db), check=False)
    assert sqlite3.connect(db).execute("SELECT count(*) FROM sessions").fetchone()[0] > 0


def _someone_elses(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``path`` owned by another user: chown where we may (root), else deja's
    ownership check told so (the one function both git's rule and ours go through)."""
    if os.geteuid() == 0:
        os.chown(path, 4242, 4242)
        return
    ino = os.lstat(path).st_ino
    real = provenance.owned_by_me
    monkeypatch.setattr(provenance, "owned_by_me", lambda st: st.st_ino != ino and real(st))


def test_outside_a_repository_a_folder_someone_else_owns_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"  # /tmp, as another user left it
    (shared / "mine").mkdir(parents=True)
    (shared / ".aider.chat.history.md").write_text(HISTORY)
    (shared / "mine" / ".aider.chat.history.md").write_text(HISTORY.replace("cart", "till"))
    monkeypatch.chdir(shared / "mine")
    db = tmp_path / "index.db"
    # the control: both read while both folders are the user's
    deja("index", "--db", str(db), cwd=shared / "mine")
    assert sqlite3.connect(db).execute("SELECT count(*) FROM sessions").fetchone() == (2,)
    db.unlink()
    _someone_elses(shared, monkeypatch)
    kept, left = provenance.split_trusted(discover(["aider"]))
    assert [tf.path.parent for tf in kept] == [shared / "mine"]
    assert [(lo.why, lo.where) for lo in left] == [(provenance.FOREIGN, shared)]
    if os.geteuid() == 0:  # a real other owner: the command line says it, in one line
        proc = deja("index", "--db", str(db), cwd=shared / "mine")
        lines = [ln for ln in proc.stderr.decode().splitlines() if "dubious" in ln]
        assert lines == [
            f"deja: left out {shared / '.aider.chat.history.md'} (aider): detected dubious"
            f" ownership in '{shared}': someone else's; to read it: deja trust"
            f" {shared / '.aider.chat.history.md'}"
        ]
        assert sqlite3.connect(db).execute("SELECT count(*) FROM sessions").fetchone() == (1,)
    monkeypatch.setenv("DEJA_TRUSTED", str(shared / ".aider.chat.history.md"))
    assert len(provenance.split_trusted(discover(["aider"]))[0]) == 2


def test_the_walk_stops_at_the_repository_top(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "outer").mkdir()
    (tmp_path / "outer" / ".aider.chat.history.md").write_text(HISTORY)
    inner = tmp_path / "outer" / "repo" / "src"
    inner.mkdir(parents=True)
    git(inner.parent, "init", "-q")
    monkeypatch.chdir(inner)
    assert agent_named("aider").roots() == []
    (inner.parent / ".aider.chat.history.md").write_text(HISTORY)
    assert agent_named("aider").roots() == [inner.parent]


def test_a_transcript_another_user_owns_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = lay_out("claude-code", tmp_path / "store")
    monkeypatch.setenv("DEJA_CLAUDE_ROOT", str(store))
    found = discover(["claude-code"])
    assert provenance.split_trusted(found)[1] == []  # the control
    for tf in found:
        _someone_elses(tf.path, monkeypatch)
    kept, left = provenance.split_trusted(found)
    assert kept == [] and {lo.why for lo in left} == {provenance.FOREIGN}


def test_a_repository_git_cannot_read_is_not_trusted(tmp_path: Path) -> None:
    """A planted ``.git`` that is no repository: git cannot say the file is
    untracked, so it is not taken as the user's."""
    where = tmp_path / "odd"
    where.mkdir()
    (where / ".git").write_text("gitdir: /nowhere\n")
    (where / ".aider.chat.history.md").write_text(HISTORY)
    tf = agent_named("aider").find(where, None)
    kept, left = provenance.split_trusted(list(tf))
    assert kept == [] and [lo.why for lo in left] == [provenance.UNCHECKED]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a folder to another user")
def test_a_repository_someone_else_owns_gets_gits_one_line(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    git(theirs, "init", "-q")
    (theirs / "a.py").write_text("x = 1\n")
    for dirpath, _dirs, files in os.walk(theirs):
        for name in [*files, "."]:
            os.chown(Path(dirpath) / name, 4242, 4242)
    proc = deja("blame", "a.py", cwd=theirs, check=False)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "Traceback" not in err
    assert f"detected dubious ownership in repository at '{theirs}'" in err
    assert f"safe.directory {theirs}" in err


def test_blame_and_why_name_deja_trust_for_a_history_the_repository_carries(
    clone: Path,
) -> None:
    """A fresh clone that commits its Aider history: blame's hint was "run: deja
    index", which reads it no more than before, and why said only "a person, or
    unknown" of the line the history wrote (newcomer 17 #2). Both name deja trust."""
    history = clone / ".aider.chat.history.md"
    for _ in range(2):  # the first refresh and after deja index: the same line
        said = deja("blame", "cart.py", cwd=clone).stderr.decode()
        assert (
            "no sessions are indexed: every line is unattributed; 1 session left out, as this"
            " repository carries it (written by whoever committed it):"
            f" deja trust {history} reads it"
        ) in said, said
        assert "run: deja index" not in said
        deja("index", cwd=clone)
    doc = deja_json("why", "cart.py:2", "--json", cwd=clone)
    assert doc["session"] is None
    assert doc["written_by_left_out"] == {
        "path": str(history), "agent": "aider", "trust": f"deja trust {history}",
    }  # fmt: skip
    text = deja("why", "cart.py:2", cwd=clone).stdout.decode()
    assert (
        f"a history this repository carries wrote this line ({history}, aider); deja leaves"
        f" such a history out, as whoever committed it wrote it: deja trust {history} reads it"
    ) in text, text
    # the line the history did not write (the unchanged first line: its own, not Aider's)
    assert "written_by_left_out" not in deja_json("why", "cart.py:1", "--json", cwd=clone)
    # trusted, the line is the session's and nothing is said of a left-out history
    deja("trust", str(history), cwd=clone)
    doc = deja_json("why", "cart.py:2", "--json", cwd=clone)
    assert doc["session"] is not None and "written_by_left_out" not in doc
    assert "left out" not in deja("blame", "cart.py", cwd=clone).stderr.decode()
