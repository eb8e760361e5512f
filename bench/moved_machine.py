"""The moved-machine benchmark: real agent sessions, a repository at their paths and elsewhere.

The public entireio/cli repository keeps the Claude Code sessions its developers
recorded while building it on its ``entire/checkpoints/v1`` branch (each
checkpoint a ``full.jsonl`` transcript), linked to commits by an
``Entire-Checkpoint:`` trailer. Those transcripts hold people's prompts: they
are used here, under the work directory, and never copied into this project.

Measured twice with one index:

1. clones at the sessions' original paths (``/Users/<name>/...``, one per
   working directory the transcripts name), measured from the most used one;
2. those clones gone (moved away), one clone at another path under another
   user name: another machine.

Each measurement runs in a process of its own (one process for both let the
second reuse what the first learnt about the original clones: the commits
attributed elsewhere looked 95 % complete where they were 86 %). For each:
``deja stats`` at HEAD (lines attributed, time) and every linked
commit attributed (``attribute_commit``, as ``deja annotate`` does): lines
given to sessions, commits that get none, and a sample of attributed lines
verified against the session's own edits (its added lines hold the text), and
every attributed line verified the same way (``claims_verified``), at the file's
name, the names git's renames gave it (``claims_verified_renamed``: those two only;
``claims_verified_same_name``: the file's own name only), or a file the claim's
commit demonstrably moved the line from (``Verifier.verify_moved``: its diff took a
block out of that file, two adjacent lines of text or more in the same order as
here; or it deleted that file and added this one, mostly of its text, and the line's
text was there at the parent or in a block the session wrote there). On session 8's
claims at the sessions' own paths (38,158 lines) that is 98.56 % verified, against
97.03 % by names and renames only; counting any text the diff took out of another
file gave 98.70 %, verifying a person's ``return err`` through another file's.
The sample is of another set whenever the lines given change, and moved by
9 of 200 between two runs whose 1,574 unverified lines were the same.

Missed own-edit lines: a linked commit's added lines (against its first parent,
not blank nor a lone bracket) whose text an edit of one of the commit's own
sessions (its checkpoint's, on the branch) added to a file of that name, that
deja gives to no session. Each is counted under its first cause of
``repeated`` (the file at the commit holds the text more than once), ``shell``
(only a shell command of the session wrote it: ``cat >> f <<EOF``), ``before_parent``
(every such write was made before the parent commit: work split over commits, or
rebased), else ``other``. That count is of texts: a ``repeated`` line counts
wherever the file holds a copy of a text the session wrote, also in a function the
session never touched (``t.Chdir(tmpDir)`` in another test). So each missed line is
also judged by the place of the session's edits that hold its text
(``placed_lines``): ``placed`` where one of them, placed by its own lines the file
holds once, lands on this line; ``elsewhere`` where every one of them has such lines
and lands elsewhere; ``no_unique_line`` where one of them has none (its place cannot be
told: counted, as ``placed``), but ``used_up`` where the commit's lines of that text
that deja gives to the commit's sessions are as many as those edits wrote of it: each
write lands on one line, so a further copy is none of theirs (a session's eight edits
migrating eight tests alike, the commit migrating four more tests a rebase brought).
``missed_own_edit_lines_placed`` (the strict count) counts ``placed``,
``no_unique_line`` and ``used_up``; ``missed_own_edit_lines_beyond_used_up`` leaves the
``used_up`` ones out; ``missed_own_edit_lines`` is still the count of texts. A missed line
is also labelled ``transcript_missing`` where a transcript its commit's own checkpoints name
(their ``metadata.json``) was not read by ``extract_sessions`` (not in the snapshot: 4 MiB
and more; or naming no session): the index never saw that transcript's edits, and the line's
own-edit label stands on the session's other transcripts' writes of its text.
``missed_own_edit_lines_transcript_missing`` counts those among the strict ones (which keep
them), and ``missed_own_edit_lines_beyond_used_up_and_missing`` is the beyond-used-up count
less them (``most_missed_beyond_missing`` its commits). The original
measurement writes the missed lines (each with its ``place``) and the failed samples
to ``--work``/``missed.json`` for a look at them (they are the sessions' text: they
stay in the work directory).

Usage (as root, to create the original paths; the fetched repository has the
branch)::

    python bench/moved_machine.py --repo /work/.mirror/entireio+cli/repo --work /tmp/mm
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

BRANCH = "entire/checkpoints/v1"
TRAILER = "Entire-Checkpoint:"
UNREAD = "unread_transcripts.json"  # under --work: the transcripts extract_sessions did not read


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def extract_sessions(repo: Path, work: Path, unread: set[str] | None = None) -> dict[str, str]:
    """The newest transcript of each session into a Claude Code root; session -> cwd.
    ``unread`` gets the branch path of every transcript not read (not in the snapshot,
    or naming no session or directory): the index never sees what those hold."""
    rows = git(repo, "ls-tree", "-r", BRANCH).splitlines()
    best: dict[str, tuple[int, str, str]] = {}
    for row in rows:
        meta, path = row.split("\t", 1)
        if not path.endswith("/full.jsonl"):
            continue
        sha = meta.split()[2]
        proc = subprocess.run(["git", "cat-file", "blob", sha], cwd=repo, capture_output=True)
        if proc.returncode != 0:
            if unread is not None:
                unread.add(path)
            continue  # files of 4 MiB and more are not in the snapshot
        data = proc.stdout
        sid = cwd = None
        for line in data.splitlines()[:50]:
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            if isinstance(doc, dict):
                sid = sid or doc.get("sessionId")
                cwd = cwd or doc.get("cwd")
        if not sid or not cwd:
            if unread is not None:
                unread.add(path)
            continue
        if sid not in best or len(data) > best[sid][0]:
            target = work / "claude" / "projects" / "p" / f"{sid}.jsonl"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            best[sid] = (len(data), str(target), cwd)
    return {sid: cwd for sid, (_, _, cwd) in best.items()}


def _branch_metadata(repo: Path, depth: int) -> Iterator[tuple[list[str], object]]:
    """Each ``metadata.json`` of the checkpoint branch ``depth`` folders deep: its path's
    parts and its JSON (a file git cannot show or that is not JSON is skipped)."""
    for row in git(repo, "ls-tree", "-r", "--name-only", BRANCH).splitlines():
        parts = row.split("/")
        if len(parts) != depth + 1 or parts[depth] != "metadata.json":
            continue
        try:
            yield parts, json.loads(git(repo, "show", f"{BRANCH}:{row}"))
        except (ValueError, subprocess.CalledProcessError):
            continue


def checkpoint_sessions(repo: Path) -> dict[str, set[str]]:
    """Checkpoint id -> the session ids its transcripts belong to."""
    out: dict[str, set[str]] = {}
    for parts, doc in _branch_metadata(repo, 3):
        sid = doc.get("session_id") if isinstance(doc, dict) else None
        if sid:
            out.setdefault(parts[0] + parts[1], set()).add(sid)
    return out


def checkpoint_transcripts(repo: Path) -> dict[str, list[str]]:
    """Checkpoint id -> the branch paths of the transcripts its metadata names."""
    out: dict[str, list[str]] = {}
    for parts, doc in _branch_metadata(repo, 2):
        sessions = doc.get("sessions") if isinstance(doc, dict) else None
        for entry in sessions if isinstance(sessions, list) else []:
            name = entry.get("transcript") if isinstance(entry, dict) else None
            if isinstance(name, str) and name:
                out.setdefault(parts[0] + parts[1], []).append(name.lstrip("/"))
    return out


def transcript_missing(
    checkpoints: list[str], transcripts: dict[str, list[str]], unread: set[str]
) -> bool:
    """Whether a transcript of the commit's own checkpoints was not read: the edits of
    the commit's session in it are not in the index, and the bench's own-edit label of
    a missed line then stands on the session's other transcripts' writes of its text."""
    return any(t in unread for c in checkpoints for t in transcripts.get(c, ()))


def commit_checkpoints(repo: Path, sha: str) -> list[str]:
    body = git(repo, "log", "-1", "--format=%B", sha)
    return [ln.split(":", 1)[1].strip() for ln in body.splitlines() if ln.startswith(TRAILER)]


def added_lines(clone: Path, sha: str) -> dict[str, list[tuple[int, str]]]:
    """path at ``sha`` -> (line number, text) of the lines it added against its first
    parent (a root commit adds nothing counted)."""
    try:
        git(clone, "rev-parse", "-q", "--verify", f"{sha}^")
    except subprocess.CalledProcessError:
        return {}
    diff = git(clone, "diff", "--no-color", "--no-ext-diff", "-U0", "-M", f"{sha}^", sha)
    out: dict[str, list[tuple[int, str]]] = {}
    path = None
    line = 0
    header = False
    for row in diff.split("\n"):
        if row.startswith("diff --git "):
            header, path = True, None
        elif header and row.startswith("+++ "):
            path = row[6:] if row.startswith("+++ b/") else None
        elif row.startswith("@@ ") and path is not None:
            header = False
            new = row.split(" ")[2]  # +start[,count]
            line = int(new[1:].split(",")[0])
        elif row.startswith("+") and path is not None and not header:
            out.setdefault(path, []).append((line, row[1:]))
            line += 1
    return out


class OwnEdit(NamedTuple):
    """One edit of a session: its file, tool, time and added lines (fingerprints in
    order, and which of them are text: not blank nor a bracket)."""

    path: str
    tool: str
    at: float
    fps: list[int]
    plain: list[bool]
    added: frozenset[int]


class OwnEdits:
    """Each session's edits (``OwnEdit``), read once."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        from deja_blame.index.fingerprint import fingerprint, is_trivial
        from deja_blame.index.store import edit_lines

        self.by_session: dict[str, list[OwnEdit]] = {}
        for session_id, path, tool, at, body in conn.execute(
            "SELECT s.session_id, e.path, e.tool, e.at_epoch, e.body"
            " FROM edits e JOIN sessions s ON s.sid = e.sid WHERE e.source = 'agent'"
        ):
            added = edit_lines(body)[1]
            fps = [fingerprint(x) for x in added]
            edit = OwnEdit(
                path, tool, at or 0.0, fps, [not is_trivial(x) for x in added], frozenset(fps)
            )
            self.by_session.setdefault(session_id, []).append(edit)

    def writes(self, sessions: set[str], path: str, fp: int) -> list[OwnEdit]:
        """The sessions' edits that added ``fp`` to a file named ``path``."""
        name = "/" + path
        return [
            edit
            for sid in sessions
            for edit in self.by_session.get(sid, ())
            if fp in edit.added and (edit.path.endswith(name) or edit.path == path)
        ]


