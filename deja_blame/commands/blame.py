"""deja blame FILE: git blame, with the session that wrote each line."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from deja_blame.attribution import blame_options
from deja_blame.attribution.blame import FileBlame, blame_file, cached_blame, too_short
from deja_blame.attribution.blame_options import GitBlameOptions
from deja_blame.errors import DejaError
from deja_blame.gitutil import (
    SHALLOW_WARNING,
    commit_authors,
    is_shallow,
    open_repository,
    relative_path,
)
from deja_blame.jsonout import print_json
from deja_blame.output import inert, paged, shorten, style, use_colour, warn
from deja_blame.transcripts.antigravity.discover import discover_roots
from deja_blame.transcripts.registry import label_of

if TYPE_CHECKING:
    import pygit2

SESSION_COLOURS = ["cyan", "magenta", "green", "yellow", "blue", "bright_cyan", "bright_magenta"]


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
        raise click.BadParameter(f"{spec!r} is not START,END", param_hint="-L") from exc
    if start < 1 or end < start:
        raise click.BadParameter(f"{spec!r} is not a valid line range", param_hint="-L")
    return start, end


def _needs_git(spec: str) -> bool:
    """``-L :funcname`` and ``-L /regex/`` forms (git finds those lines)."""
    return spec.startswith((":", "/")) or ",/" in spec or ",-" in spec


def _git_range(file: Path, rev: str | None, spec: str) -> tuple[int, int]:
    """The lines git's own ``-L`` finds for ``spec``, as a START,END range."""
    from deja_blame.attribution.blame_engine import parse_porcelain
    from deja_blame.gitutil import run_git

    where = file.parent if str(file.parent) else Path(".")
    args = ["blame", "--porcelain", "-L", spec, *([rev] if rev else []), "--", file.name]
    proc = run_git(where, args, check=False, timeout=120)
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        text = msg[-1] if msg else f"git blame -L {spec} failed"
        raise DejaError(text.removeprefix("fatal: "))
    lines = [b.line for b in parse_porcelain(proc.stdout)]
    if not lines:
        raise DejaError(f"-L {spec}: no lines")
    return min(lines), max(lines)


def refresh_index(conn: sqlite3.Connection) -> None:
    """Read new transcript bytes first: blame right after an agent session just works.

    Only files whose stat changed are opened, so this costs a stat per session
    (the same check the post-commit hook makes).
    """
    roots = discover_roots()
    from deja_blame.index.changes import changed_transcripts

    try:
        files = changed_transcripts(conn, roots)
        if files:
            from deja_blame.index.ingest import index_roots

            # in this process: git blame runs in a thread meanwhile
            index_roots(conn, roots, transcripts=files, jobs=1)
    except sqlite3.OperationalError as exc:
        warn(f"could not refresh the index ({exc}); blaming with what it holds")


def locate(file: Path) -> tuple[pygit2.Repository, str]:
    if not file.exists() and not file.parent.exists():
        raise DejaError(f"no such file or directory: {file}")
    repo = open_repository(file if file.exists() else file.parent)
    rel = relative_path(repo, file)
    return repo, rel


def compute(
    conn: sqlite3.Connection | None,
    file: Path,
    rev: str | None,
    line_range: tuple[int, int] | None,
    refresh: bool,
) -> FileBlame:
    if file.is_dir():
        raise DejaError(f"{file} is a directory; deja blame takes a file")
    if conn is not None and refresh:
        refresh_index(conn)
    if conn is not None:
        hit = cached_blame(conn, file, rev, line_range)
        if hit is not None:
            return hit
    repo, rel = locate(file)
    from deja_blame.notes.lookup import note_lookup_for

    return blame_file(
        repo, rel, rev, conn, line_range=line_range, note_lookup=note_lookup_for(repo)
    )


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
) -> int:
    if look is not None and look.date_format:
        format_date(0, look.date_format)  # an unknown format fails before any work
    options = with_configured_ignore_revs(file, options or GitBlameOptions())
    specs = (line_range,) if isinstance(line_range, str) else tuple(line_range or ())
    with blame_options.using(options):
        result = _blame_ranges(conn, file, rev, specs, refresh)
    if result.indexed_sessions == 0 and not any(ln.session for ln in result.lines):
        from deja_blame.notes.where_from import unattributed_hint

        hint = unattributed_hint(result.root)
        warn(f"no sessions are indexed: every line is unattributed ({hint})")
    elif is_shallow(str(result.root)):
        warn(SHALLOW_WARNING)
    if as_json:
        doc = result.to_json()
        authors = commit_authors(result.root, {ln.commit for ln in result.lines if ln.commit})
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
    return 0


