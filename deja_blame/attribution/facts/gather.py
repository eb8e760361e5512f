"""Stage 1 for one file: git's blame, the commits' notes, and the index's writes of
the file's texts, gathered once into a ``FileFacts``.

git blame is started first (its own process: it is most of the wait); the
index's writes of the file's texts are read while it runs, and, where some
session wrote to the file, the file's log and the repository's file list too
(what the rules ask next), so the rules find them read.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from deja_blame.attribution.facts import indexread as Q
from deja_blame.attribution.facts.git_blame import blame_version, start_blame
from deja_blame.attribution.facts.gitread import earlier_names, git
from deja_blame.attribution.facts.model import BlameLine, FileFacts, LineTexts, WriteSet
from deja_blame.attribution.facts.noted_lines import noted_line, sessions_noted
from deja_blame.attribution.facts.notes_state import NotesState
from deja_blame.attribution.facts.settled import settled_lines
from deja_blame.attribution.model import LineAttribution, NoteLookup
from deja_blame.gitutil import PLAIN_DIFF, FileVersion, workdir

if TYPE_CHECKING:
    import pygit2

WINDOW_CONTEXT = 40  # lines blamed and matched around a range or an uncommitted block


def gather_file(
    repo: pygit2.Repository,
    conn: sqlite3.Connection | None,
    version: FileVersion,
    note_lookup: NoteLookup | None,
    notes: NotesState,
    engine: str,
    before_match: Callable[[], None] | None,
    window: tuple[int, int] | None,
    focus: str | None = None,
) -> FileFacts:
    """The facts of ``version``: the whole file, or ``window`` (lines) and its context;
    ``focus`` (a commit): the index's writes of that commit's lines only, the other
    lines settled (``FileFacts.settled``) as the notes leave them; ``notes``: the
    notes' state read for the question (``notes_state.py``)."""
    root = workdir(repo)
    relpath = version.relpath
    texts = version.lines()
    lo, hi = 1, len(texts)
    if window is not None:
        lo = max(1, window[0] - WINDOW_CONTEXT)
        hi = min(len(texts), window[1] + WINDOW_CONTEXT)
        if lo > hi:
            return FileFacts(
                relpath, str(root), version.commit, len(texts), [], [], LineTexts.of([])
            )
    renamed: set[str] = set()
    follow = None
    if window is None:
        pending = blame_version(conn, root, repo, version, engine)
    else:
        pending = start_blame(root, repo, relpath, version.commit, engine=engine, span=(lo, hi))
        if conn is not None:
            # the file's earlier names, as the whole file's blame would name them (its
            # older lines'): a window's lines may name none, and its answer then
            # differed from the whole file's (``deja why`` before and after a blame)
            follow = _in_background(
                "deja-read-names",
                lambda: renamed.update(earlier_names(root, version.commit, relpath)),
            )
    if before_match is not None:
        before_match()
    part = texts[lo - 1 : hi]
    # what every rule compares of the lines, made once (a window: with the file's counts)
    line_texts = LineTexts.of(part, texts, lo - 1)
    paths: dict[int, bool] = {}
    writes = WriteSet()
    # A history annotated by ``deja annotate --all`` answers for its commits' lines
    # where their notes and records are current (``settled.py``): the writes are read
    # after git blame, for the other lines only. Otherwise while git blame runs.
    passed = notes.passed
    notes_first = (passed is not None and passed.completed) or focus is not None
    file_fps, solid = _fingerprints(line_texts, None if not notes_first else [True] * len(part))
    if conn is not None:
        paths = Q.candidate_paths(conn, str(root), {relpath})
        if not notes_first:
            _load_writes(conn, paths, file_fps, writes, solid)
    # only a file some session wrote to asks the rules anything (deja stats blames
    # hundreds that none did: a log each would be git's work for nothing)
    early = _read_ahead(conn, root, version) if writes else None
    prefetch = getattr(note_lookup, "prefetch", None)
    if prefetch is not None and window is None:
        prefetch()  # every note's row, while git blame runs (it names the commits)
    # each line's answer is begun as git finds its commit, while git still works: its
    # attribution, and what its commit's note says of it (``noted_line``) where the notes'
    # rows are read already (the reader thread then asks neither SQLite nor pygit2)
    by_line: list[BlameLine | None] = [None] * len(part)
    made: list[LineAttribution | None] = [None] * len(part)
    times: dict[int, str] = {}  # a note's lines share a few written times
    streamed_notes = prefetch is not None and window is None

    def take(found: list[BlameLine]) -> None:
        for b in found:
            if lo <= b.line <= hi:
                i = b.line - lo
                by_line[i] = b
                ln = made[i] = LineAttribution(
                    line=b.line,
                    text=part[i],
                    commit=b.commit,
                    commit_time=b.commit_time if b.commit else None,
                    orig_path=b.orig_path,
                    orig_line=b.orig_line,
                )
                if streamed_notes and b.commit is not None:
                    assert note_lookup is not None
                    noted_line(ln, relpath, note_lookup, times)

    pending.stream(take)
    try:
        pending.result()
    finally:
        if early is not None:
            early.join()  # its git answers land in caches the rules read next
    lines = [
        ln
        if ln is not None
        else LineAttribution(lo + i, part[i], None, orig_path=relpath, orig_line=lo + i)
        for i, ln in enumerate(made)
    ]
    facts = FileFacts(relpath, str(root), version.commit, len(texts), lines, by_line, line_texts)
    facts.blame_authors = pending.authors()
    if note_lookup is not None:
        if not streamed_notes:
            for ln in lines:
                if ln.commit is not None:
                    noted_line(ln, relpath, note_lookup, times)
        sessions_noted(facts, note_lookup)
    facts.gitai, facts.gitai_confidence = notes.gitai, notes.gitai_confidence
    if conn is None:
        return facts
    # Renamed files: their older lines were written under the old path.
    older = {b.orig_path for b in by_line if b is not None and b.orig_path} - {relpath}
    if follow is not None:
        follow.join()
        older |= renamed
    more: dict[int, bool] = {}
    if older:
        from deja_blame.index.unread import read_naming

        read_naming(conn, older)  # a session elsewhere that wrote only the old names
        more = {
            k: v for k, v in Q.candidate_paths(conn, str(root), older).items() if k not in paths
        }
    if focus is not None:
        facts.settled = [ln.commit != focus for ln in lines]
    elif note_lookup is not None:
        assert passed is not None
        facts.settled = settled_lines(conn, str(root), note_lookup, passed, lines)
    save_notes = getattr(note_lookup, "save", None)
    if save_notes is not None:
        save_notes()  # the notes read from git, indexed for the next question
    if notes_first:
        file_fps, solid = _fingerprints(line_texts, facts.settled)
        if not solid:
            file_fps = set()  # blank lines and brackets alone: nothing to match them by
        _load_writes(conn, paths, file_fps, writes, solid)
    # the file's log under every name blame followed, read while the notes, the
    # renamed paths' writes and the identity rules are looked at
    names = {ln.orig_path or "" for ln in lines} | renamed
    log_ahead = _read_log_ahead(root, version.commit, names) if writes else None
    if more:
        _load_writes(conn, more, file_fps, writes, solid)
        paths.update(more)
    if version.commit is not None:
        facts.rev_time = float(repo[version.commit].commit_time)  # type: ignore[attr-defined]
    if log_ahead is not None:
        log_ahead.join()
    facts.writes, facts.paths = writes, paths
    return facts


