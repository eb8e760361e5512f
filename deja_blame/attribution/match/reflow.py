"""Reflowed lines: a formatter (black, ruff, prettier) split or joined a session's lines.

White space aside, the text is the session's, but no line of the file has the
fingerprint of a line it wrote. For lines the matcher left unmatched:
consecutive lines whose texts, joined, have the fingerprint of one line a
session wrote (fingerprints ignore white space, so joining the white-space-free
texts is joining the lines) are that session's, when the joined text was in the
file before the lines' commit (the commit split what was there), or the session
wrote it inside the lines' commit window (a formatter ran before the line was
ever committed: a pre-commit hook, a squashed commit; on commander's history the
release that adopted prettier held 41 such lines). A split one
item a line ends with a comma the formatter added (``f(\n    a,\n    b,\n)``):
the joined text is also tried without commas before a closing bracket, and then
a line with a character the session did not write (``b,``) is left out. Less
certain than a line matched as written: confidence 0.8 at most.

A run whose joined text ends with a comma is also tried without it: the session's
line became one item of a list (``each(value, f(a, b))`` given another argument,
prettier puts ``f(`` ... ``b`` ``),`` one item a line); the last piece, with the
comma the session did not write, is left out.

A split is judged by its pieces' tokens, not each piece's own text: prettier puts
a TypeScript signature one parameter a line (``option(`` ... ``): this``, ten
lines and more), and a piece may be a text the session also wrote as a line of
its own (``defaultValue?: string | boolean``, a member of an interface), which
the matcher then gave that line's write. Such a piece does not break the split
when its match is the same session's; it keeps its match.

A split a later commit changed (``option(`` / ``flags: string,`` / ``defaultValue?:
string | boolean`` / ``): this;``, then ``| string[]`` added to the third piece; or an
argument put between two pieces) no longer joins to the written line, yet its other
pieces are still the session's characters where the split left them. Such pieces are
judged in the version of the commit git blames them on (``_splits_at_their_commit``):
there the pieces, a changed one as it was then, join to the written line. Only runs
that are no longer one below the other here are judged so (every other run is the
first reading's), only where the version's lines are those git says this file kept
from it, and the version is read only within half the file's history budget
(``FileHistory.spare``), for a commit with an unmatched line near such a change.

Joins (several written lines made one) are not attributed: on the real-history
bench (``bench/accuracy/realhist.py``, formatter variant) the rule "a line made of
consecutive lines of the edit beside it" found 4 more lines and 10 wrong ones.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from deja_blame.attribution.facts.model import BlameLine, LineTexts, WrittenTexts
from deja_blame.attribution.match.clock import Deadlines
from deja_blame.attribution.match.lines import LineMatch
from deja_blame.index.fingerprint import TRIVIAL_CHARS, fingerprint, normalise_line

if TYPE_CHECKING:
    from deja_blame.attribution.facts.rule_facts import RuleFacts

REFLOW_MAX = 12  # lines one written line may become (a signature one parameter a line)
_MAGIC_COMMA = re.compile(r",([)\]}])")
CONFIDENCE = 0.8


def reflow_matches(
    facts: RuleFacts,
    texts: LineTexts,
    blamed: list[BlameLine | None],
    matches: list[LineMatch | None],
    paths: dict[int, bool],
    deadlines: Deadlines,
    existed: Callable[[int, int], bool],
    fresh: Callable[[int, float], bool] | None = None,
    version: Callable[[str], list[str] | None] | None = None,
) -> list[LineMatch | None]:
    """``matches`` with reflowed lines added. ``deadlines``: how late a session's
    write may be dated and be each line's source (``clock.py``); ``existed(i, fp)``:
    whether text of fingerprint ``fp`` was in the file before line i's commit;
    ``fresh(i, at)``: whether a write made at ``at`` is inside line i's commit window;
    ``version(commit)``: the file's lines at that commit (None: not read), for the
    splits a later commit changed a piece of. ``facts``: the texts written to the paths
    (``written``, in a question about many files) narrow the candidates; the writes of
    the candidates are asked (``asks``)."""
    out = list(matches)
    if all(m is not None for m in out):
        return out
    _splits(facts, texts.bare, out, paths, deadlines, existed, fresh)
    if version is not None and any(m is None for m in out):
        _splits_at_their_commit(
            facts, texts.bare, blamed, out, paths, deadlines, existed, fresh, version
        )
    return out


def split_candidates(
    norm: list[str], open_: list[bool], written: WrittenTexts | None = None
) -> dict[int, list[tuple[int, int, str]]]:
    """fingerprint -> (first line, lines, the joined text without white space) of every
    run of 2 to ``REFLOW_MAX`` non-blank lines starting at an ``open_`` line whose joined
    text is not trivial, and of that text without its magic trailing commas. ``norm``:
    the lines without white space (``normalise_line``). Given ``written`` (every text
    written to the file's paths), only runs whose text is one of them: no other run has
    a write, and a run starts only at a line some written text begins with
    (``_may_begin``), and grows only while one begins with it: most lines cost a
    look-up or two instead of eleven hashes.

    A run grows one line at a time, so what ``is_trivial`` and the comma pattern would
    find in the joined text is carried from the shorter run: a text without white space
    is trivial while it is short or has no letter or digit (a longer run keeps both), and
    a magic comma is in a line or where two lines meet. On ``deja report`` of 20 commits
    of werkzeug this loop asked ``is_trivial`` and the pattern 736,000 and 435,000 times:
    7 of the command's 27 s of CPU."""
    n = len(norm)
    starts = [
        i
        for i in range(n)
        if open_[i] and norm[i] and (written is None or _may_begin(written, norm[i]))
    ]
    spots: dict[int, list[tuple[int, int, str]]] = {}
    if not starts:
        return spots
    reach = range(n) if written is None else {j for i in starts for j in range(i, i + REFLOW_MAX)}
    solid = [False] * n
    comma = [False] * n
    for j in reach:
        if j < n:
            solid[j] = any(ch.isalnum() for ch in norm[j])
            comma[j] = _MAGIC_COMMA.search(norm[j]) is not None
    for i in starts:
        joined = norm[i]
        alnum = solid[i]
        magic = comma[i]
        for k in range(2, REFLOW_MAX + 1):
            j = i + k - 1
            if j >= n or not norm[j]:
                break
            part = norm[j]
            magic = magic or comma[j] or (joined[-1] == "," and part[0] in ")]}")
            joined += part
            if written is not None and not _may_begin(written, joined):
                break  # no written text begins so: nor will a longer run's
            alnum = alnum or solid[j]
            if not alnum or len(joined) <= TRIVIAL_CHARS:
                continue  # is_trivial(joined)
            if written is None or joined in written.texts:
                spots.setdefault(fingerprint(joined), []).append((i, k, joined))
            if magic:
                # black and ruff add a comma after the last item of a call they split
                # one item a line ("magic trailing comma"): the session wrote the rest
                bare = _MAGIC_COMMA.sub(r"\1", joined)
                if written is None or bare in written.texts:
                    spots.setdefault(fingerprint(bare), []).append((i, k, bare))
            if joined[-1] == "," and len(joined) > TRIVIAL_CHARS + 1:
                # the split text became one item of a list (an argument added after
                # it): the comma that ends the run is not the session's, the rest is
                last = joined[:-1]
                if written is None or last in written.texts:
                    spots.setdefault(fingerprint(last), []).append((i, k, last))
    return spots


def _may_begin(written: WrittenTexts, run: str) -> bool:
    """Whether a run of lines joined as ``run``, or a longer one, can be a written
    text: one begins with ``run``, with ``run`` without the comma that ends it, or with
    ``run`` without its magic commas and without its last comma (the next line may
    begin with the bracket that makes it one)."""
    got = written.seen.get(run)
    if got is None:
        got = written.seen[run] = _begins(written, run)
    return got


def _begins(written: WrittenTexts, run: str) -> bool:
    if written.starts(run):
        return True
    if "," not in run:
        return False
    if run[-1] == "," and written.starts(run[:-1]):
        return True  # a written text the run is without the comma that ends it
    bare = _MAGIC_COMMA.sub(r"\1", run)
    return written.starts(bare[:-1] if bare.endswith(",") else bare)


def _splits(
    facts: RuleFacts,
    norm: list[str],
    out: list[LineMatch | None],
    paths: dict[int, bool],
    deadlines: Deadlines,
    existed: Callable[[int, int], bool],
    fresh: Callable[[int, float], bool] | None,
) -> None:
    spots = split_candidates(norm, [m is None for m in out], facts.written)
    if spots:
        _take(
            facts, norm, out, paths, deadlines, existed, fresh, spots, lambda i, k: range(i, i + k)
        )


_PIECE_ENDS = frozenset("([{,+-*/%&|^=<>?")  # a line a formatter broke after these
_PIECE_STARTS = frozenset(")]}.,+-*/%&|^?:=<>")  # or before these


def is_piece(bare: str) -> bool:
    """Whether a line (without white space) reads as a piece of a split statement, not
    one of its own: it ends where a formatter breaks a line (an open bracket, a comma,
    an operator) or begins where one does (a closing bracket, a method's dot, an
    operator). The pieces beside a split's changed piece are read in the version of
    their commit; a person's statement beside a change is not worth the read."""
    return bool(bare) and (bare[-1] in _PIECE_ENDS or bare[0] in _PIECE_STARTS)


def changed_boundaries(here: dict[int, int]) -> list[int]:
    """The places where a commit's version is no longer one line below the other in
    this file (``here``: the version's line -> this file's line, those git blames on
    the commit), in order: ``q`` where the version's lines ``q`` and ``q + 1`` are not
    so any more (one of them gone, a later commit's change; or a line put between)."""
    found = set()
    for o, j in here.items():
        if here.get(o + 1) != j + 1:
            found.add(o)
        if o > 0 and o - 1 not in here:
            found.add(o - 1)
    return sorted(found)


def changed_between(breaks: list[int], first: int, last: int) -> bool:
    """Whether one of ``breaks`` (``changed_boundaries``) falls between the version's
    lines ``first`` and ``last``."""
    k = bisect_left(breaks, first)
    return k < len(breaks) and breaks[k] < last


def split_pieces_since_changed(
    here: dict[int, int],
    version_norm: list[str],
    norm: list[str],
    open_: list[bool],
    near: range,
) -> list[bool] | None:
    """Where, in the version of a commit, a split the commit made may begin: within
    ``near`` (the version's lines around this file's unmatched lines beside a change),
    the version's lines (``version_norm``, without white space) that are still this
    file's unmatched lines (``here``: the version's line -> this file's line, those git
    blames on the commit; ``open_``: unmatched), or that are gone (a later commit
    changed them). None: the version is not the one git read (a line git says the file
    kept from it, within ``near`` and a split's reach beyond, has other text there)."""
    n = len(version_norm)
    last = min(n, near.stop + REFLOW_MAX)
    for o in range(near.start, last):
        j = here.get(o)
        if j is not None and version_norm[o] != norm[j]:
            return None
    if any(o >= n for o in here):
        return None
    return [o in near and (o not in here or open_[here[o]]) for o in range(n)]


def _splits_at_their_commit(
    facts: RuleFacts,
    norm: list[str],
    blamed: list[BlameLine | None],
    out: list[LineMatch | None],
    paths: dict[int, bool],
    deadlines: Deadlines,
    existed: Callable[[int, int], bool],
    fresh: Callable[[int, float], bool] | None,
    version: Callable[[str], list[str] | None],
) -> None:
    """The splits a later commit changed (a piece rewritten, a line put between),
    judged in the version of the commit git blames their pieces on (see the module): a
    run of that version's lines that is no longer one below the other here, with a
    piece still here unmatched, whose joined text a session wrote, gives that session
    the pieces still here. A version is read only for a commit with an unmatched line
    beside such a change, and its runs start only within a split's reach of one."""
    by_commit: dict[str, dict[int, int]] = {}
    for j, b in enumerate(blamed):
        if b is not None and b.commit is not None:
            by_commit.setdefault(b.commit, {})[b.orig_line - 1] = j
    open_ = [m is None for m in out]
    written_here = facts.written
    for commit, here in by_commit.items():
        breaks = changed_boundaries(here)
        # unmatched lines beside a change that read as a piece of a split: a changed
        # split's pieces are
        beside = [
            o
            for o, j in here.items()
            if open_[j] and is_piece(norm[j]) and changed_between(breaks, o - 1, o + 1)
        ]
        if not beside:
            continue
        lines = version(commit)
        if lines is None:
            continue
        lo, hi = max(0, min(beside) - REFLOW_MAX + 1), max(beside) + 1
        last = min(len(lines), hi + REFLOW_MAX)
        version_norm = [
            normalise_line(lines[o]) if lo <= o < last else "" for o in range(len(lines))
        ]
        near: set[int] = set()
        for o in beside:
            near.update(range(max(0, o - REFLOW_MAX + 1), o + 1))
        starts = split_pieces_since_changed(here, version_norm, norm, open_, range(lo, hi))
        if starts is None:
            continue
        starts = [ok and o in near for o, ok in enumerate(starts)]
        spots = split_candidates(version_norm, starts, written_here)
        # a line of the run not blamed on the commit must be one it brought and a later
        # commit changed, not an older line still here (git blames that on its own
        # commit): its text was not in the file before the commit
        floor_line = here[beside[0]]
        for fp in list(spots):
            kept = [
                (i, k, text)
                for i, k, text in spots[fp]
                if changed_between(breaks, i, i + k - 1)
                and any(o in here and open_[here[o]] for o in range(i, i + k))
                and not any(
                    o not in here and existed(floor_line, fingerprint(version_norm[o]))
                    for o in range(i, i + k)
                )
            ]
            if kept:
                spots[fp] = kept
            else:
                del spots[fp]
        if spots and fresh is not None:
            _drop_splits_a_session_wrote(facts, paths, spots, here, lines, fresh)
        if spots:
            _take(
                facts,
                norm,
                out,
                paths,
                deadlines,
                existed,
                fresh,
                spots,
                _still_here(here),
                lines_of_their_own(lines, spots),
            )
            open_ = [m is None for m in out]


def _drop_splits_a_session_wrote(
    facts: RuleFacts,
    paths: dict[int, bool],
    spots: dict[int, list[tuple[int, int, str]]],
    here: dict[int, int],
    lines: list[str],
    fresh: Callable[[int, float], bool],
) -> None:
    """Take out of ``spots`` the runs a session's own edit wrote as they stand, at
    their place: one edit, inside the commit's window, added the run's lines one
    below the other, and the lines it added around them are the version's lines
    around the run. That session split the line, not a formatter an older one (h11
    0.9.0: a session replaced the first session's ``Request(...))`` by its own
    ``Request(...)`` and ``)``; a later commit changed the first, and the two joined
    to the first session's line). The place is what tells: the same session's edit
    of another ``assert (`` wrote the same two pieces around other lines, while the
    person split this one."""
    runs = [(i, k) for found in spots.values() for i, k, _ in found]
    first_fps = {fingerprint(normalise_line(lines[i])) for i, _ in runs}
    writes = facts.asks.load_writes(paths, first_fps)
    if not writes:
        return
    at_of: dict[tuple[int, int], float] = {}
    for fp in first_fps:
        for key in writes.by_fp.get(fp, ()):
            _, at, by_person, _, _ = writes.info[key]
            if not by_person:
                at_of[(key[0], key[1])] = at

    def wrote_here(i: int, k: int) -> bool:
        run = [normalise_line(lines[o]) for o in range(i, i + k)]
        still = [here[o] for o in range(i, i + k) if o in here]
        if not still:
            return False
        before = normalise_line(lines[i - 1]) if i > 0 else None
        after = normalise_line(lines[i + k]) if i + k < len(lines) else None
        for (sid, edit), at in at_of.items():
            if not fresh(still[0], at):
                continue
            added = facts.edits.added_bare(sid, edit)
            for p in range(len(added) - k + 1):
                if added[p : p + k] != run:
                    continue
                if p > 0 and added[p - 1] != before:
                    continue  # the edit wrote these pieces around other lines
                if p + k < len(added) and added[p + k] != after:
                    continue
                return True
        return False

    for fp in list(spots):
        kept = [(i, k, text) for i, k, text in spots[fp] if not wrote_here(i, k)]
        if kept:
            spots[fp] = kept
        else:
            del spots[fp]


def lines_of_their_own(
    lines: list[str], spots: dict[int, list[tuple[int, int, str]]]
) -> frozenset[str]:
    """The joined texts of ``spots`` that the version (``lines``) also holds as a line
    of its own: a session that wrote such a text inside the commit's window wrote that
    line (packaging 22.0: ``self, item: UnparsedVersion, prereleases: ...`` written as
    ``Specifier.contains``'s one line, while the person split the same text of
    ``SpecifierSet.contains``, an older session's, in place)."""
    texts = {text for found in spots.values() for _, _, text in found}
    return frozenset(t for line in lines if (t := normalise_line(line)) in texts)


def _still_here(here: dict[int, int]) -> Callable[[int, int], list[int]]:
    """The file's lines a run of a version's lines is: those of it still here."""

    def pieces(i: int, k: int) -> list[int]:
        return [here[o] for o in range(i, i + k) if o in here]

    return pieces


def _take(
    facts: RuleFacts,
    norm: list[str],
    out: list[LineMatch | None],
    paths: dict[int, bool],
    deadlines: Deadlines,
    existed: Callable[[int, int], bool],
    fresh: Callable[[int, float], bool] | None,
    spots: dict[int, list[tuple[int, int, str]]],
    pieces: Callable[[int, int], Sequence[int]],
    whole: frozenset[str] = frozenset(),
) -> None:
    """Give the split runs of ``spots`` (fingerprint -> (first line, lines, joined
    text)) their writer, longest first; ``pieces(i, k)``: the file's lines a run of
    ``k`` lines from ``i`` is (the lines themselves, or those of a commit's version
    still in the file). ``whole``: joined texts the version also holds as a line of
    their own; a write of one inside the commit's window is that line's, not a split's
    (the split is then of the text that was in the file before, its older writer's)."""
    writes = facts.asks.load_writes(paths, spots)
    if not writes:
        return
    # the longest splits first: "f(", "a,", "b)" is one line split in three, not in two
    order = sorted(
        (
            (k, i, fp, written)
            for fp, found in spots.items()
            for i, k, written in found
            if fp in writes.by_fp
        ),
        key=lambda x: (-x[0], x[1]),
    )
    used: set[tuple[int, int, int]] = set()
    claimed: set[int] = set()  # lines an earlier (longer) split took
    for k, i, fp, written in order:
        span = pieces(i, k)
        if not span or any(j in claimed for j in span):
            continue
        matched = {m.sid for j in span if (m := out[j]) is not None}
        limit = min(deadlines.loose[j] for j in span)
        exact_limit = min(deadlines.exact[j] for j in span)
        best = None
        for key in writes.by_fp[fp]:
            _, at, by_user, exact, _ = writes.info[key]
            if key in used or at > (exact_limit if key[0] in deadlines.same_clock else limit):
                continue
            if written in whole and fresh is not None and fresh(span[0], at):
                continue  # the version's line of its own, written in the window
            if best is None or at > best[1]:
                best = (key, at, by_user, exact)
        if best is None or best[2]:
            continue  # nobody, or the person wrote it last
        key, at, _, exact = best
        if not (fresh is not None and fresh(span[0], at)) and not existed(span[0], fp):
            continue  # neither written in the commit's window nor there before it
        if matched - {key[0]}:
            continue  # a piece another session's write explains: not this split
        used.add(key)
        claimed.update(span)
        for j in span:
            if out[j] is not None or norm[j] not in written:
                continue  # matched as written, or a character the session did not write
            out[j] = LineMatch(
                sid=key[0],
                edit_ord=key[1],
                idx=key[2],
                at=at,
                confidence=CONFIDENCE if exact else round(CONFIDENCE * 0.95, 2),
                run=1,
            )
