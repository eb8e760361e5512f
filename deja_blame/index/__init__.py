"""Stage 2: the embedded SQLite index of sessions and line fingerprints."""
