"""The language server: one handler per LSP method, the work on one worker thread.

The reader thread (``serve``'s) only parses frames, records the buffers' text
and queues work, so the editor is never kept waiting behind a blame: a
``$/cancelRequest`` marks a queued request cancelled, a newer save or edit makes
an older load of the same file stale, and both are dropped when their turn
comes. The worker owns the index connection (SQLite connections stay on their
thread) and every open document; a timer thread looks for a new commit, new
notes or new transcript lines (with a connection of its own) and queues a poll
that reads what concerns the open files and refreshes the annotations.
"""

from __future__ import annotations

import os
import queue
import re
import sqlite3
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from deja_blame.attribution.explain import line_history_json, line_story
from deja_blame.attribution.model import LineAttribution
from deja_blame.editor.lsp import render
from deja_blame.editor.lsp.documents import Document, uri_to_path
from deja_blame.editor.lsp.protocol import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    REQUEST_CANCELLED,
    SERVER_NOT_INITIALIZED,
    ProtocolError,
    Writer,
    read_message,
)
from deja_blame.errors import DejaError
from deja_blame.gitcli import is_commit
from deja_blame.gitutil import open_repository
from deja_blame.session_ids import short

if TYPE_CHECKING:
    from deja_blame.index.prescan import Needle
    from deja_blame.transcripts.transcript_file import TranscriptFile

COMMANDS = ("deja.why", "deja.handoff")
POLL_SECONDS = 2.0  # how often a new commit, note or transcript line is looked for
POLL_ENV = "DEJA_LSP_POLL"  # seconds; 0 turns the poll off (tests drive it by saving)
# how long a hover waits for its line's history (git's log of one line: 30 ms to a
# second) before answering without it
HISTORY_WAIT_SECONDS = 15.0

# the requests answered on the worker thread (everything about a document's lines)
WORKER_REQUESTS = (
    "textDocument/codeLens",
    "textDocument/hover",
    "workspace/executeCommand",
    "deja/annotations",
)


def log(text: str) -> None:
    print(f"deja lsp: {text}", file=sys.stderr, flush=True)


