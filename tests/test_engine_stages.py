"""The attribution engine's two stages keep apart (docs/engine.md).

Stage 1 (``attribution/facts/``) asks git and the index; stage 2
(``attribution/match/``) decides from what it is given. The matcher's modules
import nothing that runs git, reads SQLite or starts a thread, and a source of
plain dicts drives the whole matcher, moves and git-ai's notes included.
"""

from __future__ import annotations

import ast
from pathlib import Path

from deja_blame.attribution.facts.edits import SessionEdits
from deja_blame.attribution.facts.model import (
    BlameLine,
    FileFacts,
    LineTexts,
    WriteSet,
    WrittenTexts,
)
from deja_blame.attribution.facts.notes_state import gitai_authors
from deja_blame.attribution.facts.rule_facts import RuleFacts
from deja_blame.attribution.facts.versions import FileHistory
from deja_blame.attribution.match import from_git_ai, match_file
from deja_blame.attribution.model import LineAttribution
from deja_blame.index.fingerprint import fingerprint, normalise_line

PACKAGE = Path(__file__).resolve().parents[1] / "deja_blame"
MATCH = PACKAGE / "attribution" / "match"

# What a rule may import at run time: the standard library's pure parts, the plain
# data both stages share, the answer's model and the text fingerprints.
ALLOWED_DEJA = {
    "deja_blame.attribution.facts.model",
    "deja_blame.attribution.model",
    "deja_blame.index.fingerprint",
}
FORBIDDEN_STDLIB = {"sqlite3", "subprocess", "threading", "multiprocessing", "os", "pygit2"}


