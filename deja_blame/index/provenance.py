"""Where a transcript came from, and whether deja takes it as the user's own
(``deja index`` and every refresh pass what they found through ``split_trusted``).

deja trusts what a repository carries no more than git does. An agent's own store
under the user's home is the user's; so is a history the user's own Aider wrote
into a working tree and never committed. A transcript a repository *tracks* came
with ``git clone`` or ``git pull``: anybody who could push wrote it (thousands of
public repositories commit Aider's ``.aider.chat.history.md``), so it is a
stranger's. A file owned by another local user is a stranger's too, and so,
outside every work tree, is a file in a folder another user owns (another user's
``/tmp/.aider.chat.history.md``, found walking up from the current folder): git's
``safe.directory`` rule, CVE-2022-24765. A stranger's session is not read into the
index, so no blame, note, report or handoff uses it, until the user says so:
``deja trust PATH`` (``trusted`` below), ``DEJA_TRUSTED=PATH[:PATH]``, or
``git config deja.trustSessions true`` in the repository that carries it (a
repository's own config never travels with a clone).

A history deja read as the user's own while it was untracked in the user's own work
tree stays theirs once they commit it (SpecStory's histories are made to be
committed, mid-chat): its path and the bytes read are remembered (``own_file``) and
a tracked file at that path that still begins with those bytes passes the gate, its
later turns included. Only a file deja saw
untracked: one it first meets tracked came with a clone as far as git can say (a
commit's author is whatever its writer typed), and stays carried until trusted.
"""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from deja_blame.transcripts.transcript_file import TranscriptFile

TRUSTED_ENV = "DEJA_TRUSTED"
TRUST_CONFIG = "deja.trustSessions"  # git config: this repository's tracked sessions are mine
MAX_TRUST_FILE = 1 << 20

CARRIED = "carried"  # tracked by the repository holding it
FOREIGN = "foreign"  # owned by another user
UNCHECKED = "unchecked"  # git could not say whether the repository tracks it


@dataclass(frozen=True)
class LeftOut:
    """A transcript deja found and did not read, and why."""

    path: Path
    agent: str
    why: str  # CARRIED, FOREIGN or UNCHECKED
    where: Path  # the work tree that carries it, or the folder someone else owns
    # CARRIED: a path gone whose remembered bytes this file begins with (a clone moved)
    read_as_own_at: Path | None = None

    def line(self) -> str:
        """One line: what, why, and the command that includes it."""
        if self.why == CARRIED and self.read_as_own_at is not None:
            reason = (
                f"tracked by the repository at {self.where}; deja read the same chat as yours"
                f" at {self.read_as_own_at}, gone since (a clone moved?), and remembers"
                " paths, not chats"
            )
        elif self.why == CARRIED:
            # the person's own chat too, once committed: git cannot say who wrote it
            reason = (
                f"tracked by the repository at {self.where}: written by whoever committed it,"
                " you or anyone who pushed to it"
            )
        elif self.why == FOREIGN:
            reason = f"detected dubious ownership in '{self.where}': someone else's"
        else:
            reason = f"git could not say whether the repository at {self.where} tracks it"
        command = f"deja trust {shlex.quote(str(self.path))}"  # to paste as it is
        return f"left out {self.path} ({self.agent}): {reason}; to read it: {command}"

    def to_json(self) -> dict[str, str]:
        return {
            "path": str(self.path),
            "agent": self.agent,
            "why": self.why,
            "where": str(self.where),
        }


def trust_file(env: Mapping[str, str] | None = None) -> Path:
    """Where ``deja trust`` keeps the paths the user vouched for."""
    env = os.environ if env is None else env
    config = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(config) / "deja" / "trusted"


def own_file(env: Mapping[str, str] | None = None) -> Path:
    """Where deja keeps the transcripts it read as the user's own while untracked in
    the user's work tree (``remember_own``): beside ``deja trust``'s file, so that an
    index rebuilt, or another ``--db``, still knows them once committed."""
    return trust_file(env).with_name("own")


