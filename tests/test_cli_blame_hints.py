"""deja blame's errors a newcomer met (NEWCOMER12 #7-#9): ``-L abc`` named one of the
five forms --help lists; ``deja blame FILE REV`` blamed the file's name as an unknown
revision; a binary file was refused only after the index's refresh and git's blame."""

from __future__ import annotations

import time
from pathlib import Path

import orjson
from conftest import deja, deja_json, git


def _committed(repo: Path) -> None:
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "bin.dat").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" * 100)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")


def test_a_bad_line_range_names_every_form_the_help_lists(repo: Path) -> None:
    _committed(repo)
    proc = deja("blame", "-L", "abc", "calc.py", cwd=repo, check=False)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    help_text = " ".join(deja("blame", "--help").stdout.decode().split())
    for form in ("START,END", "START,+COUNT", ":FUNCNAME", "/REGEX/,+N"):
        assert form in err and form in help_text, (form, err)
    assert deja("blame", "-L", ":add", "calc.py", cwd=repo).returncode == 0


def test_the_revision_after_the_file_is_a_usage_error_that_says_the_order(repo: Path) -> None:
    _committed(repo)
    proc = deja("blame", "calc.py", "nosuchrev", cwd=repo, check=False)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert "'calc.py' is a file here, not a revision: the revision comes first" in err, err
    assert "(deja blame nosuchrev calc.py, or deja blame --rev nosuchrev calc.py)" in err
    assert "unknown revision 'calc.py'" not in err
    # the right order, and a file named like a branch, as before
    assert deja("blame", "HEAD", "calc.py", cwd=repo).returncode == 0
    proc = deja("blame", "nosuchrev", "calc.py", cwd=repo, check=False)
    assert proc.returncode == 1 and b"unknown revision 'nosuchrev'" in proc.stderr


def test_a_binary_file_is_refused_before_any_work(repo: Path) -> None:
    """Before the refresh: a new transcript naming the repository stays unread."""
    _committed(repo)
    at = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - 600))
    record = {"sessionId": "d0d0d0d0-1111-4000-8000-00000000d0d0", "cwd": str(repo),
              "isSidechain": False, "type": "user", "uuid": "u0", "timestamp": at,
              "message": {"role": "user", "content": "look at calc.py"}}  # fmt: skip
    folder = Path.home() / ".claude" / "projects" / "-repo"
    folder.mkdir(parents=True)
    (folder / "d0d0d0d0-1111-4000-8000-00000000d0d0.jsonl").write_bytes(
        orjson.dumps(record) + b"\n"
    )
    env = {"DEJA_ANTIGRAVITY_ROOT": ""}
    assert deja_json("sessions", "--json", cwd=repo, env=env)["not_yet_indexed"] == 1
    for args in (("blame", "bin.dat"), ("why", "bin.dat:1")):
        proc = deja(*args, cwd=repo, env=env, check=False)
        assert proc.returncode == 1
        assert proc.stderr.decode() == "deja: error: bin.dat is a binary file: nothing to blame\n"
    assert deja_json("sessions", "--json", cwd=repo, env=env)["not_yet_indexed"] == 1
    # from a folder below, the repository's path; a text file is blamed (and refreshes)
    (repo / "sub").mkdir()
    (repo / "sub" / "x.bin").write_bytes(b"\0\1\2")
    proc = deja("blame", "x.bin", cwd=repo / "sub", env=env, check=False)
    assert proc.stderr.decode() == "deja: error: sub/x.bin is a binary file: nothing to blame\n"
    assert deja("blame", "calc.py", cwd=repo, env=env).returncode == 0
    assert deja_json("sessions", "--json", cwd=repo, env=env)["not_yet_indexed"] == 0


def test_a_function_range_is_found_in_the_text_contents_gives(repo: Path, tmp_path: Path) -> None:
    """``--contents F -L :func``: git finds the function in the given text, as git
    blame does, not in the working file (a function moved 20 lines down in the text
    was answered at its old place)."""
    _committed(repo)
    given = tmp_path / "given.py"
    given.write_text("# pad\n" * 20 + "def add(a, b):\n    return a + b\n")
    args = ["blame", "--contents", str(given), "-L", ":add", "calc.py", "--json"]
    doc = deja_json(*args, cwd=repo)
    assert [ln["line"] for ln in doc["lines"]] == [21, 22]
    assert [ln["text"] for ln in doc["lines"]] == ["def add(a, b):", "    return a + b"]
    out = git(repo, "blame", "--porcelain", "--contents", str(given), "-L", ":add", "calc.py")
    heads = [h.split() for h in out.splitlines() if h and not h.startswith("\t")]
    finals = [int(h[2]) for h in heads if len(h) >= 3 and len(h[0]) == 40 and h[2].isdigit()]
    assert finals == [21, 22]  # git's own answer: the same lines
