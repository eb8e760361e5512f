"""Every field a transcript or a note gave, in every output, through that output's
one escaping function (``outputs/escape.py``; issue 39).

One world: a repository whose ``app.py`` a session wrote, the session's transcript
carrying a hostile value in each field (its id, the request, the agent's answer, a
command, the folder it ran in, a file it read, the model chosen), and a commit
``b.py`` whose note (from a stranger: no transcript here) carries a hostile value
in each of its fields (agent, project, start time, model, request).
Each hostile value is ``Q<field>``, then an OSC 8 link, a CSI colour, a bidi
override, HTML, a Markdown image, a pipe and a backtick, a carriage return, a
newline and ``Z<field>``. For each output and each field it shows:

- terminal (``blame``, ``why``, ``show``, ``sessions``, ``stats``, ``doctor``, the
  handoff prompt, the MCP server's text): no control character, no bidi control, and
  no line starting with ``Z<field>`` (a newline would forge a line of deja's own);
- Markdown report: no ``<b`` element, no image, no line starting with ``Z<field>``;
- HTML report: no ``<b`` element;
- JSON report: the value exactly (JSON strings are inert; no raw control byte);
- the editor's hover and lens (LSP): no image, link or HTML outside code.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from antigravity_writer import TranscriptWriter
from conftest import built_once, commit_env, git, seal

from deja_blame.outputs.escape import code

T0 = 1_784_278_800  # 2026-07-17T09:00:00Z


def hostile(field: str) -> str:
    """A value every output must neutralise, its field named at both ends (no slash:
    it is a directory name too)."""
    return f"Q{field}\x1b]8;;x\x07\x1b[31m\u202e<b id=Q{field}>![i](q{field}.png)|`\r\nZ{field}"


TRANSCRIPT_FIELDS = ["sid", "prompt", "answer", "command", "cwd", "viewed", "model"]
# (a note's session id is checked against a plain alphabet when read: not a field here)
NOTE_FIELDS = ["agent", "project", "started", "nmodel", "request"]
NOTE_SID = "note-session-0001"

# Control characters and bidi controls that must never reach a terminal.
LIVE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _build(tmp: Path) -> dict[str, Any]:
    repo = tmp / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "commit.gpgsign", "false")
    (repo / "README.md").write_text("shop\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init", env=commit_env(T0 - 3600))

    root = tmp / "root"
    sid = hostile("sid")
    app = repo / "app.py"
    text = "def total(cart):\n    return sum(cart)\n\n\ndef count(cart):\n    return len(cart)\n"
    w = TranscriptWriter(root, sid, start=T0, workspace=str(repo))
    w.register_workspace(str(repo), kind="ide")
    w.user(
        f"{hostile('prompt')}\n<USER_SETTINGS_CHANGE>\nThe user changed setting `Model"
        f" Selection` from None to {hostile('model').replace(chr(10), ' ')}. No need to"
        " comment on this change.\n</USER_SETTINGS_CHANGE>"
    )
    w.assistant(hostile("answer"))
    w.view(f"/work/{hostile('viewed')}.py", content="x\n")
    w.write_file(str(app), text)
    w.run_command(hostile("command"), exit_code=1, cwd=f"/work/{hostile('cwd')}")
    app.write_text(text)
    git(repo, "add", "app.py")
    git(repo, "commit", "-q", "-m", "cart", env=commit_env(T0 + 600))

    # a stranger's commit and its note: no transcript of its session here
    (repo / "b.py").write_text("y = 2\n")
    git(repo, "add", "b.py")
    git(repo, "commit", "-q", "-m", "b", env=commit_env(T0 + 1200))
    sha = git(repo, "rev-parse", "HEAD").strip()
    note = {
        "schema": 2,
        "tool": "deja-blame 0.1.0",
        "commit": sha,
        "files": {"b.py": {NOTE_SID: [[1, 1, 0.9, T0 + 1100]]}},
        "sessions": {
            NOTE_SID: {
                "agent": hostile("agent"),
                "project": hostile("project"),
                "started_at": hostile("started"),
                "model": hostile("nmodel"),
                "first_prompt": hostile("request"),
            }
        },
    }
    (tmp / "note.json").write_text(json.dumps(note))
    git(repo, "notes", "--ref", "refs/notes/deja", "add", "-f", "-F", str(tmp / "note.json"), sha)

    # a history the repository carries, in a folder of a hostile name: left out, and
    # its path said by deja index and deja doctor
    carried = repo / hostile("dpath")
    carried.mkdir()
    (carried / ".aider.chat.history.md").write_text("# aider chat started at 2026-07-17 09:00:00\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "history", env=commit_env(T0 + 1800))

    home = tmp / "home"
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "share"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "DEJA_DB": str(tmp / "index.db"),
        "DEJA_ANTIGRAVITY_ROOT": str(root),
        "DEJA_AIDER_ROOT": str(carried),
        "NO_COLOR": "1",
        "COLUMNS": "400",  # no field cut short before its end marker
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    outputs: dict[str, str] = {}
    for name, argv in COMMANDS.items():
        proc = subprocess.run(
            [sys.executable, "-m", "deja_blame", *argv],
            cwd=repo,
            env=env,
            capture_output=True,
            timeout=120,
        )
        out = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
        assert "Traceback" not in out, (name, out)
        outputs[name] = out
    outputs["mcp"] = _mcp(repo, env, sid)
    return {"outputs": outputs, "sid": sid}


SID_PREFIX = "Qsid"
COMMANDS: dict[str, list[str]] = {
    "index": ["index"],
    "blame": ["blame", "app.py"],
    "blame-note": ["blame", "b.py"],
    "why": ["why", "app.py:2"],
    "why-note": ["why", "b.py:1"],
    "show": ["show", SID_PREFIX, "--full"],
    "show-note": ["show", NOTE_SID],
    "sessions": ["sessions"],
    "stats": ["stats"],
    "doctor": ["doctor"],
    "handoff": ["handoff", "--to", "claude", "--session", SID_PREFIX, "--print"],
    "report-md": ["report", "HEAD~3..HEAD", "--prompts", "--format", "markdown"],
    "report-html": ["report", "HEAD~3..HEAD", "--prompts", "--format", "html"],
    "report-json": ["report", "HEAD~3..HEAD", "--prompts", "--format", "json"],
}


def _mcp(repo: Path, env: dict[str, str], sid: str) -> str:
    """The MCP server's text replies: the lines' stories and the session."""
    from mcp_client import McpClient, text_of

    client = McpClient(cwd=repo, env=env)
    try:
        client.initialize()
        texts = [
            text_of(client.call("why", file="app.py", line=2)),
            text_of(client.call("why", file="b.py", line=1)),
            text_of(client.call("show", session=SID_PREFIX)),
        ]
        client.close()
    finally:
        client.kill()
    return "\n".join(texts)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    def build(tmp: Path) -> dict[str, Any]:
        with pytest.MonkeyPatch.context() as sealing:
            seal(sealing, tmp / "seal-home", tmp)
            return _build(tmp)

    return built_once(tmp_path_factory, "escape-every-field", build)


# (output, the fields it shows): each field's marker must be there, escaped
TERMINAL = {
    "index": ["dpath"],
    "blame": ["sid", "model"],
    "blame-note": ["agent", "nmodel"],
    "why": ["sid", "prompt", "answer", "command", "model"],
    "why-note": ["agent", "project", "started"],
    "show": ["sid", "prompt", "answer", "command", "viewed", "model"],
    "show-note": ["agent", "project", "started", "request"],
    "sessions": ["sid", "prompt"],
    "stats": ["sid", "model", "agent", "nmodel"],
    "doctor": ["dpath"],
    "handoff": ["sid", "prompt", "answer", "command", "cwd"],
    "mcp": ["sid", "answer", "command", "viewed", "model", "agent", "started", "nmodel", "request"],
}
REPORT_FIELDS = ["sid", "prompt", "command", "agent", "project", "started", "request"]
MARKDOWN = {"report-md": REPORT_FIELDS}
HTML = {"report-html": REPORT_FIELDS}
JSON = {"report-json": REPORT_FIELDS}


def _pairs(table: dict[str, list[str]]) -> list[tuple[str, str]]:
    return [(out, field) for out, fields in table.items() for field in fields]


def _shown(text: str, field: str, name: str) -> None:
    assert f"Q{field}" in text, f"{name} does not show the {field} field at all:\n{text[:3000]}"


def _no_forged_line(text: str, field: str, name: str) -> None:
    forged = [ln for ln in text.splitlines() if ln.startswith(f"Z{field}")]
    assert not forged, (name, field, forged)


@pytest.mark.parametrize(("name", "field"), _pairs(TERMINAL))
def test_terminal_outputs_escape_the_field(world: dict[str, Any], name: str, field: str) -> None:
    text = world["outputs"][name]
    _shown(text, field, name)
    for m in re.finditer(f"Q{field}", text):
        around = text[m.start() : m.start() + 80]
        assert not LIVE.findall(around), (name, field, around)
    _no_forged_line(text, field, name)


@pytest.mark.parametrize(("name", "field"), _pairs(MARKDOWN))
def test_the_markdown_report_escapes_the_field(
    world: dict[str, Any], name: str, field: str
) -> None:
    text = world["outputs"][name]
    _shown(text, field, name)
    assert f"<b id=Q{field}>" not in text
    assert f"![i](q{field}.png)" not in text
    assert not LIVE.findall(text)
    _no_forged_line(text, field, name)


@pytest.mark.parametrize(("name", "field"), _pairs(HTML))
def test_the_html_report_escapes_the_field(world: dict[str, Any], name: str, field: str) -> None:
    text = world["outputs"][name]
    _shown(text, field, name)
    assert f"<b id=Q{field}>" not in text and f"&lt;b id=Q{field}&gt;" in text
    assert not LIVE.findall(text)


def _strings(doc: Any) -> list[str]:
    if isinstance(doc, str):
        return [doc]
    if isinstance(doc, dict):
        return [s for k, v in doc.items() for s in [*_strings(k), *_strings(v)]]
    if isinstance(doc, list):
        return [s for v in doc for s in _strings(v)]
    return []


@pytest.mark.parametrize(("name", "field"), _pairs(JSON))
def test_the_json_report_keeps_the_field_exactly(
    world: dict[str, Any], name: str, field: str
) -> None:
    raw = world["outputs"][name]
    assert "\x1b" not in raw and "\u202e" not in raw  # escaped as \u001b, \u202e
    start = raw.index("{")
    strings = _strings(orjson.loads(raw[start : raw.rindex("}") + 1]))
    assert any(f"Q{field}" in s for s in strings), field


# The editor (LSP): its hover is Markdown the editor renders (images fetched, links
# live), its lens plain text. Each field a note or a transcript gives the hover.
LSP_FIELDS = [
    "agent",
    "writtenat",
    "via",
    "editat",
    "edittool",
    "model",
    "project",
    "session",
    "commit",
    "request",
    "hagent",
    "htext",
]


def _hover_and_lens(field: str) -> tuple[str, str]:
    from deja_blame.attribution.model import FileBlame, LineAttribution, SessionInfo
    from deja_blame.editor.lsp.render import agent_hover, lens_title

    evil = hostile(field)
    ln = LineAttribution(
        line=1,
        text="x = 1",
        commit="a" * 40,
        session="s1",
        source="claude-code",
        confidence=0.9,
        written_at="2026-07-17T09:30:00Z",
        via="note",
    )
    info = SessionInfo("s1", "claude-code", "/work/shop", None, None, model="m")
    edit = {"tool": "Edit", "at": "2026-07-17T09:30:00Z", "hunks": []}
    old = {
        "commit": "b" * 40,
        "at": "2026-07-16T09:00:00Z",
        "session": "s0",
        "agent": "codex",
        "text": "x = 0",
    }
    new = {
        "commit": "a" * 40,
        "at": "2026-07-17T09:30:00Z",
        "session": "s1",
        "agent": "claude-code",
        "text": "x = 1",
    }
    story: dict[str, Any] = {"edit": edit, "history": [old, new]}
    if field in ("agent", "writtenat", "via", "session", "commit"):
        setattr(ln, {"agent": "source", "writtenat": "written_at"}.get(field, field), evil)
    elif field in ("model", "project"):
        setattr(info, field, evil)
    elif field in ("editat", "edittool"):
        edit[field.removeprefix("edit")] = evil
    elif field in ("hagent", "htext"):
        old[field[1:]] = evil
    blame = FileBlame("a.py", None, "/r", [ln], sessions={ln.session or "": info})
    hover = agent_hover(blame, ln, story, evil if field == "request" else None)
    return hover, lens_title(ln)


def _live_markdown(markdown: str) -> str:
    """What an editor reads as Markdown: fenced code, escaped characters and
    (one-line) code spans taken out."""
    text = re.sub(r"(?ms)^(`{3,}).*?^\1", "", markdown)
    text = re.sub(r"\\.", "", text)
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", text)


@pytest.mark.parametrize("field", LSP_FIELDS)
def test_the_editor_escapes_the_field(field: str) -> None:
    hover, lens = _hover_and_lens(field)
    assert f"Q{field}" in hover, hover
    live = _live_markdown(hover)
    assert "](" not in live and "<b" not in live, live
    assert not LIVE.findall(hover), hover
    _no_forged_line(hover, field, "hover")
    if field in ("agent", "writtenat", "session"):
        assert not LIVE.findall(lens) and "\n" not in lens, lens


# OSC (retitles the terminal), CSI, their one-character C1 forms, a lone C1, bidi
HOSTILE_GIT = "\x1b]0;pwned\x07\x1b[31m\x9d0;c1\x9c\x9b2J\x85\u202e\u2066"


@pytest.mark.parametrize("flag", ["--porcelain", "--line-porcelain", "-e"])
def test_blame_porcelain_escapes_every_field_of_a_commit(repo: Path, flag: str) -> None:
    """A commit's author, mail and subject, the file's name and its lines are a
    stranger's text in --porcelain and --line-porcelain too (newcomer 7: the author's
    OSC reached the terminal there and nowhere else)."""
    from conftest import deja

    name = f"Eve{HOSTILE_GIT}Q.py"
    (repo / name).write_text(f"X = 1  # {HOSTILE_GIT}end\n")
    git(repo, "add", "-A")
    hostile_author = {
        "GIT_AUTHOR_NAME": f"Eve {HOSTILE_GIT}red",
        "GIT_AUTHOR_EMAIL": f"e{HOSTILE_GIT}@x",
        "GIT_COMMITTER_NAME": f"Mal {HOSTILE_GIT}lory",
        "GIT_COMMITTER_EMAIL": f"m{HOSTILE_GIT}@x",
        **commit_env(T0),
    }
    git(repo, "commit", "-q", "-m", f"subj {HOSTILE_GIT}ject", env=hostile_author)
    out = deja("blame", flag, name, cwd=repo).stdout.decode("utf-8", "replace")
    assert ("e@x" if flag == "-e" else "Eve") in out and "X = 1" in out, out
    if flag != "-e":
        for field in ("author Eve ", "committer Mal ", "summary subj ", "filename Eve"):
            assert field in out, (field, out)
    assert not LIVE.findall(out.replace("\t", "").replace("\n", "")), repr(out)
    if flag == "-e":  # the line of the file shows each control: what it holds
        out, line = out.split(" 1) ")
        assert line == "X = 1  # " + code(HOSTILE_GIT) + "end\n", line
    assert "pwned" not in out and "c1" not in out  # the OSC's text went with it
