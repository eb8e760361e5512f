"""Stage 3: attribution: git blame per line, matched against the index (and notes)."""

from deja_blame.attribution.blame import FileBlame, LineAttribution, blame_file

__all__ = ["FileBlame", "LineAttribution", "blame_file"]
