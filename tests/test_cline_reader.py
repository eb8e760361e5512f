"""Cline, Roo Code and Kilo Code (``transcripts/cline``): their task folders read rule
by rule. The goldens (``fixtures/{cline,roo-code,kilo-code}``) hold both generations
of tool calls (native ``tool_use``, XML in the text), both diff formats, denied and
failed calls; these tests say which rule each part of them checks, and add what a
golden cannot hold (a Windows project, another machine's, broken files)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from agent_goldens import read_all
from conftest import deja

from deja_blame.transcripts.cline.diffblocks import search_replace_pairs
from deja_blame.transcripts.cline.fileargs import call_files, saved_paths, xml_files
from deja_blame.transcripts.cline.reader import current_time, parse_task, xml_call
from deja_blame.transcripts.reading import IncompleteTranscript, MalformedTranscript
from deja_blame.transcripts.registry import agent_named, discover, guess_agent, read_session
from deja_blame.transcripts.transcript_file import TranscriptFile

NATIVE = "1796115600000"  # Cline, tool_use blocks, with ui_messages.json
XML = "1796047200000"  # Cline, XML in the text, no ui_messages.json
ROO_NATIVE = "5b1f0c2e-8d3a-4e6b-9f70-2a4c6e8b0d13"  # Roo, tool_use blocks
ROO_FILES = "9c3e7a10-4f2b-4d8e-a6c1-3b5d7f9e1a24"  # Roo, XML calls on several files at once


def _edits(doc: dict[str, Any]) -> list[tuple[str, list[str], list[str]]]:
    return [(e["path"].rsplit("/", 1)[-1], e["removed"], e["added"]) for e in doc["edits"]]


def _said(doc: dict[str, Any], role: str = "user") -> list[str]:
    return [m["text"] for m in doc["messages"] if m["role"] == role]


@pytest.fixture(scope="module")
def cline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return read_all("cline", tmp_path_factory.mktemp("cline"))


# -- which calls ran --------------------------------------------------------------------------


def test_a_call_counts_once_its_result_says_it_ran(cline: dict[str, Any]) -> None:
    """The diff saved is an edit; the write the person denied and the diff that failed
    to apply (whose lines would otherwise be the session's) are none."""
    assert _edits(cline[NATIVE]) == [
        (
            "parcel.py",
            ["    return True"],
            ["LIMIT_KG = 30", "", "", "    return parcel.weight <= LIMIT_KG"],
        )
    ]
    assert [c["command"] for c in cline[NATIVE]["commands"]] == ["python -m pytest -q"]


def test_roo_results_by_id_and_its_json_statuses(tmp_path: Path) -> None:
    """Roo answers each ``tool_use`` by its id, in any order; ``{"status": "denied"}``
    and ``{"status": "error"}`` did not run."""
    roo = read_all("roo-code", tmp_path)[ROO_NATIVE]
    assert [e[0] for e in _edits(roo)] == ["route.py", "ROUTES.md"]
    assert not [e for e in _edits(roo) if e[0] == "route_test.py"]


def test_a_command_s_exit_code_and_folder(tmp_path: Path) -> None:
    roo = read_all("roo-code", tmp_path)[ROO_NATIVE]
    (command,) = roo["commands"]
    assert command["exit_code"] == 1
    assert command["cwd"] == "/work/shop/tests"  # its cwd, against the task's folder


def test_kilo_xml_calls_insert_and_a_failed_search(tmp_path: Path) -> None:
    (kilo,) = read_all("kilo-code", tmp_path).values()
    assert _edits(kilo) == [
        ("zones.py", ["ZONES = ['north']"], ["ZONES = ['north', 'south']"]),
        ("zones.py", [], ["DEFAULT_ZONE = 'north'"]),
    ]  # the denied write and the search that found nothing ("Error: ...") are none


# -- Roo's calls on several files -----------------------------------------------------------


@pytest.fixture(scope="module")
def roo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return read_all("roo-code", tmp_path_factory.mktemp("roo"))


def test_a_multi_file_diff_gives_each_saved_file_its_own_blocks(roo: dict[str, Any]) -> None:
    """``<args><file>...`` with two diffs to loans.py, one each to receipt.py (denied)
    and notices.py (failed): loans.py gets its two blocks, and no line of the other
    files' blocks lands in it or in them. Read as one call before, loans.py got all
    four blocks."""
    assert _edits(roo[ROO_FILES]) == [
        (
            "loans.py",
            ["DAILY_FEE = 0", "    return 0"],
            ["DAILY_FEE = 0.25", "    return round(days_late * DAILY_FEE, 2)"],
        )
    ]


def test_one_file_denied_through_the_multi_file_tool_did_not_run(roo: dict[str, Any]) -> None:
    """The retry on receipt.py, answered "Changes to receipt.py were not approved by
    user", is no edit; the person's words after it are theirs."""
    assert not [e for e in _edits(roo[ROO_FILES]) if e[0] == "receipt.py"]
    assert _said(roo[ROO_FILES]) == [
        "Charge a late fee on overdue loans",
        "leave the receipt alone for now",
    ]


def test_every_file_a_read_names_is_viewed(roo: dict[str, Any]) -> None:
    """``read_file`` on several files: XML ``<args>`` and native ``files``."""
    viewed = {k: [f["path"].rsplit("/", 1)[-1] for f in roo[k]["files"]] for k in roo}
    assert viewed == {
        ROO_FILES: ["loans.py", "receipt.py"],
        ROO_NATIVE: ["route.py", "route_test.py"],
    }


def test_the_args_value_is_no_parameter_of_the_call() -> None:
    """A ``<path>`` or ``<diff>`` inside ``<args>`` is the file's, never the call's."""
    text = "<apply_diff>\n<args>\n<file><path>b.py</path><diff><content>x</content></diff></file>\n</args>\n</apply_diff>"
    name, args, _start = xml_call(text)  # type: ignore[misc]
    assert (name, sorted(args)) == ("apply_diff", ["args"])


def test_args_in_a_file_s_text_or_a_diff_is_that_text_s(tmp_path: Path) -> None:
    """``<args>`` opens Roo's several files only as the call's first tag: a write whose
    text mentions it, or a diff adding it, keeps its lines (review 11 #1)."""
    write = (
        "<write_to_file>\n<path>docs/calls.md</path>\n<content>\n# Calls\n"
        "apply_diff takes <args> with one <file> per file.\nThe end.\n</content>\n"
        "<line_count>3</line_count>\n</write_to_file>"
    )
    diff = (
        "<replace_in_file>\n<path>src/tags.py</path>\n<diff>\n<<<<<<< SEARCH\nX = 1\n"
        '=======\nOPEN = "<args>"\nSHUT = "</args>"\n>>>>>>> REPLACE\n</diff>\n</replace_in_file>'
    )
    env = "<environment_details>\n# Current Workspace Directory (/srv/app) Files\n</environment_details>"
    api: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\ntags\n</task>\n" + env}]}
    ]
    for call, name in ((write, "write_to_file"), (diff, "replace_in_file")):
        api.append({"role": "assistant", "content": [{"type": "text", "text": call}]})
        api.append(
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": f"[{name} for 'x'] Result:"},
                    {"type": "text", "text": "The content was successfully saved to x."},
                ],
            }
        )
    task = tmp_path / "tasks" / "1796000000000"
    task.mkdir(parents=True)
    (task / "api_conversation_history.json").write_bytes(orjson.dumps(api))
    doc = parse_task(task / "api_conversation_history.json", task.name, "cline").to_json()
    assert _edits(doc) == [
        (
            "calls.md",
            [],
            ["# Calls", "apply_diff takes <args> with one <file> per file.", "The end."],
        ),
        ("tags.py", ["X = 1"], ['OPEN = "<args>"', 'SHUT = "</args>"']),
    ]


