"""Stage 4: attribution that travels with the repository, as git notes under refs/notes/deja."""
