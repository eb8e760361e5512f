"""A repository read through the ``git`` program, for what libgit2 cannot open.

deja reads repositories through one interface: the part of pygit2's
``Repository`` it uses (objects by name, ``revparse_single``, ``head``,
``references``, ``config``, ``walk``, ``diff``, ``descendant_of``,
``merge_base``, ``odb.read_header``). ``gitutil.open_repository`` chooses the
implementation once per repository: pygit2 (libgit2) where it can open the
repository, as always; this module's ``CliRepository`` where it cannot, a
repository of SHA-256 object names (libgit2 1.9 reads SHA-1 only).

Objects come from one ``git cat-file --batch`` per repository; trees are parsed
here (an entry's name is raw bytes followed by the object's raw id, 20 or 32
bytes); diffs name their files with ``git diff-tree -z`` and their lines come
from ``pygit2.Patch.create_from`` on the two blobs' bytes (libgit2's diff of
buffers knows no object format). Blame is ``git blame`` (``facts/git_blame``).

Code that checks an object's kind asks ``is_commit``/``is_tree``/``is_blob``,
not ``isinstance`` with pygit2's classes, so both implementations pass.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard, cast

from deja_blame import gitfiles
from deja_blame.gitenv import no_git_env

if TYPE_CHECKING:
    import pygit2

# pygit2's numbers for a delta's status and a tree entry's mode (the same in both)
_STATUS = {"A": 1, "D": 2, "M": 3, "R": 4, "C": 5, "T": 8}
_KINDS = {"Commit": "commit", "Tree": "tree", "Blob": "blob", "Tag": "tag"}
# what ``peel`` hands our objects for a kind (they read its name, as of pygit2's classes)
_KIND_TYPES = {name.lower(): type(name, (), {}) for name in _KINDS}


def _stopped(what: str, exc: BaseException) -> Exception:
    """git that could not run or stopped answering, as one line (pygit2 has no such
    failure: a question read through git must not end in a traceback)."""
    from deja_blame.errors import DejaError

    return DejaError(f"{what} stopped: {exc}")


def git_errors() -> tuple[type[BaseException], ...]:
    """What reading a repository may raise: KeyError and ValueError, and pygit2's
    errors once pygit2 is loaded (a repository read through git raises only the
    first two, and a question answered through git never loads pygit2)."""
    mod = sys.modules.get("pygit2")
    if mod is None:
        return (KeyError, ValueError)
    return (KeyError, ValueError, mod.GitError, mod.InvalidSpecError)


def peel(obj: Any, kind: str) -> Any:
    """``obj.peel`` to a "commit", "tree" or "blob", for pygit2's objects and ours alike
    (pygit2 is imported only for its own objects)."""
    if type(obj).__module__ == __name__:  # ours: objects and references
        return obj.peel(_KIND_TYPES[kind])
    import pygit2

    return obj.peel({"commit": pygit2.Commit, "tree": pygit2.Tree, "blob": pygit2.Blob}[kind])


def object_format(gitdir: str | Path) -> str:
    """``sha1`` or ``sha256``: the repository's object format, as git reports it."""
    proc = subprocess.run(
        ["git", "--git-dir", str(gitdir), "rev-parse", "--show-object-format"],
        capture_output=True,
        env=no_git_env(),
        timeout=30,
    )
    return proc.stdout.decode("ascii", "replace").strip() or "sha1"


def is_cli(repo: Any) -> bool:
    """``repo`` is read through the git program (pygit2's blame is not there)."""
    return isinstance(repo, CliRepository)


def _kind(obj: Any) -> str | None:
    return getattr(obj, "type_str", None)


def is_commit(obj: Any) -> TypeGuard[pygit2.Commit]:
    return _kind(obj) == "commit"


def is_tree(obj: Any) -> TypeGuard[pygit2.Tree]:
    return _kind(obj) == "tree"