def test_a_file_saved_after_another_file_s_error_is_read(tmp_path: Path) -> None:
    """The joined result begins with the first file's error: the call as a whole
    looks failed, yet the second file was saved."""
    call = (
        "<apply_diff>\n<args>\n<file><path>a.py</path><diff><content>\n<<<<<<< SEARCH\nA = 1\n"
        "=======\nA = 2\n>>>>>>> REPLACE\n</content></diff></file>\n<file><path>b.py</path><diff>"
        "<content>\n<<<<<<< SEARCH\nB = 1\n=======\nB = 2\n>>>>>>> REPLACE\n</content></diff></file>"
        "\n</args>\n</apply_diff>"
    )
    result = (
        "Error processing a.py: EACCES\n\n<file_write_result>\n<path>b.py</path>\n"
        "<operation>modified</operation>\n</file_write_result>"
    )
    env = "<environment_details>\n# Current Workspace Directory (/srv/app) Files\n</environment_details>"
    api = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nx\n</task>\n" + env}]},
        {"role": "assistant", "content": [{"type": "text", "text": call}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[apply_diff for 'a.py' and 1 more file] Result:"},
                {"type": "text", "text": result},
            ],
        },
    ]
    session = parse_task(_task(tmp_path, api), "t", "roo-code")
    assert [(e.path, e.added) for e in session.edits] == [("/srv/app/b.py", ["B = 2"])]


@pytest.mark.parametrize(
    ("result", "saved"),
    [
        # an earlier file's error first, then another file saved
        (
            "<error_details>\nDiff 1 failed for file: a.py\n</error_details>\n\n<file_write_result>"
            "\n<path>b &amp; c.py</path>\n<operation>modified</operation>\n</file_write_result>",
            {"b & c.py"},
        ),
        (
            '{"path":"a.py","operation":"modified","notice":"x"}\n\nChanges to b.py were not approved by user',
            {"a.py"},
        ),
        ("The user denied this operation.", set()),
        ("<file_write_result>\n<path>a.py", set()),  # cut short: no closing tag, no path
    ],
)
def test_which_files_a_result_saved(result: str, saved: set[str]) -> None:
    assert saved_paths(result) == saved