def gather_worktree(
    conn: sqlite3.Connection | None,
    root: str,
    relpath: str,
    head_lines: list[LineAttribution],
    work_texts: list[str],
) -> tuple[list[LineAttribution], list[FileFacts]]:
    """The working file's lines: HEAD's attribution (``head_lines``, HEAD's answer)
    carried to each line git's diff says HEAD had (``worktree_changes``), none for
    the others (not committed yet); and, with an index, the windows its uncommitted
    lines are matched in (``gather_windows``)."""
    mapping = worktree_changes(root, relpath, [ln.text for ln in head_lines], work_texts)
    lines: list[LineAttribution] = []
    for i, src in enumerate(mapping):
        if src is None:
            lines.append(
                LineAttribution(
                    line=i + 1, text=work_texts[i], commit=None, orig_path=relpath, orig_line=i + 1
                )
            )
        else:
            old = head_lines[src]
            lines.append(
                LineAttribution(
                    line=i + 1,
                    text=work_texts[i],
                    commit=old.commit,
                    session=old.session,
                    source=old.source,
                    confidence=old.confidence,
                    written_at=old.written_at,
                    commit_time=old.commit_time,
                    orig_path=old.orig_path,
                    orig_line=old.orig_line,
                    edit_ord=old.edit_ord,
                    via=old.via,
                )
            )
    windows = gather_windows(conn, root, relpath, lines) if conn is not None else []
    return lines, windows