def history_in_work_tree(agent: str) -> bool:
    """The agents whose histories are written into the work tree, to be committed
    (their plug-in finds them from the folder deja runs in, ``file_roots``): the only
    ones ``own_file`` remembers. Another agent's store that happens to lie in a work
    tree (a HOME kept in git) is not a history the user commits; remembering its every
    session would cost a read of each and outgrow the file."""
    from deja_blame.transcripts.registry import known

    plugin = known(agent)
    return plugin is not None and plugin.file_roots


def request_marker(agent: str) -> bytes:
    """What marks a request the user typed in the agent's history kept in the work tree
    (its plug-in's ``request_marker``; nothing for other agents: never remembered). A
    history is remembered only once it holds one: an empty or header-only file would
    bind the memory to nothing a stranger could not write."""
    from deja_blame.transcripts.registry import known

    plugin = known(agent)
    return plugin.request_marker if plugin is not None and plugin.file_roots else b""


@dataclass(frozen=True)
class OwnRead:
    """What deja read of a file as the user's own: its size, modification time and
    the SHA-256 of its first ``settled(size)`` bytes. A tracked file at that path is theirs only while it
    still begins with them: git writes over an *ignored* untracked file on checkout,
    merge and pull without a word (Aider's history is usually ignored, its name fixed),
    so the path alone says nothing about whose bytes are there now."""

    size: int
    mtime_ns: int
    sha256: str


def read_as_own(env: Mapping[str, str] | None = None) -> dict[str, OwnRead]:
    """The absolute paths ``remember_own`` kept, with what was read there. A line
    without its bytes' hash (written by a deja that kept paths only) is not kept."""
    return _read_own(env)[0]


FORGETS = "forgets"
"""The own-memory's line counting ``deja trust --forget``s (``forget_own``): part of
``gate_mark``, so that what only a forgotten memory let in leaves every index."""


def _read_own(env: Mapping[str, str] | None = None) -> tuple[dict[str, OwnRead], int]:
    """``read_as_own``, and how many times the user took some of it back."""
    from deja_blame.statefile import read_bytes

    data = read_bytes(own_file(env), MAX_TRUST_FILE) or b""
    known: dict[str, OwnRead] = {}
    forgets = 0
    for line in data.decode("utf-8", "surrogateescape").splitlines():
        parts = line.split("\t", 3)
        if len(parts) == 2 and parts[0] == FORGETS and parts[1].isdigit():
            forgets = int(parts[1])
            continue
        if len(parts) != 4 or not parts[0].isdigit() or not parts[1].isdigit():
            continue
        size, mtime_ns, digest, path = parts
        if len(digest) == 64 and path:
            known[path] = OwnRead(int(size), int(mtime_ns), digest)
    return known, forgets


def _forgets_of(env: Mapping[str, str] | None = None) -> int:
    """The count of forgets alone: the first line of the file (``_write_own``), read at
    every refresh (``gate_mark``)."""
    from deja_blame.statefile import read_bytes

    head = (read_bytes(own_file(env), 64) or b"").split(b"\n", 1)[0].split(b"\t")
    if len(head) == 2 and head[0] == FORGETS.encode() and head[1].isdigit():
        return int(head[1])
    return 0


def forget_own(paths: Iterable[Path], env: Mapping[str, str] | None = None) -> list[str]:
    """Take back what ``remember_own`` kept at or under each of ``paths`` (``deja trust
    --forget``): a committed history there is then carried, as a clone's, until trusted;
    one still untracked is the user's again when next read. The paths forgotten, in
    order; the count of forgets goes up (``gate_mark``) when there are any."""
    known, forgets = _read_own(env)
    wanted = [os.path.abspath(p) for p in paths]
    gone = sorted(
        p for p in known if any(p == w or p.startswith(w.rstrip(os.sep) + os.sep) for w in wanted)
    )
    if gone:
        kept = {p: r for p, r in known.items() if p not in gone}
        if not _write_own(kept, known, own_file(env), forgets + 1, forgets):
            raise OSError(f"cannot write {own_file(env)}")
    return gone