def test_native_files_and_a_diff_cut_short() -> None:
    got = call_files({"files": [{"path": "a.py", "diff": "d"}, {"path": 5}, "x"]})
    assert [(f.path, f.diffs) for f in got or []] == [("a.py", ["d"]), (None, []), (None, [])]
    cut = xml_files("<file><path>a.py</path><diff><content>\n<<<<<<< SEARCH\nx\n=======\ny")
    assert [(f.path, f.diffs) for f in cut] == [("a.py", ["<<<<<<< SEARCH\nx\n=======\ny"])]
    assert call_files({"path": "a.py", "diff": "d"}) is None


@pytest.mark.parametrize(
    "hostile",
    [
        "<file><path>" * 200_000,
        "<file>" + "<content>" * 200_000,
        "<path>a</path>" + "<file><path>b</path><diff><content>x" * 100_000,
        "<file_write_result><path>" * 200_000,
    ],
)
def test_multi_file_arguments_are_read_in_linear_time(hostile: str) -> None:
    import time

    started = time.process_time()
    xml_files(hostile)
    saved_paths(hostile)
    xml_call("<apply_diff><args>" + hostile)
    assert time.process_time() - started < 2.0


# -- the two generations of calls -------------------------------------------------------------


def test_older_results_come_as_a_header_then_a_block(cline: dict[str, Any]) -> None:
    """``[replace_in_file for 'label.py'] Result:`` alone, its result the next block."""
    assert ("label.py", ["    return p.id"], ['    return f"{p.id} ({p.weight} kg)"']) in _edits(
        cline[XML]
    )


def test_an_xml_call_ends_at_its_last_closing_tag() -> None:
    text = (
        "Writing it.\n<write_to_file>\n<path>a.html</path>\n<content>\n<p>x</p>\n"
        "</content> inside\n</content>\n</write_to_file>"
    )
    name, args, start = xml_call(text)  # type: ignore[misc]
    assert (name, args["path"], text[:start]) == ("write_to_file", "a.html", "Writing it.\n")
    assert args["content"] == "<p>x</p>\n</content> inside\n"


def test_a_second_call_in_the_message_is_no_part_of_the_first() -> None:
    """Cline runs the first call of a message and ends it at its first closing tag; the
    second call (not run) must not become lines of the first one's file (review 10, #2)."""
    text = (
        "Two files.\n<write_to_file>\n<path>src\\a.py</path>\n<content>\nA = 1\n</content>\n"
        "</write_to_file>\n\n<write_to_file>\n<path>src\\b.py</path>\n<content>\nB = 2\n"
        "</content>\n</write_to_file>"
    )
    name, args, _start = xml_call(text)  # type: ignore[misc]
    assert (name, args["path"], args["content"]) == ("write_to_file", "src\\a.py", "A = 1\n")


@pytest.mark.parametrize(
    "hostile",
    [
        "<task>" * 200_000,  # the person's words: openings never closed
        "<feedback><task>" * 100_000,
        "<write_to_file>" + "<path>" * 200_000,  # an XML call's short parameters
        "<read_file>" + "<command>x" * 100_000 + "</path>",
        "# Workspace Configuration\n{" * 100_000,
        "# Current Working Directory (x" * 100_000,
    ],
)
def test_hostile_tags_are_read_in_linear_time(hostile: str) -> None:
    """Text that opens a tag again and again and never closes it (a file the agent read
    can put it in a result): each was quadratic, 13 s for 120 KB (review 10, #1)."""
    import time

    from deja_blame.transcripts.builder import SessionBuilder
    from deja_blame.transcripts.cline.reader import _words, read_environment

    started = time.process_time()
    _words(hostile)
    xml_call(hostile)
    read_environment(SessionBuilder("s", "t", "cline"), [hostile])
    assert time.process_time() - started < 2.0


def test_the_person_s_changes_to_a_proposal_stay_theirs(cline: dict[str, Any]) -> None:
    """ "The user made the following updates": the proposal is recorded (it ran), so the
    line the person rewrote does not match it and stays the person's."""
    (labels,) = [e for e in _edits(cline[XML]) if e[0] == "LABELS.md"]
    assert "Each label shows the weight." in labels[2]
    assert "Each label shows the weight in kg." not in labels[2]


