"""deja blame FILE: git blame, with the session that wrote each line."""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, replace
from pathlib import Path

import click

from deja_blame.attribution import blame_options
from deja_blame.attribution.api import answer
from deja_blame.attribution.blame_options import GitBlameOptions
from deja_blame.attribution.model import FileBlame
from deja_blame.errors import DejaError
from deja_blame.gitutil import SHALLOW_WARNING, Author, is_shallow
from deja_blame.jsonout import print_json
from deja_blame.later import answer_first
from deja_blame.output import terminal, warn
from deja_blame.outputs.blame_text import (
    BlameLook,
    authors_of,
    format_date,
    print_human,
    print_porcelain,
)

# what -L takes, as --help lists it (and an error about -L names it)
L_FORMS = "START,END  START,+COUNT  START  :FUNCNAME  /REGEX/,+N (e.g. -L 10,20 or -L :main)"


def parse_range(spec: str | None) -> tuple[int, int] | None:
    """git's -L forms: ``START,END``, ``START,+COUNT``, ``START`` (to the end)."""
    if not spec:
        return None
    try:
        start_s, _, end_s = spec.partition(",")
        start = int(start_s)
        if not end_s:
            end = 10**9
        elif end_s.startswith("+"):
            end = start + int(end_s[1:]) - 1
        else:
            end = int(end_s)
    except ValueError as exc:
        raise click.BadParameter(
            f"{terminal(spec)!r} is none of git's -L forms: {L_FORMS}", param_hint="-L"
        ) from exc
    if end < start:
        start, end = end, start  # git blame -L 5,3 blames lines 3 to 5
    if start < 1:
        raise click.BadParameter(f"{spec!r} is not a valid line range", param_hint="-L")
    return start, end


def _needs_git(spec: str) -> bool:
    """``-L :funcname`` and ``-L /regex/`` forms (git finds those lines)."""
    return spec.startswith((":", "/")) or ",/" in spec or ",-" in spec


@answer_first  # the cache's writes wait until the answer is out (``later.py``)
def run_blame(
    conn: sqlite3.Connection,
    file: Path,
    rev: str | None,
    line_range: str | tuple[str, ...] | None,
    as_json: bool,
    porcelain: bool,
    refresh: bool = True,
    options: GitBlameOptions | None = None,
    look: BlameLook | None = None,
    line_porcelain: bool = False,
    contents: str | None = None,
    reverse: str | None = None,
) -> int:
    data = None
    if contents is not None:
        # git blame --contents: this text as the working tree's version (- : stdin)
        if rev is not None:
            raise click.UsageError("--contents blames a version on top of HEAD: give no REV")
        data = _read_contents(contents)
    return _blame_and_print(
        conn,
        file,
        rev,
        line_range,
        as_json,
        porcelain,
        refresh,
        options,
        look,
        line_porcelain,
        reverse,
        data,
    )


def _blame_and_print(
    conn: sqlite3.Connection,
    file: Path,
    rev: str | None,
    line_range: str | tuple[str, ...] | None,
    as_json: bool,
    porcelain: bool,
    refresh: bool,
    options: GitBlameOptions | None,
    look: BlameLook | None,
    line_porcelain: bool,
    reverse: str | None,
    contents: bytes | None,
) -> int:
    if look is not None and look.date_format:
        format_date(0, look.date_format)  # an unknown format fails before any work
    where = file.parent if file.parent.is_dir() else Path.cwd()  # git's config from here
    config = _blame_config(where)
    options = with_configured_ignore_revs(where, options or GitBlameOptions(), config)
    specs = (line_range,) if isinstance(line_range, str) else tuple(line_range or ())
    # numbers read here; git's own forms (``-L :funcname``) are git's to find
    ranges = [r for r in (x if _needs_git(x) else parse_range(x) for x in specs) if r is not None]
    with blame_options.using(options):
        result = answer(conn, file, rev, ranges, refresh, contents)
    if reverse is not None:
        _reverse_commits(result, reverse)
    if (
        result.indexed_sessions == 0
        and not any(ln.session for ln in result.lines)
        and not unreadable_index(conn)
        and not _commits_noted(result)
    ):
        # (a clone whose notes speak for these lines' commits, a reviewer's: its
        # people's lines are people's)
        say_none_indexed(conn, result.root)
    elif is_shallow(str(result.root)):
        warn(SHALLOW_WARNING)
    if as_json or not porcelain:
        authors = _authors(conn, result, config)
    if as_json:
        doc = result.to_json()
        for line in doc["lines"]:
            author = authors.get(line.get("commit") or "")
            line["author"] = author.name if author else None
            line["author_mail"] = f"<{author.mail}>" if author else None
            line["author_time"] = author.time if author else None
        print_json(doc)
    elif porcelain:
        print_porcelain(result, every_line=line_porcelain)
    else:
        print_human(result, look)
    from deja_blame import printed

    printed.answered(result)  # kept once the command is over, if it may be written again
    return 0


# blame in a clone with deja's notes, whose lines' commits have none, and no session
NO_NOTE_HERE = (
    "no note covers these lines' commits and no session is indexed: each line shows as"
    " its commit's author's (a commit made where no deja hook ran, or by a forge's squash"
    " or rebase: deja notes carry)"
)


def say_none_indexed(conn: sqlite3.Connection, root: str | Path) -> None:
    """The line that says no line could be given to a session because none is indexed,
    with what would change that (blame; stats, whose 0 % would read as "none"). The
    caller has found no session in the index nor a note for its lines."""
    from deja_blame.index.provenance import carried_hint, carried_left_out
    from deja_blame.notes.where_from import notes_here, unattributed_hint

    if notes_here(root):
        # a reviewer's clone (newcomer 17 #3: it was told "run: deja index")
        warn(NO_NOTE_HERE)
    elif left := carried_left_out(conn, root):
        # deja index would read them no more than it did
        warn(f"no sessions are indexed: every line is unattributed; {carried_hint(left)}")
    else:
        hint = unattributed_hint(root)
        warn(f"no sessions are indexed: every line is unattributed ({hint})")