def _hash_of(path: str, upto: int, marker: bytes = b"") -> tuple[str, bool] | None:
    """(SHA-256 of the file's first ``upto`` bytes, whether they hold ``marker`` and
    ``AFTER_MARKER`` bytes past it); None for a link, a special file, one that cannot
    be read, or one shorter than ``upto``. Read in blocks, and no further: a history
    can be tens of megabytes."""
    import hashlib

    from deja_blame.statefile import open_regular

    fd = open_regular(Path(path))
    if fd is None:
        return None
    try:
        digest = hashlib.sha256()
        done = 0
        found: int | None = 0 if not marker else None  # where the first marker starts
        tail = b""
        while done < upto:
            block = os.read(fd, min(1 << 20, upto - done))
            if not block:
                return None  # shorter than what was read as the user's own
            digest.update(block)
            if found is None:
                at = (tail + block).find(marker)
                if at >= 0:
                    found = done - len(tail) + at
                tail = block[-len(marker) :]
            done += len(block)
    except OSError:
        return None
    finally:
        os.close(fd)
    marked = found is not None and (not marker or upto - found >= len(marker) + AFTER_MARKER)
    return digest.hexdigest(), marked


AFTER_MARKER = 64
"""Bytes of the user's request that what is remembered must hold past its marker: a
prefix that ends at the marker (a header and ``#### ``) is one a stranger can write."""


SETTLED_TAIL = 4096
"""Bytes at the end of what was read that the agent may still rewrite: SpecStory's
editor extension saves a chat whole, its last turn's separators and placeholder
replaced at the next save (43 of 44 successive committed versions of one public
repository's histories changed their last 7 to 51 bytes, none began with the whole
version before)."""


