"""One line's story: the session, the request, the edit and the line's history.

``deja why`` prints it and the editor server shows it on hover; both hand over
a line of a ``FileBlame`` they already have.
"""

from __future__ import annotations

import re
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from deja_blame.attribution.model import FileBlame, LineAttribution
from deja_blame.index import queries as Q
from deja_blame.index.fingerprint import fingerprint
from deja_blame.index.store import latest_edit_adding


def line_story(
    conn: sqlite3.Connection, result: FileBlame, ln: LineAttribution, with_history: bool = True
) -> dict[str, Any]:
    """What ``deja why --json`` prints for line ``ln`` of ``result``. ``with_history``
    False leaves ``history`` empty: it is what costs (git log of the line), and the
    editor's hover reads it on its own, after answering."""
    doc: dict[str, Any] = {
        "path": result.path,
        "line": ln.line,
        "text": ln.text,
        "commit": ln.commit,
        "session": ln.session,
        "confidence": ln.confidence,
        "via": ln.via,
    }
    doc["history"] = line_history_json(conn, result, ln) if with_history else []
    if ln.session is None:
        if ln.commit and with_history:
            by_command = command_behind(conn, result.root, ln.commit, ln.orig_path or result.path)
            if by_command is not None:
                doc["changed_by_command"] = by_command
            later = written_after_commit(
                conn, result.root, ln.commit, ln.orig_path or result.path, ln.text
            )
            if later is not None:
                doc["written_after_commit"] = later
            else:
                here = written_here_after_commit(
                    conn, result.root, ln.commit, ln.orig_path or result.path, ln.text
                )
                if here is not None:
                    doc["written_here_after_commit"] = here
                elif (
                    ahead := written_elsewhere_after_commit(
                        conn, result.root, ln.commit, ln.orig_path or result.path, ln.text
                    )
                ) is not None:
                    doc["written_elsewhere_after_commit"] = ahead
                else:
                    untimed = written_untimed(
                        conn, result.root, ln.orig_path or result.path, ln.text
                    )
                    if untimed is not None:
                        doc["written_untimed"] = untimed
        elif not ln.commit and with_history:
            cloned = written_in_another_clone(conn, result.root, result.path, ln.text)
            if cloned is not None:
                doc["written_in_another_clone"] = cloned
        if with_history:
            carried = written_by_left_out(conn, result.root, ln.orig_path or result.path, ln.text)
            if carried is not None:
                doc["written_by_left_out"] = carried
        return doc
    info = result.sessions.get(ln.session)
    doc["session_info"] = info.to_json() if info else None
    row = Q.session_by_id(conn, ln.session)
    if row is None:
        doc["note_only"] = True  # known from the commit's note; transcripts not here
        return doc
    sid = row.sid
    edit_ord = ln.edit_ord
    if edit_ord is None:
        # a line answered from a note names no edit: the session's edit of this file
        # that added the text, never another file's that added the same text
        edit_ord = edit_of_file(conn, result, ln, sid)
        if edit_ord is None:
            elsewhere = latest_edit_adding(conn, sid, fingerprint(ln.text))
            found = Q.edit_with_step(conn, sid, elsewhere) if elsewhere is not None else None
            doc["no_edit_of_file"] = {
                "added_elsewhere": None
                if found is None
                else _shown_path(found.edit.path, result.root)
            }
    if edit_ord is None:
        return doc
    found = Q.edit_with_step(conn, sid, edit_ord)
    if found is None:
        return doc
    edit, step = found.edit, found.step
    doc["edit"] = {
        "path": edit.path,
        "file": edit_file(edit.path, result.root, result.path),
        "tool": edit.tool,
        "model": edit.model,
        "at": edit.at,
        "hunks": [h.to_json() for h in edit.hunks],
    }
    if not edit.hunks:
        doc["edit"]["hunks"] = [
            {"old_start": None, "new_start": None, "removed": edit.removed, "added": edit.added}
        ]
    _place_by_text(doc["edit"]["hunks"], result, ln)
    prompt = Q.last_request_before(conn, sid, step)
    doc["prompt"] = {"text": prompt[0], "at": prompt[1]} if prompt else None
    doc["assistant"] = [
        {"text": t, "at": a} for t, a in Q.agent_words_around(conn, sid, step, found.after_message)
    ]
    doc["commands_after"] = [
        {"command": c, "exit_code": x, "at": a, "status": st}
        for c, x, a, st in Q.commands_from(conn, sid, step)
    ]  # status: RUNNING for a command sent to the background (no exit code)
    return doc


