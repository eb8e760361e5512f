"""A session's writes outside the repository are not the repository's files.

A session in this clone wrote ``/etc/outside.py`` and ``REPO/../dotdot.py``; a
person later commits files of those names, or the same text in a file of another
name. A match by path suffix stands for another clone, and neither the file
system's top, nor a folder holding this repository, nor a folder inside it that
is no checkout is one; nor is such a write a file git lacks that a person moved
(the moves rule): blame, stats and the note give those lines to the person. A worktree made inside the main checkout
(``.claude/worktrees``) still finds the sessions that worked in the main checkout.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from conftest import commit_env, deja, deja_json, git
from test_sessions_from_anywhere import SID, T0, claude_code

from deja_blame.attribution.facts.clone_paths import (
    in_no_checkout,
    in_this_checkout,
    repository_path,
    stands_for,
)

CLAUDE = SID["claude-code"]
APP = "def total(prices):\n    return sum(price_of(p) for p in prices)\n"
OUTSIDE = "OUTSIDE_SETTING = compute_outside_setting(3)\n"
DOTDOT = (
    "def dotdot_setting(rate):\n"
    "    scaled = compute_dotdot_setting(rate) * 2\n"
    "    return round(scaled, 3)\n"
)


def _commit(repo: Path, files: dict[str, str], at: int, who: str = "Pat") -> None:
    for rel, content in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(content)
    git(repo, "add", "-A")
    env = {**commit_env(at), "GIT_AUTHOR_NAME": who, "GIT_COMMITTER_NAME": who}
    git(repo, "commit", "-qm", f"{who}'s files", env=env)


def _session_lines(repo: Path, rel: str) -> int:
    doc = deja_json("blame", "--json", "--", rel, cwd=repo, env={"DEJA_ANTIGRAVITY_ROOT": ""})
    return sum(1 for ln in doc["lines"] if ln["session"] == CLAUDE)


def test_writes_outside_the_repository_stay_the_person_s(tmp_path: Path, repo: Path) -> None:
    root = str(repo)
    writes = {"app.py": APP, "/etc/outside.py": OUTSIDE, f"{root}/../dotdot.py": DOTDOT}
    claude_code(tmp_path / "home", root, writes)
    _commit(repo, {"app.py": APP}, T0 + 600)
    # Eve's files a day later: the names, or the texts in a file of another name
    eve = {"etc/outside.py": OUTSIDE, "dotdot.py": DOTDOT, "pricing.py": DOTDOT}
    _commit(repo, eve, T0 + 86_400, who="Eve")
    assert _session_lines(repo, "app.py") == 2
    for rel in eve:
        assert _session_lines(repo, rel) == 0, rel
    stats = deja_json("stats", "--json", cwd=repo, env={"DEJA_ANTIGRAVITY_ROOT": ""})
    assert stats["attributed_lines"] == 2
    deja("annotate", "--all", cwd=repo, env={"DEJA_ANTIGRAVITY_ROOT": ""})
    note = orjson.loads(git(repo, "notes", "--ref", "deja", "show", "HEAD~1"))
    assert list(note["files"]) == ["app.py"]
    noted = git(repo, "notes", "--ref", "deja", "list")
    assert git(repo, "rev-parse", "HEAD").strip() not in noted  # Eve's commit: no note


def test_a_worktree_inside_the_main_checkout_finds_its_sessions(tmp_path: Path, repo: Path) -> None:
    claude_code(tmp_path / "home", str(repo), {"app.py": APP})
    _commit(repo, {"app.py": APP}, T0 + 600)
    inner = repo / ".claude" / "worktrees" / "w"
    git(repo, "worktree", "add", "-q", "--detach", str(inner))
    assert _session_lines(inner, "app.py") == 2


def test_which_written_paths_stand_for_a_repository_file(tmp_path: Path) -> None:
    root = f"{tmp_path}/work/shop"
    assert stands_for(f"{root}/src/app.py", "src/app.py", root) is True
    assert stands_for(f"{root}/./src/app.py", "src/app.py", root) is True
    assert stands_for(f"{root}/lib/../src/app.py", "src/app.py", root) is True
    assert stands_for("/home/alice/shop/src/app.py", "src/app.py", root) is False
    assert stands_for("C:/Users/bob/shop/src/app.py", "src/app.py", root) is False
    assert stands_for("/home/alice/shop/src/app.py", "src/other.py", root) is None
    # the file system's top and a drive are no clone
    assert stands_for("/etc/outside.py", "etc/outside.py", root) is None
    assert stands_for("C:/outside.py", "outside.py", root) is None
    # a folder holding this repository: only where it is a checkout itself
    assert stands_for(f"{root}/../dotdot.py", "dotdot.py", root) is None
    assert stands_for(f"{tmp_path}/work/notes.py", "notes.py", root) is None
    (tmp_path / "work" / ".git").mkdir(parents=True)
    assert stands_for(f"{tmp_path}/work/notes.py", "notes.py", root) is False
    # a folder inside this checkout: a checkout of its own, or one gone since
    (tmp_path / "work" / "shop" / "build").mkdir(parents=True)
    assert stands_for(f"{root}/build/app.py", "app.py", root) is None
    assert stands_for(f"{root}/.claude/worktrees/gone/app.py", "app.py", root) is False
    (tmp_path / "work" / "shop" / "wt" / ".git").mkdir(parents=True)
    assert stands_for(f"{root}/wt/app.py", "app.py", root) is False


def test_the_repository_path_of_a_written_path(tmp_path: Path) -> None:
    root = f"{tmp_path}/shop"
    files = {"src/app.py", "app.py", "dotdot.py"}
    assert repository_path(f"{root}/src/app.py", root, files) == "src/app.py"
    assert repository_path(f"{root}/new/file.py", root, files) == "new/file.py"  # under root
    assert repository_path("/home/alice/shop/src/app.py", root, files) == "src/app.py"
    assert repository_path(f"{root}/../dotdot.py", root, files) is None
    assert repository_path("/app.py", root, files) is None
    assert repository_path("/home/alice/elsewhere.py", root, files) is None


def test_a_worktree_inside_the_checkout_stands_for_its_file_where_asked(
    tmp_path: Path, repo: Path
) -> None:
    # the moves rule's names: a file a session wrote in a worktree made inside the
    # main checkout is that worktree's file, not a file under root git never had
    _commit(repo, {"src/app.py": "x = 1\n", ".gitignore": "libs/\n"}, T0)
    root, files = str(repo), {"src/app.py"}
    inner = f"{root}/.worktrees/feature/src/app.py"
    assert repository_path(inner, root, files) == ".worktrees/feature/src/app.py"
    assert repository_path(inner, root, files, worktrees=True) == "src/app.py"  # gone since
    (repo / ".worktrees" / "feature" / "src").mkdir(parents=True)  # here, no checkout
    assert repository_path(inner, root, files, worktrees=True) == ".worktrees/feature/src/app.py"
    (repo / ".worktrees" / "feature" / "src").rmdir()
    (repo / ".worktrees" / "feature").rmdir()
    git(repo, "worktree", "add", "-q", "--detach", ".worktrees/feature")
    assert repository_path(inner, root, files, worktrees=True) == "src/app.py"
    # a file of the checkout itself, or one the worktree has that git never had: as before
    assert repository_path(f"{root}/src/app.py", root, files, worktrees=True) == "src/app.py"
    new = f"{root}/.worktrees/feature/src/new.py"
    assert repository_path(new, root, files, worktrees=True) == ".worktrees/feature/src/new.py"


def test_another_repository_inside_the_checkout_is_no_worktree_of_it(
    tmp_path: Path, repo: Path
) -> None:
    # an ignored nested clone of another repository, a submodule's checkout, a
    # .git naming some other git folder: their src/app.py is not this one's
    _commit(repo, {"src/app.py": "x = 1\n", ".gitignore": "libs/\n"}, T0)
    root, files = str(repo), {"src/app.py"}
    sub = repo / "libs" / "sub"
    sub.mkdir(parents=True)
    git(sub, "init", "-q", "-b", "main")
    _commit(sub, {"src/app.py": "y = 2\n"}, T0)
    written = f"{root}/libs/sub/src/app.py"
    assert repository_path(written, root, files, worktrees=True) == "libs/sub/src/app.py"
    for name, gitdir in (("mod", ".git/modules/mod"), ("odd", "../../elsewhere")):
        (repo / "libs" / name / "src").mkdir(parents=True)
        (repo / "libs" / name / ".git").write_text(f"gitdir: {root}/{gitdir}\n")
        got = repository_path(f"{root}/libs/{name}/src/app.py", root, files, worktrees=True)
        assert got == f"libs/{name}/src/app.py"
    (repo / "libs" / "link").mkdir()
    (repo / "libs" / "link" / ".git").symlink_to(repo / ".git")  # never followed
    got = repository_path(f"{root}/libs/link/src/app.py", root, files, worktrees=True)
    assert got == "libs/link/src/app.py"
    # a clone of this repository made inside it (as a worktree would be) is one
    git(repo / "libs", "clone", "-q", root, "again")
    got = repository_path(f"{root}/libs/again/src/app.py", root, files, worktrees=True)
    assert got == "src/app.py"


def test_a_session_of_this_clone_writing_outside_it_is_no_other_clone(
    tmp_path: Path, repo: Path
) -> None:
    """``/etc/settings.py`` implies a clone at ``/etc`` (it could be one, on another
    machine), but the session also wrote this clone's own files: it worked here, so
    its ``/etc`` is not a clone of this repository, and Eve's root-level
    ``settings.py`` of the same text is hers. A session of another machine that
    wrote the same path, and one on Windows, still match by suffix."""
    root = str(repo)
    claude_code(tmp_path / "home", root, {"app.py": APP, "/etc/settings.py": DOTDOT})
    _commit(repo, {"app.py": APP}, T0 + 600)
    _commit(repo, {"settings.py": DOTDOT, "pricing.py": DOTDOT}, T0 + 86_400, who="Eve")
    assert _session_lines(repo, "app.py") == 2
    assert _session_lines(repo, "settings.py") == 0
    assert _session_lines(repo, "pricing.py") == 0  # nor a copy of it elsewhere
    stats = deja_json("stats", "--json", cwd=repo, env={"DEJA_ANTIGRAVITY_ROOT": ""})
    assert stats["attributed_lines"] == 2
    deja("annotate", "--all", cwd=repo, env={"DEJA_ANTIGRAVITY_ROOT": ""})
    noted = git(repo, "notes", "--ref", "deja", "list")
    assert git(repo, "rev-parse", "HEAD").strip() not in noted  # Eve's commit: no note
    assert git(repo, "rev-parse", "HEAD~1").strip() in noted


def test_another_machine_s_session_writing_the_same_folder_still_matches(
    tmp_path: Path, repo: Path
) -> None:
    claude_code(tmp_path / "home", "/etc", {"settings.py": DOTDOT, "app.py": APP})
    _commit(repo, {"app.py": APP, "settings.py": DOTDOT}, T0 + 600)
    assert _session_lines(repo, "settings.py") == 3


def test_a_windows_session_still_matches_by_suffix(tmp_path: Path, repo: Path) -> None:
    claude_code(tmp_path / "home", "C:\\Users\\x\\proj", {"a.py": DOTDOT, "app.py": APP})
    _commit(repo, {"a.py": DOTDOT, "app.py": APP}, T0 + 600)
    assert _session_lines(repo, "a.py") == 3


def test_a_session_of_the_main_checkout_keeps_its_worktree_s_writes(
    tmp_path: Path, repo: Path
) -> None:
    """A write inside the checkout, in a worktree made there and gone since, may be
    this repository's file merged back: only writes outside the root are dropped."""
    root = str(repo)
    wt = f"{root}/.claude/worktrees/gone"
    claude_code(tmp_path / "home", root, {"app.py": APP, f"{wt}/settings.py": DOTDOT})
    _commit(repo, {"app.py": APP, "settings.py": DOTDOT}, T0 + 600)
    assert _session_lines(repo, "settings.py") == 3


