"""deja notes carry: notes across the forge's server-side merges, end to end.

A bare "server" repository merges three pull requests the way a forge does, with
git plumbing and no hooks: a squash merge, a rebase merge and a plain merge.
The documented workflow's script (docs/deja-notes-carry.yml) runs in a CI clone
for each push, with a stand-in for ``gh api`` that answers what GitHub knows
(which pull request a commit came from). Then a fresh clone with no transcripts
fetches the notes and blames: every agent line of the pull requests on main has
the session that wrote it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from conftest import commit_env, deja, git
from test_notes_world import S1, S2, S3, World, body, make_world

from deja_blame.notes import where_from

REPO_ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = REPO_ROOT / "docs" / "deja-notes-carry.yml"
NOTES = "refs/notes/deja"
ZERO = "0" * 40


def workflow_script() -> str:
    """The carry step's ``run:`` block, as the workflow file has it."""
    lines = WORKFLOW.read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if "name: Carry the pull requests" in ln)
    run = next(i for i in range(start, len(lines)) if lines[i].strip() == "run: |")
    indent = len(lines[run]) - len(lines[run].lstrip()) + 2
    block: list[str] = []
    for ln in lines[run + 1 :]:
        if ln.strip() and len(ln) - len(ln.lstrip()) < indent:
            break
        block.append(ln[indent:])
    return "\n".join(block) + "\n"


class Server:
    """A bare repository that merges pull requests as a forge does (plumbing only)."""

    def __init__(self, path: Path, clock: int) -> None:
        self.path = path
        self.clock = clock
        self.pulls: dict[str, str] = {}  # commit on main -> the pull request it came from

    def git(self, *args: str, env: dict[str, str] | None = None, input: str | None = None) -> str:
        proc = subprocess.run(
            ["git", *args],
            cwd=self.path,
            capture_output=True,
            text=True,
            input=input,
            env={**os.environ, "GIT_COMMITTER_NAME": "GitHub", **(env or {})},
        )
        assert proc.returncode == 0, f"git {args} failed: {proc.stderr}"
        return proc.stdout.strip()

    def _commit(self, tree: str, parents: list[str], message: str, **env: str) -> str:
        self.clock += 60
        args = [a for p in parents for a in ("-p", p)]
        return self.git(
            "commit-tree", tree, *args, "-m", message, env={**commit_env(self.clock), **env}
        )

    def _move_main(self, new: str) -> tuple[str, str]:
        old = self.git("rev-parse", "refs/heads/main")
        self.git("update-ref", "refs/heads/main", new, old)
        return old, new

    def squash(self, n: int, title: str) -> tuple[str, str]:
        main, head = "refs/heads/main", f"refs/pull/{n}/head"
        tree = self.git("merge-tree", "--write-tree", main, head).splitlines()[0]
        sha = self._commit(tree, [self.git("rev-parse", main)], f"{title} (#{n})")
        self.pulls[sha] = str(n)
        return self._move_main(sha)

    def rebase(self, n: int) -> tuple[str, str]:
        """Each commit of the pull request applied on main in turn (its author, date and
        message kept, as GitHub does), through a temporary index: no work tree, no hooks."""
        base = self.git("merge-base", "refs/heads/main", f"refs/pull/{n}/head")
        tip = self.git("rev-parse", "refs/heads/main")
        index = {"GIT_INDEX_FILE": str(self.path / "carry-test-index")}
        for c in self.git("rev-list", "--reverse", f"{base}..refs/pull/{n}/head").split():
            self.git("read-tree", tip, env=index)
            patch = self.git("diff-tree", "-p", f"{c}^", c) + "\n"
            self.git("apply", "--cached", env=index, input=patch)
            tree = self.git("write-tree", env=index)
            name, email, date, message = self.git(
                "log", "-1", "--format=%an%x00%ae%x00%ad%x00%B", "--date=raw", c
            ).split("\0", 3)
            author = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": date}
            tip = self._commit(tree, [tip], message.strip(), **author)
            self.pulls[tip] = str(n)
        return self._move_main(tip)

    def merge(self, n: int) -> tuple[str, str]:
        main, head = "refs/heads/main", f"refs/pull/{n}/head"
        tree = self.git("merge-tree", "--write-tree", main, head).splitlines()[0]
        parents = [self.git("rev-parse", main), self.git("rev-parse", head)]
        sha = self._commit(tree, parents, f"Merge pull request #{n} from someone/pr{n}")
        self.pulls[sha] = str(n)
        return self._move_main(sha)


