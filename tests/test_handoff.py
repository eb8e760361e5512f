"""deja handoff end to end: real-format transcripts, real repositories, a fake agy."""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import deja, git

from deja_blame.models import Edit, Message, Session
from deja_blame.outputs.handoff_prompt import build_prompt, is_test_command, locate

T0 = 1_784_278_800  # 2026-07-17T09:00:00Z
SID = "4b1c2d3e-0000-4000-8000-000000000001"
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def iso(epoch: int) -> str:
    return dt.datetime.fromtimestamp(epoch, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Transcript:
    """Writes one compact transcript.jsonl the way Antigravity does (format sections 2-4, 9)."""

    def __init__(self, root: Path, sid: str, project: Path | None = None) -> None:
        self.root = root
        self.path = root / "brain" / sid / ".system_generated" / "logs" / "transcript.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.records: list[dict[str, Any]] = []
        self.step = 0
        if project is not None:  # the CLI's cache: workspace -> the session last used there
            cache = root / "cache" / "last_conversations.json"
            cache.parent.mkdir(parents=True, exist_ok=True)
            known = json.loads(cache.read_text()) if cache.exists() else {}
            known[str(project)] = sid
            cache.write_text(json.dumps(known))

    def _add(self, rec: dict[str, Any]) -> None:
        rec["step_index"] = self.step
        self.step += 1
        self.records.append(rec)
        self.path.write_text("".join(json.dumps(r) + "\n" for r in self.records))

    def _planner(self, at: int, calls: list[dict[str, Any]], text: str = "") -> None:
        args_calls = [
            {"name": c["name"], "args": {k: json.dumps(v) for k, v in c["args"].items()}}
            for c in calls
        ]
        self._add(
            {
                "source": "MODEL",
                "type": "PLANNER_RESPONSE",
                "status": "DONE",
                "created_at": iso(at),
                "content": text,
                "tool_calls": args_calls,
            }
        )

    def user(self, text: str, at: int) -> None:
        self._add(
            {
                "source": "USER_EXPLICIT",
                "type": "USER_INPUT",
                "status": "DONE",
                "created_at": iso(at),
                "content": f"<USER_REQUEST>\n{text}\n</USER_REQUEST>\n"
                '<ADDITIONAL_METADATA>\n{"cwd": "/elsewhere"}\n</ADDITIONAL_METADATA>',
            }
        )

    def say(self, text: str, at: int) -> None:
        self._add(
            {
                "source": "MODEL",
                "type": "PLANNER_RESPONSE",
                "status": "DONE",
                "created_at": iso(at),
                "content": text,
            }
        )

    def replace(
        self, path: Path | str, removed: list[str], added: list[str], at: int, start: int = 1
    ) -> None:
        self._planner(
            at,
            [
                {
                    "name": "replace_file_content",
                    "args": {"TargetFile": str(path), "ReplacementContent": "\n".join(added)},
                }
            ],
            "Editing the file.",
        )
        body = "\n".join(
            [f"@@ -{start},{len(removed)} +{start},{len(added)} @@"]
            + ["-" + r for r in removed]
            + ["+" + a for a in added]
        )
        self._add(
            {
                "source": "MODEL",
                "type": "CODE_ACTION",
                "status": "DONE",
                "created_at": iso(at + 1),
                "content": "The following changes were made by the replace_file_content tool"
                f" to: {path}. If relevant, proactively run terminal commands.\n"
                f"[diff_block_start]\n{body}\n[diff_block_end]",
            }
        )

    def write(self, path: Path, content: str, at: int) -> None:
        self._planner(
            at,
            [{"name": "write_to_file", "args": {"TargetFile": str(path), "CodeContent": content}}],
        )
        self._add(
            {
                "source": "MODEL",
                "type": "CODE_ACTION",
                "status": "DONE",
                "created_at": iso(at + 1),
                "content": f"Created file file://{path} with requested content.",
            }
        )

    def run(self, command: str, code: int, at: int, cwd: Path, output: str = "") -> None:
        self._planner(
            at, [{"name": "run_command", "args": {"CommandLine": command, "Cwd": str(cwd)}}]
        )
        self._add(
            {
                "source": "MODEL",
                "type": "RUN_COMMAND",
                "status": "DONE",
                "created_at": iso(at + 1),
                "content": f"Created At: 2026-07-17T12:00:03+03:00\nTask Description: {command}\n"
                f"\tThe command exited with code {code}.\n\tOutput:\n{output}",
            }
        )

    def background(self, command: str, at: int, cwd: Path) -> None:
        self._planner(
            at, [{"name": "run_command", "args": {"CommandLine": command, "Cwd": str(cwd)}}]
        )
        self._add(
            {
                "source": "MODEL",
                "type": "RUN_COMMAND",
                "status": "RUNNING",
                "created_at": iso(at + 1),
                "content": "Tool is running as a background task with task id: 7\n"
                f"Task Description: {command}\n"
                "Task logs are available at: file:///tmp/task-7.log",
            }
        )


CART_V1 = ["def total(cart):", "    return sum(cart)", ""]


@pytest.fixture
def world(tmp_path: Path, repo: Path) -> dict[str, Any]:
    """A repository where a session edited two files, a person then changed one line."""
    (repo / "src").mkdir()
    (repo / "src" / "cart.py").write_text("\n".join(CART_V1))
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "start")
    root = tmp_path / "agy-root"
    t = Transcript(root, SID, project=repo)
    t.user(f"Make the cart total include tax. My token is {TOKEN}", T0)
    t.replace(
        repo / "src" / "cart.py",
        ["    return sum(cart)"],
        ["    subtotal = sum(cart)", "    taxed = subtotal * (1 + TAX_RATE)", "    return taxed"],
        T0 + 10,
        start=2,
    )
    t.write(
        repo / "src" / "tax.py", "TAX_RATE = 0.2\n\ndef rate():\n    return TAX_RATE\n", T0 + 20
    )
    t.run("git status", 0, T0 + 30, repo)
    t.run("python -m pytest -q", 1, T0 + 40, repo, output="FAILED tests/test_cart.py::test_tax")
    t.say("The tax test fails: TAX_RATE is not imported in cart.py. Next: import it.", T0 + 50)
    # what the working tree holds now: the person rewrote one of the session's lines
    (repo / "src" / "cart.py").write_text(
        "def total(cart):\n    subtotal = sum(cart)\n    taxed = round(subtotal * 1.2, 2)\n"
        "    return   taxed\n"
    )
    (repo / "src" / "tax.py").write_text("TAX_RATE = 0.2\n\ndef rate():\n    return TAX_RATE\n")
    deja("index", "--root", str(root))
    return {"repo": repo, "root": root, "transcript": t}


