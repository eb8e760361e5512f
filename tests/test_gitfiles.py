"""``gitfiles``: git's own answers to rev-parse, for-each-ref and config, read from the
repository's files (a warm ``deja blame`` then runs no git), and None wherever the
files cannot say it all, so that git is asked as before."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import git
from test_notes_world import S1, World, body, make_world

from deja_blame import gitfiles
from deja_blame.attribution.facts.early import REV_PARSE
from deja_blame.gitenv import no_git_env

NOTES = ("refs/notes/deja", "refs/notes/ai")
CONFIG = ["config", "-z", "--get-regexp", r"^(blame\.ignorerevsfile|mailmap\.(file|blob))$"]


def gits(cwd: Path, *args: str) -> bytes:
    """What git itself prints, with the environment deja gives it."""
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, env=no_git_env()
    ).stdout  # fmt: skip


def tips(cwd: Path) -> bytes:
    return gits(cwd, "for-each-ref", "--format=%(objectname) %(refname)", *NOTES)


@pytest.fixture
def made(repo: Path) -> Path:
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("a = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    (repo / "src" / "a.py").write_text("a = 2\n")
    git(repo, "commit", "-q", "-am", "two")
    return repo


def test_rev_parse_is_gits_own_output(made: Path, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(made)
    for where in (made, made / "src", link / "src"):
        assert gitfiles.rev_parse(str(where)) == gits(where, *REV_PARSE)
    git(made, "checkout", "-q", "--detach", "HEAD~1")  # HEAD holds the id
    assert gitfiles.rev_parse(str(made)) == gits(made, *REV_PARSE)
    git(made, "checkout", "-q", "main")
    git(made, "pack-refs", "--all")  # the branch only in packed-refs now
    assert not (made / ".git" / "refs" / "heads" / "main").exists()
    assert gitfiles.rev_parse(str(made / "src")) == gits(made, *REV_PARSE)
    git(made, "commit", "-q", "--allow-empty", "-m", "three")  # loose again, packed stale
    assert gitfiles.rev_parse(str(made)) == gits(made, *REV_PARSE)


def test_layout_is_gits_own_output_and_opens_the_repository_alone(
    made: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``CliRepository`` (a cold blame, why's older versions) opened without a process."""
    from deja_blame import gitcli

    layout = ["rev-parse", "--absolute-git-dir", "--show-object-format"]
    layout += ["--is-shallow-repository", "--show-toplevel"]
    link = tmp_path / "link"
    link.symlink_to(made)
    for where in (made, made / "src", link / "src"):
        assert gitfiles.layout(str(where)) == gits(where, *layout)
    by_git = gitcli.CliRepository(made / "src")
    monkeypatch.setattr(gitcli.subprocess, "run", None)  # any process: a TypeError
    by_files = gitcli.CliRepository(made / "src")
    assert (by_files.path, by_files.workdir, by_files.id_bytes, by_files.is_bare) == (
        by_git.path, by_git.workdir, by_git.id_bytes, by_git.is_bare
    )  # fmt: skip
    monkeypatch.undo()
    sha256 = tmp_path / "sha256"
    git(tmp_path, "init", "-q", "--object-format=sha256", str(sha256))
    assert gitfiles.layout(str(sha256)) is None  # the format is git's to read
    assert gitcli.CliRepository(sha256).id_bytes == 32


def test_notes_tips_are_for_each_refs_own_output(made: Path) -> None:
    assert gitfiles.ref_tips(str(made), NOTES) == tips(made) == b""
    git(made, "notes", "--ref", "refs/notes/deja", "add", "-m", "{}", "HEAD")
    assert gitfiles.ref_tips(str(made), NOTES) == tips(made) != b""
    git(made, "notes", "--ref", "refs/notes/ai", "add", "-m", "x", "HEAD")
    assert gitfiles.ref_tips(str(made), NOTES) == tips(made)  # ai before deja, as git sorts
    git(made, "pack-refs", "--all")
    assert gitfiles.ref_tips(str(made), NOTES) == tips(made)
    git(made, "notes", "--ref", "refs/notes/deja", "add", "-f", "-m", "{}", "HEAD~1")
    assert gitfiles.ref_tips(str(made), NOTES) == tips(made)  # the loose one, not packed


def test_blame_config_is_empty_where_git_gives_nothing(made: Path) -> None:
    assert gitfiles.blame_config(str(made / "src"), no_git_env()) == b""
    assert gits(made / "src", *CONFIG) == b""