def test_which_written_paths_are_files_of_this_checkout(tmp_path: Path) -> None:
    root = f"{tmp_path}/shop"
    (tmp_path / "shop" / "src").mkdir(parents=True)
    assert in_this_checkout(f"{root}/app.py", root)
    assert in_this_checkout(f"{root}/src/app.py", root)
    assert in_this_checkout(f"{root}/lib/../src/app.py", root)
    assert not in_this_checkout(f"{root}/gone/app.py", root)  # maybe a worktree, removed
    (tmp_path / "shop" / "wt" / ".git").mkdir(parents=True)
    assert not in_this_checkout(f"{root}/wt/app.py", root)
    assert not in_this_checkout(f"{root}/../app.py", root)
    assert not in_this_checkout("/etc/app.py", root)


def test_a_session_s_writes_in_a_sibling_worktree_still_match(tmp_path: Path, repo: Path) -> None:
    """The session worked in the main checkout and in a worktree beside it (``git
    worktree add ../wt``): that folder is outside the root but a checkout of this
    repository, so what the session wrote there is this repository's file once the
    branch is merged (the reviewer of session 8 saw 0 of its 3 lines kept)."""
    _commit(repo, {"README": "x\n"}, T0 - 600)
    wt = tmp_path / "wt-feature"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(wt))
    claude_code(tmp_path / "home", str(repo), {"app.py": APP, f"{wt}/settings.py": DOTDOT})
    _commit(wt, {"settings.py": DOTDOT}, T0 + 300)
    _commit(repo, {"app.py": APP}, T0 + 600)
    git(repo, "merge", "-q", "--no-edit", "feature")
    assert _session_lines(repo, "app.py") == 2
    assert _session_lines(repo, "settings.py") == 3


def test_which_written_paths_lie_in_no_checkout(tmp_path: Path) -> None:
    (tmp_path / "shop" / ".git").mkdir(parents=True)
    (tmp_path / "shop" / "src").mkdir()
    (tmp_path / "loose" / "deep").mkdir(parents=True)
    assert in_no_checkout(f"{tmp_path}/loose/deep/a.py")
    assert in_no_checkout(f"{tmp_path}/loose/a.py")
    assert not in_no_checkout(f"{tmp_path}/shop/src/a.py")  # a checkout holds it
    assert not in_no_checkout(f"{tmp_path}/shop/a.py")
    assert not in_no_checkout(f"{tmp_path}/gone/a.py")  # not here: maybe a worktree, removed
    assert not in_no_checkout(f"{tmp_path}/loose/../shop/a.py")
