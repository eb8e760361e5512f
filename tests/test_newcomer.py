"""A newcomer's first hour: the answers and messages a person meets first, in the
README's world (tests/newcomer_world.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest
from conftest import REPO_ROOT, git
from newcomer_world import AGY_BLOCK, AGY_SID, World, build_world


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    tmp = tmp_path_factory.mktemp("newcomer")
    with pytest.MonkeyPatch.context() as sealing:
        from conftest import seal

        seal(sealing, tmp / "seal-home", tmp)
        w = build_world(tmp)
        assert w.run_line("deja index -q").returncode == 0
    return w


def run(world: World, line: str, cwd: Path | None = None, code: int = 0) -> tuple[str, str]:
    proc = world.run_line(line, cwd)
    assert proc.returncode == code, (line, proc.returncode, proc.stderr)
    return proc.stdout, proc.stderr


def test_options_after_double_dash_are_files_as_in_git(world: World) -> None:
    _, err = run(world, "deja blame v1.2 -- src/app.py -L 40,60", code=2)
    assert "after -- every argument is a file, as in git" in err
    assert "'-L' after --" in err
    out, _ = run(world, "deja blame -L 40,42 v1.2 -- src/app.py")
    assert [ln.split(")")[0].split()[-1] for ln in out.splitlines()] == ["40", "41", "42"]
    assert out.count(AGY_SID[:8]) == 3


def test_why_at_a_revision_finds_the_session(world: World) -> None:
    """--rev is blamed at that commit: the answer names the session (not "no session")."""
    at = orjson.loads(run(world, "deja why src/app.py:45 --rev v1.2 --json")[0])
    assert (at["session"], at["text"]) == (AGY_SID, AGY_BLOCK.splitlines()[5])
    assert at["commit"] == git(world.repo, "rev-parse", "v1.2").strip()
    before = orjson.loads(run(world, "deja why src/app.py:45 --rev v1.0 --json")[0])
    assert before["session"] is None and before["text"] == "value_45 = compute(45)"
    assert before["commit"] == git(world.repo, "rev-parse", "v1.0").strip()


def test_a_reviewer_s_clone_is_told_to_fetch_notes(world: World, tmp_path: Path) -> None:
    """No transcripts on the reviewer's machine: deja index would find nothing."""
    run(world, "deja annotate v1.0..HEAD && deja notes push")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "-b", "main", str(world.tmp / "origin.git"), str(clone))
    reviewer = World(world.tmp, tmp_path / "reviewer", clone, world.bin, dict(world.env))
    reviewer.env.update(HOME=str(reviewer.home), XDG_DATA_HOME=str(reviewer.home / "data"))
    reviewer.home.mkdir()
    _, err = run(reviewer, "deja blame src/app.py")
    assert "deja notes fetch" in err and "deja index" not in err
    _, err = run(reviewer, "deja report HEAD~3..HEAD")
    assert "deja notes fetch" in err and "deja index" not in err
    # where the agents' transcripts are, the hint stays deja index
    _, err = run(world, "deja --db ~/empty.db blame src/app.py --no-refresh", cwd=clone)
    assert "(run: deja index)" in err
    run(reviewer, "deja notes fetch")
    out, err = run(reviewer, "deja blame src/app.py -L 40,41")
    assert out.count(AGY_SID[:8]) == 2 and "no sessions are indexed" not in err


def test_why_line_zero_says_lines_start_at_one(world: World) -> None:
    _, err = run(world, "deja why src/app.py:0", code=2)
    assert "lines start at 1" in err


def test_notes_push_and_fetch_to_a_broken_remote_say_git_s_reason(world: World) -> None:
    git(world.repo, "remote", "add", "broken", str(world.tmp / "no-such-remote.git"))
    # the module's world has notes once the tests before this one ran; alone (or on
    # another xdist worker) it has none, and push says so before asking the remote
    had_notes = (
        subprocess.run(
            ["git", "-C", str(world.repo), "rev-parse", "-q", "--verify", "refs/notes/deja"],
            capture_output=True,
        ).returncode
        == 0
    )
    if not had_notes:
        git(world.repo, "notes", "--ref", "refs/notes/deja", "add", "-m", "{}", "HEAD")
    try:
        for verb in ("push", "fetch"):
            _, err = run(world, f"deja notes {verb} broken", code=1)
            (line,) = err.strip().splitlines()
            assert line.startswith(f"deja: error: git {verb} broken failed: ")
            assert "does not appear to be a git repository" in line, line
            assert "repository exists" not in line
    finally:
        git(world.repo, "remote", "remove", "broken")
        if not had_notes:
            git(world.repo, "update-ref", "-d", "refs/notes/deja")


