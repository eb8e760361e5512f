"""SEARCH/REPLACE blocks, the diffs of Cline's ``replace_in_file`` and Roo Code's
``apply_diff``: each block replaces its SEARCH text by its REPLACE text.

Cline::

    ------- SEARCH          (older: <<<<<<< SEARCH)
    old lines
    =======
    new lines
    +++++++ REPLACE         (older: >>>>>>> REPLACE)

Roo Code (and Kilo Code) put the line the search starts at, and a rule, first::

    <<<<<<< SEARCH
    :start_line:12
    -------
    old lines
    =======
    new lines
    >>>>>>> REPLACE

A marker inside the text is escaped with a backslash (``\\=======``). A last block
cut short after its ``=======`` (the model stopped) is kept as far as it goes.
"""

from __future__ import annotations

import re

_SEARCH = re.compile(r"(?:-{3,}|<{3,}) ?SEARCH>?\s*")
_DIVIDE = re.compile(r"={3,}\s*")
_REPLACE = re.compile(r"(?:\+{3,}|>{3,}) ?REPLACE>?\s*")
_LINE_HINT = re.compile(r":(?:start|end)_line:\s*-?\d*\s*")
_RULE = re.compile(r"-{3,}\s*")
_ESCAPED = re.compile(r"\\(?=(?:<{3,}|={3,}|>{3,}|-{3,}|\+{3,}|:start_line:|:end_line:))")


def search_replace_pairs(diff: str) -> list[tuple[str, str]]:
    """(old text, new text) of each block, in order."""
    pairs: list[tuple[str, str]] = []
    state = "between"
    head = False  # right after the SEARCH marker: Roo's line hints and rule may come
    old: list[str] = []
    new: list[str] = []
    for line in diff.split("\n"):
        bare = line.rstrip("\r")
        if state == "between":
            if _SEARCH.fullmatch(bare):
                state, head, old, new = "search", True, [], []
            continue
        if state == "search":
            if head and _LINE_HINT.fullmatch(bare):
                continue
            if head and _RULE.fullmatch(bare):
                head = False
                continue
            head = False
            if _DIVIDE.fullmatch(bare):
                state = "replace"
                continue
            old.append(_ESCAPED.sub("", line, count=1))
            continue
        if _REPLACE.fullmatch(bare):
            pairs.append(("\n".join(old), "\n".join(new)))
            state = "between"
            continue
        new.append(_ESCAPED.sub("", line, count=1))
    if state == "replace":
        pairs.append(("\n".join(old), "\n".join(new)))
    return pairs
