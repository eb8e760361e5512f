"""The first answer first: which new transcripts can concern one repository, by bytes alone.

A first ``deja blame`` after a heavy user's months of sessions would parse every
transcript before answering. A session that worked on this repository names it:
its root (every agent records where it ran, and edits name absolute paths), or
the file being asked about (a session in another clone of the project). So each
new transcript is searched for those byte strings (``bytes.find``: memchr speed,
no JSON), and only the ones that hold one are indexed before the answer;
``deja index`` (or the post-commit hook) reads the rest.

The file is searched for by its file name, not its repository-relative path: the
index finds the paths that stand for a file by their file name
(``indexread.candidate_paths``), and a session in another clone names it by
whatever its reader resolves against the session's folder (Codex's apply_patch in
``src/``: ``app.py``; a ``cd`` then ``cat > app.py``). A name in folders is found
only where the text before it can make a path ending in its repository path
(``InFolder``): ``pkg/src/app.py``, ``src\\app.py`` (relative: the folders above
it come from elsewhere), a bare ``app.py`` (resolved against a folder the reader
takes from a field or a file), ``../app.py``; not ``lib/app.py`` or
``/other/src/app.py``. Every project has an ``__init__.py`` or an ``index.ts``; the
index keeps a written path for this file only where it ends with its repository
path (``clone_paths.stands_for``).

A transcript found to hold none is remembered by its stat in the index's ``meta``
table (one row per set of needles), so the next answer does not search it again
until it changes.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from deja_blame.blake2 import blake2b
from deja_blame.gitutil import repository_root

if TYPE_CHECKING:
    from deja_blame.transcripts.transcript_file import TranscriptFile

# The transcripts' reader (``open_regular``) is imported where a file is read: a
# refresh that found a new transcript imports this module, a warm answer does not
# (the reader's package, its agents' layouts with it, was 7 ms of a 140 ms answer).

SCAN_CHUNK = 4 * 1024 * 1024
MEMO = "prescan:"  # meta key prefix: transcripts known not to concern a set of needles
# sets of needles and byte strings remembered (a question about a file stores about
# ten: its set, the repository's needles and their anchors, shared with the
# repository's other files, and the file's name)
MEMO_KEEP = 64


@dataclass(frozen=True)
class InFolder:
    """A file name (plain characters only) at the end of a path ending in
    ``folders`` (the nearest first, as far up as they are plain characters): found
    where ``name`` is and the text before it is the folders, each after separators
    (``/``, ``\\``, escaped, URI-quoted), up to the last or to where the text of a
    relative path begins; or ``.`` or ``..`` (resolved: anything); or no folder at
    all (a name relative to a folder its reader takes from a field or a file)."""

    folders: tuple[bytes, ...]
    name: bytes

    def key(self) -> bytes:
        """The needle in the memo's key (no byte needle starts with ``\\x01``)."""
        return b"\x01" + b"/".join((*reversed(self.folders), self.name))

    def reach(self) -> int:
        """The bytes a hit needs in view: the name, and the folders and separators."""
        return len(self.name) + sum(len(f) + 12 for f in self.folders)


Needle = bytes | InFolder


def needles_for(root: Path, relpaths: Iterable[str] = ()) -> tuple[Needle, ...]:
    """The byte strings a transcript concerning the repository holds: its root, a
    path through a directory of its name, and the file name of each of
    ``relpaths`` (repository-relative: ``name_needles``), as written raw and
    JSON-escaped (once, and again for tool arguments kept as JSON text inside JSON)."""
    texts = {str(root).rstrip("/"), os.path.abspath(str(root)).rstrip("/")}
    for name in {root.name, *remote_names(root)} - {""}:
        # a file in another clone of the project, which is usually named the same as
        # this one's folder or as the repository its remotes name (a clone at
        # c6/stock of .../inventory: the sessions name /home/alice/code/inventory)
        texts.add(f"/{name}/")
        texts.add(f"\\{name}\\")
    return without_redundant(_encoded(texts) | set(name_needles(relpaths)))


