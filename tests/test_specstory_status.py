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