def _worktree(repo: Path, tmp: Path) -> Path:
    git(repo, "worktree", "add", "-q", str(tmp / "wt"), "-b", "side")
    return tmp / "wt"


def _shallow(repo: Path, tmp: Path) -> Path:
    git(tmp, "clone", "-q", "--depth", "1", f"file://{repo}", str(tmp / "shallow"))
    return tmp / "shallow"


def _linked_git(repo: Path, tmp: Path) -> Path:
    shutil.move(str(repo / ".git"), str(tmp / "elsewhere.git"))
    (repo / ".git").symlink_to(tmp / "elsewhere.git")
    return repo


def _unborn(repo: Path, tmp: Path) -> Path:
    git(repo, "checkout", "-q", "--orphan", "fresh")
    return repo


def _core_worktree(repo: Path, tmp: Path) -> Path:
    git(repo, "config", "core.worktree", str(tmp))
    return repo


def _inside_git(repo: Path, tmp: Path) -> Path:
    return repo / ".git" / "refs"


def _no_repository(repo: Path, tmp: Path) -> Path:
    (tmp / "plain").mkdir()
    return tmp / "plain"


def _included(repo: Path, tmp: Path) -> Path:
    git(repo, "config", "include.path", str(tmp / "more.config"))
    return repo


def _bare(repo: Path, tmp: Path) -> Path:
    git(repo, "config", "core.bare", "true")
    return repo


def _reftable(repo: Path, tmp: Path) -> Path:
    (repo / ".git" / "reftable").mkdir()
    return repo


def _odd_branch_file(repo: Path, tmp: Path) -> Path:
    (repo / ".git" / "refs" / "heads" / "main").write_text("ref: refs/heads/other\n")
    return repo


@pytest.mark.parametrize(
    "case",
    [
        _worktree,
        _shallow,
        _linked_git,
        _unborn,
        _core_worktree,
        _inside_git,
        _no_repository,
        _included,
        _bare,
        _reftable,
        _odd_branch_file,
    ],
)
def test_where_the_files_cannot_say_it_all_git_is_asked(case, made: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    where = case(made, tmp_path)
    assert gitfiles.rev_parse(str(where)) is None


def test_a_repository_of_another_user_is_gits_to_judge(
    made: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert gitfiles.rev_parse(str(made)) is not None
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(made).st_uid + 1)
    assert gitfiles.rev_parse(str(made)) is None  # git's safe.directory decides


def test_notes_refs_the_files_cannot_say(made: Path) -> None:
    git(made, "notes", "--ref", "refs/notes/other", "add", "-m", "x", "HEAD")
    git(made, "symbolic-ref", "refs/notes/deja", "refs/notes/other")
    assert gitfiles.ref_tips(str(made), NOTES) is None  # a symbolic ref
    (made / ".git" / "refs" / "notes" / "deja").unlink()
    (made / ".git" / "logs" / "refs" / "notes" / "deja").unlink(missing_ok=True)
    git(made, "update-ref", "refs/notes/deja/x", "HEAD")  # a folder where the ref would be
    assert gitfiles.ref_tips(str(made), NOTES) is None
    assert b"refs/notes/deja/x" in tips(made)
    git(made, "update-ref", "-d", "refs/notes/deja/x")
    git(made, "update-ref", "refs/notes/ai/x", "HEAD")
    git(made, "pack-refs", "--all")
    assert gitfiles.ref_tips(str(made), NOTES) is None  # for-each-ref would list ai/x
    assert b"refs/notes/ai/x" in tips(made)


@pytest.mark.parametrize(
    "setting",
    [
        ("local", "blame.ignoreRevsFile", ".revs"),
        ("local", "mailmap.file", "m"),
        ("home", "mailmap.blob", "HEAD:m"),
        ("xdg", "blame.ignorerevsfile", "x"),
        ("global-env", "mailmap.file", "m"),
        ("home", "include.path", "more"),
        ("system", "mailmap.file", "m"),
    ],
)
def test_a_configured_mailmap_or_ignore_file_is_gits_to_read(
    setting: tuple[str, str, str], made: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where, key, value = setting
    home = Path(os.environ["HOME"])
    files = {
        "home": home / ".gitconfig",
        "xdg": Path(os.environ["XDG_CONFIG_HOME"]) / "git" / "config",
        "global-env": tmp_path / "global.config",
    }
    if where == "local":
        git(made, "config", key, value)
    elif where == "system":
        # the system file, as this git would read it without GIT_CONFIG_NOSYSTEM
        monkeypatch.delenv("GIT_CONFIG_NOSYSTEM")
        monkeypatch.setattr(gitfiles, "_system_files", lambda env: [str(tmp_path / "sys")])
        git(made, "config", "--file", str(tmp_path / "sys"), key, value)
    else:
        if where == "global-env":
            monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(files[where]))
        files[where].parent.mkdir(parents=True, exist_ok=True)
        git(made, "config", "--file", str(files[where]), key, value)
    assert gitfiles.blame_config(str(made), no_git_env()) is None


def test_configuration_from_the_environment_is_gits_to_read(
    made: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "mailmap.file")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "m")
    assert gitfiles.blame_config(str(made), no_git_env()) is None
    monkeypatch.delenv("GIT_CONFIG_COUNT")
    monkeypatch.delenv("HOME")
    assert gitfiles.blame_config(str(made), no_git_env()) is None  # no home: git's to find


