"""deja blame's text outputs: git blame's columns, and its porcelain, with sessions."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from deja_blame.attribution.model import FileBlame
from deja_blame.errors import DejaError
from deja_blame.gitcli import is_commit
from deja_blame.gitutil import Author, commit_authors, open_repository
from deja_blame.objectid import null_id
from deja_blame.output import code, paged, shorten, style, terminal, use_colour, utc_minute
from deja_blame.session_ids import short

if TYPE_CHECKING:
    import pygit2

SESSION_COLOURS = ["cyan", "magenta", "green", "yellow", "blue", "bright_cyan", "bright_magenta"]


@dataclass(frozen=True)
class BlameLook:
    """How the human output shows people's lines: git blame's --date, -e, -s."""

    date_format: str | None = None  # None: short (YYYY-MM-DD); -t: raw
    show_email: bool = False
    suppress: bool = False
    long_sha: bool = False  # -l: the whole commit id
    abbrev: int | None = None  # --abbrev=N: N digits (and one more, as git's column)
    show_name: bool = False  # -f: the file's name in the commit (it may have moved)
    show_number: bool = False  # -n: the line's number in that commit
    blank_boundary: bool = False  # -b: no commit id on boundary (root) commits' lines
    root: bool = False  # --root: root commits are no boundary
    annotate: bool = False  # -c: git annotate's tab-separated columns

    def sha_width(self) -> int:
        if self.long_sha:
            return 64  # the whole id: 40 digits (SHA-1) or 64 (SHA-256)
        return min(64, self.abbrev + 1) if self.abbrev is not None else 8


DATE_FORMATS = (
    "short", "iso", "iso8601", "iso-strict", "iso8601-strict", "relative", "unix", "raw",
    "default", "rfc", "rfc2822", "human", "local",
)  # fmt: skip


_FIRST_EPOCH = -62135596800  # 0001-01-01T00:00:00Z
_LAST_EPOCH = 253402300799  # 9999-12-31T23:59:59Z


def format_date(epoch: int, fmt: str | None, now: float | None = None) -> str:
    """An author time as git's ``--date=FMT`` shows it (in UTC; ``local``: this zone)."""
    from datetime import datetime, timezone

    fmt = fmt or "short"
    # a commit may claim any time (git blame shows year 11476); Python's dates end at
    # 9999 and begin at 1: such a time is shown at that end, never an error
    raw, epoch = epoch, min(max(epoch, _FIRST_EPOCH), _LAST_EPOCH)
    if fmt.startswith("format:"):
        return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime(fmt[7:])
    if fmt not in DATE_FORMATS:
        raise DejaError(
            f"unknown date format {fmt!r}", hint="one of: " + ", ".join(DATE_FORMATS[:8])
        )
    when = datetime.fromtimestamp(epoch, tz=timezone.utc)
    if fmt == "local":
        when = datetime.fromtimestamp(min(max(epoch, 86400), _LAST_EPOCH - 86400)).astimezone()
        return when.strftime("%a %b %-d %H:%M:%S %Y")
    if fmt == "short":
        return when.strftime("%Y-%m-%d")
    if fmt in ("iso", "iso8601", "human"):
        return when.strftime("%Y-%m-%d %H:%M:%S +0000")
    if fmt in ("iso-strict", "iso8601-strict"):
        return when.strftime("%Y-%m-%dT%H:%M:%S+00:00")
    if fmt == "unix":
        return str(raw)
    if fmt == "raw":
        return f"{raw} +0000"
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


def authors_of(result: FileBlame) -> dict[str, Author]:
    """Each line's commit's author: those the answer carries (a cached answer keeps
    them), else git's, then carried by the answer too."""
    if result.authors is None:
        got = commit_authors(result.root, {ln.commit for ln in result.lines if ln.commit})
        result.authors = {c: (a.name, a.mail, a.time) for c, a in got.items()}
    return {c: Author(*a) for c, a in result.authors.items()}


# Past these a name is a stranger's text that would push the code off the screen
MAX_LABEL = 24  # another tool's agent name (the 14 agents' labels are at most 11)
MAX_MODEL = 40  # a model's name ("claude-sonnet-4-5-20250929" is 26)