def ci_tools(tmp: Path, server: Server) -> dict[str, str]:
    """PATH with ``deja`` (this tree's) and a ``gh`` that answers ``gh api
    repos/R/commits/SHA/pulls`` from what the server merged."""
    bin_dir = tmp / "ci-bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "deja").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m deja_blame "$@"\n')
    answers = bin_dir / "pulls"
    answers.write_text("".join(f"{c} {n}\n" for c, n in server.pulls.items()))
    (bin_dir / "gh").write_text(
        "#!/bin/sh\n"
        '[ "$1" = api ] || exit 2\n'
        'sha=$(echo "$2" | cut -d/ -f5)\n'
        f'grep "^$sha " "{answers}" | cut -d" " -f2\n'
    )
    for tool in ("deja", "gh"):
        (bin_dir / tool).chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GITHUB_REPOSITORY": "team/app"}


def run_workflow(tmp: Path, ci: Path, server: Server, before: str, after: str) -> None:
    """The workflow's carry step, in a CI clone checked out at the push."""
    git(ci, "fetch", "-q", "origin")
    git(ci, "checkout", "-q", "--detach", after)
    env = {**ci_tools(tmp, server), "BEFORE": before, "AFTER": after, "RANGE_INPUT": ""}
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", workflow_script()],
        cwd=ci,
        capture_output=True,
        env={**os.environ, **env},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()


@pytest.fixture
def forge(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[World, Server]:
    """A developer (with transcripts and notes) and the server, pull requests pushed."""
    dev = make_world(tmp_path, repo, monkeypatch)
    dev.person("README.md", "# app\n")
    dev.person("shared.py", body("base", 6))
    dev.commit("init")
    bare = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "origin", "main")

    # Pull request 1 (to be squashed): two sessions and a person, over three commits.
    git(repo, "checkout", "-q", "-b", "pr1", "main")
    dev.write(S1, "alpha.py", body("one", 6))
    dev.commit("alpha: first cut")
    dev.write(S2, "alpha.py", body("one", 3) + body("two", 4))  # rewrites the end
    dev.commit("alpha: second session reworks the end")
    dev.person("people.py", body("person", 3))
    dev.write(S1, "shared.py", body("base", 6) + body("sharedone", 2))
    dev.commit("people and shared")
    # Pull request 2 (to be rebased): it touches shared.py too, at the top.
    git(repo, "checkout", "-q", "-b", "pr2", "main")
    dev.write(S3, "beta.py", body("three", 5))
    dev.commit("beta")
    dev.write(S2, "shared.py", body("sharedtop", 2) + body("base", 6))
    dev.commit("shared: a header")
    # Pull request 3 (a plain merge).
    git(repo, "checkout", "-q", "-b", "pr3", "main")
    dev.write(S3, "gamma.py", body("gamma", 4))
    dev.commit("gamma")
    git(repo, "checkout", "-q", "main")

    dev.index()
    for n in (1, 2, 3):
        dev.deja("annotate", f"main..pr{n}")
        git(repo, "push", "-q", "origin", f"pr{n}:refs/pull/{n}/head")
    dev.deja("notes", "push")
    return dev, Server(bare, dev.clock + 10_000)


