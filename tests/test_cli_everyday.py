"""git blame's habits and the everyday answers: a revision before the file, several
-L ranges (checked against git blame on the same repository), one-line errors
with a non-zero exit for the mistakes people make, counts in good English."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from conftest import FIXTURES, commit_env, deja, git


@pytest.fixture
def history(repo: Path) -> Path:
    (repo / "a.py").write_text("".join(f"line_{i} = {i}\n" for i in range(1, 31)))
    git(repo, "add", "a.py")
    git(repo, "commit", "-q", "-m", "one", env=commit_env(1_784_278_800))
    text = (repo / "a.py").read_text().replace("line_5 = 5", "line_5 = 50")
    (repo / "a.py").write_text(text.replace("line_25 = 25", "line_25 = 250"))
    git(repo, "commit", "-qam", "two", env=commit_env(1_784_278_900))
    return repo


def _lines(doc: dict) -> list[tuple[int, str, str]]:
    return [(ln["line"], ln["commit"], ln["text"]) for ln in doc["lines"]]


def test_a_revision_before_the_file_is_git_blame_s_rev(history: Path) -> None:
    by_arg = orjson.loads(deja("blame", "HEAD~1", "a.py", "--json", cwd=history).stdout)
    by_opt = orjson.loads(deja("blame", "a.py", "--rev", "HEAD~1", "--json", cwd=history).stdout)
    assert _lines(by_arg) == _lines(by_opt)
    first = git(history, "rev-parse", "HEAD~1").strip()
    assert {c for _, c, _ in _lines(by_arg)} == {first}
    assert deja("blame", "HEAD", "--", "a.py", cwd=history).returncode == 0
    twice = deja("blame", "HEAD", "a.py", "--rev", "HEAD", cwd=history, check=False)
    assert twice.returncode == 2 and b"a revision twice" in twice.stderr
    many = deja("blame", "HEAD", "a.py", "b.py", cwd=history, check=False)
    assert many.returncode == 2 and b"too many arguments" in many.stderr
    (history / "b.py").write_text("b = 1\n")
    two = deja("blame", "a.py", "b.py", cwd=history, check=False)
    assert two.returncode == 2 and b"one file at a time: 'a.py' is a file" in two.stderr
    # a file named as a branch is one: git reads the branch first, as deja does
    git(history, "branch", "b.py")
    assert deja("blame", "b.py", "a.py", "--json", cwd=history).returncode == 0


def test_several_ranges_give_git_blame_s_lines(history: Path) -> None:
    args = ["-L", "3,6", "-L", "24,+3"]
    doc = orjson.loads(deja("blame", "a.py", *args, "--json", cwd=history).stdout)
    porcelain = git(history, "blame", "--line-porcelain", *args, "a.py")
    want = [
        (int(head.split()[2]), head.split()[0])
        for head in porcelain.splitlines()
        if len(head.split()) >= 3 and len(head.split()[0]) == 40 and head.split()[1].isdigit()
    ]
    assert [(n, c) for n, c, _ in _lines(doc)] == want
    assert [n for n, _, _ in _lines(doc)] == [3, 4, 5, 6, 24, 25, 26]


def test_a_range_past_the_end_is_git_s_error(history: Path) -> None:
    proc = deja("blame", "a.py", "-L", "1,2", "-L", "40", cwd=history, check=False)
    assert proc.returncode == 1
    assert proc.stderr.decode().strip() == "deja: error: file a.py has only 30 lines"


def test_why_past_the_end_and_of_an_empty_file_say_it_in_git_s_words(history: Path) -> None:
    """newcomer 9: "empty.py has no line 1" beside "file a.py has only 30 lines"."""
    (history / "empty.py").write_text("")
    git(history, "add", "empty.py")
    git(history, "commit", "-qm", "empty")
    for target, words in (
        ("a.py:31", "file a.py has only 30 lines"),
        ("empty.py:1", "file empty.py has only 0 lines"),
    ):
        proc = deja("why", target, cwd=history, check=False)
        assert proc.returncode == 1
        assert proc.stderr.decode().strip() == f"deja: error: {words}"


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (("index", "--root", "/nonexistent/agy"), 1, "transcript root not found"),
        (("show", ""), 1, "no session id given"),
        (("why", ":3"), 2, "is not FILE:LINE"),
        (("sessions", "--limit", "0"), 2, "is not in the range"),
        (("sessions", "--limit", "-1"), 2, "is not in the range"),
        (("parse", "/etc/passwd"), 1, "is not an agent transcript"),
    ],
)
def test_mistakes_get_one_line_and_a_non_zero_exit(
    history: Path, args: tuple[str, ...], code: int, words: str
) -> None:
    proc = deja(*args, cwd=history, check=False)
    assert proc.returncode == code, proc.stderr.decode()
    assert words in proc.stderr.decode()
    assert "Traceback" not in proc.stderr.decode()


def test_a_root_named_that_is_not_there_is_an_error_with_a_hint(tmp_path: Path) -> None:
    """``deja index --root /nonexistent`` is bad input, said as every other: the error
    line and a hint, no summary of nothing read (newcomer 15 #7, 16 #6)."""
    gone = tmp_path / "gone"
    proc = deja("index", "--root", str(gone), cwd=tmp_path, check=False)
    assert proc.returncode == 1
    assert proc.stderr.decode().splitlines() == [
        f"deja: error: transcript root not found: {gone} (from --root)",
        "hint: name the folder an agent keeps its transcripts in (deja doctor lists each"
        " agent's; deja index --help says where they are)",
    ]
    doc = orjson.loads(deja("index", "--root", str(gone), "--json", check=False).stdout)
    assert doc["problems"] == [f"transcript root not found: {gone} (from --root)"]
    # named twice: said once, and still no summary of nothing read
    twice = deja("index", "--root", str(gone), "--root", str(gone), cwd=tmp_path, check=False)
    assert twice.returncode == 1
    assert twice.stderr == proc.stderr


def test_counts_are_in_good_english(tmp_path: Path) -> None:
    root = tmp_path / "one"
    (root / "brain").mkdir(parents=True)
    demo = next((FIXTURES / "demo" / "brain").iterdir())
    shutil.copytree(demo, root / "brain" / demo.name)  # a link there would not be followed
    proc = deja("index", "--root", str(root), cwd=tmp_path)
    assert "indexed 1 transcript: 1 session added" in proc.stderr.decode()


def test_global_options_before_the_command_like_git(tmp_path: Path, history: Path) -> None:
    db = tmp_path / "elsewhere.db"
    env = {"DEJA_ANTIGRAVITY_ROOT": str(FIXTURES / "demo")}
    deja("--db", str(db), "index", "-q", cwd=tmp_path, env=env)
    assert db.exists()
    listed = orjson.loads(deja("--db", str(db), "sessions", "--json", cwd=tmp_path).stdout)
    assert len(listed["sessions"]) == 2
    # -C: as if started in the repository
    doc = orjson.loads(deja("-C", str(history), "blame", "a.py", "--json", cwd=tmp_path).stdout)
    assert doc["path"] == "a.py" and len(doc["lines"]) == 30
    # the command's own --db still wins over the global one
    other = tmp_path / "other.db"
    deja("--db", str(db), "index", "-q", "--db", str(other), cwd=tmp_path, env=env)
    assert other.exists()
    gone = deja("-C", str(tmp_path / "nope"), "sessions", cwd=tmp_path, check=False)
    assert gone.returncode == 2 and b"does not exist" in gone.stderr


def test_project_takes_any_spelling_of_a_directory(tmp_path: Path, history: Path) -> None:
    from test_notes_world import S1, World, body

    w = World(tmp_path, history)
    (history / "src").mkdir()
    w.write(S1, "src/new.py", body("q", 3))
    w.deja("index", "-q")
    want = [S1]
    for spelling in (".", "./", "src", "src/", str(history), str(history) + "/"):
        doc = orjson.loads(w.deja("sessions", "--project", spelling, "--json").stdout)
        assert [s["session_id"] for s in doc["sessions"]] == want, spelling
    # the session touched only src/: its project is the work tree that holds it
    assert doc["sessions"][0]["project"] == str(history)


def test_every_line_carries_git_s_author_and_people_s_lines_show_it(history: Path) -> None:
    doc = orjson.loads(deja("blame", "a.py", "--json", cwd=history).stdout)
    porcelain = git(history, "blame", "--line-porcelain", "a.py").splitlines()
    authors = [ln[len("author ") :] for ln in porcelain if ln.startswith("author ")]
    mails = [ln[len("author-mail ") :] for ln in porcelain if ln.startswith("author-mail ")]
    times = [int(ln.split()[1]) for ln in porcelain if ln.startswith("author-time ")]
    assert [ln["author"] for ln in doc["lines"]] == authors
    assert [ln["author_mail"] for ln in doc["lines"]] == mails
    assert [ln["author_time"] for ln in doc["lines"]] == times
    human = deja("blame", "a.py", cwd=history).stdout.decode().splitlines()
    assert all("(Test Person" in ln for ln in human)  # the person's name, as git blame shows
    (history / "a.py").write_text((history / "a.py").read_text() + "new = 1\n")
    last = deja("blame", "a.py", cwd=history).stdout.decode().splitlines()[-1]
    assert "(not committed yet)" in last


def test_why_names_the_person_whose_commit_holds_a_line_no_session_wrote(history: Path) -> None:
    """As blame does: the line's commit, its author and day (newcomer 10, #9)."""
    why = deja("why", "a.py:5", cwd=history).stdout.decode().splitlines()
    head = git(history, "rev-parse", "--short=12", "HEAD").strip()
    assert why[1].startswith(f"commit {head} by Test Person (2026-07-17): not written by any")


def _on_a_terminal(args: list[str], cwd: Path, env: dict[str, str]) -> int:
    """Run deja with its stdout on a pseudo-terminal (where the pager starts)."""
    import os
    import subprocess
    import sys

    leader, follower = os.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "deja_blame", *args],
            cwd=cwd,
            env={**os.environ, **env},
            stdout=follower,
            stderr=subprocess.PIPE,
            timeout=60,
        )
    finally:
        os.close(follower)
        os.close(leader)
    return proc.returncode