def settled(size: int) -> int:
    """How many of a file's first ``size`` bytes a later save keeps as they are: all
    but the last ``SETTLED_TAIL``, and never less than half."""
    return size - min(SETTLED_TAIL, size // 2)


def still_own(path: str, read: OwnRead) -> bool:
    """Whether ``path`` still begins with the bytes deja read there as the user's own,
    their last ``SETTLED_TAIL`` aside (SpecStory and Aider add to a chat's file; a file
    git put there instead does not begin with the user's bytes)."""
    if read.size <= 0:
        return False  # every file begins with no bytes
    got = _hash_of(path, settled(read.size))
    return got is not None and got[0] == read.sha256


def remember_own(paths: Iterable[tuple[Path, str]], env: Mapping[str, str] | None = None) -> None:
    """Keep in ``own_file`` what ``paths`` hold now (read as the user's own: untracked
    in their work tree, or tracked and still beginning with what was read before). A
    path gone, or holding other bytes for now (an older commit checked out), keeps its
    memory: a file git puts there passes only if it begins with the user's bytes, so
    the user's own version passes again once back. A file unchanged since (size and
    time) is not read again. Written only when that changes anything; past the file's
    size limit the paths gone from disk are dropped first; a file that cannot be
    written loses nothing but the memory (a history committed later is then left out
    until trusted: the safe side)."""
    import deja_blame.statefile as statefile

    wanted: dict[str, bytes] = {}
    for path, agent in paths:
        marker = request_marker(agent)
        p = os.path.abspath(path)
        if marker and not any(c in p for c in "\n\r\t"):
            wanted[p] = marker
    where = own_file(env)
    if not wanted and statefile.size_of(where) is None:
        return
    known, forgets = _read_own(env)
    kept = dict(known)
    for p, marker in wanted.items():
        before = kept.get(p)
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if before is not None and (before.size, before.mtime_ns) == (st.st_size, st.st_mtime_ns):
            continue
        got = _hash_of(p, settled(st.st_size), marker=marker)
        if got is None or not got[1]:
            kept.pop(p, None)  # no request the user typed (yet, or any more)
            continue
        kept[p] = OwnRead(st.st_size, st.st_mtime_ns, got[0])
    _write_own(kept, known, where, forgets, forgets)


def _write_own(
    kept: dict[str, OwnRead], known: dict[str, OwnRead], where: Path, forgets: int, before: int
) -> bool:
    """Write ``kept`` (and the count of forgets) to ``where`` (0600) if it differs from
    ``known`` (``before``); False when it could not be written."""
    import deja_blame.statefile as statefile

    if kept == known and forgets == before:
        return True

    def lines(rows: Iterable[tuple[str, OwnRead]]) -> bytes:
        text = f"{FORGETS}\t{forgets}\n" if forgets else ""
        text += "".join(f"{r.size}\t{r.mtime_ns}\t{r.sha256}\t{p}\n" for p, r in rows)
        return text.encode("utf-8", "surrogateescape")

    rows = sorted(kept.items())
    data = lines(rows)
    if len(data) > MAX_TRUST_FILE:  # the histories gone from disk go first
        data = lines((p, r) for p, r in rows if os.path.lexists(p))
        if len(data) > MAX_TRUST_FILE:
            return False
    if not statefile.ensure_dir(where.parent.parent) or not statefile.ensure_dir(where.parent):
        return False
    try:
        statefile.write_bytes(where, data, mode=0o600)
    except OSError:
        return False
    return True


def trusted_paths(env: Mapping[str, str] | None = None) -> list[Path]:
    """Every file or folder the user said is theirs: ``DEJA_TRUSTED`` and ``deja trust``'s file."""
    from deja_blame.statefile import read_text

    env = os.environ if env is None else env
    out = [Path(p).expanduser() for p in (env.get(TRUSTED_ENV) or "").split(os.pathsep) if p]
    text = read_text(trust_file(env), MAX_TRUST_FILE) or ""
    out += [Path(line) for line in text.splitlines() if line.strip()]
    return [_absolute(p) for p in out]


def is_trusted(path: Path, trusted: Iterable[Path]) -> bool:
    """``path`` is one of ``trusted`` or lies under one of them."""
    here = _absolute(path)
    return any(here == t or t in here.parents for t in trusted)


def owned_by_me(st: os.stat_result) -> bool:
    """git's ownership rule: the user's own, or root's when the user is root through
    sudo (``SUDO_UID``). Always True where there are no user ids (Windows)."""
    uid = getattr(os, "geteuid", None)
    if uid is None:
        return True
    me = uid()
    if st.st_uid == me:
        return True
    if me == 0:
        sudo = os.environ.get("SUDO_UID", "")
        return sudo.isdigit() and int(sudo) == st.st_uid
    return False


def work_tree_of(directory: Path, memo: dict[str, str | None] | None = None) -> Path | None:
    """The nearest folder at or above ``directory`` holding ``.git`` (a directory, or a
    worktree's or submodule's file): by stat alone; None outside every work tree."""
    found = _tree_of(os.path.abspath(directory), {} if memo is None else memo)
    return None if found is None else Path(found)


def _tree_of(d: str, memo: dict[str, str | None]) -> str | None:
    walked: list[str] = []
    found: str | None = None
    while True:
        if d in memo:
            found = memo[d]
            break
        walked.append(d)
        if os.path.lexists(os.path.join(d, ".git")):
            found = d
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    for w in walked:
        memo[w] = found
    return found


def split_trusted(
    files: list[TranscriptFile],
    env: Mapping[str, str] | None = None,
    by_config: set[Path] | None = None,
    untracked: list[tuple[Path, str]] | None = None,
) -> tuple[list[TranscriptFile], list[LeftOut]]:
    """``files`` as (the user's own, the strangers' left out). A stat per file and a
    memoised walk up its folders; git is asked only about the work trees that hold one.
    ``by_config`` gets the work trees whose ``deja.trustSessions`` let tracked ones in;
    ``untracked`` the files kept because their work tree does not track them (what
    the caller reads is ``remember_own``'s to keep), none ``found_below``: a history
    the search below the current folder alone found is the user's while untracked,
    and no more (a vendored project's next version, unpacked over its folder, brings
    the ``.specstory`` its authors committed): once committed, it is carried until
    trusted."""
    if not files:
        return [], []
    trusted = trusted_paths(env)
    own: dict[str, OwnRead] | None = None
    memo: dict[str, str | None] = {}
    mine: dict[str, bool] = {}
    kept: list[TranscriptFile] = []
    left: list[LeftOut] = []
    in_trees: dict[str, list[TranscriptFile]] = {}
    for tf in files:
        text = os.path.abspath(tf.path)
        if trusted and is_trusted(Path(text), trusted):
            kept.append(tf)
            continue
        try:
            st = os.lstat(text)
        except OSError:
            kept.append(tf)  # gone: the index reports what it cannot read
            continue
        folder = os.path.dirname(text)
        if not owned_by_me(st):
            left.append(LeftOut(tf.path, tf.agent, FOREIGN, Path(folder)))
            continue
        tree = _tree_of(folder, memo)
        if tree is not None:
            in_trees.setdefault(tree, []).append(tf)
            continue
        if folder not in mine:
            mine[folder] = folder_is_mine(Path(folder))
        if mine[folder]:
            kept.append(tf)
        else:
            left.append(LeftOut(tf.path, tf.agent, FOREIGN, Path(folder)))
    for top_text, inside in in_trees.items():
        top = Path(top_text)
        tracked = tracked_among(top, [_absolute(tf.path) for tf in inside])
        if tracked is None:
            left += [LeftOut(tf.path, tf.agent, UNCHECKED, top) for tf in inside]
            continue
        if tracked and _repository_trusts_its_sessions(top):
            if by_config is not None:
                by_config.add(top)
            kept += inside  # tracked or not: not the memory's (the switch may go off)
            continue
        for tf in inside:
            here = _absolute(tf.path)
            if here in tracked:
                if own is None:
                    own = read_as_own(env)
                read = own.get(str(here))
                if read is not None and still_own(str(here), read):
                    kept.append(tf)  # read as the user's own before they committed it
                    if untracked is not None and not tf.found_below:
                        untracked.append((here, tf.agent))  # its later turns remembered too
                else:  # the memory kept: an older version checked out fails, the newer passes
                    moved = None if read is not None else _moved_from(str(here), own)
                    left.append(LeftOut(tf.path, tf.agent, CARRIED, top, moved))
            else:
                kept.append(tf)
                if untracked is not None and not tf.found_below and history_in_work_tree(tf.agent):
                    untracked.append((here, tf.agent))
    order = {id(tf): k for k, tf in enumerate(files)}
    kept.sort(key=lambda tf: order[id(tf)])
    return kept, left


def _moved_from(path: str, own: dict[str, OwnRead]) -> Path | None:
    """A remembered path, gone now, of the same file name whose bytes ``path`` begins
    with: the user's own chat in a clone they moved (the memory is by path, and a
    chat's bytes alone say nothing of who committed them here, so it stays carried
    until trusted; this only names the likely cause). Read only where such a path is."""
    name = os.path.basename(path)
    for p, read in sorted(own.items()):
        if os.path.basename(p) == name and not os.path.lexists(p) and still_own(path, read):
            return Path(p)
    return None


def tracked_among(top: Path, paths: list[Path]) -> set[Path] | None:
    """Which of ``paths`` (inside the work tree ``top``) its index tracks; None when
    git cannot say (not a repository after all, someone else's, git missing).

    Compared whatever the case and the Unicode form of the names (``same_name``): a
    finder spells a store's path its own way (``.specstory/history``), and on a file
    system that ignores case (macOS, Windows) that path opens a tracked
    ``.SpecStory/History/x.md``, which git's pathspec, case-sensitive even with
    ``core.ignorecase``, would not name; and macOS opens a name in either Unicode form
    (``e`` and a combining accent, or ``é``) while git keeps the bytes it was given
    (NFD from a Mac's older file system or a Linux clone, NFC from a Mac's git, which
    also turns the names on its command line NFC). A user's own file whose name differs
    from a tracked one only so is taken as carried too: left out until trusted, the
    safe side.

    A name is untracked only when git itself lists it among the untracked files, as
    it reads the folder: a case-insensitive file system also opens a name by letters
    outside ASCII that fold to the finder's (``.aider.chat.hiſtory.md``, a Kelvin sign,
    HFS+'s ignorable code points), which no pathspec of the finder's spelling lists
    among the tracked (review 14 F2); git's listing of the folder holds the stored
    name, tracked, so the finder's spelling is not among the untracked: carried."""
    rels: dict[str, list[Path]] = {}  # the name as ``same_name`` keys it -> the paths
    specs: dict[str, None] = {}  # what to ask git, in order: icase folds ASCII only
    spelled: dict[str, None] = {}  # each name as the finder spelled it
    for p in paths:
        try:
            rel = p.relative_to(top).as_posix()
        except ValueError:
            continue
        rels.setdefault(same_name(rel), []).append(p)
        specs[_asked(rel)] = None
        spelled[f":(icase,literal){rel}"] = None
    if not rels:
        return set()
    listed = _listed(top, [], list(specs))
    # ignored files too (no --exclude-standard): Aider ignores its own history
    others = _listed(top, ["--others"], list(spelled))
    if listed is None or others is None:
        return None
    untracked = {same_name(name) for name in others if name}
    tracked = {p for name in listed for p in rels.get(same_name(name), ())}
    return tracked | {p for key, ps in rels.items() if key not in untracked for p in ps}


def _listed(top: Path, options: list[str], asked: list[str]) -> list[str] | None:
    """``git ls-files -z OPTIONS -- ASKED``'s names, asked 256 at a time (a bounded
    command line); None when git cannot say."""
    from deja_blame.gitutil import try_git

    listed: list[str] = []
    for k in range(0, len(asked), 256):
        proc = try_git(top, ["ls-files", "-z", *options, "--", *asked[k : k + 256]])
        if proc is None or proc.returncode != 0:
            return None
        listed += proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    return listed


def same_name(name: str) -> str:
    """``name`` as a file system that ignores case and Unicode form opens it (macOS,
    Windows): Unicode's caseless match of canonical forms, NFD(casefold(NFD(name)))."""
    import unicodedata

    if name.isascii():
        return name.casefold()
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", name).casefold())


def _asked(rel: str) -> str:
    """The pathspec that lists ``rel`` among what git tracks: the name itself, in any
    ASCII case; for a name with other letters, whose bytes git may hold in another
    form or case, the folder above its first such part (everything there is listed
    and compared by ``same_name``; the whole tree when that part is the first)."""
    if rel.isascii():
        return f":(icase,literal){rel}"
    parts = rel.split("/")
    plain = next(k for k, part in enumerate(parts) if not part.isascii())
    return f":(icase,literal){'/'.join(parts[:plain])}" if plain else ":(top)"


def _repository_trusts_its_sessions(top: Path) -> bool:
    from deja_blame.gitutil import try_git

    proc = try_git(top, ["config", "--bool", "--get", TRUST_CONFIG])
    return proc is not None and proc.returncode == 0 and proc.stdout.strip() == b"true"


def folder_is_mine(directory: Path) -> bool:
    """git's rule for a folder it would read outside a repository: the user owns it."""
    try:
        st = os.lstat(directory)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and owned_by_me(st)


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path))


