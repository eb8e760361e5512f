"""The refresh's look at Antigravity's sessions, as one text a kept answer compares.

Before an answer, the refresh (``changes.changed_transcripts``) lists each root's
``brain/`` and stats each session's transcript (``transcript_in``: two ``lstat``s);
that is all it learns of those files before it reads the ones that changed. A kept
answer (``printed.py``) is good while a look now would see what that look saw: so
the refresh, when a kept answer waits for it (``wait``), gives what it saw here
(``seen``), as it saw it, with no second pass over the files; and a warm question
looks again the same way (``now``), with the same functions. A session written after
the refresh looked is in a later look, never in the kept one.

That look costs two ``lstat``s a session, whatever changed (80 ms at 10,000
sessions): only a watch of the files can say "nothing changed" for less. In a fork of
the resident server, whose watch (``resident/watch.py``) the kernel tells of every
write below the roots, the look is the watch's own word instead (``by_watch``, set by
the server: ``index/watched.look_text``): which watch, and the number of the last
event that touched a session. A write after the fork's copy was taken is a later
event, seen by the next fork; where the watch cannot vouch, the files are looked at.

Only ``os`` and ``stat`` here: a warm ``deja blame`` imports this before click.
"""

from __future__ import annotations

import os
import stat

from deja_blame.blake2 import blake2b  # not hashlib's (it sets up every OpenSSL digest)

TYPE_CHECKING = False  # typing's own is not loaded here
if TYPE_CHECKING:
    from collections.abc import Callable

# Copies of ``transcripts.antigravity.discover``'s (whose module loads what a warm
# answer must not; a test holds them equal)
FULL_NAME = "transcript_full.jsonl"
COMPACT_NAME = "transcript.jsonl"

# (transcript, size, mtime_ns, inode) as the index keeps it (``TranscriptFile.stat_key``:
# the sizes of the transcript and its part added, the later mtime), then the part
Found = tuple[str, int, int, int, "str | None"]


def listing(root: str) -> list[str]:
    """The sessions' folders' names in ``root``'s ``brain/``, sorted; none when it
    cannot be listed (not there yet)."""
    try:
        return sorted(os.listdir(os.path.join(root, "brain")))
    except OSError:
        return []


def transcript_in(logs: str, full_seen: bool = True) -> Found | None:
    """A session's transcript in its ``logs/`` folder as discovery takes it
    (``antigravity.discover.find_transcripts``): the full one where it is a regular
    file, with the compact one beside it as its part (it can reach further back), else
    the compact one; by ``lstat``, so a link or special file is no transcript. Keyed
    as the index keeps it: a full transcript compared alone never matched the key of
    one read with its part, and a session read by the refresh without its part lost
    the compact file's earlier steps.

    ``full_seen`` False: the index holds the compact transcript read alone (there was
    no full one). The full one is then looked for by ``access`` first, which says it
    is not there without raising: a failed ``lstat`` raises an exception, and that was
    a tenth of the look at 10,000 such sessions. Either way the same answer."""
    full = compact = None
    if full_seen or os.access(logs + FULL_NAME, os.F_OK, follow_symlinks=False):
        try:
            full = os.lstat(logs + FULL_NAME)
        except OSError:
            pass
    try:
        compact = os.lstat(logs + COMPACT_NAME)
    except OSError:
        pass
    if full is not None and not stat.S_ISREG(full.st_mode):
        full = None
    if compact is not None and not stat.S_ISREG(compact.st_mode):
        compact = None
    if full is None:
        if compact is None:
            return None
        return (logs + COMPACT_NAME, compact.st_size, compact.st_mtime_ns, compact.st_ino, None)
    if compact is None:
        return (logs + FULL_NAME, full.st_size, full.st_mtime_ns, full.st_ino, None)
    size, mtime = full.st_size + compact.st_size, max(full.st_mtime_ns, compact.st_mtime_ns)
    return (logs + FULL_NAME, size, mtime, full.st_ino, logs + COMPACT_NAME)


class Seen:
    """What one look saw: the roots (as the refresh named them) and the look's text."""

    __slots__ = ("roots", "text")

    def __init__(self) -> None:
        self.roots: list[str] | None = None
        self.text: str | None = None


_waiting: Seen | None = None

# In a fork of the resident server: the watch's look at ``roots`` (a text), or None
# where it cannot vouch for them (``index/watched.look_text``); None elsewhere.
by_watch: Callable[[list[str]], str | None] | None = None


def wait() -> Seen:
    """A kept answer waits for this process's next look (the first one is kept)."""
    global _waiting
    _waiting = Seen()
    return _waiting


def stop() -> None:
    """Nothing waits any more (the command is over)."""
    global _waiting
    _waiting = None


def waiting() -> bool:
    """Whether a look now is one a kept answer waits for (``seen``)."""
    return _waiting is not None and _waiting.text is None


def seen(roots: list[str], listed: list[list[str]], found: list[Found | None]) -> None:
    """The refresh looked: ``listed`` each root's sessions (``listing``), ``found`` each
    one's transcript (``transcript_in``), root by root, in the listing's order."""
    if waiting():  # the first look is the one kept
        seen_text(roots, text(roots, listed, found))


def seen_text(roots: list[str], said: str) -> None:
    """The refresh looked at ``roots`` and saw ``said`` (``text``, or the watch's:
    ``by_watch``); kept only where a kept answer waits for the first look."""
    w = _waiting
    if w is not None and w.text is None:
        w.roots = list(roots)
        w.text = said


def now(roots: list[str]) -> str:
    """The same look, now (what ``seen`` would be given): the watch's word where the
    resident server's watch vouches for ``roots``, else each session's stat."""
    if by_watch is not None:
        said = by_watch(roots)
        if said is not None:
            return said
    listed = [listing(root) for root in roots]
    found: list[Found | None] = []
    for root, names in zip(roots, listed):
        brain = os.path.join(root, "brain")  # the folders as the refresh names them
        # (the full transcript asked of ``access`` first: most sessions have none)
        found += [
            transcript_in(f"{brain}/{name}/.system_generated/logs/", full_seen=False)
            for name in names
        ]
    return text(roots, listed, found)


def text(roots: list[str], listed: list[list[str]], found: list[Found | None]) -> str:
    said = repr((roots, listed, found)).encode("utf-8", "surrogateescape")
    return blake2b(said).hexdigest()
