"""When a Cursor request was typed: the ``<timestamp>`` it opens with, in whatever
language the person's system writes dates.

English: ``Friday, Nov 27, 2026, 9:12 AM (UTC+1)``. Other locales write the same
parts in their own order and words (``Freitag, 27. Nov. 2026, 09:12 (GMT+1)``,
``vendredi 27 nov. 2026 à 09:12 (UTC+1)``, ``2026年11月27日 金曜日 9:12 (GMT+9)``),
so the parts are found one by one, not by one pattern: a four-digit year; the month
by its number (``11月``, ``2026-11-27``, ``27.11.2026``) or by a name of one of the
common languages next to the day's number (a weekday is never next to it: its
comma or the date's order keeps it apart); the hour and minute; an AM/PM mark where
there is one; the offset after ``UTC`` or ``GMT``. A stamp missing any part, or
whose month cannot be told from its day (``11/12/2026``), or with a zone named
another way (``MEZ``), gives nothing: the records keep their first-seen time.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata

_STAMP = re.compile(r"<timestamp>(.{1,120}?)</timestamp>", re.S)
_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")
_TIME = re.compile(r"(?<![\d.:])(\d{1,2})[:h.](\d{2})(?!\d)(?![.:/]\d)")
_ZONE = re.compile(r"(?:UTC|GMT)\s*(?:([+\-\u2212])\s*(\d{1,2})(?::?(\d{2}))?)?")
_PM = re.compile(r"(?<![^\W\d_])(?:p\.?\s?m\.?)(?![^\W\d_])|午後|下午|오후", re.I)
_AM = re.compile(r"(?<![^\W\d_])(?:a\.?\s?m\.?)(?![^\W\d_])|午前|上午|오전", re.I)
# year first, the month's number: 2026年11月27日, 2026년 11월 27일, 2026-11-27, 2026/11/27
_YMD = re.compile(r"(\d{4})\s*(?:年|년|[-/.])\s*(\d{1,2})\s*(?:月|월|[-/.])\s*(\d{1,2})")
# day first: 27.11.2026 (dots: always day.month), 27/11/2026 (only when day > 12)
_DMY = re.compile(r"(?<!\d)(\d{1,2})([./])(\d{1,2})\2(\d{4})(?!\d)")
_WORD = r"([^\W\d_]{3,})\.?"
_DAY_MONTH = re.compile(r"(?<![\d:])(\d{1,2})\.?\s+(?:de\s+)?" + _WORD)  # 27 nov. / 27. Nov
_MONTH_DAY = re.compile(_WORD + r"\s+(\d{1,2})(?![\d:.])")  # Nov 27
# the first letters of each month's name or abbreviation (accents removed) in
# English, German, French, Spanish, Italian, Portuguese, Dutch, Polish and Russian
_MONTH_NAMES = {
    1: ("jan", "ene", "gen", "sty", "янв"),
    2: ("feb", "fev", "lut", "фев"),
    3: ("mar", "maa", "mrt", "мар"),
    4: ("apr", "avr", "abr", "kwi", "апр"),
    5: ("may", "mai", "mag", "mei", "maj", "мая", "май"),
    6: ("jun", "juin", "giu", "cze", "июн"),
    7: ("jul", "juil", "lug", "lip", "июл"),
    8: ("aug", "aou", "ago", "sie", "авг"),
    9: ("sep", "set", "wrz", "сен"),
    10: ("oct", "okt", "ott", "out", "paz", "окт"),
    11: ("nov", "lis", "ноя"),
    12: ("dec", "dez", "dic", "gru", "дек"),
}
# longest first: "juin" before "jun" ("juil"let is July, "juin" June)
_PREFIXES = sorted(
    ((p, m) for m, names in _MONTH_NAMES.items() for p in names), key=lambda pm: -len(pm[0])
)
# Tuesday begins like March (mardi, martes, martedì): a weekday should never stand
# next to the day's number, and is not taken for a month if it does
_NOT_MONTHS = ("mard", "mart")


def asked_at(text: str) -> dt.datetime | None:
    """The UTC time of the first ``<timestamp>`` in ``text``, or None."""
    m = _STAMP.search(text)
    if m is None:
        return None
    stamp = m.group(1)
    date = _date(stamp)
    clock = _TIME.search(stamp)
    zone = _ZONE.search(stamp)
    if date is None or clock is None or zone is None:
        return None
    hour, minute = int(clock.group(1)), int(clock.group(2))
    pm, am = _PM.search(stamp), _AM.search(stamp)
    if pm or am:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if pm else 0)
    sign = -1 if zone.group(1) in ("-", "\u2212") else 1
    offset = dt.timedelta(hours=int(zone.group(2) or 0), minutes=int(zone.group(3) or 0))
    try:
        local = dt.datetime(date[0], date[1], date[2], hour, minute)
        return (local - sign * offset).replace(tzinfo=dt.timezone.utc)
    except (ValueError, OverflowError):  # no such day; past year 9999 in UTC
        return None


def _date(stamp: str) -> tuple[int, int, int] | None:
    """(year, month, day) of the stamp, or None when it cannot be told for sure."""
    ymd = _YMD.search(stamp)
    if ymd:
        return int(ymd.group(1)), int(ymd.group(2)), int(ymd.group(3))
    dmy = _DMY.search(stamp)
    if dmy:
        a, b, year = int(dmy.group(1)), int(dmy.group(3)), int(dmy.group(4))
        if dmy.group(2) == "." or a > 12:
            return year, b, a
        if b > 12:
            return year, a, b  # 11/27/2026: month first
        return None  # 11/12/2026: either
    found_year = _YEAR.search(stamp)
    if found_year is None:
        return None
    for pattern, day_group, word_group in ((_DAY_MONTH, 1, 2), (_MONTH_DAY, 2, 1)):
        for found in pattern.finditer(stamp):
            month = _month(found.group(word_group))
            if month is not None:
                return int(found_year.group(1)), month, int(found.group(day_group))
    return None


def _month(word: str) -> int | None:
    plain = "".join(
        c for c in unicodedata.normalize("NFKD", word.lower()) if not unicodedata.combining(c)
    )
    if plain.startswith(_NOT_MONTHS):
        return None
    for prefix, month in _PREFIXES:
        if plain.startswith(prefix):
            return month
    return None
