"""git blame's own options that change which commit a line is blamed to.

``deja blame -w -M -C --since --ignore-rev --ignore-revs-file`` pass them to
``git blame``; attribution then follows what git reports (a line git follows
to another file or an older commit is matched against the writes there).

They are set for one command (``using``) rather than passed down every call:
blame's engine and the attribution cache read ``current()``. The cache keys
carry ``signature()``, so an answer under other options is never read back.
Without options deja's blames clear ``blame.ignoreRevsFile`` (the notes a hook
writes must not depend on a local setting); ``deja blame`` applies that setting
itself, as git blame does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from deja_blame.blake2 import blake2b


@dataclass(frozen=True)
class GitBlameOptions:
    ignore_whitespace: bool = False  # -w
    moves: tuple[str, ...] = ()  # each -M[<num>]: its number, or ""
    copies: tuple[str, ...] = ()  # each -C[<num>] (twice or thrice: more files searched)
    since: str | None = None  # --since=<date>: older commits are the boundary
    ignore_revs: tuple[str, ...] = ()  # --ignore-rev
    ignore_revs_files: tuple[str, ...] = ()  # --ignore-revs-file (and blame.ignoreRevsFile)

    @property
    def default(self) -> bool:
        return self == GitBlameOptions()

    def args(self) -> list[str]:
        out: list[str] = []
        if self.ignore_whitespace:
            out.append("-w")
        out += [f"-M{n}" for n in self.moves]
        out += [f"-C{n}" for n in self.copies]
        if self.since:
            out.append(f"--since={self.since}")
        # "" first: the configured blame.ignoreRevsFile goes, only these apply
        out.append("--ignore-revs-file=")
        out += [f"--ignore-revs-file={f}" for f in self.ignore_revs_files]
        out += [f"--ignore-rev={r}" for r in self.ignore_revs]
        return out

    def signature(self) -> str:
        """For cache keys: empty for the defaults. An ignore-revs file counts by its
        content too: a revision added to it is another answer."""
        if self.default:
            return ""
        return "\0" + "\0".join([*self.args(), *map(_content_of, self.ignore_revs_files)])


def _content_of(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return blake2b(f.read(1 << 22), digest_size=12).hexdigest()
    except OSError:
        return "unreadable"


_DEFAULT = GitBlameOptions()  # frozen: safe to share
_CURRENT: ContextVar[GitBlameOptions | None] = ContextVar("git_blame_options", default=None)


def current() -> GitBlameOptions:
    return _CURRENT.get() or _DEFAULT


@contextlib.contextmanager
def using(options: GitBlameOptions) -> Iterator[None]:
    token = _CURRENT.set(options)
    try:
        yield
    finally:
        _CURRENT.reset(token)