def placed_lines(file_fps: list[int], edit_fps: list[int], plain: list[bool]) -> set[int] | None:
    """``placed_writes``'s lines (numbers from 1); None where the edit has no anchor."""
    got = placed_writes(file_fps, edit_fps, plain)
    return None if got is None else set(got)


def placed_writes(
    file_fps: list[int], edit_fps: list[int], plain: list[bool]
) -> dict[int, set[int]] | None:
    """The lines (numbers from 1) of a file (numbers from 1) of a file (``file_fps``, fingerprints in order) that an
    edit's added lines land on, as the edit's own anchors place them: its lines of text
    (``plain``) that the file and the edit each hold once. None where it has no anchor:
    its place cannot be told.

    A line lands where either way finds it: at its own distance, in the edit, from
    the nearest anchor before it or after it; or matched (``difflib``, longest common
    runs first) between two anchors the file holds in the edit's order, before the
    first anchor or after the last (within twice the edit's stretch there: a person may
    have put lines between). An edit's added lines need not be adjacent in the file
    (an edit's diff), so each way alone misses some; either way, a copy of its text
    in a function the edit did not write is not reached. Each line -> the edit's lines
    (indexes into ``edit_fps``) that land on it: one edit line may land on two (a person
    put lines between two anchors that end as the edit's lines above them did)."""
    import bisect
    import difflib

    in_file: dict[int, int] = {}
    first: dict[int, int] = {}
    for n, fp in enumerate(file_fps):
        in_file[fp] = in_file.get(fp, 0) + 1
        first.setdefault(fp, n)
    in_edit: dict[int, int] = {}
    for fp in edit_fps:
        in_edit[fp] = in_edit.get(fp, 0) + 1
    anchors = [
        (k, first[fp])
        for k, fp in enumerate(edit_fps)
        if plain[k] and in_file.get(fp) == 1 and in_edit[fp] == 1
    ]
    if not anchors:
        return None
    out: dict[int, set[int]] = {}
    keys = [k for k, _ in anchors]
    for k, fp in enumerate(edit_fps):  # at its own distance from the nearest anchors
        i = bisect.bisect_left(keys, k)
        nearest = anchors[max(i - 1, 0) : i] + anchors[i + (i < len(keys) and keys[i] == k) :][:1]
        for j, at in nearest:
            n = at + k - j
            if 0 <= n < len(file_fps) and file_fps[n] == fp:
                out.setdefault(n, set()).add(k)

    def match(e0: int, e1: int, f0: int, f1: int) -> None:
        f0, f1 = max(f0, 0), min(f1, len(file_fps))
        if e0 < e1 and f0 < f1:
            runs = difflib.SequenceMatcher(
                None, edit_fps[e0:e1], file_fps[f0:f1], autojunk=False
            ).get_matching_blocks()
            for a, b, size in runs:
                for t in range(size):
                    out.setdefault(f0 + b + t, set()).add(e0 + a + t)

    k0, at0 = anchors[0]
    match(0, k0 + 1, at0 - 2 * k0, at0 + 1)
    for (ka, a), (kb, b) in zip(anchors, anchors[1:]):
        if a < b:  # in the edit's order: the lines between are its own
            match(ka, kb + 1, a, b + 1)
    kn, atn = anchors[-1]
    match(kn, len(edit_fps), atn, atn + 2 * (len(edit_fps) - kn))
    return {n + 1: ks for n, ks in out.items()}