@pytest.mark.parametrize(
    ("diff", "pairs"),
    [
        ("------- SEARCH\na\n=======\nb\n+++++++ REPLACE", [("a", "b")]),
        (
            "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n\n<<<<<<< SEARCH\nc\n=======\n"
            "d\n>>>>>>> REPLACE",
            [("a", "b"), ("c", "d")],
        ),
        ("<<<<<<< SEARCH\n:start_line:4\n-------\na\n=======\nb\n>>>>>>> REPLACE", [("a", "b")]),
        ("<<<<<<< SEARCH\na\n\\=======\n=======\nb\n>>>>>>> REPLACE", [("a\n=======", "b")]),
        ("------- SEARCH\na\n=======\nb", [("a", "b")]),  # cut short after its divider
        ("just text", []),
    ],
)
def test_search_replace_blocks(diff: str, pairs: list[tuple[str, str]]) -> None:
    assert search_replace_pairs(diff) == pairs


# -- the person's words -------------------------------------------------------------------------


def test_the_person_s_words_and_no_one_else_s(cline: dict[str, Any]) -> None:
    """The task, feedback on a denied call and on a completion; never a ``<feedback>``
    in a file read or in the saved file's content, nor the environment."""
    assert _said(cline[NATIVE]) == [
        "Refuse parcels heavier than the limit",
        "No tests yet, I will write them",
    ]
    assert _said(cline[XML]) == ["Print the weight on each label", "Also round the weight"]
    assert _said(cline[XML], "assistant") == [
        "I will add the weight to the label.",  # its <thinking> left out
        "Now a note for the docs.",
        "Labels show the weight.",  # attempt_completion's result
    ]


def test_roo_user_message_blocks(tmp_path: Path) -> None:
    roo = read_all("roo-code", tmp_path)[ROO_NATIVE]
    assert _said(roo) == ["Send heavy parcels by freight", "the failure is expected, leave it"]


# -- times ---------------------------------------------------------------------------------------


def test_times_from_the_ui_messages_by_conversation_index(cline: dict[str, Any]) -> None:
    """UI messages of index k made message k+1: the diff's result (message 4) at the
    first UI message of index 3, in ms; the command's at index 9's."""
    doc = cline[NATIVE]
    assert doc["edits"][0]["at"] == "2026-12-01T09:01:00Z"
    assert doc["started_at"] == "2026-12-01T09:00:00.100Z"
    assert doc["commands"][0]["at"] == "2026-12-01T09:02:55Z"


def test_times_from_the_environment_without_ui_messages(cline: dict[str, Any]) -> None:
    assert [e["at"] for e in cline[XML]["edits"]] == [
        "2026-11-30T14:01:10Z",
        "2026-11-30T14:02:40Z",
    ]


# the shapes below are what JavaScript's Intl.DateTimeFormat(locale, {..., hour12: true})
# writes for each locale (Node 22, ICU 78), followed by Cline's zone and offset
@pytest.mark.parametrize(
    ("line", "at"),
    [
        ("12/7/2026, 9:04:05 PM (America/New_York, UTC-5:00)", None),  # en-US, or ta, cy, sw
        ("12/17/2026, 9:04:05 PM (America/New_York, UTC-5:00)", "2026-12-18T02:04:05Z"),  # en-US
        ("7.12.2026, 9:04:05 PM (Europe/Berlin, UTC+1:00)", "2026-12-07T20:04:05Z"),  # de
        ("07/12/2026 9:04:05 PM (Europe/Paris, UTC+1:00)", None),  # fr: 7 Dec or 12 Jul?
        ("13/12/2026 9:04:05 AM (Europe/Paris, UTC+1:00)", "2026-12-13T08:04:05Z"),  # fr, settled
        ("2026/12/7 午後9:04:05 (Asia/Tokyo, UTC+9:00)", "2026-12-07T12:04:05Z"),  # ja
        ("2026/3/9 上午9:04:05 (Asia/Shanghai, UTC+8:00)", "2026-03-09T01:04:05Z"),  # zh
        ("2026. 12. 7. PM 9:04:05 (Asia/Seoul, UTC+9:00)", "2026-12-07T12:04:05Z"),  # ko
        ("2026. 03. 09. de. 9:04:05 (Europe/Budapest, UTC+1:00)", "2026-03-09T08:04:05Z"),  # hu
        ("9. 3. 2026 9:04:05 odp. (Europe/Prague, UTC+1:00)", "2026-03-09T20:04:05Z"),  # cs
        ("9.3.2026 klo 9.04.05 ap. (Europe/Helsinki, UTC+2:00)", "2026-03-09T07:04:05Z"),  # fi
        ("9.3.2026 г., 9:04:05 ч. pm (Europe/Sofia, UTC+2:00)", "2026-03-09T19:04:05Z"),  # bg
        ("9-3-2026, 9:04:05 p.m. (Europe/Amsterdam, UTC+1:00)", "2026-03-09T20:04:05Z"),  # nl
        ("2026-03-09 9:04:05 fm (Europe/Stockholm, UTC+1:00)", "2026-03-09T08:04:05Z"),  # sv
        ("9\u200f/3\u200f/2026، 9:04:05 م (Asia/Riyadh, UTC+3:00)", None),  # ar: slashes, unsettled
        ("9.3.2026, 21:04:05 (Europe/Berlin, UTC+1:00)", "2026-03-09T20:04:05Z"),  # 24-hour clock
        ("9.3.2026, 9:04:05 AM (Asia/Kolkata, UTC+5.5:00)", "2026-03-09T03:34:05Z"),  # older Cline
        ("9.3.2026, 9:04:05 AM (America/St_Johns, UTC-3.5:00)", "2026-03-09T12:34:05Z"),
        ("9.3.2026, 9:04:05 AM (Asia/Kolkata, UTC+5:30)", "2026-03-09T03:34:05Z"),  # Roo's offset
        ("9.3.2026, 9:04:05 AM", None),  # no offset: the zone is unknown
        ("9.3.2026, 9:04:05 vorm.x (Europe/Berlin, UTC+1:00)", None),  # a word not known
        ("9.3.2026, 13:04:05 PM (Europe/Berlin, UTC+1:00)", None),  # no such clock
        ("۱۴۰۴/۱۲/۱۸, ۹:۰۴:۰۵ ق.ظ. (Asia/Tehran, UTC+3.5:00)", None),  # Persian digits, calendar
        ("19/3/2569 9:04:05 AM (Asia/Bangkok, UTC+7:00)", None),  # the Buddhist era's year
        ("9.3.2026, 12:30:00 AM (UTC, UTC+0:00)", "2026-03-09T00:30:00Z"),  # after midnight
        ("9.3.2026, 12:30:00 PM (UTC, UTC+0:00)", "2026-03-09T12:30:00Z"),  # after noon
        ("2026-03-09 9 h 04 min 05 s a.m. (America/Toronto, UTC-5:00)", None),  # fr-CA's clock
        ("31.2.2026, 9:04:05 AM (Europe/Berlin, UTC+1:00)", None),  # no such day
        ("Current time in ISO 8601 UTC format: 2026-05-06T07:08:09.000Z", "2026-05-06T07:08:09Z"),
    ],
)
def test_current_time_in_any_locale(line: str, at: str | None) -> None:
    """Read when the text alone settles it; else None, never a guess."""
    assert current_time([f"<environment_details>\n# Current Time\n{line}\n"]) == at