def concern_of(file: Path) -> tuple[Needle, ...] | None:
    """What a transcript about ``file``'s repository holds; None outside a repository
    (then every new transcript is read)."""
    root = repository_root(file)
    if root is None:
        return None
    try:
        rel = file.resolve().relative_to(root).as_posix()
    except ValueError:
        rel = ""
    return needles_for(root, [rel] if rel and rel != "." else [])


# The characters no JSON encoder escapes, no URI quotes and no HTML entity stands
# for: a run of them in a file name is in every form a transcript writes it in.
_PLAIN = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._~-")
PLAIN_RUN_MIN = 4  # shorter runs (``.py`` of ``日本.py``) would match nearly every transcript


def name_needles(relpaths: Iterable[str]) -> tuple[Needle, ...]:
    """What a transcript that wrote one of ``relpaths`` (repository-relative, in any
    clone, by any name its reader resolves to that file) holds: the file's name
    (after its folder, ``InFolder``, where both are plain characters), or where the
    name has characters a transcript may write escaped (a space in a ``file://``
    URI, ``é`` as ``\\u00e9``), its longest run of plain characters (``_PLAIN``)
    when that is long enough, else the name raw and JSON-escaped."""
    out: set[Needle] = set()
    for rel in relpaths:
        *above, name = rel.strip("/").split("/")
        if not name:
            continue
        raw = name.encode("utf-8", "surrogateescape")
        folders: list[bytes] = []
        for folder in reversed(above):
            part = folder.encode("utf-8", "surrogateescape")
            if not _is_plain(part) or part in (b".", b".."):
                break  # checked as far as here: anything above
            folders.append(part)
        runs = [run for run in _plain_runs(raw) if len(run) >= PLAIN_RUN_MIN]
        if runs and len(runs[0]) == len(raw) and folders:
            out.add(InFolder(tuple(folders), raw))
        elif runs and len(runs[0]) == len(raw):
            out.add(raw)  # a file at the top: every clone's top holds one of that name
        elif runs:
            out.add(max(runs, key=lambda r: (len(r), r)))
        else:
            out |= _encoded({name})
            out.add(quote(raw, safe="").encode())  # a file:// URI's quoting (any bytes)
    return without_redundant(out)


def _is_plain(raw: bytes) -> bool:
    return bool(raw) and all(b in _PLAIN for b in raw)


def _plain_runs(raw: bytes) -> list[bytes]:
    runs: list[bytes] = []
    start = 0
    for i in range(len(raw) + 1):
        if i == len(raw) or raw[i] not in _PLAIN:
            if i > start:
                runs.append(raw[start:i])
            start = i + 1
    return runs


def _encoded(texts: Iterable[str]) -> set[bytes]:
    """Each text raw and JSON-escaped, once and twice."""
    out: set[bytes] = set()
    for text in texts:
        out.add(text.encode("utf-8", "surrogateescape"))
        once = json.dumps(text)[1:-1]
        out.add(once.encode())
        out.add(json.dumps(once)[1:-1].encode())
    return out


def remote_names(root: Path) -> set[str]:
    """The repository's names its remotes give (``git@host:acme/shop.git``,
    ``/srv/git/shop``: ``shop``), read from its git config by hand: no git process
    before a blame. Empty when there is none or it cannot be read."""
    from deja_blame.transcripts.reading import open_regular

    names: set[str] = set()
    config = _common_git_dir(root) / "config"
    try:
        with open_regular(config) as fh:
            text = fh.read(1 << 20).decode("utf-8", "surrogateescape")
    except OSError:
        return names
    in_remote = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line[1:].split("]", 1)[0].split(None, 1)
            in_remote = bool(section) and section[0].split(".")[0].lower() == "remote"
            continue
        key, eq, value = line.partition("=")
        if not (in_remote and eq and key.strip().lower() == "url"):
            continue
        url = value.strip().strip('"').rstrip("/\\")
        name = url.replace("\\", "/").replace(":", "/").rsplit("/", 1)[-1]
        name = name[: -len(".git")] if name.endswith(".git") else name
        if name not in ("", ".", ".."):
            names.add(name)
    return names