def missed_place(
    file_fps: list[int], line: int, edits: list[OwnEdit],
    seen: dict[int, dict[int, set[int]] | None] | None = None,
    given: set[int] | None = None,
) -> str:  # fmt: skip
    """Where the edits that wrote a missed line's text are (``placed_writes``):
    ``placed`` where the file holds the text once or one of them lands on the line,
    ``no_unique_line`` where one of them has no anchor (it may be here), else
    ``elsewhere``. ``seen`` keeps
    each edit's lines in this file (by the edit's id) for the file's next line.

    ``given``: the file's lines the write of an edit's line is accounted for at (given
    to the commit's sessions, or not the commit's: its parent had them). An edit's line
    that lands on this line and on such a line (two readings of one place: a person
    put lines between two anchors that end as the edit's lines above them do) is one
    write, and that line has it: it does not place this one (entireio ``state.go``,
    845ffb86: a validation block put between two of the edit's anchors, ending in
    ``return ""`` / ``}`` / blank as the edit's guard above it does; the edit's
    ``return ""`` read at the guard's line, the parent's, and at the block's)."""
    if file_fps.count(file_fps[line - 1]) == 1:
        return "placed"
    seen = {} if seen is None else seen
    for e in edits:
        if id(e) not in seen:
            seen[id(e)] = placed_writes(file_fps, e.fps, e.plain)
    places = [seen[id(e)] for e in edits]
    for p in places:
        if p is None or line not in p:
            continue
        if given is None:
            return "placed"
        elsewhere = {k for n, ks in p.items() if n != line and n in given for k in ks}
        if p[line] - elsewhere:
            return "placed"
    return "no_unique_line" if any(p is None for p in places) else "elsewhere"


def used_up(fp: int, edits: list[OwnEdit], given_copies: int) -> bool:
    """Whether ``edits`` wrote the text ``fp`` no more times than ``given_copies`` (the
    commit's lines of it given to the edits' sessions): each write lands on one line,
    so every write of the text has its line and a further copy is not one of them."""
    return sum(e.fps.count(fp) for e in edits) <= given_copies


