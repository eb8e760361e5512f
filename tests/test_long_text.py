"""Long text is cut, with a marker, in ``deja why``'s text and the HTML report (whose
prompts the report cuts at 1,000 characters already); ``deja why --json`` keeps it whole (newcomer 7: a 9-character line's why printed 6.3 MB, a 1 MiB prompt
and a 5 MB edited line, and the HTML report was 5.3 MB)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from antigravity_writer import TranscriptWriter
from conftest import commit_env, deja, git

T0 = 1_784_278_800  # 2026-07-17T09:00:00Z
PROMPT = "please " + "p" * 300_000  # one line
BIG_LINE = "DATA = '" + "d" * 200_000 + "'"


def _world(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "README.md").write_text("shop\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init", env=commit_env(T0 - 3600))
    root = tmp_path / "root"
    app = repo / "app.py"
    many = "".join(f"V{k} = {k}\n" for k in range(300))
    text = f"X = 1\n{BIG_LINE}\n{many}"
    w = TranscriptWriter(
        root, "5e55a0b1-0000-4000-8000-000000000001", start=T0, workspace=str(repo)
    )
    w.register_workspace(str(repo), kind="ide")
    w.user(f"{PROMPT}\n" + "".join(f"and step {k}\n" for k in range(100)))
    w.write_file(str(app), text)
    app.write_text(text)
    git(repo, "add", "app.py")
    git(repo, "commit", "-qm", "big", env=commit_env(T0 + 600))
    monkeypatch.setenv("DEJA_ANTIGRAVITY_ROOT", str(root))


def test_why_cuts_a_long_prompt_and_a_long_edit_and_json_keeps_them(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _world(repo, tmp_path, monkeypatch)
    deja("index", cwd=repo)
    out = deja("why", "app.py:1", cwd=repo).stdout.decode()
    assert len(out) < 20_000, len(out)
    assert "X = 1" in out and "please ppp" in out
    assert "more characters]" in out  # the prompt's line and the edit's long line
    assert "more lines]" in out  # the prompt's 101 lines and the edit's 302
    doc = orjson.loads(deja("why", "app.py:1", "--json", cwd=repo).stdout)
    assert PROMPT in doc["prompt"]["text"]
    assert BIG_LINE in doc["edit"]["hunks"][0]["added"]


def test_the_html_report_cuts_a_long_line(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _world(repo, tmp_path, monkeypatch)
    deja("index", cwd=repo)
    page = deja("report", "HEAD~1..HEAD", "--prompts", "--format", "html", cwd=repo).stdout
    # the page stays bounded (each of the 302 lines' hover shows 400 characters of its
    # request already): neither the 300 K prompt nor the 200 K line is there whole
    assert len(page) < 250_000, len(page)
    assert b"p" * 5_000 not in page and b"d" * 2_000 not in page
    assert b"more characters]" in page
