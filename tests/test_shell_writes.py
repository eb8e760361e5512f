"""Golden cases of transcripts/shell_writes.py: what a shell command writes, read
from the command line alone (nothing is ever run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import commit_env, deja, git
from hypothesis import given, settings
from hypothesis import strategies as st

from deja_blame.transcripts.shell_writes import ShellWrite, parsed_writes, shell_writes

CASES: list[tuple[str, list[ShellWrite]]] = [
    (
        "cat > src/app.py <<'EOF'\nimport os\nprint(os.sep)\nEOF",
        [ShellWrite("src/app.py", "import os\nprint(os.sep)\n")],
    ),
    (
        'mkdir -p docs && cat <<"END" >> docs/notes.md\n- one\n- two\nEND',
        [ShellWrite("docs/notes.md", "- one\n- two\n", append=True)],
    ),
    ("cat > a.txt <<EOF\nplain text\nEOF", [ShellWrite("a.txt", "plain text\n")]),
    ("cat > a.sh <<EOF\necho $HOME\nEOF", []),  # unquoted: the shell expands $HOME
    ("cat > a.sh <<'EOF'\necho $HOME\nEOF", [ShellWrite("a.sh", "echo $HOME\n")]),
    ("cat <<-EOF > t.txt\n\tindented\n\tEOF", [ShellWrite("t.txt", "indented\n")]),
    (
        "tee -a log.txt b.txt > /dev/null <<'X'\nline\nX",
        [ShellWrite("log.txt", "line\n", True), ShellWrite("b.txt", "line\n", True)],
    ),
    ("echo 'hello world' > greet.txt", [ShellWrite("greet.txt", "hello world\n")]),
    ("echo -n done >> state", [ShellWrite("state", "done", append=True)]),
    ('echo "$USER" > who.txt', []),
    ("printf 'a\\nb\\n' > ab.txt", [ShellWrite("ab.txt", "a\nb\n")]),
    ("printf '%s\\n' x > x.txt", []),  # its arguments decide
    (
        "python3 - <<'PY'\nfrom pathlib import Path\nPath('cfg.ini').write_text('[a]\\nb = 1\\n')\nPY",
        [ShellWrite("cfg.ini", "[a]\nb = 1\n")],
    ),
    (
        "python - <<'PY'\nwith open('out.py', 'w') as fh:\n    fh.write('X = 1\\n')\nPY",
        [ShellWrite("out.py", "X = 1\n")],
    ),
    ("python - <<'PY'\nopen(name, 'w').write(text)\nPY", []),  # not literal
    ("sed -i 's/a/b/' f.py", []),
    ("./gen.sh > out.txt", []),
    ("cat a.txt > b.txt", []),  # a copy: not the agent's text
    ("cat > open.txt <<'EOF'\nnever closed", []),
    (
        "ls && cat > k.txt <<'A' && cat > l.txt <<'B'\nk\nA\nl\nB",
        [ShellWrite("k.txt", "k\n"), ShellWrite("l.txt", "l\n")],
    ),  # fmt: skip
]


@pytest.mark.parametrize(("command", "want"), CASES)
def test_shell_writes(command: str, want: list[ShellWrite]) -> None:
    assert shell_writes(command) == want


@pytest.mark.parametrize(
    "command",
    [
        "c'a't > a.txt <<'EOF'\nhi\nEOF",
        'e"ch"o hello > b.txt',
        "\\tee c.txt <<'EOF'\nhi\nEOF",
        "/usr/bin/p\\ython3 - <<'PY'\nopen('d.txt', 'w').write('x')\nPY",
    ],
)
def test_a_writer_named_through_quotes_still_writes(command: str) -> None:
    # shell_writes parses only commands that name a writer: quoting in its name
    # (the shell takes quotes and backslashes out of a word) does not hide it
    assert shell_writes(command) == parsed_writes(command) != []


_PIECES = [
    "cat", "c'a't", 'e"c"ho', "\\tee", "tee -a", "echo", "printf", "python3 -", "ls", "git",
    "c", "at", "'", '"', "\\", " ", ">", ">>", "2>&1", "<<'EOF'", "<<EOF", "\n", "EOF",
    "&&", "|", ";", "cd src", "f.txt", "$x", "hi", "-n",
]  # fmt: skip


@settings(max_examples=1500)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join))
def test_the_commands_left_unparsed_write_nothing(command: str) -> None:
    assert shell_writes(command) == parsed_writes(command)


def test_a_heredoc_that_ran_is_the_sessions_text_in_blame(tmp_path: Path, repo: Path) -> None:
    """A Claude Code session on another machine writes two files with its shell;
    the second command failed (exit code 1): only the first file is its."""
    sid = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
    cwd = "/home/frank/proj"
    good = "".join(f"limit_{i} = clamp_value({i}, ceiling={i * 3})\n" for i in range(5))
    bad = "".join(f"never_{i} = not_written({i})\n" for i in range(5))

    def bash(k: int, command: str, error: bool) -> list[dict[str, Any]]:
        at = f"2026-03-01T10:00:{k:02d}Z"
        call = {
            "type": "tool_use",
            "id": f"toolu_{k}",
            "name": "Bash",
            "input": {"command": command},
        }
        answer = {
            "type": "tool_result",
            "tool_use_id": f"toolu_{k}",
            "is_error": error,
            "content": "Exit code 1\nboom" if error else "",
        }
        base = {"sessionId": sid, "cwd": cwd, "timestamp": at}
        return [
            {**base, "type": "assistant", "uuid": f"a{k}", "message": {"role": "assistant", "content": [call]}},
            {**base, "type": "user", "uuid": f"u{k}", "message": {"role": "user", "content": [answer]}},
        ]  # fmt: skip

    records = [
        {"type": "user", "sessionId": sid, "cwd": cwd, "timestamp": "2026-03-01T10:00:00Z",
         "uuid": "u0", "message": {"role": "user", "content": "Write the limits."}},
        *bash(1, f"mkdir -p src && cat > src/limits.py <<'EOF'\n{good}EOF", False),
        *bash(2, f"cat > src/never.py <<'EOF'\n{bad}EOF && false", True),
    ]  # fmt: skip
    root = tmp_path / "claude"
    transcript = root / "projects" / "-home-frank-proj" / f"{sid}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    (repo / "src").mkdir()
    (repo / "src" / "limits.py").write_text(good)
    (repo / "src" / "never.py").write_text(bad)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "limits", env=commit_env(1772359300))  # 10:01:40
    env = {"DEJA_CLAUDE_ROOT": str(root), "DEJA_DB": str(tmp_path / "index.db")}
    deja("index", "-q", cwd=repo, env=env)

    def sessions(rel: str) -> list[str | None]:
        doc = orjson.loads(deja("blame", rel, "--json", cwd=repo, env=env).stdout)
        return [ln["session"] for ln in doc["lines"]]

    assert sessions("src/limits.py") == [sid] * 5
    assert sessions("src/never.py") == [None] * 5


def test_why_names_a_command_that_changed_the_file(tmp_path: Path, repo: Path) -> None:
    """``sed -i`` leaves no text to match: the line stays unattributed, and
    ``deja why`` names the session's command that changed the file meanwhile."""
    sid = "8b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e"
    (repo / "conf.py").write_text("LEVEL = 'debug'\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "conf", env=commit_env(1772359000))  # before the session
    base = {"sessionId": sid, "cwd": str(repo), "timestamp": "2026-03-01T10:00:05Z"}
    call = {
        "type": "tool_use",
        "id": "toolu_s",
        "name": "Bash",
        "input": {"command": "sed -i 's/debug/info/' conf.py"},
    }
    answer = {"type": "tool_result", "tool_use_id": "toolu_s", "is_error": False, "content": ""}
    records = [
        {**base, "type": "user", "uuid": "u0", "message": {"role": "user", "content": "Quieter."}},
        {**base, "type": "assistant", "uuid": "a1", "message": {"role": "assistant", "content": [call]}},
        {**base, "type": "user", "uuid": "u1", "message": {"role": "user", "content": [answer]}},
    ]  # fmt: skip
    root = tmp_path / "claude"
    transcript = root / "projects" / "p" / f"{sid}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    (repo / "conf.py").write_text("LEVEL = 'info'\n")
    git(repo, "commit", "-q", "-am", "quieter", env=commit_env(1772359300))
    env = {"DEJA_CLAUDE_ROOT": str(root), "DEJA_DB": str(tmp_path / "index.db")}
    doc = orjson.loads(deja("why", "conf.py:1", "--json", cwd=repo, env=env).stdout)
    assert doc["session"] is None
    assert doc["changed_by_command"]["session"] == sid
    said = deja("why", "conf.py:1", cwd=repo, env=env).stdout.decode()
    assert f"changed by a command of session {sid}" in said
    # a command before the file's previous commit is not named
    git(repo, "commit", "-q", "--allow-empty", "-m", "x", env=commit_env(1772359400))
    (repo / "conf.py").write_text("LEVEL = 'warn'\n")
    git(repo, "commit", "-q", "-am", "a person's", env=commit_env(1772359500))
    doc = orjson.loads(deja("why", "conf.py:1", "--json", cwd=repo, env=env).stdout)
    assert "changed_by_command" not in doc


def test_a_here_document_after_cd_lands_under_that_folder() -> None:
    # Claude Code and Codex run "cd sub && cat > f <<'EOF'" as often as the plain form
    got = shell_writes("cd tests && cat > helpers.py <<'EOF'\nx = 1\nEOF\n")
    assert got == [ShellWrite("tests/helpers.py", "x = 1\n")]
    assert shell_writes("cd /srv/app && cat >> b.py <<EOF\nq\nEOF") == [
        ShellWrite("/srv/app/b.py", "q\n", append=True)
    ]
    # where the shell decides the folder, a relative target is unknown
    assert shell_writes("cd $DIR && cat > b.py <<'EOF'\nq\nEOF") == []
    assert shell_writes("cd && cat > b.py <<'EOF'\nq\nEOF") == []


def test_a_here_document_piped_to_tee_is_written_by_tee() -> None:
    got = shell_writes("cat <<'EOF' | tee -a tests/t.py >/dev/null\ny = 2\nEOF")
    assert got == [ShellWrite("tests/t.py", "y = 2\n", append=True)]
    assert shell_writes("cat <<'EOF' | sort > out.txt\nb\na\nEOF") == []  # sort's output