def missed_own_lines(
    clone: Path, repo: Any, sha: str, sessions: set[str], given: set[tuple[str, int]],
    own: OwnEdits, mine: set[tuple[str, int]] | None = None,
) -> tuple[int, list[dict[str, Any]]]:  # fmt: skip
    """(own-edit lines of the commit, the missed ones with their cause). ``mine``: the
    commit's lines deja gives to ``sessions`` (None: every line ``given``)."""
    from deja_blame.index.fingerprint import fingerprint, is_trivial

    if not sessions:
        return 0, []
    counted = 0
    missed: list[dict[str, Any]] = []
    parent_time = repo[sha].parents[0].commit_time if repo[sha].parents else 0
    mine = given if mine is None else mine
    for path, rows in added_lines(clone, sha).items():
        text_fps: list[int] | None = None
        seen: dict[int, dict[int, set[int]] | None] = {}
        mine_here = {n for p, n in mine if p == path}
        added_here = {n for n, _ in rows}
        given_copies: dict[int, int] = {}  # the commit's lines of a text given to them
        for line, text in rows:
            if (path, line) in mine:
                key = fingerprint(text)
                given_copies[key] = given_copies.get(key, 0) + 1
        for line, text in rows:
            if is_trivial(text):
                continue
            fp = fingerprint(text)
            writes = own.writes(sessions, path, fp)
            if not writes:
                continue
            counted += 1
            if (path, line) in given:
                continue
            if text_fps is None:
                try:
                    body = repo[sha].tree[path].data.decode("utf-8", "replace")
                except KeyError:
                    body = ""
                text_fps = [fingerprint(x) for x in body.split("\n")]
            if text_fps.count(fp) > 1:
                cause = "repeated"
            elif all(w.tool.startswith("shell") for w in writes):
                cause = "shell"
            elif all(w.at and w.at < parent_time for w in writes):
                cause = "before_parent"
            else:
                cause = "other"
            place = "placed"
            if line <= len(text_fps):
                # the lines an edit's write cannot be missed at: given to the
                # sessions, or not this commit's (the parent had them)
                settled = mine_here | (set(range(1, len(text_fps) + 1)) - added_here)
                place = missed_place(text_fps, line, writes, seen, settled)
            if place == "no_unique_line" and used_up(fp, writes, given_copies.get(fp, 0)):
                place = "used_up"
            missed.append(
                {"commit": sha, "path": path, "line": line, "cause": cause, "place": place}
            )
    return counted, missed


def linked_commits(repo: Path) -> list[str]:
    out = []
    log = git(repo, "log", "--format=%H%x00%B%x01", "HEAD")
    for entry in log.split("\x01"):
        if "\x00" not in entry:
            continue
        sha, body = entry.strip().split("\x00", 1)
        if TRAILER in body:
            out.append(sha)
    return out


def measure(
    clone: Path, env: dict[str, str], commits: list[str], sample: int, source: Path,
    dump: Path | None = None, unread: set[str] | None = None,
) -> dict[str, Any]:  # fmt: skip
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "deja_blame", "stats", "--json"],
        cwd=clone,
        env=env,
        capture_output=True,
    )
    stats_s = time.perf_counter() - t
    stats = json.loads(proc.stdout) if proc.returncode == 0 else {"error": proc.stderr.decode()}
    import pygit2

    from deja_blame.attribution.commit import attribute_commit
    from deja_blame.index.db import connect

    repo = pygit2.Repository(str(clone))
    conn = connect(Path(env["DEJA_DB"]))
    per_commit: dict[str, int] = {}
    claims: list[tuple[str, str, str, int]] = []
    own = OwnEdits(conn)
    checkpoints = checkpoint_sessions(source)
    transcripts = checkpoint_transcripts(source)
    own_lines = 0
    missed: list[dict[str, Any]] = []
    annotate_s = 0.0
    for sha in commits:
        t = time.perf_counter()
        result = attribute_commit(repo, sha, conn)
        annotate_s += time.perf_counter() - t
        per_commit[sha] = sum(a for _, a in result.counts.values())
        given: set[tuple[str, int]] = set()
        mine: set[tuple[str, int]] = set()  # given to the commit's own sessions
        own_checkpoints = commit_checkpoints(source, sha)
        sessions = {s for c in own_checkpoints for s in checkpoints.get(c, ())}
        unseen = transcript_missing(own_checkpoints, transcripts, unread or set())
        for path, by_session in result.note.files.items():
            for sid, ranges in by_session.items():
                for r in ranges:
                    for line in range(int(r[0]), int(r[1]) + 1):
                        claims.append((sha, path, sid, line))
                        given.add((path, line))
                        if sid in sessions:
                            mine.add((path, line))
        counted, lost = missed_own_lines(clone, repo, sha, sessions, given, own, mine)
        for m in lost:
            m["transcript_missing"] = unseen
        own_lines += counted
        missed.extend(lost)
    rng = random.Random(28)
    picked = rng.sample(claims, min(sample, len(claims)))
    checked = [(c, verify(repo, conn, c)) for c in picked]
    verified = sum(ok for _, ok in checked)
    every = Verifier(repo, conn, clone)
    same_name = [c for c in claims if not every.verify(c)]
    not_renamed = [c for c in same_name if not every.verify_renamed(c)]
    wrong_claims = [c for c in not_renamed if not every.verify_moved(c)]
    conn.close()
    causes: dict[str, int] = {}
    for m in missed:
        causes[m["cause"]] = causes.get(m["cause"], 0) + 1
    by_commit: dict[str, int] = {}
    for m in missed:
        by_commit[m["commit"]] = by_commit.get(m["commit"], 0) + 1
    places: dict[str, int] = {}
    for m in missed:
        places[m["place"]] = places.get(m["place"], 0) + 1
    placed_by_commit, beyond_by_commit, seen_by_commit, unseen_lines = missed_counts(missed)
    if dump is not None:
        dump.write_text(
            json.dumps(
                {
                    "missed": missed,
                    "unverified": [c for c, ok in checked if not ok],
                    "unverified_all": wrong_claims,
                    "verified_by_rename": [c for c in same_name if c not in not_renamed],
                    "verified_by_move": [c for c in not_renamed if c not in wrong_claims],
                }
            )
        )
    return {
        "stats_lines": stats.get("lines"),
        "stats_attributed": stats.get("attributed_lines"),
        "stats_seconds": round(stats_s, 1),
        "commits": len(commits),
        "commit_lines": sum(per_commit.values()),
        "commits_with_lines": sum(1 for n in per_commit.values() if n),
        "annotate_seconds": round(annotate_s, 1),
        "sampled": len(picked),
        "verified": verified,
        "claims": len(claims),
        "claims_verified": len(claims) - len(wrong_claims),
        "claims_verified_renamed": len(claims) - len(not_renamed),
        "claims_verified_same_name": len(claims) - len(same_name),
        "own_edit_lines": own_lines,
        "missed_own_edit_lines": len(missed),
        "missed_causes": dict(sorted(causes.items())),
        "commits_missing_own_lines": len(by_commit),
        "most_missed": sorted(by_commit.items(), key=lambda kv: -kv[1])[:10],
        "missed_own_edit_lines_placed": sum(placed_by_commit.values()),
        "missed_own_edit_lines_beyond_used_up": sum(beyond_by_commit.values()),
        "missed_own_edit_lines_transcript_missing": unseen_lines,
        "missed_own_edit_lines_beyond_used_up_and_missing": sum(seen_by_commit.values()),
        "missed_by_place": dict(sorted(places.items())),
        "most_missed_placed": sorted(placed_by_commit.items(), key=lambda kv: -kv[1])[:10],
        "most_missed_beyond_used_up": sorted(beyond_by_commit.items(), key=lambda kv: -kv[1])[:10],
        "most_missed_beyond_missing": sorted(seen_by_commit.items(), key=lambda kv: -kv[1])[:10],
        "per_commit": per_commit,
    }


