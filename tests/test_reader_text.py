"""The reader's text helpers that replaced regular expressions for speed, held to the originals.

``find_diff_blocks`` and ``strip_step_header`` walk strings with ``str.find``
because the regular expressions they replace stepped through megabyte bodies a
character (or a split line) at a time. These properties check that they find
exactly what the originals found, on text built from the markers and the
characters that decide where a block or a header ends.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deja_blame.models import Hunk
from deja_blame.transcripts import patterns as P
from deja_blame.transcripts.diffblock import (
    _parse_plain,
    _parse_unified_simple,
    _parse_with_unidiff,
    find_diff_blocks,
    parse_diff_block,
)
from deja_blame.transcripts.text import int64, int64_text, strip_step_header

# What the reader used before find_diff_blocks.
DIFF_BLOCK_RE = re.compile(r"\[diff_block_start\]\n?(.*?)\n?\[diff_block_end\]", re.DOTALL)

_pieces = st.sampled_from(
    [
        "[diff_block_start]",
        "[diff_block_end]",
        "\n",
        "\n\n",
        "+a",
        "-b",
        " c",
        "@@ -1 +1 @@",
        "[diff_block_",
        "x",
        " ",
    ]
)
_bodies = st.lists(_pieces, max_size=24).map("".join)


@settings(max_examples=1500)
@given(_bodies)
def test_find_diff_blocks_equals_the_regex(body: str) -> None:
    expected = [(m.start(), m.group(1)) for m in DIFF_BLOCK_RE.finditer(body)]
    assert find_diff_blocks(body) == expected


def test_find_diff_blocks_examples() -> None:
    body = (
        "The following changes were made ...\n[diff_block_start]\n@@ -1 +1 @@\n-a\n+b\n"
        "[diff_block_end]\ntext\n[diff_block_start][diff_block_end][diff_block_start]\nopen"
    )
    blocks = find_diff_blocks(body)
    assert [text for _, text in blocks] == ["@@ -1 +1 @@\n-a\n+b", ""]
    assert body[blocks[0][0] :].startswith("[diff_block_start]\n@@")


def _strip_step_header_by_lines(content: str) -> str:
    """What the reader used before: split every line, skip the header ones, join the rest."""
    lines = content.split("\n")
    i = 0
    while i < len(lines) and (P.STEP_HEADER.match(lines[i]) or (i == 0 and not lines[i].strip())):
        i += 1
    return "\n".join(lines[i:]).strip()


_header_pieces = st.sampled_from(
    [
        "Created At: 2026-07-17T12:00:03+03:00",
        "Completed At: 2026-07-17T12:00:04+03:00",
        "  Created At:",
        "\tCompleted At: x",
        "Created at: lower case is not a header",
        "",
        " ",
        "\t",
        "output line",
        "Output:",
    ]
)
_contents = st.lists(_header_pieces, max_size=8).map("\n".join)


@settings(max_examples=1500)
@given(_contents)
def test_strip_step_header_equals_the_line_split(content: str) -> None:
    assert strip_step_header(content) == _strip_step_header_by_lines(content)


def test_strip_step_header_examples() -> None:
    assert strip_step_header("Created At: a\nCompleted At: b\nhello\n") == "hello"
    assert strip_step_header("\nCreated At: a\n\nbody") == "body"
    assert strip_step_header("Created At: a") == ""
    assert strip_step_header("body\nCreated At: a") == "body\nCreated At: a"


def _parse_plain_before(lines: list[str]) -> list[Any]:
    """The plain diff reader before its one-test-per-line rewrite (positions moved past
    the context lines before a hunk's first change, as the reader now gives them)."""
    hunks: list[Any] = []
    current = Hunk(removed=[], added=[])
    skip_next_plus = False
    context_before: list[str] = []

    def changed(h: Any) -> None:
        if not h.removed and not h.added and None not in (h.old_start, h.new_start):
            h.old_start = int64(h.old_start + len(context_before))
            h.new_start = int64(h.new_start + len(context_before))

    for i, line in enumerate(lines):
        if skip_next_plus and line.startswith("+++"):
            skip_next_plus = False
            continue
        skip_next_plus = False
        m = P.HUNK_HEADER.match(line) if line.startswith("@@") else None
        if m:
            if current.removed or current.added or current.old_start is not None:
                hunks.append(current)
            current = Hunk(
                removed=[],
                added=[],
                old_start=int64_text(m.group(1)),
                new_start=int64_text(m.group(3)),
            )
            context_before = []
            continue
        if line.startswith("---") and i + 1 < len(lines) and lines[i + 1].startswith("+++"):
            skip_next_plus = True
            continue
        if line.startswith("-"):
            changed(current)
            current.removed.append(line[1:])
        elif line.startswith("+"):
            changed(current)
            current.added.append(line[1:])
        elif line.startswith(" ") and not current.removed and not current.added:
            context_before.append(line)
    if current.removed or current.added or current.old_start is not None:
        hunks.append(current)
    return hunks


_diff_lines = st.lists(
    st.sampled_from(
        [
            "@@ -1,2 +1,3 @@",
            "@@ -7 +9 @@ def f():",
            "@@ nope",
            "--- a/x",
            "+++ b/x",
            "---",
            "+++",
            "-old",
            "+new",
            "-",
            "+",
            " ctx",
            "",
            "@",
            "x",
            "-- -",
            "++ +",
        ]
    ),
    max_size=20,
)


@settings(max_examples=2000)
@given(_diff_lines)
def test_plain_diff_reader_equals_the_line_by_line_original(lines: list[str]) -> None:
    assert _parse_plain(lines) == _parse_plain_before(lines)


# Unified blocks: a header pair, then hunks whose headers count right or wrong, and
# the lines unidiff has rules of its own for (no-newline markers, blank lines, CR).
_unified_blocks = st.builds(
    lambda head, rest, end: "\n".join([*head, *rest]) + end,
    st.sampled_from([["--- a/x", "+++ b/x"], ["--- x\t2024", "+++ x"], ["--- a", "+++ b", "x"]]),
    st.lists(
        st.sampled_from(
            [
                "@@ -1,2 +1,2 @@",
                "@@ -1,3 +1,2 @@ def f():",
                "@@ -5 +5 @@",
                "@@ -1,0 +1,1 @@",
                "@@ -3,1 +3,0 @@",
                "@@ -1,0 +1,0 @@",
                "@@ -\u0661,1 +2,1 @@",
                " ctx",
                " ",
                "-old",
                "+new",
                "-",
                "+",
                "+a\rb",
                "-x\u2028y",
                "\\ No newline at end of file",
                "",
                "--- a/y",
                "+++ b/y",
                "x",
            ]
        ),
        max_size=14,
    ),
    st.sampled_from(["", "\n", "\n\n"]),
)


@settings(max_examples=3000)
@given(_unified_blocks)
def test_the_simple_unified_reader_gives_unidiff_s_hunks(block: str) -> None:
    # where it reads a block at all, exactly what unidiff gives; else unidiff reads it
    fast = _parse_unified_simple(block.split("\n"), block.endswith("\n"))
    if fast is not None:
        assert fast == _parse_with_unidiff(block)


def test_the_simple_unified_reader_reads_the_common_block() -> None:
    block = "--- a/f.py\n+++ b/f.py\n@@ -3,4 +3,4 @@ def f():\n x\n-old\n+new\n y\n z\n@@ -20 +20,2 @@\n+one\n q"
    hunks = _parse_unified_simple(block.split("\n"), False)
    assert hunks == [
        Hunk(removed=["old"], added=["new"], old_start=4, new_start=4),
        Hunk(removed=[], added=["one"], old_start=20, new_start=20),
    ]
    assert parse_diff_block(block) == hunks == _parse_with_unidiff(block)


def test_an_oversized_line_is_skipped_counted_and_never_held_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    from deja_blame.transcripts import jsonl

    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 1024)
    good = b'{"step_index": 0, "type": "USER_INPUT"}\n'
    huge = b'{"content": "' + b"x" * 5000 + b'"}\n'
    data = good + huge + good
    reads: list[int] = []

    class Watched(io.BytesIO):
        def readline(self, size: int | None = -1) -> bytes:  # type: ignore[override]
            line = super().readline(size)
            reads.append(len(line))
            return line

    (batch,) = list(jsonl.iter_batches(Watched(data), 0, final=False))
    assert [r is None for r in batch.records] == [False, True, False]
    assert batch.spans == [
        (0, len(good)),
        (len(good), len(good) + len(huge)),
        (len(good) + len(huge), len(data)),
    ]
    assert batch.end_offset == len(data)
    assert max(reads) <= 1024  # read in pieces, never the whole line at once
    # the same line still being written (no newline yet) waits for its end
    (batch,) = list(jsonl.iter_batches(Watched(good + huge[:-1]), 0, final=False))
    assert batch.end_offset == len(good) and len(batch.records) == 1