def is_blob(obj: Any) -> TypeGuard[pygit2.Blob]:
    return _kind(obj) == "blob"


@dataclass(frozen=True)
class Signature:
    name: str
    email: str
    time: int
    offset: int  # minutes east of UTC


def _signature(raw: bytes) -> Signature:
    text = raw.decode("utf-8", "replace")
    name, _, rest = text.partition(" <")
    email, _, when = rest.partition("> ")
    parts = when.split()
    time = int(parts[0]) if parts and parts[0].lstrip("-").isdigit() else 0
    offset = 0
    if len(parts) > 1 and len(parts[1]) == 5:
        sign = -1 if parts[1][0] == "-" else 1
        offset = sign * (int(parts[1][1:3]) * 60 + int(parts[1][3:5]))
    return Signature(name, email, time, offset)


class CliObject:
    type_str = ""

    def __init__(self, repo: CliRepository, oid: str, name: str | None, filemode: int) -> None:
        self._repo = repo
        self.id = oid
        self.name = name
        self.filemode = filemode

    @property
    def hex(self) -> str:
        return self.id

    def peel(self, kind: type) -> Any:
        want = _KINDS.get(getattr(kind, "__name__", ""), "")
        obj: Any = self
        for _ in range(8):
            if obj.type_str == want:
                return obj
            if obj.type_str == "commit" and want == "tree":
                return obj.tree
            if obj.type_str == "tag":
                obj = self._repo[obj.target]
                continue
            break
        raise ValueError(f"{self.id} cannot be peeled to a {want or kind!r}")

    def _data(self) -> bytes:
        return self._repo._read(self.id, self.type_str)


class CliBlob(CliObject):
    type_str = "blob"

    @property
    def data(self) -> bytes:
        return self._data()

    @property
    def size(self) -> int:
        return self._repo._header(self.id)[2]

    @property
    def is_binary(self) -> bool:
        return b"\0" in self._data()[:8000]


class CliTag(CliObject):
    type_str = "tag"

    @property
    def target(self) -> str:
        for line in self._data().split(b"\n"):
            if line.startswith(b"object "):
                return line[7:].decode("ascii")
            if not line:
                break
        raise KeyError(self.id)


class CliCommit(CliObject):
    type_str = "commit"

    def _headers(self) -> tuple[dict[bytes, list[bytes]], bytes]:
        data = self._data()
        head, _, message = data.partition(b"\n\n")
        fields: dict[bytes, list[bytes]] = {}
        last = b""
        for line in head.split(b"\n"):
            if line.startswith(b" "):  # a continued header (a signature): not ours
                continue
            last, _, value = line.partition(b" ")
            fields.setdefault(last, []).append(value)
        return fields, message

    @property
    def tree_id(self) -> str:
        return self._headers()[0][b"tree"][0].decode("ascii")

    @property
    def tree(self) -> CliTree:
        tree = self._repo[self.tree_id]
        assert isinstance(tree, CliTree)
        return tree

    @property
    def parent_ids(self) -> list[str]:
        return [p.decode("ascii") for p in self._headers()[0].get(b"parent", [])]

    @property
    def parents(self) -> list[CliCommit]:
        out = []
        for p in self.parent_ids:
            c = self._repo[p]
            assert isinstance(c, CliCommit)
            out.append(c)
        return out

    @property
    def message(self) -> str:
        return self._headers()[1].decode("utf-8", "replace")

    @property
    def raw_message(self) -> bytes:
        return self._headers()[1]

    @property
    def author(self) -> Signature:
        return _signature(self._headers()[0].get(b"author", [b""])[0])

    @property
    def committer(self) -> Signature:
        return _signature(self._headers()[0].get(b"committer", [b""])[0])

    @property
    def commit_time(self) -> int:
        return self.committer.time

    @property
    def commit_time_offset(self) -> int:
        return self.committer.offset


