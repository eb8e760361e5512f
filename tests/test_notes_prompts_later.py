"""Opting in to prompts later publishes no request of a note already written without
them: a note re-derived (the history pass), carried over a rewrite or carried from a
forge's merge keeps the requests of the note it replaces, and no more. New commits'
notes after the opt-in have them; ``deja annotate REV --prompts`` adds them by name.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git
from test_notes_carry import Server, forge  # noqa: F401  (the fixture)
from test_notes_world import S1, S3, World, body, make_world

NOTES = "refs/notes/deja"


def requests(world: World, rev: str, cwd: Path | None = None) -> dict[str, str]:
    note = world.note(rev, cwd=cwd)
    assert note is not None, rev
    return {sid: i["first_prompt"] for sid, i in note["sessions"].items() if "first_prompt" in i}


def test_the_forge_s_commits_keep_no_request_after_a_later_opt_in(
    tmp_path: Path,
    forge: tuple[World, Server],  # noqa: F811
) -> None:
    dev, server = forge
    squash = server.squash(1, "Alpha")
    rebase = server.rebase(2)
    ci = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(server.path), str(ci))
    dev.deja("notes", "carry", f"{squash[0]}..{rebase[1]}", "--pr", "2", cwd=ci)
    dev.deja("notes", "push", cwd=ci)
    # the author pulls main and the carried notes (none holds a request), then opts in
    git(dev.repo, "fetch", "-q", "origin")
    git(dev.repo, "merge", "-q", "--ff-only", "origin/main")
    dev.deja("notes", "fetch")
    merged = git(dev.repo, "rev-list", f"{squash[0]}..{rebase[1]}").split()
    assert len(merged) == 3 and all(requests(dev, c) == {} for c in merged)
    git(dev.repo, "config", "deja.notes.prompts", "true")
    tip = git(dev.repo, "rev-parse", NOTES)
    dev.deja("annotate", "--all")  # what the hooks' background history pass runs
    assert git(dev.repo, "rev-parse", NOTES) != tip, "the pass re-derived the notes"
    for c in merged:
        assert requests(dev, c) == {}, c
    # a new commit after the opt-in: its note has the request
    dev.write(S3, "delta.py", body("delta", 3))
    new = dev.commit("delta")
    dev.index()
    dev.deja("annotate")
    assert requests(dev, new) == {S3: "Please write the code."}
    # named by the person: the squash's note gets its sessions' requests
    dev.deja("annotate", squash[1], "--prompts")
    assert set(requests(dev, squash[1])) >= {S1}
    assert all(requests(dev, c) == {} for c in merged if c != squash[1])


@pytest.fixture
def hooked(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    w = make_world(tmp_path, repo, monkeypatch)
    monkeypatch.setenv("DEJA_HOOK_SYNC", "1")
    w.person("README.md", "# project\n")
    w.commit("init")
    w.deja("hooks", "install")
    git(repo, "config", "deja.hook.timeout", "30")
    w.index()
    return w


def test_a_rewrite_after_the_opt_in_keeps_the_old_note_s_requests(hooked: World) -> None:
    hooked.write(S1, "app.py", body("a", 4))
    old = hooked.commit("agent work")
    assert requests(hooked, old) == {}
    git(hooked.repo, "config", "deja.notes.prompts", "true")
    hooked.person("app.py", "# header\n" + (hooked.repo / "app.py").read_text())
    git(hooked.repo, "add", "-A")
    hooked.git("commit", "-q", "--amend", "-m", "agent work, with a header")
    amended = hooked.head()
    assert amended != old and hooked.note(amended) is not None
    assert requests(hooked, amended) == {}
    # a commit made after the opt-in publishes its request, and keeps it when amended
    hooked.write(S3, "b.py", body("b", 3))
    made = hooked.commit("more agent work")
    assert requests(hooked, made) == {S3: "Please write the code."}
    hooked.git("commit", "-q", "--amend", "-m", "more agent work, reworded")
    assert requests(hooked, hooked.head()) == {S3: "Please write the code."}
