"""The four tools: their schemas, and the answers gathered from deja's library.

Each tool takes plain JSON arguments and returns an ``Answer``: the data (the
tool's ``structuredContent``) and compact text for a model (``render``). A
question deja cannot answer (no such file, a binary one, a range past its end,
outside the repository) raises ``DejaError``: the server turns it into a tool
error (``isError``), never a protocol error or a traceback.

The same library as the commands: ``attribution.api.compute`` (deja blame and
why), ``attribution.explain.line_story`` (deja why), ``sessions_of_repository``
(deja sessions --project), ``index.store`` and the notes (deja show).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import sqlite3
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from deja_blame.attribution.facts.clone_paths import repository_path
from deja_blame.attribution.model import FileBlame, LineAttribution
from deja_blame.editor.confidence import run_confidence
from deja_blame.editor.mcp import render
from deja_blame.editor.mcp.paging import CURSOR, MAX_TEXT, cut, make_cursor, page, read_cursor
from deja_blame.editor.mcp.scope import Repository, file_in, inside
from deja_blame.errors import DejaError
from deja_blame.gitcli import is_commit
from deja_blame.session_ids import has_prefix

WHY_WINDOW = 200  # lines blamed per why answer (a range gets a cursor for the rest)
BLAME_WINDOW = 400  # lines blamed per blame answer
MAX_LINE = 10**9  # git's own "to the end"
MAX_HUNK_LINES = 30  # lines of an edit shown per answer
MAX_COMMANDS = 10  # commands run after an edit, shown per line
MAX_REASONS = 3  # the agent's own words around an edit
REFRESH_EVERY = 1.0  # seconds: new transcript lines are looked for at most this often
RECENT_FILES = 8  # files whose answers the server keeps (each checked before use)


@dataclass
class Answer:
    text: str
    data: dict[str, Any] = field(default_factory=dict)


_REPO = {
    "type": "string",
    "description": "The repository (a path); default: the one the client's roots or"
    " working directory name.",
}
_CURSOR = {"type": "string", "description": "The next_cursor of a previous answer, for more."}
_FILE = {"type": "string", "description": "A file of the repository, relative to its top."}
_LINE = {"type": "integer", "minimum": 1}

TOOLS: list[dict[str, Any]] = [
    {
        "name": "why",
        "title": "Why is this line here?",
        "description": "Why a line (or a range) of a file exists: the agent session that wrote"
        " it (agent, model, time, confidence), the request that led to it, what the agent"
        " said, the edit, and the commands it ran after (tests, with exit codes); for a"
        " person's line, the commit and its author; for a line not committed yet, whether"
        " a session wrote it. Use before changing code you did not write.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "file": _FILE,
                "line": {**_LINE, "description": "One line (1-based)."},
                "start": {**_LINE, "description": "First line of a range (instead of line)."},
                "end": {**_LINE, "description": "Last line of a range (default: start)."},
                "history": {
                    "type": "boolean",
                    "description": "Also the line's earlier versions and who wrote each"
                    " (one line only; slower: git's log of the line).",
                },
                "repo": _REPO,
                CURSOR: _CURSOR,
            },
            "required": ["file"],
        },
    },
    {
        "name": "blame",
        "title": "Who wrote these lines",
        "description": "Who wrote each line of a file (or of start..end): a person (the"
        " commit's author) or an agent session (agent, session id, confidence), as runs"
        " of lines.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "file": _FILE,
                "start": {**_LINE, "description": "First line (default 1)."},
                "end": {**_LINE, "description": "Last line (default: the end of the file)."},
                "repo": _REPO,
                CURSOR: _CURSOR,
            },
            "required": ["file"],
        },
    },
    {
        "name": "sessions",
        "title": "Agent sessions that worked here",
        "description": "The agent sessions that touched a file or folder of the repository"
        " (all of it by default), newest first, with their first request; sessions that ran"
        " in another clone or on another machine count too.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "A file or folder, relative to the repository's top.",
                },
                "query": {
                    "type": "string",
                    "description": "Words the session's id, agent, model, files or"
                    " first request contain.",
                },
                "since": {
                    "type": "string",
                    "description": "Sessions started on or after this: 2026-07-01, or 3d, 2w, 12h.",
                },
                "repo": _REPO,
                CURSOR: _CURSOR,
            },
        },
    },
    {
        "name": "show",
        "title": "One session",
        "description": "One agent session of this repository, summarised: its requests,"
        " the files it read and edited, the commands it ran and their exit codes.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "session": {
                    "type": "string",
                    "description": "A session id, or its first characters.",
                },
                "repo": _REPO,
                CURSOR: _CURSOR,
            },
            "required": ["session"],
        },
    },
]

TOOL_NAMES = frozenset(t["name"] for t in TOOLS)


# --- the arguments -------------------------------------------------------------------


def _text_arg(args: dict[str, Any], name: str, required: bool = False) -> str | None:
    value = args.get(name)
    if value is None:
        if required:
            raise DejaError(f"'{name}' is required")
        return None
    if not isinstance(value, str):
        raise DejaError(f"'{name}' is a string")
    return value


def _line_arg(args: dict[str, Any], name: str) -> int | None:
    value = args.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise DejaError(f"'{name}' is a line number (an integer from 1)")
    if value < 1:
        raise DejaError(f"'{name}' is {value}: lines start at 1")
    return min(value, MAX_LINE)


def _range(args: dict[str, Any], whole: bool) -> tuple[int, int]:
    line = _line_arg(args, "line")
    start = _line_arg(args, "start")
    end = _line_arg(args, "end")
    if line is not None and (start is not None or end is not None):
        raise DejaError("give 'line', or 'start' and 'end', not both")
    if line is not None:
        return line, line
    if start is None and end is None:
        if not whole:
            raise DejaError("give 'line' (or 'start' and 'end')")
        return 1, MAX_LINE
    first = start or 1
    last = end if end is not None else (MAX_LINE if whole else first)
    if last < first:
        first, last = last, first  # as git blame -L 5,3 does
    return first, last


# --- the tools ------------------------------------------------------------------------


class Tools:
    """Answers tool calls against one index connection (the server's thread's)."""

    def __init__(self, conn: sqlite3.Connection, refresh: bool = True) -> None:
        self.conn = conn
        self.refresh = refresh
        self.refreshed_at = float("-inf")
        # path -> (what the answer rests on, the answer): the last few files asked about
        self.recent: dict[str, tuple[tuple[Any, ...], FileBlame]] = {}
        self.repos: dict[Path, Any] = {}

    def _refresh(self, path: Path | None, root: Path) -> None:
        """New transcript lines first, as deja blame reads them; questions in a burst
        (an agent asks several at once) share one look, REFRESH_EVERY apart."""
        if not self.refresh or time.monotonic() - self.refreshed_at < REFRESH_EVERY:
            return
        from deja_blame.index.prescan import concern_of, needles_for
        from deja_blame.index.refresh import refresh_index

        refresh_index(self.conn, concern=concern_of(path) if path else needles_for(root))
        self.refreshed_at = time.monotonic()

    def _stamp(self, repository: Repository, path: Path) -> tuple[Any, ...]:
        """What a file's answer rests on: the file as it stands, HEAD, deja's notes,
        and the index (our writes and any other process's)."""
        from deja_blame.gitutil import open_repository

        repo = self.repos.get(repository.root)
        if repo is None:
            repo = self.repos[repository.root] = open_repository(repository.root)
        st = path.stat()
        notes = [
            str(repo.references[name].target)
            for name in repo.references
            if name.startswith("refs/notes/")
        ]
        head = None if repo.head_is_unborn else str(repo.head.target)
        (data_version,) = self.conn.execute("PRAGMA data_version").fetchone()
        return (
            (st.st_mtime_ns, st.st_size, st.st_ino),
            head,
            tuple(notes),
            data_version,
            self.conn.total_changes,
        )

    def call(self, name: str, args: dict[str, Any], repository: Repository) -> Answer:
        if name == "why":
            return self.why(args, repository)
        if name == "blame":
            return self.blame(args, repository)
        if name == "sessions":
            return self.sessions(args, repository)
        return self.show(args, repository)

    def _blame(
        self, repository: Repository, path: Path, first: int, last: int
    ) -> tuple[FileBlame, int]:
        """The file's blame over ``first..last`` and the file's length. The whole file
        is blamed (and so cached): the next question about any of its lines is read
        from the cache (50 ms for click's core.py, against a second for one line's
        own blame)."""
        from deja_blame.attribution.answer import too_short
        from deja_blame.attribution.api import compute

        self._refresh(path, repository.root)
        key = str(path)
        stamp = self._stamp(repository, path)
        kept = self.recent.get(key)
        if kept is not None and kept[0] == stamp:
            whole = kept[1]
        else:
            whole = compute(self.conn, path, None, None, refresh=False)
            if len(self.recent) >= RECENT_FILES:
                self.recent.pop(next(iter(self.recent)))
            self.recent[key] = (self._stamp(repository, path), whole)  # after its cache writes
        result = replace(whole, lines=whole.lines)
        total = len(result.lines)
        if first > total:
            raise too_short(result.path, total)
        result.lines = [ln for ln in result.lines if first <= ln.line <= last]
        return result, total

    # why ------------------------------------------------------------------------

    def why(self, args: dict[str, Any], repository: Repository) -> Answer:
        path = file_in(repository, _text_arg(args, "file", required=True) or "")
        start, end = _range(args, whole=False)
        first = max(start, read_cursor("why", args) or start)
        result, total = self._blame(repository, path, first, min(end, first + WHY_WINDOW - 1))
        history = args.get("history", False)
        if not isinstance(history, bool):
            raise DejaError("'history' is true or false")
        if history and start != end:
            raise DejaError("'history' is for one line: give 'line'")
        people = _People(repository)
        runs: list[dict[str, Any]] = []
        texts: list[str] = []
        for group in _runs(result.lines):
            run = self._why_run(repository, result, group, people, with_history=history)
            texts.append(render.why_run(result.path, run))
            runs.append(run)
        shown = page(runs, [len(t) for t in texts], 0)
        data: dict[str, Any] = {
            "repository": str(repository.root),
            "path": result.path,
            "start": start,
            "end": min(end, total),
            "total_lines": total,
            "prompts_shown": repository.prompts,
            "runs": runs[:shown],
        }
        resume = runs[shown]["start"] if shown < len(runs) else result.lines[-1].line + 1
        if resume <= min(end, total):
            data["next_cursor"] = make_cursor("why", args, resume)
        return Answer(render.answer(texts[:shown], data, "why"), data)

    def _why_run(
        self,
        repository: Repository,
        result: FileBlame,
        group: list[LineAttribution],
        people: _People,
        with_history: bool,
    ) -> dict[str, Any]:
        from deja_blame.attribution.explain import command_behind, line_history_json, line_story

        ln = group[0]
        run = _run_base(group)
        if ln.session is None:
            if ln.commit is not None:
                run.update(people.commit(ln.commit))
                path = ln.orig_path or result.path
                by_command = command_behind(self.conn, result.root, ln.commit, path)
                if by_command:
                    run["changed_by_command"] = {
                        "session": by_command["session"],
                        "command": cut(repository.text(by_command["command"])),
                        "at": by_command["at"],
                    }
            if with_history:
                run["history"] = _history(repository, line_history_json(self.conn, result, ln))
            return run
        story = line_story(self.conn, result, ln, with_history=with_history)
        run.update(_session_fields(repository, result, group))
        if story.get("note_only"):
            run["note_only"] = True
            noted = result.note_sessions.get(ln.session) or {}
            info = result.sessions.get(ln.session)
            asked = (info.first_prompt if info else None) or noted.get("first_prompt")
            if isinstance(asked, str):
                # a note carries a request only where its author opted in (redacted then)
                run["request"] = cut(repository.text(asked))
        prompt = story.get("prompt")
        if prompt:
            run["request"] = cut(repository.request(prompt["text"]))
            run["request_at"] = prompt["at"]
            if not repository.prompts:
                run["request_withheld"] = True
        run["agent_said"] = [
            cut(repository.text(m["text"])) for m in (story.get("assistant") or [])[-MAX_REASONS:]
        ]
        missing = story.get("no_edit_of_file")
        if missing is not None:
            other = missing.get("added_elsewhere")
            run["no_edit_of_file"] = {"added_elsewhere": repository.text(other) if other else None}
        edit = story.get("edit")
        if edit:
            run["edit"] = _edit(repository, edit)
            if not run.get("model") and edit.get("model"):
                run["model"] = edit["model"]
        commands = story.get("commands_after") or []
        run["commands_after"] = [
            {
                "command": cut(repository.text(c["command"]), 300),
                "exit_code": c["exit_code"],
                "status": c.get("status"),
                "at": c["at"],
            }
            for c in commands[:MAX_COMMANDS]
        ]
        if with_history:
            run["history"] = _history(repository, story["history"])
        return run

    # blame -------------------------------------------------------------------------

    def blame(self, args: dict[str, Any], repository: Repository) -> Answer:
        path = file_in(repository, _text_arg(args, "file", required=True) or "")
        start, end = _range(args, whole=True)
        first = max(start, read_cursor("blame", args) or start)
        result, total = self._blame(repository, path, first, min(end, first + BLAME_WINDOW - 1))
        people = _People(repository)
        runs = []
        for group in _runs(result.lines):
            run = _run_base(group)
            if group[0].session is not None:
                run.update(_session_fields(repository, result, group))
            elif group[0].commit is not None:
                run.update(people.commit(group[0].commit))
            runs.append(run)
        texts = [render.blame_run(r) for r in runs]
        shown = page(runs, [len(t) for t in texts], 0, MAX_TEXT)
        data: dict[str, Any] = {
            "repository": str(repository.root),
            "path": result.path,
            "start": start,
            "end": min(end, total),
            "total_lines": total,
            "runs": runs[:shown],
        }
        resume = runs[shown]["start"] if shown < len(runs) else result.lines[-1].line + 1
        if resume <= min(end, total):
            data["next_cursor"] = make_cursor("blame", args, resume)
        return Answer(render.answer(texts[:shown], data, "blame"), data)

    # sessions -------------------------------------------------------------------------

    def sessions(self, args: dict[str, Any], repository: Repository) -> Answer:
        where = inside(repository, _text_arg(args, "path") or ".")
        prefix = "" if where.as_posix() == "." else where.as_posix()
        query = (_text_arg(args, "query") or "").strip().lower()
        since = _since(_text_arg(args, "since"))
        offset = read_cursor("sessions", args)
        found = [
            s
            for s in self._repository_sessions(repository)
            if _touches(s["files"], prefix)
            and (not since or (s["started_at"] or "") >= since)
            and (not query or query in _searchable(s))
        ]
        found.sort(key=lambda s: (s["started_at"] or "", s["session"]), reverse=True)
        for s in found:
            s["files"] = [f for f in s["files"] if _under(f, prefix)][:10]
        texts = [render.session_line(s) for s in found]
        shown = page(found, [len(t) for t in texts], offset)
        data: dict[str, Any] = {
            "repository": str(repository.root),
            "path": prefix or ".",
            "total": len(found),
            "prompts_shown": repository.prompts,
            "sessions": found[offset : offset + shown],
        }
        if offset + shown < len(found):
            data["next_cursor"] = make_cursor("sessions", args, offset + shown)
        return Answer(render.answer(texts[offset : offset + shown], data, "sessions"), data)

    def _repository_sessions(self, repository: Repository) -> list[dict[str, Any]]:
        """Every session known to have worked on the repository: the index's (wherever
        they ran) and those only its notes name (a reviewer's clone)."""
        from deja_blame.attribution.facts.repository import sessions_of_repository
        from deja_blame.index import queries as Q
        from deja_blame.index.store import list_sessions

        self._refresh(None, repository.root)
        root = str(repository.root)
        ids = sessions_of_repository(self.conn, root)
        out: dict[str, dict[str, Any]] = {}
        for s in list_sessions(self.conn, project=root):
            ids.add(s.session_id)
        for s in list_sessions(self.conn):
            if s.session_id not in ids:
                continue
            row = Q.session_by_id(self.conn, s.session_id)
            touched = Q.paths_touched(self.conn, row.sid) if row is not None else []
            out[s.session_id] = {
                "session": s.session_id,
                "agent": s.source,
                "model": s.model,
                "started_at": s.started_at,
                "ended_at": s.ended_at,
                "project": repository.project(s.project),
                "first_request": cut(repository.request(s.first_prompt), 300),
                "edits": s.n_edits,
                "commands": s.n_commands,
                "files": _repository_paths(root, [p for p, _ in touched]),
                "from_notes": False,
            }
        for sid, noted in _noted_sessions(repository).items():
            if sid not in out:
                out[sid] = noted
        return list(out.values())

    # show ---------------------------------------------------------------------------

    def show(self, args: dict[str, Any], repository: Repository) -> Answer:
        from deja_blame.index.store import resolve_session_id

        prefix = (_text_arg(args, "session", required=True) or "").strip()
        if not prefix or len(prefix) > 200:
            raise DejaError("give a session id, or its first characters (see the sessions tool)")
        offset = read_cursor("show", args)
        known = {s["session"]: s for s in self._repository_sessions(repository)}
        try:
            sid = resolve_session_id(self.conn, prefix)
        except DejaError:
            sid = None
        if sid is None or sid not in known:
            matching = [k for k in known if has_prefix(k, prefix)]
            if len(matching) > 1:
                raise DejaError(
                    f"session id {prefix!r} is ambiguous: {', '.join(sorted(matching))}"
                )
            if not matching:
                raise DejaError(
                    f"no session {prefix!r} worked in this repository (see the sessions tool)"
                )
            sid = matching[0]
        head = dict(known[sid])
        entries = self._entries(repository, sid) if not head["from_notes"] else _noted_entries(head)
        head.pop("files", None)
        texts = [render.show_entry(e) for e in entries]
        shown = page(entries, [len(t) for t in texts], offset)
        data: dict[str, Any] = {
            "repository": str(repository.root),
            **head,
            "prompts_shown": repository.prompts,
            "total_entries": len(entries),
            "entries": entries[offset : offset + shown],
        }
        if offset + shown < len(entries):
            data["next_cursor"] = make_cursor("show", args, offset + shown)
        lines = [render.show_head(data)] + texts[offset : offset + shown]
        return Answer(render.answer(lines, data, "show"), data)

    def _entries(self, repository: Repository, session_id: str) -> list[dict[str, Any]]:
        """The session's requests, files and commands, as the show tool lists them."""
        from deja_blame.index import queries as Q
        from deja_blame.index.store import message_text

        row = Q.session_by_id(self.conn, session_id)
        if row is None:
            return []
        out: list[dict[str, Any]] = []
        for _step, text in Q.requests_of(self.conn, row.sid):
            shown = repository.request(message_text(text))
            out.append({"kind": "request", "text": cut(shown), "withheld": shown is None})
        files: dict[str, set[str]] = {}
        root = str(repository.root)
        for path, action in Q.paths_touched(self.conn, row.sid):
            # another machine's path (/home/alice/..., C:/Users/bob/...): the file of
            # this repository it stands for (its longest suffix that is one here), else
            # as it may leave (a home directory written ~: not this machine's)
            here = repository_path(path.replace("\\", "/"), root, _FilesHere(root))
            rel = [here] if here is not None else _repository_paths(root, [path])
            shown = repository.text(rel[0] if rel else path) or ""
            files.setdefault(shown, set()).add(action)
        for path, actions in files.items():
            out.append({"kind": "file", "path": path, "actions": sorted(actions)})
        for command, code, at in Q.commands_of(self.conn, row.sid):
            out.append(
                {
                    "kind": "command",
                    "command": cut(repository.text(command), 300),
                    "exit_code": code,
                    "at": at,
                }
            )
        return out


# --- the pieces ------------------------------------------------------------------------


def _runs(lines: list[LineAttribution]) -> list[list[LineAttribution]]:
    """Consecutive lines of one writer: the same session (or person's commit, or the
    working tree)."""
    out: list[list[LineAttribution]] = []
    for ln in lines:
        key = (ln.session, ln.commit if ln.session is None else None)
        if out:
            last = out[-1][-1]
            if last.line + 1 == ln.line and key == (
                last.session,
                last.commit if last.session is None else None,
            ):
                out[-1].append(ln)
                continue
        out.append([ln])
    return out


def _kind(ln: LineAttribution) -> str:
    if ln.session is not None:
        return "agent"
    return "uncommitted" if ln.commit is None else "person"


def _run_base(group: list[LineAttribution]) -> dict[str, Any]:
    ln = group[0]
    return {
        "start": ln.line,
        "end": group[-1].line,
        "kind": _kind(ln),
        "commit": ln.commit,
        "text": cut(ln.text.rstrip("\n"), 200),
    }


def _session_fields(
    repository: Repository, result: FileBlame, group: list[LineAttribution]
) -> dict[str, Any]:
    """The session of a run of lines; its confidence: ``editor.confidence``'s rule."""
    ln = group[0]
    sid = ln.session or ""
    info = result.sessions.get(sid)
    noted = result.note_sessions.get(sid) or {}
    fields: dict[str, Any] = {
        "session": sid,
        "agent": (info.source if info else None) or ln.source or noted.get("agent"),
        "model": (info.model if info else None) or noted.get("model"),
        "started_at": (info.started_at if info else None) or noted.get("started_at"),
        "confidence": run_confidence(group),
        "via": ln.via,
        "written_at": ln.written_at,
    }
    return fields


def _edit(repository: Repository, edit: dict[str, Any]) -> dict[str, Any]:
    budget = MAX_HUNK_LINES
    hunks = []
    for h in edit.get("hunks") or []:
        if budget <= 0:
            break
        removed = [repository.text(x) or "" for x in h.get("removed", [])[:budget]]
        budget -= len(removed)
        added = [repository.text(x) or "" for x in h.get("added", [])[: max(budget, 0)]]
        budget -= len(added)
        hunk = {
            "old_start": h.get("old_start"),
            "new_start": h.get("new_start"),
            "removed": removed,
            "added": added,
            # the hunk's own counts: its lines above are cut to the answer's budget,
            # and a header (``@@ -a,b +c,d @@``) counts them all
            "removed_count": len(h.get("removed", [])),
            "added_count": len(h.get("added", [])),
        }
        if h.get("placed_by_text"):
            hunk["placed_by_text"] = True
        hunks.append(hunk)
    total = sum(
        len(h.get("removed", [])) + len(h.get("added", [])) for h in edit.get("hunks") or []
    )
    return {
        "tool": edit.get("tool"),
        "model": edit.get("model"),
        "at": edit.get("at"),
        "hunks": hunks,
        "lines_left_out": max(0, total - MAX_HUNK_LINES),
    }


def _history(repository: Repository, history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "commit": v.get("commit"),
            "at": v.get("at"),
            "session": v.get("session"),
            "agent": v.get("agent"),
            "author": v.get("author"),
            "text": cut(repository.text(v.get("text") or ""), 200),
        }
        for v in history[-10:]
    ]