LEFT_OUT = "left-out:"  # meta key prefix: a transcript the last reads left out, and why


def remember_left_out(
    conn: sqlite3.Connection, left: list[LeftOut], kept: list[TranscriptFile]
) -> None:
    """Record what a run left out (``deja sessions`` says it without a walk of every
    store), and forget what a run read after all (trusted since, or untracked)."""
    from deja_blame.index.db import transaction

    known = {
        key
        for (key,) in conn.execute(
            "SELECT key FROM meta WHERE key >= ? AND key < ?", (LEFT_OUT, "left-out;")
        )
    }
    add = {LEFT_OUT + str(lo.path): lo for lo in left}
    gone = known & {LEFT_OUT + str(tf.path) for tf in kept}
    new = {k: lo for k, lo in add.items() if k not in known}
    if not new and not gone:
        return
    with transaction(conn):
        for key in gone:
            conn.execute("DELETE FROM meta WHERE key=?", (key,))
        for key, lo in new.items():
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                (key, json.dumps(lo.to_json())),
            )


def left_out_recorded(conn: sqlite3.Connection) -> list[LeftOut]:
    """What the index's runs left out and is still there (``remember_left_out``)."""
    out = []
    for (value,) in conn.execute(
        "SELECT value FROM meta WHERE key >= ? AND key < ?", (LEFT_OUT, "left-out;")
    ):
        try:
            doc = json.loads(value)
            lo = LeftOut(Path(doc["path"]), str(doc["agent"]), str(doc["why"]), Path(doc["where"]))
        except (ValueError, KeyError, TypeError):
            continue
        if os.path.lexists(lo.path):
            out.append(lo)
    return out