def missed_counts(
    missed: list[dict[str, Any]],
) -> tuple[dict[str, int], dict[str, int], dict[str, int], int]:
    """The missed own-edit lines by commit three ways, and the ``transcript_missing``
    ones among the strict: strict (every place but ``elsewhere``), beyond used-up
    copies (``placed`` and ``no_unique_line``), and of those the ones whose commit's
    own transcripts were all read (a line whose session's edits the index never saw
    is not deja's miss, but the strict count keeps it)."""
    strict: dict[str, int] = {}
    beyond: dict[str, int] = {}
    seen: dict[str, int] = {}
    unseen = 0
    for m in missed:
        if m["place"] == "elsewhere":
            continue
        strict[m["commit"]] = strict.get(m["commit"], 0) + 1
        unseen += bool(m.get("transcript_missing"))
        if m["place"] not in ("placed", "no_unique_line"):
            continue
        beyond[m["commit"]] = beyond.get(m["commit"], 0) + 1
        if not m.get("transcript_missing"):
            seen[m["commit"]] = seen.get(m["commit"], 0) + 1
    return strict, beyond, seen, unseen


def verify(repo: Any, conn: sqlite3.Connection, claim: tuple[str, str, str, int]) -> bool:
    """The session added a line with this text to a file of this name."""
    from deja_blame.index.fingerprint import fingerprint
    from deja_blame.index.store import edit_lines

    sha, path, sid, line = claim
    try:
        text = repo[sha].tree[path].data.decode("utf-8", "replace").split("\n")[line - 1]
    except (KeyError, IndexError):
        return False
    fp = fingerprint(text)
    name = "/" + path
    for epath, body in conn.execute(
        "SELECT e.path, e.body FROM edits e JOIN sessions s ON s.sid = e.sid WHERE s.session_id=?",
        (sid,),
    ):
        if not (epath.endswith(name) or epath.endswith("/" + path.rsplit("/", 1)[-1])):
            continue
        if any(fingerprint(x) == fp for x in edit_lines(body)[1]):
            return True
    return False


class CommitMoves:
    """What one commit's diff against its first parent (``-M``) says moved: the runs of
    lines it removed from each file (by the file's name at the parent; fingerprints in
    order), the runs of lines it added to each file (numbers at the commit), the files
    it deleted and added."""

    def __init__(self, clone: Path, sha: str) -> None:
        self.clone, self.sha = clone, sha
        self.removed: dict[str, list[list[int]]] = {}
        self.added: dict[str, list[list[int]]] = {}
        self.deleted: list[str] = []
        self.added_files: set[str] = set()
        self._before: dict[str, set[int]] = {}

    @classmethod
    def of(cls, clone: Path, sha: str) -> CommitMoves:
        from deja_blame.index.fingerprint import fingerprint

        moves = cls(clone, sha)
        try:  # quotepath off: a name git would quote for its bytes stays as it is
            diff = git(
                clone, "-c", "core.quotepath=off", "diff", "--no-color", "--no-ext-diff",
                "-U0", "-M", f"{sha}^", sha,
            )  # fmt: skip
        except subprocess.CalledProcessError:
            return moves  # a root commit: nothing left another file
        old = new = None
        line = 0
        header = False
        removing: list[int] | None = None
        adding: list[int] | None = None
        for row in diff.split("\n"):
            if row.startswith("diff --git "):
                header, old, new = True, None, None
            elif header and row.startswith("--- "):
                old = _diff_name(row[4:], "a/")
            elif header and row.startswith("+++ "):
                new = _diff_name(row[4:], "b/")
                if new is None and old is not None:
                    moves.deleted.append(old)
                if old is None and new is not None:
                    moves.added_files.add(new)
            elif row.startswith("@@ "):
                header = False
                line = int(row.split(" ")[2][1:].split(",")[0])
                removing = adding = None  # -U0: each hunk is one run of each
            elif row.startswith("-") and not header and old is not None:
                if removing is None:
                    removing = []
                    moves.removed.setdefault(old, []).append(removing)
                removing.append(fingerprint(row[1:]))
            elif row.startswith("+") and not header and new is not None:
                if adding is None:
                    adding = []
                    moves.added.setdefault(new, []).append(adding)
                adding.append(line)
                line += 1
        return moves

    def run_of(self, path: str, line: int) -> list[int]:
        """The numbers of the run of added lines of ``path`` that holds ``line``."""
        return next((run for run in self.added.get(path, []) if line in run), [])

    def before(self, path: str) -> set[int]:
        """The fingerprints of ``path``'s lines at the parent, not blank nor a bracket."""
        from deja_blame.index.fingerprint import fingerprint, is_trivial

        if path not in self._before:
            try:
                body = git(self.clone, "show", f"{self.sha}^:{path}")
            except subprocess.CalledProcessError:
                body = ""
            self._before[path] = {fingerprint(x) for x in body.split("\n") if not is_trivial(x)}
        return self._before[path]