def test_a_pager_on_a_terminal_and_never_in_a_pipe(tmp_path: Path, history: Path) -> None:
    paged = tmp_path / "paged.txt"
    pager = {"DEJA_PAGER": f"tee {paged}"}
    assert _on_a_terminal(["blame", "a.py"], history, pager) == 0
    assert "line_30 = 30" in paged.read_text()  # the whole blame went through the pager
    paged.unlink()
    assert _on_a_terminal(["--no-pager", "blame", "a.py"], history, pager) == 0
    assert not paged.exists()
    piped = deja("blame", "a.py", cwd=history, env=pager)  # not a terminal: no pager
    assert b"line_30" in piped.stdout and not paged.exists()


def test_colour_auto_always_never(history: Path) -> None:
    assert b"\x1b[" not in deja("blame", "a.py", cwd=history).stdout  # a pipe: auto is off
    assert b"\x1b[" in deja("--color", "always", "blame", "a.py", cwd=history).stdout
    never = deja("--color", "never", "blame", "a.py", cwd=history, env={"NO_COLOR": ""})
    assert b"\x1b[" not in never.stdout


def test_bidirectional_controls_never_reach_the_terminal() -> None:
    from deja_blame.output import inert

    trojan = "access = 'user' \u202e } \u2066if admin\u2069 \u2066 \u061c\u200f"
    shown = inert(trojan)
    assert not any(ch in shown for ch in "\u202e\u2066\u2069\u061c\u200f")
    assert "access = 'user'" in shown and "if admin" in shown  # the words stay