def unreadable_index(conn: sqlite3.Connection) -> bool:
    """Whether ``conn`` stands in for an index that is there but may not be read
    (``cli.with_index`` said so, with its fix: "run: deja index" would not help)."""
    import os

    from deja_blame.index.db import stand_in_for

    standing = stand_in_for(conn)
    return standing is not None and os.path.lexists(standing)


def _commits_noted(result: FileBlame) -> bool:
    """Whether deja's notes speak for a commit of these lines (then an unindexed clone
    still knows who wrote them: a reviewer's)."""
    from deja_blame.gitutil import try_git
    from deja_blame.notes.schema import NOTES_REF

    commits = {ln.commit for ln in result.lines if ln.commit}
    proc = try_git(result.root, ["notes", f"--ref={NOTES_REF}", "list"]) if commits else None
    if proc is None or proc.returncode != 0:
        return False
    # each row: the note's blob, then the commit it annotates
    return any(row.rpartition(" ")[2] in commits for row in proc.stdout.decode().splitlines())


def _authors(
    conn: sqlite3.Connection, result: FileBlame, config: _BlameConfig
) -> dict[str, Author]:
    """Each line's commit's author (``authors_of``): git blame's own where no mailmap
    can make them differ, else git log's; those git was asked for are then kept
    with the cached answer (a commit's author never changes)."""
    if (
        result.authors is None
        and result.blame_authors is not None
        and not _mailmapped(result, config)
    ):
        result.authors = result.blame_authors  # what git log would say: no process
    asked_git = result.authors is None
    got = authors_of(result)
    # a fresh answer's cache entry, written after the output, takes them itself
    if asked_git and result.cache_key is not None and conn is not None and not result.keeps_authors:
        from deja_blame.attribution.cache import add_authors
        from deja_blame.later import defer

        key, kept = result.cache_key, result.authors or {}
        defer(lambda: add_authors(conn, key, kept))  # once the answer is out
    return got


def _reverse_commits(result: FileBlame, spec: str) -> None:
    """git blame --reverse A..B: each line of A (its session stays the one that wrote
    it) gets, as its commit, the last commit of the range that still had it."""
    from deja_blame.attribution.facts.git_blame import parse_porcelain
    from deja_blame.gitutil import run_git

    proc = run_git(
        Path(result.root),
        ["blame", "--porcelain", "--reverse", spec, "--", result.path],
        check=False,
        timeout=300,
    )
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DejaError(
            f"git blame --reverse {spec}: " + (err[0].removeprefix("fatal: ") if err else "failed")
        )
    last = {b.line: b.commit for b in parse_porcelain(proc.stdout)}
    result.authors = result.cache_key = result.blame_authors = None  # other commits: git's
    for ln in result.lines:
        ln.commit = last.get(ln.line, ln.commit)


def _read_contents(name: str) -> bytes:
    import sys

    if name == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(name).read_bytes()
    except OSError as exc:
        raise DejaError(f"--contents {name}: {exc.strerror or exc}") from exc


@dataclass(frozen=True)
class _BlameConfig:
    """What git's configuration changes in git blame's answer, read in one process."""

    ignore_revs_file: str  # blame.ignoreRevsFile ("" when none)
    mailmap: bool  # mailmap.file or mailmap.blob: names and mails mapped


def _blame_config(where: Path) -> _BlameConfig:
    from deja_blame.gitenv import no_git_env
    from deja_blame.gitfiles import blame_config
    from deja_blame.gitutil import try_git

    said = blame_config(str(where), no_git_env())  # b"": the files set neither
    if said is None:
        proc = try_git(
            where,
            ["config", "-z", "--get-regexp", r"^(blame\.ignorerevsfile|mailmap\.(file|blob))$"],
        )
        said = proc.stdout if proc is not None else b""
    values: dict[str, str] = {}
    for item in said.split(b"\0"):
        key, _, value = item.decode("utf-8", "surrogateescape").partition("\n")
        if key:
            values[key.lower()] = value  # git's last value wins
    return _BlameConfig(
        values.get("blame.ignorerevsfile", "").strip(),
        bool(values.get("mailmap.file") or values.get("mailmap.blob")),
    )


def with_configured_ignore_revs(
    where: Path, options: GitBlameOptions, config: _BlameConfig
) -> GitBlameOptions:
    """git blame's own default: ``blame.ignoreRevsFile`` when no --ignore-revs-file is given
    (a path relative to the repository's top, as git reads it; ``where``: the folder
    ``config`` was read from)."""
    if options.ignore_revs_files:
        return options
    from deja_blame.gitutil import try_git

    value = config.ignore_revs_file
    if not value:
        return options
    top = try_git(where, ["rev-parse", "--show-toplevel"])
    root = Path(top.stdout.decode().strip()) if top is not None and top.stdout else where
    path = Path(value).expanduser()
    path = path if path.is_absolute() else root / path
    if not path.is_file():
        return options  # git itself fails on a missing file; blame without it
    return replace(options, ignore_revs_files=(str(path),))


def _mailmapped(result: FileBlame, config: _BlameConfig) -> bool:
    """Whether a mailmap may make git blame's authors differ from ``git log``'s
    (``gitutil.commit_authors``): configured, a ``.mailmap`` at the top of the
    working tree, or a repository without one (git then reads HEAD's)."""
    top = Path(result.root)
    return config.mailmap or os.path.lexists(top / ".mailmap") or not (top / ".git").exists()