def _common_git_dir(root: Path) -> Path:
    """The git directory holding ``root``'s config: ``.git``, or for a linked work
    tree (``.git`` a file naming its folder) the common one it names."""
    dotgit = root / ".git"
    if not dotgit.is_file():
        return dotgit
    try:
        text = dotgit.read_text("utf-8", "surrogateescape").strip()
    except OSError:
        return dotgit
    if not text.startswith("gitdir:"):
        return dotgit
    gitdir = root / text[len("gitdir:") :].strip()
    try:
        common = (gitdir / "commondir").read_text("utf-8", "surrogateescape").strip()
    except OSError:
        return gitdir
    return gitdir / common


def without_redundant(needles: Iterable[Needle]) -> tuple[Needle, ...]:
    """``needles`` less each one that holds another: a file holding it holds the other,
    so searching for the shorter one finds the same files (``\\\\repo\\\\``, the
    escaped form, holds ``\\repo\\``; ``InFolder`` of ``core.py`` holds ``core.py``).
    Each needle left is a pass over every byte of every new transcript. Shortest
    first, the names in folders last."""
    kept: list[bytes] = []
    given = set(needles)
    for needle in sorted((n for n in given if isinstance(n, bytes)), key=lambda n: (len(n), n)):
        if not any(k in needle for k in kept):
            kept.append(needle)
    named = sorted(
        (n for n in given if isinstance(n, InFolder) and not any(k in n.name for k in kept)),
        key=lambda n: (len(n.name), n.name, n.folders),
    )
    return (*kept, *named)


def needle_key(needle: Needle) -> bytes:
    """The needle as bytes, for a memo's key."""
    return needle.key() if isinstance(needle, InFolder) else needle


def found_by(searched: Iterable[Needle], needle: Needle) -> bool:
    """Whether a file found to hold none of ``searched`` holds none of ``needle``: one
    of them is in it (bytes in bytes or in the name), or is it, or is the name in
    fewer of the same folders (found wherever it is, and more)."""
    if isinstance(needle, bytes):
        return any(isinstance(s, bytes) and s in needle for s in searched)
    return any(
        s in needle.name
        if isinstance(s, bytes)
        else s.name == needle.name and needle.folders[: len(s.folders)] == s.folders
        for s in searched
    )


def holds_any(path: Path, needles: tuple[Needle, ...], seen: set[bytes] | None = None) -> bool:
    """Whether the file holds one of ``needles`` (read in chunks that overlap by the
    longest needle, so none is missed across a boundary). An unreadable file: True
    (the indexer reports it). ``seen`` gets the names of ``InFolder`` needles and the
    plan's anchors the file holds anywhere (complete where the answer is False)."""
    if not needles:
        return True
    from deja_blame.transcripts.reading import open_regular

    overlap = max(n.reach() if isinstance(n, InFolder) else len(n) for n in needles) - 1
    plan = search_plan(tuple(needles))
    try:
        with open_regular(path) as fh:
            tail = b""
            start = True
            while True:
                chunk = fh.read(SCAN_CHUNK)
                if not chunk:
                    return False
                data = tail + chunk
                if _found(data, plan, start, seen):
                    return True
                tail = data[-overlap:] if overlap > 0 else b""
                start = False
    except OSError:
        return True


# The parts of names that anchor a search: no separator or quote (the bytes JSON
# and paths are full of), long enough to be rare.
ANCHOR_MIN, ANCHOR_MAX = 4, 12
ANCHOR_HITS = 64  # hits of an anchor in a chunk past which its needles are searched as they are
_NOT_IN_ANCHORS = frozenset(b'/\\"')


@dataclass(frozen=True)
class SearchPlan:
    """How to look for needles: a few anchors, each found once per chunk and its
    needles then checked around each hit, and the needles no anchor covers."""

    anchored: tuple[tuple[bytes, tuple[bytes, ...]], ...]
    direct: tuple[bytes, ...]
    named: tuple[InFolder, ...] = ()