class _People:
    """A person's commit: author, date and subject, read once per answer."""

    def __init__(self, repository: Repository) -> None:
        self.repository = repository
        self.repo: Any = None
        self.seen: dict[str, dict[str, Any]] = {}

    def commit(self, sha: str) -> dict[str, Any]:
        if sha not in self.seen:
            self.seen[sha] = self._read(sha)
        return self.seen[sha]

    def _read(self, sha: str) -> dict[str, Any]:

        from deja_blame.gitutil import open_repository

        if self.repo is None:
            self.repo = open_repository(self.repository.root)
        try:
            c = self.repo[sha]
        except (KeyError, ValueError):
            return {}
        if not is_commit(c):
            return {}
        when = dt.datetime.fromtimestamp(c.author.time, tz=dt.timezone.utc)
        subject = c.message.splitlines()[0] if c.message else ""
        return {
            "author": c.author.name,
            "author_mail": c.author.email,
            "committed_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "summary": cut(self.repository.text(subject), 200),
        }


class _FilesHere:
    """``rel in files``: whether the repository at ``root`` has a file ``rel`` in its
    working tree (``clone_paths.repository_path`` asks it of a path's suffixes)."""

    def __init__(self, root: str) -> None:
        self.root = root

    def __contains__(self, rel: object) -> bool:
        if not isinstance(rel, str) or not rel or ".." in rel.split("/"):
            return False
        return os.path.isfile(os.path.join(self.root, rel))