def _clocked(times: list[str], ui: list[Any] | None, tmp_path: Path, task: str) -> Any:
    """A task whose writes are timed only by their environments' ``# Current Time``."""
    api: list[Any] = []
    for i, line in enumerate(times):
        env = f"<environment_details>\n# Current Time\n{line}\n\n# Current Working Directory (/srv/app) Files\n</environment_details>"
        words = [{"type": "text", "text": "<task>\nx\n</task>"}] if i == 0 else []
        result = (
            [{"type": "tool_result", "tool_use_id": f"t{i - 1}", "content": "saved"}] if i else []
        )
        api.append({"role": "user", "content": [*result, *words, {"type": "text", "text": env}]})
        call = {"path": f"f{i}.py", "content": f"N = {i}\n"}
        api.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": f"t{i}", "name": "write_to_file", "input": call}
                ],
            }
        )
    api.append(
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": f"t{len(times) - 1}", "content": "saved"}
            ],
        }
    )
    folder = tmp_path / task
    folder.mkdir()
    (folder / "api_conversation_history.json").write_bytes(orjson.dumps(api))
    ui_path = None
    if ui is not None:
        ui_path = folder / "ui_messages.json"
        ui_path.write_bytes(orjson.dumps(ui))
    return parse_task(folder / "api_conversation_history.json", task, "cline", ui_path)


def test_another_date_of_the_task_settles_its_slashes(tmp_path: Path) -> None:
    """One machine, one locale: 13/12 says day first for the 7/12 before it."""
    times = [
        "7/12/2026, 9:00:00 AM (Asia/Kolkata, UTC+5:30)",
        "13/12/2026, 9:00:00 AM (Asia/Kolkata, UTC+5:30)",
    ]
    session = _clocked(times, None, tmp_path, "a-task")
    assert session.started_at == "2026-12-07T03:30:00Z"
    assert [e.at for e in session.edits] == ["2026-12-13T03:30:00Z", "2026-12-13T03:30:00Z"]
    assert session.skipped_lines == 0


@pytest.mark.parametrize(
    ("task", "ui", "first"),
    [
        ("1796630400000", None, "2026-12-07T08:00:00Z"),  # Cline's task id: when it began
        ("a-task", [{"ts": 1796630400000, "type": "say", "say": "text"}], "2026-12-07T08:00:00Z"),
        ("1783843200000", None, "2026-07-12T08:00:00Z"),  # began in July: month first
    ],
)
def test_when_the_task_began_settles_its_slashes(
    tmp_path: Path, task: str, ui: list[Any] | None, first: str
) -> None:
    session = _clocked(["7/12/2026, 9:00:00 AM (Europe/London, UTC+1:00)"], ui, tmp_path, task)
    assert [e.at for e in session.edits] == [first]
    assert session.skipped_lines == 0