# -- deja blame, warm: no git process ---------------------------------------------------


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return make_world(tmp_path, repo, monkeypatch)


def _logged_git(tmp: Path) -> tuple[dict[str, str], Path]:
    """An environment whose ``git`` writes each command line to a log, then runs git."""
    real = shutil.which("git")
    assert real is not None
    bin_dir, log = tmp / "bin", tmp / "git.log"
    bin_dir.mkdir()
    script = bin_dir / "git"
    script.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    script.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "DEJA_SERVER": "0"}, log


def _asked(log: Path) -> list[str]:
    asked = log.read_text().splitlines() if log.exists() else []
    log.unlink(missing_ok=True)
    return asked


def test_a_warm_blame_asks_git_nothing_and_sees_every_change(world: World, tmp_path: Path) -> None:
    world.write(S1, "app.py", body("a", 4))
    first = world.commit("a session")
    world.person("app.py", body("a", 4) + body("p", 2))
    world.commit("a person")
    world.index()
    env, log = _logged_git(tmp_path)
    cold = world.deja("blame", "app.py", "--json", env=env).stdout
    assert _asked(log)  # computed: git blame and the rest
    assert world.deja("blame", "app.py", "--json", env=env).stdout == cold
    assert _asked(log) == []  # HEAD, the notes refs, the configuration: from the files
    world.deja("blame", "-L", "2,3", "app.py", "--json", env=env)  # not blamed ahead
    assert _asked(log) == []
    # a new commit, packed refs, a checkout, a new note: each seen, still no git
    world.person("app.py", body("a", 4) + body("p", 2) + body("q", 1))
    world.commit("another person")
    grown = world.deja("blame", "app.py", "--json", env=env).stdout
    assert grown != cold and world.head() in grown.decode()
    _asked(log)
    world.git("pack-refs", "--all")
    assert world.deja("blame", "app.py", "--json", env=env).stdout == grown
    assert _asked(log) == []
    world.git("checkout", "-q", "--detach", "HEAD~1")
    assert world.deja("blame", "app.py", "--json", env=env).stdout == cold
    assert _asked(log) == []
    world.git("checkout", "-q", "main")
    world.deja("annotate", "--all")
    noted = world.deja("blame", "app.py", "--json", env=env).stdout
    afresh = world.deja("blame", "app.py", "--json", env={**env, "DEJA_NO_CACHE": "1"}).stdout
    assert noted == afresh
    assert first in noted.decode()


def test_where_the_files_cannot_say_git_answers_as_before(world: World, tmp_path: Path) -> None:
    world.write(S1, "app.py", body("a", 4))
    world.commit("a session")
    world.index()
    env, log = _logged_git(tmp_path)
    want = world.deja("blame", "app.py", "--json", env=env).stdout
    _asked(log)
    world.deja("blame", "app.py", "--json", env=env)
    assert _asked(log) == []
    world.git("config", "mailmap.file", str(tmp_path / "nobody.mailmap"))
    assert world.deja("blame", "app.py", "--json", env=env).stdout == want
    asked = _asked(log)
    assert any(" config -z " in a for a in asked), asked
    world.git("config", "--unset", "mailmap.file")
    worktree = tmp_path / "wt"
    world.git("worktree", "add", "-q", str(worktree), "-b", "side")
    there = world.deja("blame", "app.py", "--json", cwd=worktree, env=env).stdout
    world.deja("blame", "app.py", "--json", cwd=worktree, env=env)
    asked = _asked(log)
    assert any(" rev-parse " in f" {a} " for a in asked), asked
    assert any(" for-each-ref " in f" {a} " for a in asked), asked
    afresh = world.deja(
        "blame", "app.py", "--json", cwd=worktree, env={**env, "DEJA_NO_CACHE": "1"}
    ).stdout
    assert there == afresh