def with_configured_ignore_revs(file: Path, options: GitBlameOptions) -> GitBlameOptions:
    """git blame's own default: ``blame.ignoreRevsFile`` when no --ignore-revs-file is given
    (a path relative to the repository's top, as git reads it)."""
    if options.ignore_revs_files:
        return options
    from deja_blame.gitutil import try_git

    where = file.parent if file.parent.is_dir() else Path.cwd()
    proc = try_git(where, ["config", "--get", "blame.ignoreRevsFile"])
    value = proc.stdout.decode("utf-8", "replace").strip() if proc is not None else ""
    if not value:
        return options
    top = try_git(where, ["rev-parse", "--show-toplevel"])
    root = Path(top.stdout.decode().strip()) if top is not None and top.stdout else where
    path = Path(value).expanduser()
    path = path if path.is_absolute() else root / path
    if not path.is_file():
        return options  # git itself fails on a missing file; blame without it
    return replace(options, ignore_revs_files=(str(path),))


def _blame_ranges(
    conn: sqlite3.Connection, file: Path, rev: str | None, specs: tuple[str, ...], refresh: bool
) -> FileBlame:
    """The blame of FILE's lines in the -L ranges ``specs`` (all of it for none)."""
    ranges = [
        r
        for r in (_git_range(file, rev, x) if _needs_git(x) else parse_range(x) for x in specs)
        if r is not None
    ]
    if len(ranges) <= 1:
        return compute(conn, file, rev, ranges[0] if ranges else None, refresh)
    # several -L: one blame of the span they cover, then their lines, in order
    hull = (min(a for a, _ in ranges), max(b for _, b in ranges))
    result = compute(conn, file, rev, hull, refresh)
    # the span's last line is the file's when the span reaches past it
    total = result.total_lines or (result.lines[-1].line if result.lines else 0)
    for a, _ in ranges:
        if a > total:
            raise too_short(result.path, total)
    result.lines = [ln for ln in result.lines if any(a <= ln.line <= b for a, b in ranges)]
    return result


@dataclass(frozen=True)
class BlameLook:
    """How the human output shows people's lines: git blame's --date, -e, -s."""

    date_format: str | None = None  # None: short (YYYY-MM-DD)
    show_email: bool = False
    suppress: bool = False


DATE_FORMATS = (
    "short", "iso", "iso8601", "iso-strict", "iso8601-strict", "relative", "unix", "raw",
    "default", "rfc", "rfc2822", "human", "local",
)  # fmt: skip


def format_date(epoch: int, fmt: str | None, now: float | None = None) -> str:
    """An author time as git's ``--date=FMT`` shows it (in UTC; ``local``: this zone)."""
    from datetime import datetime, timezone

    fmt = fmt or "short"
    if fmt.startswith("format:"):
        return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime(fmt[7:])
    if fmt not in DATE_FORMATS:
        raise DejaError(
            f"unknown date format {fmt!r}", hint="one of: " + ", ".join(DATE_FORMATS[:8])
        )
    when = datetime.fromtimestamp(epoch, tz=timezone.utc)
    if fmt == "local":
        when = datetime.fromtimestamp(epoch).astimezone()
        return when.strftime("%a %b %-d %H:%M:%S %Y")
    if fmt == "short":
        return when.strftime("%Y-%m-%d")
    if fmt in ("iso", "iso8601", "human"):
        return when.strftime("%Y-%m-%d %H:%M:%S +0000")
    if fmt in ("iso-strict", "iso8601-strict"):
        return when.strftime("%Y-%m-%dT%H:%M:%S+00:00")
    if fmt == "unix":
        return str(epoch)
    if fmt == "raw":
        return f"{epoch} +0000"
    if fmt in ("rfc", "rfc2822"):
        return when.strftime("%a, %-d %b %Y %H:%M:%S +0000")
    if fmt == "relative":
        return _relative(epoch, now)
    return when.strftime("%a %b %-d %H:%M:%S %Y +0000")  # default


def _relative(epoch: int, now: float | None) -> str:
    import time

    ago = int((now if now is not None else time.time()) - epoch)
    if ago < 0:
        return "in the future"
    for size, unit in ((365 * 86400, "year"), (30 * 86400, "month"), (7 * 86400, "week"),
                       (86400, "day"), (3600, "hour"), (60, "minute")):  # fmt: skip
        if ago >= size:
            n = ago // size
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return f"{ago} seconds ago"