def carried_left_out(conn: sqlite3.Connection, root: str | Path) -> list[LeftOut]:
    """The histories the repository at ``root`` carries that the index's runs left out
    (``left_out_recorded``: the refresh before an answer records them too): blame's and
    why's hint names ``deja trust`` for them, not ``deja index``, which reads them no
    more than it did (newcomer 17 #2)."""
    top = os.path.realpath(root)
    return [
        lo
        for lo in left_out_recorded(conn)
        if lo.why == CARRIED and os.path.realpath(lo.where) == top
    ]


def carried_hint(left: list[LeftOut]) -> str:
    """One hint for ``carried_left_out``'s histories: how many, and the command that
    reads the first."""
    from deja_blame.output import counted

    first = shlex.quote(str(left[0].path))
    them = "it" if len(left) == 1 else "them"
    return (
        f"{counted(len(left), 'session')} left out, as this repository carries {them}"
        f" (written by whoever committed {them}): deja trust {first}"
        f" reads {'it' if len(left) == 1 else 'one'}"
    )


def left_out_now(
    env: Mapping[str, str] | None = None, below: Mapping[str, list[Path]] | None = None
) -> list[LeftOut]:
    """What every agent's places hold that deja leaves out, found afresh (``deja
    doctor``, ``deja sessions``): the same walk as ``deja index`` makes (``below``: what
    ``index/below.py`` found below the current folder)."""
    from deja_blame.transcripts.registry import discover

    return split_trusted(discover(env=env, problems=[], below=below), env)[1]


