"""The environment's ``# Current Time``, in whatever locale the person's machine wrote it.

Cline (and Roo Code and Kilo Code before Roo wrote ISO 8601) put the time in each
environment with ``Intl.DateTimeFormat(undefined, {..., hour12: true})``: the date
and time in the person's locale, then the zone and its offset::

    12/7/2026, 9:04:05 PM (America/New_York, UTC-5:00)      en-US
    7.12.2026, 9:04:05 PM (Europe/Berlin, UTC+1:00)         de
    07/12/2026 9:04:05 PM (Europe/Paris, UTC+1:00)          fr
    2026/12/7 午後9:04:05 (Asia/Tokyo, UTC+9:00)            ja
    7.12.2026, 21:04:05 (Europe/Berlin, UTC+1:00)           a 24-hour clock
    Current time in ISO 8601 UTC format: 2026-12-07T20:04:05.000Z   Roo, later

The offset is ``UTC±H:MM``, or, in older Cline, the hours as a decimal
(``UTC+5.5:00`` for India). What is read, and only when nothing is left to guess:

- the date: year first (``2026/12/7``, ``2026. 12. 7.``, ``2026-12-07``) is year,
  month, day; year last with dots or dashes (``7.12.2026``, ``7-12-2026``) is day,
  month, year. Year last with slashes is month/day in en-US and day/month in most
  other locales, in the same shape (``7/12/2026, 9:04:05 PM`` is Tamil's or
  Welsh's 7 December as well as en-US's 12 July): a part past 12 says which, else
  the task decides (``slash_order``), else the time is not read;
- the clock: a day period (AM/PM and the other languages' words below), or none for
  a 24-hour clock; an unknown word, digits other than ASCII (Persian, Bengali), a
  year outside 1990-2199 (Thai's Buddhist era) or no offset: not read.

A time not read is counted by the reader (a skipped line), never guessed. Only the
first two lines of the section, at most 256 characters each, are looked at: a
hostile text costs nothing more.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from deja_blame.transcripts.text import format_time, normalise_time

HEADING = "# Current Time"
_LINE_CAP = 256
_ISO = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2})"
)
_OFFSET = re.compile(r"UTC\s?([+-])([0-9]{1,2})(?:\.([0-9]{1,2}))?(?::([0-9]{2}))?(?![0-9])")
_YEAR_FIRST = re.compile(
    r"(?<![0-9])([0-9]{4})\s?([./-])\s?([0-9]{1,2})\s?\2\s?([0-9]{1,2})(?![0-9])\.?"
)
_YEAR_LAST = re.compile(
    r"(?<![0-9])([0-9]{1,2})\s?([./-])\s?([0-9]{1,2})\s?\2\s?([0-9]{4})(?![0-9])\.?"
)
_CLOCK = re.compile(r"(?<![0-9])([0-9]{1,2})([:.])([0-9]{2})\2([0-9]{2})(?![0-9])")
_MARKS = re.compile(r"[\u200e\u200f\u061c]")  # direction marks Arabic dates carry
_NOT_WORD = re.compile(r"[\s.,،()\[\]]+")
# the day periods Intl writes (as read here: lower case, no dots or spaces), by language
_AM = frozenset(
    "am 午前 上午 오전 öö dop fm sa ص πμ дп de vorm pg ap rn fh pd to vm priešpiet "
    "priekšp претпл үө".split()
)
_PM = frozenset(
    "pm 午後 下午 오후 ös odp pop em ch م μμ пп du nachm ptg ip in eh md tk nm popiet "
    "pēcp попл үх".split()
)
_NOISE = frozenset({"klo", "г", "ч"})  # Finnish "klo" (at), Bulgarian "г." (year) and "ч." (hour)


@dataclass(frozen=True)
class Stamp:
    """One ``# Current Time`` read as far as its text allows. ``slash``: year last with
    slashes, so ``first``/``second`` are month/day or day/month as the task says;
    otherwise they are month and day."""

    year: int
    first: int
    second: int
    slash: bool
    hour: int
    minute: int
    sec: int
    offset_minutes: int

    def at(self, day_first: bool) -> str | None:
        """The time in UTC, the date read day first or month first (``slash`` only)."""
        month, day = (
            (self.second, self.first) if self.slash and day_first else (self.first, self.second)
        )
        try:
            zone = dt.timezone(dt.timedelta(minutes=self.offset_minutes))
            local = dt.datetime(
                self.year, month, day, self.hour, self.minute, min(self.sec, 59), tzinfo=zone
            )
        except (ValueError, OverflowError):
            return None
        return format_time(local.astimezone(dt.timezone.utc))

    def settled(self) -> bool | None:
        """Whether the text alone says the date is day first (False: month first, or
        no choice to make); None when it does not say."""
        if not self.slash or self.first == self.second:
            return False
        if self.first > 12 or self.second > 12:
            return self.first > 12
        return None


def section(text: str) -> str | None:
    """The first two lines under the first ``# Current Time`` of ``text``, capped."""
    found = text.find(HEADING)
    if found < 0:
        return None
    lines = (
        text[found + len(HEADING) : found + len(HEADING) + 4 * _LINE_CAP]
        .lstrip("\r\n\t ")
        .split("\n")
    )
    return "\n".join(line[:_LINE_CAP] for line in lines[:2])


