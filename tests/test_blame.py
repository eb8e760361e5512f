"""deja blame and deja why end to end: real repositories, real-format transcripts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import commit_env, deja, deja_json, git

from deja_blame.index.store import LAZY_EXCERPT

T0 = 1_784_278_800  # 2026-07-17T09:00:00Z


def iso(epoch: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(epoch, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Session:
    """Writes one compact transcript the way Antigravity does (format sections 2-4)."""

    def __init__(self, root: Path, sid: str) -> None:
        self.path = root / "brain" / sid / ".system_generated" / "logs" / "transcript.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.records: list[dict[str, Any]] = []
        self.step = 0

    def _add(self, rec: dict[str, Any]) -> None:
        rec["step_index"] = self.step
        self.step += 1
        self.records.append(rec)
        self.path.write_text("".join(json.dumps(r) + "\n" for r in self.records))

    def user(self, text: str, at: int) -> None:
        self._add(
            {
                "source": "USER_EXPLICIT",
                "type": "USER_INPUT",
                "created_at": iso(at),
                "content": f"<USER_REQUEST>{text}</USER_REQUEST>",
            }
        )

    def replace(
        self, path: Path, removed: list[str], added: list[str], at: int, start: int = 1
    ) -> None:
        self._add(
            {
                "source": "MODEL",
                "type": "PLANNER_RESPONSE",
                "created_at": iso(at),
                "content": "Editing the file.",
                "tool_calls": [
                    {"name": "replace_file_content", "args": {"TargetFile": json.dumps(str(path))}}
                ],
            }
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
                "content": f"The following changes were made by the replace_file_content tool to: {path}."
                f" If relevant, proactively run terminal commands.\n"
                f"[diff_block_start]\n{body}\n[diff_block_end]",
            }
        )

    def write(self, path: Path, content: str, at: int) -> None:
        self._add(
            {
                "source": "MODEL",
                "type": "PLANNER_RESPONSE",
                "created_at": iso(at),
                "content": "",
                "tool_calls": [
                    {
                        "name": "write_to_file",
                        "args": {
                            "TargetFile": json.dumps(str(path)),
                            "CodeContent": json.dumps(content),
                        },
                    }
                ],
            }
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

    def run(self, command: str, code: int, at: int) -> None:
        self._add(
            {
                "source": "MODEL",
                "type": "PLANNER_RESPONSE",
                "created_at": iso(at),
                "content": "Testing.",
                "tool_calls": [
                    {"name": "run_command", "args": {"CommandLine": json.dumps(command)}}
                ],
            }
        )
        self._add(
            {
                "source": "MODEL",
                "type": "RUN_COMMAND",
                "status": "DONE",
                "created_at": iso(at + 5),
                "content": f"Task Description: {command}\n\tThe command exited with code {code}.\nOutput:\n",
            }
        )


def commit_all(repo: Path, message: str, at: int) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, env=commit_env(at))
    return git(repo, "rev-parse", "HEAD").strip()


AGENT_BLOCK = [
    "def total(cart):",
    "    if not cart:",
    "        return 0",
    "    }",
    "",
    "    subtotal = sum(item.price * item.qty for item in cart)",
    "    return round(subtotal * (1 + TAX_RATE), 2)",
]


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    root = tmp_path / "agroot"
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(root))
    (repo / "cart.py").write_text("TAX_RATE = 0.2\n\n\nclass Cart:\n    pass\n")
    base = commit_all(repo, "person starts", T0 - 3600)
    s = Session(root, "3f2a9c1e-aaaa-4bbb-8ccc-000000000001")
    s.user("Add a total() helper to cart.py", T0)
    s.replace(repo / "cart.py", [], AGENT_BLOCK, T0 + 60, start=6)
    s.run("python -m pytest -q", 1, T0 + 120)
    (repo / "cart.py").write_text(
        "TAX_RATE = 0.2\n\n\nclass Cart:\n    pass\n" + "\n".join(AGENT_BLOCK) + "\n"
    )
    return {"repo": repo, "root": root, "session": s, "base": base}


def test_uncommitted_lines_are_matched_in_the_working_tree(world: dict[str, Any]) -> None:
    doc = deja_json("blame", str(world["repo"] / "cart.py"), "--json")
    assert doc["path"] == "cart.py" and doc["rev"] is None
    by_line = {ln["line"]: ln for ln in doc["lines"]}
    assert by_line[1]["session"] is None and by_line[1]["commit"] == world["base"]
    for n in range(6, 13):
        assert by_line[n]["commit"] is None
        assert by_line[n]["session"] == "3f2a9c1e-aaaa-4bbb-8ccc-000000000001", n
        assert 0 < by_line[n]["confidence"] <= 1
    sess = doc["sessions"]["3f2a9c1e-aaaa-4bbb-8ccc-000000000001"]
    assert sess["first_prompt"] == "Add a total() helper to cart.py"
    assert sess["project"] == str(world["repo"])


def test_committed_lines_keep_their_session_and_commit(world: dict[str, Any]) -> None:
    sha = commit_all(world["repo"], "add total", T0 + 600)
    doc = deja_json("blame", str(world["repo"] / "cart.py"), "--json")
    agent = [ln for ln in doc["lines"] if ln["session"]]
    assert [ln["line"] for ln in agent] == list(range(6, 13))
    assert all(ln["commit"] == sha for ln in agent)
    assert agent[0]["written_at"] == iso(T0 + 61)
    # --rev gives the same answer for the commit
    doc2 = deja_json("blame", str(world["repo"] / "cart.py"), "--rev", "HEAD", "--json")
    assert doc2["rev"] == sha
    assert [ln["session"] for ln in doc2["lines"]] == [ln["session"] for ln in doc["lines"]]


def test_trivial_lines_need_a_run_and_person_edits_are_not_the_agents(
    world: dict[str, Any],
) -> None:
    repo = world["repo"]
    lines = (repo / "cart.py").read_text().splitlines()
    # The person rewrites the line after "return 0" and adds a lone "}" elsewhere.
    lines[11] = "    return round(subtotal, 2)  # no tax"
    lines.insert(4, "    }")
    (repo / "cart.py").write_text("\n".join(lines) + "\n")
    commit_all(repo, "person tweaks", T0 + 900)
    doc = deja_json("blame", str(repo / "cart.py"), "--json")
    by_text = {(ln["line"], ln["text"]): ln["session"] for ln in doc["lines"]}
    assert by_text[(5, "    }")] is None  # a lone brace is no evidence
    assert by_text[(13, "    return round(subtotal, 2)  # no tax")] is None
    assert by_text[(10, "    }")] is not None  # inside the agent's run
    assert by_text[(11, "")] is not None


def test_a_session_that_wrote_after_the_commit_gets_nothing(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "agroot"
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(root))
    (repo / "a.py").write_text("\n".join(AGENT_BLOCK) + "\n")
    commit_all(repo, "person wrote it first", T0)
    s = Session(root, "late-session")
    s.write(repo / "a.py", "\n".join(AGENT_BLOCK) + "\n", T0 + 3600)
    # the control: the same block, written by the same session before its commit, is
    # found (an "all None" answer alone is what a blame that matches nothing gives)
    s.write(repo / "b.py", "\n".join(AGENT_BLOCK) + "\n", T0 + 5000)
    (repo / "b.py").write_text("\n".join(AGENT_BLOCK) + "\n")
    commit_all(repo, "the agent's copy", T0 + 7200)
    doc = deja_json("blame", str(repo / "a.py"), "--json")
    assert all(ln["session"] is None for ln in doc["lines"])
    control = deja_json("blame", str(repo / "b.py"), "--json")
    assert {ln["session"] for ln in control["lines"] if ln["text"].strip() not in ("", "}")} == {
        "late-session"
    }


def test_latest_write_before_the_commit_wins(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "agroot"
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(root))
    first, second = Session(root, "first-session"), Session(root, "second-session")
    first.write(repo / "b.py", "\n".join(AGENT_BLOCK) + "\n", T0)
    second.replace(
        repo / "b.py",
        AGENT_BLOCK[5:7],
        ["    subtotal = sum(i.price for i in cart)", AGENT_BLOCK[6]],
        T0 + 100,
        start=6,
    )
    body = AGENT_BLOCK[:5] + ["    subtotal = sum(i.price for i in cart)", AGENT_BLOCK[6]]
    (repo / "b.py").write_text("\n".join(body) + "\n")
    commit_all(repo, "both", T0 + 200)
    doc = deja_json("blame", str(repo / "b.py"), "--json")
    owners = [ln["session"] for ln in doc["lines"]]
    assert owners[:5] == ["first-session"] * 5
    assert owners[5:] == ["second-session"] * 2


def test_renamed_file_keeps_its_session(world: dict[str, Any]) -> None:
    repo = world["repo"]
    commit_all(repo, "add total", T0 + 600)
    git(repo, "mv", "cart.py", "basket.py")
    commit_all(repo, "rename", T0 + 700)
    doc = deja_json("blame", str(repo / "basket.py"), "--json")
    assert [ln["line"] for ln in doc["lines"] if ln["session"]] == list(range(6, 13))


def test_porcelain_and_line_range(world: dict[str, Any]) -> None:
    commit_all(world["repo"], "add total", T0 + 600)
    out = deja("blame", str(world["repo"] / "cart.py"), "--porcelain", "-L", "5,7").stdout.decode()
    headers = [ln for ln in out.splitlines() if ln and not ln.startswith("\t")]
    assert sum(1 for ln in out.splitlines() if ln.startswith("\t")) == 3
    assert "deja-session -" in headers
    assert "deja-session 3f2a9c1e-aaaa-4bbb-8ccc-000000000001" in headers
    assert any(h.startswith("deja-confidence ") for h in headers)
    assert any(h.startswith("author Test Person") for h in headers)
    human = deja("blame", str(world["repo"] / "cart.py"), "-L", "6,+2").stdout.decode().splitlines()
    assert (
        len(human) == 2
        and "3f2a9c1e" in human[0]
        and human[0].rstrip().endswith("def total(cart):")
    )
    assert "\x1b[" not in "".join(human)  # no colour off a terminal


def test_why_shows_prompt_edit_and_commands(world: dict[str, Any]) -> None:
    out = deja("why", f"{world['repo'] / 'cart.py'}:11").stdout.decode()
    assert "session 3f2a9c1e-aaaa-4bbb-8ccc-000000000001" in out
    assert "Add a total() helper to cart.py" in out
    assert "+    subtotal = sum(item.price * item.qty for item in cart)" in out
    assert "$ python -m pytest -q  exit 1" in out
    doc = deja_json("why", f"{world['repo'] / 'cart.py'}:11", "--json")
    assert doc["prompt"]["text"] == "Add a total() helper to cart.py"
    assert doc["commands_after"][0] == {
        "command": "python -m pytest -q",
        "exit_code": 1,
        "at": iso(T0 + 120),
        "status": "DONE",  # RUNNING: sent to the background, no exit code
    }
    person = deja_json("why", f"{world['repo'] / 'cart.py'}:1", "--json")
    assert person["session"] is None


def test_why_reads_the_agents_long_words_back_from_the_transcript(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index keeps an excerpt of a long agent message; why shows all of it while
    the transcript is there, and the excerpt, marked, once it is gone."""
    root = tmp_path / "agroot"
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(root))
    (repo / "cart.py").write_text("TAX_RATE = 0.2\n")
    commit_all(repo, "person starts", T0 - 3600)
    sid = "3f2a9c1e-aaaa-4bbb-8ccc-000000000002"
    s = Session(root, sid)
    s.user("Add a total() helper to cart.py", T0)
    reasons = "I will add total() because " + " ".join(f"reason {k} holds." for k in range(60))
    s._add(
        {
            "source": "MODEL",
            "type": "PLANNER_RESPONSE",
            "created_at": iso(T0 + 30),
            "content": reasons,
        }
    )
    s.replace(repo / "cart.py", [], AGENT_BLOCK, T0 + 60, start=2)
    (repo / "cart.py").write_text("TAX_RATE = 0.2\n" + "\n".join(AGENT_BLOCK) + "\n")
    commit_all(repo, "add total", T0 + 600)

    doc = deja_json("why", f"{repo / 'cart.py'}:2", "--json")
    assert doc["session"] == sid
    assert reasons in [a["text"] for a in doc["assistant"]]
    s.path.unlink()
    doc = deja_json("why", f"{repo / 'cart.py'}:2", "--json")
    head = LAZY_EXCERPT["assistant"][0]  # the characters of its start the index keeps
    excerpt = [a["text"] for a in doc["assistant"] if a["text"].startswith(reasons[:head])]
    assert excerpt and "kept only in the transcript" in excerpt[0] and len(excerpt[0]) < 300


