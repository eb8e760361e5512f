"""A message's time in the index: the canonical UTC text as its seconds, any other as it is.

Nearly every ``at`` of a message is the form clients write, ``2026-07-17T09:00:00Z``:
20 characters that say one number of seconds. Such a time is stored as that
integer (4 bytes in its row; the messages' ``at`` column has no type since schema
9, so SQLite keeps an integer as one) and given back as the same text, byte for
byte; any other form (fractions, an offset, what an agent wrote) is stored and read
as text, as are the rows written before. An integer is what the converter alone
writes there: no reader's time is a number.
"""

from __future__ import annotations

import re
from datetime import date

# the canonical form: its day checked once and remembered, its clock's fields looked
# up (a memo of clocks would be cleared over and over: a day has 86,400 of them)
_DAY_FORM = re.compile(r"\d{4}-\d\d-\d\d", re.ASCII)
_HOURS = {f"{h:02d}": h * 3600 for h in range(24)}
_MINUTES = {f"{m:02d}": m * 60 for m in range(60)}
_SECONDS = {f"{s:02d}": s for s in range(60)}
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_DAY = 86_400
_MEMO_MAX = 4096
# a day's text -> its first second (None: not a day deja stores as seconds), and a
# day number -> its text
_DAY_START: dict[str, int | None] = {}
_DAY_TEXT: dict[int, str] = {}


def stored_time(at: str | None) -> str | int | None:
    """What a row keeps of the time ``at``: its seconds for the canonical form (from
    1970 on), else ``at`` itself."""
    if at is None or len(at) != 20 or at[10] != "T" or at[13] != ":" or at[16] != ":":
        return at
    hours = _HOURS.get(at[11:13])
    minutes = _MINUTES.get(at[14:16])
    seconds = _SECONDS.get(at[17:19])
    if hours is None or minutes is None or seconds is None or at[19] != "Z":
        return at
    day = at[:10]
    start = _DAY_START.get(day, -1)
    if start == -1:
        start = _day_start(day)
        if len(_DAY_START) >= _MEMO_MAX:
            _DAY_START.clear()
        _DAY_START[day] = start
    if start is None:
        return at
    return start + hours + minutes + seconds


def _day_start(day: str) -> int | None:
    if _DAY_FORM.fullmatch(day) is None:
        return None
    try:
        parsed = date.fromisoformat(day)
    except ValueError:
        return None
    if parsed.isoformat() != day or parsed.year < 1970:
        return None
    return (parsed.toordinal() - _EPOCH_ORDINAL) * _DAY


def shown_time(value: str | int | None) -> str | None:
    """The time a row's ``at`` says, as the text it was read as (``stored_time`` undone)."""
    if not isinstance(value, int):
        return value
    days, rest = divmod(value, _DAY)
    text = _DAY_TEXT.get(days)
    if text is None:
        try:
            text = date.fromordinal(days + _EPOCH_ORDINAL).isoformat()
        except (ValueError, OverflowError):
            return None  # not a value stored_time writes
        if len(_DAY_TEXT) >= _MEMO_MAX:
            _DAY_TEXT.clear()
        _DAY_TEXT[days] = text
    return f"{text}T{rest // 3600:02d}:{rest // 60 % 60:02d}:{rest % 60:02d}Z"