@pytest.fixture
def fake_agy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An ``agy`` on PATH that records its arguments and working directory, then exits 7."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    record = tmp_path / "agy-record.json"
    script = bindir / "agy"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        f"with open({str(record)!r}, 'w', encoding='utf-8') as fh:\n"
        "    json.dump({'args': sys.argv[1:], 'cwd': os.getcwd()}, fh)\n"
        "sys.exit(7)\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    return record


def printed(cwd: Path, *extra: str) -> str:
    return deja("handoff", "--to", "agy", "--print", *extra, cwd=cwd).stdout.decode()


# -- the prompt ---------------------------------------------------------------------------


def test_prompt_has_goal_files_survival_commands_and_open_items(world: dict[str, Any]) -> None:
    prompt = printed(world["repo"])
    assert f"Previous session: {SID}" in prompt
    # the goal: the user's request, cleaned (no metadata), with the token redacted
    assert "Make the cart total include tax. My token is [redacted]" in prompt
    # its time in UTC, said as blame and why say agents' times
    assert "- 2026-07-17 09:00 UTC Make the cart total include tax." in prompt
    assert TOKEN not in prompt and "ADDITIONAL_METADATA" not in prompt
    # files with counts, and which of the written lines survive (whitespace-normalised)
    assert "- src/cart.py: +3 -1 lines in 1 edit" in prompt
    assert (
        "2 of the 3 non-blank lines the session left there are still in the working tree" in prompt
    )
    assert "still there: return taxed" in prompt
    assert "gone: taxed = subtotal * (1 + TAX_RATE)" in prompt
    assert "- src/tax.py: +4 -0 lines in 1 edit" in prompt
    assert "3 of the 3 non-blank lines" in prompt
    # commands newest first, with exit codes; the failing test run is named as such
    cmds = prompt.split("## Last commands")[1]
    assert cmds.index("python -m pytest -q") < cmds.index("git status")
    assert "`python -m pytest -q` -> exit 1, FAILING TEST RUN" in prompt
    assert "`git status` -> exit 0" in prompt
    assert "The last test run failed (exit 1): `python -m pytest -q`" in prompt
    assert "TAX_RATE is not imported in cart.py" in prompt  # the agent's last message
    assert len(prompt) <= 16_000 and prompt.endswith("\n")