def read(section_text: str) -> str | Stamp | None:
    """An ISO 8601 time (already UTC), a ``Stamp``, or None when it cannot be read."""
    iso = _ISO.search(section_text)
    if iso is not None:
        return normalise_time(iso.group(0))[0]
    line = _MARKS.sub("", section_text.split("\n", 1)[0])
    offset = _offset(line)
    if offset is None:
        return None
    cut = line.rfind("(", 0, offset[1])
    line = line[: cut if cut >= 0 else offset[1]]
    date = _YEAR_FIRST.search(line)
    slash = False
    if date is not None:
        year, first, second = int(date.group(1)), int(date.group(3)), int(date.group(4))
    else:
        date = _YEAR_LAST.search(line)
        if date is None:
            return None
        year = int(date.group(4))
        slash = date.group(2) == "/"
        a, b = int(date.group(1)), int(date.group(3))
        first, second = (a, b) if slash else (b, a)  # dots and dashes: day first
    rest = line[: date.start()] + " " + line[date.end() :]
    clock = _CLOCK.search(rest)
    if clock is None or not 1990 <= year <= 2199:
        return None
    hour, minute, sec = int(clock.group(1)), int(clock.group(3)), int(clock.group(4))
    period = _period(rest[: clock.start()] + " " + rest[clock.end() :])
    if period is None or minute > 59 or sec > 60:
        return None
    if period:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if period == "pm" else 0)
    elif hour > 23:
        return None
    return Stamp(year, first, second, slash, hour, minute, sec, offset[0])


def _offset(line: str) -> tuple[int, int] | None:
    """(minutes east of UTC, where it starts) of the line's last ``UTC±...``."""
    every = list(_OFFSET.finditer(line))  # a capped line: a few at most
    if not every:
        return None
    found = every[-1]
    sign, hours, fraction, minutes = found.groups()
    if fraction is not None:  # older Cline: the hours as a decimal, then ":00"
        if minutes not in (None, "00"):
            return None
        extra = round(float("0." + fraction) * 60)
    else:
        extra = int(minutes or 0)
    if int(hours) > 14 or extra > 59:
        return None
    total = int(hours) * 60 + extra
    return (-total if sign == "-" else total), found.start()


def _period(words: str) -> str | None:
    """ "am", "pm", "" (no day period: a 24-hour clock), or None (a word not known)."""
    tokens = [t for t in _NOT_WORD.split(words.lower()) if t and t not in _NOISE]
    word = "".join(tokens)
    if not word:
        return ""
    if word in _AM:
        return "am"
    if word in _PM:
        return "pm"
    return None


def slash_order(stamps: list[Stamp], anchor: str | None) -> bool | None:
    """Whether the task's slashed dates are day first: a date with a part past 12 says
    so for the whole task (one machine, one locale); else the first date, whose one
    reading alone falls within 36 hours of ``anchor`` (when the task began: its id,
    or its first UI message). None: nothing says."""
    slashed = [s for s in stamps if s.slash]
    for s in slashed:
        if s.first > 12 or s.second > 12:
            return s.first > 12
    if not slashed or anchor is None:
        return None
    began = normalise_time(anchor)[1]
    if began is None:
        return None
    near = []
    for day_first in (False, True):
        at = slashed[0].at(day_first)
        moment = normalise_time(at)[1] if at else None
        if moment is not None and abs(moment - began) <= 36 * 3600:
            near.append(day_first)
    return near[0] if len(near) == 1 else None