def worktree_changes(
    root: str, relpath: str, head_texts: list[str], work_texts: list[str]
) -> list[int | None]:
    """For each line of the working file, the HEAD line (0-based) it is, or None where
    it is new: as git's own diff of HEAD and the working file aligns them (what
    ``git blame`` of the working tree would say is not committed yet), else as
    ``linediff`` does (git's diff, near-linear where lines repeat)."""
    mapping = _git_changed_lines(root, relpath, len(work_texts))
    if mapping is None or any(
        m is not None and (m >= len(head_texts) or head_texts[m] != work_texts[i])
        for i, m in enumerate(mapping)
    ):
        from deja_blame.linediff import aligned

        mapping = aligned(head_texts, work_texts)
    return mapping


def _git_changed_lines(root: str, relpath: str, n_work: int) -> list[int | None] | None:
    """``worktree_changes`` from ``git diff -U0 HEAD`` of the file; None where git
    cannot say (no git, a diff that does not add up)."""
    proc = git(
        root,
        ["diff", *PLAIN_DIFF, "--no-renames", "-U0", "HEAD", "--", relpath],
        timeout=30,
    )
    if proc is None or proc.returncode != 0:
        return None
    out: list[int | None] = []
    head_at = 0  # next HEAD line (0-based) not yet placed
    for raw in proc.stdout.split(b"\n"):
        if not raw.startswith(b"@@ "):
            continue
        try:
            old, new = raw.split(b" ")[1:3]
            o_start, _, o_len = old[1:].partition(b",")
            n_start, _, n_len = new[1:].partition(b",")
            os_, ol = int(o_start), int(o_len or b"1")
            ns, nl = int(n_start), int(n_len or b"1")
        except ValueError:
            return None
        # unchanged lines before this hunk, then the hunk's new lines
        first_new = ns - 1 if nl else ns
        while len(out) < first_new:
            out.append(head_at)
            head_at += 1
        out += [None] * nl
        head_at = (os_ - 1 + ol) if ol else os_
    while len(out) < n_work:
        out.append(head_at)
        head_at += 1
    return out if len(out) == n_work else None