def _place_by_text(hunks: list[dict[str, Any]], result: FileBlame, ln: LineAttribution) -> None:
    """Give the hunks the transcript left without line numbers (Claude Code's Edit
    without its patch, Codex's apply_patch) the place their text has in the file the
    line is asked of as the edit left it: its commit's version (through the
    repository's one ``git cat-file --batch``, stage 1's), or the working tree's for
    a line not committed yet. Each placed hunk says so (``placed_by_text``)."""
    _old_side_of_known(hunks)
    if all(h["old_start"] is not None for h in hunks):
        return
    found = _file_after_edit(result, ln)
    if found is None:
        return
    lines, line = found
    from deja_blame.attribution.edit_place import place_hunks

    placed = place_hunks([(h["removed"], h["added"]) for h in hunks], lines, line, ln.text)
    for h, spot in zip(hunks, placed):
        if spot is not None and h["old_start"] is None:
            h["old_start"], h["new_start"] = spot
            h["placed_by_text"] = True


def _old_side_of_known(hunks: list[dict[str, Any]]) -> None:
    """A hunk whose new side's place the transcript gives and not its old side's (a
    file written whole, Codex's added file: from line 1) has its old side where the
    edit's earlier hunks leave it: ``@@ -0,0 +1,6 @@`` for a new file of six lines,
    as git shows one. It showed ``@@ ? @@``, as if its place were not known."""
    grown = 0  # lines the edit's earlier hunks added, less those they removed
    for h in hunks:
        if h["old_start"] is None and h["new_start"] is not None:
            h["old_start"] = h["new_start"] - grown
        grown += len(h["added"]) - len(h["removed"])


def _file_after_edit(result: FileBlame, ln: LineAttribution) -> tuple[list[str], int] | None:
    """The lines of the file line ``ln`` was committed in (its commit's version, under
    the name it had there), or the working tree's for a line not committed yet, and
    the line's place in it. None: not readable (gone, a partial clone)."""
    from deja_blame.gitutil import FileVersion

    path = ln.orig_path or result.path
    if ln.commit is None:
        if result.rev is not None:
            return None
        from deja_blame.errors import DejaError
        from deja_blame.gitutil import read_worktree_bytes

        try:
            data = read_worktree_bytes(Path(result.root), result.path)
        except DejaError:
            return None
        return FileVersion(path, None, data).lines(), ln.line
    from deja_blame.attribution.facts.history import repo_history

    blob = repo_history(result.root).read(f"{ln.commit}:{path}")
    if blob is None or b"\0" in blob[:8000]:
        return None
    return FileVersion(path, ln.commit, blob).lines(), ln.orig_line or ln.line


def edit_of_file(
    conn: sqlite3.Connection, result: FileBlame, ln: LineAttribution, sid: int
) -> int | None:
    """The ordinal of session ``sid``'s edit of this file that added line ``ln``'s text:
    an edit of its path here, of the same path in another clone, or of the name the
    file had before a rename (where the line was committed, or one git saw the line's
    commit make); the one made at the note's time of the line first, else the latest.
    None: no edit of this file added it."""
    from deja_blame.attribution.facts.clone_paths import stands_for
    from deja_blame.transcripts.text import epoch_of

    root = str(result.root)
    at = epoch_of(ln.written_at) if ln.written_at else None
    written = int(at) if at is not None else None
    fp = fingerprint(ln.text)

    def added_to(names: set[str]) -> int | None:
        def of_file(path: str) -> bool:
            return any(stands_for(path, rel, root) is not None for rel in names)

        return latest_edit_adding(conn, sid, fp, of_file, written)

    names = {result.path, ln.orig_path or result.path}
    found = added_to(names)
    if found is not None or ln.commit is None:
        return found
    from deja_blame.attribution.facts.moved import touched

    before = {
        old
        for old, (status, new) in touched(root, ln.commit).items()
        if status == "R" and new in names
    }
    return added_to(before) if before else None