def test_the_ide_s_notice_of_the_person_s_change_is_not_a_request(tmp_path: Any) -> None:
    import orjson

    from deja_blame.transcripts import parse_transcript

    notice = (
        "The following changes were made by the USER to: /home/u/shop/a.py. If relevant,"
        " proactively run terminal commands to execute this code for the USER. Don't ask for"
        " permission.\n[diff_block_start]\n@@ -1,1 +1,1 @@\n-x = 1\n+x = 2\n[diff_block_end]"
    )
    records = [
        {
            "step_index": 0,
            "source": "USER_EXPLICIT",
            "type": "USER_INPUT",
            "status": "DONE",
            "created_at": "2026-07-23T08:00:00Z",
            "content": "Fix the cart.",
        },
        {
            "step_index": 1,
            "source": "USER_EXPLICIT",
            "type": "USER_INPUT",
            "status": "DONE",
            "created_at": "2026-07-23T08:01:00Z",
            "content": notice,
        },
        {
            "step_index": 2,
            "source": "USER_EXPLICIT",
            "type": "USER_INPUT",
            "status": "DONE",
            "created_at": "2026-07-23T08:02:00Z",
            "content": notice + "\n\nNow round it to cents.",
        },
    ]
    path = tmp_path / "transcript.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    session = parse_transcript(path)
    requests = [m.text for m in session.messages if m.role == "user"]
    assert requests == ["Fix the cart.", "Now round it to cents."]
    # the change itself is still read: the person's edit of a.py, twice
    assert [(e.path, e.source) for e in session.edits] == [("/home/u/shop/a.py", "user")] * 2


