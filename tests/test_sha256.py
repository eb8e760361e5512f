"""A repository of SHA-256 object names (``git init --object-format=sha256``).

libgit2 1.9 (pygit2's) cannot open one: deja reads it through the git program
(``deja_blame/gitcli.py``). A session writes files, the hooks write the notes,
and blame, why, stats, annotate (one commit and ``--all``), the notes read back
with no index, and report all answer with 64-digit commit ids.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from conftest import git
from test_notes_world import S1, S2, World, body, file_claims, make_world

from deja_blame.gitcli import CliRepository
from deja_blame.gitutil import open_repository, read_file, resolve_commit


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    repo = tmp_path / "repo256"
    repo.mkdir()
    git(repo, "init", "-q", "--object-format=sha256", "-b", "main")
    git(repo, "config", "commit.gpgsign", "false")
    w = make_world(tmp_path, repo, monkeypatch)
    monkeypatch.setenv("DEJA_HOOK_SYNC", "1")  # the hook runs in the foreground
    w.person("README.md", "# project\n")
    w.commit("init")
    return w


def _hooks(w: World) -> None:
    w.deja("hooks", "install")
    git(w.repo, "config", "deja.hook.timeout", "120")  # the notes, not the budget, are checked


def test_a_session_in_a_sha256_repository_end_to_end(world: World) -> None:
    w = world
    _hooks(w)
    w.index()
    w.write(S1, "src/app.py", body("a", 4))
    first = w.commit("agent work")
    assert len(first) == 64
    assert file_claims(w.note(first), "src/app.py") == {1: S1, 2: S1, 3: S1, 4: S1}
    w.write(S1, "src/app.py", body("a", 4) + body("b", 2))
    w.write(S2, "tab\tx.py", body("t", 3))
    w.person("notes.txt", "a person's words\n")
    second = w.commit("more agent work")
    note = w.note(second)
    assert file_claims(note, "src/app.py") == {5: S1, 6: S1}
    assert file_claims(note, "tab\tx.py") == {1: S2, 2: S2, 3: S2}
    assert note is not None and note["commit"] == second

    doc = w.blame("src/app.py")
    assert [ln["session"] for ln in doc["lines"]] == [S1] * 6
    assert {ln["commit"] for ln in doc["lines"]} == {first, second}
    porcelain = w.deja("blame", "--porcelain", "src/app.py").stdout.decode()
    assert porcelain.split(" ", 1)[0] in (first, second)
    assert "deja-session " + S1 in porcelain
    text = w.deja("--no-pager", "blame", "-l", "src/app.py").stdout.decode()
    assert text.split(" ", 1)[0] in (first, second)

    why = orjson.loads(w.deja("why", "--json", "src/app.py:5").stdout)
    assert why["session"] == S1 and why["commit"] == second

    stats = orjson.loads(w.deja("stats", "--json").stdout)
    assert {s["session"]: s["lines"] for s in stats["by_session"]} == {S1: 6, S2: 3}
    assert stats["skipped"] == []

    # the notes from scratch: one commit, then the whole history
    hook_notes = {sha: w.note(sha) for sha in (first, second)}
    git(w.repo, "notes", "--ref", "deja", "remove", first, second)
    w.deja("annotate", first)
    assert file_claims(w.note(first), "src/app.py") == {1: S1, 2: S1, 3: S1, 4: S1}
    w.deja("annotate", "--all")
    for sha in (first, second):
        again = w.note(sha)
        assert again is not None and hook_notes[sha] is not None
        assert again["files"] == hook_notes[sha]["files"]

    # the notes alone (another clone, no index, no transcripts) give the lines back
    empty = {"DEJA_DB": str(w.tmp / "empty.db"), "DEJA_ANTIGRAVITY_ROOT": str(w.tmp / "none")}
    (w.tmp / "none").mkdir()
    doc = w.blame("src/app.py", env=empty)
    assert [ln["session"] for ln in doc["lines"]] == [S1] * 6

    report = orjson.loads(w.deja("report", "HEAD~2..HEAD", "--format", "json").stdout)
    text = orjson.dumps(report).decode()
    assert first in text and second in text and S1 in text and S2 in text
    # and the report from the notes alone
    alone = orjson.dumps(
        orjson.loads(w.deja("report", "HEAD~2..HEAD", "--format", "json", env=empty).stdout)
    ).decode()
    assert S1 in alone and S2 in alone
    markdown = w.deja("report", "HEAD~2..HEAD").stdout.decode()
    assert "**2 commits**" in markdown and "src/app.py" in markdown
    w.deja("report", "HEAD~2..HEAD", "--format", "html")


def test_a_rewrite_carries_the_notes(world: World) -> None:
    """post-rewrite: an amended commit's note moves to its new 64-digit id."""
    w = world
    _hooks(w)
    w.index()
    w.write(S1, "app.py", body("a", 3))
    old = w.commit("agent work")
    w.person("README.md", "# project, amended\n")
    w.git("commit", "-q", "-a", "--amend", "-m", "agent work, amended")
    new = w.head()
    assert new != old and len(new) == 64
    assert file_claims(w.note(new), "app.py") == {1: S1, 2: S1, 3: S1}