EXPECTED = {  # file -> the session that wrote each line, by the line's text
    "alpha.py": {**{ln: S1 for ln in body("one", 3).splitlines()}, **{ln: S2 for ln in body("two", 4).splitlines()}},
    "beta.py": {ln: S3 for ln in body("three", 5).splitlines()},
    "gamma.py": {ln: S3 for ln in body("gamma", 4).splitlines()},
    "shared.py": {**{ln: S2 for ln in body("sharedtop", 2).splitlines()}, **{ln: S1 for ln in body("sharedone", 2).splitlines()}},
    "people.py": {},
}  # fmt: skip


def fresh_blame(tmp: Path, bare: Path, name: str) -> dict[str, list[tuple[str, str | None]]]:
    """A new clone, no transcripts, an empty index: fetch the notes, blame each file."""
    clone = tmp / name
    git(tmp, "clone", "-q", str(bare), str(clone))
    empty = tmp / f"{name}-no-transcripts"
    (empty / "brain").mkdir(parents=True)
    env = {"DEJA_DB": str(tmp / f"{name}.db"), "DEJA_ANTIGRAVITY_ROOT": str(empty)}
    deja("notes", "fetch", cwd=clone, env=env)
    out = {}
    for rel in EXPECTED:
        if not (clone / rel).exists():
            continue
        doc = orjson.loads(deja("blame", rel, "--json", cwd=clone, env=env).stdout)
        out[rel] = [(ln["text"], ln["session"]) for ln in doc["lines"]]
    return out


def test_squash_rebase_and_merge_keep_their_sessions(
    tmp_path: Path, forge: tuple[World, Server]
) -> None:
    dev, server = forge
    ci_a = tmp_path / "ci-a"
    ci_b = tmp_path / "ci-b"
    git(tmp_path, "clone", "-q", str(server.path), str(ci_a))
    git(tmp_path, "clone", "-q", str(server.path), str(ci_b))
    squash = server.squash(1, "Alpha")
    rebase = server.rebase(2)
    # Without the carry, main's new commits have no note: blame says people wrote it.
    before = fresh_blame(tmp_path, server.path, "before")
    assert all(s is None for text, s in before["alpha.py"] + before["beta.py"])

    # Two CI runs at once: B has carried its push's notes and not pushed them yet
    # when A (the workflow, start to end) pushes: B's push is rejected, merges, retries.
    git(ci_b, "fetch", "-q", "origin")
    deja("notes", "carry", "..".join(rebase), "--pr", "2", cwd=ci_b)
    run_workflow(tmp_path, ci_a, server, *squash)
    pushed = orjson.loads(deja("notes", "push", "--json", cwd=ci_b).stdout)
    assert (pushed["attempts"], pushed["merges"]) == (2, 1)
    assert server.git("rev-list", "--merges", NOTES), "merged, never forced"
    merge = server.merge(3)
    run_workflow(tmp_path, ci_a, server, *merge)
    tip = server.git("rev-parse", NOTES)
    run_workflow(tmp_path, ci_b, server, *squash)  # again: idempotent, nothing new
    run_workflow(tmp_path, ci_a, server, ZERO, rebase[1])  # a new branch's first push
    assert server.git("rev-parse", NOTES) == tip

    blamed = fresh_blame(tmp_path, server.path, "fresh")
    for rel, want in EXPECTED.items():
        got = {text: sid for text, sid in blamed[rel] if sid is not None}
        assert got == want, rel
        assert all(text in want for text, sid in blamed[rel] if sid is not None)


def test_carry_reports_how_each_commit_was_matched(
    tmp_path: Path, forge: tuple[World, Server]
) -> None:
    dev, server = forge
    squash = server.squash(1, "Alpha")
    server.rebase(2)
    merge = server.merge(3)
    ci = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(server.path), str(ci))
    doc = orjson.loads(
        deja("notes", "carry", f"{squash[0]}..{merge[1]}", "--pr", "2", "--json", cwd=ci).stdout
    )
    how = [(c["how"], c["pull"]) for c in doc["commits"]]
    assert how == [("squash", "1"), ("rebase", None), ("rebase", None), ("merge", "3")]
    assert [c["lines"] > 0 for c in doc["commits"]] == [True, True, True, False]
    assert doc["pushed"] is None and doc["fetched"]["merge"]["kind"] == "created"
    # the rebased commits each came from their own pull request commit
    pr2 = git(ci, "rev-list", "--reverse", f"{squash[0]}..refs/deja-carry/github/2").split()
    assert [c["sources"] for c in doc["commits"][1:3]] == [[pr2[0]], [pr2[1]]]