def _diff_name(field: str, prefix: str) -> str | None:
    """A file's name in a ``---``/``+++`` row (None for /dev/null): a name git still
    quotes (a quote, backslash or control byte in it) is read as the C string it is."""
    field = field.removesuffix("\t")  # git ends a name holding a space with a tab
    if len(field) > 1 and field[0] == field[-1] == '"':
        field = _unquoted(field[1:-1])
    return field[len(prefix) :] if field.startswith(prefix) else None


_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def _unquoted(text: str) -> str:
    """git's C quoting undone: ``\\t``, ``\\"``, ``\\\\`` and a byte as three octal digits."""
    out = bytearray()
    at = 0
    while at < len(text):
        if text[at] == "\\" and text[at + 1 : at + 2] in _ESCAPES:
            out.append(_ESCAPES[text[at + 1]])
            at += 2
        elif text[at] == "\\" and len(digits := text[at + 1 : at + 4]) == 3 and digits.isdigit():
            out.append(int(digits, 8))
            at += 4
        else:
            out += text[at].encode()
            at += 1
    return out.decode("utf-8", "replace")


def moved_blocks(added: list[int], texts: list[str], removed: list[list[int]]) -> set[int]:
    """The lines of the run ``added`` (numbers into ``texts``) that belong to a block
    moved from one of the ``removed`` runs (fingerprints in order), as git's
    ``--color-moved`` finds one: a stretch of lines the run shares, in order, with a
    removed run, that holds two adjacent lines that are not blank nor a bracket. One
    shared line, or shared lines each between brackets, is not a moved block: the
    common texts of a language (``return err``, ``}``) are in every diff."""
    from deja_blame.index.fingerprint import fingerprint, is_trivial

    fps = [fingerprint(texts[n - 1]) for n in added]
    plain = [not is_trivial(texts[n - 1]) for n in added]
    where: dict[int, list[tuple[int, int]]] = {}
    for r, run in enumerate(removed):
        for k, fp in enumerate(run):
            where.setdefault(fp, []).append((r, k))
    moved: set[int] = set()
    for i in range(len(added) - 1):
        if not (plain[i] and plain[i + 1]) or added[i] in moved and added[i + 1] in moved:
            continue
        for r, k in where.get(fps[i], []):
            run = removed[r]
            if k + 1 >= len(run) or run[k + 1] != fps[i + 1]:
                continue
            start, at = i, k  # the shared stretch, both ways, blank lines and brackets too
            while start > 0 and at > 0 and fps[start - 1] == run[at - 1]:
                start, at = start - 1, at - 1
            end, at = i + 1, k + 1
            while end + 1 < len(added) and at + 1 < len(run) and fps[end + 1] == run[at + 1]:
                end, at = end + 1, at + 1
            moved.update(added[start : end + 1])
    return moved