def test_last_request_after_the_last_edit_and_background_commands(
    tmp_path: Path, repo: Path
) -> None:
    root = tmp_path / "root"
    t = Transcript(root, SID, project=repo)
    t.user("Add a README.", T0)
    t.write(repo / "README.md", "# Shop\n", T0 + 5)
    t.background("npm run dev", T0 + 10, repo)
    t.user("Now add a CHANGELOG too.", T0 + 20)
    (repo / "README.md").write_text("# Shop\n")
    deja("index", "--root", str(root))
    prompt = printed(repo)
    assert "Started in the background, no exit code recorded: `npm run dev`" in prompt
    assert "`npm run dev` -> sent to the background, no exit code recorded" in prompt
    assert "may not be done yet: \u201cNow add a CHANGELOG too.\u201d" in prompt
    goal = prompt.split("## Goal")[1]
    assert goal.index("Now add a CHANGELOG too.") < goal.index("Add a README.")


def test_secrets_in_commands_and_output_are_redacted(tmp_path: Path, repo: Path) -> None:
    root = tmp_path / "root"
    t = Transcript(root, SID, project=repo)
    t.user("password=hunter2 is the db password; key AKIAIOSFODNN7EXAMPLE", T0)
    t.run('curl -H "Authorization: Bearer s3cr3tT0kenValue123" https://api', 0, T0 + 5, repo)
    t.say(
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", T0 + 9
    )
    deja("index", "--root", str(root))
    prompt = printed(repo)
    for secret in ("hunter2", "AKIAIOSFODNN7EXAMPLE", "s3cr3tT0kenValue123", "MIIEowIBAAKCAQEA"):
        assert secret not in prompt
    assert "password=[redacted]" in prompt
    assert "Authorization: Bearer [redacted]" in prompt


def test_a_long_session_is_bounded_newest_first_in_whole_lines(tmp_path: Path, repo: Path) -> None:
    root = tmp_path / "root"
    t = Transcript(root, SID, project=repo)
    for i in range(120):
        t.user(f"request number {i:03d}: " + "make it better " * 12, T0 + 10 * i)
        t.run(f"echo step {i:03d}", 0, T0 + 10 * i + 2, repo)
        t.replace(repo / f"f{i:03d}.py", [], [f"x{i} = {i}"], T0 + 10 * i + 4)
    deja("index", "--root", str(root))
    full = printed(repo)
    assert len(full) <= 16_000
    assert "request number 119" in full and "request number 000" in full  # newest and first
    assert "earlier requests left out" in full
    assert "echo step 119" in full
    small = printed(repo, "--max-chars", "2000")
    assert len(small) <= 2000 and small.endswith("\n")
    assert "request number 119" in small


