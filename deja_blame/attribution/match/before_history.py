"""Sessions that worked at this path before the file's history began.

A session that wrote a file here before this repository's first commit either
made it (an agent scaffolds, the person commits) or worked on another project
that lived at the same path before this repository replaced it (a folder reused, a project
re-created under the same name). The paths cannot tell them apart, and the
looser identity that lets sessions of other machines match must not let sessions
of other projects match. The text can: a session that made the file left most
of its lines in the file's first version; an old project's session shares a
few lines of boilerplate with it (``import os``, a logger) and not the rest.
"""

from __future__ import annotations

from collections.abc import Callable

from deja_blame.attribution.facts.model import WriteSet

# of the distinct non-trivial lines a session left in the file, those in its first
# version: at least this share, or the session was not making this file
COVERAGE = 0.5
# seconds before the repository's first commit: work this much older than the
# repository itself is asked whether it made the file. An agent's scaffolding is
# committed within hours (bench/accuracy's real histories: 5 minutes before the
# first commit, then files of it committed later); a project the folder held
# before this one was replaced days or weeks earlier.
BEFORE = 24 * 3600.0


def strangers_before_history(
    sids: set[int],
    writes: WriteSet,
    first_time: float | None,
    first_version: Callable[[], frozenset[int] | None],
    left_in_file: Callable[[int], set[int]],
) -> set[int]:
    """Of ``sids``, those whose every write here came a day or more before the
    repository's first commit (``first_time``) and who left less than ``COVERAGE`` of their lines in its first
    version (``first_version()``: its line fingerprints, None when unreadable).
    ``left_in_file(sid)``: the non-trivial fingerprints the session left in the file."""
    if first_time is None or not sids:
        return set()
    latest: dict[int, float] = {}
    for (sid, _), (at, by_user, _) in writes.edit_info.items():  # an edit's writes share these
        if sid in sids and not by_user:
            latest[sid] = max(at, latest.get(sid, at))
    early = sorted(sid for sid, at in latest.items() if at + BEFORE < first_time)
    if not early:
        return set()
    first = first_version()
    if first is None:
        return set()  # the first version cannot be read: nothing says they are strangers
    out: set[int] = set()
    for sid in early:
        left = left_in_file(sid)
        if left and len(left & first) < COVERAGE * len(left):
            out.add(sid)
    return out
