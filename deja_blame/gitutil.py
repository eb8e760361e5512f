"""Git access shared by attribution, notes and hooks: the repository, revisions, files.

pygit2 for reading objects; the ``git`` program where it is much faster (blame)
or where git's own behaviour is the point (notes merge, push). Every ``git`` run
gets an environment without the inherited ``GIT_*`` variables that would point
it at another worktree or index (pre-commit's ``no_git_env``): a hook runs
with GIT_DIR/GIT_INDEX_FILE set for the commit in progress.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.errors import (
    BinaryFileError,
    DejaError,
    NotARepositoryError,
    RevisionError,
    UnsupportedRepositoryError,
)
from deja_blame.gitenv import no_git_env

if TYPE_CHECKING:
    import pygit2

# The options of every porcelain diff (git diff, git log -p) whose hunks deja reads,
# against the person's configuration: diff.interHunkContext merges hunks with the
# unchanged lines between them in (a -U0 reader counted them as changed), a textconv
# driver or an external diff shows other text than the file's, color.ui=always
# writes escapes into the rows, diff.noprefix or diff.mnemonicPrefix change the
# ``+++ b/PATH`` header a reader takes the file's path from.
PLAIN_DIFF = (
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--inter-hunk-context=0",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)


def git_available() -> bool:
    return shutil.which("git") is not None


def run_git(
    root: Path,
    args: Sequence[str],
    input: bytes | None = None,
    check: bool = True,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git -C root ARGS`` (an argument vector, never a shell string)."""
    proc = subprocess.run(
        ["git", "-C", str(root), *args],
        input=input,
        capture_output=True,
        env=no_git_env(),
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DejaError(
            f"git {args[0]} failed: {msg[-1] if msg else 'exit ' + str(proc.returncode)}"
        )
    return proc


def try_git(
    root: str | Path, args: Sequence[str], input: bytes | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[bytes] | None:
    """``run_git`` for optional answers: never raises, None when git cannot run at all
    (not on PATH, timed out); the caller reads the exit status."""
    try:
        return run_git(Path(root), args, input=input, check=False, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None


class CatFile:
    """One ``git cat-file --batch`` for many reads of blobs (``sha:path`` specs)."""

    def __init__(self, root: str | Path) -> None:
        self.root = str(root)
        self._proc: subprocess.Popen[bytes] | None = None
        self._broken = False

    def read(self, spec: str) -> bytes | None:
        """The object's bytes, or None: no such object, not a blob, or git failed."""
        return self.read_many([spec])[0]

    def read_many(self, specs: list[str]) -> list[bytes | None]:
        """``read`` of each spec, asked of git at once and answered in order (one
        round trip to git for the file's several names at one commit)."""
        out: list[bytes | None] = [None] * len(specs)
        asked: list[int] = []
        lines: list[bytes] = []
        for k, spec in enumerate(specs):
            try:  # a name that is not UTF-8 comes as surrogate escapes (pathtext)
                line = spec.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:
                continue  # not a name git can have: absent, and the batch goes on
            if b"\n" not in line:
                asked.append(k)
                lines.append(line + b"\n")
        if not asked or self._broken:
            return out
        if self._proc is None:
            try:
                self._proc = subprocess.Popen(
                    ["git", "-C", self.root, "cat-file", "--batch"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env=no_git_env(),
                )
            except OSError:
                self._broken = True
                return out
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            # a few short lines: they fit in the pipe before git answers the first
            proc.stdin.write(b"".join(lines))
            proc.stdin.flush()
            for k in asked:
                head = proc.stdout.readline().rstrip(b"\n")
                if head.endswith((b" missing", b" ambiguous")):
                    continue  # the spec itself may hold spaces: judged by its end
                fields = head.split()
                if len(fields) != 3:
                    raise ValueError(head)
                data = proc.stdout.read(int(fields[2]) + 1)[:-1]
                if fields[1] == b"blob":
                    out[k] = data
        except (OSError, ValueError):
            self._broken = True
            return [None] * len(specs)
        return out

    def close(self) -> None:
        if self._proc is not None:
            try:
                if self._proc.stdin is not None:
                    self._proc.stdin.close()
                self._proc.wait(timeout=5)
            except (OSError, subprocess.SubprocessError):
                self._proc.kill()
            self._proc = None


def open_repository(path: Path, through_git: bool = False) -> pygit2.Repository:
    """The repository containing ``path`` (a file or directory), or NotARepositoryError.
    ``through_git``: read through the ``git`` program (``gitcli``) where it is on PATH,
    never loading pygit2: a one-file question (``deja blame FILE``) asks git a few
    things, and loading libgit2 costs half of git's whole blame of a long file."""
    start = path if path.is_dir() else path.parent
    if start is path and path.is_symlink() and _link_on_the_way(path / "x") is not None:
        start = path.parent  # a link in a work tree is a file of it (git's blob), not a folder
    if through_git and git_available():
        return _through_git(path, start)
    import pygit2

    try:
        found = pygit2.discover_repository(str(start))
    except pygit2.GitError:
        found = None
    if not found:
        link = _link_on_the_way(path)
        if link is not None:
            raise NotARepositoryError(
                f"{path} is beyond a symbolic link ({link}): git tracks the link,"
                " not the files it points at, and deja does not follow it"
            )
        # absolute: "." or a bare file name does not say where deja looked
        raise NotARepositoryError(f"{path.absolute()} is not inside a git repository")
    try:
        repo = pygit2.Repository(found)
    except pygit2.GitError as exc:
        if "object format" in str(exc):
            return _cli_repository(path, found)
        if "not owned by current user" in str(exc):
            # git's own words and remedy (CVE-2022-24765): someone else's repository
            top = Path(found).parent if Path(found).name == ".git" else Path(found)
            raise NotARepositoryError(
                f"detected dubious ownership in repository at '{top}'",
                hint=f"if it is yours: git config --global --add safe.directory {top}",
            ) from exc
        raise NotARepositoryError(f"{path}: cannot open its repository: {exc}") from exc
    if repo.is_bare:
        raise NotARepositoryError(f"{path} is in a bare repository (no working tree)")
    return repo


def _link_on_the_way(path: Path) -> str | None:
    """The symbolic link among ``path``'s folders (its text, not resolved) whose own
    folder is in a git repository: the path leaves the work tree through it."""
    import pygit2

    here = Path(os.path.abspath(path))
    for folder in here.parents:
        if folder.is_symlink():
            try:
                if pygit2.discover_repository(str(folder.parent)):
                    return str(folder)
            except pygit2.GitError:
                pass
            return None
    return None


def _through_git(path: Path, start: Path) -> pygit2.Repository:
    """``open_repository`` through git: the same answers and errors."""
    from typing import cast

    from deja_blame.gitcli import CliRepository

    try:
        repo = CliRepository(start)
    except KeyError:
        return open_repository(path)  # pygit2 says why (not a repository, dubious owner)
    if repo.is_bare:
        raise NotARepositoryError(f"{path} is in a bare repository (no working tree)")
    return cast("pygit2.Repository", repo)


def _cli_repository(path: Path, found: str) -> pygit2.Repository:
    """A repository libgit2 cannot read (SHA-256 object names), read through git."""
    from typing import cast

    from deja_blame.gitcli import CliRepository, object_format

    fmt = object_format(found)
    if fmt != "sha256" or not git_available():
        raise UnsupportedRepositoryError(
            f"{path} is in a repository of {fmt.upper()} object names, which deja cannot read"
            + ("" if git_available() else " without the git program"),
            hint="deja reads SHA-1 and SHA-256 repositories (the latter through git)",
        )
    try:
        repo = CliRepository(path if path.is_dir() else path.parent)
    except KeyError as exc:
        raise NotARepositoryError(f"{path}: cannot open its repository: {exc}") from exc
    if repo.is_bare:
        raise NotARepositoryError(f"{path} is in a bare repository (no working tree)")
    # the same interface as pygit2's Repository, for the part deja uses (gitcli.py)
    return cast("pygit2.Repository", repo)


def workdir(repo: pygit2.Repository) -> Path:
    return Path(repo.workdir).resolve()


def resolve_commit(repo: pygit2.Repository, rev: str) -> pygit2.Commit:
    from deja_blame.gitcli import git_errors, peel

    try:
        obj = repo.revparse_single(rev)
        commit = peel(obj, "commit")
    except git_errors() as exc:
        raise RevisionError(f"unknown revision {rev!r}") from exc
    return commit  # type: ignore[no-any-return]


def head_commit(repo: pygit2.Repository) -> pygit2.Commit | None:
    from deja_blame.gitcli import git_errors, peel

    try:
        return peel(repo.head, "commit")  # type: ignore[no-any-return]
    except git_errors():
        return None  # unborn branch: no commits yet


def relative_path(repo: pygit2.Repository, path: Path) -> str:
    """``path`` (absolute or relative to the cwd) as a repository-relative POSIX path."""
    return relative_to_root(workdir(repo), path)


def relative_to_root(root: Path, path: Path) -> str:
    """``path`` relative to the work tree at ``root`` (resolved), or NotARepositoryError."""
    absolute = Path(os.path.abspath(path))
    try:
        rel = absolute.relative_to(root)
    except ValueError:
        # symlinked checkouts: compare the resolved parent, keep the file name
        try:
            rel = absolute.parent.resolve().relative_to(root) / absolute.name
        except ValueError as exc:
            raise NotARepositoryError(f"{path} is outside the repository at {root}") from exc
    return rel.as_posix()


@dataclass
class FileVersion:
    """One version of a file: at a commit, or in the working tree (commit None)."""

    relpath: str
    commit: str | None
    data: bytes

    @property
    def is_binary(self) -> bool:
        return b"\0" in self.data[:8000]

    def lines(self) -> list[str]:
        text = self.data.decode("utf-8", "replace")
        if not text:
            return []
        parts = text.split("\n")
        if parts[-1] == "":
            parts.pop()
        return [p[:-1] if p.endswith("\r") else p for p in parts]


# git blame --contents: the working tree's version of one file, given instead of
# read (a process-wide setting, not a ContextVar: blame reads it from worker threads)
_CONTENTS: dict[tuple[str, str], bytes] = {}


@contextlib.contextmanager
def worktree_contents(root: Path, relpath: str, data: bytes) -> Iterator[None]:
    """While inside, ``read_worktree_bytes(root, relpath)`` is ``data`` (``--contents``)."""
    key = (os.path.realpath(root), relpath)
    _CONTENTS[key] = data
    try:
        yield
    finally:
        _CONTENTS.pop(key, None)


def _given_for(file: Path) -> bytes | None:
    """The text ``worktree_contents`` gives for ``file`` (``--contents``), if any."""
    if not _CONTENTS:
        return None
    full = os.path.join(os.path.realpath(file.parent if str(file.parent) else "."), file.name)
    for (root, rel), data in _CONTENTS.items():
        if os.path.join(root, *rel.split("/")) == full:
            return data
    return None


def contents_given() -> bool:
    """True while ``worktree_contents`` stands in for a file (``--contents``)."""
    return bool(_CONTENTS)


def read_worktree_bytes(root: Path, relpath: str) -> bytes:
    """``relpath`` in the working tree at ``root`` as git sees it: never read through a symlink.

    A symlink's content is the name of its target (what git stores), so a link
    in the repository pointing outside it (``leak -> ~/.ssh/id_rsa``) shows as
    that name; a path through a symlinked directory is refused, as git refuses
    it ("beyond a symbolic link").
    """
    given = _CONTENTS.get((os.path.realpath(root), relpath)) if _CONTENTS else None
    if given is not None:
        return given
    parts = [p for p in relpath.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise DejaError(f"{relpath} is not a path inside the repository")
    for i in range(1, len(parts)):
        if (root.joinpath(*parts[:i])).is_symlink():
            raise DejaError(f"{relpath} is beyond a symbolic link ({'/'.join(parts[:i])})")
    full = root.joinpath(*parts)
    try:
        if full.is_symlink():
            return os.fsencode(os.readlink(full))
        if full.is_dir():
            raise DejaError(f"{relpath} is a directory, not a file")
        return full.read_bytes()
    except FileNotFoundError as exc:
        raise DejaError(f"no such file: {relpath}") from exc
    except OSError as exc:
        raise DejaError(f"cannot read {relpath}: {exc.strerror}") from exc


def read_file(repo: pygit2.Repository, relpath: str, rev: str | None) -> FileVersion:
    """The file at ``rev``, or in the working tree when ``rev`` is None, with clear errors."""
    from deja_blame.gitcli import is_blob, is_tree

    if rev is None:
        data = read_worktree_bytes(workdir(repo), relpath)
        return FileVersion(relpath=relpath, commit=None, data=data)
    commit = resolve_commit(repo, rev)
    try:
        entry = commit.tree[relpath]
    except KeyError as exc:
        raise DejaError(f"{relpath} is not in revision {rev} ({str(commit.id)[:12]})") from exc
    try:
        obj = repo[entry.id]
    except KeyError:
        if entry.type_str != "blob":
            raise
        # A partial clone (--filter=blob:none) lacks old contents; git fetches them
        # from its remote, libgit2 cannot.
        proc = try_git(repo.path, ["cat-file", "blob", str(entry.id)], timeout=120)
        if proc is None or proc.returncode != 0:
            raise DejaError(
                f"{relpath} at {rev}: its content is not in this clone"
                " (a partial clone whose remote cannot be reached?)"
            ) from None
        return FileVersion(relpath=relpath, commit=str(commit.id), data=proc.stdout)
    if is_tree(obj):
        raise DejaError(f"{relpath} is a directory in revision {rev}, not a file")
    if not is_blob(obj):
        raise DejaError(f"{relpath} is not a regular file in revision {rev}")
    return FileVersion(relpath=relpath, commit=str(commit.id), data=obj.data)


def read_versions(
    repo: pygit2.Repository, relpath: str, rev: str | None
) -> tuple[FileVersion, FileVersion | None]:
    """The versions of ``relpath`` a blame reads before any other work: the file at
    ``rev``, or (None) the working tree's file and HEAD's beside it (None where HEAD
    has none: every line is new). A binary file is refused here, before the index or
    git blame is asked anything."""
    version = read_file(repo, relpath, rev)
    if version.is_binary:
        raise BinaryFileError(f"{version.relpath} is a binary file: nothing to blame")
    if rev is not None:
        return version, None
    try:
        at_head: FileVersion | None = read_file(repo, relpath, "HEAD")
    except DejaError:
        at_head = None  # no commit yet, or not in HEAD
    return version, at_head


def locate(
    file: Path, rev: str | None = None, through_git: bool = False
) -> tuple[pygit2.Repository, str]:
    """The repository of ``file`` and its path there. With ``rev``, a file whose folder
    the working tree no longer has is found as git blame finds it: from the nearest
    folder that exists. ``through_git``: ``open_repository``'s."""
    start = file if file.exists() else file.parent
    if not start.exists():
        if rev is None:
            raise DejaError(f"no such file or directory: {file}")
        start = Path(os.path.abspath(file)).parent
        while not start.is_dir() and start != start.parent:
            start = start.parent
    repo = open_repository(start, through_git)
    return repo, relative_path(repo, file)


def given_contents(file: Path, data: bytes) -> contextlib.AbstractContextManager[None]:
    """``git blame --contents``: while inside, ``data`` is the working tree's ``file``.
    It gives the text of a file git knows: HEAD's (git blame's rule) or the working
    tree's (deja also blames a file not committed yet). Any other path is git's
    error, with git's exit code: the text would otherwise be blamed as lines nobody
    committed, and the typo in the name never said."""
    repo, rel = locate(file)
    root = workdir(repo)
    if not os.path.lexists(root / rel):
        proc = try_git(root, ["cat-file", "-e", f"HEAD:{rel}"])
        if proc is None or proc.returncode != 0:
            raise DejaError(f"no such path '{rel}' in HEAD", exit_code=128)
    return worktree_contents(root, rel, data)


def blame_line_span(file: Path, rev: str | None, spec: str) -> tuple[int, int]:
    """The first and last of the lines git blame's own ``-L spec`` finds in ``file``
    (at ``rev``): its ``:funcname`` and ``/regex/`` forms. The numbers are the final
    line numbers of ``git blame --porcelain``'s group headers (``<id> <orig> <final>``,
    as ``facts.git_blame.parse_porcelain`` reads them)."""
    from deja_blame.objectid import LENGTHS

    where = file.parent if str(file.parent) else Path(".")
    given = _given_for(file)  # --contents: git finds the function in that text
    contents = ["--contents", "-"] if given is not None else []
    args = ["blame", "--porcelain", *contents, "-L", spec, *([rev] if rev else []), "--", file.name]
    proc = run_git(where, args, input=given, check=False, timeout=120)
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        text = msg[-1] if msg else f"git blame -L {spec} failed"
        raise DejaError(text.removeprefix("fatal: "))
    lines: list[int] = []
    final = 0
    for raw in proc.stdout.split(b"\n"):
        if not raw:
            continue
        if raw[:1] == b"\t":
            lines.append(final)  # a line of the file, after its group's header
            continue
        head, _, rest = raw.partition(b" ")
        if len(head) in LENGTHS and rest[:1].isdigit():
            final = int(rest.split(b" ")[1])
    if not lines:
        raise DejaError(f"-L {spec}: no lines")
    return min(lines), max(lines)


_ROOTS: dict[str, frozenset[str] | None] = {}


def root_commits(directory: str) -> frozenset[str] | None:
    """The root commits of the repository at ``directory`` (cached), or None when it is
    not a git repository here (gone, never on this machine, or without a commit)."""
    if directory in _ROOTS:
        return _ROOTS[directory]
    found: frozenset[str] | None = None
    if directory.startswith("/") and Path(directory).is_dir():
        proc = try_git(directory, ["rev-list", "--max-parents=0", "HEAD"], timeout=10)
        if proc is not None and proc.returncode == 0 and proc.stdout.strip():
            found = frozenset(proc.stdout.decode("ascii", "replace").split())
    _ROOTS[directory] = found
    return found


def same_repository(root: str | Path, other: str | None) -> bool | None:
    """Whether directory ``other`` is a clone of the repository at ``root`` (they share a
    root commit); None when that cannot be told (``other`` is no repository here)."""
    if not other:
        return None
    theirs = root_commits(other)
    if theirs is None:
        return None
    ours = root_commits(str(root))
    if ours is None:
        return None
    if ours & theirs:
        return True
    # A shallow clone's root commits are where its history was cut (CI checks out
    # with depth 1): it is the same repository if the other clone has one of them.
    return (is_shallow(str(root)) and _has_commit(other, ours)) or (
        is_shallow(other) and _has_commit(str(root), theirs)
    )


SHALLOW_WARNING = (
    "this clone is shallow: git blames every line older than its history on its oldest"
    " commit, and deja matches those lines to sessions without that history, less surely"
    " (fetch it: git fetch --unshallow)"
)


def is_shallow(directory: str) -> bool:
    """Whether the repository at ``directory`` is a shallow clone (one memo per working
    tree: ``gitcli.SHALLOW``, which a command's own ``rev-parse`` fills already)."""
    from deja_blame.gitcli import SHALLOW

    key = str(Path(directory).resolve())
    if key not in SHALLOW:
        proc = try_git(directory, ["rev-parse", "--is-shallow-repository"], timeout=10)
        SHALLOW[key] = proc is not None and proc.stdout.strip() == b"true"
    return SHALLOW[key]


def _has_commit(directory: str, shas: frozenset[str]) -> bool:
    """Whether the repository at ``directory`` has any of these commits."""
    proc = try_git(
        directory, ["cat-file", "--batch-check"], input="".join(f"{s}\n" for s in shas).encode()
    )
    # each line is "<sha> <type> <size>", or "<sha> missing"
    return proc is not None and any(
        line.split()[1:2] == [b"commit"] for line in proc.stdout.splitlines()
    )


@dataclass(frozen=True)
class Author:
    name: str
    mail: str
    time: int  # epoch seconds


def commit_authors(root: str | Path, commits: set[str]) -> dict[str, Author]:
    """Each commit's author, from one ``git log --no-walk --stdin`` (what git blame
    shows on a person's line); commits git does not know are left out."""
    wanted = sorted(c for c in commits if c)
    if not wanted:
        return {}
    proc = try_git(
        root,
        ["log", "--no-walk=unsorted", "--stdin", "--format=%H%x00%an%x00%ae%x00%at"],
        input=("\n".join(wanted) + "\n").encode(),
    )
    if proc is None:
        return {}
    out: dict[str, Author] = {}
    for row in proc.stdout.decode("utf-8", "replace").splitlines():
        parts = row.split("\0")
        if len(parts) == 4 and parts[3].isdigit():
            out[parts[0]] = Author(parts[1], parts[2], int(parts[3]))
    return out


def repository_root(path: Path) -> Path | None:
    """The work tree holding ``path`` (the nearest directory with a ``.git``), by stat
    alone: no git process, no pygit2. None outside a repository."""
    here = path.resolve() if path.exists() else path.parent.resolve()
    if not here.is_dir():
        here = here.parent
    for candidate in (here, *here.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def find_repo_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding ``.git`` (a worktree has a file)."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None