def test_a_prompt_that_cannot_be_summarised_enough_is_cut_between_lines() -> None:
    s = Session(session_id="s", transcript="t", project="-")
    s.messages = [
        Message(role="user", text=f"line {i} " + "x" * 40, at=iso(T0 + i)) for i in range(9)
    ]
    whole = build_prompt(s, limit=100_000)
    cut = build_prompt(s, limit=400)
    assert len(cut) <= 400 and cut.endswith("[... shortened to fit]\n")
    assert all(line in whole.splitlines() for line in cut.splitlines()[:-1])


# -- starting agy -------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["agy", "antigravity"])
def test_starts_agy_with_an_argument_vector_in_the_project(
    world: dict[str, Any], fake_agy: Path, target: str
) -> None:
    repo = world["repo"]
    expected = printed(repo)
    sub = repo / "src"
    proc = deja("handoff", "--to", target, cwd=sub, check=False)
    assert proc.returncode == 7, proc.stderr.decode()  # deja became agy: agy's exit status
    rec = json.loads(fake_agy.read_text(encoding="utf-8"))
    assert rec["args"] == ["-i", expected]
    assert Path(rec["cwd"]).resolve() == repo.resolve()


def test_shell_metacharacters_reach_agy_unchanged_and_run_nothing(
    tmp_path: Path, repo: Path, fake_agy: Path
) -> None:
    canary = tmp_path / "canary"
    victim = tmp_path / "victim"
    victim.mkdir()
    nasty = (
        f"Try $(touch {canary}) and `touch {canary}`; rm -rf {victim} | tee {canary} "
        f"&& echo 'single' \"double\" > {canary} \\ $HOME ${{IFS}} * ? ~ # !"
    )
    root = tmp_path / "root"
    t = Transcript(root, SID, project=repo)
    t.user(nasty, T0)
    t.run(f"echo $(touch {canary}); rm -rf {victim}", 0, T0 + 5, repo)
    deja("index", "--root", str(root))
    proc = deja("handoff", "--to", "agy", "--session", SID[:8], cwd=repo, check=False)
    assert proc.returncode == 7, proc.stderr.decode()
    args = json.loads(fake_agy.read_text(encoding="utf-8"))["args"]
    assert args[0] == "-i" and len(args) == 2
    assert nasty in args[1]
    assert f"`echo $(touch {canary}); rm -rf {victim}` -> exit 0" in args[1]
    assert not canary.exists()
    assert victim.is_dir()