def test_empty_index_still_blames(repo: Path, tmp_path: Path) -> None:
    (repo / "x.py").write_text("print('hi')\n")
    commit_all(repo, "x", T0)
    proc = deja("blame", str(repo / "x.py"), "--json")
    doc = orjson.loads(proc.stdout)
    assert [ln["session"] for ln in doc["lines"]] == [None]
    assert "no sessions are indexed" in proc.stderr.decode()
    # a note of another commit says nothing of these lines; a reviewer's clone is not
    # told to run deja index, but that lines no note covers are their authors'
    # (newcomer 17 #3), transcripts on this machine or not
    (repo / "y.py").write_text("y = 1\n")
    commit_all(repo, "y", T0 + 60)
    git(repo, "notes", "--ref", "deja", "add", "-m", "{}", "HEAD")
    (tmp_path / "home" / ".claude" / "projects").mkdir(parents=True, exist_ok=True)
    proc = deja("blame", str(repo / "x.py"), "--json")
    assert proc.stderr.decode() == (
        "deja: no note covers these lines' commits and no session is indexed: each line"
        " shows as its commit's author's (a commit made where no deja hook ran, or by a"
        " forge's squash or rebase: deja notes carry)\n"
    )
    # a reviewer's clone: the notes say who wrote what, and these lines are people's
    git(repo, "notes", "--ref", "deja", "add", "-m", "{}", "HEAD~1")
    proc = deja("blame", str(repo / "x.py"), "--json")
    assert proc.stderr.decode() == "", "a clone with deja's notes was told it has no sessions"


