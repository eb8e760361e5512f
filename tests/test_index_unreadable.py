"""An index this user may not read (newcomer 17 #4): every command stopped with
"cannot read the index ...: Permission denied" and no hint, doctor printed an
empty fix, and blame refused to answer though the commit's note and git could.
Now the error has a hint (the file's owner and mode, chmod, or another index),
doctor's fix is that hint, and blame, why, stats and report answer from the
notes and git alone, saying so.

The tests run as root in CI, where no mode keeps a file from being read: the
index's ``open`` is made to refuse it as the kernel would for another user."""

from __future__ import annotations

import builtins
import os
import pwd
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import run_deja
from test_notes_world import S1, World, body, make_world

import deja_blame.index.db as db_module
from deja_blame.commands.doctor import check_index
from deja_blame.errors import DejaError


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return make_world(tmp_path, repo, monkeypatch)


def _refuse(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """``path`` may not be opened by this user (EACCES), as for mode 000 not root."""

    def guarded(file: Any, *args: Any, **kw: Any) -> Any:
        if os.fspath(file) == str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return builtins.open(file, *args, **kw)

    monkeypatch.setattr(db_module, "open", guarded, raising=False)


def test_an_unreadable_index_is_said_with_its_fix_and_blame_answers_from_the_notes(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.person("README.md", "# project\n")
    world.commit("init")
    world.write(S1, "app.py", body("a", 4))
    world.commit("the session's code")
    world.index()
    world.deja("annotate", "HEAD")
    assert world.note() is not None
    monkeypatch.chdir(world.repo)
    _refuse(monkeypatch, world.db)
    mine = f"it is yours, mode 0600: chmod u+rw {world.db}, or name another index with --db"

    out = run_deja("blame", "app.py", "--json")
    assert out.exit_code == 0, out.output
    assert [ln["session"] for ln in orjson.loads(out.stdout)["lines"]] == [S1] * 4
    assert (
        f"deja: cannot read the index {world.db}: Permission denied; answering from the notes"
        " and git alone"
    ) in out.stderr
    assert f"hint: {mine}" in out.stderr
    assert "run: deja index" not in out.stderr  # it would not help
    assert run_deja("why", "app.py:1").exit_code == 0

    # a command that needs the index stops, with the fix
    for args in (("sessions",), ("index",)):
        out = run_deja(*args)
        assert out.exit_code != 0 and isinstance(out.exception, DejaError), args
        assert str(out.exception) == f"cannot read the index {world.db}: Permission denied"
        assert out.exception.hint is not None and out.exception.hint.startswith(mine)

    health, _ = check_index(world.db, [])
    assert not health.ok and health.fix.startswith(mine)  # it printed "index: " and nothing


def test_another_user_s_index_names_its_owner(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.index()
    owner = pwd.getpwuid(world.db.stat().st_uid).pw_name
    monkeypatch.setattr(os, "geteuid", lambda: world.db.stat().st_uid + 1)
    _refuse(monkeypatch, world.db)
    health, _ = check_index(world.db, [])
    assert health.fix == (
        f"it belongs to {owner} (mode 0600): ask them, or name another index with --db or DEJA_DB"
    )