@lru_cache(maxsize=16)
def search_plan(needles: tuple[Needle, ...]) -> SearchPlan:
    """Anchors chosen greedily: the part of a name most needles hold (the longest of
    equals). Forms of one name (``/shop/``, ``\\shop\\``, ``/w/shop``) then cost one
    pass instead of one each: ``bytes.find`` of a needle ending in ``/`` or ``\\``,
    which transcripts are full of, crawls. A name in a folder is a pass of its own,
    each hit checked."""
    named = tuple(dict.fromkeys(n for n in needles if isinstance(n, InFolder)))
    left = list(dict.fromkeys(n for n in needles if isinstance(n, bytes)))
    anchored: list[tuple[bytes, tuple[bytes, ...]]] = []
    while left:
        counts: dict[bytes, int] = {}
        for needle in left:
            for part in _anchor_candidates(needle):
                counts[part] = counts.get(part, 0) + 1
        if not counts:
            break
        best = max(counts, key=lambda a: (counts[a], len(a), a))
        if counts[best] < 2:
            break  # an anchor for one needle saves nothing
        held = tuple(n for n in left if best in n)
        anchored.append((best, held))
        left = [n for n in left if best not in n]
    return SearchPlan(tuple(anchored), tuple(left), named)


def _anchor_candidates(needle: bytes) -> set[bytes]:
    out: set[bytes] = set()
    start = 0
    for i in range(len(needle) + 1):
        if i == len(needle) or needle[i] in _NOT_IN_ANCHORS:
            run = needle[start:i]
            for size in range(ANCHOR_MIN, min(ANCHOR_MAX, len(run)) + 1):
                for k in range(len(run) - size + 1):
                    out.add(run[k : k + size])
            start = i + 1
    return out


def _found(
    data: bytes, plan: SearchPlan, start: bool = True, seen: set[bytes] | None = None
) -> bool:
    """Whether ``data`` holds one of the plan's needles (``start``: ``data`` begins the
    file, so nothing is before its first byte)."""
    for anchor, held in plan.anchored:
        reach = max(len(n) for n in held)
        at = data.find(anchor)
        if at >= 0 and seen is not None:
            seen.add(anchor)
        hits = 0
        while at >= 0:
            hits += 1
            if hits > ANCHOR_HITS:
                # a common word: the needles themselves, once each, are cheaper
                if any(data.find(n) >= 0 for n in held):
                    return True
                break
            window = data[max(0, at - reach) : at + reach + len(anchor)]
            if any(n in window for n in held):
                return True
            at = data.find(anchor, at + 1)
    if any(data.find(n) >= 0 for n in plan.direct):
        return True
    for item in plan.named:
        at = data.find(item.name)
        if at >= 0 and seen is not None:
            seen.add(item.name)
        while at >= 0:
            if _may_be_in(data, at, item.folders, start):
                return True
            at = data.find(item.name, at + 1)
    return False


_SEPARATORS = frozenset(b"/\\")
# a separator written as an escape: URI-quoted (3 bytes), JSON's \\u form (6 bytes)
_CODED_SEPARATORS = {
    3: frozenset({b"%2F", b"%2f", b"%5C", b"%5c"}),
    6: frozenset({b"\\u002F", b"\\u002f", b"\\u005C", b"\\u005c"}),
}


def _separators_before(data: bytes, at: int) -> int:
    """Where the run of separators (raw or coded) that ends at ``at`` begins."""
    i = at
    while i > 0:
        if data[i - 1] in _SEPARATORS:
            i -= 1
        elif data[i - 3 : i] in _CODED_SEPARATORS[3]:
            i -= 3
        elif data[i - 6 : i] in _CODED_SEPARATORS[6]:
            i -= 6
        else:
            break
    return i


def _run_before(data: bytes, at: int) -> int:
    """Where the run of name characters that ends at ``at`` begins (a coded
    separator's letters and digits, ``%2F``, ``\\u002F``, are not in it)."""
    j = at
    while (
        j > 0
        and data[j - 1] in _PLAIN
        and data[j - 3 : j] not in _CODED_SEPARATORS[3]
        and data[j - 6 : j] not in _CODED_SEPARATORS[6]
    ):
        j -= 1
    return j