def test_a_missing_root_fails_alike_from_a_variable_or_an_option(world: World) -> None:
    missing = world.tmp / "no-such-root"
    _, by_option = run(world, f"deja --db ~/r1.db index --root {missing}", code=1)
    _, by_variable = run(world, f"DEJA_ANTIGRAVITY_ROOT={missing} deja --db ~/r2.db index", code=1)
    assert f"transcript root not found: {missing}" in by_option
    assert f"transcript root not found: {missing} (from DEJA_ANTIGRAVITY_ROOT)" in by_variable
    # Claude Code's: the directory the variable named, and only its variable
    line = f"DEJA_CLAUDE_ROOT={missing} deja --db ~/r3.db index --agent claude-code"
    _, err = run(world, line, code=1)
    # (the same line as Antigravity's since every agent's root is checked alike)
    assert f"transcript root not found: {missing} (from DEJA_CLAUDE_ROOT)" in err
    assert ".claude" not in err and "DEJA_CODEX_ROOT" not in err


def test_outside_a_repository_the_error_says_where(world: World) -> None:
    _, err = run(world, "deja blame x.py", cwd=world.tmp, code=1)
    assert err == f"deja: error: {world.tmp} is not inside a git repository\n"  # not "."
    _, err = run(world, "deja stats", cwd=world.tmp, code=1)
    assert err.startswith(f"deja: error: {world.tmp} is not inside a git repository")


def test_a_read_only_command_on_a_mistyped_db_creates_nothing(world: World) -> None:
    typo = world.tmp / "typo"
    out, err = run(world, f"deja --db {typo}/x/y.db sessions --json")
    doc = orjson.loads(out)
    assert (doc["sessions"], doc["left_out"]) == ([], [])
    assert doc["not_yet_indexed"] > 0  # the world's transcripts, none read into it
    assert f"no index at {typo}/x/y.db" in err
    assert f"(run: deja --db {typo}/x/y.db index)" in err  # the index named, not the default
    _, err = run(world, f"deja --db {typo}/x/y.db sessions")
    assert f"no index at {typo}/x/y.db yet: deja --db {typo}/x/y.db index reads the" in err
    world.run_line(f"deja --db {typo}/x/y.db show 3f2a")  # (found in the notes, or not)
    assert not typo.exists()


def test_sessions_on_a_new_db_says_its_advice_once_and_names_the_noted_ids(
    world: World,
) -> None:
    """NEWCOMER12 #4: five lines gave the same index advice three times, said "(this
    list reads none)" and "2 known from this repository's notes" without their ids."""
    run(world, "deja annotate v1.0..HEAD")
    new = world.tmp / "fresh" / "dir" / "x.db"
    waiting = orjson.loads(run(world, f"deja --db {new} sessions --json")[0])["not_yet_indexed"]
    _, err = run(world, f"deja --db {new} sessions")
    lines = err.splitlines()
    assert [ln for ln in lines if "index" in ln] == [
        f"deja: no index at {new} yet: deja --db {new} index reads the {waiting} transcripts waiting"
    ], err
    assert "reads none" not in err and "known from" not in err
    noted = [ln for ln in lines if "notes name" in ln]
    assert len(noted) == 1 and AGY_SID in noted[0], err  # whole ids: deja show ID works
    assert len(lines) == 2, err
    assert not new.parent.exists()


def test_handoff_with_no_session_here_suggests_the_same_command(world: World) -> None:
    elsewhere = world.tmp / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    _, err = run(world, "deja handoff --to claude --print", cwd=elsewhere, code=1)
    assert "deja handoff --to claude --print --session ID" in err and "--to agy" not in err


def _columns(out: str) -> list[list[str]]:
    return [ln.split() for ln in out.splitlines()]