def test_an_unsettled_date_is_a_skipped_line_not_a_guess(tmp_path: Path) -> None:
    """Nothing says whether 7/12 is July or December: each such environment is one
    skipped line, and its write takes the time before it (none here)."""
    times = [
        "7/12/2026, 9:00:00 AM (Asia/Kolkata, UTC+5:30)",
        "7/12/2026, 9:05:00 AM (Asia/Kolkata, UTC+5:30)",
    ]
    session = _clocked(times, None, tmp_path, "a-task")
    assert [e.at for e in session.edits] == [None, None]
    assert session.skipped_lines == 2


@pytest.mark.parametrize(
    "hostile",
    [
        "# Current Time\n" + "1/1/2026, 1:00:00 " * 300_000,
        "# Current Time\n" + "UTC+1" * 300_000,
        "# Current Time\n" * 300_000,
        "# Current Time\n" + " " * 3_000_000 + "x",
    ],
)
def test_a_hostile_current_time_costs_nothing(hostile: str) -> None:
    import time

    started = time.process_time()
    current_time([hostile])
    assert time.process_time() - started < 0.5


def test_roo_message_ts_wins(tmp_path: Path) -> None:
    roo = read_all("roo-code", tmp_path)[ROO_NATIVE]
    assert [e["at"] for e in roo["edits"]] == ["2026-12-02T08:00:20Z", "2026-12-02T08:00:40Z"]


# -- projects ----------------------------------------------------------------------------------


def _task(tmp_path: Path, api: list[Any], ui: list[Any] | None = None) -> Path:
    folder = tmp_path / "tasks" / "1796000000000"
    folder.mkdir(parents=True)
    (folder / "api_conversation_history.json").write_bytes(orjson.dumps(api))
    if ui is not None:
        (folder / "ui_messages.json").write_bytes(orjson.dumps(ui))
    return folder / "api_conversation_history.json"


def _one_write(environment: str, path: str) -> list[Any]:
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<task>\nx\n</task>"},
                {"type": "text", "text": environment},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "write_to_file",
                    "input": {"path": path, "content": "A = 1\n"},
                }
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "saved"}],
        },
    ]


def test_a_windows_project_and_its_relative_paths(tmp_path: Path) -> None:
    env = "<environment_details>\n# Current Working Directory (c:\\Users\\ana\\shop) Files\n</environment_details>"
    session = parse_task(_task(tmp_path, _one_write(env, "src\\app.py")), "t", "cline")
    assert session.project == "C:/Users/ana/shop"
    assert [e.path for e in session.edits] == ["C:/Users/ana/shop/src/app.py"]


def test_a_task_from_another_machine(tmp_path: Path) -> None:
    """Its folder is not here: the project is the folder as written, not a guess."""
    env = "<environment_details>\n# Current Working Directory (/home/bo/far/shop) Files\n</environment_details>"
    session = parse_task(_task(tmp_path, _one_write(env, "a.py")), "t", "cline")
    assert (session.project, session.edits[0].path) == (
        "/home/bo/far/shop",
        "/home/bo/far/shop/a.py",
    )


def test_the_workspace_configuration_names_the_folder(tmp_path: Path) -> None:
    env = (
        "<environment_details>\n# Workspace Configuration\n"
        '{"workspaces": {"/srv/app": {"hint": "app", "latestGitCommitHash": "abc"}}}\n'
        "</environment_details>"
    )
    session = parse_task(_task(tmp_path, _one_write(env, "a.py")), "t", "cline")
    assert session.project == "/srv/app"


# -- broken files -------------------------------------------------------------------------------


def test_broken_ui_messages_lose_only_their_times(tmp_path: Path) -> None:
    env = "<environment_details>\n# Current Working Directory (/srv/app) Files\n</environment_details>"
    path = _task(tmp_path, _one_write(env, "a.py"))
    (path.parent / "ui_messages.json").write_bytes(b'[{"ts": 17960')
    session = parse_task(path, "t", "cline", path.parent / "ui_messages.json")
    assert [e.path for e in session.edits] == ["/srv/app/a.py"]
    assert session.skipped_lines == 1


def test_a_truncated_or_other_conversation_is_one_problem(tmp_path: Path) -> None:
    path = _task(tmp_path, [])
    tf = TranscriptFile("t", path, tmp_path, "cline")
    path.write_bytes(b'[{"role": "user", "content": [')
    with pytest.raises(IncompleteTranscript):
        read_session(tf)
    path.write_bytes(b'{"role": "user"}')
    with pytest.raises(MalformedTranscript, match="not a Cline transcript"):
        read_session(tf)
    path.write_bytes(b'[1, "x", {"role": "assistant", "content": 5}, {"role": "user"}]')
    assert read_session(tf).edits == []


# -- where the tasks are --------------------------------------------------------------------------


