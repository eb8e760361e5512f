"""A window of a file (``deja why``, ``blame -L``) keeps a session's lines moved here
from another file as the whole file does: where the window sees too few of a
session's moved lines, ``match.moves.keep_blocks`` keeps those the whole file's answer
gives the session (``blame._given_by_whole_file``, stage 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_notes_world import S1, World, make_world

# moved out of the session's file (the text left it): a move, whatever it says
HEAD = [
    "from orders.pricing import total_of_lines, rounding_mode\n",
    "from orders.storage import OrderStore, StoreUnavailable\n",
]
# copied (the session's file keeps it): one distinctive line and one of scaffolding
TAIL = [
    "    receipt = OrderStore.open(settings).render_receipt(order, rounding_mode)\n",
    "    return receipt\n",
]
FILLER = 120  # the person's lines between: more than a window's context


@pytest.fixture
def world(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return make_world(tmp_path, repo, monkeypatch)


def test_a_window_keeps_a_moved_line_the_whole_file_keeps(world: World) -> None:
    world.write(S1, "src/old.py", "".join(HEAD + ["\n", "def receipt(order):\n"] + TAIL))
    world.commit("agent work")
    person = "".join(f"step_{k} = prepare_step({k}, budget={k * 3})\n" for k in range(FILLER))
    world.person("src/old.py", "def receipt(order):\n" + "".join(TAIL))
    world.person(
        "src/new.py", "".join(HEAD) + person + "def print_receipt(order):\n" + "".join(TAIL)
    )
    moved_at = world.commit("a person moves the imports and copies the receipt")
    world.index()
    far = len(HEAD) + FILLER + 2  # the distinctive line of the tail
    window = world.sessions_by_line("src/new.py", "--rev", moved_at, "-L", f"{far},{far + 1}")
    whole = world.sessions_by_line("src/new.py", "--rev", moved_at)
    assert whole[:2] == [S1, S1]
    assert whole[far - 1 : far + 1] == [S1, S1]
    assert window == whole[far - 1 : far + 1]