def test_agy_missing_is_a_one_line_error_and_print_still_works(
    world: dict[str, Any], tmp_path: Path
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = {"PATH": str(empty)}
    proc = deja("handoff", "--to", "agy", cwd=world["repo"], env=env, check=False)
    err = proc.stderr.decode()
    assert proc.returncode == 1
    assert err.splitlines()[0] == "deja: error: agy is not on PATH: cannot start the handoff"
    assert "install" in err and "--print" in err and "Traceback" not in err
    ok = deja("handoff", "--to", "antigravity", "--print", cwd=world["repo"], env=env)
    assert "Make the cart total include tax." in ok.stdout.decode()


def test_the_print_hint_keeps_the_session_named(world: dict[str, Any], tmp_path: Path) -> None:
    """The hint's command prints the prompt of the session the person named, not the
    newest one (a newer session of the repository would be handed off instead)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    proc = deja(
        "handoff", "--to", "agy", "--session", SID[:8], cwd=world["repo"],
        env={"PATH": str(empty)}, check=False,
    )  # fmt: skip
    hint = next(ln for ln in proc.stderr.decode().splitlines() if ln.startswith("hint:"))
    command = hint.split("instead: ", 1)[1]
    # the whole id (newcomer 9: a prefix cut at 12 characters read as a typo)
    assert command == f"deja handoff --to agy --session {SID} --print"


def test_json_shows_the_argument_vector_and_directory(world: dict[str, Any]) -> None:
    out = json.loads(deja("handoff", "--to", "agy", "--json", cwd=world["repo"]).stdout)
    assert out["session_id"] == SID and out["target"] == "agy"
    assert out["argv"][:2] == ["agy", "-i"] and out["argv"][2] == printed(world["repo"])
    assert Path(out["cwd"]).resolve() == world["repo"].resolve()


# -- choosing the session -----------------------------------------------------------------


def test_default_is_the_newest_session_of_this_repository(tmp_path: Path, repo: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    root = tmp_path / "root"
    old = Transcript(root, "aaaa0001-old", project=repo)
    old.user("old request here", T0)
    new = Transcript(root, "bbbb0002-new", project=repo / "src")  # a project under the repo
    new.user("newer request here", T0 + 100)
    elsewhere = Transcript(root, "cccc0003-elsewhere", project=other)
    elsewhere.user("newest but elsewhere", T0 + 200)
    deja("index", "--root", str(root))
    (repo / "docs").mkdir()
    prompt = printed(repo / "docs")
    assert "Previous session: bbbb0002-new" in prompt
    assert "Previous session: cccc0003-elsewhere" in printed(other)
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    proc = deja("handoff", "--to", "agy", "--print", cwd=nowhere, check=False)
    assert proc.returncode == 1
    assert "no indexed session has" in proc.stderr.decode()
    assert "Traceback" not in proc.stderr.decode()


def test_unknown_id_and_ambiguous_prefix_are_clear_errors(tmp_path: Path, repo: Path) -> None:
    root = tmp_path / "root"
    # the CLI cache keeps one session per workspace: a second workspace under the repo
    for sid, project in (("abc11111-x", repo), ("abc22222-y", repo / "sub")):
        Transcript(root, sid, project=project).user(f"hello from {sid}", T0)
    deja("index", "--root", str(root))
    proc = deja("handoff", "--to", "agy", "--session", "zzz", "--print", cwd=repo, check=False)
    err = proc.stderr.decode()
    assert proc.returncode == 1
    assert err.startswith("deja: error: no indexed session matches 'zzz'")
    assert "abc11111" in err  # the hint names the sessions of this repository
    proc = deja("handoff", "--to", "agy", "--session", "abc", "--print", cwd=repo, check=False)
    err = proc.stderr.decode()
    assert proc.returncode == 1
    assert "ambiguous" in err and "abc11111-x" in err and "abc22222-y" in err
    assert len(err.strip().splitlines()) == 1
    ok = printed(repo, "--session", "abc2")
    assert "Previous session: abc22222-y" in ok


def test_the_hint_names_whole_ids_and_an_empty_id_is_a_usage_error(
    tmp_path: Path, repo: Path
) -> None:
    root = tmp_path / "root"
    long_id = "22222222-bbbb-4ccc-8ddd-000000000022"
    Transcript(root, long_id, project=repo).user("hello", T0)
    deja("index", "--root", str(root))
    proc = deja("handoff", "--to", "agy", "--session", "zzzz", "--print", cwd=repo, check=False)
    assert proc.returncode == 1
    assert f"recent sessions here: {long_id} (" in proc.stderr.decode()  # pasted back whole
    for empty in ("", " "):
        proc = deja("handoff", "--to", "agy", "--session", empty, "--print", cwd=repo, check=False)
        err = proc.stderr.decode()
        assert proc.returncode == 2 and "an empty session id" in err
        assert "Previous session" not in proc.stdout.decode()


def test_bad_target_is_usage_error(tmp_path: Path) -> None:
    proc = deja("handoff", "--to", "vim", check=False)
    assert proc.returncode == 2


# -- the working tree: moved clones, paths that leave the project -------------------------


def test_a_moved_clone_is_read_relative_to_the_repository_root(tmp_path: Path, repo: Path) -> None:
    gone = tmp_path / "was-here" / "shop"  # the project the transcript names, now missing
    (repo / "src").mkdir()
    (repo / "src" / "cart.py").write_text("def total(cart):\n    return sum(cart) * 2\n")
    root = tmp_path / "root"
    t = Transcript(root, SID, project=gone)
    t.user("Double it.", T0)
    t.replace(
        gone / "src" / "cart.py", ["    return sum(cart)"], ["    return sum(cart) * 2"], T0 + 1
    )
    deja("index", "--root", str(root))
    out = json.loads(deja("handoff", "--to", "agy", "--json", "--session", SID, cwd=repo).stdout)
    prompt = out["argv"][2]
    assert "- src/cart.py: +1 -1 lines in 1 edit" in prompt
    assert (
        "1 of the 1 non-blank lines the session left there are still in the working tree" in prompt
    )
    assert Path(out["cwd"]).resolve() == repo.resolve()  # the project is gone: the cwd
    # asked from a folder inside the repository: its top, as for a local session (the
    # prompt's paths are named from there; newcomer 10 #6)
    out = json.loads(
        deja("handoff", "--to", "agy", "--json", "--session", SID, cwd=repo / "src").stdout
    )
    assert Path(out["cwd"]).resolve() == repo.resolve()


def test_paths_leaving_the_project_are_never_read(tmp_path: Path, repo: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("LEAK = 'outside the project'\n")
    (repo / "link.py").symlink_to(outside / "secret.py")
    root = tmp_path / "root"
    t = Transcript(root, SID, project=repo)
    t.user("Touch things.", T0)
    t.replace(f"{repo}/../outside/secret.py", [], ["LEAK = 'outside the project'"], T0 + 1)
    t.replace(repo / "link.py", [], ["LEAK = 'outside the project'"], T0 + 2)
    t.replace("/etc/passwd", [], ["root:x:0:0:root:/root:/bin/bash"], T0 + 3)
    deja("index", "--root", str(root))
    prompt = printed(repo, "--session", SID)
    assert "still in the working tree" not in prompt
    assert "outside the project: not checked" in prompt
    assert "link.py: +1 -0 lines in 1 edit\n  leads outside the project: not read" in prompt


def test_locate_never_leaves_its_bases(tmp_path: Path) -> None:
    base = tmp_path / "proj"
    base.mkdir()
    (tmp_path / "x.py").write_text("a\n")
    (base / "ok.py").write_text("b\n")
    assert locate(str(base / "ok.py"), str(base), None)[2] == ["b"]
    assert locate(f"{base}/../x.py", str(base), None)[1] is None
    # moved clone: the trailing parts of the path are tried under the repository only
    moved = tmp_path / "repo"
    moved.mkdir()
    (moved / "ok.py").write_text("c\n")
    assert locate("/gone/proj/ok.py", "/gone/proj", moved)[2] == ["c"]
    assert locate("/gone/proj/../../x.py", "/gone/proj", moved)[1] is None
    assert locate("/gone/proj/ok.py", "-", None)[1] is None
    # a filesystem root is no project: nothing of the machine is "inside" it
    assert locate("/etc/passwd", "/", None)[1] is None


def test_the_sessions_own_replaced_lines_are_not_expected() -> None:
    s = Session(session_id="s", transcript="t", project="/nonexistent/project")
    s.edits = [
        Edit(
            path="/nonexistent/project/a.py",
            tool="replace_file_content",
            removed=[],
            added=["one = 1", "two = 2"],
            at=iso(T0),
        ),
        Edit(
            path="/nonexistent/project/a.py",
            tool="replace_file_content",
            removed=["two = 2"],
            added=["two = 3"],
            at=iso(T0 + 1),
        ),
    ]
    prompt = build_prompt(s, repo_root=None)
    assert "- a.py: +3 -1 lines in 2 edits" in prompt
    assert "project directory not found: not checked" in prompt


@pytest.mark.parametrize(
    "command",
    [
        "pytest",
        "python -m pytest -q tests/",
        "cd web && npm test",
        "npm run test:unit",
        "yarn test --watch=false",
        "go test ./...",
        "cargo test --all",
        "./gradlew clean test",
        "mvn -q test",
        "make check",
        "npx jest src",
        "bundle exec rspec",
        ".venv/bin/pytest -x",
    ],
)
def test_test_commands_are_recognised(command: str) -> None:
    assert is_test_command(command)


@pytest.mark.parametrize(
    "command",
    [
        "npm install",
        "go build ./...",
        "cargo build",
        "cat tests/test_x.py",
        "pytesting-tool",
        "echo contest",
        "git status",
    ],
)
def test_other_commands_are_not_test_runs(command: str) -> None:
    assert not is_test_command(command)


# -- every agent with a command line that starts on a prompt --------------------------------


def _recorder(bindir: Path, program: str, record: Path) -> None:
    script = bindir / program
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        f"with open({str(record)!r}, 'w', encoding='utf-8') as fh:\n"
        "    json.dump({'argv0': os.path.basename(sys.argv[0]), 'args': sys.argv[1:],"
        " 'cwd': os.getcwd()}, fh)\n"
        "sys.exit(7)\n"
    )
    script.chmod(0o755)


def test_the_agents_with_a_cli_that_starts_on_a_prompt_are_handoff_targets() -> None:
    """Checked against each agent's documentation: Cursor's ``cursor-agent [prompt]``,
    Droid's ``droid "query"``, Continue's ``cn [prompt]``, VS Code's ``code chat
    --mode agent [prompt]``; Amp (``-x`` exits), Aider (``--message`` exits) and
    Windsurf (an editor) have none."""
    from deja_blame.transcripts.registry import AGENTS

    starts = {a.id: (a.handoff.program, *a.handoff.options) for a in AGENTS if a.handoff}
    assert starts == {
        "antigravity": ("agy", "-i"),
        "claude-code": ("claude",),
        "codex": ("codex",),
        "gemini-cli": ("gemini", "-i"),
        "cursor": ("cursor-agent",),
        "copilot": ("code", "chat", "--mode", "agent"),
        "copilot-cli": ("copilot", "-i"),
        "opencode": ("opencode", "--prompt"),
        "droid": ("droid",),
        "continue": ("cn",),
        "pi": ("pi",),
        "cline": ("cline",),
    }


@pytest.mark.parametrize(
    "agent",
    [
        "cursor",
        "copilot",
        "copilot-cli",
        "opencode",
        "droid",
        "continue",
        "claude-code",
        "pi",
        "cline",
    ],
)
def test_each_target_gets_the_prompt_as_its_last_argument_and_no_shell_runs_it(
    agent: str, tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deja_blame.transcripts.registry import agent_named

    start = agent_named(agent).handoff
    assert start is not None
    bindir = tmp_path / "bin"
    bindir.mkdir()
    record = tmp_path / "record.json"
    _recorder(bindir, start.program, record)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    canary = tmp_path / "canary"
    nasty = f"Fix it; touch {canary} && echo $(touch {canary}) `touch {canary}` > {canary}"
    root = tmp_path / "root"
    t = Transcript(root, SID, project=repo)
    t.user(nasty, T0)
    deja("index", "--root", str(root))
    expected = deja("handoff", "--to", agent, "--print", "--session", SID[:8], cwd=repo).stdout
    proc = deja("handoff", "--to", agent, "--session", SID[:8], cwd=repo, check=False)
    assert proc.returncode == 7, proc.stderr.decode()
    rec = json.loads(record.read_text(encoding="utf-8"))
    assert rec["argv0"] == start.program
    assert rec["args"] == [*start.options, expected.decode()]
    assert nasty in rec["args"][-1]
    assert Path(rec["cwd"]).resolve() == repo.resolve()
    assert not canary.exists()


def test_a_windows_batch_shim_is_refused_not_run_through_cmd() -> None:
    from deja_blame.commands.handoff import runs_through_a_shell

    assert runs_through_a_shell(r"C:\Users\me\AppData\Roaming\npm\claude.CMD", windows=True)
    assert runs_through_a_shell(r"C:\Program Files\Microsoft VS Code\bin\code.cmd", windows=True)
    assert runs_through_a_shell(r"C:\tools\droid.bat", windows=True)
    assert not runs_through_a_shell(r"C:\tools\cursor-agent.exe", windows=True)
    assert not runs_through_a_shell("/usr/local/bin/code.cmd", windows=False)


def test_the_agent_is_found_on_path_only_never_in_the_current_folder(
    world: dict[str, Any], tmp_path: Path
) -> None:
    """A cloned repository's own ``agy`` (``claude.exe`` on Windows, where Python's
    ``shutil.which`` looks in the current folder first; an empty PATH entry is the
    current folder everywhere) is never started."""
    from deja_blame.commands.handoff import find_on_path

    planted = world["repo"] / "agy"
    planted.write_text("#!/bin/sh\ntouch pwned\n")
    planted.chmod(0o755)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = {"PATH": f":{empty}:."}  # both spellings of "the current folder"
    proc = deja("handoff", "--to", "agy", cwd=world["repo"], env=env, check=False)
    assert proc.returncode == 1 and "agy is not on PATH" in proc.stderr.decode()
    assert not (world["repo"] / "pwned").exists()
    # Windows' rules, here: a current-folder claude.exe is not found, a PATH one is
    (tmp_path / "claude.exe").write_text("")
    (tmp_path / "claude.exe").chmod(0o755)
    (empty / "claude.exe").write_text("")
    (empty / "claude.exe").chmod(0o755)
    assert find_on_path("claude", {"PATH": ".;"}, windows=True) is None
    # (a POSIX folder stands for C:\ here: only the drive-letter form is absolute)
    assert find_on_path("claude", {"PATH": f"C:\\nowhere;{empty}"}, windows=True) is None
    assert find_on_path("agy", {"PATH": str(empty)}) is None
    (empty / "agy").write_text("")
    (empty / "agy").chmod(0o755)
    assert find_on_path("agy", {"PATH": f":{empty}"}) == str(empty / "agy")


def _claude_session(repo: Path, sid: str, text: str, ago: int) -> None:
    """A Claude Code transcript under the test's HOME, its one request ``ago`` seconds old."""
    at = dt.datetime.fromtimestamp(dt.datetime.now().timestamp() - ago, tz=dt.timezone.utc)
    record = {"sessionId": sid, "cwd": str(repo), "isSidechain": False, "type": "user",
              "uuid": "u0", "timestamp": at.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
              "message": {"role": "user", "content": text}}  # fmt: skip
    folder = Path.home() / ".claude" / "projects" / "-repo"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{sid}.jsonl").write_text(json.dumps(record) + "\n")


def test_a_session_not_indexed_yet_is_read_before_choosing(repo: Path) -> None:
    """newcomer 18 #4: the newest transcript was not indexed yet, and the handoff went
    on with an older session; it reads new transcripts first, as blame and why do."""
    older, newer = "d0d0d0d0-4444-4000-8000-000000000001", "e0e0e0e0-5555-4000-8000-000000000002"
    _claude_session(repo, older, "the older request", 900)
    deja("index", "-q", cwd=repo)
    _claude_session(repo, newer, "the request that just ended", 60)
    stale = deja("handoff", "--to", "claude", "--print", "--no-refresh", cwd=repo)
    assert f"Previous session: {older}" in stale.stdout.decode()
    prompt = deja("handoff", "--to", "claude", "--print", cwd=repo).stdout.decode()
    assert f"Previous session: {newer}" in prompt
    assert "the request that just ended" in prompt
    listed = deja("sessions", "--json", cwd=repo).stdout.decode()
    assert newer in listed  # read into the index, not only into this answer
