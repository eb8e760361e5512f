"""What three small ``git`` questions would answer, read from the repository's files.

A warm ``deja blame`` (its answer cached) asked git three things before it could
look the answer up: the top of the working tree and HEAD (``git rev-parse``), the
tips of the notes refs (``git for-each-ref``) and whether git's configuration sets
an ignore-revs file or a mailmap (``git config``). Each is a process, a few
milliseconds of a warm answer that takes about fifteen. The files git reads for
them are plain: ``.git/HEAD``, a loose ref or a line of ``packed-refs``, and the
configuration files. So each function here gives git's own output, byte for byte,
from those files, or None wherever the files alone cannot be trusted to say what
git would, and the caller asks git as before:

- the repository: a ``.git`` folder of this user's found going up from the start,
  as git's discovery goes (not across a file system's edge). None for a ``.git``
  file (a linked worktree, a submodule), a link, a start inside a git folder, a
  shallow clone, the reftable ref store, a configuration that sets the worktree, a
  bare repository or an include;
- a ref: a loose file holding an object id, else its line in ``packed-refs``.
  None for a symbolic ref (other than HEAD's ``ref:``), an unborn branch, a ref
  that is a folder, anything not an id;
- the configuration: the system's, the user's (``GIT_CONFIG_GLOBAL``,
  ``GIT_CONFIG_NOSYSTEM`` as git reads them), the repository's and its worktree's
  files. Not parsed: where none of them names a mailmap or an ignore-revs file,
  git has none to give (its output is empty). Any mention of either, an include,
  ``GIT_CONFIG_COUNT``: None.

Nothing is cached between calls: each reads the files afresh, so a commit, a
checkout, a new note or a changed configuration is seen at once, with no clock
or watch to trust. Links and special files are never followed (``statefile``);
where the environment makes git read elsewhere, it is the environment the git
processes get (``gitenv.no_git_env``).

The standard library and ``statefile`` only: the console script reads this
before deja's modules load (``facts/early.py``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from deja_blame import statefile

__all__ = ["rev_parse", "layout", "ref_tips", "blame_config", "config_files", "replacements"]

_HEX = frozenset(b"0123456789abcdef")
_REF_LIMIT = 4096  # a loose ref or HEAD: an id or "ref: NAME" and a newline
_PACKED_LIMIT = 32 << 20  # packed-refs larger than this: ask git
_CONFIG_LIMIT = 1 << 20
# Words in a configuration file that make its answer git's to give (lowercased).
# ``include``: another file (includeIf too); ``worktree``: core.worktree moves the
# top, extensions.worktreeConfig adds a file; ``refstorage``: refs not in files.
_CONFIG_DOUBTS = (b"include", b"worktree", b"refstorage")
_BLAME_WORDS = (b"mailmap", b"ignorerevs")  # blame.ignoreRevsFile, mailmap.file/.blob
# core.useReplaceRefs, or a file that might set it (another, a worktree's own)
_REPLACE_DOUBTS = (b"usereplacerefs", b"include", b"worktree")


def rev_parse(start: str) -> bytes | None:
    """``git rev-parse --show-toplevel --is-shallow-repository --verify -q HEAD`` run
    in the folder ``start``, or None (ask git)."""
    found = _repository(start)
    if found is None:
        return None
    top, gitdir = found
    head = _head(gitdir)
    if head is None:
        return None
    return os.fsencode(top) + b"\nfalse\n" + head + b"\n"


def layout(start: str) -> bytes | None:
    """``git rev-parse --absolute-git-dir --show-object-format --is-shallow-repository
    --show-toplevel`` run in the folder ``start`` (how ``gitcli.CliRepository`` opens
    a repository), or None (ask git). A repository of another object format than
    SHA-1 says so in its configuration: git's to read."""
    found = _repository(start)
    if found is None:
        return None
    top, gitdir = found
    config = _read(os.path.join(gitdir, "config"), _CONFIG_LIMIT)
    if not isinstance(config, bytes) or b"objectformat" in config.lower():
        return None
    return os.fsencode(gitdir) + b"\nsha1\nfalse\n" + os.fsencode(top) + b"\n"


