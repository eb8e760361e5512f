"""Which commit introduced each current line: git's blame, in two engines.

- ``git blame --incremental`` when git is on PATH: about 10x faster than libgit2's
  blame on long histories (pallets/click core.py: 0.23 s against 2.0 s), so it
  is the default.
- pygit2 (libgit2) otherwise; the working tree is then blamed as HEAD plus a
  line diff, lines that differ from HEAD being not committed yet.

Both give, per line: the commit, its committer time, and the line's original
path and number in that commit (blame follows whole-file renames). A whole
version's blame (``blame_version``) is read from the index's blame cache where
it was kept, else derived from an older commit's (``derived_blame``), else
computed in process from the history a question about many files has read
(``plain_blame``), else asked of the engine, and kept.
"""

from __future__ import annotations

import operator
import os
import sqlite3
import subprocess
import threading
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from deja_blame.attribution import blame_options, cache
from deja_blame.attribution.facts import derived_blame, early, shared
from deja_blame.attribution.facts.model import BlameLine
from deja_blame.blake2 import blake2b
from deja_blame.errors import DejaError
from deja_blame.gitcli import is_blob, is_cli
from deja_blame.gitutil import (
    FileVersion,
    git_available,
    head_commit,
    no_git_env,
    read_worktree_bytes,
    resolve_commit,
    workdir,
)
from deja_blame.index import queries as Q
from deja_blame.linediff import aligned
from deja_blame.objectid import LENGTHS

if TYPE_CHECKING:
    import pygit2


class PendingBlame:
    """A blame started in the background: git works while deja reads its index."""

    def __init__(
        self,
        compute: Callable[[], list[BlameLine]],
        cancel: Callable[[], None] | None = None,
        stream: Callable[[Callable[[list[BlameLine]], None]], None] | None = None,
        authors: Callable[[], dict[str, tuple[str, str, int]]] | None = None,
    ) -> None:
        self._compute = compute
        self._cancel = cancel
        self._stream = stream
        self._authors = authors

    def result(self) -> list[BlameLine]:
        return self._compute()

    def after(self, hook: Callable[[list[BlameLine]], None]) -> None:
        """Run ``hook`` on the lines once git is done (before ``result`` returns)."""
        compute = self._compute

        def then() -> list[BlameLine]:
            lines = compute()
            hook(lines)
            return lines

        self._compute = then

    def stream(self, consumer: Callable[[list[BlameLine]], None]) -> None:
        """Give ``consumer`` the lines as git finds them (those found so far at once),
        on git's reader thread, before ``result``; where they do not come in blocks,
        all of them at ``result``. A consumer's error is raised by ``result``."""
        if self._stream is not None:
            self._stream(consumer)
        else:
            self.after(consumer)

    def authors(self) -> dict[str, tuple[str, str, int]] | None:
        """After ``result``: each commit's author as git blame showed it (name, mail,
        epoch; its mailmap applied), or None where this blame did not say (libgit2,
        a cached or derived blame)."""
        return self._authors() if self._authors is not None else None

    def cancel(self) -> None:
        """Stop the work (a git blame nobody will read)."""
        if self._cancel is not None:
            self._cancel()


def start_blame(
    root: Path,
    repo: pygit2.Repository,
    relpath: str,
    rev: str | None,
    engine: str = "auto",
    span: tuple[int, int] | None = None,
) -> PendingBlame:
    """Start blaming ``relpath`` at ``rev``; ``span`` (first, last line) limits it
    to those lines, as ``git blame -L`` does (git follows only them)."""
    if engine == "git" or (engine == "auto" and git_available()) or is_cli(repo):
        early = _take_early(_early_key(root, rev, relpath)) if rev and span is None else None
        return early if early is not None else _start_git(root, relpath, rev, span)
    if not blame_options.current().default:
        raise DejaError("git blame's options (-w, -M, -C, --since, --ignore-rev) need git on PATH")
    return PendingBlame(lambda: _span(_blame_pygit2(root, repo, relpath, rev), span))


# Blames started before the repository was opened (``start_early``): the
# attribution cache missed, and git blame works while deja imports and reads.
_EARLY: dict[tuple[str, str, str, str], PendingBlame] = {}
_EARLY_KEPT = 4
_EARLY_LOCK = threading.Lock()  # the editor server blames on threads of its own