def test_git_blame_s_flags_people_type(world: World) -> None:
    git_l = _columns(git(world.repo, "blame", "-l", "--root", "-L", "39,42", "src/app.py"))
    out, _ = run(world, "deja blame -n -f -l src/app.py -L 42,39")  # swapped, as git takes it
    rows = _columns(out)
    assert [r[0] for r in rows] == [g[0] for g in git_l] and len(rows[0][0]) == 40
    assert [r[1:3] for r in rows] == [["src/app.py", str(n)] for n in range(39, 43)]
    assert [r[3] for r in rows[1:]] == [AGY_SID[:8]] * 3
    out, _ = run(world, "deja blame --abbrev 4 -t src/app.py -L 1,1")
    first = git(world.repo, "rev-list", "--max-parents=0", "HEAD").strip()
    assert out.startswith(first[:5] + " (") and "1784278800 +0000" in out
    out, _ = run(world, "deja blame -b src/app.py -L 1,1")
    assert out.startswith(" " * 8 + " (")  # the root commit is a boundary
    out, _ = run(world, "deja blame -b --root src/app.py -L 1,1")
    assert out.startswith(first[:8])
    out, _ = run(world, "deja blame -c src/app.py -L 40,40")
    sha, who, line_text = out.rstrip("\n").split("\t")
    assert who.startswith(f"({AGY_SID[:8]} ") and line_text.startswith("40)value_40 = ")
    # a person's line as git annotate lays it out: "(author<TAB>date<TAB>N)text", one paren
    git_c = git(world.repo, "blame", "-c", "-L", "1,1", "src/app.py").rstrip("\n").split("\t")
    out, _ = run(world, "deja blame -c src/app.py -L 1,1")
    cells = out.rstrip("\n").split("\t")
    assert len(cells) == 4 and cells[1].strip() == git_c[1].strip() and "((" not in out
    assert cells[3] == git_c[3]
    help_text, _ = run(world, "deja blame --help")
    assert "-M[<num>]" in help_text and "-C[<num>]" in help_text


def test_blame_contents_and_reverse(world: World, tmp_path: Path) -> None:
    lines = (world.repo / "src" / "app.py").read_text().splitlines(keepends=True)
    buffer = tmp_path / "buffer.py"
    buffer.write_text("".join([*lines[:39], "inserted = 1\n", *lines[39:]]))
    for line in (
        f"deja blame --contents {buffer} src/app.py",
        f"deja blame --contents - src/app.py < {buffer}",
    ):
        rows = _columns(run(world, line + " -L 40,41")[0])
        assert rows[0][:3] == ["00000000", "(not", "committed"]
        assert rows[1][1] == AGY_SID[:8] and "compute_with_tax(40," in rows[1]
    assert git(world.repo, "status", "--porcelain").strip() == ""  # the file is as it was
    out, _ = run(world, "deja blame --reverse v1.2..HEAD src/app.py -L 39,41")
    theirs = _columns(
        git(world.repo, "blame", "--reverse", "v1.2..HEAD", "-L", "39,41", "src/app.py")
    )
    assert [r[0] for r in _columns(out)] == [g[0].lstrip("^")[:8] for g in theirs]
    assert [r[1] for r in _columns(out)[1:]] == [AGY_SID[:8]] * 2


def test_contents_of_a_path_git_does_not_know_is_git_s_error(world: World) -> None:
    """``--contents`` blames a text on top of HEAD's file: a name neither HEAD nor the
    working tree has (a typo) is git's error and exit code, not lines nobody committed."""
    line = "echo 'x = 1' | {} blame --contents - src/nosuch.py"
    theirs = world.run_line(line.format("git"))
    out, err = run(world, line.format("deja"), code=theirs.returncode)
    assert theirs.returncode == 128 and "no such path 'src/nosuch.py' in HEAD" in theirs.stderr
    assert out == "" and err == "deja: error: no such path 'src/nosuch.py' in HEAD\n"
    # a file not committed yet is deja's to blame still, with --contents as without
    draft = world.repo / "src" / "draft.py"
    draft.write_text("y = 2\n")
    try:
        out, _ = run(world, "echo 'y = 3' | deja blame --contents - src/draft.py")
        assert "(not committed yet)" in out and out.rstrip().endswith("y = 3")
    finally:
        draft.unlink()