def ref_tips(top: str, refs: tuple[str, ...]) -> bytes | None:
    """``git for-each-ref --format='%(objectname) %(refname)' REFS...`` run at the top
    of a working tree, for full ref names, or None (ask git)."""
    found = _repository(top)
    if found is None or os.path.realpath(top) != found[0]:
        return None
    gitdir = found[1]
    rows = []
    packed = _Packed(gitdir)
    for name in sorted(set(refs)):  # git's order: by ref name
        tip = _ref(gitdir, name, packed, as_pattern=True)
        if isinstance(tip, _Doubt):
            return None
        if tip is not None:
            rows.append(tip + b" " + name.encode() + b"\n")
    return b"".join(rows)


def blame_config(start: str, env: dict[str, str] | None = None) -> bytes | None:
    """``git config -z --get-regexp '^(blame\\.ignorerevsfile|mailmap\\.(file|blob))$'``
    run in ``start`` when it gives nothing (b""); None: it may give something, or the
    files cannot say (ask git). ``env``: the environment git would run with."""
    env = dict(os.environ) if env is None else env
    if env.get("GIT_CONFIG_COUNT", "").strip() not in ("", "0"):
        return None  # settings given in the environment (git -c's kind)
    found = _repository(start)
    if found is None:
        return None
    files = [*_system_files(env), *_global_files(env)]
    if files[-1:] == [None]:
        return None  # no home to find the user's configuration in
    gitdir = found[1]
    files += [os.path.join(gitdir, "config"), os.path.join(gitdir, "config.worktree")]
    for path in files:
        assert path is not None
        data = _read(path, _CONFIG_LIMIT)
        if isinstance(data, _Doubt):
            return None
        if data is None:
            continue
        low = data.lower()
        if any(w in low for w in _CONFIG_DOUBTS + _BLAME_WORDS):
            return None
    return b""


def config_files(start: str) -> list[str]:
    """The configuration files git reads in the folder ``start`` (``blame_config``'s):
    the system's, the user's and the repository's (none of the repository's outside
    one)."""
    env = dict(os.environ)
    files = [f for f in [*_system_files(env), *_global_files(env)] if f is not None]
    found = _repository(start)
    if found is not None:
        files += [os.path.join(found[1], "config"), os.path.join(found[1], "config.worktree")]
    return files


def replacements(top: str) -> bytes | None:
    """What makes git read other commits than those stored in the repository at the
    top of a working tree ``top``: its replace refs (``git replace``: each a line of
    ``packed-refs`` or a loose ref's name and id) and its grafts file
    (``info/grafts``), both in the common git folder (a linked worktree's is its main
    one's). b"": none (git blames the commits as they are). Not git's output but a
    signature: any change in them changes it. None: the files cannot say (a link,
    the reftable store, a ``.git`` that is not a folder or a ``gitdir:`` file).
    ``GIT_NO_REPLACE_OBJECTS`` and ``GIT_REPLACE_REF_BASE`` are not read: the git
    processes deja runs never get them (``gitenv.no_git_env``)."""
    common = _common_dir(top)
    if common is None or os.path.lexists(os.path.join(common, "reftable")):
        return None
    packed = _read(os.path.join(common, "packed-refs"), _PACKED_LIMIT)
    grafts = _read(os.path.join(common, "info", "grafts"), _PACKED_LIMIT)
    if isinstance(packed, _Doubt) or isinstance(grafts, _Doubt):
        return None
    rows = []
    if packed is not None and b" refs/replace/" in packed:
        rows += [ln for ln in packed.splitlines() if b" refs/replace/" in ln]
    loose = _loose_refs(os.path.join(common, "refs", "replace"), "refs/replace")
    if loose is None:
        return None
    rows += loose
    if grafts is not None:
        rows.append(b"grafts " + grafts)
    if rows and not _replace_refs_plain(common):
        return None  # core.useReplaceRefs may turn them off: git's to say
    return b"\n".join(rows)


def _replace_refs_plain(common: str) -> bool:
    """Whether no configuration file git reads names ``core.useReplaceRefs`` (or
    includes another, or a worktree's own, that might)."""
    env = dict(os.environ)
    files = [*_system_files(env), *_global_files(env), os.path.join(common, "config")]
    for path in files:
        data = _read(path, _CONFIG_LIMIT) if path is not None else None
        if isinstance(data, _Doubt):
            return False
        if data is not None and any(w in data.lower() for w in _REPLACE_DOUBTS):
            return False
    return True