class CliTree(CliObject):
    type_str = "tree"

    def _entries(self) -> list[CliObject]:
        data = self._data()
        size = self._repo.id_bytes
        out: list[CliObject] = []
        k = 0
        while k < len(data):
            space = data.index(b" ", k)
            nul = data.index(b"\0", space)
            mode = int(data[k:space], 8)
            name = data[space + 1 : nul].decode("utf-8", "surrogateescape")
            oid = data[nul + 1 : nul + 1 + size].hex()
            k = nul + 1 + size
            cls: type[CliObject]
            if mode == 0o040000:
                cls = CliTree
            elif mode == 0o160000:
                cls = CliCommit  # a submodule: a commit of another repository
            else:
                cls = CliBlob
            out.append(cls(self._repo, oid, name, mode))
        return out

    def __iter__(self) -> Iterator[CliObject]:
        return iter(self._entries())

    def __len__(self) -> int:
        return len(self._entries())

    def __getitem__(self, path: str) -> CliObject:
        tree: CliTree = self
        parts = path.split("/")
        for k, part in enumerate(parts):
            found = next((e for e in tree._entries() if e.name == part), None)
            if found is None:
                raise KeyError(path)
            if k == len(parts) - 1:
                return found
            if not isinstance(found, CliTree):
                raise KeyError(path)
            tree = found
        raise KeyError(path)

    def __contains__(self, path: str) -> bool:
        try:
            self[path]
        except KeyError:
            return False
        return True

    def diff_to_tree(
        self, other: CliTree | None = None, context_lines: int = 3, swap: bool = False, **_: Any
    ) -> CliDiff:
        old: str | None = self.id
        new: str | None = other.id if other is not None else None
        if swap:
            old, new = new, old
        return CliDiff(self._repo, old, new, context_lines)


@dataclass
class DiffFile:
    path: str
    id: str
    mode: int


@dataclass
class Delta:
    status: int
    old_file: DiffFile
    new_file: DiffFile
    similarity: int = 0
    is_binary: bool = False


@dataclass
class Patch:
    """One file's patch: its delta (the names as git gave them, any byte) and the
    hunks libgit2 computed from the two blobs."""

    delta: Delta
    hunks: list[Any]


class CliDiff:
    """The files two trees differ in (``git diff-tree -z``), each file's patch on demand."""

    def __init__(
        self, repo: CliRepository, old: str | None, new: str | None, context_lines: int
    ) -> None:
        self._repo = repo
        self.old = old or repo.empty_tree
        self.new = new or repo.empty_tree
        self.context_lines = context_lines
        self._renames = False
        self._deltas: list[Delta] | None = None

    def find_similar(self, *args: Any, **kwargs: Any) -> None:
        self._renames = True
        self._deltas = None

    @property
    def deltas(self) -> list[Delta]:
        if self._deltas is None:
            args = ["diff-tree", "-r", "-z", "--raw", "--no-abbrev", "--no-ext-diff"]
            args.append("-M" if self._renames else "--no-renames")
            raw = self._repo.git([*args, self.old, self.new])
            self._deltas = _parse_raw(raw)
        return self._deltas

    def __len__(self) -> int:
        return len(self.deltas)

    def __getitem__(self, k: int) -> pygit2.Patch | None:
        import pygit2

        delta = self.deltas[k]
        if 0o160000 in (delta.old_file.mode, delta.new_file.mode):
            return None  # a submodule: no text
        old = self._repo._read(delta.old_file.id) if delta.old_file.id.strip("0") else None
        new = self._repo._read(delta.new_file.id) if delta.new_file.id.strip("0") else None
        made = pygit2.Patch.create_from(old, new, context_lines=self.context_lines)
        delta.is_binary = bool(made.delta.is_binary)
        return cast("pygit2.Patch", Patch(delta, list(made.hunks)))

    def __iter__(self) -> Iterator[pygit2.Patch | None]:
        return (self[k] for k in range(len(self)))


