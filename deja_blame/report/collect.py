"""Build a ``Report`` for a range of commits: attribution per commit, then per file,
per session and at the tip.

For each commit of the range (oldest first):

- the lines it *introduced*: ``+`` lines of its diff against its parent, or for
  a merge the lines that are new against every parent (what git blame gives to
  the merge itself); lines a merge brings in from its other side belong to the
  commits that wrote them, which are in the range too, so nothing is counted
  twice;
- which session wrote each of them: the commit's note (``refs/notes/deja``)
  when it has one, else the index (``attribute_commit``), else nobody.

Which commits have notes comes from one walk of the notes tree, not one lookup
(let alone one process) per commit. Survival is one ``git blame`` at the tip per file a session
touched (run in parallel): a line survives when its blame commit is in the
range and that commit gave it to the session.

Every prompt, command and project passes through ``redact_for_sharing`` here (a
report is made to be shared: secrets, home folders, the repository's folder), before any
renderer sees it.
"""

from __future__ import annotations

import bisect
import os
import re
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pygit2
from pygit2.enums import SortMode

from deja_blame import __version__
from deja_blame.arenas import few_arenas, trim
from deja_blame.attribution.commit import (
    BLOB_MODES,
    files_worth_blaming,
    introduced_lines,
    written_paths,
)
from deja_blame.attribution.facts import derived_blame
from deja_blame.attribution.facts.git_blame import blame
from deja_blame.attribution.facts.model import BlameLine
from deja_blame.errors import DejaError, RevisionError
from deja_blame.gitcli import is_cli, is_commit
from deja_blame.gitutil import git_available, head_commit, read_file, run_git, workdir
from deja_blame.index import queries as Q
from deja_blame.models import UNKNOWN_AGENT
from deja_blame.notes.public import NOTED_TESTS, public_project
from deja_blame.notes.schema import Note
from deja_blame.output import shorten
from deja_blame.outputs.redact import redact_for_sharing
from deja_blame.report.model import (
    CommandRun,
    CommitReport,
    Counts,
    FileLines,
    FileReport,
    Report,
    SessionFile,
    SessionReport,
    ShownLine,
)
from deja_blame.suites import is_test_command
from deja_blame.transcripts.text import format_time

FIRST_PROMPT_CHARS = 1000
REQUEST_CHARS = 300
COMMAND_CHARS = 300
HTML_MAX_LINES = 4000  # changed lines drawn in the HTML view; the rest is counted

_HEX = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")

# -- the range ------------------------------------------------------------------------


@dataclass
class Range:
    spec: str
    tip: str | None
    include: list[str]
    exclude: list[str]


