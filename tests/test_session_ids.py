"""A session's short id: Aider and SpecStory ids are ``<agent>-<digest>``, so their
first eight characters held two or three digits (``aider-da``: two histories shared
one often); the digest's first characters are shown and found again."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import deja, deja_json
from test_aider_windows import LINUX_BANNER, _chat, _repository

from deja_blame.session_ids import has_prefix, like_patterns, short


def test_a_digest_named_id_is_shown_by_its_digest() -> None:
    assert short("aider-da3f9c1200aa11bb") == "da3f9c12"
    assert short("specstory-0123456789abcdef") == "01234567"
    assert short("6f1c2a44-9b7e-4c1d-8e2f-0a1b2c3d4e5f") == "6f1c2a44"
    assert short("aider-") == "aider-"  # no digest: as it is


def test_the_shown_digest_finds_the_id_again() -> None:
    assert has_prefix("aider-da3f9c1200aa11bb", "da3f9c12")
    assert has_prefix("aider-da3f9c1200aa11bb", "aider-da")
    assert not has_prefix("aider-da3f9c1200aa11bb", "3f9c12")
    assert not has_prefix("6f1c2a44-9b7e-4c1d", "9b7e")  # a UUID's later groups are no digest
    assert like_patterns("a_b%") == ["a\\_b\\%%", "aider-a\\_b\\%%", "specstory-a\\_b\\%%"]


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")  # aider's local times, read by deja's processes


def test_blame_shows_the_digest_and_show_takes_it(repo: Path, utc: None) -> None:
    session = _repository(repo, _chat("src/app.py", LINUX_BANNER))["1:def mean(items):"]
    assert session is not None and session.startswith("aider-")
    digest = session.removeprefix("aider-")[:8]
    out = deja("blame", "src/app.py", cwd=repo).stdout.decode()
    assert out.split("\n")[0].split()[1:3] == [digest, "aider"], out  # commit, session, agent
    shown = deja_json("show", digest, "--json", cwd=repo)
    assert shown["session_id"] == session


def test_every_prefix_taker_finds_the_digest(repo: Path, utc: None, tmp_path: Path) -> None:
    """The PR comment (Markdown report), forget and its undo, and show of a session known
    from the notes alone take and show the digest, as blame does."""
    session = _repository(repo, _chat("src/app.py", LINUX_BANNER))["1:def mean(items):"]
    assert session is not None
    digest = session.removeprefix("aider-")[:8]
    md = deja("report", "HEAD~1..HEAD", "--format", "markdown", cwd=repo).stdout.decode()
    assert f"<code>{digest}</code>" in md or f"`{digest}`" in md, md
    assert session[:8] not in md, md
    deja("annotate", "HEAD", cwd=repo)
    empty = {"DEJA_DB": str(tmp_path / "none.db")}  # a reviewer's clone: notes only
    assert deja_json("show", digest, "--json", cwd=repo, env=empty)["session_id"] == session
    assert deja_json("forget", digest, "--json", cwd=repo)["forgotten"] == session
    assert deja_json("forget", "--undo", digest, "--json", cwd=repo)["undone"] == session
