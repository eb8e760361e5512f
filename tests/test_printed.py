"""A warm ``deja blame`` (text, ``--json``, numeric ``-L`` windows, with or without the
refresh) is the bytes the same question printed, written before click and the engine
load (``printed.py``), only while nothing the answer depends on moved: each change
below must send it the whole way. Each change is made where only that item of the
stamp can see it (a ``--no-refresh`` form for the index's and the repository's items,
so that the transcripts' walk does not catch it first): dropping the item from the
stamp makes its test fail."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import commit_env, deja, git

from deja_blame import printed
from deja_blame.index import look

T0 = 1_784_278_800
SID = "5f0c1a2e-0000-4000-8000-00000000abcd"
APP = "def mean(xs):\n    total = sum(xs)\n    return total / len(xs)\n"
PROMPT = "write app.py \x1b[31mred\x1b[0m \u202eevil\u202c"  # escaped at every output

# The console script as ``deja`` runs it, saying afterwards whether click was loaded
# (it is not when the kept answer was written).
CHECK = """
import sys
from deja_blame.entry import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stderr.write("click loaded: %s\\n" % ("click" in sys.modules))
"""
# The command line the whole way, no kept answer asked or kept (``printed`` never runs)
WHOLE = """
import sys
from deja_blame.cli import main
main(sys.argv[1:])
"""
ASK = ["blame", "app.py", "--json", "--no-refresh"]
REFRESHING = ["blame", "app.py", "--json"]
FORMS = [
    ["blame", "app.py"],
    ["blame", "app.py", "--json"],
    ["blame", "-L", "2,3", "app.py"],
    ["blame", "app.py", "-L2,+1", "--json"],
    ["blame", "-L", "2", "app.py", "--no-refresh"],
    ["blame", "app.py", "--no-refresh", "--json"],
]


def _session(repo: Path, sid: str, at: int, path: Path, prompt: str = "write app.py") -> None:
    from claude_writer import ClaudeWriter

    w = ClaudeWriter(Path(os.environ["DEJA_CLAUDE_ROOT"]), sid, start=at, workspace=str(repo))
    w.user(prompt)
    w.write_file(str(path), APP)


@pytest.fixture
def worked(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A session wrote app.py; the person committed it ten minutes later; indexed."""
    store = tmp_path / "claude"
    (store / "projects").mkdir(parents=True)
    monkeypatch.setenv("DEJA_CLAUDE_ROOT", str(store))
    _session(repo, SID, T0, repo / "app.py", PROMPT)
    (repo / "app.py").write_text(APP)
    git(repo, "add", "app.py")
    git(repo, "commit", "-q", "-m", "mean", env=commit_env(T0 + 600))
    deja("index", cwd=repo)
    return repo


def _ask(repo: Path, args: list[str] = ASK, **env: str) -> tuple[bytes, bool]:
    """(stdout, whether click was loaded) of ``deja ARGS`` in ``repo``."""
    proc = subprocess.run(
        [sys.executable, "-c", CHECK, *args],
        cwd=repo,
        capture_output=True,
        env={**os.environ, **env},
        timeout=120,
    )
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    return proc.stdout, b"click loaded: True" in proc.stderr


