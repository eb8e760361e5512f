"""An index an older deja built (issue 39): created by the umask (0644, in a 0755
folder), and holding sessions the provenance gate now leaves out (a history a
cloned repository carries, read before the gate existed). Opened by this deja it
is made the user's alone, and the strangers' sessions go at the next run,
without ``--rebuild``."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FIXTURES, commit_env, deja, deja_json, git

from deja_blame.hooks.log import HookLog
from deja_blame.index.provenance import GATE_CHECKED, trust_file

T0 = 1_796_000_000


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _as_an_older_deja_left_it(db: Path) -> None:
    """What an index from before the gate looks like: readable by all, in a folder
    anyone may list, and no record that its sessions went through the gate."""
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM meta WHERE key=?", (GATE_CHECKED,))
    conn.close()
    for p in db.parent.iterdir():
        os.chmod(p, 0o644)
    os.chmod(db.parent, 0o755)


def test_an_older_index_in_dejas_own_folder_is_made_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DEJA_DB")  # deja's own place: $XDG_DATA_HOME/deja/index.db
    db = Path(os.environ["XDG_DATA_HOME"]) / "deja" / "index.db"
    deja("index", "--root", str(FIXTURES / "demo"))
    _as_an_older_deja_left_it(db)
    assert _mode(db) == 0o644
    deja("index", "--root", str(FIXTURES / "demo"))
    made = {p.name: _mode(p) for p in db.parent.iterdir()}
    assert made == {name: 0o600 for name in made} and "index.db" in made
    assert _mode(db.parent) == 0o700


def test_a_folder_the_user_named_is_left_as_it_is(tmp_path: Path) -> None:
    """--db names the user's folder (a project, a shared disk): only deja's files change."""
    folder = tmp_path / "mine"
    folder.mkdir(mode=0o755)
    db = folder / "index.db"
    deja("index", "--db", str(db), "--root", str(FIXTURES / "demo"))
    _as_an_older_deja_left_it(db)
    deja("index", "--db", str(db), "--root", str(FIXTURES / "demo"))
    assert _mode(db) == 0o600
    assert _mode(folder) == 0o755


def test_an_older_hook_log_is_made_private(repo: Path) -> None:
    import pygit2

    log = repo / ".git" / "deja" / "hook.log"
    log.parent.mkdir()
    log.write_text("an older line\n")
    os.chmod(log, 0o644)
    HookLog("post-commit", pygit2.Repository(str(repo))).warn("a line")
    assert _mode(log) == 0o600
    assert log.read_text().startswith("an older line\n")


def test_a_session_an_older_index_holds_from_a_cloned_history_is_dropped(
    tmp_path: Path,
) -> None:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    (upstream / "cart.py").write_text("x = 1\n")
    history = FIXTURES.parent / "aider" / ".aider.chat.history.md"
    (upstream / ".aider.chat.history.md").write_text(history.read_text())
    git(upstream, "add", "-A")
    git(upstream, "commit", "-qm", "start", env=commit_env(T0))
    git(tmp_path, "clone", "-q", str(upstream), "clone")
    clone = tmp_path / "clone"
    planted = clone / ".aider.chat.history.md"
    # an older deja read every history it found: here, the same by trusting it
    deja("trust", str(planted), cwd=clone)
    deja("index", cwd=clone)
    assert [s["agent"] for s in deja_json("sessions", "--json", cwd=clone)["sessions"]] == ["aider"]
    trust_file().unlink()
    _as_an_older_deja_left_it(Path(os.environ["DEJA_DB"]))

    said = deja("index", cwd=clone).stderr.decode()
    assert f"removed from the index: left out {planted} (aider)" in said, said
    assert deja_json("sessions", "--json", cwd=clone)["sessions"] == []
    # once: the next run leaves it out as any stranger's, and removes nothing more
    again = deja("index", cwd=clone).stderr.decode()
    assert "removed from the index" not in again and f"left out {planted}" in again


def test_a_new_index_has_large_pages_and_an_older_one_keeps_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new index is made of PAGE_SIZE pages (an edit's packed text left a 4 KB page
    a sixth empty); an index an older deja made with 4 KB pages stays as it is and
    is written to as before."""
    from deja_blame.index import db as index_db

    new = index_db.connect(tmp_path / "new.db")
    assert new.execute("PRAGMA page_size").fetchone()[0] == index_db.PAGE_SIZE == 16384
    new.close()
    monkeypatch.setattr(index_db, "PAGE_SIZE", 4096)
    index_db.connect(tmp_path / "older.db").close()
    monkeypatch.undo()
    older = index_db.connect(tmp_path / "older.db")
    assert older.execute("PRAGMA page_size").fetchone()[0] == 4096
    older.execute("INSERT INTO meta(key, value) VALUES ('k', 'v')")
    assert older.execute("SELECT value FROM meta WHERE key='k'").fetchone()[0] == "v"
    older.close()


def test_a_deja_index_whose_version_cannot_be_read_is_damaged_not_foreign(
    tmp_path: Path,
) -> None:
    """Pages scribbled over can hide the schema version's row without an error: deja's
    own tables say the file is a damaged deja index (rebuilt), another program's
    tables say it is not deja's (left alone)."""
    from deja_blame.index import db as index_db

    ours = tmp_path / "ours.db"
    index_db.connect(ours).close()
    conn = sqlite3.connect(ours)
    conn.execute("DELETE FROM meta")
    conn.commit()
    conn.close()
    assert not index_db.is_foreign_database(ours)
    theirs = tmp_path / "theirs.db"
    conn = sqlite3.connect(theirs)
    conn.execute("CREATE TABLE sessions (id INTEGER)")
    conn.commit()
    conn.close()
    assert index_db.is_foreign_database(theirs)