class Verifier:
    """``verify`` for every claim: each session's edits read once, each file once.

    ``verify_renamed`` also accepts an edit to a name the file had before, as git
    follows it (``git log -M --follow`` from the claim's commit): a session that
    wrote ``clean.go`` which a later commit renamed to ``cleanup.go`` wrote those
    lines. A file the commit deleted, with no rename git sees, stays unverified."""

    def __init__(self, repo: Any, conn: sqlite3.Connection, clone: Path) -> None:
        self.repo, self.conn, self.clone = repo, conn, clone
        self.edits: dict[str, list[tuple[str, list[int]]]] = {}
        self.files: dict[tuple[str, str], list[str]] = {}
        self.added: dict[tuple[str, str], set[int]] = {}
        self.names: dict[tuple[str, str], list[str]] = {}
        self.moves: dict[str, CommitMoves] = {}
        self.mostly_renamed_from: dict[tuple[str, str, str, str], bool] = {}
        self.blocks: dict[tuple[str, str, str], set[int]] = {}
        self.blocks_written: dict[tuple[str, str, str, str], set[int]] = {}

    def verify_moved(self, claim: tuple[str, str, str, int]) -> bool:
        """The session added the line's text to a file the line demonstrably came from
        in the claim's commit, as git's diff of that commit shows (never deja's answer):

        - a file a block of lines moved out of (``moved_blocks``: the line's run of
          added lines shares with one run the commit removed from that file a stretch,
          in order, holding two adjacent lines of text; ``manual_commit_hooks.go`` ->
          ``content_overlap.go``), the line in that stretch;
        - a file the commit deleted, when this file is one the commit added and at
          least half of its different lines (not blank nor a bracket) are that file's
          texts, at the parent or as the session wrote them into it, and the line's
          text was in that file at the parent: a rename git misses because the file
          also grew (``clean.go`` -> ``cleanup.go``, 90 -> 176 lines, git's similarity
          13 %).

        The session's edits must hold the text at that file's whole name (not its base
        name). A blank line or lone bracket verifies only beside (the nearest line of
        text either way in its run of added lines) a line of text so verified through
        the same file: the common texts of a language alone prove nothing."""
        from deja_blame.index.fingerprint import is_trivial

        sha, path, sid, line = claim
        moved = self._moved(sha)
        texts = self.files[sha, path]
        text = texts[line - 1]
        if is_trivial(text):
            run = moved.run_of(path, line)
            if line not in run:
                return False
            at = run.index(line)
            beside = [
                next((n for n in side if not is_trivial(texts[n - 1])), None)
                for side in (reversed(run[:at]), run[at + 1 :])
            ]
            return any(
                self._wrote(sid, gone, text) and self._through(claim, gone, n)
                for gone in self._sources(sha, path, sid)
                for n in beside
                if n is not None
            )
        return any(self._through(claim, gone, line) for gone in self._sources(sha, path, sid))

    def _sources(self, sha: str, path: str, sid: str) -> list[str]:
        """The files ``path``'s lines may have come from in ``sha``: those it removed
        lines from, and those it deleted that ``path``, added, mostly is."""
        moved = self._moved(sha)
        gone = [f for f in moved.removed if f != path]
        if path in moved.added_files:
            gone += [f for f in moved.deleted if self._mostly(sha, path, f, sid)]
        return list(dict.fromkeys(gone))

    def _through(self, claim: tuple[str, str, str, int], gone: str, line: int) -> bool:
        """Line ``line`` of the claim's file (a line of text) came from ``gone`` and
        the session wrote its text there: in a block moved out of ``gone``, or its
        text was in ``gone`` at the parent, a file the commit deleted that this one,
        added, mostly is."""
        from deja_blame.index.fingerprint import fingerprint

        sha, path, sid, _ = claim
        moved = self._moved(sha)
        text = self.files[sha, path][line - 1]
        if not self._wrote(sid, gone, text):
            return False
        key = (sha, path, gone)
        if key not in self.blocks:
            self.blocks[key] = {
                n
                for run in moved.added.get(path, [])
                for n in moved_blocks(run, self.files[sha, path], moved.removed.get(gone, []))
            }
        if line in self.blocks[key]:
            return True
        if not (
            path in moved.added_files
            and gone in moved.deleted
            and self._mostly(sha, path, gone, sid)
        ):
            return False
        if fingerprint(text) in moved.before(gone):
            return True
        # or a block the session wrote into gone after the parent: what the commit
        # took away was gone as it stood, the session's uncommitted edits too
        key = (sha, path, gone, sid)
        if key not in self.blocks_written:
            written = [fps for epath, fps in self.edits[sid] if epath.endswith("/" + gone)]
            self.blocks_written[key] = {
                n
                for run in moved.added.get(path, [])
                for n in moved_blocks(run, self.files[sha, path], written)
            }
        return line in self.blocks_written[key]

    def _moved(self, sha: str) -> CommitMoves:
        if sha not in self.moves:
            self.moves[sha] = CommitMoves.of(self.clone, sha)
        return self.moves[sha]

    def _wrote(self, sid: str, name: str, text: str) -> bool:
        """An edit of the session added ``text`` to a path ending in ``/name``."""
        from deja_blame.index.fingerprint import fingerprint

        return fingerprint(text) in self._added_to(sid, name)

    def _added_to(self, sid: str, name: str) -> set[int]:
        """The texts the session's edits added to paths ending in ``/name``."""
        self._edits(sid)
        full = "/" + name
        if (sid, full) not in self.added:
            self.added[sid, full] = {
                fp for epath, fps in self.edits[sid] if epath.endswith(full) for fp in fps
            }
        return self.added[sid, full]

    def _mostly(self, sha: str, path: str, gone: str, sid: str) -> bool:
        """At least half of ``path``'s different lines (not trivial) at ``sha`` are
        ``gone``'s at the parent or the session's writes into it."""
        from deja_blame.index.fingerprint import fingerprint, is_trivial

        key = (sha, path, gone, sid)
        if key not in self.mostly_renamed_from:
            mine = {fingerprint(x) for x in self.files[sha, path] if not is_trivial(x)}
            theirs = self._moved(sha).before(gone) | self._added_to(sid, gone)
            self.mostly_renamed_from[key] = bool(mine) and 2 * len(mine & theirs) >= len(mine)
        return self.mostly_renamed_from[key]

    def _edits(self, sid: str) -> None:
        from deja_blame.index.fingerprint import fingerprint
        from deja_blame.index.store import edit_lines

        if sid not in self.edits:
            self.edits[sid] = [
                (epath, [fingerprint(x) for x in edit_lines(body)[1]])
                for epath, body in self.conn.execute(
                    "SELECT e.path, e.body FROM edits e JOIN sessions s ON s.sid = e.sid"
                    " WHERE s.session_id=?",
                    (sid,),
                )
            ]

    def verify_renamed(self, claim: tuple[str, str, str, int]) -> bool:
        sha, path, sid, line = claim
        if (sha, path) not in self.names:
            log = git(
                self.clone, "log", "-M", "--follow", "--name-only", "--format=", sha, "--", path
            )
            self.names[sha, path] = sorted({n for n in log.split("\n") if n and n != path})
        return any(self.verify((sha, path, sid, line), name) for name in self.names[sha, path])

    def verify(self, claim: tuple[str, str, str, int], name: str | None = None) -> bool:
        """The session added the line's text to a file named as the claim's (or ``name``)."""
        from deja_blame.index.fingerprint import fingerprint

        sha, path, sid, line = claim
        if (sha, path) not in self.files:
            try:
                data = self.repo[sha].tree[path].data.decode("utf-8", "replace")
            except KeyError:
                data = ""
            self.files[sha, path] = data.split("\n")
        texts = self.files[sha, path]
        if not 0 < line <= len(texts):
            return False
        self._edits(sid)
        wrote = name or path
        if (sid, wrote) not in self.added:
            full, base = "/" + wrote, "/" + wrote.rsplit("/", 1)[-1]
            self.added[sid, wrote] = {
                fp
                for epath, fps in self.edits[sid]
                if epath.endswith(full) or epath.endswith(base)
                for fp in fps
            }
        return fingerprint(texts[line - 1]) in self.added[sid, wrote]


