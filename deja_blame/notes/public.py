"""What a note may carry off this machine: its sessions' details, made public.

Notes are pushed (``deja notes push``) and read by anyone with the repository,
so every note deja writes goes through ``public_sessions`` first:

- ``agent``, ``model``: kept (one line, no control characters);
- ``started_at``: kept (a time);
- ``project``: the session's directory as a repository-relative path (``.``
  for the repository itself, ``sub/dir`` for one inside it), or ``-`` when it
  was elsewhere: never an absolute path, which names a user and a disk layout;
- ``first_prompt``: only when the user opted in (``git config
  deja.notes.prompts true``), and then redacted (``redact_for_sharing``:
  secrets, the repository's directory, home directories); and a note that
  replaces another (re-derived, carried over a rewrite) never holds more
  requests than the one it replaces (``no_new_prompts``);
- ``tests``: how the session's last test run ended, one word of ``NOTED_TESTS``
  (never the command), so a report from notes alone (CI) knows it;
- any other field: dropped.

docs/notes-and-hooks.md lists the fields of a note one by one.
"""

from __future__ import annotations

import re
from typing import Any

SHARED_FIELDS = ("agent", "project", "started_at", "model", "first_prompt", "tests")
# ``tests``: its last test-like command passed, failed, ended unknown (no exit code),
# or it ran none
NOTED_TESTS = ("passed", "failed", "unknown", "none")
_ABSOLUTE = re.compile(r"^(?:/|~|\\\\|[A-Za-z]:[\\/])")


def project_meaning(project: str | None, said_before: bool = False) -> str:
    """What a project shown as ``.`` or ``-`` stands for, to print beside it ("" for a
    folder shown as it is): notes and answers that leave the machine keep no path
    outside the repository. ``said_before``: a report explained ``-`` at an earlier
    session already (newcomer 17 #7: the same sentence four times)."""
    if project == ".":
        return " (this repository's top)"
    if project in (None, "", "-") and said_before:
        return " (elsewhere, as above)"
    if project in (None, "", "-"):
        # "no path is kept" read as if deja had lost it (NEWCOMER13 #6): the index
        # keeps it (deja sessions and show print it); what may leave the machine does not
        return (
            " (elsewhere: another clone or machine, or not known;"
            " notes and reports leave out paths outside the repository)"
        )
    return ""


def public_project(project: Any, root: str) -> str:
    """``project`` relative to the repository at ``root``, or ``-``."""
    if not isinstance(project, str) or not project or project == "-":
        return "-"
    text = project.replace("\\", "/") if re.match(r"^[A-Za-z]:\\", project) else project
    base = root.rstrip("/")
    if text == base:
        return "."
    if base and text.startswith(base + "/"):
        rel = text[len(base) + 1 :].strip("/")
        return rel if rel and ".." not in rel.split("/") else "."
    if _ABSOLUTE.match(text) or ".." in text.split("/"):
        return "-"  # elsewhere on the author's disk: not for others
    return text  # already relative (a note written so)


def one_line(value: str) -> str:
    """A detail printed on one line: control characters (newlines too) become spaces."""
    return "".join(ch if ch.isprintable() else " " for ch in value)


def public_sessions(
    sessions: dict[str, dict[str, Any]], root: str, include_prompts: bool
) -> dict[str, dict[str, Any]]:
    """The sessions' details as a note carries them (see the module's docstring)."""
    # (imported here: its patterns are compiled on import, and the readers of notes
    # that import this module for ``one_line`` never redact)
    from deja_blame.outputs.redact import redact_for_sharing

    out: dict[str, dict[str, Any]] = {}
    for sid, info in sessions.items():
        doc: dict[str, Any] = {}
        for key in SHARED_FIELDS:
            if key not in info:
                continue
            value = info[key]
            if key == "project":
                value = public_project(value, root)
            elif key == "first_prompt":
                if not include_prompts or not isinstance(value, str):
                    continue
                value = redact_for_sharing(value, root)
            elif key == "tests":
                if value not in NOTED_TESTS:
                    continue
            elif isinstance(value, str):
                value = one_line(redact_for_sharing(value, root))
            doc[key] = value
        out[sid] = doc
    return out


def no_new_prompts(
    sessions: dict[str, dict[str, Any]], before: list[dict[str, dict[str, Any]]] | None
) -> dict[str, dict[str, Any]]:
    """``sessions`` with no request the notes they replace (``before``: their sessions)
    did not publish: turning on ``deja.notes.prompts`` is for the notes written from
    then on, not for the sessions of notes already pushed without their requests.

    ``before`` None: no note is replaced (a new commit), the opt-in decides. Else a
    session keeps its request only when a replaced note held it; a session new to
    the note gets its request only when a replaced note holds some request (it was
    written under the opt-in). ``deja annotate REV --prompts`` does not call this.
    """
    if before is None:
        return sessions
    held = {sid for docs in before for sid, info in docs.items() if "first_prompt" in info}
    named = {sid for docs in before for sid in docs}
    out: dict[str, dict[str, Any]] = {}
    for sid, info in sessions.items():
        allowed = sid in held or (bool(held) and sid not in named)
        if "first_prompt" in info and not allowed:
            info = {k: v for k, v in info.items() if k != "first_prompt"}
        out[sid] = info
    return out