def _may_be_in(data: bytes, at: int, folders: tuple[bytes, ...], start: bool) -> bool:
    """Whether the name found at ``at`` in ``data`` may be a path that a reader makes
    into one ending in ``folders`` (nearest first) and the name. Yes where the parts
    before it, each past separators (raw, escaped, URI-quoted), are those folders,
    up to the last or to where a relative path's text begins; where one is ``.`` or
    ``..`` (resolved in the path's text: anything); where there is no folder before
    the name (relative to a folder the reader takes from a field, a file, a ``cd``).
    No where another folder is before it (``lib/__init__.py``), a path's top
    (``/src/app.py``), or a name character with no escape before the run it ends
    (another name: ``my__init__.py``; but ``\\n__init__.py`` begins a line of a JSON
    string). What a chunk cut off is not known: yes."""
    pos = at
    for depth, folder in enumerate(folders):
        i = _separators_before(data, pos)
        j = _run_before(data, i)
        if j == 0 and not start:
            return True  # the chunk begins inside the run: what is before it is not here
        part = data[j:i]
        if i == pos:
            if depth:
                return True  # a relative path's text begins with this folder
            # the name is bare, or ends a longer run: after an escape (``\\n``) it begins one
            return not part or data[j - 1 : j] == b"\\"
        if part in (b".", b".."):
            return True
        if part == folder:
            pos = j
        elif part.endswith(folder) and data[j - 1 : j] == b"\\":
            pos = i - len(folder)  # ``\\nsrc/``: an escape before the folder's letters
        else:
            return False
    return True


def concerns(
    tf: TranscriptFile, needles: tuple[Needle, ...], seen: set[bytes] | None = None
) -> bool:
    """Whether the session's transcript (or one of its parts) holds one of ``needles``
    (``seen``: as ``holds_any``'s, over them all)."""
    return any(holds_any(p, needles, seen) for p in (tf.path, *tf.parts))


# a transcript's stat (``_stat_mark``), and byte strings it holds nowhere at that stat
Nowhere = dict[str, tuple[str, frozenset[bytes]]]


def split(
    conn: sqlite3.Connection,
    files: list[TranscriptFile],
    needles: tuple[Needle, ...],
    nowhere: Nowhere | None = None,
) -> tuple[list[TranscriptFile], list[TranscriptFile]]:
    """(the transcripts that can concern the repository, the rest), searching only
    those not already known to hold none of ``needles`` at their current stat.

    A transcript found to hold one of the byte strings a search for ``needles``
    looks for (the needles, their anchors, the names: ``_searched``) nowhere is
    remembered as holding none of it (the memo of that string): a needle holding
    it then asks that transcript no search, in this answer or the next (the
    repository's needles when another file is asked about; a name in other folders,
    a renamed file's old path, ``click/core.py`` after ``src/click/core.py``).
    ``nowhere`` (by session), for the searches of one answer: each transcript left
    gets the byte strings it was found to hold nowhere, and a needle holding one is
    not looked for in it (``click.py`` where ``click``, the anchor of ``/click/``,
    is nowhere)."""
    key = _memo_key(needles)
    known = _load(conn, key)
    every = sorted(_searched(needles))
    string_keys = {string: _memo_key((string,)) for string in every}
    absent = {string: _load(conn, k) for string, k in string_keys.items()}
    now: list[TranscriptFile] = []
    later: list[TranscriptFile] = []
    memo: dict[str, str] = {}
    still: dict[bytes, dict[str, str]] = {string: {} for string in every}
    for tf in files:
        try:
            stat = _stat_mark(str(tf.path), tf.stat_key())
        except OSError:
            now.append(tf)  # the indexer says what is wrong with it
            continue
        sid = tf.session_id
        strings = {string for string in every if absent[string].get(sid) == stat}
        held = nowhere.get(sid) if nowhere is not None else None
        if held is not None and held[0] == stat:
            strings |= held[1]
        # a string it holds nowhere is in no needle it holds (a name in none of its
        # folders): each such needle is a pass over the file saved (the old name's
        # search after the refresh's, the repository's when another file is asked)
        left = _not_holding(needles, strings) if strings else needles
        if known.get(sid) != stat and left:
            seen: set[bytes] = set()
            if concerns(tf, left, seen):
                now.append(tf)
                continue
            strings |= _searched(left) - seen  # searched whole: what it holds nowhere
        # and every string holding one of those (``click.py`` where ``click`` is nowhere)
        strings |= {e for e in every if e not in strings and any(s in e for s in strings)}
        later.append(tf)
        if nowhere is not None:
            nowhere[sid] = (stat, frozenset(strings))
        memo[sid] = stat
        for string in strings.intersection(every):
            still[string][sid] = stat
    changed = [(key, memo)] if memo != known else []
    changed += [(string_keys[s], still[s]) for s in every if still[s] != absent[s]]
    if changed:
        _store(conn, changed)
    return now, later