@pytest.mark.parametrize("agent", ["cline", "roo-code", "kilo-code"])
def test_found_in_every_default_root_under_a_fresh_home(agent: str, tmp_path: Path) -> None:
    """Every editor's store (Linux, macOS, Windows, remote windows) and Cline's own."""
    home = tmp_path / "home"
    env = {"HOME": str(home), "APPDATA": str(tmp_path / "roaming")}
    a = agent_named(agent)
    roots = a.roots(env, home)
    assert len(roots) >= 19
    for i, root in enumerate(roots):
        task = root / "tasks" / f"17960000000{i:02d}"
        task.mkdir(parents=True)
        (task / "api_conversation_history.json").write_text("[]")
    found = discover([agent], env=env, home=home)
    assert sorted(tf.path.parents[2] for tf in found) == sorted(roots)
    assert {tf.agent for tf in found} == {agent}


def test_the_ui_messages_are_a_part_of_the_session(tmp_path: Path) -> None:
    """A change to either file reads the task again; ``deja parse`` reads both."""
    env = "<environment_details>\n# Current Working Directory (/srv/app) Files\n</environment_details>"
    ui = [{"ts": 1796000005000, "type": "say", "say": "text", "conversationHistoryIndex": 1}]
    path = _task(tmp_path, _one_write(env, "a.py"), ui)
    (tf,) = discover(["cline"], env={"DEJA_CLINE_ROOT": str(tmp_path)})
    assert tf.parts == (path.parent / "ui_messages.json",)
    before = tf.stat_key()
    (path.parent / "ui_messages.json").write_bytes(orjson.dumps([*ui, *ui]))
    assert tf.stat_key() != before
    doc = orjson.loads(deja("parse", str(path), "--json").stdout)
    assert doc["edits"][0]["at"] == "2026-11-30T00:53:25Z"  # the UI message's time


def test_a_copy_elsewhere_is_told_by_its_environment(tmp_path: Path) -> None:
    cline_env = (
        "<environment_details>\n# Current Working Directory (/a) Files\n</environment_details>"
    )
    roo_env = (
        "<environment_details>\n# Current Workspace Directory (/a) Files\n</environment_details>"
    )
    for name, env in (("one", cline_env), ("two", roo_env)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "api_conversation_history.json").write_bytes(
            orjson.dumps(_one_write(env, "a.py"))
        )
    assert guess_agent(tmp_path / "one" / "api_conversation_history.json") == "cline"
    assert guess_agent(tmp_path / "two" / "api_conversation_history.json") == "roo-code"


def test_a_linked_task_folder_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "api_conversation_history.json").write_text("[]")
    (tmp_path / "store" / "tasks").mkdir(parents=True)
    os.symlink(elsewhere, tmp_path / "store" / "tasks" / "1796000000000")
    assert discover(["roo-code"], env={"DEJA_ROO_CODE_ROOT": str(tmp_path / "store")}) == []


def test_no_handoff_to_an_editor_extension_says_why(tmp_path: Path) -> None:
    run = deja("handoff", "--to", "roo", "--print", cwd=tmp_path, check=False)
    assert run.returncode != 0
    assert b"Roo Code has no command line to start a session" in run.stderr


def test_a_task_copied_below_any_folder_is_found_but_a_store_is_not_walked(
    tmp_path: Path,
) -> None:
    """``--root ~/backup``: the tasks below it, at any depth. An extension's store
    with no ``tasks/`` yet is not walked (Cline keeps a browser there: thousands of
    files)."""
    env = "<environment_details>\n# Current Working Directory (/srv/app) Files\n</environment_details>"
    deep = tmp_path / "backup" / "old-laptop" / "1796000000000"
    deep.mkdir(parents=True)
    (deep / "api_conversation_history.json").write_bytes(orjson.dumps(_one_write(env, "a.py")))
    (deep / "ui_messages.json").write_text("[]")
    (tf,) = discover(["cline"], env={"DEJA_CLINE_ROOT": str(tmp_path / "backup")})
    assert (tf.session_id, tf.parts) == ("1796000000000", (deep / "ui_messages.json",))
    store = tmp_path / "saoudrizwan.claude-dev"
    (store / "puppeteer" / "1796000000000").mkdir(parents=True)
    (store / "puppeteer" / "1796000000000" / "api_conversation_history.json").write_text("[]")
    assert discover(["cline"], env={"DEJA_CLINE_ROOT": str(store)}) == []


# -- what a non-Claude model's text became on disk ------------------------------------------

ESCAPED_WRITE = "if a &lt; b &amp;&amp; c &gt; 0:\n    print(&quot;it&#39;s &#91;ok&#93;&quot;)\n"
SAVED_WRITE = ["if a < b && c > 0:", '    print("it\'s [ok]")']
ESCAPED_DIFF = "<<<<<<< SEARCH\nx = a &gt; b\n=======\nx = a &gt;= b &amp;&amp; keep(&amp;lt;)\n>>>>>>> REPLACE"