def _repository_paths(root: str, paths: list[str]) -> list[str]:
    """The paths as the repository names them: under ``root``, relative to it; a path
    another machine or clone wrote (``/home/alice/shop/src/app.py``) as it was, its
    suffix matched against the repository's files by ``_touches``."""
    out: list[str] = []
    for p in paths:
        text = p.replace("\\", "/")
        if text.startswith(root.rstrip("/") + "/"):
            text = text[len(root.rstrip("/")) + 1 :]
        if text not in out:
            out.append(text)
    return out


def _under(path: str, prefix: str) -> bool:
    if not prefix:
        return True
    if path == prefix or path.startswith(prefix + "/"):
        return True
    # a path of another machine's clone: its repository-relative tail
    return path.endswith("/" + prefix) or ("/" + prefix + "/") in path


def _touches(files: list[str], prefix: str) -> bool:
    return not prefix or any(_under(f, prefix) for f in files)


def _searchable(s: dict[str, Any]) -> str:
    words = [s["session"], s["agent"] or "", s["model"] or "", s["first_request"] or ""]
    return " ".join([*words, *s["files"]]).lower()


_RELATIVE = re.compile(r"^(\d{1,5})\s*([hdw])$")


def _since(value: str | None) -> str | None:
    """An ISO time the sessions' start times compare with (``started_at`` is ISO 8601)."""
    if value is None or not value.strip():
        return None
    text = value.strip().lower()
    m = _RELATIVE.match(text)
    if m:
        hours = {"h": 1, "d": 24, "w": 24 * 7}[m.group(2)] * int(m.group(1))
        when = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=hours)
        return when.strftime("%Y-%m-%dT%H:%M:%S")
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise DejaError(f"'since' is {value!r}: give a date (2026-07-01) or 3d, 2w, 12h") from None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(dt.timezone.utc)
    return parsed.strftime("%Y-%m-%dT%H:%M:%S")