def edit_file(written: str, root: str, asked: str) -> str:
    """The file an edit wrote, as a diff of it is headed: ``asked`` where the edit wrote
    that repository-relative path (here, or in another clone or machine, whatever its
    separators), else the path it wrote, relative to the top where it is inside (a
    block moved from another file, a file's name before a rename)."""
    posix = written.replace("\\", "/")
    shown = _shown_path(posix, root)
    if shown == asked:
        return asked
    if shown != posix:  # inside this repository: another file of it
        return shown
    return asked if shown.endswith("/" + asked) else shown


def _shown_path(written: str, root: str) -> str:
    """A path a session wrote, relative to the repository's top when it is inside it."""
    top = root.rstrip("/") + "/"
    return written[len(top) :] if written.startswith(top) else written


def line_history_json(conn: sqlite3.Connection, result: Any, ln: Any) -> list[dict[str, Any]]:
    """The line's versions, oldest first. A line not committed yet: the versions of the
    line of HEAD it changed (what git blame calls "Not Committed Yet" had a writer
    before), nothing for a line it added."""
    if ln.commit is None:
        return _history_before_worktree(conn, result, ln)
    from deja_blame.attribution.line_history import line_history
    from deja_blame.gitutil import open_repository

    # the older versions' blames read the repository through git where libgit2 is not
    # loaded yet (``deja why`` alone: its import is 70 ms, git blame -L of a line 5);
    # the editor and the resident server have it loaded, and it opens at once
    through_git = "pygit2" not in sys.modules
    found = line_history(
        lambda: open_repository(Path(result.root), through_git=through_git),
        conn,
        Path(result.root),
        ln.orig_path or result.path,
        ln.commit,
        ln.orig_line or ln.line,
        ln.text,
        newest=(ln.session, ln.source),
        known_authors=getattr(result, "authors", None),
    )
    return [v.to_json() for v in found]


def _history_before_worktree(
    conn: sqlite3.Connection, result: Any, ln: Any
) -> list[dict[str, Any]]:
    """The history of the line of HEAD that the working tree's line ``ln`` changed."""
    from deja_blame.attribution.api import compute
    from deja_blame.attribution.line_history import replaced_line
    from deja_blame.errors import DejaError

    if result.rev is not None:
        return []
    root = Path(result.root)
    before = replaced_line(root, result.path, ln.line, ln.text)
    if before is None:
        return []
    try:
        # through git where libgit2 is not loaded yet (``deja why`` alone), as below
        at_head = compute(
            conn,
            root / result.path,
            "HEAD",
            (before, before),
            refresh=False,
            one_question="pygit2" not in sys.modules,
        )
    except DejaError:
        return []
    head_ln = next((x for x in at_head.lines if x.line == before and x.commit), None)
    return line_history_json(conn, at_head, head_ln) if head_ln is not None else []


# What changes files from a shell without its text in the command line: such a
# command of a session, run while the commit was being made, is named (not
# given the line: what it wrote is not known).
_CHANGES_FILES = re.compile(
    r"\bsed\s+(-\w+\s+)*-i|\bperl\s+(-\w+\s+)*-[a-z]*i|\b(mv|cp|patch|git\s+apply|gofmt|"
    r"go\s+fmt|black|ruff\s+format|prettier|rustfmt)\b|>"
)


