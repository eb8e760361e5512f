"""deja doctor in healthy and broken setups: each problem is named with the command that fixes it."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import orjson
import pytest
from antigravity_writer import TranscriptWriter
from conftest import commit_env, deja, git

T0 = 1_784_278_800


@pytest.fixture
def setup(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    root = tmp_path / "root"
    w = TranscriptWriter(root, "doc-session-1", start=T0, workspace=str(repo))
    w.user("Add a health check.")
    w.write_file(str(repo / "app.py"), "def health():\n    return 'ok'\n")
    (repo / "app.py").write_text("def health():\n    return 'ok'\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "health", env=commit_env(T0 + 60))
    db = tmp_path / "index.db"
    monkeypatch.setenv("DEJA_DB", str(db))
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(root))
    monkeypatch.setenv("DEJA_HOOK_SYNC", "1")
    return {"root": root, "repo": repo, "db": db}


def doctor(cwd: Path, env: dict[str, str] | None = None) -> tuple[int, dict, str]:
    proc = deja("doctor", "--json", cwd=cwd, env=env, check=False)
    return proc.returncode, orjson.loads(proc.stdout), proc.stderr.decode()


def by_name(doc: dict) -> dict[str, dict]:
    return {c["name"]: c for c in doc["checks"]}


def make_healthy(s: dict[str, Path]) -> None:
    deja("index", "-q")
    deja("hooks", "install", cwd=s["repo"])
    deja("annotate", "HEAD", cwd=s["repo"])


def test_healthy(setup: dict[str, Path]) -> None:
    make_healthy(setup)
    code, doc, err = doctor(setup["repo"])
    assert code == 0, doc
    assert err == ""
    assert doc["ok"] is True
    checks = by_name(doc)
    assert list(checks) == [
        "git",
        "pygit2",
        "transcript roots",
        "index",
        "index up to date",
        "hooks",
        "notes",
        "server",
    ]
    for c in doc["checks"]:
        assert set(c) == {"name", "ok", "detail", "fix"}
        assert c["ok"] is True and c["fix"] == ""
    assert "(1 session)" in checks["transcript roots"]["detail"]
    assert "integrity ok" in checks["index"]["detail"] and "1 session" in checks["index"]["detail"]
    assert "libgit2" in checks["pygit2"]["detail"]
    assert "post-commit installed" in checks["hooks"]["detail"]
    assert "1 note" in checks["notes"]["detail"]
    # the human form: one line per check, nothing to fix
    human = deja("doctor", cwd=setup["repo"])
    lines = human.stdout.decode().splitlines()
    assert len(lines) == 8 and all(ln.startswith("ok") for ln in lines)
    assert "to fix" not in human.stdout.decode()


def test_no_index_yet_and_doctor_does_not_create_one(setup: dict[str, Path]) -> None:
    # no index yet is no problem on a fresh install: the first blame (or the hook's
    # first commit) builds it (NEWCOMER14 #1: FAIL and exit 1 here)
    code, doc, err = doctor(setup["repo"])
    assert code == 0, doc
    assert by_name(doc)["index"] == {
        "name": "index",
        "ok": True,
        "detail": f"{setup['db']}: not built yet (the first deja blame, why or stats builds"
        " it, as does a commit with the hooks; or now: deja index)",
        "fix": "",
    }
    assert not setup["db"].exists()
    # hooks not installed is no problem (nothing needs installing): a suggestion
    assert "problem" not in err
    assert by_name(doc)["hooks"]["ok"] and by_name(doc)["hooks"]["fix"] == ""
    human = deja("doctor", cwd=setup["repo"], check=False).stdout.decode()
    assert "to fix" not in human and "  hooks:" not in human
    assert "(optional: deja hooks install writes notes)" in human


def test_transcripts_not_yet_indexed(setup: dict[str, Path]) -> None:
    make_healthy(setup)
    w = TranscriptWriter(setup["root"], "doc-session-2", start=T0 + 500)
    w.user("Another one.")
    code, doc, _ = doctor(setup["repo"])
    fresh = by_name(doc)["index up to date"]
    assert code == 1 and not fresh["ok"] and fresh["fix"] == "deja index"
    assert fresh["detail"].startswith("1 new and 0 changed")
    deja("index", "-q")
    code, doc, _ = doctor(setup["repo"])
    assert code == 0, doc


def corrupt_pages(db: Path) -> None:
    """Scribble over the index's pages after the header (a disk or a copy gone wrong)."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    for start in range(page, len(data), page):
        data[start + 8 : start + 64] = b"\xa5" * 56  # every page's cell pointers
    db.write_bytes(bytes(data))