@pytest.mark.parametrize(
    "args, message",
    [
        (["blame", "{outside}"], "not inside a git repository"),
        (["blame", "{repo}/img.bin"], "binary file"),
        (["blame", "{repo}/sub"], "is a directory"),
        (["blame", "{repo}/x.py", "--rev", "no-such-rev"], "unknown revision"),
        (["blame", "{repo}/new.py", "--rev", "HEAD"], "is not in revision HEAD"),
        (["blame", "{repo}/missing.py"], "no such file"),
        (["why", "{repo}/x.py"], "is not FILE:LINE"),
    ],
)
def test_bad_input_gives_one_line_errors(
    repo: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    (repo / "x.py").write_text("print('hi')\n")
    (repo / "img.bin").write_bytes(b"\x89PNG\0\0\0binary")
    (repo / "sub").mkdir()
    (repo / "sub" / "y.py").write_text("y = 1\n")
    commit_all(repo, "x", T0)
    (repo / "new.py").write_text("n = 1\n")
    outside = tmp_path / "elsewhere.py"
    outside.write_text("z = 1\n")
    argv = [a.format(repo=repo, outside=outside) for a in args]
    proc = deja(*argv, check=False)
    err = proc.stderr.decode()
    assert proc.returncode in (1, 2), err
    assert message in err
    assert "Traceback" not in err


def _run_on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    import os
    import pty
    import subprocess
    import sys

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "deja_blame", *args],
        stdout=slave,
        stderr=slave,
        env={**os.environ, **env},
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