def test_the_model_the_person_chose_is_read_and_shown(tmp_path: Path) -> None:
    env = {"DEJA_ANTIGRAVITY_ROOT": str(FIXTURES / "basic-rules")}
    deja("index", "-q", cwd=tmp_path, env=env)
    doc = orjson.loads(deja("sessions", "--json", cwd=tmp_path, env=env).stdout)
    models = {s["session_id"][:8]: s["model"] for s in doc["sessions"]}
    assert models["c7e0a4d2"] == "Gemini 3.5 Flash (Medium)"
    shown = deja("show", "c7e0a4d2", cwd=tmp_path, env=env).stdout.decode()
    assert "model       Gemini 3.5 Flash (Medium)" in shown
    # and the block itself is still not part of the request
    assert "Model Selection" not in shown


def test_the_latest_model_choice_wins(tmp_path: Path) -> None:
    from deja_blame.transcripts import parse_transcript

    def change(old: str, new: str) -> str:
        return (
            "<USER_REQUEST>\nGo on.\n</USER_REQUEST>\n<USER_SETTINGS_CHANGE>\nThe user changed"
            f" setting `Model Selection` from {old} to {new}. No need to comment on this"
            " change.\n</USER_SETTINGS_CHANGE>"
        )

    records = [
        {
            "step_index": i,
            "source": "USER_EXPLICIT",
            "type": "USER_INPUT",
            "status": "DONE",
            "created_at": f"2026-07-23T08:0{i}:00Z",
            "content": c,
        }
        for i, c in enumerate(
            [change("None", "Gemini 2.5 Pro"), change("Gemini 2.5 Pro", "Claude Sonnet 4.5")]
        )
    ]
    path = tmp_path / "transcript.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    session = parse_transcript(path)
    assert session.model == "Claude Sonnet 4.5"
    assert [m.text for m in session.messages] == ["Go on.", "Go on."]