def test_bad_input_is_one_line(tmp_path: Path, forge: tuple[World, Server]) -> None:
    dev, server = forge
    proc = deja("notes", "carry", "no-such-rev..HEAD", "--local", cwd=dev.repo, check=False)
    assert proc.returncode == 1
    assert proc.stderr.decode().splitlines() == [
        "deja: error: unknown revision 'no-such-rev'",
        "  hint: fetch it first (git fetch origin)",
    ] or proc.stderr.decode().startswith("deja: error: unknown revision 'no-such-rev'")
    assert b"Traceback" not in proc.stderr
    proc = deja("notes", "carry", "HEAD", "--pr", "x1", cwd=dev.repo, check=False)
    assert proc.returncode == 1 and b"'x1' is not a pull request number" in proc.stderr


def test_on_a_plain_git_remote_the_branch_holding_the_squash_is_found_or_named(
    tmp_path: Path, forge: tuple[World, Server], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A bare repository (Gitea without pull refs, a mirror) keeps no refs/pull/N/head:
    # the pull request's branch is a branch of the remote (newcomer 10 #3).
    dev, server = forge
    server.git("update-ref", "refs/heads/pr1", server.git("rev-parse", "refs/pull/1/head"))
    squash = server.squash(1, "Alpha")
    for n in (1, 2, 3):
        server.git("update-ref", "-d", f"refs/pull/{n}/head")
    ci = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(server.path), str(ci))
    proc = deja("notes", "carry", "..".join(squash), "--json", cwd=ci)
    doc = orjson.loads(proc.stdout)
    [entry] = doc["commits"]
    assert (entry["how"], entry["branch"], doc["pulls"]) == ("squash", "origin/pr1", {"1": None})
    assert entry["lines"] > 0 and len(entry["sources"]) == 3
    # carried: the missing pull request head is no warning after the success
    git(ci, "notes", "--ref=deja", "remove", squash[1])
    proc = deja("notes", "carry", "..".join(squash), cwd=ci)
    err = proc.stderr.decode()
    assert "squash of origin/pr1" in err and "no head on" not in err, err
    # the branch deleted after its merge: nothing holds the change; the way is named
    git(ci, "notes", "--ref=deja", "remove", squash[1])
    git(ci, "update-ref", "-d", "refs/remotes/origin/pr1")
    proc = deja("notes", "carry", "..".join(squash), "--local", cwd=ci)
    err = proc.stderr.decode()
    assert "no pull request commit found" in err
    assert "1 commit(s) left without a note" in err and "deleted after its merge" in err, err
    hint = f"deja notes carry {squash[0]}..{squash[1]} --from <the branch's old tip commit id>"
    assert hint in err and "or --from origin/BRANCH while it exists" in err, err
    # blame's hint (no transcripts here) then says the commit has no note, not to fetch
    # the notes carry has just fetched; a clone without them is told to fetch them
    monkeypatch.setattr(where_from, "transcripts_here", lambda: False)
    hint = where_from.unattributed_hint(ci)
    assert "these lines' commits have none" in hint and "deja notes fetch" not in hint
    bare_clone = tmp_path / "no-notes"
    git(tmp_path, "clone", "-q", str(server.path), str(bare_clone))
    assert "deja notes fetch" in where_from.unattributed_hint(bare_clone)


