"""Cline, Roo Code and Kilo Code tasks from elsewhere, end to end: a task copied from
a Windows machine (``c:\\Users\\ana\\shop``, backslashed paths, a German clock) and one
that ran in another user's home on another machine (``/home/bo/shop``) attribute
their lines in a Linux clone of the same repository, which lives at neither path;
the person's lines stay the person's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from conftest import commit_env, deja, deja_json, git

T0 = 1_796_630_400  # 2026-12-07T08:00:00Z: the person's first commit is an hour before
PERSON = "def total(items):\n    return sum(items)\n"
UTIL = "def mean(items):\n    return total(items) / len(items)\n"
NOTES = "# Notes\n\nThe mean divides by the number of items.\n"


def _cline_task(store: Path) -> None:
    """Ana's Cline task on Windows: its environment names ``c:\\Users\\ana\\shop`` and
    a German clock; its calls write ``src\\util.py`` and edit ``src\\app.py``."""

    def env(clock: str) -> dict[str, str]:
        text = (
            "<environment_details>\n# Current Time\n"
            f"7.12.2026, {clock} (Europe/Berlin, UTC+1:00)\n\n"
            "# Current Working Directory (c:\\Users\\ana\\shop) Files\nsrc\\app.py\n"
            "</environment_details>"
        )
        return {"type": "text", "text": text}

    diff = (
        "------- SEARCH\ndef total(items):\n=======\nfrom util import mean\n\n\n"
        "def total(items):\n+++++++ REPLACE"
    )
    api: list[Any] = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "<task>\nAdd a mean\n</task>"}, env("9:00:00 AM")],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Writing the helper."},
                {
                    "type": "tool_use",
                    "id": "w1",
                    "name": "write_to_file",
                    "input": {"path": "src\\util.py", "content": UTIL},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "w1", "content": "saved"},
                env("9:00:20 AM"),
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "w2",
                    "name": "replace_in_file",
                    "input": {"path": "src\\app.py", "diff": diff},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "w2", "content": "saved"},
                env("9:00:40 AM"),
            ],
        },
    ]
    folder = store / "tasks" / str(T0 * 1000)
    folder.mkdir(parents=True)
    (folder / "api_conversation_history.json").write_bytes(orjson.dumps(api))


def _roo_task(store: Path) -> None:
    """Bo's Roo task, in his home on another machine, writes ``docs/notes.md``."""
    env = (
        "<environment_details>\n# Current Workspace Directory (/home/bo/shop) Files\n"
        "src/app.py\n</environment_details>"
    )
    call = f"<write_to_file>\n<path>docs/notes.md</path>\n<content>\n{NOTES}</content>\n</write_to_file>"
    api: list[Any] = [
        {
            "role": "user",
            "ts": (T0 + 60) * 1000,
            "content": [
                {"type": "text", "text": "<task>\nExplain the mean\n</task>"},
                {"type": "text", "text": env},
            ],
        },
        {"role": "assistant", "ts": (T0 + 70) * 1000, "content": [{"type": "text", "text": call}]},
        {
            "role": "user",
            "ts": (T0 + 80) * 1000,
            "content": [
                {"type": "text", "text": "[write_to_file for 'docs/notes.md'] Result:"},
                {
                    "type": "text",
                    "text": "<file_write_result>\n<path>docs/notes.md</path>\n<operation>created</operation>\n</file_write_result>",
                },
                {"type": "text", "text": env},
            ],
        },
    ]
    folder = store / "tasks" / "7d1c2b3a-0000-4000-8000-000000000001"
    folder.mkdir(parents=True)
    (folder / "api_conversation_history.json").write_bytes(orjson.dumps(api))


def test_tasks_from_windows_and_another_home_attribute_in_this_clone(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text(PERSON)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the person's start", env=commit_env(T0 - 3_600))
    _cline_task(tmp_path / "cline")
    _roo_task(tmp_path / "roo")
    (repo / "src" / "util.py").write_text(UTIL)
    (repo / "src" / "app.py").write_text("from util import mean\n\n\n" + PERSON)
    (repo / "docs").mkdir()
    (repo / "docs" / "notes.md").write_text(NOTES)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the sessions' work", env=commit_env(T0 + 3_600))
    roots = {
        "DEJA_CLINE_ROOT": str(tmp_path / "cline"),
        "DEJA_ROO_CODE_ROOT": str(tmp_path / "roo"),
    }
    deja("index", env=roots, cwd=repo)

    cline, roo = str(T0 * 1000), "7d1c2b3a-0000-4000-8000-000000000001"
    listed = deja_json("sessions", "--project", ".", "--json", cwd=repo)["sessions"]
    assert {(s["session_id"], s["project"]) for s in listed} == {
        (cline, "C:/Users/ana/shop"),
        (roo, "/home/bo/shop"),
    }

    def by_line(path: str) -> list[str | None]:
        doc = deja_json("blame", path, "--json", cwd=repo)
        return [ln["session"] for ln in doc["lines"]]

    assert by_line("src/util.py") == [cline, cline]
    # the import the task added (its blank lines are no evidence); the person's lines
    assert by_line("src/app.py")[0] == cline
    assert by_line("src/app.py")[3:] == [None, None]
    assert by_line("docs/notes.md") == [roo, roo, roo]
    # the write, as the session named it, at the German clock's 9:00:20 in Berlin
    why = deja_json("why", "src/util.py:1", "--json", cwd=repo)
    assert (why["edit"]["path"], why["edit"]["at"]) == (
        "C:/Users/ana/shop/src/util.py",
        "2026-12-07T08:00:20Z",
    )
