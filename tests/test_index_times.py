"""index/times.py: a canonical time as its seconds and back, any other text as it is."""

from __future__ import annotations

from datetime import datetime, timezone

from hypothesis import given
from hypothesis import strategies as st

from deja_blame.index.times import shown_time, stored_time

WHOLE_SECONDS = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)
).map(lambda d: d.replace(microsecond=0, tzinfo=timezone.utc))


@given(WHOLE_SECONDS)
def test_a_canonical_time_is_its_seconds_and_reads_back_the_same(when: datetime) -> None:
    text = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    kept = stored_time(text)
    assert kept == int(when.timestamp())
    assert shown_time(kept) == text


@given(st.text(max_size=30))
def test_any_other_text_is_kept_as_it_is(text: str) -> None:
    kept = stored_time(text)
    assert shown_time(kept) == text


def test_forms_that_are_not_canonical_stay_text() -> None:
    for text in (
        "2026-02-29T09:00:00Z",  # no such day
        "1969-12-31T23:59:59Z",  # before 1970: no seconds to store
        "2026-07-17T24:00:00Z",
        "2026-07-17T09:00:00.5Z",
        "2026-07-17T09:00:00+02:00",
        "2026-07-17 09:00:00Z",
        "２０２６-07-17T09:00:00Z",  # digits of another script
    ):
        assert stored_time(text) == text
    assert stored_time(None) is None and shown_time(None) is None
    assert stored_time("1970-01-01T00:00:00Z") == 0


@given(
    st.one_of(
        WHOLE_SECONDS.map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")),
        st.sampled_from(
            [
                "2026-07-17T09:00:00.5Z",
                "2026-07-17T09:00:00+02:00",
                "2026-07-17T09:00:00.000Z",
                "1969-12-31T23:59:59Z",
                "yesterday",
            ]
        ),
        st.none(),
    )
)
def test_an_edits_time_reads_back_as_it_was_read(at: str | None) -> None:
    """An edit's at is left out of its row where its at_epoch says the same (the
    canonical form): edit_from_row gives back the text byte for byte, any other
    form is kept as text."""
    from deja_blame.index import store
    from deja_blame.transcripts.text import epoch_of

    at_epoch = epoch_of(at)
    kept = store._edit_at(at, at_epoch)
    if at is not None and len(at) == 20 and at.endswith("Z") and at[:4] >= "1970":
        assert kept is None
    else:
        assert kept == at
    body = store.edit_body([], ["x"], [], None)
    row = ("/w/a.py", "write_to_file", "agent", body, 0, kept, 0, None, at_epoch)
    assert store.edit_from_row(row).at == at