@pytest.mark.parametrize("spec", [":handle", "/^def handle/,+2", "2,/^    return/"])
def test_function_and_regex_ranges_are_git_s(repo: Path, spec: str) -> None:
    (repo / "m.py").write_text(
        "import os\n\n\ndef handle(x):\n    y = x + 1\n    return y\n\n\ndef other():\n    pass\n"
    )
    git(repo, "add", "m.py")
    git(repo, "commit", "-q", "-m", "m", env=commit_env(1_784_278_800))
    doc = orjson.loads(deja("blame", "m.py", "-L", spec, "--json", cwd=repo).stdout)
    want = [
        int(head.split()[2])
        for head in git(repo, "blame", "--porcelain", "-L", spec, "m.py").splitlines()
        if len(head.split()) >= 3 and len(head.split()[0]) == 40 and head.split()[1].isdigit()
    ]
    assert [ln["line"] for ln in doc["lines"]] == want and want


def test_a_function_that_is_not_there_is_git_s_error(repo: Path) -> None:
    (repo / "m.py").write_text("x = 1\n")
    git(repo, "add", "m.py")
    git(repo, "commit", "-q", "-m", "m", env=commit_env(1_784_278_800))
    proc = deja("blame", "m.py", "-L", ":nosuch", cwd=repo, check=False)
    assert proc.returncode == 1
    assert "no match" in proc.stderr.decode() and "Traceback" not in proc.stderr.decode()


def test_an_edit_made_under_an_earlier_model_says_which(tmp_path: Path) -> None:
    """The person switched models mid-session: the edit made before says its model."""
    from antigravity_writer import TranscriptWriter

    root = tmp_path / "root"
    w = TranscriptWriter(root, "5e5e5e5e-0000-4000-8000-00000000abcd", 1_795_852_800)
    target = str(tmp_path / "p" / "a.py")

    def choose(old: str, new: str) -> None:
        w.user(
            f"Go on.\n</USER_REQUEST>\n<USER_SETTINGS_CHANGE>\nThe user changed setting"
            f" `Model Selection` from {old} to {new}. No need to comment on this"
            " change.\n</USER_SETTINGS_CHANGE>\n<USER_REQUEST>"
        )

    choose("None", "Gemini 2.5 Pro")
    w.write_file(target, "x = 1\n")
    choose("Gemini 2.5 Pro", "Claude Sonnet 4.5")
    w.replace(target, "x = 1\n", "x = 2\n", current="x = 1\n")
    doc = orjson.loads(deja("parse", str(w.path), "--json").stdout)
    assert doc["model"] == "Claude Sonnet 4.5"
    assert [e.get("model") for e in doc["edits"]] == ["Gemini 2.5 Pro", None]
    env = {"DEJA_ANTIGRAVITY_ROOT": str(root)}
    deja("index", "-q", env=env)
    shown = orjson.loads(deja("show", "5e5e5e5e", "--json", env=env).stdout)
    assert shown["edits"] == doc["edits"]


def test_why_no_refresh_asks_the_index_as_it_is(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As blame's: a script asking about many lines reads new transcript lines once."""
    from test_notes_world import S1, body, make_world

    world = make_world(tmp_path, repo, monkeypatch)
    world.write(S1, "app.py", body("a", 3))
    world.commit("the session's work")
    held = orjson.loads(world.deja("why", "app.py:2", "--no-refresh", "--json").stdout)
    assert held["session"] is None  # nothing indexed yet, and nothing read
    read = orjson.loads(world.deja("why", "app.py:2", "--json").stdout)
    assert read["session"] == S1


def test_a_commit_dated_past_year_9999_is_shown_not_an_error(repo: Path) -> None:
    """git accepts any author time (git blame shows year 11476); deja shows the
    last date it can, and the time itself where git shows the number."""
    (repo / "far.py").write_text("x = 1\n")
    git(repo, "add", "far.py")
    env = {**commit_env(1_784_278_800), "GIT_AUTHOR_DATE": "@300000000000 +0000"}
    git(repo, "commit", "-qm", "far", env=env)
    text = deja("blame", "far.py", cwd=repo)
    assert "9999-12-31" in text.stdout.decode()
    unix = deja("blame", "-t", "far.py", cwd=repo).stdout.decode()
    assert "300000000000" in unix


def test_lsp_help_gives_a_working_setup_without_the_source_tree() -> None:
    """``deja lsp --help`` sent a pip user to docs/editors.md (not installed), gave no
    Emacs line, and its Neovim line drew no lenses (newcomer 17 #8)."""
    from conftest import run_deja

    text = run_deja("lsp", "--help").output
    assert "eglot-server-programs" in text and "vim.lsp.codelens.refresh()" in text, text
    assert "in deja's source repository, not in the installed package" in text
    assert "docs/mcp.md in deja's source repository" in run_deja("mcp", "--help").output
