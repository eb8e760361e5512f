"""A small world for the notes, hooks and rewrite tests: a repository, transcripts, an index.

``World`` plays an agent session writing files (through the real transcript
writer, into a real transcript root) and a person committing them with fixed
dates, so attribution is exact and repeatable. Tests import it; the few tests
here check the world itself.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from antigravity_writer import TranscriptWriter
from conftest import commit_env, deja, git

T0 = 1784278800  # 2026-07-17T09:00:00Z
S1 = "11111111-aaaa-4000-8000-000000000001"
S2 = "22222222-bbbb-4000-8000-000000000002"
S3 = "33333333-cccc-4000-8000-000000000003"


def body(tag: str, n: int) -> str:
    """n distinct, non-trivial lines (so the matcher has evidence for each)."""
    return "".join(
        f"value_{tag}_{i} = compute_{tag}({i}, scale={i * 7})\n" for i in range(1, n + 1)
    )


class World:
    def __init__(self, tmp: Path, repo: Path, name: str = "agy") -> None:
        self.tmp = tmp
        self.repo = repo
        self.root = tmp / name
        self.root.mkdir(exist_ok=True)
        self.db = tmp / f"{name}-index.db"
        self.writers: dict[str, TranscriptWriter] = {}
        self.clock = T0
        self.env = {"DEJA_DB": str(self.db), "DEJA_ANTIGRAVITY_ROOT": str(self.root)}

    # -- the agent ---------------------------------------------------------------------

    def session(self, sid: str, prompt: str = "Please write the code.") -> TranscriptWriter:
        if sid not in self.writers:
            w = TranscriptWriter(self.root, sid, start=self.clock, workspace=str(self.repo))
            w.user(prompt)
            self.writers[sid] = w
        return self.writers[sid]

    def write(self, sid: str, rel: str, content: str) -> None:
        """Session ``sid`` writes ``content`` to ``rel`` (transcript and disk)."""
        w = self.session(sid)
        self.clock += 5
        w.set_time(self.clock)
        path = self.repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.read_text():
            # an edit of what is on disk: only the lines it changes count as written
            current = path.read_text()
            w.replace(str(path), current, content, current=current)
        else:
            w.files.pop(str(path), None)
            w.write_file(str(path), content, overwrite=path.exists())
        path.write_text(content)

    def person(self, rel: str, content: str) -> None:
        path = self.repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)

    # -- git ---------------------------------------------------------------------------

    def commit(self, message: str, *args: str, cwd: Path | None = None, add: bool = True) -> str:
        cwd = cwd or self.repo
        self.clock += 60
        if add:
            git(cwd, "add", "-A")
        git(cwd, "commit", "-q", "-m", message, *args, env={**commit_env(self.clock), **self.env})
        self.clock += 600  # later writes fall well outside the matcher's clock skew
        return self.head(cwd)

    def git(self, *args: str, cwd: Path | None = None, **kw: Any) -> str:
        self.clock += 60
        env = {**commit_env(self.clock), **self.env, **kw.pop("env", {})}
        out = git(cwd or self.repo, *args, env=env)
        self.clock += 600
        return out

    def head(self, cwd: Path | None = None) -> str:
        return git(cwd or self.repo, "rev-parse", "HEAD").strip()

    # -- deja --------------------------------------------------------------------------

    def deja(
        self, *args: str, cwd: Path | None = None, **kw: Any
    ) -> subprocess.CompletedProcess[bytes]:
        env = {**self.env, **kw.pop("env", {})}
        return deja(*args, cwd=cwd or self.repo, env=env, **kw)

    def hold_back(self, sid: str, later: Path) -> None:
        """Move session ``sid``'s transcript files to ``later``: written on another
        machine, synced after (``sync``)."""
        import shutil

        later.mkdir(parents=True, exist_ok=True)
        for path in list(self.root.rglob("*")):
            if sid in str(path) and path.is_file():
                dest = later / path.relative_to(self.root)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(path), dest)

    def sync(self, later: Path) -> None:
        """The transcripts ``hold_back`` kept aside arrive."""
        import shutil

        shutil.copytree(later, self.root, dirs_exist_ok=True)

    def index(self) -> None:
        self.deja("index", "-q")

    def note(self, rev: str = "HEAD", cwd: Path | None = None) -> dict[str, Any] | None:
        proc = subprocess.run(
            ["git", "notes", "--ref", "refs/notes/deja", "show", rev],
            cwd=cwd or self.repo,
            capture_output=True,
        )
        if proc.returncode != 0:
            return None
        return orjson.loads(proc.stdout)

    def blame(self, rel: str, *args: str, cwd: Path | None = None, **kw: Any) -> dict[str, Any]:
        return orjson.loads(self.deja("blame", rel, "--json", *args, cwd=cwd, **kw).stdout)

    def sessions_by_line(
        self, rel: str, *args: str, cwd: Path | None = None, **kw: Any
    ) -> list[str | None]:
        return [ln["session"] for ln in self.blame(rel, *args, cwd=cwd, **kw)["lines"]]


def file_claims(note: dict[str, Any] | None, rel: str) -> dict[int, str]:
    """line -> session, from a note document."""
    out: dict[int, str] = {}
    if not note:
        return out
    for sid, ranges in note["files"].get(rel, {}).items():
        for r in ranges:
            for line in range(int(r[0]), int(r[1]) + 1):
                out[line] = sid
    return out


def make_world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    """The world of one test; its index and transcript root become the test's defaults."""
    w = World(tmp_path, repo)
    for k, v in w.env.items():
        monkeypatch.setenv(k, v)
    return w


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return make_world(tmp_path, repo, monkeypatch)


def test_world_attributes_agent_lines(world: World) -> None:
    world.person("README.md", "# project\n")
    world.commit("init")
    world.write(S1, "src/app.py", body("a", 5))
    world.commit("agent work")
    world.index()
    lines = world.sessions_by_line("src/app.py")
    assert lines == [S1] * 5
    assert os.environ["DEJA_DB"] == str(world.db)
