"""Stage 5b: deja in the editor (the language server)."""