def _not_holding(needles: tuple[Needle, ...], strings: set[bytes]) -> tuple[Needle, ...]:
    """``needles`` less each one that holds one of ``strings`` (an ``InFolder`` is
    found only where its name is: by its name)."""
    return tuple(
        n
        for n in needles
        if not any(s in (n.name if isinstance(n, InFolder) else n) for s in strings)
    )


def _searched(needles: tuple[Needle, ...]) -> set[bytes]:
    """The byte strings a search for ``needles`` that found none was sure to find
    wherever they are (``seen`` names those of them it found): the needles, their
    plan's anchors and the names."""
    plan = search_plan(needles)
    return {
        *(n.name if isinstance(n, InFolder) else n for n in needles),
        *(anchor for anchor, _ in plan.anchored),
    }


def forget_memos(conn: sqlite3.Connection) -> None:
    """Drop every memo: ``deja index`` read every transcript it found, so none is left
    for a refresh to search (one it could not read is searched again, once)."""
    try:
        with conn:
            conn.execute("DELETE FROM meta WHERE key >= ? AND key < ?", (MEMO, "prescan;"))
    except sqlite3.Error:
        pass  # a busy index keeps them: a memo only spares a search


def _stat_mark(path: str, key: tuple[int, ...]) -> str:
    """A transcript's path and stat key as a memo keeps them: 16 characters (a memo
    lists every unread transcript, in up to ``MEMO_KEEP`` rows)."""
    return blake2b(json.dumps([path, *key]).encode(), digest_size=8).hexdigest()


def _memo_key(needles: tuple[Needle, ...]) -> str:
    joined = b"\0".join(needle_key(n) for n in needles)
    return MEMO + blake2b(joined, digest_size=12).hexdigest()


def _load(conn: sqlite3.Connection, key: str) -> dict[str, object]:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        if row is None:
            return {}
        got = json.loads(row[0])
        memo = got.get("later") if isinstance(got, dict) else None
        return memo if isinstance(memo, dict) else {}
    except (sqlite3.Error, ValueError):
        return {}


def _store(conn: sqlite3.Connection, memos: list[tuple[str, dict[str, str]]]) -> None:
    """Each (key, memo) of ``memos``, in one transaction; the oldest beyond ``MEMO_KEEP``
    go."""
    try:
        with conn:
            now = time.time()
            conn.executemany(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                [(key, json.dumps({"at": now, "later": memo})) for key, memo in memos],
            )
            rows = conn.execute(
                "SELECT key, value FROM meta WHERE key >= ? AND key < ?", (MEMO, "prescan;")
            ).fetchall()
            if len(rows) > MEMO_KEEP:
                rows.sort(key=lambda r: _at(r[1]), reverse=True)
                conn.executemany(
                    "DELETE FROM meta WHERE key=?", [(k,) for k, _ in rows[MEMO_KEEP:]]
                )
    except sqlite3.Error:
        pass  # a busy or read-only index only costs the memo


def _at(value: str) -> float:
    try:
        got = json.loads(value)
        return float(got.get("at", 0)) if isinstance(got, dict) else 0.0
    except (ValueError, TypeError):
        return 0.0
