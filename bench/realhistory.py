"""A real file's real history, replayed as agent sessions: data for the real-code benchmarks.

Clones a real git repository and takes one file's history from it (every
commit that changed it, oldest first, following renames). Then writes Antigravity transcripts
(the real compact format) for SESSIONS agent sessions that replay the hunks of
that history minutes before each commit:

- sessions are spread evenly over the commits (with fewer sessions than
  commits, the commits in between are a person's);
- each session of a commit replays all of its hunks (``git diff``'s hunks,
  three lines of context, as the client's diff blocks have them), a few
  minutes apart: the earlier ones are attempts the last one redid, so blank
  lines, ``)`` and docstring quotes are written over and over, as in real work
  (``split=True``: the sessions share the hunks instead);
- each session's edit is a ``replace_file_content`` step whose CODE_ACTION
  carries the diff block, after a request and a view of the file.

The truth kept in ``meta.json``: which commit each session's writes belong to.
Real code brings what a generator of unique lines does not: blank lines,
repeated lines, reformatting commits, moved blocks.

    python bench/realhistory.py --source ~/src/click --file src/click/core.py \
        --sessions 1000 --out /tmp/real1000
"""

from __future__ import annotations

import argparse
import difflib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent / "accuracy"))  # the transcript writers

from antigravity_writer import TranscriptWriter  # noqa: E402


def _git(cwd: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True).stdout


def file_history(source: Path, path: str, limit: int | None = None) -> list[tuple[str, str, int]]:
    """(commit, the file's path in it, committer time) of each commit that changed
    ``path``, following renames, oldest first (the last ``limit`` only)."""
    out = _git(source, "log", "--follow", "--format=@%H %ct", "--name-only", "--", path).decode()
    entries: list[tuple[str, str, int]] = []
    head: list[str] = []
    for line in out.splitlines():
        if line.startswith("@"):
            head = line[1:].split()
        elif line.strip() and head:
            entries.append((head[0], line.strip(), int(head[1])))
            head = []
    entries.reverse()
    return entries[-limit:] if limit else entries


def _show(source: Path, spec: str) -> list[str] | None:
    try:
        return _git(source, "show", spec).decode("utf-8", "replace").splitlines()
    except subprocess.CalledProcessError:
        return None


def _parent_version(source: Path, sha: str, path: str, renamed_from: str | None) -> list[str]:
    for name in (path, renamed_from):
        if name:
            text = _show(source, f"{sha}^:{name}")
            if text is not None:
                return text
    return []