def _parse_raw(raw: bytes) -> list[Delta]:
    """``git diff-tree -r -z --raw`` -> deltas (``:old new oldid newid S\\0path\\0[path\\0]``)."""
    fields = raw.split(b"\0")
    out: list[Delta] = []
    k = 0
    while k < len(fields):
        meta = fields[k].lstrip(b"\n")
        k += 1
        if not meta.startswith(b":"):
            continue
        old_mode, new_mode, old_id, new_id, status = meta[1:].decode("ascii").split(" ")[:5]
        names = fields[k : k + (2 if status[0] in "RC" else 1)]
        k += len(names)
        paths = [n.decode("utf-8", "surrogateescape") for n in names]
        out.append(
            Delta(
                status=_STATUS.get(status[0], 3),
                old_file=DiffFile(paths[0], old_id, int(old_mode, 8)),
                new_file=DiffFile(paths[-1], new_id, int(new_mode, 8)),
                similarity=int(status[1:] or 0),
            )
        )
    return out


class CliReference:
    def __init__(self, repo: CliRepository, name: str, target: str) -> None:
        self._repo = repo
        self.name = name
        self.target = target  # always the object it resolves to

    def resolve(self) -> CliReference:
        return self

    def peel(self, kind: type) -> Any:
        return self._repo[self.target].peel(kind)

    def log(self) -> Iterator[Any]:
        raw = self._repo.git(["log", "-g", "--format=%H%x00%gs%x00", self.name, "--"], check=False)
        parts = raw.split(b"\0")
        for k in range(0, len(parts) - 1, 2):
            yield ReflogEntry(parts[k].strip().decode("ascii"), parts[k + 1].decode("utf-8"))


@dataclass(frozen=True)
class ReflogEntry:
    oid_new: str
    message: str


class CliReferences:
    def __init__(self, repo: CliRepository) -> None:
        self._repo = repo

    def __getitem__(self, name: str) -> CliReference:
        # asked of the running cat-file (as rev-parse --verify resolves it), not a new git
        got = self._repo._ask("--batch-check", name)
        if got is None:
            raise KeyError(name)
        return CliReference(self._repo, name, got[0])

    def __contains__(self, name: str) -> bool:
        try:
            self[name]
        except KeyError:
            return False
        return True

    def get(self, name: str) -> CliReference | None:
        try:
            return self[name]
        except KeyError:
            return None

    def __iter__(self) -> Iterator[str]:
        raw = self._repo.git(["for-each-ref", "--format=%(refname)"], check=False)
        return iter(raw.decode("utf-8", "replace").split())


class CliConfig:
    def __init__(self, repo: CliRepository) -> None:
        self._repo = repo

    def _get(self, key: str, *opts: str) -> str:
        proc = self._repo.run(["config", *opts, "--get", key])
        if proc.returncode != 0:
            raise KeyError(key)
        return proc.stdout.decode("utf-8", "replace").rstrip("\n")

    def __getitem__(self, key: str) -> str:
        return self._get(key)

    def __contains__(self, key: str) -> bool:
        try:
            self._get(key)
        except KeyError:
            return False
        return True

    def get_bool(self, key: str) -> bool:
        try:
            return self._get(key, "--type=bool") == "true"
        except KeyError:
            return False


class CliOdb:
    def __init__(self, repo: CliRepository) -> None:
        self._repo = repo

    def read_header(self, oid: Any) -> tuple[str, int]:
        _, kind, size = self._repo._header(str(oid))
        return kind, size


class CliWalker:
    def __init__(self, repo: CliRepository, start: Any) -> None:
        self._repo = repo
        self._include = [str(start)] if start is not None else []
        self._exclude: list[str] = []

    def push(self, oid: Any) -> None:
        self._include.append(str(oid))

    def hide(self, oid: Any) -> None:
        self._exclude.append(str(oid))

    def __iter__(self) -> Iterator[CliCommit]:
        if not self._include:
            return iter(())
        args = ["rev-list", "--topo-order", "--reverse", *self._include]
        args += [f"^{x}" for x in self._exclude]
        shas = self._repo.git([*args, "--"]).decode("ascii").split()
        return (self._repo[s] for s in shas)  # type: ignore[misc]