def _common_dir(top: str) -> str | None:
    """The common git folder of the working tree at ``top``: its ``.git`` folder, or
    for a ``.git`` file (a linked worktree, a submodule) the folder it names, and in
    either the folder its ``commondir`` file names; None: neither can be read."""
    dotgit = os.path.join(top, ".git")
    try:
        st = os.lstat(dotgit)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        gitdir = dotgit
    else:
        data = _read(dotgit, _REF_LIMIT)
        if not isinstance(data, bytes) or not data.startswith(b"gitdir: "):
            return None
        gitdir = os.path.join(top, os.fsdecode(data[8:].strip()))
    common = _read(os.path.join(gitdir, "commondir"), _REF_LIMIT)
    if isinstance(common, _Doubt):
        return None
    if common is None:
        return gitdir
    return os.path.join(gitdir, os.fsdecode(common.strip()))


def _loose_refs(folder: str, name: str) -> list[bytes] | None:
    """Each loose ref below ``folder`` (the refs named ``name/...``) as ``ID NAME``,
    in name order; None: a link or a special file among them."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return []
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode):
        return None
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return None
    rows: list[bytes] = []
    for entry in entries:
        path, below = os.path.join(folder, entry.name), f"{name}/{entry.name}"
        if entry.is_dir(follow_symlinks=False):
            more = _loose_refs(path, below)
            if more is None:
                return None
            rows += more
            continue
        data = _read(path, _REF_LIMIT)
        if not isinstance(data, bytes):
            return None
        rows.append(data.strip() + b" " + os.fsencode(below))
    return rows


class _Doubt:
    """A file git reads that is there but cannot be read as git would read it."""


_DOUBT = _Doubt()


def _read(path: str, limit: int) -> bytes | None | _Doubt:
    """The bytes of the regular file ``path``; None: it is not there (git reads
    nothing either); _DOUBT: a link, a folder, a special file, too long, unreadable."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return _DOUBT
    if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
        return _DOUBT
    data = statefile.read_bytes(Path(path), limit + 1)
    if data is None or len(data) > limit:
        return _DOUBT
    return data


def _repository(start: str) -> tuple[str, str] | None:
    """(top of the working tree, its ``.git`` folder) as git finds them from the
    folder ``start`` (its real path: git walks up from where it stands); None in
    any case git might see otherwise."""
    if os.name != "posix":
        return None
    try:
        here = os.path.realpath(start)
        device = os.stat(here).st_dev
    except OSError:
        return None
    while True:
        dotgit = os.path.join(here, ".git")
        try:
            st = os.lstat(dotgit)
        except FileNotFoundError:
            st = None
        except OSError:
            return None
        if st is not None:
            if not stat.S_ISDIR(st.st_mode):
                return None  # a gitfile (worktree, submodule) or a link
            return _usable(here, dotgit, st)
        if _looks_like_git_dir(here):
            return None  # inside a git folder, or a bare repository
        parent = os.path.dirname(here)
        if parent == here:
            return None  # no repository: git says so in its words
        try:
            if os.stat(parent).st_dev != device:
                return None  # git stops at a file system's edge
        except OSError:
            return None
        here = parent


def _looks_like_git_dir(folder: str) -> bool:
    return all(os.path.exists(os.path.join(folder, name)) for name in ("HEAD", "objects", "refs"))


def _usable(top: str, gitdir: str, st: os.stat_result) -> tuple[str, str] | None:
    """The repository at ``top``, where its files say all git would: this user's
    (git refuses another's: safe.directory), a full clone, refs in files, no
    other worktree or git folder named in its configuration."""
    uid = os.geteuid()
    try:
        if st.st_uid != uid or os.stat(top).st_uid != uid:
            return None
    except OSError:
        return None
    for name in ("commondir", "shallow", "reftable"):
        if os.path.lexists(os.path.join(gitdir, name)):
            return None
    config = _read(os.path.join(gitdir, "config"), _CONFIG_LIMIT)
    if not isinstance(config, bytes):
        return None  # git needs it to know the repository's format
    low = config.lower()
    if any(w in low for w in _CONFIG_DOUBTS) or not _not_bare(low):
        return None
    return top, gitdir


