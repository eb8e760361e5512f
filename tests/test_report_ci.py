"""The CI recipe: docs/deja-report.yml's own shell steps, run against a real origin.

A fresh clone has no notes; the workflow's fetch step brings them (from origin,
or from a fork), and its report step writes the Markdown comment from notes
alone, with no transcripts and an empty index.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_report import SID_A, Scenario, add_notes_from_index, build_feature_scenario, g

from deja_blame.report.render_markdown import MARKER

DOCS = Path(__file__).resolve().parent.parent / "docs"


def step_script(workflow: str, name: str) -> tuple[str, dict[str, str]]:
    """The ``run: |`` block (and ``env:``) of the step called ``name``."""
    lines = workflow.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.strip() == f"- name: {name}")
    indent = len(lines[start]) - len(lines[start].lstrip())
    env: dict[str, str] = {}
    script: list[str] = []
    i = start + 1
    while i < len(lines) and (
        not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent
    ):
        line = lines[i]
        if line.strip() == "env:":
            j = i + 1
            while ":" in lines[j] and not lines[j].strip().startswith("run:"):
                k, _, v = lines[j].strip().partition(":")
                env[k] = v.split("#")[0].strip()
                j += 1
            i = j
            continue
        if line.strip() == "run: |":
            run_indent = len(line) - len(line.lstrip())
            i += 1
            while i < len(lines) and (
                not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > run_indent
            ):
                script.append(lines[i].strip("\n")[run_indent + 2 :])
                i += 1
            break
        i += 1
    return "\n".join(script) + "\n", env


def github(text: str, values: dict[str, str]) -> str:
    return re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: values[m.group(1)], text)


def test_ci_doc_embeds_the_workflow_file() -> None:
    workflow = (DOCS / "deja-report.yml").read_text()
    ci = (DOCS / "ci.md").read_text()
    assert f"```yaml\n{workflow}```" in ci
    assert MARKER in workflow
    assert "refs/notes/deja" in workflow
    assert 'deja report "$BASE..HEAD" --prompts --format markdown' in workflow
    assert "origin/main..HEAD --format markdown" in ci


@pytest.mark.parametrize("where", ["origin", "fork"])
def test_workflow_steps_fetch_notes_and_write_the_comment(tmp_path: Path, where: str) -> None:
    sc: Scenario = build_feature_scenario(tmp_path / "dev")
    add_notes_from_index(sc, sc.shas)
    fork = tmp_path / "fork.git"
    subprocess.run(["git", "init", "-q", "--bare", str(fork)], check=True, env=sc.env)
    g(sc, "push", "-q", "origin", "feature")
    g(sc, "push", "-q", str(fork) if where == "fork" else "origin", "refs/notes/deja")

    ci = tmp_path / "ci"
    subprocess.run(
        ["git", "clone", "-q", str(tmp_path / "dev" / "origin.git"), str(ci)],
        check=True,
        env=sc.env,
    )
    subprocess.run(["git", "checkout", "-q", sc.shas[-1]], cwd=ci, check=True, env=sc.env)
    assert not (ci / ".git" / "refs" / "notes").exists()

    workflow = (DOCS / "deja-report.yml").read_text()
    values = {
        "github.repository": "shop/shop",
        "github.event.pull_request.head.repo.full_name": "dev/shop"
        if where == "fork"
        else "shop/shop",
        "github.event.pull_request.head.repo.clone_url": str(fork),
        "github.base_ref": "main",
    }
    env = {
        **sc.env,
        "DEJA_DB": str(tmp_path / "ci-index.db"),  # CI: an empty index, no transcripts
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }
    for name in ("Fetch the deja notes", "Write the report"):
        script, step_env = step_script(workflow, name)
        proc = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", github(script, values)],
            cwd=ci,
            env={**env, **{k: github(v, values) for k, v in step_env.items()}},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, f"{name}: {proc.stdout}\n{proc.stderr}"

    comment = (ci / "deja-report.md").read_text()
    assert comment.startswith(MARKER)
    assert "### deja report · <code>origin/main..HEAD</code>" in comment
    assert "**4 commits**, **15** lines added: **11** (73.3%) by agent sessions" in comment
    assert f"<code>{SID_A[:8]}</code>" in comment
    assert "Known from commit notes only" in comment
    assert (tmp_path / "summary.md").read_text() == comment
