"""deja blame's text columns: an agent's label is never cut inside a word deja wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from deja_blame.attribution.model import FileBlame, LineAttribution
from deja_blame.outputs.blame_text import BlameLook, print_human


def _line(n: int, source: str, session: str) -> LineAttribution:
    return LineAttribution(
        line=n, text=f"x{n} = {n}", commit=None, session=session, source=source, via="note"
    )


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("unknown", "unknown"),
        ("antigravity", "agy"),
        # newcomer 7: contin, wsurf, cp-cli, copilt, opencd
        ("continue", "continue"),
        ("windsurf", "windsurf"),
        ("copilot-cli", "copilot-cli"),
        ("copilot", "copilot"),
        ("opencode", "opencode"),
        ("a-very-long-tool-name", "a-very-long-tool-name"),  # another tool's, whole
        ("x" * 30, "x" * 23 + "…"),  # a stranger's name past 24: cut, and says so
    ],
)
def test_the_agent_column_shows_the_whole_label(
    source: str, shown: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = FileBlame(
        path="x.py",
        rev=None,
        root=str(tmp_path),
        lines=[_line(1, source, "3f2a9c1e77"), _line(2, "claude-code", "0b7c6a5200")],
    )
    print_human(result, BlameLook())
    out = capsys.readouterr().out.splitlines()
    assert f" 3f2a9c1e {shown} " in out[0]
    # the columns stay aligned: the text starts at the same place on both lines
    assert out[0].index("x1 = 1") == out[1].index("x2 = 2")


def test_the_model_column_shows_the_whole_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """newcomer 7: "claude-sonnet-4-5" was shown "claude-sonnet-4…" (the version lost)."""
    from deja_blame.attribution.model import SessionInfo

    long = "m" * 50
    result = FileBlame(
        path="x.py",
        rev=None,
        root=str(tmp_path),
        lines=[_line(1, "claude-code", "3f2a9c1e77"), _line(2, "windsurf", "0b7c6a5200")],
        sessions={
            "3f2a9c1e77": SessionInfo(
                "3f2a9c1e77", "claude-code", "-", None, None, "claude-sonnet-4-5"
            ),
            "0b7c6a5200": SessionInfo("0b7c6a5200", "windsurf", "-", None, None, long),
        },
    )
    print_human(result, BlameLook())
    out = capsys.readouterr().out.splitlines()
    assert " 3f2a9c1e claude   claude-sonnet-4-5 " in out[0]
    assert f" {'m' * 39}… " in out[1]  # a stranger's 50 characters: cut at 40, and says so
    assert out[0].index("x1 = 1") == out[1].index("x2 = 2")
