"""A line of code that hides text ("Trojan Source": a bidi override, an escape
sequence that makes text invisible) shows what is there in ``deja blame`` and
``deja why``: each control character as ``<U+XXXX>``, none reaching the terminal,
none silently dropped (the reader would see code the file does not hold). A line
ending's carriage return is no hidden text: a CRLF file shows as git shows it."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import commit_env, deja, git

from deja_blame.outputs.escape import code

HIDDEN = 'access = "user\u202e \u2066# admin\u2069 \u2066"\nesc = "\x1b[8mhidden\x1b[0m shown"\r\n'
SHOWN = [
    'access = "user<U+202E> <U+2066># admin<U+2069> <U+2066>"',
    'esc = "<U+001B>[8mhidden<U+001B>[0m shown"',
]


def test_blame_and_why_show_hidden_characters(repo: Path) -> None:
    (repo / "bidi.py").write_bytes(HIDDEN.encode())
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "hidden", env=commit_env(1_784_278_800))
    env = {"DEJA_ANTIGRAVITY_ROOT": ""}
    blame = deja("--color", "never", "blame", "bidi.py", cwd=repo, env=env).stdout.decode()
    why = deja("why", "bidi.py:1", cwd=repo, env=env).stdout.decode()
    for out in (blame, why):
        assert not any(c in out for c in "\u202e\u2066\u2069\x1b\r")
    assert [re.sub(r"^.*? \d\) ", "", ln) for ln in blame.splitlines()] == SHOWN
    assert why.splitlines()[0] == f"bidi.py:1  {SHOWN[0]}"


def test_a_line_of_code_for_the_terminal() -> None:
    assert code("\tx = 1\r\n") == "\tx = 1"
    assert code("a\rb\u2028c\x00") == "a<U+000D>b<U+2028>c<U+0000>"
    assert code(None) == ""


def test_a_cut_line_never_cuts_a_marker_in_half() -> None:
    """``deja why``'s history column cuts a long line: never inside a ``<U+XXXX>``
    (``<U+20…`` would not say which character is hidden there)."""
    from deja_blame.commands.why import _code

    line = "x = 1  # " + "a" * 66 + "\u202e" + "evil"
    for width in range(70, 87):  # the whole line shown is 87 characters
        got = _code(line, width)
        assert len(got) <= width and got.endswith("…")
        assert re.sub(r"<U\+[0-9A-F]{4}>", "", got).count("<U+") == 0, got
    assert _code(line, 200) == line.replace("\u202e", "<U+202E>")