# Whether the repository at a working tree (its real path) is a shallow clone, as the
# ``rev-parse`` a command makes anyway said (``gitutil.is_shallow`` reads it: no process)
SHALLOW: dict[str, bool] = {}


def remember_shallow(toplevel: str, said: str) -> None:
    """Keep what ``rev-parse --is-shallow-repository`` said (``true``/``false``) of
    the working tree at ``toplevel``."""
    if said in ("true", "false"):
        SHALLOW[str(Path(toplevel).resolve())] = said == "true"


class CliRepository:
    """A repository read through the ``git`` program (see the module's docstring)."""

    def __init__(self, start: str | Path) -> None:
        """The repository holding the directory ``start``."""
        self.workdir: str | None = None
        # one git for the three (each process is a few ms of a one-file question)
        args = [
            "rev-parse",
            "--absolute-git-dir",
            "--show-object-format",
            "--is-shallow-repository",
            "--show-toplevel",
        ]
        said = gitfiles.layout(str(start))  # the same, from the files where they say it all
        if said is None:
            proc = subprocess.run(
                ["git", "-C", str(start), *args], capture_output=True, env=no_git_env(), timeout=30
            )
            said = proc.stdout if proc.returncode == 0 else b""
        lines = said.decode("utf-8", "surrogateescape").splitlines()
        if len(lines) < 3:
            raise KeyError(f"{start}: not in a git repository")
        self._gitdir = lines[0]
        self.is_bare = len(lines) < 4
        self.workdir = None if self.is_bare else lines[3] + "/"
        if not self.is_bare:
            remember_shallow(lines[3], lines[2].strip())
        self.path = self._gitdir + "/"
        self.id_bytes = 32 if lines[1].strip() == "sha256" else 20
        self._lock = threading.Lock()
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._data: dict[str, bytes] = {}
        self._headers: dict[str, tuple[str, str, int]] = {}
        self.references = CliReferences(self)
        self.config = CliConfig(self)
        self.odb = CliOdb(self)
        self._empty_tree: str | None = None

    # -- the git program -------------------------------------------------------------

    def run(
        self, args: list[str], input: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        cwd = ["-C", self.workdir] if self.workdir else ["--git-dir", self._gitdir]
        try:
            return subprocess.run(
                ["git", *cwd, *args],
                input=input,
                capture_output=True,
                env=no_git_env(),
                timeout=300,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise _stopped(f"git {args[0] if args else ''}", exc) from exc

    def git(self, args: list[str], check: bool = True, input: bytes | None = None) -> bytes:
        proc = self.run(args, input)
        if check and proc.returncode != 0:
            raise KeyError(proc.stderr.decode("utf-8", "replace").strip() or " ".join(args))
        return proc.stdout

    @property
    def empty_tree(self) -> str:
        if self._empty_tree is None:
            out = self.git(["hash-object", "-t", "tree", "--stdin"], input=b"")
            self._empty_tree = out.decode("ascii").strip()
        return self._empty_tree

    def _ask(self, mode: str, name: str) -> tuple[str, str, int, bytes | None] | None:
        """(id, kind, size, data or None) of the object ``name`` names, from one
        ``git cat-file --batch`` (``mode`` "--batch") or ``--batch-check`` (no data:
        a note's size is read before its bytes) per repository, kept running."""
        if "\n" in name or not name:
            return None
        with self._lock:
            proc = self._procs.get(mode)
            if proc is None or proc.poll() is not None:
                cwd = ["-C", self.workdir] if self.workdir else ["--git-dir", self._gitdir]
                proc = self._procs[mode] = subprocess.Popen(
                    ["git", *cwd, "cat-file", mode],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env=no_git_env(),
                )
            assert proc.stdin is not None and proc.stdout is not None
            try:
                proc.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
                proc.stdin.flush()
            except OSError as exc:  # git ended (killed, out of memory): say so
                raise _stopped("git cat-file", exc) from exc
            head = proc.stdout.readline().rstrip(b"\n")
            fields = head.split(b" ")
            if len(fields) != 3 or not fields[2].isdigit():
                return None  # "<name> missing", "<name> ambiguous"
            size = int(fields[2])
            data = proc.stdout.read(size + 1)[:-1] if mode == "--batch" else None
            return fields[0].decode("ascii"), fields[1].decode("ascii"), size, data

    def _read(self, oid: str, kind: str | None = None) -> bytes:
        data = self._data.get(oid)
        if data is None:
            got = self._ask("--batch", oid)
            if got is None or got[3] is None:
                raise KeyError(oid)
            data = got[3]
            if len(self._data) > 4096:
                self._data.clear()
            self._data[oid] = data
        return data

    def _header(self, name: str) -> tuple[str, str, int]:
        """(id, kind, size) of the object ``name`` names, or KeyError."""
        hit = self._headers.get(name)
        if hit is None:
            got = self._ask("--batch-check", name)
            if got is None:
                raise KeyError(name)
            hit = got[:3]
            if len(self._headers) > 65536:
                self._headers.clear()
            self._headers[hit[0]] = hit  # by id only: a name such as HEAD moves
        return hit

    def close(self) -> None:
        for proc in self._procs.values():
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
                proc.wait(timeout=5)
            except (OSError, subprocess.SubprocessError):
                proc.kill()
        self._procs.clear()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit, anything may be gone
            pass

    # -- pygit2's Repository, the part deja uses ----------------------------------------

    def _object(self, oid: str, kind: str) -> CliObject:
        cls = {"commit": CliCommit, "tree": CliTree, "blob": CliBlob, "tag": CliTag}.get(kind)
        if cls is None:
            raise KeyError(oid)
        return cls(self, oid, None, 0o040000 if kind == "tree" else 0o100644)

    def __getitem__(self, key: Any) -> CliObject:
        oid, kind, _ = self._header(str(key))
        return self._object(oid, kind)

    def get(self, key: Any, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: Any) -> bool:
        return self.get(key) is not None

    def revparse_single(self, rev: str) -> CliObject:
        got = self._ask("--batch-check", rev)  # git's revision syntax, as rev-parse reads it
        if got is None:
            raise KeyError(rev)
        return self._object(got[0], got[1])

    @property
    def head_is_unborn(self) -> bool:
        return "HEAD" not in self.references

    @property
    def head(self) -> CliReference:
        return self.references["HEAD"]

    def lookup_reference(self, name: str) -> CliReference:
        return self.references[name]

    @property
    def is_shallow(self) -> bool:
        return self.git(["rev-parse", "--is-shallow-repository"]).strip() == b"true"

    def descendant_of(self, a: Any, b: Any) -> bool:
        """``a`` descends from ``b`` (and is not ``b``)."""
        if str(a) == str(b):
            return False
        proc = self.run(["merge-base", "--is-ancestor", str(b), str(a)])
        if proc.returncode > 1:
            raise KeyError(f"{a} {b}")
        return proc.returncode == 0

    def merge_base(self, a: Any, b: Any) -> str | None:
        out = self.git(["merge-base", str(a), str(b)], check=False).decode("ascii").strip()
        return out or None

    def walk(self, oid: Any, sort: Any = None) -> CliWalker:
        return CliWalker(self, oid)

    def diff(self, a: Any, b: Any, context_lines: int = 3, **_: Any) -> CliDiff:
        def tree_of(x: Any) -> str:
            obj = x if isinstance(x, CliObject) else self[x]
            return str(obj.peel(type("Tree", (), {})).id)

        return CliDiff(self, tree_of(a), tree_of(b), context_lines)
