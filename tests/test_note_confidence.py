"""One line, two confidences (NEWCOMER13 #1), as the README and notes-and-hooks.md say:
the index counts a line's run in the file as it is now, a note counted the runs of the
commit that brought the line. A session wrote four lines; a person later changed the
second: from the index the first is a run of one (0.75), from its commit's note it
is still one of four (0.97), and blame shows the note's where there is one."""

from __future__ import annotations

from pathlib import Path

from conftest import commit_env, deja, deja_json, git
from test_other_agents import AFTER, BEFORE, T0, _claude

ENV = {"DEJA_ANTIGRAVITY_ROOT": ""}


def _line6(repo: Path) -> dict[str, object]:
    doc = deja_json("blame", "pricing.py", "--json", cwd=repo, env={**ENV, "DEJA_NO_CACHE": "1"})
    return {k: v for k, v in doc["lines"][5].items() if k in ("session", "confidence", "via")}


def test_a_line_whose_neighbour_changed_keeps_its_note_s_confidence(repo: Path) -> None:
    (repo / "pricing.py").write_text(BEFORE)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "prices", env=commit_env(T0))
    sid = _claude(Path.home(), repo, T0 + 3600)
    (repo / "pricing.py").write_text(AFTER)
    git(repo, "commit", "-qam", "discount", env=commit_env(T0 + 7200))
    deja("index", "-q", cwd=repo, env=ENV)
    (repo / "pricing.py").write_text(AFTER.replace("subtotal > 100", "subtotal > 120"))
    git(repo, "commit", "-qam", "threshold", env=commit_env(T0 + 9000))

    assert _line6(repo) == {"session": sid, "confidence": 0.75, "via": "index"}
    deja("annotate", "HEAD~1", cwd=repo, env=ENV)  # the note of the session's commit
    assert _line6(repo) == {"session": sid, "confidence": 0.97, "via": "note"}