def _runtime_imports(path: Path) -> set[str]:
    """The modules a file imports outside ``if TYPE_CHECKING:`` blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in ast.walk(node):
                typing_only.add(id(inner))
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


def test_the_matcher_stage_imports_nothing_that_runs_git_or_reads_the_index() -> None:
    modules = sorted(MATCH.glob("*.py"))
    assert len(modules) >= 5  # lines, window, reflow, moves and the stage's entry
    for path in modules:
        for name in _runtime_imports(path):
            top = name.split(".")[0]
            assert top not in FORBIDDEN_STDLIB, f"{path.name} imports {name}"
            if top == "deja_blame":
                assert name in ALLOWED_DEJA or name.startswith("deja_blame.attribution.match"), (
                    f"{path.name} imports {name}: ask the facts stage (facts/source.py)"
                )


def test_only_the_facts_stage_runs_git_or_reads_the_index_among_the_engine_s_modules() -> None:
    # the modules that may: the facts stage, and the cache/answer/api layer above it
    facts = PACKAGE / "attribution" / "facts"
    for path in sorted(facts.glob("*.py")):
        if path.name == "model.py":
            continue
        assert "deja_blame.attribution.match" not in " ".join(_runtime_imports(path)), path.name
    # the plain data modules import neither stage's workers: the edits behind the
    # writes are read through the functions the facts stage gives them
    assert _runtime_imports(facts / "edits.py") <= {
        "__future__",
        "collections.abc",
        "dataclasses",
        "typing",
        "deja_blame.attribution.facts.model",
        "deja_blame.index.fingerprint",
    }
    assert _runtime_imports(facts / "model.py") <= {
        "__future__",
        "bisect",
        "collections",
        "collections.abc",
        "dataclasses",
        "typing",
        "deja_blame.attribution.model",
        "deja_blame.index.fingerprint",
    }


class PlainSource:
    """Everything the rules are given or may ask, from dicts: no git, no index."""

    def __init__(self, names: dict[int, tuple[str, str]], texts: dict[tuple[int, int], list[str]]):
        self.names = names
        self.texts = texts
        self.asked: list[str] = []

    def for_rules(
        self, lines: list[LineAttribution], writes: WriteSet, paths: dict[int, bool]
    ) -> RuleFacts:
        """What stage 1 gives the rules (``FactSource.for_rules``), from the dicts."""
        history = FileHistory("/nowhere", {ln.orig_path or "" for ln in lines}, None)
        history._loaded = True  # nothing to read: the file has no earlier version
        # the texts written to the paths, as a question about many files has them at hand
        written = WrittenTexts.of(normalise_line(t) for added in self.texts.values() for t in added)
        edits = self.session_edits(writes, paths)
        return RuleFacts(edits, history, None, self, written=written)

    def session_edits(self, writes: WriteSet, paths: dict[int, bool]) -> SessionEdits:
        """Each (session, edit) of ``texts`` as one timed whole-file write of path 1:
        its lines land where they are listed."""
        rows = [
            (sid, edit, edit, 1, 1, 1.0, 1, [[], added, None, None])
            for (sid, edit), added in sorted(self.texts.items())
        ]
        return SessionEdits(
            path_ids=sorted(paths),
            fetch=lambda sids, pids: [r for r in rows if r[0] in sids and r[6] in pids],
            fetch_edit=lambda sid, edit: next((r for r in rows if r[:2] == (sid, edit)), None),
            decode=lambda body: body,
        )

    def belongs(self, sid: int) -> bool | None:
        return True

    def wrote_outside_from_here(self, sid: int, path_ids: list[int]) -> bool:
        return False

    def session_names(self, sids: set[int]) -> dict[int, tuple[str, str]]:
        self.asked.append("session_names")
        return {sid: self.names[sid] for sid in sids if sid in self.names}

    def load_writes(self, paths: dict[int, bool], fps: object, **_: object) -> WriteSet:
        self.asked.append("load_writes")
        return WriteSet()

    def written_elsewhere(self, skip: set[int], fps: set[int]):  # type: ignore[no-untyped-def]
        self.asked.append("written_elsewhere")
        return {}, {}

    def written_texts(self, paths: dict[int, bool]) -> WrittenTexts:
        """Stage 1 gives the rules the texts written (``RuleFacts.written``): a rule
        asking them is noted."""
        self.asked.append("written_texts")
        return WrittenTexts.of(normalise_line(t) for added in self.texts.values() for t in added)

    def close(self) -> None:
        pass


def _facts(texts: list[str], commit_time: int, writes: WriteSet) -> FileFacts:
    blamed = [BlameLine(i + 1, "c" * 40, commit_time, "app.py", i + 1) for i in range(len(texts))]
    lines = [
        LineAttribution(line=i + 1, text=t, commit="c" * 40, commit_time=commit_time)
        for i, t in enumerate(texts)
    ]
    return FileFacts(
        path="app.py",
        root="/nowhere",
        commit="c" * 40,
        total_lines=len(texts),
        lines=lines,
        blamed=blamed,
        texts=LineTexts.of(texts),
        writes=writes,
        paths={1: True},
        rev_time=float(commit_time),
    )


FILE = [
    "import os",
    "",
    "def total(order):",
    "    subtotal = sum(i.price for i in order.items)",
    "    return round(subtotal * 1.2, 2)",
    "",
    "print(total(ORDER))",
]
AGENT = FILE[2:5]  # what the session wrote (edit 0 of session 7)


def _writes(at: float) -> WriteSet:
    ws = WriteSet()
    rows = [(1, fingerprint(t), 7, 0, i, at, 0) for i, t in enumerate(AGENT)]
    ws.add_rows(sorted(rows, key=lambda r: r[:5]), {1: True})
    return ws


def test_a_plain_data_source_drives_the_matcher_to_the_session_that_wrote_the_lines() -> None:
    source = PlainSource({7: ("s-7", "claude-code")}, {(7, 0): AGENT})
    facts = _facts(FILE, commit_time=10_000, writes=_writes(at=9_000.0))
    match_file(facts, source.for_rules(facts.lines, facts.writes, facts.paths))
    got = [(ln.session, ln.source, ln.via) for ln in facts.lines]
    agent = ("s-7", "claude-code", "index")
    person = (None, None, None)
    assert got == [person, person, agent, agent, agent, person, person]
    assert source.asked == ["session_names"]  # given the rest: they asked the winners' names


def test_a_write_after_the_commit_is_no_evidence_for_it() -> None:
    source = PlainSource({7: ("s-7", "claude-code")}, {(7, 0): AGENT})
    facts = _facts(FILE, commit_time=10_000, writes=_writes(at=20_000.0))
    match_file(facts, source.for_rules(facts.lines, facts.writes, facts.paths))
    assert all(ln.session is None for ln in facts.lines)


def test_a_line_a_note_gave_keeps_it_and_git_ai_fills_what_is_left() -> None:
    class Who:
        key, agent, human = "gitai-1", "cursor", False

        def info(self) -> dict[str, str]:
            return {"agent": "cursor"}

    source = PlainSource({7: ("s-7", "claude-code")}, {(7, 0): AGENT})
    facts = _facts(FILE, commit_time=10_000, writes=_writes(at=9_000.0))
    facts.lines[2].session, facts.lines[2].via, facts.lines[2].source = "noted", "note", "codex"
    facts.gitai = lambda commit, path, line: Who() if line == 7 else None
    facts.gitai_confidence = 0.5
    match_file(facts, source.for_rules(facts.lines, facts.writes, facts.paths))
    from_git_ai(facts, gitai_authors(facts))
    assert (facts.lines[2].session, facts.lines[2].via) == ("noted", "note")
    assert (facts.lines[3].session, facts.lines[3].via) == ("s-7", "index")
    assert (facts.lines[6].session, facts.lines[6].via, facts.lines[6].confidence) == (
        "gitai-1",
        "git-ai",
        0.5,
    )
    assert facts.note_sessions["gitai-1"] == {"agent": "cursor"}


def test_git_ai_s_notes_are_read_by_stage_1_and_the_matcher_reads_what_it_is_given() -> None:
    def reads_git(commit: str, path: str, line: int) -> None:
        raise AssertionError("the matcher read git-ai's notes itself")

    facts = _facts(FILE, commit_time=10_000, writes=_writes(at=9_000.0))
    facts.gitai = reads_git
    from_git_ai(facts, {})
    assert all(ln.session is None for ln in facts.lines)


def test_without_a_source_only_the_notes_answer() -> None:
    facts = _facts(FILE, commit_time=10_000, writes=_writes(at=9_000.0))
    match_file(facts, None)
    assert all(ln.session is None for ln in facts.lines)


def test_a_session_before_the_file_s_history_keeps_it_only_where_it_made_the_first_version() -> (
    None
):
    from deja_blame.attribution.match.before_history import strangers_before_history

    ws = WriteSet()
    rows = [
        (1, 11, 1, 0, 0, 100.0, 0),  # an old project's session, long before the history
        (1, 11, 2, 0, 0, 100.0, 0),  # the session that scaffolded the file
        (1, 11, 3, 0, 0, 300_000.0, 0),  # a session after the first commit
        (1, 11, 4, 0, 0, 196_400.0, 0),  # an hour before it: this project's scaffolding
    ]
    ws.add_rows(rows, {1: True})
    left = {1: {11, 12, 13, 14}, 2: {11, 12, 13, 14}, 3: {11, 99}, 4: {11, 97, 98, 99}}
    first = frozenset({11, 12, 13})

    def run(first_version: frozenset[int] | None) -> set[int]:
        return strangers_before_history(
            {1, 2, 3, 4}, ws, 200_000.0, lambda: first_version, lambda sid: left[sid]
        )

    left[1] = {11, 20, 21, 22}  # the old project's lines: one of four is here
    assert run(first) == {1}
    assert run(None) == set()  # the first version unread: nothing says so
    assert strangers_before_history({1, 2}, ws, None, lambda: first, lambda s: left[s]) == set()


def test_stage_1_gives_the_rules_the_file_s_history_and_the_repository_s_start(
    repo: Path,
) -> None:
    """``FactSource.for_rules``: what the rules read of git is read before they run
    (the file's log, when the repository began), and only where they have writes."""
    from conftest import commit_env, git

    from deja_blame.attribution.facts.source import FactSource
    from deja_blame.index import db as index_db

    (repo / "README").write_text("hello\n")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "root", env=commit_env(1_000_000))
    (repo / "app.py").write_text("\n".join(FILE) + "\n")
    git(repo, "add", "app.py")
    git(repo, "commit", "-qm", "app", env=commit_env(2_000_000))
    facts = _facts(FILE, commit_time=2_000_000, writes=_writes(at=1_500_000.0))
    for ln in facts.lines:
        ln.orig_path = "app.py"  # the name git blame gave each line
    source = FactSource(index_db.connect(repo.parent / "index.db"), repo, "HEAD")

    given = source.for_rules(facts.lines, facts.writes, facts.paths)
    assert given.repository_start == 1_000_000.0  # the root commit, not the file's first
    assert given.same_clock == frozenset()  # no session indexed ran in this checkout
    assert len(given.history.commits) == 1 and given.history.times == [2_000_000]
    assert given.asks is source

    idle = source.for_rules(facts.lines, WriteSet(), facts.paths)
    assert idle.repository_start is None and idle.history.commits == []  # nothing read
