"""The reflow rule's candidate splits, carried from run to run, are the ones joining
each run's text and asking ``is_trivial`` and the comma pattern of it would find.

``split_candidates`` is on every blame's path (and ``deja report``'s, once per file
per commit); this compares it with the plain definition on texts made of the
characters that decide: letters, digits, commas, brackets, and short lines.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from deja_blame.attribution.facts.model import WrittenTexts
from deja_blame.attribution.match.reflow import _MAGIC_COMMA, REFLOW_MAX, split_candidates
from deja_blame.index.fingerprint import fingerprint, is_trivial, normalise_line


def _plain(norm: list[str], open_: list[bool]) -> dict[int, list[tuple[int, int, str]]]:
    spots: dict[int, list[tuple[int, int, str]]] = {}
    for i in range(len(norm)):
        if not open_[i] or not norm[i]:
            continue
        for k in range(2, REFLOW_MAX + 1):
            part = norm[i : i + k]
            if len(part) < k or not all(part):
                break
            joined = "".join(part)
            if is_trivial(joined):
                continue
            spots.setdefault(fingerprint(joined), []).append((i, k, joined))
            bare = _MAGIC_COMMA.sub(r"\1", joined)
            if bare != joined:
                spots.setdefault(fingerprint(bare), []).append((i, k, bare))
            if joined.endswith(",") and not is_trivial(joined[:-1]):
                spots.setdefault(fingerprint(joined[:-1]), []).append((i, k, joined[:-1]))
    return spots


LINE = st.text(alphabet="a1,)]}({ _.:é", max_size=9)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(LINE, st.booleans()), max_size=30))
def test_candidates_are_the_plain_definitions(rows: list[tuple[str, bool]]) -> None:
    norm = [normalise_line(t) for t, _ in rows]
    open_ = [o for _, o in rows]
    assert split_candidates(norm, open_) == _plain(norm, open_)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(LINE, st.booleans()), max_size=30), st.data())
def test_given_the_written_texts_the_candidates_are_those_some_write_has(
    rows: list[tuple[str, bool]], data: st.DataObject
) -> None:
    # in a question about many files the texts written to the paths are at hand: a
    # candidate no write has the text of is left out (no write has its fingerprint)
    norm = [normalise_line(t) for t, _ in rows]
    open_ = [o for _, o in rows]
    every = _plain(norm, open_)
    texts = sorted({text for found in every.values() for _, _, text in found})
    written = set(data.draw(st.lists(st.sampled_from(texts)) if texts else st.just([])))
    written |= set(data.draw(st.lists(LINE.map(normalise_line))))  # texts of no candidate
    wanted = {
        fp: kept for fp, found in every.items() if (kept := [c for c in found if c[2] in written])
    }
    got = split_candidates(norm, open_, WrittenTexts.of(written))
    assert list(got.items()) == list(wanted.items())  # the same, in the same order


def test_a_run_starts_only_where_a_written_text_begins() -> None:
    norm = ["call(alpha,", ")", "other(beta,", "gamma,", ")"]
    written = WrittenTexts.of(["call(alpha)", "other(beta,gamma)"])
    assert split_candidates(norm, [True] * 5, written) == {
        fingerprint("call(alpha)"): [(0, 2, "call(alpha)")],
        fingerprint("other(beta,gamma)"): [(2, 3, "other(beta,gamma)")],
    }
    assert split_candidates(norm, [True] * 5, WrittenTexts.of([])) == {}


def test_a_comma_where_two_lines_meet_is_a_magic_comma() -> None:
    norm = ["call(alpha", "beta,", ")"]
    spots = split_candidates(norm, [True, True, True])
    assert (0, 3, "call(alphabeta)") in spots[fingerprint("call(alphabeta)")]
    assert spots == _plain(norm, [True, True, True])


def test_a_short_or_punctuation_run_is_no_candidate() -> None:
    assert split_candidates(["),", "]", "})"], [True] * 3) == {}
    assert split_candidates(["ab", "cd", "ef"], [True] * 3) == {}  # six characters at most
    assert split_candidates(["abc", "defg"], [True, True]) == {
        fingerprint("abcdefg"): [(0, 2, "abcdefg")]
    }


def test_a_run_ending_in_a_comma_is_also_its_text_without_it() -> None:
    # f(a, b) became one argument of a longer call: "f(", "a,", "b", "),"
    norm = ["f(alpha,", "beta", "),"]
    spots = split_candidates(norm, [True] * 3, WrittenTexts.of(["f(alpha,beta)"]))
    assert spots == {fingerprint("f(alpha,beta)"): [(0, 3, "f(alpha,beta)")]}
    assert split_candidates(["abc", "def,"], [True, True]) == {
        fingerprint("abcdef,"): [(0, 2, "abcdef,")]  # "abcdef": six characters, trivial
    }