def left_out_summary(left: list[LeftOut]) -> str:
    """One line for ``deja sessions``: how many, and where to read more."""
    from deja_blame.output import counted

    return (
        f"{counted(len(left), 'session')} left out (a repository carries it, or another"
        " user owns it): deja doctor lists them, deja trust PATH reads one"
    )


GATE_CHECKED = "provenance-gate"  # meta key: the sessions the index held were put through it
GATE_VERSION = "2"  # 2: what the index holds untracked seeds ``own_file``


BY_CONFIG = "trusted-by-config"  # meta key: work trees whose deja.trustSessions let sessions in


def remember_trusted_by_config(conn: sqlite3.Connection, tops: set[Path]) -> None:
    """Record the work trees whose own ``deja.trustSessions`` let their tracked
    sessions in (``split_trusted``'s ``by_config``): the gate asks each of them again
    at every run (``_config_mark``), so the switch turned off holds at once."""
    from deja_blame.index.db import transaction

    known = set(_trusted_by_config(conn))
    if not tops or {str(t) for t in tops} <= known:
        return
    value = json.dumps(sorted(known | {str(t) for t in tops}))
    with transaction(conn):
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (BY_CONFIG, value))


def _trusted_by_config(conn: sqlite3.Connection) -> list[str]:
    row = conn.execute("SELECT value FROM meta WHERE key=?", (BY_CONFIG,)).fetchone()
    try:
        tops = json.loads(row[0]) if row is not None else []
    except (TypeError, ValueError):
        return []
    return [t for t in tops if isinstance(t, str)] if isinstance(tops, list) else []


def _config_mark(conn: sqlite3.Connection) -> str:
    """Whether each work tree whose config let sessions in still says so: one
    ``git config`` per such tree (most users have none)."""
    tops = _trusted_by_config(conn)
    return "".join(
        f";{int(os.path.isdir(t) and _repository_trusts_its_sessions(Path(t)))}" for t in tops
    )