def _task_with_model(tmp_path: Path, agent: str, model: str | None, name: str = "a.py") -> Any:
    """A task whose model wrote HTML entities: a write, a diff, a command (native calls)."""
    env = "<environment_details>\n# Current Workspace Directory (/srv/app) Files\n</environment_details>"
    calls = [
        ("w", "write_to_file", {"path": name, "content": ESCAPED_WRITE, "line_count": 2}),
        ("d", "apply_diff", {"path": "b.py", "diff": ESCAPED_DIFF}),
        ("c", "execute_command", {"command": "test 1 &lt; 2 &amp;&amp; echo ok"}),
    ]
    api: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nfix\n</task>\n" + env}]}
    ]
    for cid, tool, args in calls:
        said: dict[str, Any] = {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": cid, "name": tool, "input": args}],
        }
        if model is not None:
            said["modelInfo"] = {"modelId": model}
        api.append(said)
        api.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": cid, "content": "saved"}],
            }
        )
    task = tmp_path / agent / "tasks" / "1796000000000"
    task.mkdir(parents=True)
    (task / "api_conversation_history.json").write_bytes(orjson.dumps(api))
    return parse_task(task / "api_conversation_history.json", task.name, agent).to_json()


@pytest.mark.parametrize("agent", ["roo-code", "kilo-code"])
@pytest.mark.parametrize("model", ["deepseek-chat", "openrouter/google/gemini-2.5-pro"])
def test_roo_saves_a_non_claude_model_s_text_unescaped(
    tmp_path: Path, agent: str, model: str
) -> None:
    """Roo Code (and Kilo Code, its fork) unescape HTML entities in write_to_file's
    content and apply_diff's diff before saving when the model's id does not contain
    "claude" (the conversation keeps the model's text): the lines on disk are those."""
    doc = _task_with_model(tmp_path, agent, model)
    assert _edits(doc) == [
        ("a.py", [], SAVED_WRITE),
        ("b.py", ["x = a > b"], ["x = a >= b && keep(&lt;)"]),  # &amp; last, as Roo does
    ]
    assert [c["command"] for c in doc["commands"]] == ["test 1 < 2 && echo ok"]


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "anthropic/claude-3.7-sonnet", None])
def test_a_claude_model_s_text_or_an_unknown_model_s_is_saved_as_written(
    tmp_path: Path, model: str | None
) -> None:
    doc = _task_with_model(tmp_path, "roo-code", model)
    assert _edits(doc)[0] == ("a.py", [], ESCAPED_WRITE.splitlines())
    # Roo unescapes every model's command
    assert [c["command"] for c in doc["commands"]] == ["test 1 < 2 && echo ok"]


def test_cline_unescapes_a_non_claude_model_s_text_but_in_xml_files(tmp_path: Path) -> None:
    doc = _task_with_model(tmp_path, "cline", "deepseek-chat")
    # Cline's own list: no brackets; its command is kept as written
    assert _edits(doc)[0] == (
        "a.py",
        [],
        ["if a < b && c > 0:", '    print("it&#39;s &#91;ok&#93;")'],
    )
    assert _edits(doc)[1] == ("b.py", ["x = a > b"], ["x = a >= b && keep(&lt;)"])
    assert [c["command"] for c in doc["commands"]] == ["test 1 &lt; 2 &amp;&amp; echo ok"]
    xml = _task_with_model(tmp_path / "x", "cline", "deepseek-chat", name="layout.xml")
    assert _edits(xml)[0] == ("layout.xml", [], ESCAPED_WRITE.splitlines())


def test_a_multi_file_diff_from_a_non_claude_model_is_unescaped(tmp_path: Path) -> None:
    call = (
        "<apply_diff>\n<args>\n<file>\n<path>m.py</path>\n<diff>\n<content>\n"
        "<<<<<<< SEARCH\nok = a &lt; b\n=======\nok = a &lt;= b\n>>>>>>> REPLACE\n"
        "</content>\n</diff>\n</file>\n</args>\n</apply_diff>"
    )
    env = "<environment_details>\n# Current Workspace Directory (/srv/app) Files\n</environment_details>"
    result = "<file_write_result>\n<path>m.py</path>\n<operation>modified</operation>\n</file_write_result>"
    api: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nm\n</task>\n" + env}]},
        {
            "role": "assistant",
            "modelInfo": {"modelId": "qwen3-coder"},
            "content": [{"type": "text", "text": call}],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[apply_diff for 'm.py'] Result:"},
                {"type": "text", "text": result},
            ],
        },
    ]
    task = tmp_path / "tasks" / "1796000000000"
    task.mkdir(parents=True)
    (task / "api_conversation_history.json").write_bytes(orjson.dumps(api))
    doc = parse_task(task / "api_conversation_history.json", task.name, "roo-code").to_json()
    assert _edits(doc) == [("m.py", ["ok = a < b"], ["ok = a <= b"])]
