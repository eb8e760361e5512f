"""Stage 3: attribution: git blame per line, matched against the index (and notes).

The names below load their modules when first used: a command that answers from
the attribution cache (``blame``'s fast path) never imports the matcher.
"""

from __future__ import annotations

# Not ``typing``'s import (a kept answer, ``printed.py``, reads ``rule_versions``
# without it): type checkers read this name as typing's own.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["FileBlame", "LineAttribution", "blame_file"]


def __getattr__(name: str) -> Any:
    if name == "blame_file":
        from deja_blame.attribution.blame import blame_file

        return blame_file
    if name in ("FileBlame", "LineAttribution"):
        from deja_blame.attribution import model

        return getattr(model, name)
    raise AttributeError(f"module 'deja_blame.attribution' has no attribute {name!r}")