def print_human(result: FileBlame, look: BlameLook | None = None) -> None:
    look = look or BlameLook()
    colour = use_colour()
    authors = commit_authors(result.root, {ln.commit for ln in result.lines if ln.commit})
    palette: dict[str, str] = {}
    width = len(str(result.lines[-1].line)) if result.lines else 1
    # people's column: the name (or <email>) and the date, as wide as the widest
    people: dict[str, str] = {}
    for ln in result.lines:
        if ln.session or ln.commit is None or ln.commit in people or look.suppress:
            continue
        author = authors.get(ln.commit)
        name = ("<" + author.mail + ">" if look.show_email else author.name) if author else "-"
        day = format_date(author.time, look.date_format) if author else ""
        people[ln.commit] = f"{shorten(inert(name), 25)}\0{day}"
    name_w = max((len(v.split("\0")[0]) for v in people.values()), default=0)
    day_w = max((len(v.split("\0")[1]) for v in people.values()), default=0)
    person_w = name_w + day_w + 3 if people else 0
    # the model behind each session, where known: a column of its own when any is
    models = {
        sid: shorten(inert(info.model), 16) for sid, info in result.sessions.items() if info.model
    }
    model_w = max((len(m) for m in models.values()), default=0)
    agent_w = 8 + 1 + 6 + (model_w + 1 if model_w else 0) + (0 if look.suppress else 17) + 5
    who_w = max(person_w, agent_w, 0 if look.suppress else 19)
    out = []
    for ln in result.lines:
        sha = (ln.commit or "0" * 40)[:8]
        if ln.session:
            fg = palette.setdefault(
                ln.session, SESSION_COLOURS[len(palette) % len(SESSION_COLOURS)]
            )
            when = "" if look.suppress else (ln.written_at or "")[:16].replace("T", " ")
            conf = f"{ln.confidence:.2f}" if ln.confidence is not None else "note"
            agent = inert(label_of(ln.source))[:6]
            who = f"{inert(ln.session)[:8]} {agent:<6} "
            if model_w:
                who += f"{models.get(ln.session, ''):<{model_w}} "
            who += f"{when:<16} {conf}" if not look.suppress else conf
            who = style(f"{who:<{who_w}}", colour, fg=fg)
        elif ln.commit is None:
            text = "" if look.suppress else "(not committed yet)"
            who = style(f"{text:<{who_w}}", colour, dim=True)
        elif look.suppress:
            who = " " * who_w
        else:
            # a person's line: git blame's author and date
            name, _, day = people[ln.commit].partition("\0")
            who = style(f"{f'({name:<{name_w}} {day:<{day_w}})':<{who_w}}", colour, dim=True)
        text = inert(ln.text)
        out.append(f"{style(sha, colour, fg='yellow')} {who} {ln.line:>{width}}) {text}")
    if out:
        with paged():
            # the pager's pipe is no terminal: say whether the styles stay
            click.echo("\n".join(out), color=colour)


def print_porcelain(result: FileBlame, every_line: bool = False) -> None:
    """git blame --porcelain (``every_line``: --line-porcelain, the commit's details on
    each line), plus ``deja-session`` / ``deja-confidence`` header lines."""
    import pygit2

    repo = pygit2.Repository(result.root)
    seen: set[str] = set()
    details: dict[str, list[str]] = {}
    out: list[str] = []
    for ln in result.lines:
        sha = ln.commit or "0" * 40
        out.append(f"{sha} {ln.orig_line or ln.line} {ln.line} 1")
        if sha not in seen or every_line:
            seen.add(sha)
            if sha not in details:
                details[sha] = _commit_details(repo, ln.commit)
            out.extend(details[sha])
            out.append(f"filename {ln.orig_path or result.path}")
        out.append(f"deja-session {ln.session or '-'}")
        if ln.session:
            out.append(f"deja-confidence {ln.confidence if ln.confidence is not None else 1.0}")
            if ln.written_at:
                out.append(f"deja-written-at {ln.written_at}")
        out.append("\t" + ln.text)
    if out:
        click.echo("\n".join(out))


def _commit_details(repo: pygit2.Repository, sha: str | None) -> list[str]:
    import pygit2

    if sha is None:
        import time

        now = int(time.time())
        return [
            "author Not Committed Yet",
            "author-mail <not.committed.yet>",
            f"author-time {now}",
            "author-tz +0000",
            "committer Not Committed Yet",
            "committer-mail <not.committed.yet>",
            f"committer-time {now}",
            "committer-tz +0000",
            "summary Version of the working tree",
        ]
    c = repo[sha]
    assert isinstance(c, pygit2.Commit)

    def tz(offset: int) -> str:
        sign = "+" if offset >= 0 else "-"
        return f"{sign}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"

    lines = [
        f"author {c.author.name}",
        f"author-mail <{c.author.email}>",
        f"author-time {c.author.time}",
        f"author-tz {tz(c.author.offset)}",
        f"committer {c.committer.name}",
        f"committer-mail <{c.committer.email}>",
        f"committer-time {c.committer.time}",
        f"committer-tz {tz(c.committer.offset)}",
        f"summary {c.message.splitlines()[0] if c.message else ''}",
    ]
    if not c.parents:
        lines.append("boundary")
    return lines
