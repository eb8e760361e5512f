"""The git refs deja's notes and git-ai's live under: names only, so that what asks
whether they moved (the attribution cache's key, the server's watch) does not load
the notes' schema."""

from __future__ import annotations

NOTES_REF = "refs/notes/deja"
# git-ai's notes (``notes/gitai.py`` reads them)
GITAI_REF = "refs/notes/ai"