def gate_files(conn: sqlite3.Connection) -> list[str] | None:
    """The files whose state is all the gate's mark reads (``gate_mark``, ``_config_mark``):
    ``deja trust``'s file and the own-reads file beside it (``DEJA_TRUSTED`` aside, a
    variable); None where the mark also asks git (a work tree whose config let its
    sessions in): a kept answer (``printed.py``) cannot say that it still holds."""
    if _trusted_by_config(conn):
        return None
    trusted = trust_file()
    return [str(trusted.parent), str(trusted), str(own_file())]


def gate_mark(env: Mapping[str, str] | None = None) -> str:
    """What ``GATE_CHECKED`` holds once the index's sessions went through the gate with
    what the user trusts now: the gate's version and a digest of the trusted paths
    (``deja trust``'s file and ``DEJA_TRUSTED``) and the count of ``deja trust
    --forget``s. Trust taken back (``deja trust --remove`` or ``--forget``, a path gone
    from the variable) changes it, and the next run puts what
    the index holds through the gate again: a session only that trust let in leaves."""
    from deja_blame.blake2 import blake2b

    listed = "\0".join(sorted(str(p) for p in trusted_paths(env)))
    forgets = _forgets_of(env)
    if forgets:  # none: the mark an index made before ``deja trust --forget`` existed
        listed += f"\0{FORGETS}:{forgets}"
    digest = blake2b(listed.encode("utf-8", "surrogateescape"), digest_size=8)
    return f"{GATE_VERSION}:{digest.hexdigest()}"


def drop_strangers_held(conn: sqlite3.Connection, mark: str | None = None) -> list[LeftOut]:
    """Once per index and per change of what the user trusts (``gate_mark``): sessions
    the index holds that the gate now leaves out are removed, so that no ``--rebuild``
    is needed (an older deja read every transcript it found; trust taken back); what
    was dropped, for the run to say. An index built with the gate passes it at once
    (what it holds went through ``split_trusted``)."""
    from deja_blame.index.db import transaction

    mark = (gate_mark() if mark is None else mark) + _config_mark(conn)
    done = conn.execute("SELECT value FROM meta WHERE key=?", (GATE_CHECKED,)).fetchone()
    if done is not None and done[0] == mark:
        return []
    held: dict[Path, TranscriptFile] = {}
    for session_id, source, transcript in conn.execute(
        "SELECT session_id, source, transcript FROM sessions"
    ):
        path = Path(str(transcript))
        if path not in held:
            held[path] = TranscriptFile(str(session_id), path, path.parent, str(source))
    # What the index holds untracked seeds the memory only where it was built before
    # the memory was (a mark of an older version): a held history does not say whether
    # the search below the current folder alone found it, never to be remembered.
    before_memory = done is None or not done[0].startswith(f"{GATE_VERSION}:")
    untracked: list[tuple[Path, str]] | None = [] if before_memory else None
    _kept, left = split_trusted(list(held.values()), untracked=untracked)
    if untracked:
        remember_own(untracked)
    with transaction(conn):
        drop_held(conn, left)
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (GATE_CHECKED, mark))
    if left:
        remember_left_out(conn, left, [])
    return left


def drop_held(conn: sqlite3.Connection, left: list[LeftOut]) -> list[LeftOut]:
    """Remove from the index the sessions read from ``left``'s transcripts (inside the
    caller's transaction); those of ``left`` it held."""
    from deja_blame.index.store import clear_session_rows

    paths = {str(lo.path) for lo in left}
    if not paths:
        return []
    gone: set[str] = set()
    for sid, transcript in conn.execute("SELECT sid, transcript FROM sessions").fetchall():
        if transcript in paths:
            clear_session_rows(conn, int(sid))
            conn.execute("DELETE FROM sessions WHERE sid=?", (sid,))
            gone.add(transcript)
    return [lo for lo in left if str(lo.path) in gone]


def gate_held(conn: sqlite3.Connection) -> list[LeftOut]:
    """``drop_strangers_held`` where the index can be written now (every ``deja index``
    and every refresh before an answer); nothing where it cannot (a read-only index:
    the next run that can write does it)."""
    try:
        return drop_strangers_held(conn)
    except sqlite3.OperationalError:
        return []