def _take_early(key: tuple[str, str, str, str]) -> PendingBlame | None:
    with _EARLY_LOCK:
        return _EARLY.pop(key, None)


def _early_key(root: Path | str, commit: str, relpath: str) -> tuple[str, str, str, str]:
    return (str(Path(root).resolve()), commit, relpath, blame_options.current().signature())


def start_early(root: Path | str, commit: str, relpath: str) -> None:
    """Start ``git blame --porcelain`` of ``relpath`` at ``commit`` now, for the
    ``start_blame`` of the same file and commit that follows (it takes it). The
    whole file only, only where git is the engine, and not where the blame will be
    computed in process (``plain_blame``)."""
    if not git_available():
        return
    if shared.active(root):  # a question about many files: the blame may be computed
        from deja_blame.attribution.facts.plain_blame import tried

        if tried(str(root), commit, relpath):
            return
    key = _early_key(root, commit, relpath)
    ended: list[PendingBlame] = []
    with _EARLY_LOCK:
        if key in _EARLY:
            return
        while len(_EARLY) >= _EARLY_KEPT:  # blames never taken: end the oldest
            ended.append(_EARLY.pop(next(iter(_EARLY))))
        _EARLY[key] = _start_git(Path(root), relpath, commit)
    for pending in ended:
        pending.cancel()


def drop_early(root: Path | str, commit: str, relpath: str) -> None:
    """End an early blame nobody will take (its answer was cached after all)."""
    pending = _take_early(_early_key(root, commit, relpath))
    if pending is not None:
        pending.cancel()


def _span(lines: list[BlameLine], span: tuple[int, int] | None) -> list[BlameLine]:
    if span is None:
        return lines
    return [b for b in lines if span[0] <= b.line <= span[1]]


def blame(
    root: Path, repo: pygit2.Repository, relpath: str, rev: str | None, engine: str = "auto"
) -> list[BlameLine]:
    return start_blame(root, repo, relpath, rev, engine).result()


def _start_git(
    root: Path, relpath: str, rev: str | None, span: tuple[int, int] | None = None
) -> PendingBlame:
    # --incremental: git writes each block of lines as it finds its commit, spread over
    # its whole run, so they are parsed while it works (``_Incremental``), not after
    args = ["git", "-C", str(root), "blame", "--incremental", *blame_options.current().args()]
    if span is not None:
        args.append(f"-L{span[0]},{span[1]}")
    if rev is not None:
        args.append(rev)
    args += ["--", relpath]
    proc = early.take(args) or subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=no_git_env()
    )
    reader = _Incremental(proc)

    def finish() -> list[BlameLine]:
        lines, err_bytes = reader.result()
        if proc.returncode != 0:
            err = err_bytes.decode("utf-8", "replace").strip()
            if "no such path" in err or "no such ref" in err.lower():
                # a file never committed (new, untracked): every line is uncommitted
                return []
            raise DejaError(f"git blame failed: {err.splitlines()[-1] if err else proc.returncode}")
        return lines

    def cancel() -> None:
        try:
            proc.kill()
            proc.wait(timeout=5)  # the reader thread sees the end of its output
        except (OSError, subprocess.SubprocessError):
            pass

    def authors() -> dict[str, tuple[str, str, int]]:
        # all zeros: not committed yet, no commit to have an author; an author line
        # git could not read it shows as "(unknown)", time 0 (git log: nothing)
        got = reader.authors.items()
        return {
            c: (a[0], a[1], a[2])
            for c, a in got
            if a[2] and 0 < a[2] < _GIT_TIME_CLAMP and a[1] != "(unknown)" and c.strip("0")
        }

    return PendingBlame(finish, cancel, reader.stream, authors)


def blame_copies(
    root: Path, relpath: str, rev: str | None, ranges: list[tuple[int, int]]
) -> list[BlameLine]:
    """``git blame -C`` of some line ranges: where lines a commit moved from another
    file (changed in the same commit) came from. [] when git cannot say."""
    return _blame_finding("-C", root, relpath, rev, ranges) or []


def blame_moves(
    root: Path, relpath: str, rev: str | None, ranges: list[tuple[int, int]]
) -> list[BlameLine] | None:
    """``git blame -M`` of some line ranges: lines moved within the file followed
    (``copies.py``: -C's answer where nothing could come from another file). None
    when git cannot say."""
    return _blame_finding("-M", root, relpath, rev, ranges)