class Server:
    def __init__(self, reader: IO[bytes], writer: IO[bytes], db: Path | None) -> None:
        self.reader = reader
        self.out = Writer(writer)
        self.db = db
        self.jobs: queue.Queue[tuple[Any, ...]] = queue.Queue()
        self.lock = threading.Lock()  # guards what both threads touch: below
        self.history_done = threading.Condition(self.lock)  # a line's history was read
        self.cancelled: set[Any] = set()
        # requests queued and not answered yet: only they can be cancelled (a cancel
        # that arrives after the answer is forgotten, not kept for ever, and never
        # cancels a later request that reuses the id)
        self.unanswered: set[Any] = set()
        self.texts: dict[str, str] = {}
        self.loads: dict[str, int] = {}  # uri -> the newest load asked for
        self.edits: dict[str, int] = {}  # uri -> the newest buffer change
        self.poll_queued = False
        self.states: dict[str, Any] = {}  # repository root -> (HEAD, notes) last blamed at
        # the worker's own
        self.docs: dict[str, Document] = {}
        self.conn: sqlite3.Connection | None = None
        self.stories: dict[tuple[str, int], dict[str, Any]] = {}  # (uri, saved line)
        self.histories: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.history_queued: set[tuple[str, int]] = set()
        self.repos: dict[str, Any] = {}
        self.here: dict[str, bool] = {}  # session id -> its transcript is in the index
        self.indexed: int | None = None  # the index's transcripts as the last poll saw them
        self.initialized = False
        self.shutdown = False
        self.lens_refresh = False
        self.show_document = False  # the client opens a document the server names
        self.stopping = threading.Event()
        self.worker = threading.Thread(target=self._work, name="deja-lsp-worker", daemon=True)
        # the lines' histories: a thread (and an index connection) of their own, so
        # a hover never waits behind another line's git log
        self.history_jobs: queue.Queue[tuple[Any, ...] | None] = queue.Queue()
        self.db_path: Path | None = None

    # --- the reader thread -------------------------------------------------------

    def run(self) -> int:
        """Serve until ``exit`` or the end of input: 0 after a ``shutdown``, else 1."""
        self.worker.start()
        threading.Thread(target=self._history_work, name="deja-lsp-history", daemon=True).start()
        try:
            while True:
                try:
                    msg = read_message(self.reader)
                except ProtocolError as exc:
                    log(f"giving up: {exc}")
                    break
                if msg is None:
                    break
                if msg.get("_parse_error"):
                    self.out.error(None, -32700, "the message is not JSON")
                    continue
                if msg.get("method") == "exit":
                    break
                try:
                    self._dispatch(msg)
                except Exception as exc:  # noqa: BLE001 - a mistyped message must not end the server
                    log(
                        f"ignored a bad {str(msg.get('method'))[:80]!r} message: {type(exc).__name__}"
                    )
                    if msg.get("id") is not None and msg.get("method") is not None:
                        self.out.error(
                            msg.get("id"), INVALID_PARAMS, "the parameters are not well formed"
                        )
        finally:
            self.stopping.set()
            self.jobs.put(("stop",))
            self.history_jobs.put(None)
            self.worker.join(timeout=5)
        return 0 if self.shutdown else 1

    def _dispatch(self, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        msg_id = msg.get("id")
        params = msg.get("params") or {}
        if method is None:
            return  # a client's answer to our refresh request
        if method == "initialize":
            self._initialize(msg_id, params)
            return
        if not self.initialized:
            if msg_id is not None:
                self.out.error(msg_id, SERVER_NOT_INITIALIZED, "initialize first")
            return
        if self.shutdown and msg_id is not None:
            self.out.error(msg_id, INVALID_REQUEST, "the server is shutting down")
            return
        if method == "initialized":
            self.jobs.put(("start",))
            seconds = float(os.environ.get(POLL_ENV) or POLL_SECONDS)
            if seconds > 0:
                threading.Thread(target=self._timer, args=(seconds,), daemon=True).start()
        elif method == "shutdown":
            self.shutdown = True
            self.out.reply(msg_id, None)
        elif method == "$/cancelRequest":
            with self.lock:
                if params.get("id") in self.unanswered:
                    self.cancelled.add(params.get("id"))
        elif method in ("textDocument/didOpen", "textDocument/didChange"):
            self._buffer(method, params)
        elif method == "textDocument/didSave":
            uri = params.get("textDocument", {}).get("uri", "")
            if isinstance(params.get("text"), str):
                with self.lock:
                    self.texts[uri] = params["text"]
            self._queue_load(uri)
        elif method == "textDocument/didClose":
            uri = params.get("textDocument", {}).get("uri", "")
            with self.lock:
                self.texts.pop(uri, None)
            self.jobs.put(("close", uri))
        elif method in WORKER_REQUESTS and msg_id is not None:
            with self.lock:
                self.unanswered.add(msg_id)
            self.jobs.put(("request", msg_id, method, params))
        elif msg_id is not None:
            self.out.error(msg_id, METHOD_NOT_FOUND, f"deja lsp does not serve {method}")

    def _initialize(self, msg_id: Any, params: dict[str, Any]) -> None:
        caps = params.get("capabilities") or {}
        workspace = caps.get("workspace") or {}
        self.lens_refresh = bool((workspace.get("codeLens") or {}).get("refreshSupport"))
        window = caps.get("window") or {}
        self.show_document = bool((window.get("showDocument") or {}).get("support"))
        self.initialized = True
        from deja_blame import __version__

        self.out.reply(
            msg_id,
            {
                "capabilities": {
                    # whole buffers: the mapping diffs the saved file against the buffer
                    "textDocumentSync": {"openClose": True, "change": 1, "save": {}},
                    "codeLensProvider": {"resolveProvider": False},
                    "hoverProvider": True,
                    "executeCommandProvider": {"commands": list(COMMANDS)},
                },
                "serverInfo": {"name": "deja", "version": __version__},
            },
        )

    def _buffer(self, method: str, params: dict[str, Any]) -> None:
        doc = params.get("textDocument") or {}
        uri = doc.get("uri", "")
        with self.lock:
            if method == "textDocument/didOpen":
                self.texts[uri] = doc.get("text") or ""
            else:
                text = self.texts.get(uri, "")
                for change in params.get("contentChanges") or []:
                    text = _apply(text, change)
                self.texts[uri] = text
            self.edits[uri] = self.edits.get(uri, 0) + 1
            seq = self.edits[uri]
        if method == "textDocument/didOpen":
            self._queue_load(uri)
        else:
            self.jobs.put(("remap", uri, seq))

    def _queue_load(self, uri: str) -> None:
        with self.lock:
            self.loads[uri] = self.loads.get(uri, 0) + 1
            n = self.loads[uri]
        self.jobs.put(("load", uri, n))

    def _timer(self, seconds: float) -> None:
        """Look for what changed off the worker (a stat of every transcript and two
        git calls per repository take tens of milliseconds with a thousand
        sessions: a hover must not wait behind them); the worker gets a poll job
        saying what it has to read and blame again."""
        conn: sqlite3.Connection | None = None
        seen: frozenset[tuple[Any, ...]] = frozenset()  # transcripts unread at the last look
        try:
            while not self.stopping.wait(seconds):
                if not self.docs:
                    continue
                grown = False
                changed: dict[tuple[Any, ...], TranscriptFile] = {}
                if self.db_path is not None:
                    try:
                        if conn is None:
                            from deja_blame.index.db import connect

                            conn = connect(self.db_path)
                        changed = unread_transcripts(conn)
                        unread = frozenset(changed)
                        # new or grown since the last look (one the index has read since
                        # simply leaves the set: nothing to read for it)
                        grown = bool(unread - seen)
                        seen = unread
                    except (sqlite3.Error, DejaError, OSError) as exc:
                        log(f"could not look for new transcripts ({exc})")
                with self.lock:
                    roots = list(self.states)
                states = {root: _state_of(root) for root in roots}
                with self.lock:
                    if self.poll_queued:
                        continue
                    self.poll_queued = True
                # the worker reads these without a second stat of every transcript
                self.jobs.put(("poll", grown, states, list(changed.values()) if grown else None))
        finally:
            if conn is not None:
                conn.close()

    # --- the worker thread -------------------------------------------------------

    def _work(self) -> None:
        while True:
            job = self.jobs.get()
            kind = job[0]
            if kind == "stop":
                break
            try:
                self._job(job)
            except Exception:  # one bad file must not end the server
                log("unexpected error:\n" + traceback.format_exc())
                if kind == "request":
                    with self.lock:
                        self.unanswered.discard(job[1])
                        self.cancelled.discard(job[1])
                    self.out.error(
                        job[1], INTERNAL_ERROR, "deja lsp: unexpected error (see its log)"
                    )
        if self.conn is not None:
            self.conn.close()

    def _job(self, job: tuple[Any, ...]) -> None:
        kind = job[0]
        if kind == "start":
            self._start()
        elif kind == "load":
            _, uri, n = job
            with self.lock:
                stale = self.loads.get(uri) != n
                text = self.texts.get(uri)
            if not stale:  # a newer save or open of this file is queued: that one loads
                self._load(uri, text)
        elif kind == "remap":
            _, uri, seq = job
            with self.lock:
                stale = self.edits.get(uri) != seq
                text = self.texts.get(uri)
            doc = self.docs.get(uri)
            if not stale and doc is not None:
                doc.text = text
                doc.remap()
                if doc.changed_on_disk():
                    # the editor reloaded the file from disk (a commit, a checkout, a
                    # formatter): blame it again now, not at the next poll
                    self._load(uri, text)
                    self._tell_refreshed([uri])
        elif kind == "close":
            self.docs.pop(job[1], None)
        elif kind == "poll":
            with self.lock:
                self.poll_queued = False
            self._poll(job[1], job[2], job[3] if len(job) > 3 else None)
        elif kind == "request":
            _, msg_id, method, params = job
            with self.lock:
                cancelled = msg_id in self.cancelled
                self.cancelled.discard(msg_id)
                if cancelled:
                    self.unanswered.discard(msg_id)
            if cancelled:
                self.out.error(msg_id, REQUEST_CANCELLED, "cancelled")
                return
            result = self._answer(method, params)
            with self.lock:
                cancelled = msg_id in self.cancelled
                self.cancelled.discard(msg_id)
                self.unanswered.discard(msg_id)
            if cancelled:
                self.out.error(msg_id, REQUEST_CANCELLED, "cancelled")
            else:
                self.out.reply(msg_id, result)

    def _start(self) -> None:
        """Open the index. New transcripts are read per file as it is opened (``_refresh``):
        all of them at once would keep the first lenses waiting on every other
        project's sessions (minutes for a heavy user)."""
        from deja_blame.index.db import connect, default_db_path
        from deja_blame.index.queries import transcript_stats

        path = self.db or default_db_path()
        try:
            self.conn = connect(path, notice=log)
            self.db_path = path
            self.indexed = hash(frozenset(transcript_stats(self.conn).items()))
        except (sqlite3.Error, DejaError, OSError) as exc:
            # a reviewer's clone still has its notes: serve from them
            log(f"no index ({exc}); annotations come from the repository's notes only")
            self.conn = None

    def _refresh(self, path: Path | None) -> None:
        """Read the new transcripts that can concern ``path``'s repository, as ``deja
        blame FILE`` does before it answers (``prescan``: by bytes, memoised); the
        others are left to ``deja index`` and the post-commit hook. Nothing outside
        a repository: there every new transcript would be read."""
        from deja_blame.index.prescan import concern_of

        if path is not None:
            self._read_new(concern_of(path))

    def _read_new(
        self, concern: tuple[Needle, ...] | None, changed: list[TranscriptFile] | None = None
    ) -> None:
        from deja_blame.index.refresh import refresh_index

        if self.conn is None or concern is None:
            return
        try:
            refresh_index(self.conn, concern=concern, changed=changed)
        except (sqlite3.Error, DejaError, OSError) as exc:
            log(f"could not read new transcripts ({exc})")
        self.here.clear()

    def _refresh_open(self, changed: list[TranscriptFile] | None = None) -> None:
        """``_refresh`` for every open file, one search per repository (its root and
        all its open files' paths as needles): prescan remembers a transcript found
        to hold none per set of needles, so the poll re-reads only what grew."""
        from deja_blame.index.prescan import needles_for

        by_root: dict[str, set[str]] = {}
        for doc in self.docs.values():
            if doc.blame is not None:
                by_root.setdefault(doc.blame.root, set()).add(doc.blame.path)
        for root, rels in sorted(by_root.items()):
            self._read_new(needles_for(Path(root), sorted(rels)), changed)

    def _load(self, uri: str, text: str | None, refresh: bool = True) -> None:
        doc = self.docs.get(uri) or Document(uri, uri_to_path(uri))
        if refresh:
            self._refresh(doc.path)
        doc.text = text
        doc.load(self.conn)
        if doc.problem:
            log(f"{uri}: no annotations ({doc.problem})")
        self.docs[uri] = doc
        self.stories = {k: v for k, v in self.stories.items() if k[0] != uri}
        with self.lock:
            self.histories = {k: v for k, v in self.histories.items() if k[0] != uri}
            self.history_queued = {k for k in self.history_queued if k[0] != uri}
        if doc.blame is not None:
            root = doc.blame.root
            now = _state_of(root)
            with self.lock:
                before = self.states.get(root, now)
                self.states[root] = now
            if now != before:  # a commit or new notes since: the root's other files too
                others = sorted(
                    u for u, d in self.docs.items() if u != uri and d.blame and d.blame.root == root
                )
                for other in others:
                    with self.lock:
                        other_text = self.texts.get(other)
                    self._load(other, other_text, refresh=False)
                if others:
                    self._tell_refreshed(others)

    def _poll(
        self, grown: bool, states: dict[str, Any], changed: list[TranscriptFile] | None = None
    ) -> None:
        """Blame again what a new commit, new notes or new transcript lines changed
        (``states``: each repository's HEAD and notes as the timer found them)."""
        stale: set[str] = set()
        for root, now in states.items():
            with self.lock:
                seen = self.states.get(root)
            if root in self.states and now != seen:
                stale |= {u for u, d in self.docs.items() if d.blame and d.blame.root == root}
        if self.conn is not None and self.docs:
            from deja_blame.index.queries import transcript_stats

            try:
                if grown:  # a transcript new or grown: read what concerns the open files
                    self._refresh_open(changed)
                # the index read something (here, or `deja index` and the hook elsewhere)
                indexed = hash(frozenset(transcript_stats(self.conn).items()))
                if self.indexed is not None and indexed != self.indexed:
                    stale |= set(self.docs)
                self.indexed = indexed
            except sqlite3.Error as exc:
                log(f"could not read the index ({exc})")
        if not stale:
            return
        for uri in sorted(stale):
            with self.lock:
                text = self.texts.get(uri)
            self._load(uri, text, refresh=False)  # read above
        self._tell_refreshed(sorted(stale))

    def _tell_refreshed(self, uris: list[str]) -> None:
        if self.lens_refresh:
            self.out.send(
                {"id": f"deja-refresh-{id(uris)}", "method": "workspace/codeLens/refresh"}
            )
        self.out.notify("deja/annotationsChanged", {"uris": uris})

    # --- the answers ---------------------------------------------------------------

    def _answer(self, method: str, params: dict[str, Any]) -> Any:
        if method == "workspace/executeCommand":
            return self._command(params.get("command"), params.get("arguments") or [])
        uri = (params.get("textDocument") or {}).get("uri", "")
        doc = self.docs.get(uri)
        if doc is None:
            with self.lock:
                text = self.texts.get(uri)
            self._load(uri, text)  # asked before it was opened (some clients do)
            doc = self.docs[uri]
        if method == "textDocument/codeLens":
            return self._lenses(doc)
        if method == "deja/annotations":
            return self._annotations(doc)
        line = int((params.get("position") or {}).get("line", -1))
        return self._hover(doc, line)

    def _lenses(self, doc: Document) -> list[dict[str, Any]]:
        out = []
        for run in render.runs(doc.lines):
            where = {
                "start": {"line": run.start, "character": 0},
                "end": {"line": run.start, "character": 0},
            }
            args = [doc.uri, run.start]
            out.append(
                {
                    "range": where,
                    "command": {
                        "title": run.title,
                        "command": "deja.why",
                        "arguments": args,
                    },
                }
            )
            if self._transcript_here(run.line):
                out.append(
                    {
                        "range": where,
                        "command": {
                            "title": "hand off",
                            "command": "deja.handoff",
                            "arguments": args,
                        },
                    }
                )
        return out

    def _transcript_here(self, ln: LineAttribution) -> bool:
        """Whether the session's transcript is indexed here, so it can be handed off.
        A line read from a note may be one: in the author's own clone (hooks
        installed) every committed line is read from its note first."""
        if ln.via != "note":
            return True
        sid = ln.session or ""
        if sid not in self.here:
            from deja_blame.index.store import resolve_session_id

            try:
                self.here[sid] = self.conn is not None and resolve_session_id(self.conn, sid) == sid
            except (DejaError, sqlite3.Error):
                self.here[sid] = False
        return self.here[sid]

    def _annotations(self, doc: Document) -> dict[str, Any]:
        colours: dict[str, int] = {}
        out = []
        for run in render.runs(doc.lines):
            colour = colours.setdefault(run.line.session or "", len(colours))
            out.append(run.to_json(colour))
        return {"uri": doc.uri, "runs": out}

    def _hover(self, doc: Document, line: int) -> dict[str, Any] | None:
        if doc.blame is None or not 0 <= line < len(doc.lines):
            return None
        ln = doc.line(line)
        if ln is None:
            text = render.unsaved_hover()
        elif ln.session:
            story = {**self._story(doc, ln), "history": self._history(doc, ln)}
            noted = doc.blame.note_sessions.get(ln.session) or {}
            request = (
                noted.get("first_prompt") if isinstance(noted.get("first_prompt"), str) else None
            )
            text = render.agent_hover(doc.blame, ln, story, request)
            if story["history"] is None and self.db_path is not None:
                text += "\n\n*the line's history took too long to read: hover again for it*"
        elif ln.commit is None:
            text = render.uncommitted_hover()
        else:
            text = self._person(doc.blame.root, ln.commit)
        return {
            "contents": {"kind": "markdown", "value": text},
            "range": {
                "start": {"line": line, "character": 0},
                "end": {"line": line + 1, "character": 0},
            },
        }

    def _story(self, doc: Document, ln: LineAttribution) -> dict[str, Any]:
        """``deja why``'s answer for the line but its history (index queries: a few
        milliseconds), kept until the file is blamed again."""
        key = (doc.uri, ln.line)
        if key not in self.stories:
            if self.conn is None or doc.blame is None:
                return {}
            self.stories[key] = line_story(self.conn, doc.blame, ln, with_history=False)
        return self.stories[key]

    def _history(self, doc: Document, ln: LineAttribution) -> list[dict[str, Any]] | None:
        """The line's history, read on the history thread (its own index connection)
        and waited for, so the first hover answers in full; None if it is not read
        within ``HISTORY_WAIT_SECONDS`` (then a later hover has it)."""
        key = (doc.uri, ln.line)
        with self.lock:
            if key in self.histories:
                return self.histories[key]
            if doc.blame is None or self.db_path is None:
                return None
            if key not in self.history_queued:
                self.history_queued.add(key)
                self.history_jobs.put((key, doc.blame, ln))
            deadline = time.monotonic() + HISTORY_WAIT_SECONDS
            while key in self.history_queued and key not in self.histories:
                left = deadline - time.monotonic()
                if left <= 0 or self.stopping.is_set():
                    break
                self.history_done.wait(left)
            return self.histories.get(key)

    def _history_work(self) -> None:
        conn: sqlite3.Connection | None = None
        while (job := self.history_jobs.get()) is not None:
            key, blame, ln = job
            with self.lock:
                doc = self.docs.get(key[0])
                if doc is None or doc.blame is not blame:
                    self.history_queued.discard(key)
                    self.history_done.notify_all()
                    continue  # blamed again since: a hover asks anew
            try:
                if conn is None:
                    from deja_blame.index.db import connect

                    assert self.db_path is not None
                    conn = connect(self.db_path)
                found = line_history_json(conn, blame, ln)
            except Exception:
                log("could not read a line's history:\n" + traceback.format_exc())
                found = []
            with self.lock:
                doc = self.docs.get(key[0])
                if key in self.history_queued and doc is not None and doc.blame is blame:
                    self.histories[key] = found
                self.history_queued.discard(key)
                self.history_done.notify_all()
        if conn is not None:
            conn.close()

    def _person(self, root: str, commit: str) -> str:
        repo = self.repos.get(root)
        if repo is None:
            repo = self.repos[root] = open_repository(Path(root))
        try:
            c = repo[commit]
        except (KeyError, ValueError):
            return f"commit `{commit[:12]}`"
        assert is_commit(c)
        summary = c.message.splitlines()[0] if c.message else ""
        return render.person_hover(commit, c.author.name, c.author.email, c.author.time, summary)

    def _command(self, command: Any, args: list[Any]) -> Any:
        if command not in COMMANDS or len(args) < 2:
            raise_text = f"{command}: expected arguments [uri, line]"
            self.out.notify("window/showMessage", {"type": 2, "message": f"deja: {raise_text}"})
            return None
        uri, line = str(args[0]), int(args[1])
        doc = self.docs.get(uri)
        ln = doc.line(line) if doc is not None else None
        if doc is None or doc.blame is None or ln is None or not ln.session:
            self.out.notify(
                "window/showMessage", {"type": 3, "message": "deja: no session wrote this line"}
            )
            return None
        if command == "deja.why":
            story = line_story(self.conn, doc.blame, ln) if self.conn else self._story(doc, ln)
            self.out.notify("window/showMessage", {"type": 3, "message": _why_summary(story)})
            return story
        return self._handoff(doc, ln)

    def _handoff(self, doc: Document, ln: LineAttribution) -> dict[str, Any] | None:
        from deja_blame.index.store import load_session, resolve_session_id
        from deja_blame.outputs.handoff_prompt import build_prompt

        if self.conn is None or doc.blame is None or ln.session is None:
            return None
        try:
            sid = resolve_session_id(self.conn, ln.session)
        except DejaError:
            self.out.notify(
                "window/showMessage",
                {
                    "type": 2,
                    "message": "deja: the session's transcript is not on this machine: nothing to hand off",
                },
            )
            return None
        session = load_session(self.conn, sid)
        prompt = build_prompt(session, Path(doc.blame.root))
        command = f"deja handoff --session {short(sid)} --to <agent>"
        path = _write_prompt(sid, prompt)
        # the lens says "hand off": open the prompt the next agent would start on
        # (an editor that cannot open documents for a server gets its path)
        if path is not None and self.show_document:
            self.out.send(
                {
                    "id": f"deja-show-{short(sid)}-{time.monotonic_ns()}",
                    "method": "window/showDocument",
                    "params": {"uri": path.as_uri(), "takeFocus": True},
                }
            )
        where = f"in {path}" if path is not None else "not written (see deja lsp's log)"
        self.out.notify(
            "window/showMessage",
            {
                "type": 3,
                "message": f"deja: the hand-off prompt of session {short(sid)} is {where};"
                f" start an agent on it in a terminal: {command}",
            },
        )
        return {
            "session": sid,
            "agent": session.source,
            "prompt": prompt,
            "path": str(path) if path is not None else None,
            "command": command,
        }


def handoff_dir() -> Path:
    """Where the editor's hand-off prompts are written: deja's state folder (XDG)."""
    from deja_blame.statefile import state_dir

    return state_dir() / "handoff"


def _write_prompt(sid: str, prompt: str) -> Path | None:
    """The prompt in a file of its own (0600, in 0700 folders: it quotes transcripts),
    written beside and renamed over, never through a link; None if it cannot be."""
    from deja_blame.statefile import write_bytes

    folder = handoff_dir()
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        # a session id comes from a transcript: only its safe characters name a file
        path = folder / (re.sub(r"[^A-Za-z0-9_-]", "_", sid)[:100] + ".md")
        write_bytes(path, prompt.encode("utf-8", "surrogateescape"), mode=0o600)
    except OSError as exc:
        log(f"could not write the hand-off prompt ({exc})")
        return None
    return path


def unread_transcripts(conn: sqlite3.Connection) -> dict[tuple[Any, ...], TranscriptFile]:
    """The transcripts the index has not read as they are now (a stat each), by
    (session, path, stat)."""
    from deja_blame.index.changes import changed_transcripts
    from deja_blame.transcripts.antigravity.discover import discover_roots

    out: dict[tuple[Any, ...], TranscriptFile] = {}
    for tf in changed_transcripts(conn, discover_roots()):
        try:
            out[(tf.session_id, str(tf.path), *tf.stat_key())] = tf
        except OSError:
            continue
    return out


def _state_of(root: str) -> tuple[str | None, str] | None:
    """A repository's HEAD and notes tips: a change means a commit or new notes."""
    from deja_blame.attribution.cache import repo_state

    state = repo_state(Path(root))
    return (state.head, state.notes) if state else None


def _why_summary(story: dict[str, Any]) -> str:
    from deja_blame.output import agent_word, shorten, terminal
    from deja_blame.outputs.redact import redact

    sid = terminal(story.get("session") or "")
    info = story.get("session_info") or {}
    text = f"deja: line {story.get('line')} written by session {sid} ({agent_word(info.get('agent') or '?')})"
    prompt = story.get("prompt")
    if prompt:
        text += ", asked: " + shorten(redact(terminal(prompt["text"])), 200)
    return text


def _apply(text: str, change: dict[str, Any]) -> str:
    """One ``contentChanges`` entry applied to ``text`` (whole text, or a range)."""
    if "range" not in change:
        return str(change.get("text") or "")
    lines = text.split("\n")

    def offset(pos: dict[str, int]) -> int:
        n = min(pos.get("line", 0), len(lines))
        return sum(len(x) + 1 for x in lines[:n]) + pos.get("character", 0)

    a, b = offset(change["range"]["start"]), offset(change["range"]["end"])
    return text[:a] + str(change.get("text") or "") + text[b:]


def serve(db: Path | None = None) -> int:
    """Serve LSP on stdin/stdout; anything else printing goes to stderr."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the protocol stream
    return Server(stdin, stdout, db).run()
