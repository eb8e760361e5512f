"""Which files of a commit can hold a session's line: the history pass's finer sieve.

``attribution.commit.files_worth_blaming`` keeps every file a session ever wrote.
Over a history that is most commits of a busy file (a person's fix of a file an
agent wrote once is blamed, matched and its moves followed, to find nobody), so
before a commit is derived, each file it changed is asked what the matcher's
rules need at the least to give a line of it to a session, by the commit's time:

- a line the commit introduced, not trivial, whose text a session wrote to this
  file (here or in another clone);
- consecutive introduced lines that, joined, are the text of one line a session
  wrote there (a formatter split it: ``attribution/match/reflow.py``), with the
  trailing comma such a split adds also tried without it;
- ``MOVED_BLOCK`` introduced lines whose texts a session wrote to any file of
  this repository (a block moved between files: ``attribution/match/moves.py``).

A file that has none of these is not blamed; a commit none of whose files has
is derived without a blame (its note, if it has one, is still merged and told
what it was computed from).
"""

from __future__ import annotations

import re
import sqlite3

import pygit2

from deja_blame.attribution.commit import introduced_lines
from deja_blame.attribution.match.moves import MOVED_BLOCK
from deja_blame.attribution.match.reflow import REFLOW_MAX
from deja_blame.errors import DejaError
from deja_blame.gitutil import read_file
from deja_blame.index import queries as Q
from deja_blame.index.fingerprint import fingerprint, is_trivial, normalise_line
from deja_blame.notes.derived_from import SKEW, SessionWrites

# as attribution/match/reflow.py: the comma black and ruff add after a split call's last item
_MAGIC_COMMA = re.compile(r",([)\]}])")


def _split_fingerprints(norm: list[str], lines: list[int]) -> set[int]:
    """Fingerprints of the texts runs of 2..REFLOW_MAX consecutive introduced lines
    make when joined (``norm``: the file's lines without white space, 0-based)."""
    out: set[int] = set()
    wanted = set(lines)
    for first in sorted(wanted):
        joined = norm[first - 1]
        for k in range(1, REFLOW_MAX):
            line = first + k
            if line not in wanted or not norm[line - 1]:
                break
            joined += norm[line - 1]
            if is_trivial(joined):
                continue
            out.add(fingerprint(joined))
            bare = _MAGIC_COMMA.sub(r"\1", joined)
            if bare != joined:
                out.add(fingerprint(bare))
    return out


def files_worth_deriving(
    repo: pygit2.Repository,
    commit: pygit2.Commit,
    conn: sqlite3.Connection,
    writes: SessionWrites,
) -> set[str]:
    """The files of ``commit`` where a session's line may be found (see above)."""
    until = commit.commit_time + SKEW
    everywhere = sorted({pid for pids in writes.pids.values() for pid in pids})
    out: set[str] = set()
    sha = str(commit.id)
    for path, introduced in introduced_lines(repo, commit).items():
        try:
            texts = read_file(repo, path, sha).lines()
        except DejaError:
            continue
        lines = [n for n in sorted(introduced) if 0 < n <= len(texts)]
        solid = {fingerprint(texts[n - 1]) for n in lines if not is_trivial(texts[n - 1])}
        own = writes.pids.get(path, [])
        if own:
            norm = [normalise_line(t) for t in texts]
            if Q.fingerprints_written_by(
                conn, own, solid | _split_fingerprints(norm, lines), until
            ):
                out.add(path)
                continue
        if len(solid) >= MOVED_BLOCK and everywhere:
            if len(Q.fingerprints_written_by(conn, everywhere, solid, until)) >= MOVED_BLOCK:
                out.add(path)
    return out