def measure_elsewhere(
    work: Path, env: dict[str, str], args: argparse.Namespace, cwds: list[str]
) -> dict[str, Any]:
    """Another machine: the original clones gone, one clone elsewhere."""
    tops = sorted({Path(*Path(c).parts[:3]) for c in cwds})  # /Users/<name>
    for top in tops:
        os.rename(top, str(top) + ".moved-away")
    try:
        elsewhere = work / "elsewhere" / "zoe" / "code" / "entire-cli"
        if not elsewhere.exists():
            elsewhere.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "clone", "-q", "--shared", str(args.repo), str(elsewhere)])
        return measure_apart(elsewhere, env, args)
    finally:
        for top in tops:
            os.rename(str(top) + ".moved-away", top)


def measure_apart(
    clone: Path, env: dict[str, str], args: argparse.Namespace, dump: Path | None = None
) -> dict[str, Any]:
    """``measure`` in a process of its own: what one measurement learnt (a directory's
    root commits, a session's judgement) must not answer for the next, where the
    original clones are gone."""
    proc = subprocess.run(
        [sys.executable, __file__, "--repo", str(args.repo), "--work", str(args.work),
         "--sample", str(args.sample), "--commits", str(args.commits), "--measure", str(clone),
         *(["--dump", str(dump)] if dump else []), *(["--only", args.only] if args.only else [])],
        env=env, capture_output=True, check=True,
    )  # fmt: skip
    return dict(json.loads(proc.stdout))


def chosen_commits(args: argparse.Namespace) -> list[str]:
    commits = linked_commits(args.repo)
    if args.only:
        wanted = args.only.split(",")
        commits = [c for c in commits if any(c.startswith(w) for w in wanted)]
    if args.commits:
        commits = commits[: args.commits]
    return commits


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, required=True, help="entireio/cli with its branch")
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--sample", type=int, default=200)
    ap.add_argument("--commits", type=int, default=0, help="at most N linked commits (0: all)")
    ap.add_argument("--only", help="these linked commits only (comma-separated prefixes)")
    ap.add_argument(
        "--where", choices=("both", "original", "elsewhere"), default="both",
        help="measure at the sessions' own paths, from a clone elsewhere, or both",
    )  # fmt: skip
    ap.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # one measurement, alone
    ap.add_argument("--dump", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure is not None:
        commits = chosen_commits(args)
        unread_file = args.work.resolve() / UNREAD
        unread = set(json.loads(unread_file.read_text())) if unread_file.exists() else set()
        result = measure(
            args.measure, dict(os.environ), commits, args.sample, args.repo, args.dump, unread
        )
        print(json.dumps(result))
        return 0
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    unread: set[str] = set()
    sessions = extract_sessions(args.repo, work, unread)
    (work / UNREAD).write_text(json.dumps(sorted(unread)))
    cwds = sorted({c for c in sessions.values() if c.startswith("/")}, key=len)
    home = work / "home"
    (home / "none").mkdir(parents=True, exist_ok=True)  # no other agent's sessions
    env = {
        **os.environ,
        "HOME": str(home),
        "DEJA_DB": str(work / "index.db"),
        "DEJA_CLAUDE_ROOT": str(work / "claude" / "projects"),
        "DEJA_ANTIGRAVITY_ROOT": str(home / "none"),
        "DEJA_CODEX_ROOT": str(home / "none"),
        "DEJA_GEMINI_ROOT": str(home / "none"),
    }
    made = []
    for cwd in cwds:  # shortest first: a worktree folder inside a clone comes after it
        target = Path(cwd)
        if (target / ".git").exists():
            made.append(target)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            shutil.rmtree(target)
        subprocess.run(["git", "clone", "-q", "--shared", str(args.repo), cwd], check=True)
        made.append(target)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "deja_blame", "index", "-q"], env=env)
    index_s = time.perf_counter() - t
    used = max(set(sessions.values()), key=list(sessions.values()).count)
    report: dict[str, Any] = {
        "sessions": len(sessions),
        "original_clones": len(made),
        "index_seconds": round(index_s, 1),
    }
    original = moved = None
    if args.where != "elsewhere":
        original = measure_apart(Path(used), env, args, work / "missed.json")
        report["original"] = {k: v for k, v in original.items() if k != "per_commit"}
    if args.where != "original":
        moved = measure_elsewhere(work, env, args, cwds)
        report["elsewhere"] = {k: v for k, v in moved.items() if k != "per_commit"}
    if original and moved:
        lost = [
            s for s, n in original["per_commit"].items() if n and not moved["per_commit"].get(s)
        ]
        report["commit_lines_ratio"] = round(
            moved["commit_lines"] / max(1, original["commit_lines"]), 4
        )
        report["stats_ratio"] = round(
            (moved["stats_attributed"] or 0) / max(1, original["stats_attributed"] or 0), 4
        )
        report["commits_losing_all_lines"] = lost
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
