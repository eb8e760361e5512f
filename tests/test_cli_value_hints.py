"""A mistyped agent name (``--agent``, ``--to``) gets what a mistyped command or
option gets: a suggestion, and the agents' main names, not all 32 spellings with
their aliases (NEWCOMER12 #5). A name like an alias is suggested by its agent's
main name, one the list shows (NEWCOMER13 #3: ``codx`` suggested ``codex-cli``)."""

from __future__ import annotations

import re

import pytest
from conftest import deja


@pytest.mark.parametrize(
    ("args", "guess"),
    [
        (("index", "--agent", "claud"), "Did you mean 'claude-code' or 'cline'?"),
        (("sessions", "--agent", "gemni"), "Did you mean 'gemini-cli'?"),
        (("sessions", "--agent", "codx"), "Did you mean 'codex'?"),
        (("handoff", "--to", "codx", "--print"), "Did you mean 'codex'?"),
        (("handoff", "--to", "claud", "--print"), "Did you mean 'claude' or 'cline'?"),
    ],
)
def test_a_mistyped_agent_gets_the_close_names(args: tuple[str, ...], guess: str) -> None:
    proc = deja(*args, check=False)
    assert proc.returncode == 2
    err = proc.stderr.decode().strip().splitlines()[-1]
    assert guess in err, err
    assert "roo-cline" not in err and "kilocode" not in err  # aliases left out
    assert "is not one of" not in err
    listed = err.split("One of: ")[1].split(", ")
    assert all(n in listed for n in re.findall(r"'([a-z-]+)'", guess)), err


def test_a_name_like_none_lists_the_main_names_only() -> None:
    err = deja("handoff", "--to", "nosuchagent", check=False).stderr.decode()
    last = err.strip().splitlines()[-1]
    assert "Did you mean" not in last
    assert last.endswith(
        "One of: agy, claude, codex, gemini, cursor, copilot, copilot-cli, opencode, droid,"
        " continue, pi, cline"
    ), last
    err = deja("sessions", "--agent", "zzz", check=False).stderr.decode()
    assert "One of: antigravity, claude-code, codex, gemini-cli," in err
    # a right name in another case or an alias is still taken
    assert deja("sessions", "--agent", "CLAUDE").returncode == 0
    assert deja("sessions", "--agent", "roo-cline").returncode == 0
