"""Work deferred until the answer is out: it waits inside ``answering()`` and runs at
``finish`` (after the answer is handed back), runs at once anywhere else, and a
failure in it never costs the answer."""

from __future__ import annotations

import pytest

from deja_blame import later


def test_outside_an_answer_work_runs_at_once() -> None:
    done: list[str] = []
    later.defer(lambda: done.append("now"))
    assert done == ["now"]


def test_inside_an_answer_work_waits_for_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []
    monkeypatch.setattr(later, "on_answer", lambda code: events.append(f"answer {code}"))

    @later.answer_first
    def command() -> int:
        later.defer(lambda: events.append("keep the cache"))
        later.defer(lambda: 1 / 0)  # a failure costs what it would have kept
        later.defer(lambda: events.append("note the hint"))
        events.append("print")
        return 3

    assert command() == 3
    assert events == ["print", "answer 3", "keep the cache", "note the hint"]


def test_a_failed_command_keeps_nothing() -> None:
    done: list[str] = []

    @later.answer_first
    def command() -> int:
        later.defer(lambda: done.append("kept"))
        raise ValueError("no answer")

    with pytest.raises(ValueError):
        command()
    assert done == []
    later.defer(lambda: done.append("after"))  # and the scope is gone
    assert done == ["after"]
