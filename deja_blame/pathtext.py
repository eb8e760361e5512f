"""File names as text: git allows any byte but NUL and ``/`` in a name, SQLite and JSON
take only UTF-8.

A name that is not UTF-8 (``caf\\xe9.py`` written by a Latin-1 tool) reaches deja as
a ``str`` holding lone surrogates (``os.fsdecode``, git output decoded with
``surrogateescape``): fine for the file system and git, an encoding error in an
SQLite query, in orjson and in a note. Where a name goes into the index, a JSON
document or a note, it goes as ``as_text``: unchanged when it is UTF-8, else
with each byte that is not as ``\\xNN`` (Python's ``backslashreplace``), the
same text every time, so a note written for the file is found again by it.
"""

from __future__ import annotations

from typing import Any


def as_text(name: str) -> str:
    """``name`` as valid UTF-8 text (itself when it is)."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        pass
    try:
        raw = name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that no undecodable byte made
        return name.encode("utf-8", "replace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def text_only(doc: Any) -> Any:
    """``doc`` (dicts, lists, tuples, strings) with every string ``as_text``."""
    if isinstance(doc, str):
        return as_text(doc)
    if isinstance(doc, dict):
        return {text_only(k): text_only(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [text_only(v) for v in doc]
    return doc


def as_key(text: str) -> str:
    """``text`` as an SQLite key: itself when it is UTF-8, else NUL (which no file name
    holds) and its bytes in hex, so that no two names share a key."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "\0" + text.encode("utf-8", "surrogateescape").hex() if _escapable(text) else "\0"


def _escapable(text: str) -> bool:
    try:
        text.encode("utf-8", "surrogateescape")
        return True
    except UnicodeEncodeError:
        return False