def written_after_commit(
    conn: sqlite3.Connection, root: str, commit: str, path: str, text: str
) -> dict[str, Any] | None:
    """An indexed session that wrote this very line to a file of this path, but
    whose write is dated after ``commit`` (so the commit cannot hold it, and the line
    is nobody's): {session, agent, at, commit_at, first_seen}, the earliest such
    write; None when there is none. ``first_seen``: its agent records no times, and
    deja dates its records when it first reads them (a transcript read for the first
    time after the chat went on is dated after work committed before)."""
    from deja_blame.attribution.facts.model import CLOCK_SKEW
    from deja_blame.attribution.facts.repository import RepositoryIdentity

    rows = _writes_of_line(conn, path, text)
    if not rows:
        return None
    # only a session of this repository (review 9: a person's line of 2020 was given a
    # note about a 2026 session of another checkout that wrote the same line to its own
    # app.py), and only one whose agent records no times: a first read after the
    # commit is what dates such a write late; a dated write after the commit is a
    # later edit, no clock's fault
    identity = RepositoryIdentity(conn, root)
    rows = [r for r in rows if _dated_when_first_read(str(r[1])) and identity.belongs(r[4])]
    if not rows:
        return None
    committed = _commit_time(root, commit)
    if committed is None:
        return None
    later = [r for r in rows if r[3] > committed + CLOCK_SKEW]
    if not later or len(later) < len(rows):
        return None  # a write dated before the commit was there to match
    session, agent, _, at, _sid = min(later, key=lambda r: r[3])
    return {
        "session": session,
        "agent": agent,
        "at": _iso(at),
        "commit_at": _iso(committed),
        "first_seen": True,
    }


def written_here_after_commit(
    conn: sqlite3.Connection, root: str, commit: str, path: str, text: str
) -> dict[str, Any] | None:
    """A session that ran in a checkout of this repository on this machine (on git's
    clock: ``facts/checkouts.py``) and wrote this very line to this file, but only
    after ``commit`` was made (beyond ``match/clock.ROUNDING``): the commit held the
    line before it, so it is not the session's. {session, agent, at, began,
    commit_at, began_after_commit}: its earliest such write; None when there is none,
    or when one of its writes of the line came before the commit."""
    from deja_blame.attribution.facts.checkouts import same_clock_sessions
    from deja_blame.attribution.match.clock import ROUNDING

    rows = _writes_of_line(conn, path, text)
    if not rows:
        return None
    here = same_clock_sessions(conn, root)
    rows = [r for r in rows if r[4] in here]
    committed = _commit_time(root, commit) if rows else None
    if committed is None:
        return None
    if any(r[3] <= committed + ROUNDING for r in rows):
        return None  # a write before the commit: the matcher had it to weigh
    session, agent, _, at, sid = min(rows, key=lambda r: r[3])
    row = conn.execute("SELECT started_epoch FROM sessions WHERE sid = ?", (sid,)).fetchone()
    began = float(row[0]) if row is not None and row[0] is not None else None
    return {
        "session": session,
        "agent": agent,
        "at": _iso(at),
        "began": None if began is None else _iso(began),
        "commit_at": _iso(committed),
        "began_after_commit": began is not None and began > committed + ROUNDING,
    }


# How far after a commit a write of another machine may be dated and still be told as
# "its clock may run ahead": a clock set to local time as if it were UTC is off by
# whole hours, up to 14; a write dated days later is a later session's
AHEAD_AT_MOST = 15 * 3600.0


def written_elsewhere_after_commit(
    conn: sqlite3.Connection, root: str, commit: str, path: str, text: str
) -> dict[str, Any] | None:
    """A session that ran in another folder (another machine or clone: its path ends
    in this file's repository path, README rule 7) and wrote this very line, its every
    write of it dated after ``commit`` by more than ``CLOCK_SKEW`` (and less than
    ``AHEAD_AT_MOST``): by the clocks the commit came first, so the line is the
    commit's author's. Either the session wrote it again later, or it ran before the
    commit on a machine whose clock runs ahead of git's by more than the skew deja
    allows (newcomer 17 #1: such a line silently became a person's). {session, agent,
    clone, at, commit_at, ahead_seconds}: its earliest such write; None when there is
    none, or a write of the line from another folder dated before the commit."""
    return ahead_write(
        conn, root, path, text, lambda: _commit_time(root, commit), only_elsewhere=True
    )