def _noted_sessions(repository: Repository) -> dict[str, dict[str, Any]]:
    """The sessions this repository's notes name, with the files they wrote (a
    reviewer's clone has these and no transcript)."""
    from deja_blame.gitutil import open_repository
    from deja_blame.notes.lookup import read_note
    from deja_blame.notes.store import note_blob_map, ref_target

    repo = open_repository(repository.root)
    out: dict[str, dict[str, Any]] = {}
    for commit in sorted(note_blob_map(repo, ref_target(repo))):
        note = read_note(repo, commit)
        if note is None:
            continue
        for path, per in note.files.items():
            for sid, ranges in per.items():
                info = note.sessions.get(sid, {})
                doc = out.setdefault(
                    sid,
                    {
                        "session": sid,
                        "agent": info.get("agent"),
                        "model": info.get("model"),
                        "started_at": info.get("started_at"),
                        "ended_at": None,
                        "project": info.get("project") or "-",
                        "first_request": cut(repository.text(info.get("first_prompt")), 300)
                        if isinstance(info.get("first_prompt"), str)
                        else None,
                        "edits": None,
                        "commands": None,
                        "files": [],
                        "from_notes": True,
                        "commits": {},
                    },
                )
                if path not in doc["files"]:
                    doc["files"].append(path)
                lines = sum(int(r[1]) - int(r[0]) + 1 for r in ranges)
                doc["commits"].setdefault(commit, {})[path] = lines
    for doc in out.values():
        doc["commits"] = [
            {"commit": c, "files": [{"path": p, "lines": n} for p, n in sorted(f.items())]}
            for c, f in sorted(doc["commits"].items())
        ]
    return out


def _noted_entries(head: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if head.get("first_request"):
        out.append({"kind": "request", "text": head["first_request"], "withheld": False})
    for item in head.get("commits") or []:
        for f in item["files"]:
            out.append(
                {"kind": "commit", "commit": item["commit"], "path": f["path"], "lines": f["lines"]}
            )
    return out
