"""How late a write may be dated and still be in the commit that brought its line.

A commit's time is git's clock; a write's is its transcript's. A session recorded
on another machine (another clock) may run ahead of git's by a minute or two, so
its write counts for a commit made up to ``CLOCK_SKEW`` seconds before it. A
session that ran in one of this repository's checkouts on this machine
(``same_clock``: stage 1 says which, ``facts/checkouts.py``) shares git's clock:
a write it recorded after the commit was made is not in it, whatever it wrote
(an agent that rewrites a file whole right after a person's commit keeps the
person's lines, and they stay the person's). Only ``ROUNDING`` is allowed: git
keeps a commit's time in whole seconds (the fraction dropped: up to 1 s early),
and a write's time is its tool result's (Claude Code's ``tool_result`` record,
Antigravity's ``CODE_ACTION`` step: recorded just after the file was written,
not when the call began), which may come a moment after the write itself.

Lines not committed yet have no commit time: any write up to ``now`` (plus the
skew) may be theirs.
"""

from __future__ import annotations

from dataclasses import dataclass

from deja_blame.attribution.facts.model import CLOCK_SKEW, BlameLine

ROUNDING = 2.0  # seconds: git's whole-second commit time, and a result recorded after its write


def latest_write(blame: BlameLine | None, now: float, same_clock: bool = False) -> float:
    """The latest time a write can be dated and be the source of a line git blames
    as ``blame`` (None, or not committed: the working tree as of ``now``), for a
    session on git's clock (``same_clock``) or on another machine's."""
    if blame is None or blame.commit is None or not blame.commit_time:
        return now + CLOCK_SKEW
    return blame.commit_time + (ROUNDING if same_clock else CLOCK_SKEW)


@dataclass(frozen=True)
class Deadlines:
    """``latest_write`` of each line, for a session on another clock (``loose``) and
    for one of ``same_clock``'s (``exact``)."""

    loose: list[float]
    exact: list[float]
    same_clock: frozenset[int]

    @classmethod
    def of(
        cls, blamed: list[BlameLine | None], now: float, same_clock: frozenset[int]
    ) -> Deadlines:
        loose = [latest_write(b, now) for b in blamed]
        exact = [latest_write(b, now, True) for b in blamed] if same_clock else loose
        return cls(loose, exact, same_clock)

    def of_session(self, i: int, sid: int) -> float:
        """The latest time session ``sid``'s write can be dated and be line i's source."""
        return self.exact[i] if sid in self.same_clock else self.loose[i]

    def late(self, i: int, sid: int, at: float) -> bool:
        """Whether session ``sid``'s write made at ``at`` came after line i's commit."""
        return at > self.of_session(i, sid)
