"""Stage 3: attribution: git blame per line, matched against the index (and notes)."""

from deja_blame.attribution.blame import blame_file
from deja_blame.attribution.model import FileBlame, LineAttribution

__all__ = ["FileBlame", "LineAttribution", "blame_file"]