def test_a_damaged_index_is_one_short_line(setup: dict[str, Path]) -> None:
    """SQLite's integrity report (one row of many lines) is summed up, not printed whole."""
    make_healthy(setup)
    db = setup["db"]
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(db.read_bytes())
    pages = len(data) // int.from_bytes(data[16:18], "big")
    data[32:36] = (pages - 1).to_bytes(4, "big")  # the freelist: its first page, and
    data[36:40] = (7).to_bytes(4, "big")  # a count that does not fit
    db.write_bytes(bytes(data))
    code, doc, _ = doctor(setup["repo"])
    index = by_name(doc)["index"]
    assert code == 1 and "damaged (" in index["detail"] and "\n" not in index["detail"]
    assert "freelist" in index["detail"] and "more problem" in index["detail"]
    assert len(index["detail"]) < 400
    human = deja("doctor", cwd=setup["repo"], check=False).stdout.decode().splitlines()
    assert len(human) == len(doc["checks"]) + 3  # the checks, a blank line, "to fix:", one fix


def test_corrupt_index_then_rebuild(setup: dict[str, Path]) -> None:
    make_healthy(setup)
    corrupt_pages(setup["db"])
    code, doc, _ = doctor(setup["repo"])
    index = by_name(doc)["index"]
    assert code == 1 and not index["ok"]
    assert "damaged" in index["detail"]
    assert index["fix"] == "deja index --rebuild"
    assert "index up to date" not in by_name(doc)
    deja("index", "--rebuild", "-q")
    code, doc, _ = doctor(setup["repo"])
    assert code == 0, doc
    assert "1 session" in by_name(doc)["index"]["detail"]


def test_garbage_file_as_index(setup: dict[str, Path]) -> None:
    # not deja's: never offer to rebuild (that replaced the file), name it instead
    setup["db"].write_bytes(b"this is not sqlite at all\n" * 200)
    code, doc, _ = doctor(setup["repo"])
    index = by_name(doc)["index"]
    assert code == 1 and not index["ok"] and "not a deja index" in index["detail"]
    assert "--rebuild" not in index["fix"] and "--db" in index["fix"]


def test_foreign_database(setup: dict[str, Path]) -> None:
    conn = sqlite3.connect(setup["db"])
    conn.execute("CREATE TABLE invoices (id INTEGER)")
    conn.commit()
    conn.close()
    before = setup["db"].read_bytes()
    _, doc, _ = doctor(setup["repo"])
    index = by_name(doc)["index"]
    assert not index["ok"] and "not a deja index" in index["detail"]
    assert "--db" in index["fix"]
    assert setup["db"].read_bytes() == before  # read-only: left exactly as it was


def test_index_from_a_newer_deja(setup: dict[str, Path]) -> None:
    deja("index", "-q")
    conn = sqlite3.connect(setup["db"])
    conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    _, doc, _ = doctor(setup["repo"])
    index = by_name(doc)["index"]
    assert not index["ok"] and "newer" in index["detail"] and "upgrade" in index["fix"]


def test_no_transcript_roots(setup: dict[str, Path], tmp_path: Path) -> None:
    deja("index", "-q")
    code, doc, _ = doctor(setup["repo"], env={"DEJA_ANTIGRAVITY_ROOT": ""})
    roots = by_name(doc)["transcript roots"]
    assert code == 1 and not roots["ok"]
    # no agent was looked for in particular: no one agent's variable (newcomer 18 #8)
    assert roots["fix"].startswith("run deja where the agents ran;")
    assert "deja index --root DIR" in roots["fix"] and "DEJA_ANTIGRAVITY_ROOT" not in roots["fix"]