def test_agents_times_say_their_zone(world: World) -> None:
    """The index keeps agents' times in UTC: the text says so, in any zone (it said
    10:00 in Tokyo, where it was 19:00)."""
    out, _ = run(world, "TZ=Asia/Tokyo deja blame src/app.py -L 40,40")
    assert f"{AGY_SID[:8]} agy    2026-07-17 10:00 UTC 0.97 40)" in out
    why = run(world, "TZ=Asia/Tokyo deja why src/cart.py:45")[0]
    history = why.split("History (oldest first, by commit time)")[1]
    assert all(" UTC " in row for row in history.strip().splitlines())
    rows = run(world, "deja sessions")[0].splitlines()
    assert rows[0].split()[:3] == ["SESSION", "AGENT", "STARTED"]
    assert all(row.split()[4] == "UTC" for row in rows[1:])
    from deja_blame.output import utc_minute

    assert utc_minute("2026-07-17T18:01:00+09:00") == "2026-07-17 09:01 UTC"
    assert utc_minute("2026-07-17T09:01:59.500Z") == "2026-07-17 09:01 UTC"
    assert utc_minute("yesterday at noon") == "yesterday at noo" and utc_minute(None) == ""


def test_small_things_a_person_sees(world: World) -> None:
    # the project column keeps the repository's name: cut from its start, wide when it can be
    narrow = [ln for ln in run(world, "COLUMNS= deja sessions")[0].splitlines()[1:]]
    assert len(str(world.repo)) > 28 and all("…" in ln and "/src/shop " in ln for ln in narrow)
    wide = run(world, "COLUMNS=200 deja sessions")[0].splitlines()[1:]
    assert all(f" {world.repo} " in ln for ln in wide)
    # a pure insertion's hunk header is git's; white space stays in history lines
    out, _ = run(world, "deja why src/cart.py:45")
    assert "@@ -42,0 +43,5 @@" in out
    history = out.split("History (oldest first, by commit time)")[1]
    assert "    amount = order.total - order.discount" in history
    # Antigravity's diff counts three context lines before the change; the header
    # shown (without them) names the lines changed, 40 to 60
    out, _ = run(world, "deja why src/app.py:42")
    assert "@@ -40,21 +40,21 @@\n-value_40 = compute(40)\n" in out
    # one format: export needs no --format; stats --no-refresh; --no-pager and --color after
    assert run(world, "deja export --format agent-trace")[0] == run(world, "deja export")[0]
    out, err = run(world, "deja export origin/main..HEAD")  # people's commits only
    assert out == "" and "no commit in origin/main..HEAD has lines attributed" in err
    assert "no commit" not in run(world, "deja export v1.0..v1.2")[1]
    unread = {"unread_transcripts": None}  # --no-refresh does not look: null, not 0
    assert {**orjson.loads(run(world, "deja stats --no-refresh --json")[0]), **unread} == {
        **orjson.loads(run(world, "deja stats --json")[0]),
        **unread,
    }
    out, _ = run(world, "deja blame src/app.py -L 40,40 --no-pager --color always")
    assert "\x1b[" in out
    out, _ = run(world, "deja sessions --color=never --no-pager")
    assert "\x1b[" not in out


def test_show_says_when_the_transcript_is_gone(world: World, tmp_path: Path) -> None:
    (path,) = (world.home / ".codex" / "sessions").rglob("*.jsonl")
    out, _ = run(world, "deja show c0dec0de --no-pager")
    assert "gone since it was indexed" not in out
    moved = tmp_path / path.name
    path.rename(moved)
    try:
        out, _ = run(world, "deja --no-pager show c0dec0de")
        assert "gone since it was indexed" in out
    finally:
        moved.rename(path)


def test_exit_codes_in_words() -> None:
    from deja_blame.outputs.session_text import exit_text

    assert exit_text(0, None) == "exit 0" and exit_text(2, "DONE") == "exit 2"
    assert exit_text(None, "RUNNING") == "running in background"
    assert exit_text(None, None) == "no exit code recorded"


def test_an_interrupted_rebuild_leaves_the_old_index_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deja_blame.commands import index as index_cmd
    from deja_blame.index.db import rebuild_path

    db = tmp_path / "index.db"
    root = REPO_ROOT / "fixtures" / "antigravity" / "demo"
    assert index_cmd.run_index(db, [root], False, True, quiet=True) == 0
    before = db.read_bytes()

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(index_cmd, "index_roots", interrupted)
    with pytest.raises(KeyboardInterrupt):
        index_cmd.run_index(db, [root], True, True, quiet=True)
    assert not rebuild_path(db).exists() and db.read_bytes() == before
