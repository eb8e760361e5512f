"""deja is not on PyPI: nothing tells a user to install it by that name there.

A bare ``pip install deja-blame`` (or ``'deja-blame[extra]'``) installs whatever
anyone registers under the name, and in the CI recipes runs it with a token that
may push. The recipes install from ``DEJA_PACKAGE`` (a git URL or a file the user
keeps), and their install step refuses the placeholder and a bare name; these
tests run that step with a stand-in ``python`` that records what it was asked.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
DOCS = REPO_ROOT / "docs"
WORKFLOWS = ["deja-report.yml", "deja-notes-carry.yml"]

# pip (or pipx) installing the name from an index: not "name @ git+..." nor a path
BARE_NAME = re.compile(r"""\bpipx?\s+(?:install|inject)\b[^\n`]*?\s['"]?deja-blame(?!\s*@)\b""")


def user_facing_files() -> list[Path]:
    """Every file that tells a user how to install or run deja."""
    files = [REPO_ROOT / "README.md", REPO_ROOT / ".pre-commit-hooks.yaml"]
    for folder, exts in (
        ("docs", {".md", ".yml"}),
        ("hooks", {"", ".md"}),
        ("editors", {".md", ".json", ".js", ".lua", ".el"}),
        ("deja_blame", {".py", ""}),
    ):
        for path in sorted((REPO_ROOT / folder).rglob("*")):
            if "node_modules" in path.parts or "__pycache__" in path.parts:
                continue
            if path.is_file() and path.suffix in exts:
                files.append(path)
    return files


def test_no_file_installs_deja_by_a_bare_index_name() -> None:
    offenders = []
    for path in user_facing_files():
        text = path.read_text(errors="replace")
        for line in text.splitlines():
            # the warnings against it name it too ("... would install whatever ...")
            if BARE_NAME.search(line) and not re.search(r"\bwould\b|whatever", line):
                offenders.append(f"{path.relative_to(REPO_ROOT)}: {line.strip()}")
        for m in re.finditer(r"DEJA_PACKAGE:\s*(.+)", text):
            value = m.group(1).strip().strip("\"'")
            if "git+" not in value and not value.endswith((".whl", ".tar.gz")):
                offenders.append(f"{path.relative_to(REPO_ROOT)}: DEJA_PACKAGE: {value}")
    assert offenders == []


def test_the_pattern_catches_what_it_should() -> None:
    assert BARE_NAME.search("run: pip install deja-blame")
    assert BARE_NAME.search("python -m pip install 'deja-blame[parquet]'")
    assert BARE_NAME.search("pipx install deja-blame==0.1.0")
    assert not BARE_NAME.search('pip install "deja-blame @ git+https://h/o/deja-blame@abc"')
    assert not BARE_NAME.search("pip install . && deja demo")


def install_step(workflow: str) -> str:
    """The ``run: |`` block of the workflow's "Install deja" step."""
    lines = workflow.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.strip() == "- name: Install deja")
    run = lines[start + 1]
    assert run.strip() == "run: |", "the install step checks DEJA_PACKAGE before pip"
    indent = len(run) - len(run.lstrip()) + 2
    block = []
    for ln in lines[start + 2 :]:
        if ln.strip() and len(ln) - len(ln.lstrip()) < indent:
            break
        block.append(ln[indent:])
    return "\n".join(block) + "\n"


def default_package(workflow: str) -> str:
    m = re.search(r"^\s*DEJA_PACKAGE:\s*(.+)$", workflow, re.M)
    assert m
    return m.group(1).strip().strip('"')


def run_install(tmp_path: Path, script: str, package: str) -> tuple[int, str, str]:
    """Run the step with a stand-in python that writes its arguments down."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    called = tmp_path / "called"
    called.unlink(missing_ok=True)
    fake = bin_dir / "python"
    fake.write_text(f'#!/bin/sh\nprintf "%s|" "$@" > {called}\n')
    fake.chmod(0o755)
    proc = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script],
        env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "DEJA_PACKAGE": package},
        capture_output=True,
        text=True,
    )
    return proc.returncode, proc.stdout, called.read_text() if called.exists() else ""


@pytest.mark.parametrize("name", WORKFLOWS)
def test_install_step_refuses_the_placeholder_and_bare_names(tmp_path: Path, name: str) -> None:
    workflow = (DOCS / name).read_text()
    script = install_step(workflow)
    placeholder = default_package(workflow)
    assert "git+" in placeholder and "<" in placeholder
    for package in (placeholder, "", "deja-blame", "deja-blame==0.1.0", "deja-blame[parquet]"):
        rc, out, called = run_install(tmp_path, script, package)
        assert rc == 1, package
        assert called == "", f"pip ran for {package!r}"
        assert "::error::" in out and "DEJA_PACKAGE" in out
    for package in (
        "deja-blame @ git+https://example.org/team/deja-blame@0123456789abcdef",
        "git+https://example.org/team/deja-blame@v0.1.0",
        "vendor/deja_blame-0.1.0-py3-none-any.whl",
    ):
        rc, _out, called = run_install(tmp_path, script, package)
        assert rc == 0, package
        assert called == f"-m|pip|install|{package}|"


def test_ci_doc_and_gitlab_job_say_where_deja_comes_from() -> None:
    ci = (DOCS / "ci.md").read_text()
    assert "not on PyPI" in ci
    forge = (DOCS / "forge-merges.md").read_text()
    job = forge.split("## GitLab CI", 1)[1].split("```yaml", 1)[1].split("```", 1)[0]
    assert 'pip install "$DEJA_PACKAGE"' in job
    assert job.index('*"<"*') < job.index('pip install "$DEJA_PACKAGE"')
    assert "not published on PyPI" in (REPO_ROOT / "README.md").read_text()