def test_a_clone_with_a_remote_and_no_notes_is_told_to_fetch_them(
    setup: dict[str, Path], tmp_path: Path
) -> None:
    """A fresh clone with no transcripts: its attribution is in the repository's notes,
    so the fix says deja notes fetch first (newcomer 18 #8)."""
    deja("index", "-q")
    git(setup["repo"], "remote", "add", "upstream", str(tmp_path / "forge.git"))
    _, doc, _ = doctor(setup["repo"], env={"DEJA_ANTIGRAVITY_ROOT": ""})
    fix = by_name(doc)["transcript roots"]["fix"]
    assert fix.startswith("this clone has no agent transcripts: fetch the repository's"), fix
    assert "deja notes fetch upstream; or run deja where the agents ran;" in fix


def test_a_root_that_is_gone(setup: dict[str, Path], tmp_path: Path) -> None:
    make_healthy(setup)
    gone = tmp_path / "gone"
    _, doc, _ = doctor(setup["repo"], env={"DEJA_ANTIGRAVITY_ROOT": f"{setup['root']}:{gone}"})
    roots = by_name(doc)["transcript roots"]
    assert not roots["ok"] and f"transcript root not found: {gone}" in roots["detail"]
    assert "(1 session)" in roots["detail"]


def test_help_says_a_warning_leaves_the_exit_code() -> None:
    """A warning prints a fix command, and still exits 0 (``ok: true``): the help says
    so, not only "exit 1 when something needs fixing" (newcomer 16 #4)."""
    text = " ".join(deja("doctor", "--help").stdout.decode().split())
    assert 'A warning (warn, with the command worth running; "ok": true in --json)' in text
    assert "does not change the exit code: only a problem makes it 1." in text