def _hunks(before: list[str], after: list[str]) -> list[str]:
    """Unified-diff hunks (``@@`` header and body) from ``before`` to ``after``."""
    out = []
    sm = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for group in sm.get_grouped_opcodes(3):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        body = [f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@"]
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                body += [" " + x for x in before[a1:a2]]
                continue
            body += ["-" + x for x in before[a1:a2]]
            body += ["+" + x for x in after[b1:b2]]
        out.append("\n".join(body))
    return out


def write_session(
    root: Path,
    sid: str,
    start: float,
    workspace: str,
    target: str,
    label: str,
    hunks: list[str],
    request: str,
) -> int:
    """One session: a request, a replace_file_content step per hunk (its CODE_ACTION
    carrying the diff block), a test run. Returns the lines it added."""
    return write_multi_session(root, sid, start, workspace, [(target, label, hunks)], request)


def write_multi_session(
    root: Path,
    sid: str,
    start: float,
    workspace: str,
    files: list[tuple[str, str, list[str]]],
    request: str,
) -> int:
    """One session that edits several files: (target path, diff label, hunks) each."""
    w = TranscriptWriter(root, sid, start, workspace=workspace, tick=2)
    w.user(request)
    added = 0
    for target, label, hunks in files:
        for h in hunks:
            w.record(
                "MODEL",
                "PLANNER_RESPONSE",
                content="Editing.",
                tool_calls=[
                    {
                        "name": "replace_file_content",
                        "args": {
                            "TargetFile": json.dumps(target),
                            "Instruction": json.dumps("Apply the change."),
                        },
                    }
                ],
            )
            body = (
                f"The following changes were made by the replace_file_content tool to:"
                f" {target}. If relevant, proactively run terminal commands to verify"
                f" these changes (e.g. run tests or linters).\n[diff_block_start]\n"
                f"--- a/{label}\n+++ b/{label}\n{h}\n[diff_block_end]\n"
                "The above diff shows only the modified lines and a few lines of context"
                " around them, not the whole file."
            )
            w.record("MODEL", "CODE_ACTION", content=w._header(w.now, 1.0) + body)
            added += sum(1 for x in h.splitlines()[1:] if x.startswith("+"))
    w.run_command("pytest -q", exit_code=0)
    return added


MAX_REPLAYED_BYTES = 400_000  # a file version larger than this is not replayed


def build_range(
    out: Path, source: Path, range_spec: str, share: int, sessions_per_commit: int = 1
) -> dict[str, object]:
    """Sessions for a range's commits instead of one file's: every ``share``-th
    non-merge commit of ``range_spec`` (oldest first) is replayed by
    ``sessions_per_commit`` sessions, each redoing all its hunks in every text
    file it added or changed, minutes before it. The others are a person's.
    Data for ``deja report`` and ``deja stats`` over a range with no notes."""
    meta_path = out / "meta.json"
    args = [str(source), range_spec, share, sessions_per_commit, "range"]
    if meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if meta.get("args") == args:
            return meta
    shutil.rmtree(out, ignore_errors=True)
    repo, root = out / "repo", out / "root"
    out.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", str(source), str(repo)], check=True)
    workspace = str(repo.resolve())
    shas = _git(repo, "rev-list", "--reverse", "--no-merges", range_spec).decode().split()
    session_commit: dict[str, str] = {}
    written = 0
    for k, sha in enumerate(shas):
        if k % share:
            continue
        when = int(_git(repo, "show", "-s", "--format=%ct", sha).decode().strip())
        # (names as they are: a quoted "snow \342\230\203" is no path cat-file knows)
        rows = _git(
            repo, "-c", "core.quotePath=false", "diff-tree", "-r", "-M", "--no-commit-id",
            "--name-status", sha,
        )  # fmt: skip
        files = []
        for row in rows.decode("utf-8", "replace").splitlines():
            fields = row.split("\t")
            status, name = fields[0][:1], fields[-1]
            if status not in ("A", "M", "R"):
                continue
            after_bytes = _git(repo, "cat-file", "-p", f"{sha}:{name}")
            if b"\0" in after_bytes[:8000] or len(after_bytes) > MAX_REPLAYED_BYTES:
                continue
            after = after_bytes.decode("utf-8", "replace").splitlines()
            before_name = fields[1] if status == "R" else None
            before = [] if status == "A" else _parent_version(repo, sha, name, before_name)
            hunks = _hunks(before, after)
            if hunks:
                files.append((f"{workspace}/{name}", name, hunks))
        if not files:
            continue
        for j in range(sessions_per_commit):
            sid = f"rng{k:05d}-{j:04d}-4000-8000-{sha[:12]}"
            written += write_multi_session(
                root,
                sid,
                when - 60 * (sessions_per_commit - j) - 120,
                workspace,
                files,
                f"Work as in {sha[:10]} (part {j + 1} of {sessions_per_commit}).",
            )
            session_commit[sid] = sha
    meta = {
        "args": args,
        "commits": len(shas),
        "sessions": len(session_commit),
        "lines_written": written,
        "workspace": workspace,
        "session_commit": session_commit,
    }
    meta_path.write_text(json.dumps(meta))
    return meta


def build(
    out: Path,
    source: Path,
    path: str,
    sessions: int,
    limit: int | None = None,
    split: bool = False,
) -> dict[str, object]:
    """The repository (``out/repo``, a clone of ``source``) and transcript root
    (``out/root``); reused when built with the same arguments."""
    meta_path = out / "meta.json"
    args = [str(source), path, sessions, limit, split, "exact"]
    if meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if meta.get("args") == args:
            return meta
    shutil.rmtree(out, ignore_errors=True)
    repo, root = out / "repo", out / "root"
    out.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", str(source), str(repo)], check=True)
    history = file_history(repo, path, limit)
    # the sessions worked in this clone: their paths are under its root
    workspace = str(repo.resolve())
    # Sessions spread evenly over the commits that changed the file.
    per_commit: dict[int, list[int]] = {}
    for s in range(sessions):
        per_commit.setdefault((s * len(history)) // max(1, sessions), []).append(s)
    session_commit: dict[str, str] = {}
    written = 0
    previous_name: str | None = None
    for k, (sha, name, when) in enumerate(history):
        members = per_commit.get(k, [])
        renamed_from = previous_name if previous_name != name else None
        previous_name = name
        if not members:
            continue
        after = _show(repo, f"{sha}:{name}") or []
        hunks = _hunks(_parent_version(repo, sha, name, renamed_from), after)
        if not hunks:
            continue
        target = f"{workspace}/{name}"
        m = len(members)
        for j, s in enumerate(members):
            mine = (hunks[j::m] or [hunks[j % len(hunks)]]) if split else hunks
            sid = f"real{s:05d}-0000-4000-8000-{k:012d}"
            start = when - 60 * (m - j) - 120
            written += write_session(
                root,
                sid,
                start,
                workspace,
                target,
                name,
                mine,
                f"Work on {name} as in {sha[:10]} (part {j + 1} of {m}).",
            )
            session_commit[sid] = sha
    final = (repo / path).read_text(encoding="utf-8", errors="replace").splitlines()
    meta = {
        "args": args,
        "commits": len(history),
        "lines": len(final),
        "blank": sum(1 for x in final if not x.strip()),
        "sessions": len(session_commit),
        "lines_written": written,
        "path": path,
        "workspace": workspace,
        "session_commit": session_commit,
    }
    meta_path.write_text(json.dumps(meta))
    return meta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", type=Path, required=True, help="a git repository with history")
    ap.add_argument("--file", help="the file whose history is replayed")
    ap.add_argument(
        "--range", help="instead of --file: replay every --share-th commit of this range"
    )
    ap.add_argument("--share", type=int, default=2, help="with --range: 1 commit in SHARE")
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--commits", type=int, default=None, help="only the last N versions")
    ap.add_argument("--split", action="store_true", help="a commit's sessions share its hunks")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    t = time.perf_counter()
    if a.range:
        meta = build_range(a.out, a.source, a.range, a.share)
        print(
            f"{meta['commits']} commits, {meta['sessions']} sessions writing"
            f" {meta['lines_written']} lines, in {time.perf_counter() - t:.1f} s"
        )
        return
    if not a.file:
        ap.error("--file or --range")
    meta = build(a.out, a.source, a.file, a.sessions, a.commits, a.split)
    print(
        f"{meta['commits']} commits, {meta['lines']} lines ({meta['blank']} blank),"
        f" {meta['sessions']} sessions writing {meta['lines_written']} lines,"
        f" in {time.perf_counter() - t:.1f} s"
    )


if __name__ == "__main__":
    main()
