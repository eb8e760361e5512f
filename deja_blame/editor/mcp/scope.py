"""The repository a client names, the files it may ask about, and what may leave.

Which repository: a tool's ``repo`` argument, else ``deja mcp --repo``, else the
first of the client's roots that is in a git repository, else the directory the
agent started ``deja mcp`` in (agents start their servers in the project).
Nothing outside that repository is read: a file is named relative to its top
(or absolutely, inside it), and ``..``, links and git's own directory are refused.

What leaves: every answer goes to an agent, whose model runs elsewhere, so the
rules of the notes apply (``notes/public.py``): the person's requests only where
they opted in (``git config deja.notes.prompts true``, or ``deja mcp
--prompts``), and all text redacted (``redact_for_sharing``: secrets, the
repository's directory, home directories).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from deja_blame.errors import DejaError

MAX_PATH = 4096


@dataclass(frozen=True)
class Repository:
    """A repository a question is about, and what its answers may carry."""

    root: Path  # the work tree's top, links resolved
    prompts: bool  # the person's requests may be shown (redacted)

    def text(self, value: str | None) -> str | None:
        """``value`` as it may leave: redacted, the repository's own path written ``.``."""
        if value is None:
            return None
        from deja_blame.outputs.redact import redact_for_sharing

        return redact_for_sharing(value, str(self.root))

    def request(self, value: str | None) -> str | None:
        """A request of the person's: None unless they opted in, then redacted."""
        return self.text(value) if self.prompts else None

    def project(self, value: str | None) -> str:
        """A session's directory: relative to the repository, or ``-`` (elsewhere)."""
        from deja_blame.notes.public import public_project

        return public_project(value, str(self.root))


def repository_at(where: Path, prompts_flag: bool) -> Repository:
    """The repository holding ``where``, or a DejaError saying why there is none."""
    from deja_blame.gitutil import open_repository, workdir
    from deja_blame.notes.annotate import prompts_opted_in

    if not where.exists():
        raise DejaError(f"{where} does not exist")
    repo = open_repository(where)
    return Repository(root=workdir(repo), prompts=prompts_flag or prompts_opted_in(repo))


def file_in(repository: Repository, name: str) -> Path:
    """The file ``name`` names inside ``repository`` (relative to its top, or absolute
    inside it): a DejaError for anything else, before anything is read."""
    if not name or len(name) > MAX_PATH or "\0" in name:
        raise DejaError("give a file of the repository, relative to its top (src/app.py)")
    rel = inside(repository, name)
    if not rel.parts:
        raise DejaError(f"{name} is the repository itself: give a file in it")
    walked = repository.root
    for part in rel.parts:  # no link anywhere on the way: nothing is followed out
        walked = walked / part
        try:
            mode = walked.lstat().st_mode
        except FileNotFoundError:
            raise DejaError(f"no such file in the repository: {rel.as_posix()}") from None
        except OSError as exc:
            raise DejaError(f"{rel.as_posix()}: {exc.strerror or exc}") from None
        if stat.S_ISLNK(mode):
            raise DejaError(
                f"{rel.as_posix()} goes through a symbolic link: deja does not follow links"
            )
    if stat.S_ISDIR(mode):
        raise DejaError(f"{rel.as_posix()} is a directory: give a file")
    if not stat.S_ISREG(mode):
        raise DejaError(f"{rel.as_posix()} is not a regular file")
    return repository.root / rel


def inside(repository: Repository, name: str) -> Path:
    """``name`` (relative to the repository's top, or absolute) as a path relative to
    it, checked by its words alone (it need not exist: a deleted file's sessions)."""
    if len(name) > MAX_PATH or "\0" in name:
        raise DejaError("a path of the repository, relative to its top (src/app.py)")
    given = Path(name or ".")
    root = repository.root
    absolute = Path(os.path.normpath(given if given.is_absolute() else root / given))
    try:
        rel = absolute.relative_to(root)
    except ValueError:
        raise DejaError(f"{name} is outside the repository at {root}") from None
    if rel.parts and rel.parts[0] == ".git":
        raise DejaError(f"{name} is inside git's own directory: give a file of the work tree")
    return rel