def _commit_sha(repo: pygit2.Repository, sha: str, spec: str) -> str:
    try:
        return str(repo[sha].peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
        raise RevisionError(f"{spec!r} does not name commits") from exc


def default_range(repo: pygit2.Repository, root: Path) -> Range:
    """upstream..HEAD for a branch with an upstream; otherwise the last commit."""
    head = head_commit(repo)
    if head is None:
        raise DejaError("this repository has no commits yet: nothing to report")
    proc = run_git(
        root, ["rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}"], check=False
    )
    upstream = proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else ""
    if upstream:
        up = run_git(root, ["rev-parse", "--verify", "-q", "@{upstream}^{commit}"], check=False)
        if up.returncode == 0:
            base = up.stdout.decode().strip()
            return Range(f"{upstream}..HEAD", str(head.id), [str(head.id)], [base])
    parents = [str(p) for p in head.parent_ids]
    return Range("HEAD^!", str(head.id), [str(head.id)], parents)


def export_range(repo: pygit2.Repository, root: Path, spec: str | None) -> Range:
    """The commits an export covers: ``spec`` (``resolve_range``), or by default all of
    HEAD's history; a repository with no commit yet has nothing to export."""
    if spec is not None:
        return resolve_range(repo, root, spec)
    head = repo.head.peel(pygit2.Commit) if not repo.head_is_unborn else None
    if head is None:
        raise DejaError("this repository has no commits yet: nothing to export")
    return Range("HEAD", str(head.id), [str(head.id)], [])


def resolve_range(repo: pygit2.Repository, root: Path, spec: str | None) -> Range:
    """A git revision range -> the commits to include and exclude, and the tip.

    ``A..B``, ``A...B``, ``^A B``, ``X^!`` as in git; a single revision ``X`` is
    that one commit (as ``X^!``), not all of its history.
    """
    if spec is None:
        return default_range(repo, root)
    words = spec.split()
    if not words:
        raise RevisionError("the range is empty; give one like origin/main..HEAD")
    for w in words:
        if w.startswith("-"):
            raise RevisionError(f"{w!r} is not a revision (a range looks like origin/main..HEAD)")
    proc = run_git(root, ["rev-parse", *words, "--"], check=False)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        why = err[0].removeprefix("fatal: ") if err else f"git exit {proc.returncode}"
        raise RevisionError(
            f"unknown revision or range {spec!r} ({why})",
            hint="a range looks like origin/main..HEAD; fetch the branch first if it is remote",
        )
    include: list[str] = []
    exclude: list[str] = []
    for line in proc.stdout.decode().split():
        if line.startswith("^") and _HEX.match(line[1:]):
            exclude.append(_commit_sha(repo, line[1:], spec))
        elif _HEX.match(line):
            include.append(_commit_sha(repo, line, spec))
    if not include:
        raise RevisionError(f"{spec!r} names no commit to report on")
    if not exclude and len(include) == 1 and ".." not in spec:
        commit = repo[include[0]]
        exclude = [str(p) for p in commit.parent_ids]  # type: ignore[attr-defined]
    return Range(spec, include[0], include, exclude)


def range_commits(repo: pygit2.Repository, rng: Range) -> list[pygit2.Commit]:
    """The range's commits, oldest first (parents before children)."""
    if not rng.include:
        return []
    walker = repo.walk(rng.include[0], SortMode.TOPOLOGICAL | SortMode.REVERSE)
    for sha in rng.include[1:]:
        walker.push(sha)
    for sha in rng.exclude:
        walker.hide(sha)
    return list(walker)


# -- notes ----------------------------------------------------------------------------


class NoteStore:
    """The repository's deja notes: which commits have one from a single walk of the
    notes tree (no process per commit), each read on demand through ``read_note``
    (which carries notes git copied on a rewrite over to the commit they now sit on)."""

    def __init__(self, repo: pygit2.Repository) -> None:
        from deja_blame.notes.gitai import gitai_lookup_for
        from deja_blame.notes.store import note_blob_map, ref_target

        self.repo = repo
        self.cache: dict[str, Note | None] = {}
        self.gitai = gitai_lookup_for(repo)
        try:
            self.present = set(note_blob_map(repo, ref_target(repo)))
        except (KeyError, ValueError, pygit2.GitError):
            self.present = set()

    def get(self, sha: str) -> Note | None:
        if sha not in self.present:
            return None
        if sha not in self.cache:
            from deja_blame.notes.lookup import read_note

            self.cache[sha] = read_note(self.repo, sha)
        return self.cache[sha]

    def lookup(self, commit: str, path: str, line: int) -> tuple[str, float, int | None] | None:
        """The ``NoteLookup`` of ``blame_file``/``attribute_commit`` over these notes."""
        note = self.get(commit)
        return note.session_at(path, line) if note is not None else None


# -- per commit -----------------------------------------------------------------------


@dataclass
class CommitLines:
    """One commit's introduced lines and the session of each (absent: nobody known)."""

    introduced: dict[str, set[int]]
    session_of: dict[str, dict[int, str]] = field(default_factory=dict)
    source: str = "none"
    session_meta: dict[str, dict[str, Any]] = field(default_factory=dict)


def _from_note(note: Note, introduced: dict[str, set[int]]) -> dict[str, dict[int, str]]:
    out: dict[str, dict[int, str]] = {}
    for path, per_session in note.files.items():
        mine = introduced.get(path)
        if not mine:
            continue
        got = out.setdefault(path, {})
        for sid, ranges in per_session.items():
            for r in ranges:
                for line in range(int(r[0]), int(r[1]) + 1):
                    if line in mine:
                        got.setdefault(line, sid)
    return {p: v for p, v in out.items() if v}


def attribute(
    repo: pygit2.Repository,
    commit: pygit2.Commit,
    notes: NoteStore,
    conn: sqlite3.Connection | None,
    use_index: bool,
    written: list[int] | None = None,
) -> CommitLines:
    """A commit's introduced lines and their sessions: its note, else the index, and
    git-ai's note. ``written``: the ids of the paths under the repository that
    sessions wrote (``written_paths``, once per run; None: looked up here)."""
    introduced = introduced_lines(repo, commit)
    result = CommitLines(introduced=introduced)
    sha = str(commit.id)
    note = notes.get(sha)
    if note is None and use_index and conn is not None and introduced:
        from deja_blame.attribution.commit import attribute_commit

        if written is None:
            written = written_paths(repo, conn)
        worth = files_worth_blaming(repo, commit, conn, introduced, written)
        if worth:
            note = attribute_commit(repo, sha, conn, note_lookup=notes.lookup, only=worth).note
        result.source = "index"
    elif note is not None:
        result.source = "note"
    if note is not None:
        result.session_of = _from_note(note, introduced)
        result.session_meta = dict(note.sessions)
    if notes.gitai is not None:
        _from_git_ai(notes.gitai, sha, introduced, result)
    return result


def _from_git_ai(gitai: Any, sha: str, introduced: dict[str, set[int]], cl: CommitLines) -> None:
    """Introduced lines deja's note and index leave unexplained, from git-ai's note."""
    note = gitai.note(sha)
    if note is None:
        return
    added = False
    for path, lines in introduced.items():
        known = cl.session_of.get(path, {})
        for line in sorted(lines - set(known)):
            who = note.author_of(path, line)
            if who is None or who.human:
                continue
            cl.session_of.setdefault(path, {})[line] = who.key
            cl.session_meta.setdefault(who.key, who.info())
            added = True
    if added and cl.source == "none":
        cl.source = "git-ai"


def _counts(cl: CommitLines, path: str) -> Counts:
    c = Counts(added=len(cl.introduced.get(path, ())))
    for sid in cl.session_of.get(path, {}).values():
        c.by_session[sid] = c.by_session.get(sid, 0) + 1
    return c


def _commit_time(commit: pygit2.Commit) -> str:
    return format_time(datetime.fromtimestamp(commit.commit_time, tz=timezone.utc))


# -- the tip --------------------------------------------------------------------------


def blame_at(
    repo: pygit2.Repository, root: Path, tip: str, paths: list[str]
) -> dict[str, list[BlameLine]]:
    """``git blame`` of each path at ``tip``, several at once."""
    if not paths:
        return {}

    def one(path: str) -> list[BlameLine]:
        derived = derived_blame.derive(root, tip, path)
        if derived is not None:
            return derived
        try:
            lines = blame(root, repo, path, tip, engine="git")
        except DejaError:
            return []
        derived_blame.remember(root, tip, path, lines)
        return lines

    if not git_available():
        out: dict[str, list[BlameLine]] = {}
        for p in paths:
            try:
                out[p] = blame(root, repo, p, tip, engine="git" if is_cli(repo) else "pygit2")
            except DejaError:
                out[p] = []
        return out
    workers = max(1, min(8, os.cpu_count() or 2, len(paths)))
    few_arenas()  # the threads' memory in one pool, not one each
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(zip(paths, pool.map(one, paths)))


def _exists_at(tree: pygit2.Tree, path: str) -> bool:
    try:
        entry = tree[path]
    except KeyError:
        return False
    return entry.filemode in BLOB_MODES


# -- sessions -------------------------------------------------------------------------


@dataclass
class _IndexedSession:
    sid: int
    prompt_steps: list[int]


def _fill_session(
    conn: sqlite3.Connection | None,
    s: SessionReport,
    meta: dict[str, Any],
    prompts: tuple[bool, bool],
    root: Path,
) -> _IndexedSession | None:
    """``s`` from the index, else from its note (``meta``). ``prompts``: (the requests
    a transcript here holds, the first request the note carries) may be shown."""
    include_prompts, noted_prompts = prompts

    # a report is made to be shared (a PR comment): every text as it may leave the
    # machine, secrets redacted, home folders ~ and the repository's own folder .
    def shared(text: str) -> str:
        return redact_for_sharing(text, str(root))

    row = Q.session_by_id(conn, s.session_id) if conn is not None else None
    if row is None:
        s.agent = str(meta.get("agent") or UNKNOWN_AGENT)
        s.project = public_project(meta.get("project"), str(root))
        s.started_at = meta.get("started_at") if isinstance(meta.get("started_at"), str) else None
        prompt = meta.get("first_prompt")
        if noted_prompts and isinstance(prompt, str) and prompt.strip():
            s.first_prompt = shorten(shared(prompt), FIRST_PROMPT_CHARS)
        tests = meta.get("tests")
        s.noted_tests = tests if tests in NOTED_TESTS else None
        return None
    assert conn is not None
    sid = row.sid
    s.indexed = True
    s.agent, s.project, s.started_at, s.ended_at = (
        row.source,
        public_project(row.project, str(root)),
        row.started_at,
        row.ended_at,
    )
    if s.project == "-" and row.project:
        s.local_project = row.project
    steps: list[int] = []
    if include_prompts:
        texts: list[str] = []
        for step, text in Q.requests_of(conn, sid):
            if text and text.strip():
                steps.append(int(step))
                texts.append(text)
        if texts:
            s.first_prompt = shorten(shared(texts[0]), FIRST_PROMPT_CHARS)
            s.requests = [shorten(shared(t), REQUEST_CHARS) for t in texts[1:]]
    elif noted_prompts:
        prompt = meta.get("first_prompt")  # published by its author in the note
        if isinstance(prompt, str) and prompt.strip():
            s.first_prompt = shorten(shared(prompt), FIRST_PROMPT_CHARS)
    for command, exit_code, at in Q.commands_of(conn, sid):
        s.commands.append(
            CommandRun(
                command=shorten(shared(command), COMMAND_CHARS),
                exit_code=exit_code,
                at=at,
                is_test=is_test_command(command),
            )
        )
    return _IndexedSession(sid=sid, prompt_steps=steps)


def _request_finder(
    conn: sqlite3.Connection | None, indexed: dict[str, _IndexedSession]
) -> Callable[[str, str, str], int | None]:
    """(session, path, line text) -> which request of the session led to the edit that
    wrote the line (0 = the first prompt), from the index; None when unknown."""
    from deja_blame.index.fingerprint import fingerprint
    from deja_blame.index.store import line_steps_by_name, path_basename

    cache: dict[str, dict[str, dict[int, int]]] = {}

    def find(session: str, path: str, text: str) -> int | None:
        info = indexed.get(session)
        if conn is None or info is None or not info.prompt_steps:
            return None
        if session not in cache:
            cache[session] = line_steps_by_name(conn, info.sid)
        step = cache[session].get(path_basename(path), {}).get(fingerprint(text))
        if step is None:
            return None
        at = bisect.bisect_right(info.prompt_steps, step) - 1
        return at if at >= 0 else None

    return find


# -- the report -----------------------------------------------------------------------


def build_report(
    repo: pygit2.Repository,
    spec: str | None,
    conn: sqlite3.Connection | None,
    *,
    include_prompts: bool = True,
    want_lines: bool = False,
    whole_history: bool = False,
    progress: Callable[[int, int], None] | None = None,
    at_tip: bool = True,
    noted_prompts: bool | None = None,
) -> Report:
    """The report for ``spec`` (a git revision range; None: upstream..HEAD or the last
    commit). ``want_lines`` also collects the changed lines at the tip (the HTML view);
    ``at_tip=False`` leaves out what is still there at the tip (a blame per file:
    ``deja stats --by`` counts only what the commits added). ``include_prompts``: the
    requests the transcripts here hold; ``noted_prompts`` (default: the same): the
    first request a commit's note carries, which its author published."""
    root = workdir(repo)
    noted = include_prompts if noted_prompts is None else noted_prompts
    with derived_blame.share_blames(root):
        report = _build_report(
            repo, root, spec, conn, (include_prompts, noted), want_lines, whole_history,
            progress, at_tip,
        )  # fmt: skip
    report.no_prompts = not include_prompts and not noted
    return report


def _build_report(
    repo: pygit2.Repository,
    root: Path,
    spec: str | None,
    conn: sqlite3.Connection | None,
    prompts: tuple[bool, bool],
    want_lines: bool,
    whole_history: bool,
    progress: Callable[[int, int], None] | None,
    at_tip: bool,
) -> Report:
    if spec is None and whole_history:
        head = head_commit(repo)
        if head is None:
            raise DejaError("this repository has no commits yet: nothing to report")
        rng = Range("HEAD", str(head.id), [str(head.id)], [])  # and all of its history
    else:
        rng = resolve_range(repo, root, spec)
    commits = range_commits(repo, rng)
    notes = NoteStore(repo)
    indexed_sessions = 0
    if conn is not None:
        indexed_sessions = Q.count_sessions(conn)

    per_commit: dict[str, CommitLines] = {}
    commit_reports: list[CommitReport] = []
    totals = Counts()
    files: dict[str, Counts] = {}
    session_files: dict[str, dict[str, SessionFile]] = {}
    meta: dict[str, dict[str, Any]] = {}
    notes_found = 0
    written = written_paths(repo, conn) if indexed_sessions else []
    for done, commit in enumerate(commits):
        if progress is not None:
            progress(done, len(commits))
        sha = str(commit.id)
        cl = attribute(repo, commit, notes, conn, indexed_sessions > 0, written)
        per_commit[sha] = cl
        trim()  # what the commit's files' facts freed, given back (arenas.trim)
        notes_found += cl.source == "note"
        for sid, m in cl.session_meta.items():
            if isinstance(m, dict):
                kept = meta.setdefault(sid, dict(m))
                if m.get("tests") in NOTED_TESTS:
                    # how the tests stood at the session's latest commit (the commits
                    # come oldest first): a session whose tests passed at its first
                    # commit and failed before its second failed
                    kept["tests"] = m["tests"]
        cc = Counts()
        for path in cl.introduced:
            fc = _counts(cl, path)
            cc.add(fc)
            files.setdefault(path, Counts()).add(fc)
            for sid, n in fc.by_session.items():
                sf = session_files.setdefault(sid, {}).setdefault(path, SessionFile(path))
                sf.written += n
        totals.add(cc)
        message = commit.message or ""
        commit_reports.append(
            CommitReport(
                sha=sha,
                parents=[str(p) for p in commit.parent_ids],
                subject=message.strip().splitlines()[0] if message.strip() else "",
                author=commit.author.name,
                time=_commit_time(commit),
                counts=cc,
                source=cl.source,
            )
        )

    # Sessions: by lines written in the range, then by start.
    sessions: list[SessionReport] = []
    indexed: dict[str, _IndexedSession] = {}
    for sid, sfiles in session_files.items():
        s = SessionReport(session_id=sid, files=sfiles)
        info = _fill_session(conn, s, meta.get(sid, {}), prompts, root)
        if info is not None:
            indexed[sid] = info
        sessions.append(s)
    sessions.sort(key=lambda s: (-s.written, s.started_at or "", s.session_id))
    for i, s in enumerate(sessions):
        s.colour = i
    by_id = {s.session_id: s for s in sessions}

    # The tip: which of the range's session lines are still there, and (HTML) where.
    lines: list[FileLines] = []
    lines_cut = 0
    if commits and rng.tip is not None and at_tip:
        tip_commit = repo[rng.tip]
        assert is_commit(tip_commit)
        tree = tip_commit.tree
        wanted = {p for sf in session_files.values() for p in sf}
        if want_lines:
            wanted |= set(files)
        paths = sorted(p for p in wanted if _exists_at(tree, p))
        blamed = blame_at(repo, root, rng.tip, paths)
        find_request = _request_finder(conn if prompts[0] else None, indexed)
        shown = 0
        for path in paths:
            texts: list[str] | None = None
            if want_lines:
                try:
                    texts = read_file(repo, path, rng.tip).lines()
                except DejaError:
                    texts = None
            runs: list[list[ShownLine]] = []
            for b in blamed.get(path, []):
                owner = per_commit.get(b.commit or "")
                if owner is None:
                    continue
                who = owner.session_of.get(b.orig_path, {}).get(b.orig_line)
                if who is None and b.orig_line not in owner.introduced.get(b.orig_path, ()):
                    continue  # blamed to a range commit, but not a line it introduced
                if who is not None and who in by_id:
                    sf = by_id[who].files.setdefault(path, SessionFile(path))
                    sf.surviving += 1
                if texts is None or not (1 <= b.line <= len(texts)):
                    continue
                if shown >= HTML_MAX_LINES:
                    lines_cut += 1
                    continue
                text = texts[b.line - 1]
                request = find_request(who, path, text) if who else None
                sl = ShownLine(line=b.line, text=text, session=who, request=request)
                if runs and runs[-1][-1].line == b.line - 1:
                    runs[-1].append(sl)
                else:
                    runs.append([sl])
                shown += 1
            if runs:
                lines.append(FileLines(path=path, runs=runs))

    file_reports = [FileReport(path=p, counts=c) for p, c in files.items()]
    file_reports.sort(key=lambda f: (-f.counts.sessions_share, -f.counts.added, f.path))
    return Report(
        spec=rng.spec,
        tip=rng.tip,
        base=rng.exclude,
        commits=commit_reports,
        totals=totals,
        files=file_reports,
        sessions=sessions,
        prompts=prompts[0],
        tool=f"deja-blame {__version__}",
        notes_found=notes_found,
        indexed_sessions=indexed_sessions,
        lines=lines,
        lines_cut=lines_cut,
    )
