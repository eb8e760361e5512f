"""The trust gate on a file system that ignores case (REVIEW12 F4): a finder spells a
store's path its own way (``.specstory/history/x.md``); on macOS or Windows that path
opens the ``.SpecStory/History/x.md`` a repository tracks, and git's pathspec, which
is case-sensitive even with ``core.ignorecase``, did not name it: the stranger's
history was read as the user's own. Emulated here on a case-sensitive file system by
the folder renamed in the working tree, as such a file system presents it."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import commit_env, deja, deja_json, git
from test_specstory import T0, _histories

from deja_blame.index.provenance import tracked_among


@pytest.mark.parametrize(
    "tracked", [".SpecStory/history", ".specstory/History", ".SPECSTORY/HISTORY"]
)
def test_a_tracked_store_spelled_in_another_case_is_tracked(repo: Path, tracked: str) -> None:
    (repo / tracked).mkdir(parents=True)
    (repo / tracked / "x.md").write_text("chat\n")
    (repo / "mine.md").write_text("mine\n")
    git(repo, "add", "-A")
    git(repo, "config", "core.ignorecase", "true")
    asked = [repo / ".specstory" / "history" / "x.md", repo / ".specstory" / "history" / "y.md"]
    asked[1].parent.mkdir(parents=True, exist_ok=True)
    asked[1].write_text("mine\n")  # the user's own, untracked: git lists it so
    assert tracked_among(repo, asked) == {asked[0]}
    # both spellings asked (a case-sensitive file system can hold both): both carried
    both = [repo / tracked / "x.md", asked[0]]
    assert tracked_among(repo, both) == set(both)


def test_a_carried_history_reached_in_another_case_is_left_out(tmp_path: Path) -> None:
    up = tmp_path / "upstream"
    up.mkdir()
    git(up, "init", "-q", "-b", "main")
    (up / "app.py").write_text("x = 1\n")
    _histories(up / ".SpecStory" / "History")
    git(up, "add", "-A")
    git(up, "commit", "-qm", "histories", env=commit_env(T0))
    git(tmp_path, "clone", "-q", str(up), "clone")
    clone = tmp_path / "clone"
    git(clone, "config", "core.ignorecase", "true")
    # what a file system that ignores case opens at the finder's spelling
    (clone / ".SpecStory").rename(clone / ".specstory")
    (clone / ".specstory" / "History").rename(clone / ".specstory" / "history")

    said = deja("index", cwd=clone).stderr.decode()
    history = clone / ".specstory" / "history"
    for name in ("2026-12-07_08-10-00Z-import-it.md", "2026-12-07_08-20-00Z-add-a-mean.md"):
        assert f"left out {history / name} (specstory)" in said, said
    # the person's own committed chat is left out too: the line does not call it a stranger's
    assert "written by whoever committed it, you or anyone who pushed to it" in said, said
    assert deja_json("sessions", "--json", cwd=clone)["sessions"] == []


# -- the same name in another Unicode form: macOS opens ``e`` + U+0301 as ``é`` ---------

NFD = "e\u0301"  # what a Mac's older file system and a Linux clone of its names hold
NFC = "\u00e9"  # what a Mac's git makes of the names on its command line


@pytest.mark.parametrize(
    ("tracked", "opened"),
    [
        (f".specstory/history/{NFD}.md", f".specstory/history/{NFC}.md"),
        (f".specstory/history/{NFC}.md", f".specstory/history/{NFD}.md"),
        (f".SpecStory/History/{NFD.upper()}.md", f".specstory/history/{NFC}.md"),
        (f"caf{NFD}/.specstory/history/x.md", f"caf{NFC}/.specstory/history/x.md"),
        (f"CAF{NFC.upper()}/.specstory/history/x.md", f"caf{NFD}/.specstory/history/x.md"),
    ],
)
def test_a_tracked_name_opened_in_another_unicode_form_is_tracked(
    repo: Path, tracked: str, opened: str
) -> None:
    (repo / tracked).parent.mkdir(parents=True)
    (repo / tracked).write_text("chat\n")
    (repo / ".specstory" / "history").mkdir(parents=True, exist_ok=True)
    (repo / ".specstory" / "history" / "mine.md").write_text("mine\n")  # untracked
    git(repo, "add", "--", tracked)
    asked = [repo / opened, repo / ".specstory" / "history" / "mine.md"]
    assert tracked_among(repo, asked) == {asked[0]}


def test_a_carried_history_named_in_nfd_opened_as_nfc_is_left_out(tmp_path: Path) -> None:
    """A stranger's history committed under an NFD name, reached as NFC (emulated by
    renaming it in the working tree, as such a file system presents it): carried."""
    up = tmp_path / "upstream"
    up.mkdir()
    git(up, "init", "-q", "-b", "main")
    (up / "app.py").write_text("x = 1\n")
    _histories(up / ".specstory" / "history")
    history = up / ".specstory" / "history"
    (history / "2026-12-07_08-20-00Z-add-a-mean.md").rename(history / f"{NFD}.md")
    git(up, "add", "-A")
    git(up, "commit", "-qm", "histories", env=commit_env(T0))
    git(tmp_path, "clone", "-q", str(up), "clone")
    clone = tmp_path / "clone"
    history = clone / ".specstory" / "history"
    (history / f"{NFD}.md").rename(history / f"{NFC}.md")

    said = deja("index", cwd=clone).stderr.decode()
    assert f"left out {history / (NFC + '.md')} (specstory)" in said, said
    assert deja_json("sessions", "--json", cwd=clone)["sessions"] == []


# -- a letter outside ASCII that folds to the finder's: ``ſ`` opens as ``s`` ----------


@pytest.mark.parametrize(
    "stored",
    [
        ".aider.chat.hi\u017ftory.md",  # LATIN SMALL LETTER LONG S folds to s
        ".aider.chat.history.md",  # the plain name: the control
        ".\u017fpecstory/history/x.md",
        "caf\u212a/.specstory/history/x.md",  # KELVIN SIGN folds to k
        ".aider.chat.his\u200ctory.md",  # a code point HFS+ ignores
    ],
)
def test_a_tracked_name_a_mac_opens_by_folded_letters_is_tracked(repo: Path, stored: str) -> None:
    """On a Mac's case-insensitive file system the finder's ASCII spelling opens a
    tracked name whose letters fold to it (``.aider.chat.hiſtory.md``; HFS+ also
    ignores some code points); no pathspec of the finder's spelling lists that name
    among the tracked, and git's listing of the folder holds only the stored name, so
    the finder's spelling is not untracked either: carried (review 14 F2). Here the
    folder holds what the Mac's listing holds: the stored name only."""
    (repo / stored).parent.mkdir(parents=True, exist_ok=True)
    (repo / stored).write_text("chat\n")
    git(repo, "add", "--", stored)
    opened = stored.replace("\u017f", "s").replace("\u212a", "k").replace("\u200c", "")
    mine = repo / "mine" / ".aider.chat.history.md"  # the user's own, untracked
    mine.parent.mkdir()
    mine.write_text("mine\n")
    asked = [repo / opened, mine]
    assert tracked_among(repo, asked) == {asked[0]}
