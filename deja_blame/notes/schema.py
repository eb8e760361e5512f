"""The note: one JSON document per commit under ``refs/notes/deja``.

Schema 1::

    {
      "schema": 1,
      "tool": "deja-blame 0.1.0",
      "commit": "<sha>",
      "files": {
        "src/app.py": {"<session id>": [[10, 12, 0.97], [20, 20, 0.75]]}
      },
      "sessions": {
        "<session id>": {"agent": "antigravity", "project": "/work/api",
                          "started_at": "2026-07-17T09:00:00Z"}
      }
    }

Ranges are 1-based, inclusive, in that commit's version of the file, each with
the lowest line confidence inside it. Paths are repository-relative. Prompt
text (``sessions.<id>.first_prompt``) only when the user opted in
(``git config deja.notes.prompts true``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

NOTES_REF = "refs/notes/deja"
SCHEMA = 1


@dataclass
class Note:
    commit: str
    files: dict[str, dict[str, list[list[float]]]] = field(default_factory=dict)
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    tool: str = ""
    schema: int = SCHEMA

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "tool": self.tool,
            "commit": self.commit,
            "files": self.files,
            "sessions": self.sessions,
        }

    def dumps(self) -> str:
        return (
            orjson.dumps(self.to_json(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
            + "\n"
        )

    def is_empty(self) -> bool:
        return not any(self.files.values())

    def session_at(self, path: str, line: int) -> tuple[str, float] | None:
        for sid, ranges in self.files.get(path, {}).items():
            for r in ranges:
                if int(r[0]) <= line <= int(r[1]):
                    return sid, float(r[2]) if len(r) > 2 else 1.0
        return None


def parse_note(text: str | bytes) -> Note | None:
    """A note's text -> Note, or None when it is not a deja note we can read."""
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("schema"), int):
        return None
    if doc["schema"] > SCHEMA:
        return None  # written by a newer deja: leave it alone
    files = doc.get("files") if isinstance(doc.get("files"), dict) else {}
    clean: dict[str, dict[str, list[list[float]]]] = {}
    for path, per in (files or {}).items():
        if not isinstance(per, dict):
            continue
        for sid, ranges in per.items():
            if isinstance(ranges, list):
                good = [
                    list(r)
                    for r in ranges
                    if isinstance(r, list)
                    and len(r) >= 2
                    and all(isinstance(x, (int, float)) for x in r)
                ]
                if good:
                    clean.setdefault(str(path), {})[str(sid)] = good
    sessions = doc.get("sessions") if isinstance(doc.get("sessions"), dict) else {}
    return Note(
        commit=str(doc.get("commit", "")),
        files=clean,
        sessions={str(k): v for k, v in (sessions or {}).items() if isinstance(v, dict)},
        tool=str(doc.get("tool", "")),
        schema=int(doc["schema"]),
    )


def ranges_of(lines: list[tuple[int, float]]) -> list[list[float]]:
    """Sorted (line, confidence) pairs -> [[start, end, min confidence], ...] of consecutive lines."""
    out: list[list[float]] = []
    for line, conf in sorted(lines):
        if out and out[-1][1] == line - 1:
            out[-1][1] = line
            out[-1][2] = min(out[-1][2], conf)
        else:
            out.append([line, line, conf])
    return [[int(a), int(b), round(float(c), 2)] for a, b, c in out]
