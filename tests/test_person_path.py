"""A person's path from nothing, end to end, as the README tells it: a fresh HOME, a
bare "forge" repository, a clone, ``deja hooks install``, a Claude Code session
(a transcript in Claude Code's own layout) writing files, commits, ``git push`` and
``deja notes push``; on the forge, a squash merge and a rebase merge made with plain
git (no hooks run there); the CI step the README names (``deja notes carry
BEFORE..AFTER --push``); and a reviewer's fresh clone, another HOME with no
transcripts, that fetches ``refs/notes/deja`` with plain git and runs ``deja blame``,
``why``, ``report`` and ``doctor``: it sees the session behind every line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import orjson
import pytest
from conftest import commit_env, deja, git
from test_notes_carry import Server

T0 = 1_795_852_800  # 2026-11-28T08:00:00Z
SA = "5e55a000-0000-4000-8000-00000000000a"
SB = "5e55b000-0000-4000-8000-00000000000b"


def _iso(epoch: int) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(epoch))


def _lines(tag: str, n: int) -> str:
    return "".join(f"{tag}_{i} = compute_{tag}({i}, scale={i * 7})\n" for i in range(1, n + 1))


def _claude_writes(home: Path, cwd: Path, sid: str, at: int, rel: str, content: str) -> None:
    """Session ``sid`` (Claude Code, working in ``cwd``) asks, then writes ``rel`` whole:
    its records appended to its transcript where Claude Code keeps it; the file on disk."""
    project = home / ".claude" / "projects" / ("-" + str(cwd).strip("/").replace("/", "-"))
    project.mkdir(parents=True, exist_ok=True)
    path = str(cwd / rel)
    tool = f"toolu_{at}"
    records = [
        {"type": "user", "sessionId": sid, "cwd": str(cwd), "timestamp": _iso(at),
         "message": {"role": "user", "content": f"Write {rel}."}},
        {"type": "assistant", "sessionId": sid, "cwd": str(cwd), "timestamp": _iso(at + 5),
         "message": {"role": "assistant", "model": "claude-sonnet-4-5", "content": [
             {"type": "tool_use", "id": tool, "name": "Write",
              "input": {"file_path": path, "content": content}}]}},
        {"type": "user", "sessionId": sid, "cwd": str(cwd), "timestamp": _iso(at + 6),
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": tool, "content": f"File created: {path}"}]},
         "toolUseResult": {"type": "create", "filePath": path, "content": content}},
    ]  # fmt: skip
    with (project / f"{sid}.jsonl").open("a") as f:
        f.write("".join(json.dumps(r) + "\n" for r in records))
    (cwd / rel).parent.mkdir(parents=True, exist_ok=True)
    (cwd / rel).write_text(content)


def _commit(repo: Path, message: str, at: int) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message, env=commit_env(at))
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def fresh_home(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's HOME with nothing in it: no index named, no transcript root named,
    the hooks in the background as installed."""
    for var in ("DEJA_DB", "DEJA_ANTIGRAVITY_ROOT", "DEJA_HOOK_SYNC"):
        monkeypatch.delenv(var, raising=False)
    return Path(os.environ["HOME"])


def test_from_a_fresh_home_to_a_reviewer_s_clone_through_forge_merges(
    tmp_path: Path, fresh_home: Path
) -> None:
    forge = tmp_path / "forge.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(forge))
    dev = tmp_path / "dev"
    git(tmp_path, "clone", "-q", str(forge), str(dev))
    git(dev, "config", "commit.gpgsign", "false")
    deja("hooks", "install", cwd=dev)
    (dev / "README.md").write_text("# shop\n")
    base = _commit(dev, "init", T0)
    git(dev, "push", "-q", "origin", "main")

    # pull request 1: one session's file, one commit (to be squashed)
    git(dev, "checkout", "-q", "-b", "cart")
    _claude_writes(fresh_home, dev, SA, T0 + 600, "src/cart.py", _lines("cart", 6))
    cart = _commit(dev, "cart", T0 + 1200)
    # pull request 2: another session, two commits (to be rebased)
    git(dev, "checkout", "-q", "-b", "tax", "main")
    _claude_writes(fresh_home, dev, SB, T0 + 1800, "src/tax.py", _lines("tax", 5))
    _commit(dev, "tax", T0 + 2400)
    _claude_writes(fresh_home, dev, SB, T0 + 3000, "src/rates.py", _lines("rate", 4))
    _commit(dev, "rates", T0 + 3600)
    for n, branch in ((1, "cart"), (2, "tax")):
        git(dev, "push", "-q", "origin", branch, f"{branch}:refs/pull/{n}/head")
    pushed = deja("notes", "push", cwd=dev)  # waits for the hooks' jobs, as documented
    assert pushed.returncode == 0
    assert (fresh_home / ".local" / "share" / "deja" / "index.db").exists()  # the hook's
    noted = git(forge, "notes", "--ref=deja", "list").split()
    assert cart in noted and len(noted) == 2 * 3, noted  # (note, commit) pairs

    # the forge merges both with plain git: new commits, no hooks, no notes
    server = Server(forge, T0 + 10_000)
    squash = server.squash(1, "Cart")
    rebase = server.rebase(2)
    ci = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(forge), str(ci))
    how = []
    for before_after in (squash, rebase):  # the CI step, once per push to main
        carried = deja("notes", "carry", "..".join(before_after), "--push", "--json", cwd=ci)
        how += [(c["how"], c["branch"]) for c in orjson.loads(carried.stdout)["commits"]]
    # the squash by its subject's (#1); the rebase, which names no pull request, by
    # its commits' patches in the forge's branch (a plain git remote: no gh to ask)
    assert how == [("squash", None), ("rebase", "origin/tax"), ("rebase", "origin/tax")]

    # a reviewer: another HOME, no transcripts, no index; the notes by plain git
    review = tmp_path / "review"
    rhome = tmp_path / "reviewer-home"
    rhome.mkdir()
    env = {
        "HOME": str(rhome),
        "XDG_DATA_HOME": str(rhome / ".local" / "share"),
        "XDG_STATE_HOME": str(rhome / ".local" / "state"),
        "XDG_CONFIG_HOME": str(rhome / ".config"),
    }
    git(tmp_path, "clone", "-q", str(forge), str(review))
    git(review, "fetch", "-q", "origin", "refs/notes/deja:refs/notes/deja")
    expected = {"src/cart.py": [SA] * 6, "src/tax.py": [SB] * 5, "src/rates.py": [SB] * 4}
    for rel, sessions in expected.items():
        doc = orjson.loads(deja("blame", rel, "--json", cwd=review, env=env).stdout)
        assert [ln["session"] for ln in doc["lines"]] == sessions, rel
        assert {ln["via"] for ln in doc["lines"]} == {"note"}
        assert doc["sessions"][sessions[0]]["project"] == "."
    text = deja("blame", "src/cart.py", cwd=review, env=env).stdout.decode()
    assert text.count(f"{SA[:8]} claude") == 6, text
    why = deja("why", "src/tax.py:2", cwd=review, env=env).stdout.decode()
    assert SB in why and str(dev) not in why and str(fresh_home) not in why, why
    report = orjson.loads(
        deja("report", f"{base}..HEAD", "--format", "json", cwd=review, env=env).stdout
    )
    assert report["totals"]["by_sessions"] == 15 and report["totals"]["by_people"] == 0
    assert {s["session_id"] for s in report["sessions"]} == {SA, SB}
    doctor = deja("doctor", cwd=review, env=env, check=False)
    assert doctor.returncode == 0 and "reviewer's clone" in doctor.stdout.decode()
