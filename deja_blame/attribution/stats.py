"""How much of a tree agents wrote: ``deja blame`` of every file, summed.

The numbers are the sum of ``deja blame --json`` over the same files (the same
``blame_file``, the same attribution cache), so a file's share in ``stats``
and its blame never disagree. Binary files are skipped and listed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deja_blame.arenas import TRIM_EVERY, trim
from deja_blame.errors import BinaryFileError, DejaError
from deja_blame.gitutil import commit_authors, try_git
from deja_blame.models import UNKNOWN_AGENT

NOT_COMMITTED = "(not committed yet)"
BINARY_PROBE = 8000  # bytes, as git looks for a NUL to call a file binary


@dataclass
class Stats:
    rev: str | None
    files: int = 0
    lines: int = 0
    attributed: int = 0
    by_agent: Counter[str] = field(default_factory=Counter)
    by_model: Counter[str] = field(default_factory=Counter)
    by_session: Counter[str] = field(default_factory=Counter)
    session_agent: dict[str, str] = field(default_factory=dict)
    session_model: dict[str, str | None] = field(default_factory=dict)
    by_person: Counter[str] = field(default_factory=Counter)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    # new transcripts the refresh before the answer left for deja index (None: no refresh)
    unread_transcripts: int | None = None
    # each file's people's lines by commit (and its repository), until their authors
    # are asked once for every file (``_name_people``)
    people: list[tuple[str, Counter[str | None]]] = field(default_factory=list, repr=False)

    @property
    def share(self) -> float:
        return round(self.attributed / self.lines, 4) if self.lines else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "rev": self.rev,
            "files": self.files,
            "lines": self.lines,
            "attributed_lines": self.attributed,
            "share": self.share,
            "by_agent": [{"agent": a, "lines": n} for a, n in self.by_agent.most_common()],
            "by_model": [{"model": m, "lines": n} for m, n in self.by_model.most_common()],
            "by_session": [
                {
                    "session": s,
                    "agent": self.session_agent.get(s),
                    "model": self.session_model.get(s),
                    "lines": n,
                }
                for s, n in self.by_session.most_common()
            ],
            "by_person": [{"author": p, "lines": n} for p, n in self.by_person.most_common()],
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "unread_transcripts": self.unread_transcripts,
        }


def tree_files(root: Path, rev: str | None, pathspecs: list[str]) -> list[str]:
    """The tracked files under ``pathspecs`` (all when none): in the working tree's
    index, or in the tree of ``rev``."""
    args = ["ls-files", "-z"] if rev is None else ["ls-tree", "-r", "-z", "--name-only", rev]
    proc = try_git(root, [*args, "--", *pathspecs])
    if proc is None:
        raise DejaError(f"cannot list the files of {rev or 'the working tree'}")
    return [p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def collect_stats(
    root: Path,
    files: list[str],
    rev: str | None,
    blame: Callable[[Path], Any],
    progress: Callable[[str], None] | None = None,
    jobs: int = 1,
) -> Stats:
    """Sum ``blame(path)`` (a ``FileBlame``) over ``files`` (repository-relative).

    With ``jobs`` > 1 the files are blamed in that many threads (the work is
    mostly waiting on git); ``blame`` must then be safe to call from each.
    """
    stats = Stats(rev=rev)

    def one(rel: str) -> tuple[str, Any, str | None]:
        path = root / rel
        try:
            # a link is a one-line blob (its target's name, as git stores it): blamed
            # as any file, never opened (a link to a folder is no directory to read)
            if rev is None and not path.is_symlink() and _looks_binary(path):
                return rel, None, "binary"
            return rel, blame(path), None
        except BinaryFileError:
            return rel, None, "binary"  # at a revision: found by the blame
        except DejaError as exc:
            return rel, None, str(exc)
        except OSError as exc:
            return rel, None, exc.strerror or str(exc)

    if jobs > 1 and len(files) > 1:
        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="deja-stats") as pool:
            results = pool.map(one, files)
            for n, (rel, result, problem) in enumerate(results, 1):
                _add(stats, rel, result, problem)
                if progress is not None:
                    progress(rel)
                if n % TRIM_EVERY == 0:
                    trim()  # what the files done freed, given back before the peak
    else:
        for rel in files:
            _add(stats, *one(rel))
            if progress is not None:
                progress(rel)
    _name_people(stats)
    return stats


def _add(stats: Stats, rel: str, result: Any, problem: str | None) -> None:
    if result is None:
        stats.skipped.append((rel, problem or "not blamed"))
        return
    stats.files += 1
    people: Counter[str | None] = Counter()
    for ln in result.lines:
        stats.lines += 1
        if ln.session:
            stats.attributed += 1
            stats.by_session[ln.session] += 1
            info = result.sessions.get(ln.session)
            agent = ln.source or (info.source if info else None) or UNKNOWN_AGENT
            model = info.model if info else None
            stats.by_agent[agent] += 1
            stats.by_model[model or "(unknown)"] += 1
            stats.session_agent[ln.session] = agent
            stats.session_model[ln.session] = model
        else:
            people[ln.commit] += 1
    stats.people.append((str(result.root), people))


def _name_people(stats: Stats) -> None:
    """``by_person`` from the people's lines of every file: one ``git log`` for all
    their commits (one a file was 253 processes and 2.7 s of CPU for werkzeug's 291
    files), the names added file by file as before (``most_common`` keeps that order
    among equal counts). Where git refuses the whole list (a commit it does not know),
    each file's commits are asked on their own, as they were."""
    wanted: dict[str, set[str]] = {}
    for root, people in stats.people:
        wanted.setdefault(root, set()).update(c for c in people if c)
    known = {root: commit_authors(root, commits) for root, commits in wanted.items()}
    for root, people in stats.people:
        authors = known[root]
        if wanted[root] and not authors:
            authors = commit_authors(root, {c for c in people if c})
        for commit, n in people.items():
            author = authors.get(commit or "")
            name = author.name if author else NOT_COMMITTED if commit is None else "-"
            stats.by_person[name] += n
    stats.people.clear()


def _looks_binary(path: Path) -> bool:
    with open(path, "rb") as fh:
        return b"\0" in fh.read(BINARY_PROBE)
