"""An independent count of what real Antigravity transcripts hold, for antigravity_real.py.

Deliberately simple and separate from deja's reader (no deja import): it reads
both files of a session (``transcript.jsonl`` and ``transcript_full.jsonl``),
keeps each line once by ``(step_index, created_at)`` (the full file's copy
first), and counts:

- edits: agent writes a tool step reports (a CODE_ACTION or GENERIC step:
  ``Created file <uri> with requested content.`` once per step; ``The
  following changes were made by the <tool> tool to: ...`` once per diff
  block). Not a planner's own words or a command's output quoting them;
- commands: ``run_command`` calls of planner rows;
- exits: command steps (RUN_COMMAND, GENERIC) that report an exit code, by the
  top-level ``exit_code`` or one of the three wordings;
- prompts: USER_EXPLICIT lines of type USER_INPUT with text once the
  metadata blocks, the request tags and the ``Comments on artifact URI:``
  lines are gone (an approval counts, an empty request does not; IDE events
  such as VIEW_FILE are other types, and "The USER performed the following
  action" is not typed by the person);
- edit_dirs: where the writes went (each write's parent directory).

    python bench/antigravity_raw_count.py DIR     # one line per session, JSON
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from urllib.parse import unquote

CHANGES = re.compile(r"The following changes were made by the ([A-Za-z_]+) tool to:[ \t]*([^\n]*)")
CREATED = re.compile(r"Created file[ \t]+(\S+)[ \t]+with requested content")
NOT_TYPED = re.compile(
    r"<(ADDITIONAL_METADATA|USER_SETTINGS_CHANGE)>.*?</\1>|</?USER_REQUEST>"
    r"|^Comments on artifact URI:[^\n]*",
    re.DOTALL | re.MULTILINE,
)
EXIT = re.compile(
    r"The command exited with code -?\d+|The command completed successfully"
    r"|The command failed with exit code"
)


def lines_of(path: str) -> list[dict]:
    out = []
    try:
        fh = open(path, encoding="utf-8", errors="replace")
    except OSError:
        return out
    with fh:
        for line in fh:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict):
                out.append(rec)
    return out


def session_records(logs: str) -> list[dict]:
    full = lines_of(os.path.join(logs, "transcript_full.jsonl"))
    compact = lines_of(os.path.join(logs, "transcript.jsonl"))
    seen = set()
    merged = []
    for rec in full + compact:
        key = (rec.get("step_index"), rec.get("created_at"))
        if key in seen:
            continue
        seen.add(key)
        merged.append(rec)
    return merged


def plain_path(raw: str) -> str:
    path = raw.strip().strip("`'\"")
    if path.lower().startswith("file://"):
        path = unquote(path[7:])
    path = path.replace("\\", "/")
    if re.match(r"^/[A-Za-z]:/", path):
        path = path[1:]
    if re.match(r"^[A-Za-z]:/", path):
        path = path[0].upper() + path[1:]
    return path


def count(logs: str) -> dict:
    edits = commands = exits = prompts = 0
    dirs: Counter[str] = Counter()
    times = []
    for rec in session_records(logs):
        content = rec.get("content") if isinstance(rec.get("content"), str) else ""
        if isinstance(rec.get("created_at"), str) and rec["created_at"]:
            times.append(rec["created_at"])
        source, kind = rec.get("source"), rec.get("type")
        if source == "USER_EXPLICIT":
            typed = NOT_TYPED.sub("", content).strip()
            if kind == "USER_INPUT" and typed and not typed.startswith("The USER performed"):
                prompts += 1
            continue
        if source != "MODEL":
            continue
        for call in rec.get("tool_calls") or []:
            if isinstance(call, dict) and call.get("name") == "run_command":
                commands += 1
        if kind not in ("CODE_ACTION", "GENERIC"):
            content_edits = ""
        else:
            content_edits = content
        created = CREATED.search(content_edits)
        if created:
            edits += 1
            dirs[plain_path(created.group(1)).rsplit("/", 1)[0]] += 1
        for m in CHANGES.finditer(content_edits):
            target = m.group(2).split(". If relevant")[0].strip().rstrip(".")
            blocks = content.count("[diff_block_start]", m.end())
            later = CHANGES.search(content, m.end())
            if later:
                blocks = content.count("[diff_block_start]", m.end(), later.start())
            edits += blocks
            dirs[plain_path(target).rsplit("/", 1)[0]] += blocks
        if kind in ("RUN_COMMAND", "GENERIC") and (
            isinstance(rec.get("exit_code"), int) or EXIT.search(content)
        ):
            exits += 1
    return {
        "edits": edits,
        "commands": commands,
        "exits": exits,
        "prompts": prompts,
        "first": min(times) if times else None,
        "last": max(times) if times else None,
        "edit_dirs": dirs.most_common(5),
    }


def sessions_under(top: str) -> dict[str, str]:
    """{session id: logs directory} for every ``.system_generated/logs`` under ``top``."""
    found = {}
    for dirpath, _dirs, files in os.walk(top):
        if dirpath.endswith(os.path.join(".system_generated", "logs")) and any(
            f in files for f in ("transcript.jsonl", "transcript_full.jsonl")
        ):
            found[os.path.basename(os.path.dirname(os.path.dirname(dirpath)))] = dirpath
    return found


if __name__ == "__main__":
    for sid, logs in sorted(sessions_under(sys.argv[1]).items()):
        print(json.dumps({"session": sid, **count(logs)}, ensure_ascii=False))
