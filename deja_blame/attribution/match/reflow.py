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

Joins (several written lines made one) are not attributed: on the real-history
bench (``bench/accuracy/realhist.py``, formatter variant) the rule "a line made of
consecutive lines of the edit beside it" found 4 more lines and 10 wrong ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from deja_blame.attribution.facts.model import BlameLine, LineTexts, WrittenTexts
from deja_blame.attribution.match.clock import Deadlines
from deja_blame.attribution.match.lines import LineMatch
from deja_blame.index.fingerprint import TRIVIAL_CHARS, fingerprint

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
) -> list[LineMatch | None]:
    """``matches`` with reflowed lines added. ``deadlines``: how late a session's
    write may be dated and be each line's source (``clock.py``); ``existed(i, fp)``:
    whether text of fingerprint ``fp`` was in the file before line i's commit;
    ``fresh(i, at)``: whether a write made at ``at`` is inside line i's commit window.
    ``facts``: the texts written to the paths (``written``, in a question about many
    files) narrow the candidates; the writes of the candidates are asked (``asks``)."""
    out = list(matches)
    if all(m is not None for m in out):
        return out
    _splits(facts, texts.bare, out, paths, deadlines, existed, fresh)
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
    if not spots:
        return
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
        span = range(i, i + k)
        if any(j in claimed for j in span):
            continue
        matched = {m.sid for j in span if (m := out[j]) is not None}
        limit, exact_limit = min(deadlines.loose[i : i + k]), min(deadlines.exact[i : i + k])
        best = None
        for key in writes.by_fp[fp]:
            _, at, by_user, exact, _ = writes.info[key]
            if key in used or at > (exact_limit if key[0] in deadlines.same_clock else limit):
                continue
            if best is None or at > best[1]:
                best = (key, at, by_user, exact)
        if best is None or best[2]:
            continue  # nobody, or the person wrote it last
        key, at, _, exact = best
        if not (fresh is not None and fresh(i, at)) and not existed(i, fp):
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
