"""A question reads the notes' refs once (``notes.store.read_tips``): the cache's key,
the notes lookup's tip and git-ai's lookup are all given that read, where a cold
``deja blame`` read ``refs/notes/deja`` two or three times."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import run_deja
from test_notes_world import S1, body, make_world

from deja_blame.notes import lookup, store
from deja_blame.notes.schema import NOTES_REF


def _deja_ref_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each read of deja's notes ref (``ref_target``, wherever it is called from)."""
    reads: list[str] = []
    real = store.ref_target

    def spy(repo: Any, ref: str = NOTES_REF) -> str | None:
        if ref == NOTES_REF:
            reads.append(ref)
        return real(repo, ref)

    monkeypatch.setattr(store, "ref_target", spy)
    monkeypatch.setattr(lookup, "ref_target", spy)
    return reads


def test_a_cold_blame_reads_the_notes_ref_once(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(tmp_path, repo, monkeypatch)
    (repo / "README").write_text("base\n")
    base = world.commit("base")
    world.git("notes", "--ref", NOTES_REF, "add", "-m", "{}", base)  # the repository has notes
    world.write(S1, "app.py", body("a", 6))
    world.commit("a session")
    world.index()
    reads = _deja_ref_reads(monkeypatch)
    got = run_deja("blame", str(repo / "app.py"), "--json", "--no-refresh")
    assert got.exit_code == 0, got.output
    lines = orjson.loads(got.stdout)["lines"]
    assert [ln["session"] for ln in lines] == [S1] * 6  # computed: not the cache's answer
    assert reads == [NOTES_REF]