def test_a_one_commit_pull_request_squashed_is_labelled_a_squash(
    tmp_path: Path, forge: tuple[World, Server]
) -> None:
    dev, server = forge
    server.git("update-ref", "refs/heads/pr3", server.git("rev-parse", "refs/pull/3/head"))
    squash = server.squash(3, "Gamma")  # a new message and date: not a rebase
    ci = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(server.path), str(ci))
    proc = deja("notes", "carry", "..".join(squash), "--from", "origin/pr3", "--local", cwd=ci)
    assert "squash of " in proc.stderr.decode() and "rebase of" not in proc.stderr.decode()


def test_a_rebase_merge_of_a_deleted_branch_is_carried_from_its_old_tip_by_id(
    tmp_path: Path, forge: tuple[World, Server]
) -> None:
    # a plain git remote, the branch deleted on merging (the norm): nothing holds the
    # change; the hint names the old tip by commit id, and that carries the notes
    dev, server = forge
    old_tip = server.git("rev-parse", "refs/pull/2/head")
    for n in (1, 2, 3):
        server.git("update-ref", "-d", f"refs/pull/{n}/head")
    server.git("update-ref", "refs/pull/2/head", old_tip)  # what rebase() reads, then gone
    rebase = server.rebase(2)
    server.git("update-ref", "-d", "refs/pull/2/head")
    ci = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(server.path), str(ci))
    git(ci, "fetch", "-q", str(server.path), old_tip)  # the old commits are still here
    deja("notes", "fetch", cwd=ci)
    span = "..".join(rebase)
    err = deja("notes", "carry", span, "--local", cwd=ci).stderr.decode()
    assert "2 commit(s) left without a note" in err, err
    assert f"deja notes carry {span} --from <the branch's old tip commit id>" in err, err
    doc = orjson.loads(
        deja("notes", "carry", span, "--local", "--from", old_tip, "--json", cwd=ci).stdout
    )
    assert [c["how"] for c in doc["commits"]] == ["rebase", "rebase"]
    assert all(c["lines"] > 0 for c in doc["commits"])


def test_a_repeated_carry_says_it_changed_nothing(
    tmp_path: Path, forge: tuple[World, Server]
) -> None:
    """newcomer 18 #6: a second run printed the first run's "3 commit(s) carried" and
    "pushed", and its JSON the same "noted": 1; the notes had not changed."""
    dev, server = forge
    squash = server.squash(1, "Alpha")
    ci = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(server.path), str(ci))
    spec = "..".join(squash)
    first = orjson.loads(deja("notes", "carry", spec, "--push", "--json", cwd=ci).stdout)
    assert (first["noted"], first["changed"]) == (1, 1)
    assert not first["commits"][0]["unchanged"] and first["pushed"]["up_to_date"] is False
    tip = server.git("rev-parse", NOTES)
    again = deja("notes", "carry", spec, "--push", cwd=ci).stderr.decode()
    assert "attributed line(s) (already noted: unchanged)" in again, again
    assert "deja: refs/notes/deja on origin was up to date: nothing new pushed" in again
    assert "deja: pushed" not in again
    doc = orjson.loads(deja("notes", "carry", spec, "--json", "--local", cwd=ci).stdout)
    assert (doc["noted"], doc["changed"]) == (1, 0) and doc["commits"][0]["unchanged"]
    assert server.git("rev-parse", NOTES) == tip


def test_a_push_that_recreates_the_remote_s_notes_says_it_pushed(
    tmp_path: Path, forge: tuple[World, Server]
) -> None:
    """review 18 #4: the remote's notes ref deleted after this clone fetched it: git
    pushes it again, and deja says so (it compared with the ref as last fetched)."""
    dev, server = forge
    squash = server.squash(1, "Alpha")
    ci = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(server.path), str(ci))
    spec = "..".join(squash)
    deja("notes", "carry", spec, "--push", cwd=ci)
    server.git("update-ref", "-d", NOTES)
    again = deja("notes", "carry", spec, "--push", cwd=ci).stderr.decode()
    assert "deja: pushed refs/notes/deja to origin" in again, again
    assert "up to date" not in again
    server.git("rev-parse", NOTES)  # there again
