"""A branch's history as one ``git log`` reads it: each commit, its time and the paths
its diff names. What ``deja annotate --all`` walks, read in one pass (one process,
however many commits and files), not a diff per commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from deja_blame.errors import DejaError
from deja_blame.gitutil import run_git

# %x01 starts a commit's record: NUL (-z) ends every field after it
_FORMAT = "%x01%H %ct %P"


@dataclass(frozen=True)
class HistoryCommit:
    sha: str
    time: int  # committer time, epoch seconds
    parents: tuple[str, ...]
    # every path the commit's diff names: added, modified, deleted, both sides of a
    # rename (a session's lines may come from the old name or a deleted file's text)
    paths: tuple[str, ...]

    @property
    def is_root(self) -> bool:
        return not self.parents


def read_history(
    root: str | Path, revs: list[str], since: float | None = None
) -> list[HistoryCommit]:
    """The commits of ``revs`` (``git log`` arguments: ``HEAD``, ``A..B``, a sha with
    ``-1``), oldest first, root commits included; ``since`` (epoch seconds) leaves out
    commits older than that (by committer time)."""
    args = ["log", "--raw", "-M", "-c", "--root", "--no-abbrev", "-z", f"--format={_FORMAT}"]
    if since is not None:
        args.append(f"--since=@{int(since)}")
    proc = run_git(Path(root), [*args, *revs, "--"], check=False)
    if proc.returncode != 0:
        text = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DejaError(f"git log {' '.join(revs)} failed: {text[-1] if text else '?'}")
    return parse_log(proc.stdout)[::-1]


def parse_log(raw: bytes) -> list[HistoryCommit]:
    """``git log --raw -z --format=%x01%H %ct %P`` output -> commits, newest first."""
    out: list[HistoryCommit] = []
    for record in raw.split(b"\x01")[1:]:
        fields = record.split(b"\0")
        head = fields[0].decode("ascii", "replace").split()
        if len(head) < 2:
            continue
        paths: list[str] = []
        k = 1
        while k < len(fields):
            meta = fields[k].lstrip(b"\n")
            k += 1
            if not meta.startswith(b":"):
                continue
            status = meta.rsplit(b" ", 1)[-1]
            # a rename or copy names two paths (not in a merge's combined form)
            count = 2 if status[:1] in (b"R", b"C") and not meta.startswith(b"::") else 1
            for name in fields[k : k + count]:
                paths.append(name.decode("utf-8", "surrogateescape"))
            k += count
        out.append(
            HistoryCommit(
                sha=head[0], time=int(head[1]), parents=tuple(head[2:]), paths=tuple(paths)
            )
        )
    return out