def ahead_write(
    conn: sqlite3.Connection,
    root: str,
    path: str,
    text: str,
    commit_time: Callable[[], float | None],
    only_elsewhere: bool = False,
) -> dict[str, Any] | None:
    """``written_elsewhere_after_commit`` for a commit made at ``commit_time()`` (asked
    only when a session wrote the line). A write of the line by a session of this
    folder (or of a checkout of it here) dated before the commit rules it out too,
    unless ``only_elsewhere`` (``deja why`` asks only of a line no session was given)."""
    from deja_blame.attribution.facts.checkouts import same_clock_sessions
    from deja_blame.attribution.facts.model import CLOCK_SKEW

    rows = _writes_of_line(conn, path, text)
    committed = commit_time() if rows else None
    if committed is None:
        return None
    if not only_elsewhere and any(r[3] <= committed + CLOCK_SKEW for r in rows):
        return None
    here = root.rstrip("/") + "/"
    rows = [r for r in rows if not str(r[2]).startswith(here) and str(r[2]) != path]
    if rows:
        same_clock = same_clock_sessions(conn, root)
        rows = [r for r in rows if r[4] not in same_clock]
    if not rows or any(r[3] <= committed + CLOCK_SKEW for r in rows):
        return None  # a write before the commit (with the skew): the matcher had it
    session, agent, written, at, sid = min(rows, key=lambda r: r[3])
    if at > committed + AHEAD_AT_MOST:
        return None
    if "/" not in path:
        # a file at the repository's top (app.py, README.md): its name alone is no
        # sign the session worked on this repository; ask what it wrote
        from deja_blame.attribution.facts.repository import RepositoryIdentity

        if not RepositoryIdentity(conn, root).belongs(sid):
            return None
    clone = str(written)[: -len(path) - 1] or "/"
    return {
        "session": session,
        "agent": agent,
        "clone": clone,
        "at": _iso(at),
        "commit_at": _iso(committed),
        "ahead_seconds": int(at - committed),
    }


def written_by_left_out(
    conn: sqlite3.Connection, root: str, path: str, text: str
) -> dict[str, Any] | None:
    """A history this repository carries and the index left out (an Aider chat
    committed with the code: ``provenance.carried_left_out``) whose edit added this
    very line to this file: {path, agent, trust}, ``trust`` the command that reads it;
    None when there is none. Read afresh (a left-out history is not in the index),
    only for a line no session was given."""
    import shlex

    from deja_blame.index.fingerprint import is_trivial
    from deja_blame.index.provenance import carried_left_out
    from deja_blame.transcripts.registry import known

    if is_trivial(text):
        return None
    left = carried_left_out(conn, root)
    want = fingerprint(text)
    for lo in left:
        agent = known(lo.agent)
        if agent is None:
            continue
        try:
            files = [tf for tf in agent.find(lo.where, None, None) if tf.path == lo.path]
            sessions = [agent.read(tf) for tf in files]
        except (OSError, ValueError):
            continue  # unreadable since: nothing to say of it
        for session in sessions:
            for edit in session.edits:
                written = edit.path.replace("\\", "/")
                if edit.source != "agent" or not (written == path or written.endswith("/" + path)):
                    continue
                if any(fingerprint(a) == want for a in edit.added):
                    return {
                        "path": str(lo.path),
                        "agent": lo.agent,
                        "trust": f"deja trust {shlex.quote(str(lo.path))}",
                    }
    return None


def written_untimed(
    conn: sqlite3.Connection, root: str, path: str, text: str
) -> dict[str, Any] | None:
    """An indexed session of this repository that wrote this very line to a file of
    this path, with no time for the write (a record without its timestamp: a
    transcript written by hand or by another tool): nothing places the write before
    the commit, so the line is nobody's. {session, agent}; None when there is none."""
    from deja_blame.attribution.facts.repository import RepositoryIdentity

    rows = _line_rows(conn, path, text, dated=False)
    if not rows:
        return None
    identity = RepositoryIdentity(conn, root)
    rows = [r for r in rows if identity.belongs(r[4])]
    if not rows:
        return None
    session, agent, *_ = min(rows, key=lambda r: r[0])
    return {"session": session, "agent": agent}