def _not_bare(config: bytes) -> bool:
    """Whether a (lowercased) configuration leaves the repository non-bare: every line
    naming ``bare`` is ``bare = false``."""
    for line in config.splitlines():
        if b"bare" in line and line.replace(b" ", b"").replace(b"\t", b"") != b"bare=false":
            return False
    return True


def _head(gitdir: str) -> bytes | None:
    """HEAD's commit id (as ``rev-parse --verify HEAD``), or None."""
    data = _read(os.path.join(gitdir, "HEAD"), _REF_LIMIT)
    if not isinstance(data, bytes):
        return None
    data = data.strip()
    if _is_id(data):
        return data  # detached
    if not data.startswith(b"ref: refs/heads/"):
        return None
    name = data[5:].decode("utf-8", "surrogateescape")
    tip = _ref(gitdir, name, _Packed(gitdir))
    return tip if isinstance(tip, bytes) else None  # unborn (None) or in doubt


def _is_id(data: bytes) -> bool:
    return len(data) in (40, 64) and set(data) <= _HEX


def _ref(
    gitdir: str, name: str, packed: _Packed, as_pattern: bool = False
) -> bytes | None | _Doubt:
    """The object id ``name`` points to; None: no such ref. ``as_pattern``: as
    for-each-ref reads a name, which also matches refs below it (``NAME/x``)."""
    parts = name.split("/")
    if parts[0] != "refs" or any(p in ("", ".", "..") for p in parts):
        return _DOUBT
    data = _read(os.path.join(gitdir, *parts), _REF_LIMIT)
    if isinstance(data, _Doubt):
        return _DOUBT  # a folder of refs below the name, a link
    below = packed.has_below(name) if as_pattern else False
    if below is None or below:
        return _DOUBT
    if data is not None:
        data = data.strip()
        return data if _is_id(data) else _DOUBT  # "ref: ..." or garbage
    return packed.tip(name)


class _Packed:
    """``packed-refs``, read on first need."""

    def __init__(self, gitdir: str) -> None:
        self.path = os.path.join(gitdir, "packed-refs")
        self._data: bytes | None | _Doubt = b""
        self._read = False

    def _lines(self) -> bytes | None | _Doubt:
        if not self._read:
            self._data, self._read = _read(self.path, _PACKED_LIMIT), True
        return self._data

    def tip(self, name: str) -> bytes | None | _Doubt:
        data = self._lines()
        if data is None or isinstance(data, _Doubt):
            return data
        key = b" " + name.encode("utf-8", "surrogateescape") + b"\n"
        at = data.find(key)
        if at < 0:
            return None
        start = data.rfind(b"\n", 0, at) + 1
        tip = data[start:at]
        return tip if _is_id(tip) else _DOUBT

    def has_below(self, name: str) -> bool | None:
        """Whether a packed ref lies below ``name`` (None: cannot tell)."""
        data = self._lines()
        if isinstance(data, _Doubt):
            return None
        return data is not None and b" " + name.encode("utf-8", "surrogateescape") + b"/" in data


def _system_files(env: dict[str, str]) -> list[str]:
    """The system's configuration as this git reads it: ``/etc/gitconfig``, and the
    one under the prefix git was built for where that is not ``/usr``."""
    if _true(env.get("GIT_CONFIG_NOSYSTEM", "")):
        return []
    files = ["/etc/gitconfig"]
    for folder in env.get("PATH", os.defpath).split(os.pathsep):
        git = os.path.join(folder or ".", "git")
        if os.path.isfile(git) and os.access(git, os.X_OK):  # the git that would run
            prefix = os.path.dirname(os.path.dirname(os.path.realpath(git)))
            if prefix != "/usr":
                files.append(os.path.join(prefix, "etc", "gitconfig"))
            break
    return files


def _global_files(env: dict[str, str]) -> list[str | None]:
    """The user's configuration files; [None] where there is no home to find them."""
    if "GIT_CONFIG_GLOBAL" in env:
        return [env["GIT_CONFIG_GLOBAL"] or None]
    home = env.get("HOME")
    if not home:
        return [None]
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return [os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")]


def _true(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on")
