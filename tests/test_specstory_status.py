"""SpecStory's Cursor edits: a call's own status words count, the file's text in its
chunks does not (REVIEW12 F6). An ADR's context line ``Status: **Accepted**`` (or a
line ``**Apply failed**`` of a file) inside a chunk's diff was taken for the call's
status: the whole edit was lost, not even the file recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_specstory import V2, _cursor_edit, _read


@pytest.mark.parametrize(
    "context", ["Status: **Accepted**", "Status: **cancelled**", "**Apply failed**"]
)
def test_a_status_line_inside_the_chunk_is_the_files_text(tmp_path: Path, context: str) -> None:
    diff = f"@@ -1,2 +1,3 @@\n  # ADR 7: one file\n  {context}\n+ Consequences: no server to run.\n"
    doc = _read(tmp_path, V2 + "_**Assistant**_\n\n" + _cursor_edit("docs/adr-7.md", diff))
    (edit,) = doc["edits"]
    assert edit["path"] == str(tmp_path / "ws" / "docs" / "adr-7.md")
    assert edit["added"] == ["Consequences: no server to run."]


def test_the_calls_own_status_still_stops_the_edit(tmp_path: Path) -> None:
    diff = "@@ -1,1 +1,2 @@\n  Status: **Accepted**\n+ more\n"
    text = (
        V2
        + "_**Assistant**_\n\n"
        + _cursor_edit("docs/a.md", diff, "Status: **cancelled**\n\n")
        + _cursor_edit("docs/b.md", diff, "**Apply failed**\n\n")
    )
    assert _read(tmp_path, text)["edits"] == []


@pytest.mark.parametrize("when", ["9999-12-31 23:59:59-2359", "0001-01-01 00:00:00+2359"])
def test_a_time_at_the_calendars_edge_is_no_time_and_the_chat_is_read(
    tmp_path: Path, when: str
) -> None:
    """REVIEW12 F1: the offset moved the time past year 9999 or before year 1, and the
    OverflowError lost the whole chat; now that time is unknown and the rest is read."""
    diff = "@@ -1,1 +1,2 @@\n  keep\n+ added\n"
    text = (
        V2
        + f"_**User ({when})**_\n\nadd a line\n\n---\n\n_**Assistant**_\n\n"
        + _cursor_edit("a.md", diff)
    )
    name = when[:10] + "_" + when[11:19].replace(":", "-") + when[19:] + "-edge.md"
    for file_name in (name, "2026-12-03_10-00-00Z-chat.md"):
        doc = _read(tmp_path / file_name, text, file_name)
        (edit,) = doc["edits"]
        assert edit["added"] == ["added"]