def written_in_another_clone(
    conn: sqlite3.Connection, root: str, path: str, text: str
) -> dict[str, Any] | None:
    """A line not committed yet that a session wrote to a file of this repository-relative
    path in another folder (another clone, a container's checkout) and that nothing yet
    shows worked on this repository: the path's suffix is evidence only beside a
    commit's (README rule 7), so the line is nobody's until one is made. {session,
    agent, clone, at}: its latest such write; None when there is none."""
    from deja_blame.attribution.facts.repository import RepositoryIdentity

    rows = _line_rows(conn, path, text, dated=True) + _line_rows(conn, path, text, dated=False)
    here = root.rstrip("/") + "/"
    rows = [r for r in rows if not str(r[2]).startswith(here) and str(r[2]) != path]
    if not rows:
        return None
    identity = RepositoryIdentity(conn, root)
    rows = [r for r in rows if not identity.belongs(r[4])]
    if not rows:
        return None
    session, agent, written, at, _ = max(rows, key=lambda r: (r[3] is not None, r[3] or 0))
    clone = str(written)[: -len(path) - 1] or "/"
    return {"session": session, "agent": agent, "clone": clone, "at": _iso(at) if at else None}


def _writes_of_line(
    conn: sqlite3.Connection, path: str, text: str
) -> list[tuple[str, str, str, float, int]]:
    """(session id, agent, written path, time, row id) of each dated agent write of
    this line's text to a file of this path (here or in another clone)."""
    return _line_rows(conn, path, text, dated=True)


def _line_rows(conn: sqlite3.Connection, path: str, text: str, dated: bool) -> list[Any]:
    """``_writes_of_line``'s rows, of the dated writes or (``dated`` False) of those
    with no time."""
    from deja_blame.index.fingerprint import is_trivial
    from deja_blame.index.queries import LINES

    name = path.rsplit("/", 1)[-1]
    if not name or is_trivial(text):
        return []
    rows = conn.execute(
        f"SELECT s.session_id, s.source, p.path, e.at_epoch, s.sid FROM {LINES} l"
        " JOIN paths p ON p.path_id = l.path_id JOIN sessions s ON s.sid = l.sid"
        " JOIN edits e ON e.sid = l.sid AND e.ord = l.edit_ord"
        " WHERE p.name = ? AND l.fp = ? AND e.source = 'agent'"
        f" AND e.at_epoch IS {'NOT NULL' if dated else 'NULL'}",
        (name, fingerprint(text)),
    ).fetchall()
    return [r for r in rows if str(r[2]).endswith("/" + path) or r[2] == path]


def _commit_time(root: str, commit: str) -> int | None:
    from deja_blame.gitutil import try_git

    proc = try_git(root, ["log", "-1", "--format=%ct", commit], timeout=10)
    if proc is None or proc.returncode != 0 or not proc.stdout.strip().isdigit():
        return None
    return int(proc.stdout.strip())


def _iso(epoch: float) -> str:
    from datetime import datetime, timezone

    from deja_blame.transcripts.text import format_time

    return format_time(datetime.fromtimestamp(int(epoch), tz=timezone.utc))


def _dated_when_first_read(agent: str) -> bool:
    """Whether ``agent``'s transcripts record no times, so deja dates each record when
    it first reads it (Cursor, Windsurf, Continue)."""
    from deja_blame.transcripts.registry import known

    a = known(agent)
    return a is not None and a.read_seen is not None


def command_behind(
    conn: sqlite3.Connection, root: str, commit: str, path: str
) -> dict[str, Any] | None:
    """A successful command of an indexed session that names the file and can change
    it (``sed -i``, a redirect, a formatter), run after the file's previous commit
    and before ``commit``: {session, command, at}; None when there is none."""
    from deja_blame.gitutil import try_git
    from deja_blame.transcripts.text import epoch_of

    name = path.rsplit("/", 1)[-1]
    if not name:
        return None
    found = Q.commands_mentioning(conn, name)
    if not found:
        return None
    proc = try_git(root, ["log", "-2", "--format=%ct", commit, "--", path], timeout=10)
    if proc is None or proc.returncode != 0:
        return None
    times = [int(t) for t in proc.stdout.decode().split() if t.isdigit()]
    if not times:
        return None
    upper = times[0] + 120.0
    lower = float(times[1]) if len(times) > 1 else float("-inf")
    best: tuple[float, dict[str, Any]] | None = None
    for session_id, command, _, at in found:
        when = epoch_of(at)
        if when is None or not (lower < when <= upper) or not _CHANGES_FILES.search(command):
            continue
        if best is None or when > best[0]:
            best = (when, {"session": session_id, "command": command, "at": at})
    return None if best is None else best[1]
