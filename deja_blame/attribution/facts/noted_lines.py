"""What the commits' notes say of a file's lines, given as git's blame names them.

Both ways a file's facts are gathered (``gather.py``, the whole file or a window with
its context; ``noted_range.py``, a few lines the notes settle) ask the same of each
line's commit's note. Kept apart from ``gather.py`` so that an answer the notes settle
loads none of what the index's writes and the rules need.
"""

from __future__ import annotations

from deja_blame.attribution.facts.model import FileFacts
from deja_blame.attribution.model import LineAttribution, NoteLookup, format_time_epoch


def noted_line(
    ln: LineAttribution, path: str, note_lookup: NoteLookup, times: dict[int, str]
) -> None:
    """The line's commit's note: a line it names a session for is that session's."""
    assert ln.commit is not None
    hit = note_lookup(ln.commit, ln.orig_path or path, ln.orig_line or ln.line)
    if hit is not None:
        ln.session, ln.confidence, ln.via = hit[0], hit[1], "note"
        if hit[2] is not None:
            when = times.get(hit[2])
            if when is None:
                when = times[hit[2]] = format_time_epoch(hit[2])
            ln.written_at = when


def sessions_noted(facts: FileFacts, note_lookup: NoteLookup) -> None:
    """What the notes read say of the sessions they gave lines to (``noted_line``)."""
    from deja_blame.models import UNKNOWN_AGENT

    lines = facts.lines
    info_of = getattr(note_lookup, "session_info", None)
    if info_of is not None:
        for sid in {ln.session for ln in lines if ln.via == "note" and ln.session}:
            info = info_of(sid)
            if isinstance(info, dict):
                facts.note_sessions[sid] = info
    for ln in lines:
        if ln.via == "note" and ln.session:
            noted = facts.note_sessions.get(ln.session) or {}
            agent = noted.get("agent")
            ln.source = agent if isinstance(agent, str) and agent else UNKNOWN_AGENT