def _whole_way(repo: Path, args: list[str] = ASK, **env: str) -> bytes:
    proc = subprocess.run(
        [sys.executable, "-c", WHOLE, *args],
        cwd=repo,
        capture_output=True,
        env={**os.environ, **env},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout


def _uncached(repo: Path, args: list[str] = ASK) -> bytes:
    return deja(*args, cwd=repo, env={"DEJA_NO_CACHE": "1"}).stdout


def _kept(repo: Path, args: list[str] = ASK, **env: str) -> bytes:
    """Asked until the answer is the kept one; it is, and it is the whole way's (a
    window is cut from the whole file's cached answer: that is made first)."""
    if any(a.startswith("-L") for a in args):
        deja("blame", "app.py", "--no-refresh", cwd=repo)
    first, _ = _ask(repo, args, **env)
    again, loaded = _ask(repo, args, **env)
    assert not loaded, "the same question, nothing changed: the kept answer loads nothing"
    assert again == first == _whole_way(repo, args, **env)
    return again


def test_the_same_question_is_answered_by_what_it_printed(worked: Path) -> None:
    kept = _kept(worked)
    assert b'"session": "' + SID.encode() in kept  # the session's lines, as printed
    out, loaded = _ask(worked)  # and again
    assert not loaded and out == _uncached(worked)


@pytest.mark.parametrize("args", FORMS, ids=lambda a: " ".join(a[1:]))
def test_each_form_people_type_is_kept_byte_for_byte(worked: Path, args: list[str]) -> None:
    kept = _kept(worked, args)
    assert kept == _uncached(worked, args)
    assert SID[:8].encode() in kept
    assert b"\x1b" not in kept and "\u202e".encode() not in kept  # escaped, as printed


def test_colour_and_width_are_part_of_the_question(worked: Path) -> None:
    plain = _kept(worked, ["blame", "app.py"])
    coloured = _kept(worked, ["blame", "app.py"], DEJA_COLOR="always", COLUMNS="40")
    assert coloured != plain and b"\x1b[" in coloured
    assert _ask(worked, ["blame", "app.py"])[0] == plain  # each kept apart


def _db() -> sqlite3.Connection:
    return sqlite3.connect(os.environ["DEJA_DB"])


def _edit_the_file(repo: Path) -> None:
    (repo / "app.py").write_text(APP + "# by hand\n")


def _commit_a_line(repo: Path) -> None:
    (repo / "app.py").write_text("import math\n" + APP)
    git(repo, "commit", "-qam", "math", env=commit_env(T0 + 1200))


def _another_session_writes(repo: Path) -> None:
    _session(repo, SID.replace("abcd", "ef01"), T0 + 60, repo / "app.py", "average it")
    deja("index", cwd=repo)


def _cache_emptied(repo: Path) -> None:
    with _db() as conn:  # the entries, not the kept answers: they alone must not answer
        conn.execute("DELETE FROM attribution_cache WHERE substr(key, 1, 7) != 'printed'")


def _entry_changed(repo: Path) -> None:
    with _db() as conn:  # (as an entry recomputed under the same key would be)
        conn.execute(
            "UPDATE attribution_cache SET token = token || ' ' WHERE substr(key, 1, 7) != 'printed'"
        )


def _amended(repo: Path) -> None:
    git(repo, "commit", "-q", "--amend", "--no-edit", env=commit_env(T0 + 900))


def _session_row_changed(repo: Path) -> None:
    with _db() as conn:
        conn.execute("UPDATE sessions SET model='another-model' WHERE session_id=?", (SID,))


def _a_note(repo: Path) -> None:
    git(repo, "notes", "--ref", "refs/notes/deja", "add", "-m", "{}", "HEAD")


def _late_notes_waiting(repo: Path) -> None:
    late = repo / ".git" / "deja" / printed.LATE_DIR
    late.mkdir(parents=True, exist_ok=True)
    (late / ("0" * 40)).write_text("")


def _replaced(repo: Path) -> None:
    other = git(repo, "commit-tree", "HEAD^{tree}", "-m", "another author's", env=commit_env(T0))
    git(repo, "replace", "HEAD", other.strip())


def _configured(repo: Path) -> None:
    git(repo, "config", "user.name", "Someone Else")


def _mailmap(repo: Path) -> None:
    (repo / ".mailmap").write_text("Other <o@example.com> <person@example.com>\n")


@pytest.mark.parametrize(
    "change",
    [
        _edit_the_file,
        _commit_a_line,
        _amended,
        _another_session_writes,
        _cache_emptied,
        _entry_changed,
        _session_row_changed,
        _a_note,
        _late_notes_waiting,
        _replaced,
        _configured,
        _mailmap,
    ],
)
def test_what_the_answer_depends_on_sends_it_the_whole_way(
    worked: Path, change: Callable[[Path], None]
) -> None:
    _kept(worked)
    change(worked)
    out, loaded = _ask(worked)
    assert loaded, "the kept answer was written after its question's state changed"
    if change is not _late_notes_waiting:  # (whose note the whole way would try to write)
        assert out == _whole_way(worked)


def test_the_last_session_forgotten_sends_it_the_whole_way(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person's file, one session indexed (it wrote another file): with no session
    left the answer says so on stderr; no write of any path changed."""
    store = tmp_path / "claude"
    (store / "projects").mkdir(parents=True)
    monkeypatch.setenv("DEJA_CLAUDE_ROOT", str(store))
    _session(repo, SID, T0, repo / "other.py")
    (repo / "app.py").write_text(APP)
    git(repo, "add", "app.py")
    git(repo, "commit", "-q", "-m", "mean", env=commit_env(T0 - 600))
    deja("index", cwd=repo)
    _kept(repo)
    with _db() as conn:
        conn.execute("DELETE FROM sessions")
    proc = subprocess.run(
        [sys.executable, "-c", CHECK, *ASK], cwd=repo, capture_output=True, timeout=120
    )
    assert b"click loaded: True" in proc.stderr and b"no sessions are indexed" in proc.stderr


def test_a_folder_that_appears_in_the_checkout_sends_it_the_whole_way(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session wrote ``wt/app.py`` in a folder of the checkout that is gone (a
    worktree removed after its merge: another clone's file, ``clone_paths``); the
    folder made again, with no checkout in it, is not one: the written path no longer
    stands for app.py (``cache.load`` checks it on every read)."""
    store = tmp_path / "claude"
    (store / "projects").mkdir(parents=True)
    monkeypatch.setenv("DEJA_CLAUDE_ROOT", str(store))
    _session(repo, SID, T0, repo / "wt" / "app.py")
    (repo / "app.py").write_text(APP)
    git(repo, "add", "app.py")
    git(repo, "commit", "-q", "-m", "mean", env=commit_env(T0 + 600))
    deja("index", cwd=repo)
    kept = _kept(repo)
    assert SID.encode() in kept  # the other clone's write gives the lines
    (repo / "wt").mkdir()
    out, loaded = _ask(repo)
    assert loaded, "the written path's standing changed: the kept answer no longer holds"
    assert out == _whole_way(repo)


def _a_new_transcript(repo: Path) -> None:
    _session(repo, SID.replace("abcd", "ef01"), T0 + 60, repo / "app.py", "average it")


def _a_transcript_appended(repo: Path) -> None:
    (path,) = Path(os.environ["DEJA_CLAUDE_ROOT"]).rglob(f"{SID}.jsonl")
    with open(path, "a") as f:
        f.write("\n")


def _trusted() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "deja" / "trusted"


def _trust_changed(repo: Path) -> None:
    _trusted().write_text("/nowhere\n")


def _another_root(repo: Path) -> None:
    """Codex's store moved (a variable the key does not name: the roots' own)."""
    other = repo.parent / "other-codex"
    (other / "sessions").mkdir(parents=True)
    os.environ["CODEX_HOME"] = str(other)  # (monkeypatch undoes it)


@pytest.mark.parametrize(
    "change", [_a_new_transcript, _a_transcript_appended, _trust_changed, _another_root]
)
def test_the_refresh_s_transcripts_send_it_the_whole_way(
    worked: Path, change: Callable[[Path], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(worked.parent / "codex"))
    _trusted().parent.mkdir(parents=True, exist_ok=True)
    _trusted().write_text("")  # trusting nothing, as before
    _kept(worked, REFRESHING)
    change(worked)
    out, loaded = _ask(worked, REFRESHING)
    assert loaded, "a transcript or the trust changed: the refresh must look"
    assert out == _whole_way(worked, REFRESHING)


def test_a_transcript_written_while_it_answers_is_seen(
    worked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other agents' transcripts are walked before the command runs, and the kept
    answer names how they stood then: a transcript written while the command answered
    (maybe after the refresh looked) stands otherwise, and the answer is not served."""
    monkeypatch.chdir(worked)
    question = printed._question(REFRESHING)
    assert question is not None
    conn = printed._open(question.db)
    assert conn is not None
    watched = printed._watch_transcripts(conn)
    conn.close()
    assert watched is not None and watched.before == printed._transcripts_stat(watched)
    _a_transcript_appended(worked)
    assert watched.before != printed._transcripts_stat(watched)


# The console script, with a session written right after the refresh looked (as if
# while the command answered)
LATE_SESSION = """
import sys
import deja_blame.index.refresh as refresh
from deja_blame.entry import main
from test_printed import SID, T0, _session
from pathlib import Path

looked = refresh.refresh_index

def then_written(*args, **kwargs):
    n = looked(*args, **kwargs)
    repo = Path.cwd()
    _session(repo, SID.replace("abcd", "0123"), T0 + 90, repo / "app.py", "late")
    return n

refresh.refresh_index = then_written
main(sys.argv[1:])
"""


def test_a_transcript_written_after_the_refresh_looked_is_not_kept(worked: Path) -> None:
    """The answer is kept with the transcripts as they stood before the command ran:
    a session written after the refresh looked (its answer has not read it) stands
    otherwise, so what was kept is not served, and the next answer reads it."""
    proc = subprocess.run(
        [sys.executable, "-c", LATE_SESSION, *REFRESHING],
        cwd=worked,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    out, loaded = _ask(worked, REFRESHING)
    assert loaded, "the answer kept was made before a session it never read"
    assert out == _whole_way(worked, REFRESHING) and out != proc.stdout


def test_no_cache_is_never_served(worked: Path) -> None:
    _kept(worked)
    for _ in range(2):
        out, loaded = _ask(worked, DEJA_NO_CACHE="1")
        assert loaded and out == _uncached(worked)


def test_another_environment_or_form_is_another_question(worked: Path) -> None:
    kept = _kept(worked)
    out, loaded = _ask(worked, TZ="Asia/Tokyo")
    assert loaded and out == kept
    for args in (["blame", "app.py", "--json"], ["blame", "app.py", "--no-refresh"]):
        assert _ask(worked, args)[1], args  # the refresh's or the text's: the whole way
    assert not _ask(worked)[1]
    for args in (["blame", "-L", ":mean", "app.py"], ["blame", "-w", "app.py"]):
        assert _ask(worked, args)[1] and _ask(worked, args)[1], args  # never kept


def test_deja_s_rules_are_part_of_the_key(worked: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(worked)
    key = printed._question(ASK)
    monkeypatch.setattr(printed, "CACHE_VERSION", printed.CACHE_VERSION + 1)
    other = printed._question(ASK)
    assert key is not None and other is not None and key.key != other.key


def test_an_answer_beside_a_warning_is_not_kept(repo: Path) -> None:
    (repo / "app.py").write_text(APP)
    git(repo, "add", "app.py")
    git(repo, "commit", "-q", "-m", "mean")
    for _ in range(3):  # no session indexed: each answer says so on stderr
        proc = subprocess.run(
            [sys.executable, "-c", CHECK, *ASK], cwd=repo, capture_output=True, timeout=120
        )
        assert b"no sessions are indexed" in proc.stderr
        assert b"click loaded: True" in proc.stderr


def test_the_constants_it_copies_are_the_originals() -> None:
    from deja_blame.attribution import cache
    from deja_blame.hooks.late import LATE_DIR
    from deja_blame.index.db import default_db_path
    from deja_blame.transcripts.antigravity import discover

    assert printed.LATE_DIR == LATE_DIR
    assert (look.FULL_NAME, look.COMPACT_NAME) == (discover.FULL_NAME, discover.COMPACT_NAME)
    assert cache.CACHE_VERSION == printed.CACHE_VERSION
    assert printed._db_path() == os.path.realpath(default_db_path())


def test_the_index_path_is_the_index_module_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deja_blame.index.db import default_db_path

    monkeypatch.delenv("DEJA_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert printed._db_path() == os.path.realpath(default_db_path())
    monkeypatch.delenv("XDG_DATA_HOME")
    assert printed._db_path() == os.path.realpath(default_db_path())


# -- Antigravity's sessions: the refresh's own look (``index/look.py``) ----------------

AGY = "agy-session-1"


def _agy_root() -> Path:
    return Path(os.environ["DEJA_ANTIGRAVITY_ROOT"])


def _agy_session(root: Path, sid: str, path: Path, i: int = 0) -> None:
    """An Antigravity session (its compact transcript) wrote ``path`` at T0 + ``i`` s."""
    from test_index import append, created_step, planner, transcript, user, write_call

    append(
        transcript(root, sid),
        user(i, "write app.py", cwd=str(path.parent)),
        planner(i + 1, "Writing.", write_call(str(path), APP)),
        created_step(i + 2, str(path)),
    )


@pytest.fixture
def agy_worked(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An Antigravity session wrote app.py; committed ten minutes later; indexed."""
    root = tmp_path / "agy"
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(root))
    _agy_session(root, AGY, repo / "app.py")
    (repo / "app.py").write_text(APP)
    git(repo, "add", "app.py")
    git(repo, "commit", "-q", "-m", "mean", env=commit_env(T0 + 600))
    deja("index", cwd=repo)
    return repo


def _agy_new_session(repo: Path) -> None:
    _agy_session(_agy_root(), "agy-session-2", repo / "app.py", 30)


def _agy_appended(repo: Path) -> None:
    from test_index import append, conversation, transcript

    append(transcript(_agy_root(), AGY), *conversation(1, start=40))


def _agy_full_beside(repo: Path) -> None:
    """The full transcript appears beside the compact one (the session is read again,
    the two as one)."""
    from test_index import transcript

    compact = transcript(_agy_root(), AGY)
    compact.with_name(look.FULL_NAME).write_bytes(compact.read_bytes())


@pytest.mark.parametrize("change", [_agy_new_session, _agy_appended, _agy_full_beside])
def test_an_antigravity_session_the_refresh_would_read_sends_it_the_whole_way(
    agy_worked: Path, change: Callable[[Path], None]
) -> None:
    kept = _kept(agy_worked, REFRESHING)
    assert b'"session": "' + AGY.encode() in kept
    change(agy_worked)
    out, loaded = _ask(agy_worked, REFRESHING)
    assert loaded, "the refresh would find an Antigravity transcript changed: it must look"
    assert out == _whole_way(agy_worked, REFRESHING)


# The console script, with an Antigravity session written right after the refresh looked
LATE_AGY_SESSION = """
import sys
import deja_blame.index.refresh as refresh
from deja_blame.entry import main
from test_printed import T0, _agy_root, _agy_session
from pathlib import Path

looked = refresh.refresh_index

def then_written(*args, **kwargs):
    n = looked(*args, **kwargs)
    _agy_session(_agy_root(), "agy-session-late", Path.cwd() / "app.py", 90)
    return n

refresh.refresh_index = then_written
main(sys.argv[1:])
"""


def test_an_antigravity_session_written_after_the_refresh_looked_is_not_served(
    agy_worked: Path,
) -> None:
    """The kept answer names Antigravity's sessions as the refresh saw them (its own
    look, handed over), never as they stand when the answer is kept: a session written
    after the refresh looked is not in what was kept, and the next answer reads it."""
    proc = subprocess.run(
        [sys.executable, "-c", LATE_AGY_SESSION, *REFRESHING],
        cwd=agy_worked,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    out, loaded = _ask(agy_worked, REFRESHING)
    assert loaded, "the answer kept was made before a session it never read"
    assert out == _whole_way(agy_worked, REFRESHING)


@pytest.mark.parametrize("n_roots", [1, 2])
def test_the_refresh_hands_over_the_look_a_warm_question_takes_again(
    tmp_path: Path, n_roots: int
) -> None:
    """What the refresh saw (``look.seen``) is what ``look.now`` sees while nothing
    changed (else a kept answer is never served), the first look only; a transcript
    grown since, or a session folder made, is another look."""
    from test_index import append, conversation, transcript

    from deja_blame.index.changes import changed_transcripts
    from deja_blame.index.db import connect

    roots = [tmp_path / f"agy{k}" for k in range(n_roots)]
    for k, root in enumerate(roots):
        _agy_session(root, f"s{k}", tmp_path / "app.py")
        full = transcript(root, f"both{k}", look.FULL_NAME)
        append(full, *conversation(1))
        append(full.with_name(look.COMPACT_NAME), *conversation(1))
    (roots[0] / "brain" / "no-logs-yet").mkdir()
    conn = connect(tmp_path / "looked.db")
    seen = look.wait()
    try:
        changed_transcripts(conn, roots, others=False)
        first = seen.text
        append(transcript(roots[-1], "s0"), *conversation(1, start=20))
        changed_transcripts(conn, roots, others=False)  # a second look is not the kept one
    finally:
        look.stop()
        conn.close()
    assert seen.roots == [str(r) for r in roots] and seen.text == first
    assert first != look.now(seen.roots)  # the grown transcript
    # as the refresh sees them now: the same look; a session folder made: another
    seen = look.wait()
    conn = connect(tmp_path / "looked.db")
    try:
        changed_transcripts(conn, roots, others=False)
    finally:
        look.stop()
        conn.close()
    assert seen.text == look.now([str(r) for r in roots])
    (roots[-1] / "brain" / "another").mkdir()
    assert seen.text != look.now([str(r) for r in roots])


def _gemini() -> Path:
    return Path(os.environ["HOME"]) / ".gemini"


def _agy_root_made(repo: Path) -> None:
    """A first Antigravity root where deja finds them by name (``~/.gemini/antigravity``)."""
    _agy_session(_gemini() / "antigravity", "agy-session-2", repo / "app.py", 30)


def _agy_default_appended(repo: Path) -> None:
    from test_index import append, conversation, transcript

    append(transcript(_gemini() / "jetski", AGY), *conversation(1, start=40))


def _gemini_chat(repo: Path) -> None:
    chats = Path(os.environ["GEMINI_CLI_HOME"]) / ".gemini" / "tmp" / "p" / "chats"
    chats.mkdir(parents=True)
    (chats / "session-1.jsonl").write_text("{}\n")


@pytest.mark.parametrize(
    ("gemini_cli_home", "change"),
    [
        (False, _agy_root_made),  # ~/.gemini there (Gemini CLI's root, walked)
        (True, _agy_root_made),  # ~/.gemini Antigravity's alone
        (False, _agy_default_appended),
        (True, _gemini_chat),
    ],
)
def test_antigravity_s_own_places_send_it_the_whole_way(
    worked: Path, monkeypatch: pytest.MonkeyPatch, gemini_cli_home: bool, change: Callable
) -> None:
    """No variable names Antigravity's roots: they are ``~/.gemini``'s ``antigravity*``
    and ``jetski*`` folders (the refresh's look reads their sessions), left out of
    Gemini CLI's walk of ``~/.gemini``; a root made there, a session grown in one, and
    Gemini CLI's own chats are each seen."""
    monkeypatch.delenv("DEJA_ANTIGRAVITY_ROOT")
    if gemini_cli_home:
        monkeypatch.setenv("GEMINI_CLI_HOME", str(worked.parent / "gemini-cli"))
    from test_index import append, conversation, transcript

    append(transcript(_gemini() / "jetski", AGY), *conversation(1))
    deja("index", cwd=worked)
    _kept(worked, REFRESHING)
    change(worked)
    out, loaded = _ask(worked, REFRESHING)
    assert loaded, "the refresh would find a transcript: it must look"
    assert out == _whole_way(worked, REFRESHING)


def test_the_walk_leaves_antigravity_s_roots_to_the_refresh_s_look(
    worked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_index import append, conversation, transcript

    monkeypatch.delenv("DEJA_ANTIGRAVITY_ROOT")
    monkeypatch.chdir(worked)
    append(transcript(_gemini() / "antigravity", AGY), *conversation(1))
    (_gemini() / "settings.json").write_text("{}")
    question = printed._question(REFRESHING)
    assert question is not None
    conn = printed._open(question.db)
    assert conn is not None
    watched = printed._watch_transcripts(conn)
    conn.close()
    assert watched is not None
    assert str(_gemini() / "settings.json") in watched.paths  # Gemini CLI's root, walked
    assert not [p for p in watched.paths if "antigravity" in p]
