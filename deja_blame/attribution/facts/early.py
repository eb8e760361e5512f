"""``git blame`` started by the console script, before deja's own modules load.

A cold ``deja blame FILE`` waits on git's blame of the file (most of its time)
and, before it, on Python importing click, the index and pygit2 (a third of it
again). The blame does not depend on anything deja reads: so ``entry.py`` starts
it first, for the common form of the command (a file, flags that do not change
git's blame), and the blame path takes the process when it asks git for exactly
the same command (``git_blame._start_git``); a command that did not ask (the
answer was cached, another option changed git's arguments) kills it at exit.

A file whose answer at HEAD was cached lately (``.git/deja/answered``, written by
``note_answered``) is not blamed ahead: a warm blame would pay for a git blame
nobody reads. That list is a hint: a wrong one costs a blame started later, never
an answer.

This module imports nothing of deja's but ``gitenv``, ``gitfiles``, ``statefile``
and ``blake2``: its point is to run first.
"""

from __future__ import annotations

import atexit
import os
import subprocess
from pathlib import Path

from deja_blame import statefile
from deja_blame.blake2 import blake2b
from deja_blame.gitenv import no_git_env
from deja_blame.gitfiles import rev_parse

# Flags of ``deja blame`` that change neither the file blamed nor git's arguments.
SAFE_FLAGS = frozenset(
    {
        "--json", "--porcelain", "--line-porcelain", "--no-refresh", "-n", "--show-number",
        "-f", "--show-name", "-l", "-t", "-b", "--root", "-c", "-s", "-e", "--show-email",
        "--",
    }
)  # fmt: skip
# What ``blame_options.GitBlameOptions().args()`` gives (the defaults: no ignore file)
DEFAULT_ARGS = ("--ignore-revs-file=",)

# The repository's top, whether it is shallow, and HEAD: one process for what a
# one-file question needs to know first (``cache.repo_state`` reads the same)
REV_PARSE = ("rev-parse", "--show-toplevel", "--is-shallow-repository", "--verify", "-q", "HEAD")

_STARTED: dict[tuple[str, ...], subprocess.Popen[bytes]] = {}
_REV_PARSE: dict[str, bytes] = {}


def speculate(argv: list[str]) -> None:
    """Start git's blame for ``deja blame [SAFE FLAGS] FILE`` (anything else: nothing).
    It runs before the command's own error handling: whatever goes wrong here (a path
    on another drive, an odd file name) only means no head start."""
    try:
        _speculate(argv)
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except Exception:  # noqa: BLE001 - see above
        return


def _speculate(argv: list[str]) -> None:
    if argv[:1] != ["blame"]:
        return
    files = [a for a in argv[1:] if not a.startswith("-")]
    if len(files) != 1 or not {a for a in argv[1:] if a.startswith("-")} <= SAFE_FLAGS:
        return  # a REV, an option with a value or one that changes git's blame
    file = files[0]
    if not os.path.isfile(file):
        return
    path = os.path.realpath(file)
    where = os.path.dirname(os.path.abspath(file))
    env = no_git_env()
    out = rev_parse(where)  # from the repository's files, where they say it all
    if out is None:
        try:
            out = subprocess.run(
                ["git", *REV_PARSE],
                cwd=where, capture_output=True, env=env, timeout=10,
            ).stdout  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            return
    _REV_PARSE[where] = out
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    if len(lines) != 3:
        return  # not in a repository, or no commit yet
    root, head = os.path.realpath(lines[0]), lines[2].strip()
    rel = os.path.relpath(path, root).replace(os.sep, "/")  # git's spelling, on Windows too
    if rel == ".." or rel.startswith("../"):
        return  # outside the repository: deja says so, git need not blame
    if _token(head, rel) in _answered(root):
        return  # cached lately: the answer needs no blame
    args = ("git", "-C", root, "blame", "--incremental", *DEFAULT_ARGS, head, "--", rel)
    if args in _STARTED:
        return  # asked twice in one process: the first one is running
    try:
        _STARTED[args] = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
    except OSError:
        return


ANSWERED = "answered"
ANSWERED_KEPT = 256  # files at a commit the hint remembers (17 bytes each)


def _token(commit: str, relpath: str) -> bytes:
    key = f"{commit}\0{relpath}".encode("utf-8", "surrogateescape")
    return blake2b(key, digest_size=8).hexdigest().encode() + b"\n"


def _answered_path(root: str) -> Path:
    return Path(root) / ".git" / "deja" / ANSWERED  # a worktree's .git is a file: no hint


def _answered(root: str) -> bytes:
    return statefile.read_bytes(_answered_path(root), 17 * ANSWERED_KEPT) or b""


def note_answered(root: str, commit: str, relpath: str) -> None:
    """Remember that ``relpath``'s answer at ``commit`` is cached (the hint above)."""
    token = _token(commit, relpath)
    known = _answered(root)
    if token in known:
        return
    path = _answered_path(root)
    if not path.parent.parent.is_dir() or not statefile.ensure_dir(path.parent):
        return
    kept = known.splitlines(keepends=True)[-(ANSWERED_KEPT - 1) :]
    try:
        statefile.write_bytes(path, b"".join(kept) + token, mode=0o600)
    except OSError:
        pass  # costs a blame started ahead, nothing else


def take(args: list[str]) -> subprocess.Popen[bytes] | None:
    """The git process started for exactly ``args``, once."""
    return _STARTED.pop(tuple(args), None) if _STARTED else None


def rev_parse_output(where: str) -> bytes | None:
    """What ``git REV_PARSE`` said in ``where``."""
    return _REV_PARSE.pop(where, None) if _REV_PARSE else None


@atexit.register
def _end() -> None:
    """Blames nobody took (a cached answer, other options): end them."""
    while _STARTED:
        proc = _STARTED.popitem()[1]
        try:
            proc.kill()
            proc.communicate(timeout=5)
        except (OSError, subprocess.SubprocessError):
            pass