def test_colour_only_on_a_terminal_and_never_with_no_color(world: dict[str, Any]) -> None:
    target = str(world["repo"] / "cart.py")
    # no pager here (less writes terminal modes of its own); the pager: test_cli_everyday
    coloured = _run_on_a_terminal(["blame", target], {"DEJA_PAGER": "cat"})
    assert "\x1b[" in coloured and "3f2a9c1e" in coloured
    plain = _run_on_a_terminal(["blame", target], {"NO_COLOR": "1", "DEJA_PAGER": "cat"})
    assert "\x1b[" not in plain and "3f2a9c1e" in plain


def test_cache_fields_follow_line_attribution() -> None:
    # entries are rebuilt positionally: the field list must be the dataclass order
    from dataclasses import fields

    from deja_blame.attribution import cache
    from deja_blame.attribution.model import LineAttribution

    assert tuple(f.name for f in fields(LineAttribution))[1:] == cache._FIELDS


def test_a_revision_s_file_whose_folder_the_working_tree_lost_is_blamed_as_git_does(
    repo: Path,
) -> None:
    # git blame REV -- PATH answers for a path the working tree no longer has; so does
    # deja (it looked for the file's folder first and said "no such file")
    (repo / "pkg" / "sub").mkdir(parents=True)
    (repo / "pkg" / "sub" / "m.py").write_text("a = 1\nb = 2\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one", env=commit_env(1_767_225_600))
    git(repo, "rm", "-rq", "pkg")
    git(repo, "commit", "-qm", "two", env=commit_env(1_767_225_700))
    doc = deja_json("blame", "--json", "HEAD~1", "--", "pkg/sub/m.py", cwd=repo)
    assert [ln["text"] for ln in doc["lines"]] == ["a = 1", "b = 2"]
    why = deja("why", "--rev", "HEAD~1", "pkg/sub/m.py:2", cwd=repo).stdout.decode()
    assert "b = 2" in why
    # without a revision the file is missing, as git blame says
    proc = deja("blame", "pkg/sub/m.py", cwd=repo, check=False)
    assert proc.returncode != 0 and b"no such file" in proc.stderr


@pytest.mark.parametrize("where", ["missing file", "no repository"])
def test_a_question_that_cannot_be_answered_reads_no_transcript_first(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """A typo is refused at once: the refresh (a first answer's reading of every new
    transcript) is not run for a file that is not there or is in no repository."""
    import deja_blame.index.refresh as refresh
    from deja_blame.attribution import api
    from deja_blame.errors import DejaError
    from deja_blame.index.db import connect

    refreshed: list[object] = []
    monkeypatch.setattr(refresh, "refresh_index", lambda *a, **k: refreshed.append(a))
    monkeypatch.delenv("GIT_DIR", raising=False)
    if where == "missing file":
        file = repo / "nothere.py"
    else:
        outside = tmp_path / "outside"
        outside.mkdir()
        file = outside / "x.py"
        file.write_text("x = 1\n")
    with pytest.raises(DejaError):
        api.answer(connect(tmp_path / "i.db"), file, None, [], refresh=True)
    assert refreshed == []
    # the file there: the refresh runs (the check above is not vacuous)
    (repo / "there.py").write_text("y = 2\n")
    try:
        api.answer(connect(tmp_path / "i.db"), repo / "there.py", None, [], refresh=True)
    except DejaError:
        pass
    assert refreshed
