"""The README's claims, executable: its quick start is what CI runs, its links stay in
the repository, and every command line it and each ``--help`` shows runs (exit 0)
against a real repository with transcripts where the agents keep them."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import click
import orjson
import pytest
from conftest import REPO_ROOT, git
from newcomer_world import AGY_SID, World, build_world

from deja_blame.cli import cli

README = REPO_ROOT / "README.md"


def sh_blocks(text: str) -> list[list[str]]:
    return [b.splitlines() for b in re.findall(r"```sh\n(.*?)```", text, re.S)]


def quick_start() -> list[str]:
    """The quick start's two command lines (the demo, the tests)."""
    section = README.read_text().split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [b[0] for b in sh_blocks(section) if len(b) == 1 and b[0].startswith("python3 -m venv")]


def test_ci_runs_exactly_the_readme_s_test_command() -> None:
    demo, tests = quick_start()
    assert demo.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install .")
    assert demo.endswith("&& deja demo")
    assert tests.endswith("&& python -m pytest") and "pip install -e '.[test]'" in tests
    # no sudo (a root container has none), no bare `python` before the venv exists
    for line in (demo, tests):
        assert "sudo" not in line and line.startswith("python3 -m venv .venv && ")
    ci = (REPO_ROOT / ".ci" / "run").read_text().splitlines()
    commands = [ln for ln in ci if ln.strip() and not ln.lstrip().startswith("#")]
    assert commands[-1] == tests, "the last line of .ci/run must be the README's test command"


def test_the_test_packages_come_before_the_test_command() -> None:
    """Followed top to bottom, the README installs what the tests need before it runs
    them, and names every program ``.ci/run`` installs for them (npm only packages
    the extension, and python3-venv is the quick start's own first line)."""
    section = README.read_text().split("## Quick start", 1)[1].split("\n## ", 1)[0]
    lines = [ln for b in sh_blocks(section) for ln in b]
    packages = next(ln for ln in lines if "chromium" in ln)
    tests = quick_start()[1]
    assert lines.index(packages) < lines.index(tests)
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    needed = set(re.findall(r'missing="\$missing ([\w.-]+)"', ci)) - {"npm", "python3-venv"}
    needed |= {w for ln in re.findall(r'lean="([\w. -]+)"', ci) for w in ln.split()}
    named = {w for part in packages.split("install -y")[1:] for w in part.split("&&")[0].split()}
    assert {"chromium", "neovim", "emacs-nox"} <= needed <= named, needed - named


def test_every_link_stays_in_the_repository() -> None:
    for doc in [README, *sorted((REPO_ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text()):
            assert "://" not in target, (doc.name, target)
            path = (doc.parent / target.split("#")[0]).resolve()
            assert path.is_relative_to(REPO_ROOT) and path.exists(), (doc.name, target)
    assert "../shared" not in README.read_text()
    assert (REPO_ROOT / "docs" / "contract.md").is_file()


@pytest.fixture
def world(tmp_path: Path) -> World:
    return build_world(tmp_path)


def _check(world: World, line: str, cwd: Path | None = None) -> None:
    if shutil.which("jq") is None:
        line = line.split(" | jq ")[0]  # deja's part still runs; its JSON is checked below
    proc = world.run_line(line, cwd)
    assert proc.returncode == 0, f"{line}\nexit {proc.returncode}\n{proc.stderr[-3000:]}"
    if line.split("#")[0].rstrip().endswith("--json"):
        orjson.loads(proc.stdout)  # one JSON document


def readme_lines() -> list[str]:
    section = README.read_text().split("## Using it", 1)[1]
    (block, *_) = sh_blocks(section)
    return [ln for ln in block if ln.strip() and not ln.lstrip().startswith("#")]


def test_every_command_line_in_the_readme_runs(world: World) -> None:
    lines = readme_lines()
    assert len(lines) >= 25 and any("-L 40,60 -L 90,+5 v1.2 -- src/app.py" in ln for ln in lines)
    older = git(world.repo, "rev-parse", "--short", "HEAD~1").strip()
    transcript = next((world.home / ".claude" / "projects").glob("*/*.jsonl"))
    # the README's placeholders, and the one no session wrote on purpose
    filled = {"abc123": older, "path/to/transcript.jsonl": str(transcript)}
    for line in lines:
        for placeholder, value in filled.items():
            line = line.replace(placeholder, value)
        _check(world, line)
    # what they did: the index holds all three agents' sessions, the hook is there
    listed = orjson.loads(world.run_line("deja sessions --json").stdout)["sessions"]
    assert {s["source"] for s in listed} == {"antigravity", "claude-code", "codex"}
    assert (world.repo / "pr.html").is_file()
    assert (world.repo / ".git" / "hooks" / "post-commit").is_file()


def help_examples() -> list[str]:
    """Every example line of every command's --help, in the order deja lists them."""
    found: list[str] = []

    def walk(cmd: click.Command, path: list[str]) -> None:
        ctx = click.Context(cmd, info_name=" ".join(["deja", *path]))
        text = cmd.get_help(ctx)
        for block in re.split(r"\n\s*\n", text):
            head, *rest = block.strip().splitlines() or [""]
            if head.rstrip(":") in ("Example", "Examples", "Start here"):
                found.extend(ln.strip() for ln in rest if "deja " in ln)
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                walk(cmd.commands[name], [*path, name])

    walk(cli, [])
    return found


def test_every_help_example_runs(world: World) -> None:
    examples = help_examples()
    assert len(examples) >= 40
    assert "deja blame v1.2 src/app.py -L 40,60 -L 90,+5" in examples
    # the backup root one example names
    shutil.copytree(world.home / ".gemini" / "antigravity", world.home / "backup" / "antigravity")
    # the person's own fork one example pushes to
    git(world.tmp, "init", "-q", "--bare", str(world.tmp / "myfork.git"))
    git(world.repo, "remote", "add", "myfork", str(world.tmp / "myfork.git"))
    # a repository in use: transcripts indexed, its agents' commits annotated
    _check(world, "deja index && deja annotate v1.0..HEAD")
    for line in examples:
        _check(world, line)
    assert AGY_SID[:8] in world.run_line("deja sessions").stdout


def test_the_readme_says_git_ai_notes_are_read_not_written() -> None:
    """newcomer 18 #10: a heading "Stats, Agent Trace and git-ai" read as a git-ai export."""
    from deja_blame.cli import cli

    formats = next(p for p in cli.commands["export"].params if p.name == "fmt").type.choices  # type: ignore[attr-defined]
    text = README.read_text()
    headings = [ln for ln in text.splitlines() if ln.startswith("## ") and "git-ai" in ln]
    if "git-ai" not in formats:
        assert headings and all("reading git-ai" in h for h in headings)
        assert "it does not write them" in text