def gather_windows(
    conn: sqlite3.Connection, root: str, relpath: str, lines: list[LineAttribution]
) -> list[FileFacts]:
    """The facts of a working file's uncommitted lines (``commit`` None; the others
    carry HEAD's answer): one ``FileFacts`` a window, each block of them with
    ``WINDOW_CONTEXT`` lines on each side (windows that overlap merged), whose
    committed lines are settled (context the rules read: runs, gaps, reflow). Its
    ``lines`` are ``lines``' own: what the matcher gives them is the answer's."""
    windows: list[list[int]] = []
    for i, ln in enumerate(lines):
        if ln.commit is not None:
            continue
        a, b = max(0, i - WINDOW_CONTEXT), min(len(lines), i + WINDOW_CONTEXT + 1)
        if windows and a <= windows[-1][1]:
            windows[-1][1] = b
        else:
            windows.append([a, b])
    out: list[FileFacts] = []
    whole = [ln.text for ln in lines]  # the file's counts of its texts, for every window
    for a, b in windows:
        part = lines[a:b]
        by_line: list[BlameLine | None] = [
            BlameLine(
                ln.line, ln.commit, ln.commit_time, ln.orig_path or relpath, ln.orig_line or ln.line
            )
            for ln in part
        ]
        texts = LineTexts.of([ln.text for ln in part], whole, a)
        solid = {fp for fp, trivial in zip(texts.fps, texts.trivial) if not trivial}
        relpaths = {relpath} | {ln.orig_path for ln in part if ln.orig_path}
        paths = Q.candidate_paths(conn, root, relpaths)
        facts = FileFacts(relpath, root, None, len(lines), part, by_line, texts, paths=paths)
        facts.writes = _load_writes(conn, paths, set(texts.fps), WriteSet(), solid)
        facts.settled = [ln.commit is not None for ln in part]
        out.append(facts)
    return out


def _load_writes(
    conn: sqlite3.Connection, paths: dict[int, bool], fps: set[int], into: WriteSet, solid: set[int]
) -> WriteSet:
    """``writes.load_writes`` where some fingerprint is asked: a file whose lines the
    notes settle reads no write, and loads none of the writes' and edits' modules."""
    if not fps or not paths:
        return into  # (load_writes reads nothing then either)
    from deja_blame.attribution.facts.writes import load_writes

    return load_writes(conn, paths, fps, into=into, solid=solid)


def _fingerprints(texts: LineTexts, settled: list[bool] | None) -> tuple[set[int], set[int]]:
    """The fingerprints of the lines not ``settled`` (None: none is), and those of
    them that are not trivial (what narrows the writes read: ``writes.load_writes``)."""
    fps: set[int] = set()
    solid: set[int] = set()
    for k, fp in enumerate(texts.fps):
        if settled is None or not settled[k]:
            fps.add(fp)
            if not texts.trivial[k]:
                solid.add(fp)
    return fps, solid


def _read_ahead(
    conn: sqlite3.Connection | None, root: Path, version: FileVersion
) -> threading.Thread | None:
    """Ask git, while git blame runs, what the rules will ask after it: the file's
    log (``versions.FileHistory``) and the repository's files (the move rule). (A
    file renamed in its history asks a log of all its names later: ``_read_log_ahead``.)"""
    if conn is None:
        return None
    from deja_blame.attribution.facts.gitread import read_repository_files
    from deja_blame.attribution.facts.history import repo_history
    from deja_blame.attribution.facts.moved import revisions_asked

    def work() -> None:
        repo_history(root).log(version.commit or "HEAD", {version.relpath})
        read_repository_files(root, revisions_asked(version.commit))

    return _in_background("deja-read-ahead", work)


def _read_log_ahead(root: Path, rev: str | None, names: set[str]) -> threading.Thread:
    """Read the log ``versions.FileHistory`` asks next (its paths: the names blame
    followed) while the notes and the renamed paths' writes are looked at."""
    from deja_blame.attribution.facts.history import repo_history

    paths = {p for p in names if p}
    return _in_background("deja-read-log", lambda: repo_history(root).log(rev or "HEAD", paths))


def _in_background(name: str, work: Callable[[], object]) -> threading.Thread:
    """Run ``work`` on a thread whose answers land in the process's caches; the caller
    joins it before the rules that read them. A failure is the rules' to meet again
    and to say (they ask the same of git), not this thread's."""

    def run() -> None:
        try:
            work()
        except Exception:  # noqa: BLE001 - see above
            pass

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread
