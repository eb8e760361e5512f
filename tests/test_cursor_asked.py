"""A Cursor request's ``<timestamp>`` in the languages people's systems write dates in
(``transcripts/cursor/asked.py``): the time it names, in UTC, or nothing where any
part cannot be told for sure (the records then keep their first-seen time)."""

from __future__ import annotations

import pytest

from deja_blame.transcripts.cursor.asked import asked_at


@pytest.mark.parametrize(
    ("stamp", "utc"),
    [
        ("Friday, Nov 27, 2026, 9:12 AM (UTC+1)", "2026-11-27 08:12"),
        ("Friday, Nov 27, 2026, 9:12 PM (UTC-5)", "2026-11-28 02:12"),
        ("Friday, June 5, 2026, 12:30 AM (UTC)", "2026-06-05 00:30"),
        ("Freitag, 27. Nov. 2026, 09:12 (GMT+1)", "2026-11-27 08:12"),
        ("vendredi 27 nov. 2026 à 09:12 (UTC+1)", "2026-11-27 08:12"),
        ("vendredi 5 juin 2026, 09:12 (UTC)", "2026-06-05 09:12"),
        ("mercredi 1 juil. 2026, 09:12 (UTC)", "2026-07-01 09:12"),
        ("mardi 3 mars 2026, 09:12 (UTC+1)", "2026-03-03 08:12"),  # Tuesday is not March
        ("martes, 3 de mar. de 2026, 21:05 (UTC)", "2026-03-03 21:05"),
        ("viernes, 27 de nov de 2026, 9:12 (GMT+1)", "2026-11-27 08:12"),
        ("venerdì 27 nov 2026, 09:12 (GMT+1)", "2026-11-27 08:12"),
        ("sexta-feira, 27 de nov. de 2026, 09:12 (GMT-3)", "2026-11-27 12:12"),
        ("vrijdag 27 nov 2026 09:12 (GMT+1)", "2026-11-27 08:12"),
        ("piątek, 27 lis 2026, 09:12 (GMT+1)", "2026-11-27 08:12"),
        ("пятница, 27 нояб. 2026 г., 09:12 (GMT+3)", "2026-11-27 06:12"),
        ("2026年11月27日 金曜日 9:12 (GMT+9)", "2026-11-27 00:12"),
        ("2026年11月27日星期五 下午9:12 (GMT+8)", "2026-11-27 13:12"),
        ("2026년 11월 27일 금요일 오후 9:12 (GMT+9)", "2026-11-27 12:12"),
        ("27.11.2026, 09:12 (GMT+1)", "2026-11-27 08:12"),
        ("11/27/2026, 9:12 AM (UTC+5:30)", "2026-11-27 03:42"),
    ],
)
def test_the_stamp_of_each_language_is_read(stamp: str, utc: str) -> None:
    got = asked_at(f"<timestamp>{stamp}</timestamp>\n<user_query>\nhi\n</user_query>")
    assert got is not None and got.strftime("%Y-%m-%d %H:%M") == utc


@pytest.mark.parametrize(
    "stamp",
    [
        "11/12/2026, 09:12 (GMT+1)",  # the 11th of December, or the 12th of November
        "Freitag, 27. Nov. 2026, 09:12 MEZ",  # a zone by name: its offset unknown
        "Freitag, 27. Nov. 2026 (GMT+1)",  # no time of day
        "27 Foo 2026, 09:12 (UTC)",  # no month
        "Friday, Nov 31, 2026, 9:12 AM (UTC)",  # no such day
        "Friday, Nov 27, 2026, 13:12 PM (UTC)",  # 13 o'clock in the afternoon
        "Friday, Dec 31, 9999, 11:59 PM (UTC-5)",  # after year 9999 in UTC
        "Monday, Jan 1, 0001, 12:00 AM (UTC+5)",  # before year 1 in UTC
    ],
)
def test_a_stamp_that_cannot_be_told_for_sure_gives_nothing(stamp: str) -> None:
    assert asked_at(f"<timestamp>{stamp}</timestamp>") is None