def test_each_root_names_its_agent_and_another_agent_s_folder_is_not_a_root(
    setup: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Antigravity's root is labelled as the others are, and Gemini CLI's default root,
    ~/.gemini, holding only Antigravity's folder is not listed as an empty Gemini CLI
    (newcomer 16 #3). Named, or holding a session, it is listed as before."""
    import shutil

    home = tmp_path / "home"
    shutil.copytree(setup["root"], home / ".gemini" / "antigravity")
    monkeypatch.delenv("DEJA_ANTIGRAVITY_ROOT")
    deja("index", "-q")
    _, doc, _ = doctor(setup["repo"])
    detail = by_name(doc)["transcript roots"]["detail"]
    assert f"antigravity: {home / '.gemini' / 'antigravity'} (1 session)" in detail, detail
    assert "gemini-cli" not in detail, detail
    _, doc, _ = doctor(setup["repo"], env={"DEJA_GEMINI_ROOT": str(home / ".gemini")})
    detail = by_name(doc)["transcript roots"]["detail"]
    assert f"gemini-cli: {home / '.gemini'} (0 sessions)" in detail, detail


def test_hooks_not_installed_and_chained(setup: dict[str, Path]) -> None:
    deja("index", "-q")
    code, doc, _ = doctor(setup["repo"])
    hooks = by_name(doc)["hooks"]
    assert code == 0 and hooks["ok"] and hooks["fix"] == ""  # optional: not a problem
    assert "post-commit not installed" in hooks["detail"] and "optional" in hooks["detail"]
    # a person's own hook: install chains it, doctor says so
    mine = setup["repo"] / ".git" / "hooks" / "post-commit"
    mine.parent.mkdir(exist_ok=True)
    mine.write_text("#!/bin/sh\necho mine\n")
    mine.chmod(0o755)
    _, doc, _ = doctor(setup["repo"])
    assert "not installed (foreign hook there)" in by_name(doc)["hooks"]["detail"]
    deja("hooks", "install", cwd=setup["repo"])
    code, doc, _ = doctor(setup["repo"])
    hooks = by_name(doc)["hooks"]
    assert hooks["ok"], hooks
    assert "chains post-commit.pre-deja (foreign)" in hooks["detail"]


def test_core_hooks_path_is_honoured(setup: dict[str, Path]) -> None:
    deja("index", "-q")
    git(setup["repo"], "config", "core.hooksPath", ".githooks")
    deja("hooks", "install", cwd=setup["repo"])
    _, doc, _ = doctor(setup["repo"])
    hooks = by_name(doc)["hooks"]
    assert hooks["ok"], hooks
    assert hooks["detail"].startswith(str(setup["repo"] / ".githooks"))
    git(setup["repo"], "config", "--unset", "core.hooksPath")
    _, doc, _ = doctor(setup["repo"])
    assert not by_name(doc)["hooks"]["ok"]  # git no longer looks where they are


def test_hook_whose_python_is_gone(setup: dict[str, Path]) -> None:
    make_healthy(setup)
    hook = setup["repo"] / ".git" / "hooks" / "post-commit"
    text = hook.read_text()
    hook.write_text(
        "\n".join(
            "DEJA_PYTHON=/nonexistent/python3" if ln.startswith("DEJA_PYTHON=") else ln
            for ln in text.splitlines()
        )
        + "\n"
    )
    _, doc, _ = doctor(setup["repo"])
    hooks = by_name(doc)["hooks"]
    assert not hooks["ok"] and "/nonexistent/python3 is gone" in hooks["detail"]
    assert hooks["fix"] == "deja hooks install"


def test_outside_a_repository(setup: dict[str, Path], tmp_path: Path) -> None:
    deja("index", "-q")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, doc, _ = doctor(elsewhere)
    assert code == 0, doc
    assert "not inside a git repository" in by_name(doc)["repository"]["detail"]
    assert "hooks" not in by_name(doc)
    # nothing to check is no "ok" in front of a sentence saying what is missing
    text = deja("doctor", cwd=elsewhere).stdout.decode()
    (line,) = [ln for ln in text.splitlines() if "not inside a git repository" in ln]
    assert line.startswith("--  ") and "ok" not in line.split("repository")[0]


def test_no_git_on_path(setup: dict[str, Path], tmp_path: Path) -> None:
    deja("index", "-q")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(os.path.realpath(sys.executable), bin_dir / "python3")
    proc = deja("doctor", "--json", cwd=tmp_path, env={"PATH": str(bin_dir)}, check=False)
    git_check = by_name(orjson.loads(proc.stdout))["git"]
    assert proc.returncode == 1 and not git_check["ok"] and "install git" in git_check["fix"]


def test_files_with_no_session_are_not_counted_as_sessions(
    setup: dict[str, Path], tmp_path: Path
) -> None:
    """Four files where Claude Code keeps its transcripts, two of them no session (empty,
    random bytes): the roots' line said "4 sessions" while deja index skipped two."""
    from test_claude_exit_codes import SID, _transcript

    claude = tmp_path / "claude"
    folder = claude / "projects" / "-home-pat-proj"
    _transcript(folder / f"{SID}.jsonl", [("ls", False, "a.py", {"stdout": "a.py"})])
    _transcript(folder / "7e7e7e7e-aaaa-4bbb-8ccc-000000000077.jsonl", [("ls", False, "b", {})])
    (folder / "11111111-0000-4000-8000-000000000001.jsonl").write_bytes(b"")
    (folder / "22222222-0000-4000-8000-000000000002.jsonl").write_bytes(os.urandom(300))
    env = {"DEJA_CLAUDE_ROOT": str(claude)}
    deja("index", "-q", env=env)
    _, doc, _ = doctor(setup["repo"], env)
    detail = by_name(doc)["transcript roots"]["detail"]
    assert f"claude-code: {claude} (2 sessions; 2 files with no session in it)" in detail


@pytest.mark.parametrize("as_json", [False, True])
def test_a_reader_that_stops_early_still_gets_exit_1_for_a_problem(
    tmp_path: Path, repo: Path, as_json: bool
) -> None:
    """``deja doctor 2>&1 | head -1`` exited 0 while a check failed: the broken pipe
    was taken for "the reader stopped early, all is well" (newcomer 17 #6). The
    reader here is gone before doctor writes a byte."""
    import subprocess

    (tmp_path / "a-folder").mkdir()
    env = {**os.environ, "DEJA_DB": str(tmp_path / "a-folder")}  # index FAIL
    proc = subprocess.Popen(
        [sys.executable, "-m", "deja_blame", "doctor", *(["--json"] if as_json else [])],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert proc.stdout is not None
    proc.stdout.close()
    assert proc.wait(timeout=120) == 1