def _blame_finding(
    option: str, root: Path, relpath: str, rev: str | None, ranges: list[tuple[int, int]]
) -> list[BlameLine] | None:
    args = ["git", "-C", str(root), "blame", "--porcelain", option]
    args += [f"-L{a},{b}" for a, b in ranges]
    if rev is not None:
        args.append(rev)
    args += ["--", relpath]
    try:
        proc = subprocess.run(args, capture_output=True, env=no_git_env(), timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_porcelain(proc.stdout) if proc.returncode == 0 else None


class _Incremental:
    """``git blame --incremental`` read on a thread as git writes it: each block is
    ``SHA ORIG FINAL COUNT``, the commit's details the first time it comes, and
    ``filename`` last. The lines, in file order, once git is done (``result``)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.lines: list[BlameLine] = []
        self.err = b""
        self._lock = threading.Lock()
        self._consumer: Callable[[list[BlameLine]], None] | None = None
        self._given = 0  # lines handed to the consumer
        self._failed: BaseException | None = None
        self.authors: dict[str, list[Any]] = {}  # the parser's, complete after ``result``
        self.thread = threading.Thread(target=self._read, name="deja-git-blame", daemon=True)
        self.thread.start()

    def stream(self, consumer: Callable[[list[BlameLine]], None]) -> None:
        """``PendingBlame.stream``: what is parsed so far now, the rest as it comes."""
        with self._lock:
            self._consumer = consumer
            self._give()

    def _give(self) -> None:
        """Hand the consumer the lines parsed since it last had some (lock held)."""
        if self._consumer is None or self._failed is not None or self._given == len(self.lines):
            return
        fresh = self.lines[self._given :]
        self._given = len(self.lines)
        try:
            self._consumer(fresh)
        except BaseException as exc:  # noqa: BLE001 - raised again by ``result``
            self._failed = exc

    def result(self) -> tuple[list[BlameLine], bytes]:
        self.thread.join()
        self.proc.wait()
        with self._lock:
            self._give()
        if self._failed is not None:
            raise self._failed
        self.lines.sort(key=_LINE)
        return self.lines, self.err

    def _read(self) -> None:
        proc = self.proc
        assert proc.stdout is not None and proc.stderr is not None
        try:
            parse = _IncrementalParser(self.lines)
            self.authors = parse.authors
            rest = b""
            fd = proc.stdout.fileno()
            while True:
                chunk = os.read(fd, 1 << 16)  # what git has written so far
                if not chunk:
                    break
                *complete, rest = (rest + chunk).split(b"\n")
                with self._lock:
                    parse.feed(complete)
                    self._give()
            with self._lock:
                if rest:
                    parse.feed([rest])
                self._give()
            self.err = proc.stderr.read()
        except (OSError, ValueError):
            pass  # killed (``cancel``): nobody reads this blame


_LINE = operator.attrgetter("line")


class _IncrementalParser:
    def __init__(self, out: list[BlameLine]) -> None:
        self.out = out
        self.times: dict[str, int] = {}
        # commit -> [name, mail, epoch] of its author, as git blame shows it (its
        # mailmap applied): ``PendingBlame.authors``
        self.authors: dict[str, list[Any]] = {}
        self.group: tuple[str, int, int, int] | None = None

    def feed(self, rows: list[bytes]) -> None:
        out, times, authors = self.out, self.times, self.authors
        for raw in rows:
            if self.group is None:
                parts = raw.split(b" ")
                if len(parts) == 4 and len(parts[0]) in LENGTHS:
                    self.group = (parts[0].decode(), int(parts[1]), int(parts[2]), int(parts[3]))
                continue
            head, _, rest = raw.partition(b" ")
            if head == b"committer-time":
                times[self.group[0]] = int(rest)
            elif head[:6] == b"author":
                _author_part(authors.setdefault(self.group[0], ["", "", None]), head, rest)
            elif head == b"filename":
                sha, orig, final, count = self.group
                self.group = None
                commit = sha if sha.strip("0") else None  # all zeros: not committed yet
                when = times.get(sha)
                path = unquote_path(rest)
                out += [BlameLine(final + k, commit, when, path, orig + k) for k in range(count)]


# git blame shows an author time past this as the largest it can (git log: as written)
_GIT_TIME_CLAMP = 2**63 - 1


def _author_part(author: list[Any], head: bytes, rest: bytes) -> None:
    """One of a commit's ``author``, ``author-mail`` and ``author-time`` lines, into
    [name, mail, epoch] (the mail without its brackets, as ``git log`` gives it)."""
    if head == b"author":
        author[0] = rest.decode("utf-8", "replace")
    elif head == b"author-mail":
        mail = rest.decode("utf-8", "replace")
        # git's own brackets only: a mail without them is git's "(unknown)"
        author[1] = mail[1:-1] if mail[:1] == "<" and mail[-1:] == ">" else "(unknown)"
    elif head == b"author-time" and rest.isdigit():
        author[2] = int(rest)


def parse_porcelain(data: bytes) -> list[BlameLine]:
    """Parse ``git blame --porcelain``: commit details come once per commit."""
    out: list[BlameLine] = []
    times: dict[str, int] = {}
    names: dict[str, str] = {}
    sha = ""
    orig = final = 0
    for raw in data.split(b"\n"):
        if not raw:
            continue
        if raw[:1] == b"\t":
            commit = sha if sha.strip("0") else None  # all zeros: not committed yet
            out.append(
                BlameLine(
                    line=final,
                    commit=commit,
                    commit_time=times.get(sha),
                    orig_path=names.get(sha, ""),
                    orig_line=orig,
                )
            )
            continue
        head, _, rest = raw.partition(b" ")
        if len(head) in LENGTHS and rest[:1].isdigit():
            sha = head.decode()
            parts = rest.split(b" ")
            orig, final = int(parts[0]), int(parts[1])
        elif head == b"committer-time":
            times[sha] = int(rest)
        elif head == b"filename":
            names[sha] = unquote_path(rest)
    return out


_C_ESCAPES = {
    ord("a"): 7,
    ord("b"): 8,
    ord("t"): 9,
    ord("n"): 10,
    ord("v"): 11,
    ord("f"): 12,
    ord("r"): 13,
    ord('"'): 34,
    ord("\\"): 92,
}


def unquote_path(raw: bytes) -> str:
    """A path as git prints it: C-quoted (``"a\\tb.py"``, octal bytes for non-ASCII)
    when it holds a quote, a backslash, a control character or, with
    core.quotePath (the default), a byte above 0x7f."""
    if len(raw) < 2 or raw[:1] != b'"' or raw[-1:] != b'"':
        return raw.decode("utf-8", "surrogateescape")
    body, out, i = raw[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c == 92 and i + 1 < len(body):  # backslash
            nxt = body[i + 1]
            octal = body[i + 1 : i + 4]
            if len(octal) == 3 and all(48 <= x <= 55 for x in octal):
                out.append(int(octal, 8))
                i += 4
                continue
            out.append(_C_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return bytes(out).decode("utf-8", "surrogateescape")


def _blame_pygit2(
    root: Path, repo: pygit2.Repository, relpath: str, rev: str | None
) -> list[BlameLine]:
    import pygit2

    commit = resolve_commit(repo, rev) if rev is not None else head_commit(repo)
    lines: list[BlameLine] = []
    if commit is not None:
        try:
            result = repo.blame(relpath, newest_commit=commit.id)
        except (KeyError, ValueError, pygit2.GitError):
            result = None
        if result is not None:
            for hunk in result:
                when = hunk.final_committer.time if hunk.final_committer else None
                for k in range(hunk.lines_in_hunk):
                    lines.append(
                        BlameLine(
                            line=hunk.final_start_line_number + k,
                            commit=str(hunk.final_commit_id),
                            commit_time=when,
                            orig_path=hunk.orig_path or relpath,
                            orig_line=hunk.orig_start_line_number + k,
                        )
                    )
    if rev is not None:
        return lines
    # Working tree: lines equal to HEAD's keep HEAD's blame, the rest are new.
    head_text = _blob_lines(repo, commit, relpath)
    work = read_worktree_bytes(root, relpath).decode("utf-8", "replace").splitlines()
    out: list[BlameLine] = []
    for j, i in enumerate(aligned(head_text, work)):
        if i is not None and i < len(lines):
            src = lines[i]
            out.append(BlameLine(j + 1, src.commit, src.commit_time, src.orig_path, src.orig_line))
        else:
            out.append(BlameLine(j + 1, None, None, relpath, j + 1))
    return out


def _blob_lines(repo: pygit2.Repository, commit: pygit2.Commit | None, relpath: str) -> list[str]:

    if commit is None:
        return []
    try:
        blob = repo[commit.tree[relpath].id]
    except KeyError:
        return []
    if not is_blob(blob):
        return []
    return blob.data.decode("utf-8", "replace").splitlines()


CACHE_ENTRIES = 2000  # blames kept (the index's blame_cache)


# -- a whole version's blame: the blame cache, a derived blame, or git ---------------


def _cache_key(repo: pygit2.Repository, version: FileVersion) -> str | None:
    # the repository is part of the key: a shallow clone's blame of a commit (its
    # boundary) is not the full clone's; so are its replace refs and grafts (git's
    # blame follows them). None: they cannot be read, nothing is kept
    root = workdir(repo)
    swapped = cache.replaced(str(root))
    if swapped is None:
        return None
    options = blame_options.current().signature() + swapped
    if version.commit is not None:
        return f"rev:{root}:{version.commit}:{version.relpath}{options}"
    head = head_commit(repo)
    digest = blake2b(version.data, digest_size=16).hexdigest()
    return f"wt:{root}:{head.id if head else '-'}:{version.relpath}:{digest}{options}"


def blame_version(
    conn: sqlite3.Connection | None,
    root: Path,
    repo: pygit2.Repository,
    version: FileVersion,
    engine: str,
) -> PendingBlame:
    """git's blame of ``version``, the whole file: from the blame cache, else derived
    from an older commit's blame of it (``derived_blame``: a report or stats blames
    one file at commit after commit), else computed from the history a question about
    many files has read (``plain_blame``), else started now; kept once git is done."""
    known = _cache_key(repo, version)
    key = f"{known}:{engine}"
    use_cache = conn is not None and known is not None and cache.cacheable()
    cached = _cached(conn, key) if use_cache and cache.fast_path_enabled() else None
    commit = version.commit
    # git's blame as a question about many files knows it: the cached one remembered,
    # else derived from an older commit's, else computed in process (``derived_blame``)
    found = None
    if commit is not None and _git_engine(repo, engine):
        found = derived_blame.known(root, commit, version.relpath, cached)
    if commit is not None and (cached is not None or (found is not None and found.computed)):
        drop_early(root, commit, version.relpath)  # no early blame will be taken
    if cached is not None:
        return PendingBlame(lambda: cached)
    if found is not None and found.lines is not None:
        derived = found.lines
        if use_cache and conn is not None:
            _store(conn, key, derived)
        return PendingBlame(lambda: derived)
    pending = start_blame(root, repo, version.relpath, commit, engine=engine)
    if use_cache and conn is not None:
        from deja_blame.later import defer

        # kept once git is done, and once the answer is out (``later``)
        pending.after(lambda lines: defer(lambda: _store(conn, key, lines)))
    if found is not None and commit is not None:
        pending.after(found.keep)  # remembered for later derivations
    return pending


def _cached(conn: sqlite3.Connection | None, key: str) -> list[BlameLine] | None:
    """The blame cache's lines of ``key``; None: not kept, or a damaged entry (blamed
    again)."""
    assert conn is not None
    row = Q.cache_get(conn, "blame_cache", key)
    if row is None:
        return None
    try:
        return [BlameLine(*item) for item in orjson.loads(zlib.decompress(row[0]))]
    except (zlib.error, orjson.JSONDecodeError, TypeError):
        return None


def _git_engine(repo: pygit2.Repository, engine: str) -> bool:
    """Whether ``start_blame`` asks git (what ``derived_blame`` derives), not libgit2."""
    return engine == "git" or (engine == "auto" and git_available()) or is_cli(repo)


def _store(conn: sqlite3.Connection, key: str, lines: list[BlameLine]) -> None:
    try:
        rows = orjson.dumps(
            [[b.line, b.commit, b.commit_time, b.orig_path, b.orig_line] for b in lines]
        )
    except TypeError:
        return  # a file name that is not UTF-8 (pathtext): not cached, blamed each time
    data = zlib.compress(rows, 1)
    try:
        Q.cache_put(conn, "blame_cache", key, data, CACHE_ENTRIES)
    except sqlite3.OperationalError:
        pass  # a busy or read-only index only costs the cache
