"""deja lsp: what issue 31's held-out client trial (a plain LSP client of its own,
worlds built from nothing) found that tests/test_lsp.py did not cover."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import deja
from lsp_client import LspClient
from test_lsp import SID, clients, lens_lines, start, world

__all__ = ["clients", "world"]  # fixtures, used by name


def test_the_authors_clone_with_notes_still_offers_the_hand_off(
    world: dict[str, Any], clients: list[LspClient]
) -> None:
    """With the hooks installed every committed line is read from its note first;
    the session's transcript is still on this machine, so the lens to hand it off
    must stay (it was dropped for every line a note answered)."""
    repo = world["repo"]
    deja("annotate", cwd=repo)  # what the post-commit hook does
    client = start(clients, repo)
    uri = client.open(repo / "cart.py")
    by_line = lens_lines(client.lenses(uri))
    assert list(by_line) == [5]
    assert by_line[5][0].startswith("agy 3f2a9c1e")
    hover = client.hover(uri, 6) or ""
    assert SID in hover and "from the note" in hover  # answered from the note
    assert "hand off" in by_line[5]
    handoff = client.request(
        "workspace/executeCommand", {"command": "deja.handoff", "arguments": [uri, 5]}
    )
    assert handoff["session"] == SID
    assert client.close() == 0


def test_a_note_s_session_unknown_here_gets_no_hand_off(
    world: dict[str, Any], clients: list[LspClient], tmp_path: Path
) -> None:
    """The same note read with an index that does not hold the session: no hand-off lens."""
    repo = world["repo"]
    deja("annotate", cwd=repo)
    empty = {
        "DEJA_DB": str(tmp_path / "other.db"),
        "DEJA_ANTIGRAVITY_ROOT": str(tmp_path / "nothing"),
    }
    (tmp_path / "nothing" / "brain").mkdir(parents=True)
    client = start(clients, repo, empty)
    uri = client.open(repo / "cart.py")
    by_line = lens_lines(client.lenses(uri))
    assert list(by_line) == [5]
    assert "hand off" not in by_line[5]
    assert client.close() == 0