@settings(max_examples=2000)
@given(
    st.one_of(
        st.builds(
            lambda y, mo, d, h, mi, s, tail: (
                f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}{tail}"
            ),
            st.integers(1, 9999),
            st.integers(0, 13),
            st.integers(0, 32),
            st.integers(0, 24),
            st.integers(0, 60),
            st.integers(0, 60),
            st.sampled_from(["Z", "z", "+02:00", ".5Z", ".123456Z", "", " "]),
        ),
        st.text(max_size=24),
    )
)
def test_epoch_of_is_the_full_parse_s_epoch(text: str) -> None:
    from deja_blame.transcripts.text import epoch_of, normalise_time

    assert epoch_of(text) == (normalise_time(text)[1] if text else None)


@settings(max_examples=3000)
@given(
    st.one_of(
        st.builds(
            lambda y, mo, d, h, mi, s, fraction, tail: (
                f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}{fraction}{tail}"
            ),
            st.integers(1, 9999),
            st.integers(0, 13),
            st.integers(0, 32),
            st.integers(0, 24),
            st.integers(0, 60),
            st.integers(0, 60),
            st.one_of(
                st.just(""),
                st.just("."),
                st.builds(
                    lambda digits: "." + digits, st.text("0123456789", min_size=1, max_size=11)
                ),
            ),
            st.sampled_from(["Z", "Z", "Z", "z", "+00:00", "+02:00", "", " "]),
        ),
        st.text(max_size=26),
    )
)
def test_a_utc_time_read_without_a_datetime_is_the_full_parse_s(text: str) -> None:
    # normalise_time reads 2026-02-11T15:31:21.340Z (Claude Code's form) and the
    # canonical form without making a datetime: the same text, the same float
    from deja_blame.transcripts.text import normalise_time, parse_time

    assert normalise_time(text) == parse_time(text)
    assert normalise_time(text) == parse_time(text)  # the last one read, remembered


def test_a_hunk_header_past_int_digit_limit_is_no_position_not_a_crash() -> None:
    # the fuzz test's find: int() refuses 4,300+ digits (Python's guard); such a
    # position is as good as absent, as every number past 64 bits is
    huge = "1" + "0" * 5000
    block = f"--- a/src/app.py\n+++ b/src/app.py\n@@ -0,2 +{huge},3 @@\n+\n \n \n"
    (hunk,) = parse_diff_block(block) or []
    assert hunk.added == [""] and hunk.new_start is None
