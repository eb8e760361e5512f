"""``alignment.blame_hunks`` aligns lines as git's own diff does (the xdiff git
blame runs), on texts that repeat lines: where Myers' alignment has choices."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest

from deja_blame.attribution.facts.alignment import Hunk, blame_hunks

_HEADER = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.M)
# few distinct lines, so most lines repeat (brackets, blank lines, the same call)
_VOCABULARY = [
    b"}",
    b"",
    b"\t}",
    b"{",
    b"    return nil",
    b"x := 1",
    b"if err != nil {",
    b"    return err",
    b"// a comment",
    b"    call(x)",
]


def _git_hunks(tmp_path: Path, old: bytes, new: bytes) -> list[Hunk]:
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(old)
    b.write_bytes(new)
    proc = subprocess.run(
        ["git", "diff", "--no-index", "--no-color", "--no-ext-diff", "-U0", "--", "a", "b"],
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    got: list[Hunk] = []
    for m in _HEADER.finditer(proc.stdout):
        a0, ac, b0, bc = m.groups()
        na = 1 if ac is None else int(ac)
        nb = 1 if bc is None else int(bc)
        got.append((int(a0) - 1 if na else int(a0), na, int(b0) - 1 if nb else int(b0), nb))
    return got


def _text(rnd: random.Random, n: int) -> list[bytes]:
    return [rnd.choice(_VOCABULARY) for _ in range(n)]


def _edit(rnd: random.Random, lines: list[bytes]) -> list[bytes]:
    out = list(lines)
    for _ in range(rnd.randint(1, 6)):
        at = rnd.randint(0, len(out))
        kind = rnd.random()
        if kind < 0.4:
            out[at:at] = _text(rnd, rnd.randint(1, 5))
        elif kind < 0.8:
            del out[at : at + rnd.randint(1, 5)]
        else:
            out[at : at + rnd.randint(1, 3)] = _text(rnd, rnd.randint(1, 3))
    return out


def _join(lines: list[bytes], newline_at_end: bool) -> bytes:
    text = b"\n".join(lines)
    return text + b"\n" if newline_at_end and lines else text


@pytest.mark.parametrize("seed", range(6))
def test_hunks_are_git_diffs(tmp_path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(25):
        # a common tail longer than xdiff's 1024-byte block, often: git cuts it
        # before aligning, which moves where repeated lines align
        tail = _text(rnd, rnd.choice([0, 5, 150, 400]))
        old = _text(rnd, rnd.randint(0, 60))
        new = _edit(rnd, old)
        ends = rnd.random() < 0.8
        old_b = _join(old + tail, ends if tail else rnd.random() < 0.8)
        new_b = _join(new + tail, ends)
        assert blame_hunks(old_b, new_b) == _git_hunks(tmp_path, old_b, new_b)


def test_edge_texts(tmp_path: Path) -> None:
    cases = [
        (b"", b"a\n"),
        (b"a\n", b""),
        (b"a", b"a\n"),
        (b"a\r\nb\r\n", b"a\nb\r\n"),
        (b"x\n" * 600 + b"y\n", b"x\n" * 599 + b"y\n"),
        (b"a\n" + b"}\n" * 2000, b"b\n" + b"}\n" * 2001),
    ]
    for old, new in cases:
        assert blame_hunks(old, new) == _git_hunks(tmp_path, old, new)


def test_the_known_pairs_are_gits_and_a_libgit2_that_differs_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The self-check's pairs are git's own answers, and an xdiff that aligns them
    otherwise (here: no indent heuristic) makes the in-process -C stand aside."""
    from deja_blame.attribution.facts import alignment

    for old, new, want in alignment._KNOWN:
        assert _git_hunks(tmp_path, old, new) == want
    assert alignment.aligns_as_git()
    alignment.aligns_as_git.cache_clear()
    from pygit2.enums import DiffOption

    monkeypatch.setattr(alignment, "_FLAGS", DiffOption.FORCE_TEXT)
    try:
        assert not alignment.aligns_as_git()
    finally:
        alignment.aligns_as_git.cache_clear()
