"""A session that worked outside the repository is ``-`` in notes and reports; the
words beside it said "no path is kept", which read as if deja had lost the path
that deja sessions and show print (NEWCOMER13 #6). They say what leaves it out."""

from __future__ import annotations

from deja_blame.notes.public import project_meaning


def test_elsewhere_says_notes_and_reports_leave_the_path_out() -> None:
    said = project_meaning("-")
    assert said.startswith(" (elsewhere: another clone or machine, or not known;")
    assert "notes and reports leave out paths outside the repository" in said
    assert "no path is kept" not in said
    assert project_meaning(None) == said and project_meaning(".") == " (this repository's top)"
    assert project_meaning("services/web") == ""