def test_the_interface_reads_what_pygit2_would(world: World) -> None:
    """The git-program implementation answers as pygit2 does, for what deja asks."""
    w = world
    w.person("dir/a.py", "one\ntwo\n")
    w.commit("two files")
    w.person("dir/a.py", "one\nthree\nfour\n")
    w.git("mv", "README.md", "READ.md")
    w.commit("change and rename")
    repo = open_repository(w.repo)
    assert isinstance(repo, CliRepository)
    head = resolve_commit(repo, "HEAD")
    assert len(str(head.id)) == 64 and head.message == "change and rename\n"
    assert head.author.name == "Test Person" and len(head.parents) == 1
    assert read_file(repo, "dir/a.py", "HEAD~1").data == b"one\ntwo\n"
    assert sorted(e.name or "" for e in head.tree) == ["READ.md", "dir"]
    diff = repo.diff(head.parents[0], head, context_lines=0)
    diff.find_similar()
    by_path = {d.new_file.path: d for d in diff.deltas}
    assert set(by_path) == {"READ.md", "dir/a.py"}
    assert by_path["READ.md"].old_file.path == "README.md"
    patch = diff[list(by_path).index("dir/a.py")]
    assert patch is not None
    added = {ln.new_lineno for h in patch.hunks for ln in h.lines if ln.origin == "+"}
    assert added == {2, 3}
    assert repo.descendant_of(str(head.id), str(head.parents[0].id))
    assert not repo.descendant_of(str(head.parents[0].id), str(head.id))
    assert [str(c.id) for c in repo.walk(head.id)][-1] == str(head.id)
    with pytest.raises(KeyError):
        repo["f" * 64]
    git(w.repo, "config", "deja.x", "yes")
    assert repo.config.get_bool("deja.x") and repo.config["deja.x"] == "yes"


def test_object_ids_of_either_length_in_what_deja_parses() -> None:
    """post-rewrite's pairs, a cherry-pick's and a squash's source commits."""
    from deja_blame.notes.annotate import _CHERRY, _SQUASHED, parse_rewrite_pairs

    a, b = "a" * 64, "b" * 64
    assert parse_rewrite_pairs(f"{a} {b}\n{'c' * 40} {'d' * 40} amend\n") == [
        (a, b),
        ("c" * 40, "d" * 40),
    ]
    assert parse_rewrite_pairs(f"{'a' * 50} {b}\n") == []
    assert _CHERRY.findall(f"x\n(cherry picked from commit {a})") == [a]
    assert _SQUASHED.findall(f"Squashed commit of the following:\n\ncommit {b}\n") == [b]


def test_the_editor_server_in_a_sha256_repository(world: World) -> None:
    """deja lsp: lenses on the session's lines, a person's hover with the commit's details."""
    from lsp_client import LspClient

    w = world
    w.write(S1, "app.py", body("a", 3))
    w.person("README.md", "# project\n\nby hand\n")
    sha = w.commit("agent work")
    w.index()
    client = LspClient(w.repo, w.env)
    try:
        client.initialize(w.repo)
        uri = client.open(w.repo / "app.py")
        lines = {lens["range"]["start"]["line"] for lens in client.lenses(uri)}
        assert lines == {0}
        hover = client.hover(uri, 1)
        assert hover is not None and S1 in hover and sha[:12] in hover
        readme = client.open(w.repo / "README.md")
        person = client.hover(readme, 2)
        assert person is not None and "Test Person" in person and sha[:12] in person
        assert client.errors == []
        assert client.close() == 0
    finally:
        client.kill()


def _repository_attributes_deja_uses() -> dict[str, set[str]]:
    """Attribute -> modules, of every name deja annotates ``pygit2.Repository``
    (parameters, and ``self.X`` set from one)."""
    import ast

    root = Path(__file__).resolve().parents[1] / "deja_blame"
    used: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            names = {
                a.arg
                for a in [*fn.args.args, *fn.args.kwonlyargs]
                if a.annotation is not None and "pygit2.Repository" in ast.unparse(a.annotation)
            }
            selves = {
                t.attr
                for node in ast.walk(fn)
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)
                and node.value.id in names
                for t in node.targets
                if isinstance(t, ast.Attribute)
            }  # fmt: skip
            for node in ast.walk(tree if selves else fn):
                if not isinstance(node, ast.Attribute):
                    continue
                v = node.value
                if (isinstance(v, ast.Name) and v.id in names) or (
                    isinstance(v, ast.Attribute) and v.attr in selves
                ):
                    used.setdefault(node.attr, set()).add(path.name)
    return used


def test_the_git_program_implementation_has_all_deja_asks_of_a_repository(world: World) -> None:
    """A new use of pygit2's Repository in deja must be given to gitcli too (or this fails)."""
    repo = open_repository(world.repo)
    used = _repository_attributes_deja_uses()
    assert {"head", "references", "config", "diff", "walk", "path"} <= set(used)
    # pygit2's blame is never asked of a CliRepository: blame there is git blame
    missing = {a: sorted(m) for a, m in used.items() if a != "blame" and not hasattr(repo, a)}
    assert missing == {}


def test_names_of_any_byte_in_a_sha256_repository(world: World) -> None:
    """Trees and diffs read by the git-program implementation keep a name's bytes."""
    from deja_blame.attribution.commit import introduced_lines

    w = world
    raw = b"caf\xe9\tx.py".decode("utf-8", "surrogateescape")
    (w.repo / raw).write_bytes(b"x = 1\n")
    w.commit("latin-1 name")
    (w.repo / raw).write_bytes(b"x = 1\ny = 2\n")
    w.commit("a line more")
    repo = open_repository(w.repo)
    head = resolve_commit(repo, "HEAD")
    assert introduced_lines(repo, head) == {raw: {2}}
    assert read_file(repo, raw, "HEAD").data == b"x = 1\ny = 2\n"
    stats = orjson.loads(w.deja("stats", "--json").stdout)
    assert stats["skipped"] == [] and stats["lines"] == 3
    w.deja("annotate", "--all")
    w.deja("report", "HEAD~1..HEAD", "--format", "json")