def print_human(result: FileBlame, look: BlameLook | None = None) -> None:
    look = look or BlameLook()
    colour = use_colour()
    authors = authors_of(result)
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
        # a long name is cut; an address never (git shows it whole: cut, it is no address)
        people[ln.commit] = (
            f"{terminal(name) if look.show_email else shorten(terminal(name), 25)}\0{day}"
        )
    name_w = max((len(v.split("\0")[0]) for v in people.values()), default=0)
    day_w = max((len(v.split("\0")[1]) for v in people.values()), default=0)
    person_w = name_w + day_w + 3 if people else 0
    # the model behind each session, where known: a column of its own when any is
    # (whole, as wide as the widest here: a stranger's note may name a model of any
    # length, so past MAX_MODEL it is cut, with an ellipsis that says so)
    models = {
        sid: shorten(terminal(info.model), MAX_MODEL)
        for sid, info in result.sessions.items()
        if info.model
    }
    model_w = max((len(m) for m in models.values()), default=0)
    # the agent's label: the whole word for the agents deja knows (agy, claude,
    # copilot-cli, windsurf), another tool's name up to MAX_LABEL; the column as wide
    # as the widest label here (at least 6), as git blame's author column
    from deja_blame.transcripts.registry import label_of  # the 14 plug-ins: text only

    labels = {
        ln.source: shorten(terminal(label_of(ln.source)), MAX_LABEL)
        for ln in result.lines
        if ln.session
    }
    label_w = max((len(v) for v in labels.values()), default=6)
    label_w = max(label_w, 6)
    agent_w = 8 + 1 + label_w + (model_w + 1 if model_w else 0) + (0 if look.suppress else 21) + 5
    who_w = max(person_w, agent_w, 0 if look.suppress else 19)
    out = []
    sha_w = look.sha_width()
    boundary = _root_commits(result) if look.blank_boundary and not look.root else set()
    name_col = max((len(ln.orig_path or result.path) for ln in result.lines), default=0)
    number_col = max((len(str(ln.orig_line or ln.line)) for ln in result.lines), default=1)
    null = null_id(next((ln.commit for ln in result.lines if ln.commit), ""))
    for ln in result.lines:
        sha = (ln.commit or null)[:sha_w]
        if ln.commit in boundary:
            sha = " " * len(sha)
        if ln.session:
            fg = palette.setdefault(
                ln.session, SESSION_COLOURS[len(palette) % len(SESSION_COLOURS)]
            )
            when = "" if look.suppress else terminal(utc_minute(ln.written_at))
            conf = f"{ln.confidence:.2f}" if ln.confidence is not None else "note"
            who = f"{terminal(short(ln.session))[:8]} {labels[ln.source]:<{label_w}} "
            if model_w:
                who += f"{models.get(ln.session, ''):<{model_w}} "
            who += f"{when:<20} {conf}" if not look.suppress else conf
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
        text = code(ln.text)  # a hidden control shows as <U+XXXX>: what the file holds
        where = ""
        if look.show_name:
            where += f"{terminal(ln.orig_path or result.path):<{name_col}} "
        if look.show_number:
            where += f"{ln.orig_line or ln.line:>{number_col}} "
        if look.annotate:
            # git annotate: commit, then (who, line) and the text, tab-separated
            if ln.session or ln.commit is None or look.suppress:
                plain = " ".join(click.unstyle(who).split())
            else:  # a person: git's "(   author<TAB>date", not deja's "(author date)"
                name, _, day = people[ln.commit].partition("\0")
                plain = f"{name:>10}\t{day}"
            out.append(f"{style(sha, colour, fg='yellow')}\t{where}({plain}\t{ln.line}){text}")
            continue
        out.append(f"{style(sha, colour, fg='yellow')} {where}{who} {ln.line:>{width}}) {text}")
    if out:
        with paged():
            # the pager's pipe is no terminal: say whether the styles stay
            click.echo("\n".join(out), color=colour)


def _root_commits(result: FileBlame) -> set[str]:
    """The commits among the lines' that have no parent (git blame's boundary)."""
    import pygit2

    repo = open_repository(Path(result.root))
    shas = {ln.commit for ln in result.lines if ln.commit}
    return {sha for sha in shas if not repo[sha].peel(pygit2.Commit).parents}


def print_porcelain(result: FileBlame, every_line: bool = False) -> None:
    """git blame --porcelain (``every_line``: --line-porcelain, the commit's details on
    each line), plus ``deja-session`` / ``deja-confidence`` header lines.

    Every field goes through ``terminal`` as in the text output: a commit's author,
    mail or subject, a path, a session id or a line of the file is a stranger's text
    (an OSC that retitles the terminal, a bidi override), not a command."""
    repo = open_repository(Path(result.root))
    null = null_id(next((ln.commit for ln in result.lines if ln.commit), ""))
    seen: set[str] = set()
    details: dict[str, list[str]] = {}
    out: list[str] = []
    for ln in result.lines:
        sha = ln.commit or null
        out.append(f"{sha} {ln.orig_line or ln.line} {ln.line} 1")
        if sha not in seen or every_line:
            seen.add(sha)
            if sha not in details:
                details[sha] = _commit_details(repo, ln.commit)
            out.extend(details[sha])
            out.append(f"filename {terminal(ln.orig_path or result.path)}")
        out.append(f"deja-session {terminal(ln.session) or '-'}")
        if ln.session:
            out.append(f"deja-confidence {ln.confidence if ln.confidence is not None else 1.0}")
            if ln.written_at:
                out.append(f"deja-written-at {terminal(ln.written_at)}")
        out.append("\t" + terminal(ln.text))
    if out:
        click.echo("\n".join(out))


def _commit_details(repo: pygit2.Repository, sha: str | None) -> list[str]:

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
    assert is_commit(c)

    def tz(offset: int) -> str:
        sign = "+" if offset >= 0 else "-"
        return f"{sign}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"

    lines = [
        f"author {terminal(c.author.name)}",
        f"author-mail <{terminal(c.author.email)}>",
        f"author-time {c.author.time}",
        f"author-tz {tz(c.author.offset)}",
        f"committer {terminal(c.committer.name)}",
        f"committer-mail <{terminal(c.committer.email)}>",
        f"committer-time {c.committer.time}",
        f"committer-tz {tz(c.committer.offset)}",
        f"summary {terminal(c.message.splitlines()[0]) if c.message else ''}",
    ]
    if not c.parents:
        lines.append("boundary")
    return lines
