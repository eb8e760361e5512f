"""Which shell commands run a test suite, and how a session's tests ended.

One rule for the report (a session's "Tests" cell, ``tests_failed``) and for the note
the post-commit hook writes (``sessions.<id>.tests``), in a module of its own so the
hook does not load the report to write a note.
"""

from __future__ import annotations

import re
import sqlite3

__all__ = ("is_test_command", "tests_status", "tests_for_note")

# What runs a test suite: the program of any part of a shell line ("cd x && pytest -q"),
# after environment assignments and wrappers ("CI=1 npx vitest", "uv run pytest").
_SHELL_SPLIT = re.compile(r"&&|\|\||[;|&\n()]")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_WRAPPERS = {
    "npx",
    "pnpx",
    "bunx",
    "time",
    "sudo",
    "env",
    "nice",
    "exec",
    "timeout",
    "xvfb-run",
    "uv",
    "poetry",
    "pipenv",
    "hatch",
    "pdm",
    "rye",
    "run",
    "command",
    "-m",
}
_TEST_PROGRAMS = {
    "pytest",
    "py.test",
    "tox",
    "nox",
    "jest",
    "vitest",
    "mocha",
    "ava",
    "karma",
    "rspec",
    "phpunit",
    "ctest",
    "nosetests",
    "nose2",
    "trial",
    "pest",
}
_TEST_SUBCOMMAND = {
    "go": {"test"},
    "cargo": {"test", "nextest"},
    "deno": {"test"},
    "dotnet": {"test"},
    "swift": {"test"},
    "mix": {"test"},
    "bazel": {"test"},
    "bazelisk": {"test"},
    "zig": {"test"},
    "playwright": {"test"},
    "bun": {"test"},
}
_PY_TEST_MODULES = {"pytest", "unittest", "nose", "nose2", "tox", "nox"}


def _runs_tests(words: list[str]) -> bool:
    i = 0
    while i < len(words) and (
        _ASSIGNMENT.match(words[i]) or words[i] in _WRAPPERS or re.fullmatch(r"\d+[smh]?", words[i])
    ):
        i += 1
    if i >= len(words):
        return False
    prog = words[i].rsplit("/", 1)[-1]
    rest = words[i + 1 :]
    args = [w for w in rest if not w.startswith("-")]
    if prog in _TEST_PROGRAMS:
        return True
    if prog in _TEST_SUBCOMMAND and args and args[0] in _TEST_SUBCOMMAND[prog]:
        return True
    if prog in ("npm", "pnpm", "yarn", "bun") and args:
        sub = args[1] if args[0] == "run" and len(args) > 1 else args[0]
        return sub in ("test", "t") or sub.startswith("test:")
    if re.fullmatch(r"python[0-9.]*|py", prog):
        if "-m" in rest and rest.index("-m") + 1 < len(rest):
            return rest[rest.index("-m") + 1] in _PY_TEST_MODULES
        script = args[0].rsplit("/", 1)[-1] if args else ""
        return script in ("runtests.py", "runtest.py") or (
            script in ("manage.py", "setup.py") and args[1:2] == ["test"]
        )
    if prog in ("make", "gmake"):
        return any(a.startswith(("test", "check")) for a in args)
    if prog in ("mvn", "mvnw", "gradle", "gradlew"):
        return any(a in ("test", "check", "verify") or a.endswith(":test") for a in args)
    return False


def is_test_command(command: str) -> bool:
    """Does ``command`` run a test suite (pytest, npm test, go test, cargo test, ...)?"""
    return any(_runs_tests(part.split()) for part in _SHELL_SPLIT.split(command))


def tests_status(exit_codes: list[int | None]) -> str | None:
    """``passed``, ``failed`` or ``unknown`` (no exit code) of the last of a session's
    test runs (their exit codes in order); None when it ran none."""
    if not exit_codes:
        return None
    last = exit_codes[-1]
    if last is None:
        return "unknown"
    return "passed" if last == 0 else "failed"


def tests_for_note(conn: sqlite3.Connection, session_id: str) -> str | None:
    """What a commit's note records of the session's tests (``notes/public.py``), so a
    report made from notes alone (a CI clone) knows them: the status of its last
    test-like command (``passed``, ``failed``, ``unknown``), ``none`` when it ran
    none; None when the session is not indexed."""
    from deja_blame.index import queries as Q

    row = Q.session_by_id(conn, session_id)
    if row is None:
        return None
    codes = [x for c, x, _at in Q.commands_of(conn, row.sid) if is_test_command(c)]
    return tests_status(codes) or "none"
